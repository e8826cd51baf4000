// expect: SG604 (the `case 1` arm frees the buffer while the memset may still be queued), SG701 (the synchronizes' codes are discarded)
// A `switch` on a value the reader does not know is read case by case: its arms were
// dropped before, so the free without a synchronize was never seen.
#include "acl/acl.h"

void Clear(int mode)
{
    aclrtStream stream;
    aclrtCreateStream(&stream);
    void *buffer = nullptr;
    aclrtMalloc(&buffer, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemsetAsync(buffer, 4096, 0, 4096, stream);
    switch (mode) {
        case 0:
            aclrtSynchronizeStream(stream);
            aclrtFree(buffer);
            break;
        case 1:
            aclrtFree(buffer);
            aclrtSynchronizeStream(stream);
            break;
        default:
            aclrtSynchronizeStream(stream);
            aclrtFree(buffer);
            break;
    }
    aclrtDestroyStream(stream);
}
