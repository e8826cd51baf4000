/* Two streams wait for one record of an event; the first waiter resets it before the
 * second wait is issued, so the second wait can block forever (SG103). With `fixed`,
 * the reset comes once both waiting streams are synchronized. With `term`, the program ends by SIGTERM. It exits
 * 4 if a failing call's return value or errno does not reach it unchanged. */
#include "fake_acl.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

int main(int argc, char **argv) {
    int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
    int term = argc > 1 && strcmp(argv[1], "term") == 0;
    aclrtStream producer, first, second;
    aclrtEvent ready;
    aclInit(NULL);
    aclrtSetDevice(0);
    aclrtCreateStream(&producer);
    aclrtCreateStream(&first);
    aclrtCreateStream(&second);
    aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC);
    aclrtRecordEvent(ready, producer);
    aclrtStreamWaitEvent(first, ready);
    if (!fixed) aclrtResetEvent(ready, first);
    aclrtStreamWaitEvent(second, ready);
    aclrtSynchronizeStream(first);
    aclrtSynchronizeStream(second);
    if (fixed) aclrtResetEvent(ready, producer);
    if (term) raise(SIGTERM);
    errno = 0;
    if (aclrtDestroyStream(NULL) != 100000 || errno != EINVAL) return 4;
    aclrtDestroyEvent(ready);
    aclrtDestroyStream(producer);
    aclrtDestroyStream(first);
    aclrtDestroyStream(second);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
