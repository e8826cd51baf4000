// expect: clean
/*
 * Copy/compute overlap on two non-blocking streams: the upload runs on
 * ctx.streams[0], the kernel on ctx.streams[1]. An event recorded after the upload
 * and waited on by the compute stream orders the two.
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                           \
    do {                                                                           \
        cudaError_t err_ = (call);                                                 \
        if (err_ != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_),  \
                    __FILE__, __LINE__);                                           \
            exit(EXIT_FAILURE);                                                    \
        }                                                                          \
    } while (0)

#define NSTREAMS 2

__global__ void scale(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i];
    }
}

struct Context {
    cudaStream_t streams[NSTREAMS];
    cudaEvent_t uploaded;
};

int main()
{
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    CUDA_CHECK(cudaSetDevice(0));

    Context ctx;
    for (int i = 0; i < NSTREAMS; ++i) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.streams[i], cudaStreamNonBlocking));
    }
    CUDA_CHECK(cudaEventCreateWithFlags(&ctx.uploaded, cudaEventDisableTiming));

    float *h_x = nullptr;
    float *d_x = nullptr;
    float *d_y = nullptr;
    CUDA_CHECK(cudaMallocHost((void **)&h_x, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_x, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_y, bytes));
    for (int i = 0; i < n; ++i) {
        h_x[i] = 1.0f;
    }

    CUDA_CHECK(cudaMemcpyAsync(d_x, h_x, bytes, cudaMemcpyHostToDevice, ctx.streams[0]));
    CUDA_CHECK(cudaEventRecord(ctx.uploaded, ctx.streams[0]));
    CUDA_CHECK(cudaStreamWaitEvent(ctx.streams[1], ctx.uploaded, 0));
    const int block = 256;
    const int grid = (n + block - 1) / block;
    scale<<<grid, block, 0, ctx.streams[1]>>>(d_y, d_x, 2.0f, n);
    CUDA_CHECK(cudaGetLastError());

    CUDA_CHECK(cudaDeviceSynchronize());
    printf("done\n");

    CUDA_CHECK(cudaEventDestroy(ctx.uploaded));
    CUDA_CHECK(cudaFreeHost(h_x));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    for (int i = 0; i < NSTREAMS; ++i) {
        CUDA_CHECK(cudaStreamDestroy(ctx.streams[i]));
    }
    return 0;
}
