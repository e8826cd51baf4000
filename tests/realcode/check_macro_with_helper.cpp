// expect: clean
// Expected: no SG701: ENFORCE checks the code; its error branch only formats a message with an in-tree helper.
#include "acl/acl.h"
static int ErrorMessage(int code) { return code + 1; }
#define ENFORCE(call) do { auto c_ = (call); if (c_ != ACL_SUCCESS) { return ErrorMessage(c_); } } while (0)
int Run(aclrtStream s)
{
    ENFORCE(aclrtSynchronizeStream(s));
    return 0;
}
