/* What the generated wrappers use of the interposer's runtime (runtime.c). */
#ifndef SYNCGUARD_CAPTURE_RUNTIME_H
#define SYNCGUARD_CAPTURE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* One line being written into the calling thread's buffer. */
typedef struct sg_line {
    char *buf;
    size_t len;
    size_t cap;
    size_t args; /* where the arguments start */
    int full;    /* a piece did not fit: the line is dropped */
} sg_line;

/* A key as the wrappers pass it: `,"name":` and its length. */
#define SG_KEY(name) ",\"" name "\":", sizeof(",\"" name "\":") - 1
/* The start of a line: `{"api":"name"` and its length. */
#define SG_API(name) "{\"api\":\"" name "\"", sizeof("{\"api\":\"" name "\"") - 1

/* CUDA's dim3, passed by value. */
typedef struct sg_dim3 {
    unsigned int x, y, z;
} sg_dim3;

/* The next definition of `name` after this library (the real library's). */
void *sg_resolve(const char *name);
void *sg_real_dlsym(void *handle, const char *name);
/* The wrapper of an intercepted function `name`, whose real definition is `real`
 * (found by dlsym on a library's handle); NULL for a name not intercepted. */
void *sg_wrapper_for(const char *name, void *real);

/* Whether a trace is being written (SYNCGUARD_TRACE_DIR is set). */
int sg_active(void);
/* Start recording a call on this thread: 0 when not recording (no trace, or the call
 * is made from inside another intercepted call, by the library itself). */
int sg_enter(void);
void sg_leave(void);
unsigned long long sg_now(void);
void sg_set_rank(long rank, long world);

sg_line sg_begin(const char *prefix, size_t prefix_len, unsigned long long ts);
void sg_arg_handle(sg_line *line, const char *key, size_t key_len, unsigned long long v);
void sg_arg_handles(sg_line *line, const char *key, size_t key_len, const unsigned long long *v,
                    unsigned long long count);
void sg_arg_int(sg_line *line, const char *key, size_t key_len, long long v);
void sg_arg_uint(sg_line *line, const char *key, size_t key_len, unsigned long long v);
void sg_arg_float(sg_line *line, const char *key, size_t key_len, double v);
void sg_arg_string(sg_line *line, const char *key, size_t key_len, const char *s);
void sg_arg_string_n(sg_line *line, const char *key, size_t key_len, const char *s, size_t max);
void sg_arg_name(sg_line *line, const char *key, size_t key_len, long long v, const char *const *names, int count);
/* `count` HcclChannelDesc structures from `descs` (the documented layout). */
void sg_arg_channel_descs(sg_line *line, const char *key, size_t key_len, const void *descs, unsigned long long count);
void sg_arg_dim3(sg_line *line, const char *key, size_t key_len, sg_dim3 d);
void sg_end(sg_line *line, long long ret, const void *return_address);
void sg_put_raw(sg_line *line, const char *s);
void sg_put_int(sg_line *line, long long v);
void sg_put_uint(sg_line *line, unsigned long long v);

#endif
