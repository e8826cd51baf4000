// expect: clean
// Expected: no error: each allocation's policy is a number, no constant the catalogue names, so the allocation
// (and the free of what it made) is left out with a note. Got: SG001 "expected a constant name" at the
// allocations and SG003 "unknown buffer" at the frees.
#include "acl/acl.h"
#define ACL_MEM_TYPE_HIGH_BAND_WIDTH 0x0100
int main()
{
    void *devPtr = nullptr;
    aclError ret = aclrtMalloc(&devPtr, 4096, (aclrtMemMallocPolicy)0xffff);
    if (ret != ACL_SUCCESS) { return 1; }
    (void)aclrtFree(devPtr);
    ret = aclrtMalloc(&devPtr, 4096, ACL_MEM_TYPE_HIGH_BAND_WIDTH);
    if (ret != ACL_SUCCESS) { return 1; }
    (void)aclrtFree(devPtr);
    return 0;
}
