// expect: SG304
// A pairwise exchange on a thread and channel the function receives: each rank writes
// its half into the partner's HCCL buffer at once and then signals it, without first
// waiting for the partner to say its buffer is free.
#include "hcomm_primitives.h"
int Exchange(HcclComm comm, ThreadHandle thread, ChannelHandle channel, void *local, uint64_t len)
{
    void *remote = nullptr;
    uint64_t size = 0;
    if (HcclChannelGetHcclBuffer(comm, channel, &remote, &size) != HCCL_SUCCESS) { return 1; }
    if (HcommWriteOnThread(thread, channel, remote, local, len) != HCCL_SUCCESS) { return 1; }
    if (HcommChannelNotifyRecordOnThread(thread, channel, 1) != HCCL_SUCCESS) { return 1; }
    if (HcommChannelNotifyWaitOnThread(thread, channel, 1, 1836) != HCCL_SUCCESS) { return 1; }
    return 0;
}
