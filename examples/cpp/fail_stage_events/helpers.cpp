// expect: SG107
#include "helpers.h"

int CreateStageStreams(StageStreams &ss)
{
    ACL_CHECK(aclrtCreateStream(&ss.compute));
    ACL_CHECK(aclrtCreateStream(&ss.comm));
    return 0;
}

int DestroyStageStreams(StageStreams &ss)
{
    ACL_CHECK(aclrtDestroyStream(ss.compute));
    ACL_CHECK(aclrtDestroyStream(ss.comm));
    return 0;
}

int LaunchStage(StageStreams &ss, uint8_t *act, uint8_t *grad, uint8_t *out, aclrtEvent &done)
{
    ACL_CHECK(aclrtCreateEventWithFlag(&done, ACL_EVENT_SYNC));
    backward<<<kBlockDim, nullptr, ss.compute>>>(act, grad);
    ACL_CHECK(aclrtRecordEvent(done, ss.compute));
    ACL_CHECK(aclrtStreamWaitEvent(ss.comm, done));
    ACL_CHECK(aclrtResetEvent(done, ss.comm));
    grad_scale<<<kBlockDim, nullptr, ss.comm>>>(grad, out);
    return 0;
}
