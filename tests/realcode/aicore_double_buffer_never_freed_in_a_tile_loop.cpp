// expect: SG804
// Expected: SG804 at the copy-in's `AllocTensor`: `Compute` never frees the input
// tensor, and the queue has two slots, so the third tile's `AllocTensor` waits forever.
// The tile count is the core's length divided by the tile length: the sampled launches
// ran the loop at most twice, and a loop walked twice counted as walked through, so no
// launch with a third tile was asked for and the hang was not found.
#include "kernel_operator.h"

struct ScaleTiling {
    uint32_t blockLength;
    uint32_t tileLength;
};

class KernelScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ScaleTiling &tiling)
    {
        blockLength = tiling.blockLength;
        tileLength = tiling.tileLength;
        xGm.SetGlobalBuffer((__gm__ float *)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueue, 2, tileLength * sizeof(float));
        pipe.InitBuffer(outQueue, 2, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t tiles = blockLength / tileLength;
        for (uint32_t i = 0; i < tiles; i++) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        AscendC::LocalTensor<float> xLocal = inQueue.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[i * tileLength], tileLength);
        inQueue.EnQue(xLocal);
    }
    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<float> xLocal = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueue.AllocTensor<float>();
        AscendC::Muls(yLocal, xLocal, 2.0f, tileLength);
        outQueue.EnQue(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t i)
    {
        AscendC::LocalTensor<float> yLocal = outQueue.DeQue<float>();
        AscendC::DataCopy(yGm[i * tileLength], yLocal, tileLength);
        outQueue.FreeTensor(yLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQueue;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    uint32_t blockLength;
    uint32_t tileLength;
};

extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(ScaleTiling, tilingData, tiling);
    KernelScale op;
    op.Init(x, y, tilingData);
    op.Process();
}
