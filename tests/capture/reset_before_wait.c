/* Two streams wait for one record of an event; the first waiter resets it before the
 * second wait is issued, so the second wait can block forever (SG103). With `fixed`,
 * the reset comes after both waits. With `term`, the program ends by SIGTERM. */
#include "fake_acl.h"

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
    if (fixed) aclrtResetEvent(ready, second);
    aclrtSynchronizeStream(first);
    aclrtSynchronizeStream(second);
    if (term) raise(SIGTERM);
    aclrtDestroyEvent(ready);
    aclrtDestroyStream(producer);
    aclrtDestroyStream(first);
    aclrtDestroyStream(second);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
