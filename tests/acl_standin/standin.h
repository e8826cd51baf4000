/* A stand-in for CANN's runtime libraries (libascendcl.so, libhccl.so, libhcomm.so) that
 * runs work for real, without an NPU: what `syncguard verify-then-run --backend acl` is
 * tested against (tests/acl_backend.rs, runtime-bridge/tests/acl_standin.rs).
 *
 * Unlike the capture tests' fakes (tests/capture/fake_*.c, whose header this one reuses
 * for the prototypes and the HcclChannelDesc layout), every call here has the documented
 * semantics: each stream and HCCL thread is a worker thread running its queue in FIFO
 * order; a stream waiting on an event, a notify or a channel/thread notify blocks until
 * it is set; host synchronizes block until the queue drains. A backend that waits on the
 * wrong object hangs here as it would on a device (a wait that outlives
 * ACL_STANDIN_HANG_MS fails instead, so a test reports it rather than hanging).
 *
 * Test hooks (environment, read when the library loads, and exported functions):
 *   ACL_STANDIN_FAIL=api[#n]  the n-th call (default: first) of `api` returns an error.
 *   ACL_STANDIN_HANG_MS=ms    how long a wait without a timeout may block (default 20000).
 *   ACL_STANDIN_HCCL_BUFFER_MB  size of each rank's HCCL buffer (default 400, as HCCL's).
 *   acl_standin_set_tag()     tags the calling thread's next calls (tasks keep the tag).
 *   acl_standin_executed()    the tasks executed so far: tag, queue, API.
 *   acl_standin_report()      anomalies seen and objects still alive. */
#ifndef ACL_STANDIN_H
#define ACL_STANDIN_H

#include <pthread.h>
#include <stdint.h>

#include "fake_acl.h"

#define EXPORT __attribute__((visibility("default")))

/* Return codes (0 is success in both code spaces). */
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_STREAM_CONTEXT 107003
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT 507047
#define ACL_ERROR_RT_INTERNAL_ERROR 507899
/* The stand-in's code for a task (a device-side wait) that timed out or hung: reported
 * by the next synchronize of its queue, as the runtime reports asynchronous failures. */
#define STANDIN_TASK_FAILED 507015
#define HCCL_E_PARA 1
#define HCCL_E_PTR 2
#define HCCL_E_NOT_SUPPORT 5
#define HCCL_E_INTERNAL 4
#define HCCL_E_TIMEOUT 9

/* What a queued task does. */
enum task_kind {
    T_RECORD_EVENT,
    T_WAIT_EVENT,
    T_RESET_EVENT,
    T_SET_FLAG,  /* notify record, channel/thread notify record */
    T_WAIT_FLAG, /* waits until set, then consumes it */
    T_COPY,      /* memcpy, local copy, write, read; `flag` (if any) set after the copy */
    T_MEMSET,
    T_NOP,       /* fences: FIFO order already holds */
};

struct event;
struct flag;

struct task {
    struct task *next;
    enum task_kind kind;
    const char *api;
    uint64_t tag;
    struct event *event;
    uint64_t generation; /* capture-kind events: the record a wait binds to */
    struct flag *flag;
    void *dst;
    const void *src;
    size_t len;
    int value;
    int64_t timeout_ms; /* <0: none of its own */
};

struct queue {
    uint64_t id;
    int device;
    int live;
    int stopping;
    struct task *head, *tail;
    uint64_t enqueued, completed;
    int error; /* first failed task since the last synchronize */
    const char *failed_api;
    pthread_cond_t work; /* signalled when a task is enqueued or the queue stops */
};

/* A binary signal: a notify, a channel notify, a thread notify. */
struct flag {
    int set;
    const char *what;
};

/* Shared by the three libraries (exported by libascendcl.so). */
void standin_lock(void);
void standin_unlock(void);
/* Nonzero when this call is the one ACL_STANDIN_FAIL names; sets the recent error text. */
int standin_fail(const char *api);
/* Checks `handle` is a live object of `kind`; returns it or NULL. Caller holds the lock. */
void *standin_find(int kind, const void *handle);
void standin_register(int kind, void *object);
void standin_unregister(int kind, void *object);
struct queue *standin_queue_new(int device);
/* Enqueues a copy of `task` (with the calling thread's tag); caller holds the lock. */
void standin_enqueue(struct queue *queue, struct task task);
/* Blocks (lock held) until `queue` has run what was enqueued now; returns an aclError-style
 * code: its failed task's, or `timeout_code` after `timeout_ms` (<0: the hang limit). */
int standin_drain(struct queue *queue, int64_t timeout_ms, int timeout_code);
void standin_stop(struct queue *queue);
struct flag *standin_flag(const char *what);
void standin_anomaly(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* The calling thread's current device (aclrtSetDevice), -1 before one. */
int standin_current_device(void);
int standin_device_open(int device);
/* Registers [base, base+size) as device (place 0) or host (1) memory. */
void standin_memory_add(void *base, size_t size, int place, int owned);
/* Whether [ptr, ptr+len) lies inside registered memory of `place` (-1: any). */
int standin_memory_holds(const void *ptr, size_t len, int place);

enum object_kind { K_STREAM, K_EVENT, K_NOTIFY, K_COMM, K_CHANNEL, K_THREAD, K_KINDS };

/* HCCL objects, shared by libhccl.so and libhcomm.so. */
struct comm {
    uint64_t group;
    uint32_t rank, ranks;
    int device;
    void *buffer;
    uint64_t buffer_size;
    struct comm **members; /* every rank's communicator of the group */
    int live;
};

struct channel {
    struct comm *comm;
    uint32_t remote;
    uint32_t notify_num;
};

struct thread {
    struct comm *comm;
    struct queue *queue;
    uint32_t notify_num;
    struct flag **notifies;
};

#endif
