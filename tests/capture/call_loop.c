/* The capture benchmark's program (benches/capture_overhead.rs): `call_loop CALLS WORK`
 * makes CALLS ACL calls (a record and a wait, over and over) with WORK rounds of
 * arithmetic between each pair, standing for the host work a program does between
 * calls, and prints the nanoseconds its loop took: wall-clock time, then the CPU time
 * of the process (all threads, kernel time included). */
#include "fake_acl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long calls = atol(argv[1]);
    long work = atol(argv[2]);
    aclrtStream producer, consumer;
    aclrtEvent ready;
    aclrtCreateStream(&producer);
    aclrtCreateStream(&consumer);
    aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC);
    volatile unsigned long long sink = 1;
    unsigned long long start = now_ns(CLOCK_MONOTONIC), start_cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < calls / 2; i++) {
        aclrtRecordEvent(ready, producer);
        aclrtStreamWaitEvent(consumer, ready);
        unsigned long long x = sink;
        for (long w = 0; w < work; w++) x = x * 6364136223846793005ull + 1442695040888963407ull;
        sink = x;
    }
    unsigned long long cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - start_cpu;
    unsigned long long elapsed = now_ns(CLOCK_MONOTONIC) - start;
    printf("%llu %llu\n", elapsed, cpu);
    return 0;
}
