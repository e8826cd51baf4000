// expect: clean
// A host loop tests a value the checker cannot compute on every iteration: past 32
// undecided conditions the walk of main stops (a reader's limit, said as information).
// The destroy after the loop was not walked, so "the event is never destroyed" is
// undecided, not a leak (an SG107 warning before).
#include <cstdio>
#include <cuda_runtime.h>
int Suspicious(int i);
int main()
{
    cudaStream_t s;
    cudaEvent_t done;
    if (cudaStreamCreate(&s) != cudaSuccess) { return 1; }
    if (cudaEventCreate(&done) != cudaSuccess) { return 1; }
    if (cudaEventRecord(done, s) != cudaSuccess) { return 1; }
    if (cudaEventSynchronize(done) != cudaSuccess) { return 1; }
    for (int i = 0; i < 40; i++) {
        if (Suspicious(i)) { printf("step %d\n", i); }
    }
    (void)cudaEventDestroy(done);
    (void)cudaStreamDestroy(s);
    return 0;
}
