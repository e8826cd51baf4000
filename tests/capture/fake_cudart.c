/* A stand-in for libcudart.so: every call succeeds and returns a new handle. */
#include "fake_cuda.h"

#include <stdatomic.h>
#include <stdint.h>

static _Atomic uintptr_t next_handle = 0x20000;

static void *new_handle(void) {
    return (void *)atomic_fetch_add(&next_handle, 0x100);
}

cudaError_t cudaSetDevice(int device) { return 0; }
cudaError_t cudaStreamCreate(cudaStream_t *pStream) { *pStream = new_handle(); return 0; }
cudaError_t cudaStreamDestroy(cudaStream_t stream) { return 0; }
cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return 0; }
cudaError_t cudaEventCreate(cudaEvent_t *event) { *event = new_handle(); return 0; }
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) { return 0; }
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) { return 0; }
cudaError_t cudaEventDestroy(cudaEvent_t event) { return 0; }
cudaError_t cudaMalloc(void **devPtr, size_t size) {
    *devPtr = (void *)(atomic_fetch_add(&next_handle, 0x100) << 12);
    return 0;
}
cudaError_t cudaFree(void *devPtr) { return 0; }
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
    return 0;
}
