// expect: SG301 (the worker's notify is set and never waited on; the thread from before may
// hold a record for the misplaced wait, so that wait is not called a hang)
// A post-sync on two HCCL threads the function receives: the main thread records
// notify 0 of the worker, but the worker's wait for the main thread's signal is issued
// on the main thread itself, so nothing ever records what it waits for.
#include "hcomm_primitives.h"
int PostSync(ThreadHandle mainThread, ThreadHandle worker)
{
    if (HcommThreadNotifyRecordOnThread(mainThread, worker, 0) != HCCL_SUCCESS) { return 1; }
    if (HcommThreadNotifyWaitOnThread(mainThread, 0, 1836) != HCCL_SUCCESS) { return 1; }
    return 0;
}
