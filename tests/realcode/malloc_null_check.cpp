// expect: clean (the create whose handle nobody checks is reported only by the opt-in rule for creates)
// Expected: no SG701 on the allocations: each is checked by testing the pointer it leaves null on failure.
// Got: SG701 on both allocations.
#include "acl/acl.h"
class Process {
public:
    int Init(size_t size)
    {
        aclrtMalloc(&inputBuf_, size, ACL_MEM_MALLOC_HUGE_FIRST); // device memory for the input
        if (inputBuf_ == nullptr) {
            return 1;
        }
        void *host = nullptr;
        aclrtMallocHost(&host, size);
        if (!host) {
            return 1;
        }
        aclrtCreateStream(&stream_);
        if (aclrtMemcpyAsync(inputBuf_, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE, stream_) != ACL_SUCCESS) {
            return 1;
        }
        if (aclrtSynchronizeStream(stream_) != ACL_SUCCESS) {
            return 1;
        }
        (void)aclrtFreeHost(host);
        return 0;
    }

private:
    void *inputBuf_ = nullptr;
    aclrtStream stream_ = nullptr;
};
