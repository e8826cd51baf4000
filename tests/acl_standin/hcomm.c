/* The stand-in libhcomm.so: channels, HCCL threads and the *OnThread data plane. A thread
 * is a queue (its own, or the stream of HcclThreadAcquireWithStream) with notifyNum
 * notifies; a channel from rank r to rank p records into p's notifies for r and waits on
 * r's notifies from p. Notifies are binary: a record sets, a wait blocks until set and
 * consumes it. See standin.h. */
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(HcclChannelDesc) == 496, "HcclChannelDesc as hccl_res.h lays it out");

#define CHANNEL_MAGIC_WORD 0x0f0f0f0fu
#define MAX_CHANNEL_NOTIFIES 64

/* Channel notifies by (group, receiving rank, sending rank, index). */
struct channel_flag {
    struct channel_flag *next;
    uint64_t group;
    uint32_t to, from, index;
    struct flag *flag;
};
static struct channel_flag *channel_flags;

static struct flag *channel_flag(uint64_t group, uint32_t to, uint32_t from, uint32_t index) {
    for (struct channel_flag *f = channel_flags; f; f = f->next)
        if (f->group == group && f->to == to && f->from == from && f->index == index)
            return f->flag;
    struct channel_flag *f = calloc(1, sizeof *f);
    *f = (struct channel_flag){channel_flags, group, to, from, index, standin_flag(NULL)};
    char *what = malloc(96);
    snprintf(what, 96, "channel notify %u of rank %u from rank %u", index, to, from);
    f->flag->what = what;
    channel_flags = f;
    return f->flag;
}

static struct thread *new_thread(struct comm *c, struct queue *queue, uint32_t notify_num) {
    struct thread *t = calloc(1, sizeof *t);
    t->comm = c;
    t->queue = queue ? queue : standin_queue_new(c->device);
    t->notify_num = notify_num;
    t->notifies = calloc(notify_num ? notify_num : 1, sizeof *t->notifies);
    for (uint32_t i = 0; i < notify_num; i++) {
        char *what = malloc(64);
        snprintf(what, 64, "thread notify %u", i);
        t->notifies[i] = standin_flag(what);
    }
    standin_register(K_THREAD, t);
    return t;
}

/* The engines whose threads exist on these chips (CPU_TS, AICPU_TS). */
EXPORT HcclResult HcclThreadAcquire(HcclComm comm, CommEngine engine, uint32_t threadNum, uint32_t notifyNumPerThread,
                                    ThreadHandle *threads) {
    if (standin_fail("HcclThreadAcquire"))
        return HCCL_E_INTERNAL;
    if (!threads || !threadNum || notifyNumPerThread > 65535)
        return HCCL_E_PARA;
    if (engine != COMM_ENGINE_CPU_TS && engine != COMM_ENGINE_AICPU_TS)
        return HCCL_E_NOT_SUPPORT;
    standin_lock();
    struct comm *c = standin_find(K_COMM, comm);
    if (c)
        for (uint32_t i = 0; i < threadNum; i++)
            threads[i] = (ThreadHandle)(uintptr_t)new_thread(c, NULL, notifyNumPerThread);
    standin_unlock();
    return c ? 0 : HCCL_E_PARA;
}

/* Only COMM_ENGINE_CPU, CPU_TS and CCU (5); the thread runs on `stream`. */
EXPORT HcclResult HcclThreadAcquireWithStream(HcclComm comm, CommEngine engine, aclrtStream stream, uint32_t notifyNum,
                                              ThreadHandle *thread) {
    if (standin_fail("HcclThreadAcquireWithStream"))
        return HCCL_E_INTERNAL;
    if (!thread || notifyNum > 65535)
        return HCCL_E_PARA;
    if (engine != COMM_ENGINE_CPU && engine != COMM_ENGINE_CPU_TS && (int)engine != 5)
        return HCCL_E_NOT_SUPPORT;
    standin_lock();
    struct comm *c = standin_find(K_COMM, comm);
    struct queue *q = stream ? standin_find(K_STREAM, stream) : NULL;
    int ok = c && q && q->device == c->device;
    if (ok)
        *thread = (ThreadHandle)(uintptr_t)new_thread(c, q, notifyNum);
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

EXPORT HcclResult HcclChannelAcquire(HcclComm comm, CommEngine engine, const HcclChannelDesc *descs,
                                     uint32_t channelNum, ChannelHandle *channels) {
    (void)engine;
    if (standin_fail("HcclChannelAcquire"))
        return HCCL_E_INTERNAL;
    if (!descs || !channels || !channelNum || channelNum > 1024 * 1024)
        return HCCL_E_PARA;
    standin_lock();
    struct comm *c = standin_find(K_COMM, comm);
    HcclResult result = c ? 0 : HCCL_E_PARA;
    for (uint32_t i = 0; i < channelNum && !result; i++) {
        const HcclChannelDesc *d = &descs[i];
        if (d->header.magicWord != CHANNEL_MAGIC_WORD || d->header.size != sizeof *d || d->remoteRank >= c->ranks ||
            d->remoteRank == c->rank || d->notifyNum > MAX_CHANNEL_NOTIFIES) {
            result = HCCL_E_PARA;
            break;
        }
        struct channel *ch = calloc(1, sizeof *ch);
        *ch = (struct channel){c, d->remoteRank, d->notifyNum};
        standin_register(K_CHANNEL, ch);
        channels[i] = (ChannelHandle)(uintptr_t)ch;
    }
    standin_unlock();
    return result;
}

/* The peer's HCCL buffer. */
EXPORT HcclResult HcclChannelGetHcclBuffer(HcclComm comm, ChannelHandle channel, void **buffer, uint64_t *size) {
    if (standin_fail("HcclChannelGetHcclBuffer"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct channel *ch = standin_find(K_CHANNEL, (void *)(uintptr_t)channel);
    int ok = ch && buffer && size && ch->comm == (struct comm *)comm;
    if (ok) {
        struct comm *peer = ch->comm->members[ch->remote];
        *buffer = peer->buffer;
        *size = peer->buffer_size;
    }
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

/* Lock held. */
static struct thread *thread_of(ThreadHandle handle) { return standin_find(K_THREAD, (void *)(uintptr_t)handle); }
static struct channel *channel_of(ChannelHandle handle) { return standin_find(K_CHANNEL, (void *)(uintptr_t)handle); }

/* Timeouts of the notify waits: seconds, 0 = forever. */
static int64_t wait_ms(uint32_t seconds) { return seconds ? (int64_t)seconds * 1000 : -1; }

EXPORT int32_t HcommChannelNotifyRecordOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t remoteNotifyIdx) {
    if (standin_fail("HcommChannelNotifyRecordOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct thread *t = thread_of(thread);
    struct channel *ch = channel_of(channel);
    int ok = t && ch && remoteNotifyIdx < ch->notify_num;
    if (ok)
        standin_enqueue(t->queue, (struct task){.kind = T_SET_FLAG, .api = "HcommChannelNotifyRecordOnThread",
                                                .flag = channel_flag(ch->comm->group, ch->remote, ch->comm->rank,
                                                                     remoteNotifyIdx),
                                                .timeout_ms = -1});
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

EXPORT int32_t HcommChannelNotifyWaitOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t localNotifyIdx,
                                              uint32_t timeOut) {
    if (standin_fail("HcommChannelNotifyWaitOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct thread *t = thread_of(thread);
    struct channel *ch = channel_of(channel);
    int ok = t && ch && localNotifyIdx < ch->notify_num;
    if (ok)
        standin_enqueue(t->queue, (struct task){.kind = T_WAIT_FLAG, .api = "HcommChannelNotifyWaitOnThread",
                                                .flag = channel_flag(ch->comm->group, ch->comm->rank, ch->remote,
                                                                     localNotifyIdx),
                                                .timeout_ms = wait_ms(timeOut)});
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

EXPORT int32_t HcommThreadNotifyRecordOnThread(ThreadHandle thread, ThreadHandle dstThread, uint32_t dstNotifyIdx) {
    if (standin_fail("HcommThreadNotifyRecordOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct thread *t = thread_of(thread), *dst = thread_of(dstThread);
    int ok = t && dst && dstNotifyIdx < dst->notify_num;
    if (ok)
        standin_enqueue(t->queue, (struct task){.kind = T_SET_FLAG, .api = "HcommThreadNotifyRecordOnThread",
                                                .flag = dst->notifies[dstNotifyIdx], .timeout_ms = -1});
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

EXPORT int32_t HcommThreadNotifyWaitOnThread(ThreadHandle thread, uint32_t notifyIdx, uint32_t timeOut) {
    if (standin_fail("HcommThreadNotifyWaitOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct thread *t = thread_of(thread);
    int ok = t && notifyIdx < t->notify_num;
    if (ok)
        standin_enqueue(t->queue, (struct task){.kind = T_WAIT_FLAG, .api = "HcommThreadNotifyWaitOnThread",
                                                .flag = t->notifies[notifyIdx], .timeout_ms = wait_ms(timeOut)});
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

/* A copy on `thread`: both sides in device memory (HCCL buffers or aclrtMalloc'd);
 * `notify` (may be NULL) is set once the bytes are there. */
static int32_t copy_on_thread(const char *api, ThreadHandle thread, void *dst, const void *src, uint64_t len,
                              struct flag *notify) {
    struct thread *t = thread_of(thread);
    int ok = t && standin_memory_holds(dst, len, 0) && standin_memory_holds(src, len, 0);
    if (ok)
        standin_enqueue(t->queue, (struct task){.kind = T_COPY, .api = api, .dst = dst, .src = src, .len = len,
                                                .flag = notify, .timeout_ms = -1});
    return ok ? 0 : HCCL_E_PARA;
}

EXPORT int32_t HcommWriteOnThread(ThreadHandle thread, ChannelHandle channel, void *dst, const void *src, uint64_t len) {
    if (standin_fail("HcommWriteOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct channel *ch = channel_of(channel);
    int32_t result = ch ? copy_on_thread("HcommWriteOnThread", thread, dst, src, len, NULL) : HCCL_E_PARA;
    standin_unlock();
    return result;
}

EXPORT int32_t HcommWriteWithNotifyOnThread(ThreadHandle thread, ChannelHandle channel, void *dst, const void *src,
                                            uint64_t len, uint32_t remoteNotifyIdx) {
    if (standin_fail("HcommWriteWithNotifyOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct channel *ch = channel_of(channel);
    int32_t result = HCCL_E_PARA;
    if (ch && remoteNotifyIdx < ch->notify_num)
        result = copy_on_thread("HcommWriteWithNotifyOnThread", thread, dst, src, len,
                                channel_flag(ch->comm->group, ch->remote, ch->comm->rank, remoteNotifyIdx));
    standin_unlock();
    return result;
}

EXPORT int32_t HcommReadOnThread(ThreadHandle thread, ChannelHandle channel, void *dst, const void *src, uint64_t len) {
    if (standin_fail("HcommReadOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct channel *ch = channel_of(channel);
    int32_t result = ch ? copy_on_thread("HcommReadOnThread", thread, dst, src, len, NULL) : HCCL_E_PARA;
    standin_unlock();
    return result;
}

EXPORT int32_t HcommLocalCopyOnThread(ThreadHandle thread, void *dst, const void *src, uint64_t len) {
    if (standin_fail("HcommLocalCopyOnThread"))
        return HCCL_E_INTERNAL;
    standin_lock();
    int32_t result = copy_on_thread("HcommLocalCopyOnThread", thread, dst, src, len, NULL);
    standin_unlock();
    return result;
}

static int32_t fence(const char *api, ThreadHandle thread, int with_channel, ChannelHandle channel) {
    if (standin_fail(api))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct thread *t = thread_of(thread);
    int ok = t && (!with_channel || channel_of(channel));
    if (ok)
        standin_enqueue(t->queue, (struct task){.kind = T_NOP, .api = api, .timeout_ms = -1});
    standin_unlock();
    return ok ? 0 : HCCL_E_PARA;
}

EXPORT int32_t HcommChannelFenceOnThread(ThreadHandle thread, ChannelHandle channel) {
    return fence("HcommChannelFenceOnThread", thread, 1, channel);
}

EXPORT int32_t HcommFenceOnThread(ThreadHandle thread) { return fence("HcommFenceOnThread", thread, 0, 0); }

/* Blocks until everything issued to the thread has run. */
EXPORT HcclResult HcommThreadSynchronize(ThreadHandle thread) {
    if (standin_fail("HcommThreadSynchronize"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct thread *t = thread_of(thread);
    int result = t ? standin_drain(t->queue, -1, HCCL_E_TIMEOUT) : HCCL_E_PARA;
    standin_unlock();
    return result ? (t ? HCCL_E_TIMEOUT : HCCL_E_PARA) : 0;
}

/* Only the *WithDefaultTimeout waits use it, and the backend issues none. */
EXPORT int32_t HcommSetNotifyWaitTimeOut(float timeOut) {
    if (standin_fail("HcommSetNotifyWaitTimeOut"))
        return HCCL_E_INTERNAL;
    return timeOut >= 0 ? 0 : HCCL_E_PARA;
}
