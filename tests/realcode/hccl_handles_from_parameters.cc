// expect: SG501
// Expected: SG501 (or SG502): both ranks wait for the peer's notify before recording their own — for every rank count.
// Got: nothing ("none of the files calls a synchronization API"): the thread and channel come from the parameters and
// every notify call is left out.
#include "hcomm_primitives.h"
int Handshake(ThreadHandle thread, ChannelHandle channel)
{
    if (HcommChannelNotifyWaitOnThread(thread, channel, 0, 1836) != HCCL_SUCCESS) { return 1; }
    if (HcommChannelNotifyRecordOnThread(thread, channel, 0) != HCCL_SUCCESS) { return 1; }
    return 0;
}
