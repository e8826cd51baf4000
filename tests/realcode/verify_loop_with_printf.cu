// expect: clean
// Expected: no finding: the loop only checks host data and prints mismatches. Got: SG004 (each element's test
// a choice of its own, past the 32 an entry point may make) and SG107 on both events, destroyed after the loop the
// walk never reached.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }
int main()
{
    const int n = 256;
    float *h = nullptr;
    float *d = nullptr;
    cudaEvent_t start, stop;
    if (cudaMallocHost(&h, n * sizeof(float)) != cudaSuccess || cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
        return 1;
    }
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
        return 1;
    }
    if (cudaEventRecord(start, 0) != cudaSuccess) {
        return 1;
    }
    twice<<<1, n>>>(d);
    if (cudaEventRecord(stop, 0) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess) {
        return 1;
    }
    if (cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < n; i++) {
        if (h[i] != float(i) * 2.0f) {
            printf("element %d: %f\n", i, h[i]);
            errors++;
        }
    }
    if (cudaEventDestroy(start) != cudaSuccess || cudaEventDestroy(stop) != cudaSuccess) {
        return 1;
    }
    if (cudaFree(d) != cudaSuccess || cudaFreeHost(h) != cudaSuccess) {
        return 1;
    }
    return errors == 0 ? 0 : 1;
}
