// expect: clean
// Expected: no finding: the pitches, width and height are parameters, so the 2D copy is left out with a note.
// Got: SG306 "a byte range with a negative offset or length": each dimension was taken as the space left in the
// buffers (1 TiB), and their product overflowed.
#include <cuda_runtime.h>
int Copy2D(unsigned char *dst, size_t dstPitch, const unsigned char *src, size_t srcPitch, size_t width, size_t height)
{
    cudaError_t result = cudaMemcpy2D(dst, dstPitch, src, srcPitch, width, height, cudaMemcpyDeviceToDevice);
    return result == cudaSuccess ? 0 : 1;
}
