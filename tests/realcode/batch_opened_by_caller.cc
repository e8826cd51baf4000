// expect: clean
// Expected: no finding: the kernel runs inside its caller's batch; it ends it to run eagerly and starts it again
// for the caller to end. Got: SG307 "batch is never ended" at the restart.
#include "hcomm_primitives.h"
int KernelRun(const char *algTag, ThreadHandle thread)
{
    // eager mode: what follows runs now
    if (HcommBatchModeEnd(algTag) != HCCL_SUCCESS) {
        return 1;
    }
    if (HcommThreadSynchronize(thread) != HCCL_SUCCESS) {
        return 1;
    }
    // back to batch mode, which the caller ends
    if (HcommBatchModeStart(algTag) != HCCL_SUCCESS) {
        return 1;
    }
    return 0;
}
