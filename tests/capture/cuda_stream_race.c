/* A copy on one stream fills `staged`; a copy on another stream reads it with nothing
 * ordering the two (a data race, SG601). With `fixed`, an event orders them. */
#include "fake_cuda.h"

#include <string.h>

int main(int argc, char **argv) {
    int fixed = argc > 1 && strcmp(argv[1], "fixed") == 0;
    static char host[4096];
    cudaStream_t upload, compute;
    cudaEvent_t uploaded;
    void *staged, *result;
    cudaSetDevice(0);
    cudaStreamCreate(&upload);
    cudaStreamCreate(&compute);
    cudaEventCreate(&uploaded);
    cudaMalloc(&staged, sizeof host);
    cudaMalloc(&result, sizeof host);
    cudaMemcpyAsync(staged, host, sizeof host, cudaMemcpyHostToDevice, upload);
    if (fixed) {
        cudaEventRecord(uploaded, upload);
        cudaStreamWaitEvent(compute, uploaded, 0);
    }
    cudaMemcpyAsync(result, staged, sizeof host, cudaMemcpyDeviceToDevice, compute);
    cudaStreamSynchronize(upload);
    cudaStreamSynchronize(compute);
    cudaFree(staged);
    cudaFree(result);
    cudaEventDestroy(uploaded);
    cudaStreamDestroy(upload);
    cudaStreamDestroy(compute);
    return 0;
}
