// expect: clean
// Expected: no finding: the synchronize's error is checked through cudaGetLastError right after it, the CUDA
// runtime's own idiom. Got: SG701 at the synchronize.
#include <cuda_runtime.h>
#include <cstdio>
__global__ void scale(float *x) { x[threadIdx.x] *= 2.0f; }
int main()
{
    float *x = nullptr;
    if (cudaMalloc(&x, 256 * sizeof(float)) != cudaSuccess) {
        return 1;
    }
    scale<<<1, 256>>>(x);
    cudaDeviceSynchronize();
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        printf("%s\n", cudaGetErrorString(err));
        return 1;
    }
    if (cudaFree(x) != cudaSuccess) {
        return 1;
    }
    return 0;
}
