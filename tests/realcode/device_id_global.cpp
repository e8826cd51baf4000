// expect: clean
// Expected: no finding. Got: SG001 "the device of aclrtSetDevice (1099511627776) has no value" (error).
#include "acl/acl.h"
int32_t deviceId_ = 0;
int main()
{
    if (aclrtSetDevice(deviceId_) != ACL_SUCCESS) { return 1; }
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) { return 1; }
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) { return 1; }
    (void)aclrtDestroyStream(stream);
    (void)aclrtResetDevice(deviceId_);
    return 0;
}
