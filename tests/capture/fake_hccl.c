/* A stand-in for libhccl.so: a communicator remembers the rank it was made for. */
#include "fake_acl.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t rank;
} FakeComm;

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo) { return 0; }
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm) {
    FakeComm *made = malloc(sizeof *made);
    made->rank = rank;
    *comm = made;
    return 0;
}
HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank) {
    *rank = ((FakeComm *)comm)->rank;
    return 0;
}
HcclResult HcclCommDestroy(HcclComm comm) {
    free(comm);
    return 0;
}

static uint64_t next_handle = 0x7000;
HcclResult HcclThreadAcquire(HcclComm comm, CommEngine engine, uint32_t threadNum, uint32_t notifyNumPerThread,
                             ThreadHandle *threads) {
    for (uint32_t i = 0; i < threadNum; i++) threads[i] = next_handle++;
    return 0;
}
HcclResult HcclChannelDescInit(HcclChannelDesc *descs, uint32_t num) {
    memset(descs, 0, num * sizeof *descs);
    for (uint32_t i = 0; i < num; i++) {
        descs[i].header.version = 1;
        descs[i].header.magicWord = 0x48434c44;
        descs[i].header.size = sizeof *descs;
    }
    return 0;
}
HcclResult HcclChannelAcquire(HcclComm comm, CommEngine engine, const HcclChannelDesc *channelDescs,
                              uint32_t channelNum, ChannelHandle *channels) {
    for (uint32_t i = 0; i < channelNum; i++) channels[i] = next_handle++;
    return 0;
}
HcclResult HcommChannelNotifyRecordOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t remoteNotifyIdx) {
    return 0;
}
HcclResult HcommChannelNotifyWaitOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t localNotifyIdx,
                                          uint32_t timeOut) {
    return 0;
}
HcclResult HcommThreadSynchronize(ThreadHandle thread) { return 0; }
