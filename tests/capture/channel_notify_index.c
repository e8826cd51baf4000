/* One rank of a two-process run (`channel_notify_index RANK [fixed]`): each rank
 * acquires a channel to the other with one notify, then records and waits on notify 1
 * of it, which does not exist (SG302). With `fixed`, the channels have two notifies;
 * with `uninitialized`, the descriptor skips HcclChannelDescInit (its header is zero). */
#include "fake_acl.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(HcclChannelDesc, notifyNum) == 344, "HcclChannelDesc as documented");

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    uint32_t rank = (uint32_t)atoi(argv[1]);
    const char *variant = argc > 2 ? argv[2] : "";
    int fixed = strcmp(variant, "fixed") == 0;
    HcclRootInfo root;
    HcclComm comm;
    ThreadHandle thread;
    ChannelHandle channel;
    HcclChannelDesc desc;
    memset(&root, 0, sizeof root);
    HcclCommInitRootInfo(2, &root, rank, &comm);
    HcclThreadAcquire(comm, COMM_ENGINE_CPU_TS, 1, 0, &thread);
    if (strcmp(variant, "uninitialized") == 0) {
        memset(&desc, 0, sizeof desc);
    } else {
        HcclChannelDescInit(&desc, 1);
    }
    desc.remoteRank = 1 - rank;
    desc.channelProtocol = COMM_PROTOCOL_HCCS;
    desc.notifyNum = fixed ? 2 : 1;
    HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, &desc, 1, &channel);
    HcommChannelNotifyRecordOnThread(thread, channel, 1);
    HcommChannelNotifyWaitOnThread(thread, channel, 1, 1836);
    HcommThreadSynchronize(thread);
    HcclCommDestroy(comm);
    return 0;
}
