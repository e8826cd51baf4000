/* `threads N CALLS`: N host threads each make about CALLS ACL calls on their own streams
 * and event (correct code), then exit; the main thread joins them. Every call must be in
 * the trace, whole, from the thread that made it. */
#include "fake_acl.h"

#include <pthread.h>
#include <stdlib.h>

static long calls_per_thread;

static void *work(void *arg) {
    aclrtStream producer, consumer;
    aclrtEvent event;
    aclrtCreateStream(&producer);
    aclrtCreateStream(&consumer);
    aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC);
    for (long i = 0; i < (calls_per_thread - 6) / 4; i++) {
        aclrtRecordEvent(event, producer);
        aclrtStreamWaitEvent(consumer, event);
        aclrtResetEvent(event, consumer);
        aclrtSynchronizeStream(consumer);
    }
    aclrtDestroyEvent(event);
    aclrtDestroyStream(producer);
    aclrtDestroyStream(consumer);
    return arg;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int threads = atoi(argv[1]);
    calls_per_thread = atol(argv[2]);
    pthread_t ids[64];
    if (threads > 64) threads = 64;
    aclInit(NULL);
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, work, NULL);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    aclFinalize();
    return 0;
}
