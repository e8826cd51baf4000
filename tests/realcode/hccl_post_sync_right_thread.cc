// expect: clean
// The fixed post-sync: the worker waits for the main thread's signal on its own notify.
#include "hcomm_primitives.h"
int PostSync(ThreadHandle mainThread, ThreadHandle worker)
{
    if (HcommThreadNotifyRecordOnThread(mainThread, worker, 0) != HCCL_SUCCESS) { return 1; }
    if (HcommThreadNotifyWaitOnThread(worker, 0, 1836) != HCCL_SUCCESS) { return 1; }
    return 0;
}
