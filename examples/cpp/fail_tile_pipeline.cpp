// expect: SG102, SG601, SG604
/*
 * Tile pipeline: a copy stream stages each input tile into one device buffer and a
 * compute stream runs the GELU kernel on it. Two ACL_EVENT_SYNC events hand the
 * buffer back and forth. BUG: inReady_ is never reset after the compute stream waits
 * on it, so from the second tile on the wait passes on the stale record: the kernel
 * reads devIn_ while the next copy writes it, and Release frees buffers that copy
 * may still use.
 */
#include <cstdint>
#include <cstdio>
#include "acl/acl.h"

#define ACL_CHECK(expr)                                                            \
    do {                                                                           \
        auto _ret = (expr);                                                        \
        if (_ret != ACL_SUCCESS) {                                                 \
            fprintf(stderr, "[ERROR] %s failed: %d (%s:%d)\n", #expr,              \
                    static_cast<int>(_ret), __FILE__, __LINE__);                   \
            return -1;                                                             \
        }                                                                          \
    } while (0)

#define NUM_TILES 4
#define TILE_BYTES (64 * 1024)
#define BLOCK_DIM 8

extern "C" __global__ __aicore__ void tile_gelu(__gm__ const uint8_t *x, __gm__ uint8_t *y);

class TilePipeline {
public:
    int Init()
    {
        ACL_CHECK(aclrtCreateStream(&this->copyStream_));
        ACL_CHECK(aclrtCreateStream(&this->computeStream_));
        ACL_CHECK(aclrtCreateEventWithFlag(&this->inReady_, ACL_EVENT_SYNC));
        ACL_CHECK(aclrtCreateEventWithFlag(&this->inFree_, ACL_EVENT_SYNC));
        ACL_CHECK(aclrtMalloc(reinterpret_cast<void **>(&devIn_), TILE_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
        ACL_CHECK(aclrtMalloc(reinterpret_cast<void **>(&devOut_), TILE_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
        return 0;
    }

    int Run(const uint8_t *hostIn)
    {
        for (int i = 0; i < NUM_TILES; ++i) {
            if (i > 0) {
                // The previous tile's kernel must be done reading devIn_.
                ACL_CHECK(aclrtStreamWaitEvent(copyStream_, inFree_));
                ACL_CHECK(aclrtResetEvent(inFree_, copyStream_));
            }
            ACL_CHECK(aclrtMemcpyAsync(devIn_, TILE_BYTES, hostIn + i * TILE_BYTES, TILE_BYTES,
                                       ACL_MEMCPY_HOST_TO_DEVICE, copyStream_));
            ACL_CHECK(aclrtRecordEvent(inReady_, copyStream_));
            ACL_CHECK(aclrtStreamWaitEvent(computeStream_, inReady_));
            tile_gelu<<<BLOCK_DIM, nullptr, computeStream_>>>(devIn_, devOut_);
            ACL_CHECK(aclrtRecordEvent(inFree_, computeStream_));
        }
        ACL_CHECK(aclrtSynchronizeStream(computeStream_));
        return 0;
    }

    void Release()
    {
        (void)aclrtFree(devIn_);
        (void)aclrtFree(devOut_);
        (void)aclrtDestroyEvent(inReady_);
        (void)aclrtDestroyEvent(inFree_);
        (void)aclrtDestroyStream(copyStream_);
        (void)aclrtDestroyStream(computeStream_);
    }

private:
    aclrtStream copyStream_ = nullptr;
    aclrtStream computeStream_ = nullptr;
    aclrtEvent inReady_ = nullptr;
    aclrtEvent inFree_ = nullptr;
    uint8_t *devIn_ = nullptr;
    uint8_t *devOut_ = nullptr;
};

int main()
{
    ACL_CHECK(aclInit(nullptr));
    ACL_CHECK(aclrtSetDevice(0));

    uint8_t *hostIn = nullptr;
    ACL_CHECK(aclrtMallocHost(reinterpret_cast<void **>(&hostIn), NUM_TILES * TILE_BYTES));

    TilePipeline pipeline;
    if (pipeline.Init() != 0) {
        return -1;
    }
    int ret = pipeline.Run(hostIn);
    pipeline.Release();

    (void)aclrtFreeHost(hostIn);
    (void)aclrtResetDevice(0);
    (void)aclFinalize();
    return ret;
}
