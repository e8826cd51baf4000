// expect: SG103, SG108
// An event pool hands out plain aclrtCreateEvent events (which the current CANN docs do
// not allow to be reset) and resets each after use on the stream that recorded it,
// not on the waiting one: the reset can run before the consumer's wait, which then
// hangs.
#include "acl/acl.h"
struct EventPool {
    aclrtEvent events[2];
    int Init()
    {
        for (int i = 0; i < 2; ++i) {
            if (aclrtCreateEvent(&events[i]) != ACL_SUCCESS) { return 1; }
        }
        return 0;
    }
};
int Handoff(EventPool &pool, aclrtStream producer, aclrtStream consumer)
{
    if (pool.Init() != 0) { return 1; }
    aclrtEvent ev = pool.events[0];
    if (aclrtRecordEvent(ev, producer) != ACL_SUCCESS) { return 1; }
    if (aclrtStreamWaitEvent(consumer, ev) != ACL_SUCCESS) { return 1; }
    if (aclrtResetEvent(ev, producer) != ACL_SUCCESS) { return 1; }
    (void)aclrtDestroyEvent(pool.events[0]);
    (void)aclrtDestroyEvent(pool.events[1]);
    return 0;
}
