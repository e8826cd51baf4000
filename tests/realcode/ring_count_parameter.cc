// expect: clean
// Expected: no finding: with ringNum rings, rings 0..ringNum-2 report to the main ring on notify ringIndex and
// the last (main) ring waits for each. Got: SG301 "recorded once but nothing waits on it": the loop's unknown
// bound and the test `ringIndex != ringNum - 1` were separate choices, so a path ran one slave iteration and no
// main ring, which no ring count gives.
#include "hcomm_primitives.h"
int ScatterRings(ThreadHandle mainThread, ThreadHandle *slaveThreads, uint32_t ringNum)
{
    for (uint32_t ringIndex = 0; ringIndex < ringNum; ringIndex++) {
        if (ringIndex != ringNum - 1) {
            if (HcommThreadNotifyRecordOnThread(slaveThreads[ringIndex], mainThread, ringIndex) != HCCL_SUCCESS) {
                return 1;
            }
        } else {
            for (uint32_t ring = 0; ring < ringNum - 1; ring++) {
                if (HcommThreadNotifyWaitOnThread(mainThread, ring, 1836) != HCCL_SUCCESS) {
                    return 1;
                }
            }
        }
    }
    return 0;
}
