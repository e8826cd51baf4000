// expect: SG804 SG812
// Expected: SG804 and SG812 in `ZeroFill`, whose tiles are copied in and never dequeued
// or freed: the second tile's `AllocTensor` waits forever for the queue's one slot.
// Only a launch with `mode * tileLength == 7` takes that path, which no sampled launch
// has, and its loop, of a count the reader could not compute, is unrolled into a chain
// of `if`s that all carry the loop's one source span. The launches z3 finds for such
// arms were tracked by that span: once one `if` of the chain was taken, every other one
// counted as taken, and the second tile was never walked (only SG812 was found).
#include "kernel_operator.h"

struct LeakTiling {
    uint32_t mode;
    uint32_t tileLength;
};

template <typename T>
class KernelZeroFill {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LeakTiling &tiling)
    {
        mode = tiling.mode;
        tileLength = tiling.tileLength;
        loopCnt = GetLoops(tiling.tileLength);
        xGm.SetGlobalBuffer((__gm__ T *)x);
        yGm.SetGlobalBuffer((__gm__ T *)y);
        pipe.InitBuffer(inQueueX, 1, 1024);
        pipe.InitBuffer(outQueueY, 1, 1024);
    }
    __aicore__ inline void Process()
    {
        if (mode * tileLength != 7) {
            Copy();
        } else {
            ZeroFill();
        }
    }

private:
    __aicore__ inline uint32_t GetLoops(uint32_t n);
    __aicore__ inline void CopyIn(uint32_t offset)
    {
        AscendC::LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
        AscendC::DataCopy(xLocal, xGm[offset], tileLength);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t offset)
    {
        AscendC::LocalTensor<T> yLocal = outQueueY.DeQue<T>();
        AscendC::DataCopy(yGm[offset], yLocal, tileLength);
        outQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void Copy()
    {
        for (uint32_t i = 0; i < loopCnt; i++) {
            CopyIn(i * tileLength);
            AscendC::LocalTensor<T> xLocal = inQueueX.DeQue<T>();
            AscendC::LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
            AscendC::Adds(yLocal, xLocal, (T)0, tileLength);
            outQueueY.EnQue(yLocal);
            inQueueX.FreeTensor(xLocal);
            CopyOut(i * tileLength);
        }
    }
    __aicore__ inline void ZeroFill()
    {
        for (uint32_t i = 0; i < loopCnt; i++) {
            CopyIn(i * tileLength);
            AscendC::LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
            AscendC::Duplicate(yLocal, (T)0, tileLength);
            outQueueY.EnQue(yLocal);
            CopyOut(i * tileLength);
        }
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueueX;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueueY;
    AscendC::GlobalTensor<T> xGm;
    AscendC::GlobalTensor<T> yGm;
    uint32_t mode;
    uint32_t tileLength;
    uint32_t loopCnt;
};

extern "C" __global__ __aicore__ void zero_fill(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(LeakTiling, tilingData, tiling);
    KernelZeroFill<float> op;
    op.Init(x, y, tilingData);
    op.Process();
}
