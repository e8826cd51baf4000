// expect: clean
// Expected: no finding: the main thread's stream waits for the flag that the thread it starts writes, then both
// are synchronized, the thread joined, and everything destroyed. Got: SG502 "waits forever: no value write makes
// it true": the thread's body was not followed.
#include <thread>
#include "acl/acl.h"
#define CHECK(call) do { if ((call) != ACL_SUCCESS) { return 1; } } while (0)
static int Signal(aclrtStream stream, void *flag)
{
    CHECK(aclrtValueWrite(flag, 1, 0, stream));
    CHECK(aclrtSynchronizeStream(stream));
    return 0;
}
int main()
{
    aclrtStream waiter = nullptr;
    aclrtStream signaller = nullptr;
    void *flag = nullptr;
    CHECK(aclrtCreateStream(&waiter));
    CHECK(aclrtCreateStream(&signaller));
    CHECK(aclrtMalloc(&flag, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(flag, 8, 0, 8));
    CHECK(aclrtValueWait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, waiter));
    std::thread worker(Signal, signaller, flag);
    CHECK(aclrtSynchronizeStream(waiter));
    worker.join();
    CHECK(aclrtFree(flag));
    CHECK(aclrtDestroyStream(waiter));
    CHECK(aclrtDestroyStream(signaller));
    return 0;
}
