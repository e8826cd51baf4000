// expect: clean
// Expected: no finding: timing events are recorded again after the stream was synchronized and their timestamps read.
// Got: SG105 event-record-overwritten on both re-records.
#include "acl/acl.h"
void Work(aclrtStream s);
int Time(aclrtStream s)
{
    aclrtEvent start = nullptr, end = nullptr;
    float ms = 0;
    if (aclrtCreateEvent(&start) != ACL_SUCCESS || aclrtCreateEvent(&end) != ACL_SUCCESS) { return 1; }
    for (int round = 0; round < 2; ++round) {
        if (aclrtRecordEvent(start, s) != ACL_SUCCESS) { return 1; }
        Work(s);
        if (aclrtRecordEvent(end, s) != ACL_SUCCESS) { return 1; }
        if (aclrtSynchronizeStream(s) != ACL_SUCCESS) { return 1; }
        if (aclrtEventElapsedTime(&ms, start, end) != ACL_SUCCESS) { return 1; }
    }
    (void)aclrtDestroyEvent(start);
    (void)aclrtDestroyEvent(end);
    return 0;
}
