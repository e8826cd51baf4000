// expect: clean
// The record's stream comes from a function no analyzed file defines, so the record is
// left out (a reader's limit, listed with --explain). The wait on its event rests on it:
// it is undecided, not a hang (an SG104 error before).
#include "acl/acl.h"
aclrtStream PickStream();
int Run(aclrtStream s2)
{
    aclrtEvent ev = nullptr;
    if (aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC) != ACL_SUCCESS) { return 1; }
    if (aclrtRecordEvent(ev, PickStream()) != ACL_SUCCESS) { return 1; }
    if (aclrtStreamWaitEvent(s2, ev) != ACL_SUCCESS) { return 1; }
    if (aclrtSynchronizeStream(s2) != ACL_SUCCESS) { return 1; }
    (void)aclrtDestroyEvent(ev);
    return 0;
}
