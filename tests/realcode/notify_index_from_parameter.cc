// expect: clean
// Expected: no finding: the notify index comes from the launch parameters, so it has no value here.
// Got: SG605 (the index taken as 1099511627776, past the thread's notifies).
#include "hcomm_primitives.h"
struct LaunchParam { uint32_t recordIdx; };
int Relay(HcclComm comm, const LaunchParam *param)
{
    ThreadHandle threads[2];
    if (HcclThreadAcquire(comm, COMM_ENGINE_AICPU, 2, 1, threads) != HCCL_SUCCESS) { return 1; }
    if (HcommThreadNotifyRecordOnThread(threads[0], threads[1], param->recordIdx) != HCCL_SUCCESS) { return 1; }
    if (HcommThreadNotifyWaitOnThread(threads[1], param->recordIdx, 10) != HCCL_SUCCESS) { return 1; }
    return 0;
}
