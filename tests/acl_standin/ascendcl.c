/* The stand-in libascendcl.so: the queue engine every library shares, and the acl_rt.h
 * calls syncguard's ACL backend makes (runtime-bridge/src/acl/runtime.rs). See standin.h. */
#define _GNU_SOURCE
#include "standin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *aclrtContext;

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

void standin_lock(void) { pthread_mutex_lock(&mutex); }
void standin_unlock(void) { pthread_mutex_unlock(&mutex); }

/* ---- test hooks ------------------------------------------------------------------- */

static char fail_api[128];
static unsigned fail_nth = 1, fail_seen;
static int64_t hang_ms = 20000;
static __thread uint64_t current_tag;
static __thread char recent_error[256];
static __thread int current_device = -1;

__attribute__((constructor)) static void read_environment(void) {
    const char *fail = getenv("ACL_STANDIN_FAIL");
    if (fail && *fail) {
        snprintf(fail_api, sizeof fail_api, "%s", fail);
        char *hash = strchr(fail_api, '#');
        if (hash) {
            *hash = 0;
            fail_nth = (unsigned)strtoul(hash + 1, NULL, 10);
        }
    }
    const char *hang = getenv("ACL_STANDIN_HANG_MS");
    if (hang && *hang)
        hang_ms = strtoll(hang, NULL, 10);
}

EXPORT void acl_standin_set_fail(const char *api, unsigned nth) {
    standin_lock();
    snprintf(fail_api, sizeof fail_api, "%s", api ? api : "");
    fail_nth = nth ? nth : 1;
    fail_seen = 0;
    standin_unlock();
}

EXPORT void acl_standin_set_tag(uint64_t tag) { current_tag = tag; }

int standin_fail(const char *api) {
    standin_lock();
    int fail = fail_api[0] && strcmp(api, fail_api) == 0 && ++fail_seen == fail_nth;
    standin_unlock();
    if (fail)
        snprintf(recent_error, sizeof recent_error, "%s failed: injected by ACL_STANDIN_FAIL", api);
    return fail;
}

static char *anomalies;
static size_t anomalies_len;

void standin_anomaly(const char *format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    char *grown = realloc(anomalies, anomalies_len + n + 1);
    if (!grown)
        return;
    anomalies = grown;
    memcpy(anomalies + anomalies_len, line, n);
    anomalies_len += n;
    anomalies[anomalies_len] = 0;
}

/* Executed tasks, in the order they ran. */
struct executed {
    uint64_t tag, queue;
    const char *api;
};
static struct executed *executed;
static size_t executed_len, executed_cap;

EXPORT size_t acl_standin_executed(uint64_t *tags, uint64_t *queues, const char **apis, size_t cap) {
    standin_lock();
    size_t n = executed_len;
    for (size_t i = 0; i < n && i < cap; i++) {
        tags[i] = executed[i].tag;
        queues[i] = executed[i].queue;
        apis[i] = executed[i].api;
    }
    standin_unlock();
    return n;
}

/* ---- object registry -------------------------------------------------------------- */

struct registry {
    void **items;
    size_t len, cap;
};
static struct registry registries[K_KINDS];

void standin_register(int kind, void *object) {
    struct registry *r = &registries[kind];
    if (r->len == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->items = realloc(r->items, r->cap * sizeof *r->items);
    }
    r->items[r->len++] = object;
}

void standin_unregister(int kind, void *object) {
    struct registry *r = &registries[kind];
    for (size_t i = r->len; i-- > 0;)
        if (r->items[i] == object) {
            r->items[i] = r->items[--r->len];
            return;
        }
}

void *standin_find(int kind, const void *handle) {
    struct registry *r = &registries[kind];
    for (size_t i = r->len; i-- > 0;)
        if (r->items[i] == handle)
            return r->items[i];
    return NULL;
}

/* ---- memory ----------------------------------------------------------------------- */

struct region {
    char *base;
    size_t size;
    int place; /* 0 device, 1 pinned host */
    int owned; /* by an aclrtMalloc*, freed by aclrtFree* */
};
static struct region *regions;
static size_t regions_len, regions_cap;

void standin_memory_add(void *base, size_t size, int place, int owned) {
    if (regions_len == regions_cap) {
        regions_cap = regions_cap ? 2 * regions_cap : 64;
        regions = realloc(regions, regions_cap * sizeof *regions);
    }
    regions[regions_len++] = (struct region){base, size, place, owned};
}

static struct region *region_of(const void *ptr, size_t len) {
    for (size_t i = regions_len; i-- > 0;) {
        struct region *r = &regions[i];
        if ((const char *)ptr >= r->base && (const char *)ptr + len <= r->base + r->size &&
            (const char *)ptr + len >= (const char *)ptr)
            return r;
    }
    return NULL;
}

int standin_memory_holds(const void *ptr, size_t len, int place) {
    struct region *r = region_of(ptr, len);
    return r && (place < 0 || r->place == place);
}

/* ---- queues and their workers ----------------------------------------------------- */

struct event {
    int sync_kind; /* aclrtCreateEvent / WithFlag: a flag until reset; ExWithFlag: capture */
    uint32_t flags;
    int set;
    uint64_t issued;   /* records issued */
    uint8_t *done;     /* done[g]: record g has run */
    uint64_t done_cap;
    int live;
};

struct notify {
    struct flag flag;
    int live;
};

static uint64_t next_queue_id = 1;
/* Devices 0..MAX_DEVICES-1: rank r runs on device r, and the fixtures go up to 512 ranks. */
#define MAX_DEVICES 1024
static struct queue *default_streams[MAX_DEVICES];
static struct queue **queues;
static size_t queues_len, queues_cap;
static int device_refs[MAX_DEVICES];
static uint32_t op_wait_timeout_s;

static struct timespec deadline_after(int64_t ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* Waits (lock held) until `ready(arg)`; 0, or ETIMEDOUT after `ms` (<0: the hang limit,
 * which is reported as an anomaly). */
static int wait_for(int (*ready)(void *), void *arg, int64_t ms, const char *what) {
    int hang = ms < 0;
    struct timespec deadline = deadline_after(hang ? hang_ms : ms);
    while (!ready(arg)) {
        if (pthread_cond_timedwait(&changed, &mutex, &deadline) == ETIMEDOUT && !ready(arg)) {
            if (hang)
                standin_anomaly("hang: %s still waited after %lld ms", what, (long long)hang_ms);
            return ETIMEDOUT;
        }
    }
    return 0;
}

static int event_recorded(void *arg) { return ((struct event *)arg)->set; }
static int flag_set(void *arg) { return ((struct flag *)arg)->set; }

struct generation_wait {
    struct event *event;
    uint64_t generation;
};
static int generation_done(void *arg) {
    struct generation_wait *w = arg;
    return w->generation == 0 || (w->generation < w->event->done_cap && w->event->done[w->generation]);
}

static void mark_done(struct event *e, uint64_t generation) {
    if (generation >= e->done_cap) {
        uint64_t cap = e->done_cap ? e->done_cap : 16;
        while (cap <= generation)
            cap *= 2;
        e->done = realloc(e->done, cap);
        memset(e->done + e->done_cap, 0, cap - e->done_cap);
        e->done_cap = cap;
    }
    e->done[generation] = 1;
}

/* Runs one task (lock held; released around copies). 0 or a failure code. */
static int run_task(struct queue *q, struct task *t) {
    int64_t timeout = t->timeout_ms;
    char what[160];
    snprintf(what, sizeof what, "%s on queue %llu", t->api, (unsigned long long)q->id);
    switch (t->kind) {
    case T_RECORD_EVENT:
        if (t->event->sync_kind)
            t->event->set = 1;
        mark_done(t->event, t->generation);
        return 0;
    case T_WAIT_EVENT:
        if (t->event->sync_kind)
            return wait_for(event_recorded, t->event, timeout, what) ? STANDIN_TASK_FAILED : 0;
        else {
            struct generation_wait w = {t->event, t->generation};
            return wait_for(generation_done, &w, timeout, what) ? STANDIN_TASK_FAILED : 0;
        }
    case T_RESET_EVENT:
        t->event->set = 0;
        return 0;
    case T_SET_FLAG:
        if (t->flag->set)
            standin_anomaly("lost signal: %s set %s while it was still set", t->api, t->flag->what);
        t->flag->set = 1;
        return 0;
    case T_WAIT_FLAG:
        if (wait_for(flag_set, t->flag, timeout, what))
            return STANDIN_TASK_FAILED;
        t->flag->set = 0;
        return 0;
    case T_COPY:
        standin_unlock();
        memmove(t->dst, t->src, t->len);
        standin_lock();
        if (t->flag) {
            if (t->flag->set)
                standin_anomaly("lost signal: %s set %s while it was still set", t->api, t->flag->what);
            t->flag->set = 1;
        }
        return 0;
    case T_MEMSET:
        standin_unlock();
        memset(t->dst, t->value, t->len);
        standin_lock();
        return 0;
    case T_NOP:
        return 0;
    }
    return 0;
}

static void *worker(void *arg) {
    struct queue *q = arg;
    standin_lock();
    for (;;) {
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->work, &mutex);
        if (!q->head)
            break;
        struct task *t = q->head;
        int failed = run_task(q, t);
        if (failed && !q->error) {
            q->error = failed;
            q->failed_api = t->api;
        }
        if (executed_len == executed_cap) {
            executed_cap = executed_cap ? 2 * executed_cap : 1024;
            executed = realloc(executed, executed_cap * sizeof *executed);
        }
        executed[executed_len++] = (struct executed){t->tag, q->id, t->api};
        q->head = t->next;
        if (!q->head)
            q->tail = NULL;
        q->completed++;
        free(t);
        pthread_cond_broadcast(&changed);
    }
    standin_unlock();
    return NULL;
}

struct queue *standin_queue_new(int device) {
    struct queue *q = calloc(1, sizeof *q);
    q->id = next_queue_id++;
    q->device = device;
    q->live = 1;
    pthread_cond_init(&q->work, NULL);
    if (queues_len == queues_cap) {
        queues_cap = queues_cap ? 2 * queues_cap : 64;
        queues = realloc(queues, queues_cap * sizeof *queues);
    }
    queues[queues_len++] = q;
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attr, worker, q);
    pthread_attr_destroy(&attr);
    return q;
}

void standin_enqueue(struct queue *q, struct task task) {
    struct task *t = malloc(sizeof *t);
    *t = task;
    t->next = NULL;
    t->tag = current_tag;
    if (q->tail)
        q->tail->next = t;
    else
        q->head = t;
    q->tail = t;
    q->enqueued++;
    pthread_cond_signal(&q->work);
}

struct drain_wait {
    struct queue *queue;
    uint64_t target;
};
static int drained(void *arg) {
    struct drain_wait *w = arg;
    return w->queue->completed >= w->target;
}

int standin_drain(struct queue *q, int64_t timeout_ms, int timeout_code) {
    struct drain_wait w = {q, q->enqueued};
    char what[96];
    snprintf(what, sizeof what, "a synchronize of queue %llu", (unsigned long long)q->id);
    if (wait_for(drained, &w, timeout_ms, what))
        return timeout_code;
    int error = q->error;
    if (error)
        snprintf(recent_error, sizeof recent_error, "%s on this queue did not complete (it waited past its timeout)",
                 q->failed_api);
    q->error = 0;
    return error;
}

void standin_stop(struct queue *q) {
    q->live = 0;
    q->stopping = 1;
    pthread_cond_signal(&q->work);
}

struct flag *standin_flag(const char *what) {
    struct flag *f = calloc(1, sizeof *f);
    f->what = what;
    return f;
}

int standin_current_device(void) { return current_device; }

int standin_device_open(int device) { return device >= 0 && device < MAX_DEVICES && device_refs[device] > 0; }

/* ---- ACL: devices ----------------------------------------------------------------- */

static int initialized;

EXPORT aclError aclInit(const char *configPath) {
    (void)configPath;
    if (standin_fail("aclInit"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    int again = initialized;
    initialized = 1;
    standin_unlock();
    return again ? ACL_ERROR_REPEAT_INITIALIZE : 0;
}

EXPORT aclError aclFinalize(void) { return 0; }

EXPORT const char *aclGetRecentErrMsg(void) { return recent_error[0] ? recent_error : NULL; }

EXPORT aclError aclrtSetDevice(int32_t deviceId) {
    if (standin_fail("aclrtSetDevice"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (deviceId < 0 || deviceId >= MAX_DEVICES)
        return ACL_ERROR_RT_PARAM_INVALID;
    standin_lock();
    device_refs[deviceId]++;
    if (!default_streams[deviceId])
        default_streams[deviceId] = standin_queue_new(deviceId);
    standin_unlock();
    current_device = deviceId;
    return 0;
}

EXPORT aclError aclrtResetDevice(int32_t deviceId) {
    if (standin_fail("aclrtResetDevice"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    int ok = deviceId >= 0 && deviceId < MAX_DEVICES && device_refs[deviceId] > 0;
    if (ok)
        device_refs[deviceId]--;
    standin_unlock();
    if (ok && current_device == deviceId)
        current_device = -1;
    return ok ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}

/* The stream a call names on the current device: NULL is the default stream. Lock held. */
static struct queue *stream_of(aclrtStream stream, aclError *error) {
    if (current_device < 0) {
        *error = ACL_ERROR_RT_CONTEXT_NULL;
        return NULL;
    }
    struct queue *q = stream ? standin_find(K_STREAM, stream) : default_streams[current_device];
    if (!q) {
        *error = ACL_ERROR_RT_PARAM_INVALID;
        return NULL;
    }
    if (q->device != current_device) {
        snprintf(recent_error, sizeof recent_error, "stream %llu belongs to device %d, not the current device %d",
                 (unsigned long long)q->id, q->device, current_device);
        *error = ACL_ERROR_RT_STREAM_CONTEXT;
        return NULL;
    }
    return q;
}

EXPORT aclError aclrtSynchronizeDevice(void) {
    if (standin_fail("aclrtSynchronizeDevice"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (current_device < 0)
        return ACL_ERROR_RT_CONTEXT_NULL;
    standin_lock();
    int error = 0;
    for (size_t i = 0; i < queues_len; i++)
        if (queues[i]->device == current_device) {
            int e = standin_drain(queues[i], -1, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
            if (e && !error)
                error = e;
        }
    standin_unlock();
    return error;
}

/* ---- ACL: streams ----------------------------------------------------------------- */

EXPORT aclError aclrtCreateStream(aclrtStream *stream) {
    if (standin_fail("aclrtCreateStream"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (!stream)
        return ACL_ERROR_INVALID_PARAM;
    if (current_device < 0)
        return ACL_ERROR_RT_CONTEXT_NULL;
    standin_lock();
    struct queue *q = standin_queue_new(current_device);
    standin_register(K_STREAM, q);
    standin_unlock();
    *stream = q;
    return 0;
}

/* Waits for the stream's outstanding tasks, then destroys it. */
EXPORT aclError aclrtDestroyStream(aclrtStream stream) {
    if (standin_fail("aclrtDestroyStream"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    aclError error = 0;
    standin_lock();
    struct queue *q = stream ? stream_of(stream, &error) : NULL;
    if (q) {
        standin_drain(q, -1, 0);
        standin_unregister(K_STREAM, q);
        standin_stop(q);
    } else if (!error)
        error = ACL_ERROR_RT_PARAM_INVALID;
    standin_unlock();
    return error;
}

static aclError synchronize_stream(const char *api, aclrtStream stream, int64_t ms) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    aclError error = 0;
    standin_lock();
    struct queue *q = stream_of(stream, &error);
    if (q)
        error = standin_drain(q, ms, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    standin_unlock();
    return error;
}

EXPORT aclError aclrtSynchronizeStream(aclrtStream stream) {
    return synchronize_stream("aclrtSynchronizeStream", stream, -1);
}

EXPORT aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    return synchronize_stream("aclrtSynchronizeStreamWithTimeout", stream, timeout < 0 ? -1 : timeout);
}

/* ---- ACL: events ------------------------------------------------------------------ */

static aclError create_event(const char *api, aclrtEvent *event, int sync_kind, uint32_t flags) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (!event)
        return ACL_ERROR_INVALID_PARAM;
    struct event *e = calloc(1, sizeof *e);
    e->sync_kind = sync_kind;
    e->flags = flags;
    e->live = 1;
    standin_lock();
    standin_register(K_EVENT, e);
    standin_unlock();
    *event = e;
    return 0;
}

EXPORT aclError aclrtCreateEvent(aclrtEvent *event) {
    return create_event("aclrtCreateEvent", event, 1, ACL_EVENT_SYNC);
}

EXPORT aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
    return create_event("aclrtCreateEventWithFlag", event, 1, flag);
}

/* "Reused naturally": a wait binds to the records issued before it. */
EXPORT aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag) {
    return create_event("aclrtCreateEventExWithFlag", event, 0, flag);
}

/* Does not block; tasks already queued on the event still run. */
EXPORT aclError aclrtDestroyEvent(aclrtEvent event) {
    if (standin_fail("aclrtDestroyEvent"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    struct event *e = standin_find(K_EVENT, event);
    if (e) {
        e->live = 0;
        standin_unregister(K_EVENT, e);
    }
    standin_unlock();
    return e ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}

/* Enqueues an event task on `stream`. Lock not held. */
static aclError event_task(const char *api, aclrtEvent event, aclrtStream stream, enum task_kind kind,
                           int64_t timeout_ms) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    aclError error = 0;
    standin_lock();
    struct event *e = standin_find(K_EVENT, event);
    struct queue *q = stream_of(stream, &error);
    if (!e && !error)
        error = ACL_ERROR_RT_PARAM_INVALID;
    if (!error && kind == T_WAIT_EVENT && !(e->flags & ACL_EVENT_SYNC)) {
        snprintf(recent_error, sizeof recent_error, "%s: the event was created without ACL_EVENT_SYNC", api);
        error = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    if (!error && kind == T_RESET_EVENT && !e->sync_kind) {
        snprintf(recent_error, sizeof recent_error, "%s: events of aclrtCreateEventExWithFlag cannot be reset", api);
        error = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    if (!error) {
        struct task t = {.kind = kind, .api = api, .event = e, .timeout_ms = timeout_ms};
        if (kind == T_RECORD_EVENT)
            t.generation = ++e->issued;
        else if (kind == T_WAIT_EVENT)
            t.generation = e->issued;
        standin_enqueue(q, t);
    }
    standin_unlock();
    return error;
}

EXPORT aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    return event_task("aclrtRecordEvent", event, stream, T_RECORD_EVENT, -1);
}

/* Without a timeout of its own, aclrtSetOpWaitTimeout's (seconds, 0 = none) applies. */
EXPORT aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    standin_lock();
    int64_t ms = op_wait_timeout_s ? (int64_t)op_wait_timeout_s * 1000 : -1;
    standin_unlock();
    return event_task("aclrtStreamWaitEvent", event, stream, T_WAIT_EVENT, ms);
}

/* Seconds, 0 = never time out (the current documentation). */
EXPORT aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout) {
    if (timeout < 0)
        return ACL_ERROR_INVALID_PARAM;
    return event_task("aclrtStreamWaitEventWithTimeout", event, stream, T_WAIT_EVENT,
                      timeout ? (int64_t)timeout * 1000 : -1);
}

/* `stream` is the waiting stream: the reset runs in its order. */
EXPORT aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
    return event_task("aclrtResetEvent", event, stream, T_RESET_EVENT, -1);
}

static int records_done(void *arg) { return generation_done(arg); }

static aclError synchronize_event(const char *api, aclrtEvent event, int64_t ms) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    struct event *e = standin_find(K_EVENT, event);
    aclError error = ACL_ERROR_RT_PARAM_INVALID;
    if (e) {
        /* The latest record issued so far, of either kind. */
        struct generation_wait w = {e, e->issued};
        error = wait_for(records_done, &w, ms, api) ? ACL_ERROR_RT_EVENT_SYNC_TIMEOUT : 0;
    }
    standin_unlock();
    return error;
}

EXPORT aclError aclrtSynchronizeEvent(aclrtEvent event) { return synchronize_event("aclrtSynchronizeEvent", event, -1); }

EXPORT aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
    return synchronize_event("aclrtSynchronizeEventWithTimeout", event, timeout < 0 ? -1 : timeout);
}

EXPORT aclError aclrtQueryEventStatus(aclrtEvent event, int *status) {
    if (standin_fail("aclrtQueryEventStatus"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    struct event *e = standin_find(K_EVENT, event);
    if (e && status) {
        struct generation_wait w = {e, e->issued};
        *status = generation_done(&w); /* 1: ACL_EVENT_RECORDED_STATUS_COMPLETE */
    }
    standin_unlock();
    return e && status ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}

EXPORT aclError aclrtQueryEventWaitStatus(aclrtEvent event, int *status) {
    if (standin_fail("aclrtQueryEventWaitStatus"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    struct event *e = standin_find(K_EVENT, event);
    int ok = e && status && e->sync_kind;
    if (ok)
        *status = e->set ? 0 : 1; /* ACL_EVENT_WAIT_STATUS_COMPLETE / NOT_READY */
    standin_unlock();
    return ok ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}

EXPORT aclError aclrtEventElapsedTime(float *ms, aclrtEvent start, aclrtEvent end) {
    if (standin_fail("aclrtEventElapsedTime"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    int ok = ms && standin_find(K_EVENT, start) && standin_find(K_EVENT, end);
    standin_unlock();
    if (ok)
        *ms = 0;
    return ok ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}

EXPORT aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
    if (standin_fail("aclrtSetOpWaitTimeout"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    op_wait_timeout_s = timeout;
    standin_unlock();
    return 0;
}

/* ---- ACL: notifies ---------------------------------------------------------------- */

EXPORT aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag) {
    (void)flag;
    if (standin_fail("aclrtCreateNotify"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (!notify)
        return ACL_ERROR_INVALID_PARAM;
    struct notify *n = calloc(1, sizeof *n);
    n->flag.what = "an aclrtNotify";
    n->live = 1;
    standin_lock();
    standin_register(K_NOTIFY, n);
    standin_unlock();
    *notify = n;
    return 0;
}

EXPORT aclError aclrtDestroyNotify(aclrtNotify notify) {
    if (standin_fail("aclrtDestroyNotify"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    struct notify *n = standin_find(K_NOTIFY, notify);
    if (n) {
        n->live = 0;
        standin_unregister(K_NOTIFY, n);
    }
    standin_unlock();
    return n ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}

static aclError notify_task(const char *api, aclrtNotify notify, aclrtStream stream, enum task_kind kind,
                            int64_t timeout_ms) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    aclError error = 0;
    standin_lock();
    struct notify *n = standin_find(K_NOTIFY, notify);
    struct queue *q = stream_of(stream, &error);
    if (!n && !error)
        error = ACL_ERROR_RT_PARAM_INVALID;
    if (!error)
        standin_enqueue(q, (struct task){.kind = kind, .api = api, .flag = &n->flag, .timeout_ms = timeout_ms});
    standin_unlock();
    return error;
}

EXPORT aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream) {
    return notify_task("aclrtRecordNotify", notify, stream, T_SET_FLAG, -1);
}

/* Waits until recorded, then resets: a record is consumed by one wait. Seconds, 0 = forever. */
EXPORT aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout) {
    return notify_task("aclrtWaitAndResetNotify", notify, stream, T_WAIT_FLAG,
                       timeout ? (int64_t)timeout * 1000 : -1);
}

/* ---- ACL: memory ------------------------------------------------------------------ */

static aclError allocate(const char *api, void **ptr, size_t size, int place) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    if (!ptr || !size)
        return ACL_ERROR_INVALID_PARAM;
    if (current_device < 0)
        return ACL_ERROR_RT_CONTEXT_NULL;
    void *memory = calloc(1, size);
    if (!memory)
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    standin_memory_add(memory, size, place, 1);
    standin_unlock();
    *ptr = memory;
    return 0;
}

EXPORT aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    (void)policy;
    return allocate("aclrtMalloc", devPtr, size, 0);
}

EXPORT aclError aclrtMallocHost(void **hostPtr, size_t size) { return allocate("aclrtMallocHost", hostPtr, size, 1); }

static aclError release(const char *api, void *ptr, int place) {
    if (standin_fail(api))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    struct region *r = region_of(ptr, 1);
    int ok = r && r->base == ptr && r->owned && r->place == place;
    if (ok)
        *r = regions[--regions_len];
    standin_unlock();
    if (!ok)
        return ACL_ERROR_RT_PARAM_INVALID;
    free(ptr);
    return 0;
}

EXPORT aclError aclrtFree(void *devPtr) { return release("aclrtFree", devPtr, 0); }
EXPORT aclError aclrtFreeHost(void *hostPtr) { return release("aclrtFreeHost", hostPtr, 1); }

/* Whether a copy of `count` bytes of `kind` between these addresses is one the runtime
 * accepts: device sides in device memory, host sides outside it. Lock held. */
static int copy_ok(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
    if (count > destMax || (int)kind < 0 || kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
        return 0;
    int src_device = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    int dst_device = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    int src_in_device = standin_memory_holds(src, count, 0);
    int dst_in_device = standin_memory_holds(dst, count, 0);
    return src_device == src_in_device && dst_device == dst_in_device;
}

EXPORT aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
    if (standin_fail("aclrtMemcpy"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    standin_lock();
    int ok = copy_ok(dst, destMax, src, count, kind);
    standin_unlock();
    if (!ok)
        return ACL_ERROR_RT_PARAM_INVALID;
    memmove(dst, src, count);
    return 0;
}

EXPORT aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                                 aclrtStream stream) {
    if (standin_fail("aclrtMemcpyAsync"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    aclError error = 0;
    standin_lock();
    struct queue *q = stream_of(stream, &error);
    if (!error && !copy_ok(dst, destMax, src, count, kind))
        error = ACL_ERROR_RT_PARAM_INVALID;
    if (!error)
        standin_enqueue(q, (struct task){.kind = T_COPY, .api = "aclrtMemcpyAsync", .dst = dst, .src = src,
                                         .len = count, .timeout_ms = -1});
    standin_unlock();
    return error;
}

EXPORT aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
    if (standin_fail("aclrtMemsetAsync"))
        return ACL_ERROR_RT_INTERNAL_ERROR;
    aclError error = 0;
    standin_lock();
    struct queue *q = stream_of(stream, &error);
    if (!error && (count > maxCount || !standin_memory_holds(devPtr, count, -1)))
        error = ACL_ERROR_RT_PARAM_INVALID;
    if (!error)
        standin_enqueue(q, (struct task){.kind = T_MEMSET, .api = "aclrtMemsetAsync", .dst = devPtr,
                                         .value = value, .len = count, .timeout_ms = -1});
    standin_unlock();
    return error;
}

/* ---- the report ------------------------------------------------------------------- */

/* Anomalies seen so far (lost signals, hangs), then what is still alive: streams,
 * events, notifies, communicators, allocations, devices set and not reset. */
EXPORT const char *acl_standin_report(void) {
    static char *report;
    standin_lock();
    size_t owned = 0;
    for (size_t i = 0; i < regions_len; i++)
        owned += regions[i].owned;
    int devices = 0;
    for (int d = 0; d < MAX_DEVICES; d++)
        devices += device_refs[d];
    char live[256];
    snprintf(live, sizeof live, "alive: %zu streams, %zu events, %zu notifies, %zu communicators, %zu allocations, %d devices set",
             registries[K_STREAM].len, registries[K_EVENT].len, registries[K_NOTIFY].len, registries[K_COMM].len,
             owned, devices);
    free(report);
    size_t len = anomalies_len + strlen(live) + 1;
    report = malloc(len);
    snprintf(report, len, "%s%s", anomalies ? anomalies : "", live);
    standin_unlock();
    return report;
}
