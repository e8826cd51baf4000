// expect: SG107
/*
 * Training loop: each step runs one stage (helpers.cpp) and waits for the comm stream.
 * BUG: LaunchStage creates a new event every step and hands it to the caller, but the
 * loop never destroys it: one event leaks per step until the device runs out.
 */
#include "helpers.h"

#define TRAIN_STEPS 3

int main()
{
    ACL_CHECK(aclInit(nullptr));
    ACL_CHECK(aclrtSetDevice(0));

    StageStreams ss;
    if (CreateStageStreams(ss) != 0) {
        return -1;
    }
    uint8_t *act = nullptr;
    uint8_t *grad = nullptr;
    uint8_t *out = nullptr;
    ACL_CHECK(aclrtMalloc((void **)&act, kGradBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_CHECK(aclrtMalloc((void **)&grad, kGradBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_CHECK(aclrtMalloc((void **)&out, kGradBytes, ACL_MEM_MALLOC_HUGE_FIRST));

    for (int step = 0; step < TRAIN_STEPS; ++step) {
        aclrtEvent stageDone = nullptr;
        if (LaunchStage(ss, act, grad, out, stageDone) != 0) {
            return -1;
        }
        ACL_CHECK(aclrtSynchronizeStream(ss.comm));
        printf("step %d done\n", step);
    }

    ACL_CHECK(aclrtFree(act));
    ACL_CHECK(aclrtFree(grad));
    ACL_CHECK(aclrtFree(out));
    (void)DestroyStageStreams(ss);
    ACL_CHECK(aclrtResetDevice(0));
    ACL_CHECK(aclFinalize());
    return 0;
}
