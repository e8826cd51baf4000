// expect: SG301 (the slaves report on notify ringIndex + 1; the main ring waits on notify ring)
// Expected: the off-by-one between the slave rings' records and the main ring's waits. Got: nothing: the ring
// count stayed 0 after GetRingNum(&ringNum), which the walk does not follow, so the loop never ran.
#include "hcomm_primitives.h"
HcclResult GetRingNum(uint32_t *ringNum);
int ScatterRings(ThreadHandle mainThread, ThreadHandle *slaveThreads)
{
    uint32_t ringNum = 0;
    if (GetRingNum(&ringNum) != HCCL_SUCCESS) {
        return 1;
    }
    for (uint32_t ringIndex = 0; ringIndex < ringNum; ringIndex++) {
        if (ringIndex != ringNum - 1) {
            if (HcommThreadNotifyRecordOnThread(slaveThreads[ringIndex], mainThread, ringIndex + 1) != HCCL_SUCCESS) {
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
