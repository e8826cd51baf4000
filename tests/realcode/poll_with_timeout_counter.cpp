// expect: clean
// Expected: no SG107: the loop polls a file with a timeout counter; whether the file
// shows up is unknown, so both outcomes of the timeout check are possible, and on the
// normal path the event is destroyed.
#include <unistd.h>
#include "acl/acl.h"
#define CHECK(call) do { if ((call) != ACL_SUCCESS) { return 1; } } while (0)
int main()
{
    CHECK(aclrtSetDevice(0));
    aclrtEvent event = nullptr;
    CHECK(aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
    int timeout = 100;
    while (access("peer.done", F_OK) != 0 && timeout-- > 0) {
        usleep(1000);
    }
    if (timeout <= 0) {
        return -1;
    }
    CHECK(aclrtDestroyEvent(event));
    CHECK(aclrtResetDevice(0));
    return 0;
}
