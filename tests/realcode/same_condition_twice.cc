// expect: clean
// Expected: no finding: the batch starts and ends under the same condition, in the same build. Got: SG307 "batch
// is never ended": each test of the condition (and each #ifndef) was a choice of its own, so a path started the
// batch and skipped its end.
#include "hcomm_primitives.h"
bool IsHugeData(uint64_t bytes);
int RunLoop(const char *algTag, ThreadHandle thread, uint64_t bytes)
{
#ifndef AICPU_COMPILE
    if (!IsHugeData(bytes)) {
        if (HcommBatchModeStart(algTag) != HCCL_SUCCESS) {
            return 1;
        }
    }
#endif
    if (HcommThreadNotifyRecordOnThread(thread, thread, 0) != HCCL_SUCCESS) {
        return 1;
    }
    if (HcommThreadNotifyWaitOnThread(thread, 0, 1836) != HCCL_SUCCESS) {
        return 1;
    }
#ifndef AICPU_COMPILE
    if (!IsHugeData(bytes)) {
        if (HcommBatchModeEnd(algTag) != HCCL_SUCCESS) {
            return 1;
        }
    }
#endif
    return 0;
}
