/*
 * The runtime of `syncguard trace`'s interposer: per-thread line buffers, the JSON
 * writer, the output file, the rank, and flushing at thread exit, process exit, fork
 * and fatal signals. The wrappers (generated from capture/apis.list by build.rs) call
 * only what is declared in runtime.h.
 *
 * Rules this file keeps:
 * - Nothing here calls an intercepted function: output goes through write(2), time
 *   through clock_gettime, symbols through the real dlsym. A call the library itself
 *   makes while a wrapper runs (an ACL call inside another, or one Python makes while
 *   its stack is read for a location) is forwarded unrecorded.
 * - The program's behaviour never changes: errno is saved and restored around every
 *   recording, return values are passed through, and a failure to write only drops
 *   lines (counted in the closing line).
 * - Each thread appends to its own buffer without locks; a line becomes visible to a
 *   flush only once complete (`committed`), so a flush from a signal handler or from
 *   exit never writes half a line, and every write(2) holds whole lines only.
 */
#define _GNU_SOURCE
#include "runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A thread's buffer is flushed when fewer than this many bytes are left: a line with
 * every argument of the widest wrapper fits well below it. */
#define SG_BUFFER_SIZE (64 * 1024)
#define SG_LINE_RESERVE (16 * 1024)
#define SG_CALLER_CACHE 64
/* Longer strings are cut (a key, a tag, a path), and longer handle lists too, so that
 * every line fits in SG_LINE_RESERVE. */
#define SG_MAX_STRING 512
#define SG_MAX_HANDLES 256

/* A call site's `caller` field, formatted (empty when dladdr knows no object). */
typedef struct sg_caller {
    const char *ra;
    unsigned short len;
    unsigned char ffi; /* the call comes from libffi: Python's ctypes */
    char text[373];
} sg_caller;

typedef struct sg_thread {
    char buf[SG_BUFFER_SIZE];
    size_t len;                      /* bytes appended, owner thread only */
    _Atomic size_t committed;        /* bytes holding whole lines */
    _Atomic size_t flushed;          /* bytes already written */
    atomic_flag flushing;            /* held while a flush writes this buffer */
    long tid;
    char tid_text[24]; /* `,"thread":TID` */
    size_t tid_len;
    unsigned long long calls;        /* lines written by this thread */
    int in_hook;                     /* a wrapper of this thread is recording */
    atomic_int retired;              /* its thread exited: a new thread may take it */
    struct sg_thread *next;          /* every thread's buffer, for exit and signals */
    sg_caller callers[SG_CALLER_CACHE];
} sg_thread;

static __thread sg_thread *sg_self;
static _Atomic(sg_thread *) sg_threads;
static pthread_key_t sg_thread_key;

static int sg_enabled = -1;          /* -1: not yet read from the environment */
static char sg_path[4096];
static char sg_run[128];
static char sg_host[256];
static _Atomic int sg_fd = -1;
static atomic_flag sg_opening = ATOMIC_FLAG_INIT;
static atomic_flag sg_closed = ATOMIC_FLAG_INIT;
static _Atomic long sg_rank = -1;
static _Atomic long sg_world = -1;
/* In a forked child: the parent's pid and rank (the child's own rank is unknown until it
 * tells one: the parent's is not the child's). */
static _Atomic long sg_forked_from = -1;
static _Atomic long sg_parent_rank = -1;
static long sg_pid_at_fork;
static _Atomic unsigned long long sg_dropped;

typedef void *(*sg_dlsym_fn)(void *, const char *);
static sg_dlsym_fn sg_real_dlsym_fn;

/* ---------- small helpers that call nothing intercepted ---------- */

/* Every piece of a line goes through here: once one does not fit, the line is marked
 * full and nothing more is added, so a line is either whole or dropped (sg_end). */
static inline void sg_bytes(sg_line *line, const char *s, size_t n) {
    if (line->full || line->len + n > line->cap) {
        line->full = 1;
        return;
    }
    memcpy(line->buf + line->len, s, n);
    line->len += n;
}

#define SG_LIT(line, s) sg_bytes(line, s, sizeof(s) - 1)

static void sg_copy(char *dst, size_t cap, const char *src) {
    size_t i = 0;
    for (; src && src[i] && i + 1 < cap; i++) dst[i] = src[i];
    dst[i] = 0;
}

static long sg_env_long(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    long n = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9' || n > 1000000) return -1;
        n = n * 10 + (*v - '0');
    }
    return n;
}

static void sg_write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            atomic_fetch_add(&sg_dropped, 1);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* ---------- the real dlsym ---------- */

/* glibc versions its dlsym; the unversioned name would find this library's own. */
static sg_dlsym_fn sg_find_real_dlsym(void) {
    static const char *versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0", 0};
    for (int i = 0; versions[i]; i++) {
        void *f = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        if (f) return (sg_dlsym_fn)f;
    }
    return 0;
}

void *sg_real_dlsym(void *handle, const char *name) {
    if (!sg_real_dlsym_fn) sg_real_dlsym_fn = sg_find_real_dlsym();
    return sg_real_dlsym_fn ? sg_real_dlsym_fn(handle, name) : 0;
}

void *sg_resolve(const char *name) {
    int saved = errno;
    void *f = sg_real_dlsym(RTLD_NEXT, name);
    errno = saved;
    return f;
}

/*
 * A library opened with dlopen (Python's ctypes, plugins) is not in the global scope, so
 * its functions are found through dlsym on its handle and never through this library's
 * symbols. dlsym on a handle is therefore answered with the wrapper, which forwards to
 * what the real dlsym found. Lookups in the global scope (RTLD_DEFAULT, RTLD_NEXT) are
 * passed on as a tail call, so the real dlsym still sees the caller's return address.
 */
__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name) {
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT) return sg_real_dlsym(handle, name);
    void *found = sg_real_dlsym(handle, name);
    if (!found || !sg_active()) return found;
    void *wrapper = sg_wrapper_for(name, found);
    return wrapper ? wrapper : found;
}

/* ---------- configuration ---------- */

static void sg_read_environment(void) {
    const char *dir = getenv("SYNCGUARD_TRACE_DIR");
    if (!dir || !*dir) {
        sg_enabled = 0;
        return;
    }
    const char *run = getenv("SYNCGUARD_TRACE_RUN");
    sg_copy(sg_run, sizeof sg_run, run && *run ? run : "unnamed");
    if (gethostname(sg_host, sizeof sg_host - 1) != 0) sg_copy(sg_host, sizeof sg_host, "host");
    for (char *c = sg_host; *c; c++)
        if (*c == '/') *c = '_';
    long rank = sg_env_long("RANK_ID");
    if (rank < 0) rank = sg_env_long("RANK");
    atomic_store(&sg_rank, rank);
    long world = sg_env_long("RANK_SIZE");
    if (world < 0) world = sg_env_long("WORLD_SIZE");
    atomic_store(&sg_world, world);
    sg_copy(sg_path, sizeof sg_path, dir);
    sg_enabled = 1;
}

int sg_active(void) {
    if (sg_enabled < 0) sg_read_environment();
    return sg_enabled == 1;
}

void sg_set_rank(long rank, long world) {
    if (rank >= 0) atomic_store(&sg_rank, rank);
    if (world > 0) atomic_store(&sg_world, world);
}

/* ---------- the output file ---------- */

static void sg_put_json_string_n(sg_line *line, const char *s, size_t max);
#define sg_put_json_string(line, s) sg_put_json_string_n(line, s, (size_t)-1)
static void sg_format_tid(sg_thread *t);

/* `DIR/<host>-<pid>.jsonl`, opened at the first flush; its first line is the header. */
static int sg_open_file(void) {
    int fd = atomic_load(&sg_fd);
    if (fd >= 0) return fd;
    while (atomic_flag_test_and_set(&sg_opening)) {
    }
    fd = atomic_load(&sg_fd);
    if (fd < 0) {
        char path[4600];
        sg_line name = {.buf = path, .cap = sizeof path};
        sg_put_raw(&name, sg_path);
        sg_put_raw(&name, "/");
        sg_put_raw(&name, sg_host);
        sg_put_raw(&name, "-");
        sg_put_int(&name, (long long)getpid());
        sg_put_raw(&name, ".jsonl");
        path[name.len < sizeof path ? name.len : sizeof path - 1] = 0;
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char header[1024];
            sg_line h = {.buf = header, .cap = sizeof header};
            sg_put_raw(&h, "{\"syncguard_trace\": 1, \"capture\": \"syncguard trace\", \"run\": ");
            sg_put_json_string(&h, sg_run);
            sg_put_raw(&h, ", \"host\": ");
            sg_put_json_string(&h, sg_host);
            sg_put_raw(&h, ", \"pid\": ");
            sg_put_int(&h, (long long)getpid());
            if (atomic_load(&sg_forked_from) >= 0) {
                sg_put_raw(&h, ", \"forked_from\": ");
                sg_put_int(&h, atomic_load(&sg_forked_from));
                if (atomic_load(&sg_parent_rank) >= 0) {
                    sg_put_raw(&h, ", \"parent_rank\": ");
                    sg_put_int(&h, atomic_load(&sg_parent_rank));
                }
            }
            if (atomic_load(&sg_rank) >= 0) {
                sg_put_raw(&h, ", \"rank\": ");
                sg_put_int(&h, atomic_load(&sg_rank));
            }
            if (atomic_load(&sg_world) > 0) {
                sg_put_raw(&h, ", \"world_size\": ");
                sg_put_int(&h, atomic_load(&sg_world));
            }
            sg_put_raw(&h, "}\n");
            sg_write_all(fd, header, h.len);
            atomic_store(&sg_fd, fd);
        }
    }
    atomic_flag_clear(&sg_opening);
    return fd;
}

/* Write the complete lines of `t` not yet written. `wait`: spin for a flush another
 * thread is doing (never from a signal handler, where the holder may be this thread). */
static void sg_flush_thread(sg_thread *t, int wait) {
    while (atomic_flag_test_and_set(&t->flushing)) {
        if (!wait) return;
    }
    size_t from = atomic_load(&t->flushed);
    size_t to = atomic_load(&t->committed);
    if (to > from) {
        int fd = sg_open_file();
        if (fd >= 0)
            sg_write_all(fd, t->buf + from, to - from);
        else
            atomic_fetch_add(&sg_dropped, 1);
        atomic_store(&t->flushed, to);
    }
    atomic_flag_clear(&t->flushing);
}

/* The owner's flush: written lines leave the buffer. */
static void sg_flush_own(sg_thread *t) {
    sg_flush_thread(t, 1);
    while (atomic_flag_test_and_set(&t->flushing)) {
    }
    if (atomic_load(&t->flushed) == t->len) {
        t->len = 0;
        atomic_store(&t->committed, 0);
        atomic_store(&t->flushed, 0);
    }
    atomic_flag_clear(&t->flushing);
}

static void sg_flush_all(int wait) {
    for (sg_thread *t = atomic_load(&sg_threads); t; t = t->next) sg_flush_thread(t, wait);
}

/* The closing line: the rank learned since the header, and how many calls were seen.
 * Its absence tells the reader the process did not exit (SIGKILL, a crash). */
static void sg_close(void) {
    if (!sg_active() || atomic_flag_test_and_set(&sg_closed)) return;
    sg_flush_all(0);
    unsigned long long calls = 0;
    for (sg_thread *t = atomic_load(&sg_threads); t; t = t->next) calls += t->calls;
    if (calls == 0) return;
    int fd = sg_open_file();
    if (fd < 0) return;
    char text[512];
    sg_line c = {.buf = text, .cap = sizeof text};
    sg_put_raw(&c, "{\"syncguard_capture_end\": 1");
    if (atomic_load(&sg_rank) >= 0) {
        sg_put_raw(&c, ", \"rank\": ");
        sg_put_int(&c, atomic_load(&sg_rank));
    }
    if (atomic_load(&sg_world) > 0) {
        sg_put_raw(&c, ", \"world_size\": ");
        sg_put_int(&c, atomic_load(&sg_world));
    }
    sg_put_raw(&c, ", \"calls\": ");
    sg_put_uint(&c, calls);
    sg_put_raw(&c, ", \"dropped\": ");
    sg_put_int(&c, (long long)atomic_load(&sg_dropped));
    sg_put_raw(&c, "}\n");
    sg_write_all(fd, text, c.len);
}

/* ---------- threads ---------- */

static void sg_thread_exit(void *p) {
    sg_thread *t = p;
    sg_flush_own(t);
    /* The buffer stays on the list (never freed: a signal handler may walk the list at
     * any time), empty, for the next new thread to take; a call made later by this
     * thread (another key's destructor) takes a buffer of its own again. */
    sg_self = 0;
    atomic_store(&t->retired, 1);
}

/* A buffer whose thread exited, taken for the calling thread. */
static sg_thread *sg_take_retired(void) {
    for (sg_thread *t = atomic_load(&sg_threads); t; t = t->next) {
        int retired = 1;
        if (atomic_load(&t->retired) && atomic_compare_exchange_strong(&t->retired, &retired, 0)) return t;
    }
    return 0;
}

static void sg_format_tid(sg_thread *t) {
    t->tid = syscall(SYS_gettid);
    sg_line text = {.buf = t->tid_text, .cap = sizeof t->tid_text};
    SG_LIT(&text, ",\"thread\":");
    sg_put_int(&text, t->tid);
    t->tid_len = text.len;
}

static sg_thread *sg_thread_state(void) {
    sg_thread *t = sg_self;
    if (t) return t;
    t = sg_take_retired();
    if (t) {
        sg_format_tid(t);
        pthread_setspecific(sg_thread_key, t);
        sg_self = t;
        return t;
    }
    t = calloc(1, sizeof *t);
    if (!t) return 0;
    atomic_flag_clear(&t->flushing);
    sg_format_tid(t);
    sg_thread *head = atomic_load(&sg_threads);
    do {
        t->next = head;
    } while (!atomic_compare_exchange_weak(&sg_threads, &head, t));
    pthread_setspecific(sg_thread_key, t);
    sg_self = t;
    return t;
}

/* ---------- lines ---------- */

int sg_enter(void) {
    sg_thread *t = sg_self;
    if (t && t->in_hook) return 0;
    if (!sg_active()) return 0;
    if (!t) t = sg_thread_state();
    if (!t) return 0;
    t->in_hook = 1;
    return 1;
}

unsigned long long sg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void sg_put_raw(sg_line *line, const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    sg_bytes(line, s, n);
}

static const char sg_pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

void sg_put_uint(sg_line *line, unsigned long long u) {
    char digits[24];
    char *end = digits + sizeof digits, *p = end;
    while (u >= 100) {
        unsigned pair = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = sg_pairs[pair + 1];
        *--p = sg_pairs[pair];
    }
    if (u >= 10) {
        unsigned pair = (unsigned)u * 2;
        *--p = sg_pairs[pair + 1];
        *--p = sg_pairs[pair];
    } else {
        *--p = (char)('0' + u);
    }
    sg_bytes(line, p, (size_t)(end - p));
}

void sg_put_int(sg_line *line, long long v) {
    if (v < 0) SG_LIT(line, "-");
    sg_put_uint(line, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v);
}

/* `"0x1f"`: handles and pointers. */
static void sg_put_hex(sg_line *line, unsigned long long u) {
    char digits[24];
    char *end = digits + sizeof digits, *p = end;
    *--p = '"';
    do {
        *--p = "0123456789abcdef"[u & 15];
        u >>= 4;
    } while (u);
    *--p = 'x';
    *--p = '0';
    *--p = '"';
    sg_bytes(line, p, (size_t)(end - p));
}

/* A JSON string of at most `max` bytes of `s` (and never more than SG_MAX_STRING). */
static void sg_put_json_string_n(sg_line *line, const char *s, size_t max) {
    size_t n = 0;
    if (max > SG_MAX_STRING) max = SG_MAX_STRING;
    while (n < max && s[n]) n++;
    if (line->full || line->len + 6 * n + 2 > line->cap) {
        line->full = 1;
        return;
    }
    char *out = line->buf + line->len;
    *out++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *out++ = '\\';
            *out++ = (char)c;
        } else if (c < 0x20) {
            *out++ = '\\';
            *out++ = 'u';
            *out++ = '0';
            *out++ = '0';
            *out++ = "0123456789abcdef"[c >> 4];
            *out++ = "0123456789abcdef"[c & 15];
        } else {
            *out++ = (char)c;
        }
    }
    *out++ = '"';
    line->len = (size_t)(out - line->buf);
}

/* `,"caller":{"object":"/lib/x.so","offset":"0x1a2b"}` for a return address, formatted
 * once per call site and thread: dladdr takes the loader's lock. */
static const sg_caller *sg_caller_of(sg_thread *t, const char *ra) {
    const char *site = ra - 1; /* inside the call instruction */
    sg_caller *slot = &t->callers[((uintptr_t)ra >> 2) % SG_CALLER_CACHE];
    if (slot->ra == ra) return slot;
    Dl_info info;
    slot->ra = ra;
    slot->len = 0;
    slot->ffi = 0;
    if (!dladdr(site, &info) || !info.dli_fname) return slot;
    const char *object = info.dli_fname;
    slot->ffi = strstr(object, "libffi") || strstr(object, "_ctypes");
    /* addr2line takes offsets from the load address in a shared object or a PIE, but
     * the address itself in a fixed-address executable (ET_EXEC). */
    uintptr_t base = (uintptr_t)info.dli_fbase;
    const ElfW(Ehdr) *elf = info.dli_fbase;
    if (elf && memcmp(elf->e_ident, ELFMAG, SELFMAG) == 0 && elf->e_type == ET_EXEC) base = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        sg_line text = {.buf = slot->text, .cap = sizeof slot->text};
        SG_LIT(&text, ",\"caller\":{\"object\":");
        sg_put_json_string_n(&text, object, (size_t)-1);
        SG_LIT(&text, ",\"offset\":");
        sg_put_hex(&text, (uintptr_t)site - base);
        SG_LIT(&text, "}");
        if (!text.full) {
            slot->len = (unsigned short)text.len;
            break;
        }
        /* A path too long for the cache: its file name only. */
        const char *slash = object;
        for (const char *c = object; *c; c++)
            if (*c == '/') slash = c + 1;
        object = slash;
    }
    return slot;
}

/* ---------- Python source locations ---------- */

/*
 * A call made from Python (pyACL through ctypes, torch_npu) has a C caller that tells the
 * user nothing: libffi, or torch_npu's C++. So when the process runs a Python interpreter,
 * the calling thread's Python stack is read, and its innermost frame outside ctypes and
 * torch is written as the call's `loc` (the user's file and line; `syncguard trace` then
 * asks addr2line only about lines without one). The interpreter's functions are looked
 * up once in the global scope, never linked: in a C program the lookup fails and nothing
 * more is done. Only public functions that Python 3.9 to 3.13 all export are used
 * (tested with each); without one of them (Python 3.8 has no PyFrame_GetCode) calls
 * keep only their C caller.
 */
#define SG_PYTHON_DEPTH 64

typedef struct sg_python {
    int (*initialized)(void);        /* Py_IsInitialized */
    int (*finalizing)(void);         /* Py_IsFinalizing (3.13), _Py_IsFinalizing; optional */
    void *(*this_thread)(void);      /* PyGILState_GetThisThreadState */
    int (*holds_gil)(void);          /* PyGILState_Check */
    int (*ensure)(void);             /* PyGILState_Ensure (PyGILState_STATE is an enum) */
    void (*release)(int);            /* PyGILState_Release */
    void *(*current)(void);          /* PyThreadState_Get */
    void *(*frame_of)(void *);       /* PyThreadState_GetFrame: a new reference */
    void *(*back)(void *);           /* PyFrame_GetBack: a new reference */
    void *(*code)(void *);           /* PyFrame_GetCode: a new reference */
    int (*line_number)(void *);      /* PyFrame_GetLineNumber */
    void *(*attribute)(void *, const char *); /* PyObject_GetAttrString */
    const char *(*utf8)(void *);     /* PyUnicode_AsUTF8: owned by the string */
    void (*clear_error)(void);       /* PyErr_Clear */
    void (*decref)(void *);          /* Py_DecRef */
} sg_python;

static sg_python sg_py;
static int sg_py_found;
static pthread_once_t sg_py_once = PTHREAD_ONCE_INIT;

static void sg_python_lookup(void) {
    struct {
        void **slot;
        const char *name;
    } wanted[] = {
        {(void **)&sg_py.initialized, "Py_IsInitialized"},
        {(void **)&sg_py.this_thread, "PyGILState_GetThisThreadState"},
        {(void **)&sg_py.holds_gil, "PyGILState_Check"},
        {(void **)&sg_py.ensure, "PyGILState_Ensure"},
        {(void **)&sg_py.release, "PyGILState_Release"},
        {(void **)&sg_py.current, "PyThreadState_Get"},
        {(void **)&sg_py.frame_of, "PyThreadState_GetFrame"},
        {(void **)&sg_py.back, "PyFrame_GetBack"},
        {(void **)&sg_py.code, "PyFrame_GetCode"},
        {(void **)&sg_py.line_number, "PyFrame_GetLineNumber"},
        {(void **)&sg_py.attribute, "PyObject_GetAttrString"},
        {(void **)&sg_py.utf8, "PyUnicode_AsUTF8"},
        {(void **)&sg_py.clear_error, "PyErr_Clear"},
        {(void **)&sg_py.decref, "Py_DecRef"},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        *wanted[i].slot = sg_real_dlsym(RTLD_DEFAULT, wanted[i].name);
        if (!*wanted[i].slot) return;
    }
    sg_py.finalizing = sg_real_dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    if (!sg_py.finalizing) sg_py.finalizing = sg_real_dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    sg_py_found = 1;
}

/* Frames that are not the user's: ctypes' own Python, torch and torch_npu, and code
 * with no file (`<frozen importlib._bootstrap>`, `<string>`). */
static int sg_python_internal(const char *file) {
    return file[0] == '<' || strstr(file, "/ctypes/") || strstr(file, "/site-packages/torch") ||
           strstr(file, "/dist-packages/torch") || strstr(file, "/torch_npu/");
}

/* `,"loc":{"file":"/w/train.py","line":27}` for the calling thread's Python code, when
 * it has some. Called while recording (in_hook is set): a call into a wrapper the walk
 * leads to (a finalizer run by the garbage collector) is forwarded unrecorded. */
static void sg_python_loc(sg_line *line, int from_ffi) {
    pthread_once(&sg_py_once, sg_python_lookup);
    const sg_python *py = &sg_py;
    if (!sg_py_found || !py->initialized() || (py->finalizing && py->finalizing())) return;
    /* A thread Python never ran on (the runtime's or the program's own): taking the GIL
     * would make it a Python thread. */
    if (!py->this_thread()) return;
    /* Taking the GIL waits for the thread holding it, which may itself wait for a lock
     * this thread's caller holds (torch_npu's allocator queries events under its mutex
     * with the GIL released, while a tensor freed by Python waits for that mutex holding
     * the GIL). So the GIL is taken only straight from ctypes, which released it just to
     * call this function and holds nothing else; elsewhere the stack is read only if this
     * thread holds the GIL already. */
    if (!from_ffi && !py->holds_gil()) return;
    int gil = py->ensure();
    void *frame = py->frame_of(py->current());
    for (int depth = 0; frame && depth < SG_PYTHON_DEPTH; depth++) {
        void *code = py->code(frame);
        void *name = code ? py->attribute(code, "co_filename") : 0;
        const char *file = name ? py->utf8(name) : 0;
        if (!file) py->clear_error();
        int found = file && !sg_python_internal(file);
        if (found) {
            int number = py->line_number(frame);
            if (number > 0 && strlen(file) <= SG_MAX_STRING) {
                SG_LIT(line, ",\"loc\":{\"file\":");
                sg_put_json_string(line, file);
                SG_LIT(line, ",\"line\":");
                sg_put_int(line, number);
                SG_LIT(line, "}");
            }
        }
        if (name) py->decref(name);
        if (code) py->decref(code);
        void *back = found ? 0 : py->back(frame);
        py->decref(frame);
        frame = back;
    }
    if (frame) py->decref(frame);
    py->release(gil);
}

sg_line sg_begin(const char *prefix, size_t prefix_len, unsigned long long ts) {
    sg_thread *t = sg_self;
    if (SG_BUFFER_SIZE - t->len < SG_LINE_RESERVE) sg_flush_own(t);
    sg_line line = {.buf = t->buf + t->len, .cap = SG_BUFFER_SIZE - t->len};
    sg_bytes(&line, prefix, prefix_len);
    sg_bytes(&line, t->tid_text, t->tid_len);
    SG_LIT(&line, ",\"ts\":");
    sg_put_uint(&line, ts);
    SG_LIT(&line, ",\"args\":");
    line.args = line.len;
    return line;
}

void sg_arg_handle(sg_line *line, const char *key, size_t key_len, unsigned long long v) {
    sg_bytes(line, key, key_len);
    sg_put_hex(line, v);
}

void sg_arg_int(sg_line *line, const char *key, size_t key_len, long long v) {
    sg_bytes(line, key, key_len);
    sg_put_int(line, v);
}

void sg_arg_uint(sg_line *line, const char *key, size_t key_len, unsigned long long v) {
    sg_bytes(line, key, key_len);
    sg_put_uint(line, v);
}

void sg_arg_float(sg_line *line, const char *key, size_t key_len, double v) {
    sg_bytes(line, key, key_len);
    /* Thousandths are enough for the timeouts that are floats. */
    long long milli = (long long)(v * 1000.0 + (v < 0 ? -0.5 : 0.5));
    if (milli < 0) {
        SG_LIT(line, "-");
        milli = -milli;
    }
    sg_put_int(line, milli / 1000);
    char fraction[4] = {'.', (char)('0' + milli / 100 % 10), (char)('0' + milli / 10 % 10), (char)('0' + milli % 10)};
    sg_bytes(line, fraction, sizeof fraction);
}

void sg_arg_string(sg_line *line, const char *key, size_t key_len, const char *s) {
    sg_bytes(line, key, key_len);
    if (s)
        sg_put_json_string_n(line, s, (size_t)-1);
    else
        SG_LIT(line, "null");
}

/* A string the call wrote into a buffer of `max` bytes, which may lack its NUL. */
void sg_arg_string_n(sg_line *line, const char *key, size_t key_len, const char *s, size_t max) {
    sg_bytes(line, key, key_len);
    sg_put_json_string_n(line, s, max);
}

void sg_arg_name(sg_line *line, const char *key, size_t key_len, long long v, const char *const *names, int count) {
    if (v >= 0 && v < count && names[v]) {
        sg_bytes(line, key, key_len);
        SG_LIT(line, "\"");
        sg_put_raw(line, names[v]);
        SG_LIT(line, "\"");
    } else {
        sg_arg_int(line, key, key_len, v);
    }
}

void sg_arg_handles(sg_line *line, const char *key, size_t key_len, const unsigned long long *v,
                    unsigned long long count) {
    sg_bytes(line, key, key_len);
    SG_LIT(line, "[");
    if (count > SG_MAX_HANDLES) count = SG_MAX_HANDLES;
    for (unsigned long long i = 0; v && i < count; i++) {
        if (i) SG_LIT(line, ",");
        sg_put_hex(line, v[i]);
    }
    SG_LIT(line, "]");
}

/* HcclChannelDesc as HCCL documents it: a CommAbiHeader {version, magicWord, size,
 * reserved}, remoteRank, channelProtocol, two 160-byte EndpointDescs (protocol, a 40-byte
 * CommAddr, a 64-byte EndpointLoc, 52 bytes more), then notifyNum. The header's size,
 * which HcclChannelDescInit sets, is the array's stride: a later version only appends
 * fields. A size too small for notifyNum is not guessed at: the value says so, and the
 * trace reader reports the call. */
enum { SG_DESC_SIZE_AT = 8, SG_DESC_REMOTE_RANK_AT = 16, SG_DESC_PROTOCOL_AT = 20, SG_DESC_NOTIFY_NUM_AT = 344 };
static const char *const sg_protocols[] = {"COMM_PROTOCOL_HCCS", "COMM_PROTOCOL_ROCE", "COMM_PROTOCOL_PCIE",
                                           "COMM_PROTOCOL_SIO", "COMM_PROTOCOL_UBC_CTP", "COMM_PROTOCOL_UBC_TP",
                                           "COMM_PROTOCOL_UB_MEM"};

static uint32_t sg_u32_at(const unsigned char *base, size_t offset) {
    uint32_t v;
    memcpy(&v, base + offset, sizeof v);
    return v;
}

void sg_arg_channel_descs(sg_line *line, const char *key, size_t key_len, const void *descs,
                          unsigned long long count) {
    const unsigned char *base = descs;
    uint32_t stride = base ? sg_u32_at(base, SG_DESC_SIZE_AT) : 0;
    sg_bytes(line, key, key_len);
    if (stride < SG_DESC_NOTIFY_NUM_AT + 4 || stride > 65536) {
        SG_LIT(line, "\"unreadable: header.size ");
        sg_put_uint(line, stride);
        SG_LIT(line, "\"");
        return;
    }
    SG_LIT(line, "[");
    if (count > SG_MAX_HANDLES) count = SG_MAX_HANDLES;
    for (unsigned long long i = 0; i < count; i++) {
        const unsigned char *desc = base + i * stride;
        uint32_t protocol = sg_u32_at(desc, SG_DESC_PROTOCOL_AT);
        if (i) SG_LIT(line, ",");
        SG_LIT(line, "{\"remoteRank\":");
        sg_put_uint(line, sg_u32_at(desc, SG_DESC_REMOTE_RANK_AT));
        SG_LIT(line, ",\"channelProtocol\":\"");
        if (protocol < sizeof sg_protocols / sizeof sg_protocols[0]) {
            sg_put_raw(line, sg_protocols[protocol]);
        } else {
            SG_LIT(line, "COMM_PROTOCOL_");
            sg_put_uint(line, protocol);
        }
        SG_LIT(line, "\",\"notifyNum\":");
        sg_put_uint(line, sg_u32_at(desc, SG_DESC_NOTIFY_NUM_AT));
        SG_LIT(line, "}");
    }
    SG_LIT(line, "]");
}

void sg_arg_dim3(sg_line *line, const char *key, size_t key_len, sg_dim3 d) {
    sg_bytes(line, key, key_len);
    SG_LIT(line, "[");
    sg_put_uint(line, d.x);
    SG_LIT(line, ",");
    sg_put_uint(line, d.y);
    SG_LIT(line, ",");
    sg_put_uint(line, d.z);
    SG_LIT(line, "]");
}

void sg_end(sg_line *line, long long ret, const void *ra) {
    sg_thread *t = sg_self;
    /* Every argument was written after a comma: the first one becomes the brace. */
    if (line->len == line->args) {
        SG_LIT(line, "{}");
    } else if (!line->full) {
        line->buf[line->args] = '{';
        SG_LIT(line, "}");
    }
    SG_LIT(line, ",\"ret\":");
    sg_put_int(line, ret);
    const sg_caller *caller = ra ? sg_caller_of(t, ra) : 0;
    sg_python_loc(line, caller && caller->ffi);
    /* Last: `syncguard trace` finds it from the end of the line (trace/src/locate.rs). */
    if (caller) sg_bytes(line, caller->text, caller->len);
    SG_LIT(line, "}\n");
    if (line->full) {
        atomic_fetch_add(&sg_dropped, 1); /* too long for the buffer: never half a line */
        return;
    }
    t->len += line->len;
    atomic_store_explicit(&t->committed, t->len, memory_order_release);
    t->calls++;
}

void sg_leave(void) {
    sg_thread *t = sg_self;
    if (t) t->in_hook = 0;
}

/* ---------- process life ---------- */

static const int sg_fatal_signals[] = {SIGTERM, SIGINT, SIGABRT, SIGHUP, SIGQUIT};
static struct sigaction sg_previous[sizeof sg_fatal_signals / sizeof sg_fatal_signals[0]];

/* Flush what every thread has, then let the signal do what it would have done. */
static void sg_on_signal(int sig, siginfo_t *info, void *context) {
    int saved = errno;
    sg_close();
    for (size_t i = 0; i < sizeof sg_fatal_signals / sizeof sg_fatal_signals[0]; i++) {
        if (sg_fatal_signals[i] != sig) continue;
        struct sigaction *before = &sg_previous[i];
        if (before->sa_flags & SA_SIGINFO) {
            if (before->sa_sigaction) before->sa_sigaction(sig, info, context);
        } else if (before->sa_handler == SIG_IGN) {
        } else if (before->sa_handler != SIG_DFL) {
            before->sa_handler(sig);
        } else {
            sigaction(sig, before, 0);
            raise(sig);
        }
    }
    errno = saved;
}

static void sg_install_signal_handlers(void) {
    for (size_t i = 0; i < sizeof sg_fatal_signals / sizeof sg_fatal_signals[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = sg_on_signal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        if (sigaction(sg_fatal_signals[i], 0, &sg_previous[i]) != 0) continue;
        if (!(sg_previous[i].sa_flags & SA_SIGINFO) && sg_previous[i].sa_handler == SIG_IGN) continue;
        sigaction(sg_fatal_signals[i], &action, 0);
    }
}

/* A forked child starts its own file: the parent's lines stay the parent's, and its
 * rank is the child's own once it tells one (the header names the parent). */
static void sg_after_fork_in_child(void) {
    atomic_store(&sg_forked_from, sg_pid_at_fork);
    atomic_store(&sg_parent_rank, atomic_exchange(&sg_rank, -1));
    for (sg_thread *t = atomic_load(&sg_threads); t; t = t->next) {
        t->len = 0;
        atomic_store(&t->committed, 0);
        atomic_store(&t->flushed, 0);
        atomic_flag_clear(&t->flushing);
        t->calls = 0;
    }
    if (sg_self) sg_format_tid(sg_self);
    atomic_store(&sg_fd, -1);
    atomic_flag_clear(&sg_opening);
    atomic_flag_clear(&sg_closed);
    atomic_store(&sg_dropped, 0);
}

static void sg_before_fork(void) {
    sg_pid_at_fork = (long)getpid();
    sg_flush_all(1);
}

__attribute__((constructor)) static void sg_start(void) {
    if (!sg_active()) return;
    pthread_key_create(&sg_thread_key, sg_thread_exit);
    pthread_atfork(sg_before_fork, 0, sg_after_fork_in_child);
    sg_install_signal_handlers();
}

__attribute__((destructor)) static void sg_stop(void) {
    sg_close();
}
