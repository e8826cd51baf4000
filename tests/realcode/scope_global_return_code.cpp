// expect: SG604 (the free while the copy may still be queued)
// Expected: SG604 alone and inside the folder. Got inside the folder: nothing, because the global `ret` was
// read as the method `ret()` of a generated message class another file defines, so every `ret != ACL_SUCCESS`
// held and the walk took the first error return.
#include "acl/acl.h"
aclError ret = ACL_SUCCESS;
int main()
{
    aclrtStream stream = nullptr;
    ret = aclrtCreateStream(&stream);
    if (ret != ACL_SUCCESS) { return 1; }
    void *dev = nullptr;
    void *host = nullptr;
    ret = aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    if (ret != ACL_SUCCESS) { return 1; }
    ret = aclrtMallocHost(&host, 4096);
    if (ret != ACL_SUCCESS) { return 1; }
    ret = aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream);
    if (ret != ACL_SUCCESS) { return 1; }
    (void)aclrtFreeHost(host);
    (void)aclrtSynchronizeStream(stream);
    (void)aclrtFree(dev);
    (void)aclrtDestroyStream(stream);
    return 0;
}
