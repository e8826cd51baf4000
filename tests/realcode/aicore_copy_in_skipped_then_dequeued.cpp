// expect: SG804
// The counterpart of aicore_copy_in_returns_early.cpp with the caller's test left out:
// where `CopyIn` returns early, `Compute` dequeues a tile nobody enqueued and hangs. The
// early return at a helper's top level is walked exactly (before, it was said as a
// reading limit, SG003 "returns early under a condition with no known value").
#include "kernel_operator.h"

struct TailTiling {
    uint32_t tiles;
    uint32_t validTiles;
    uint32_t len;
};

class KernelTailCopy {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TailTiling &tiling)
    {
        tiles_ = tiling.tiles;
        validTiles_ = tiling.validTiles;
        len_ = tiling.len;
        xGm.SetGlobalBuffer((__gm__ float *)x, tiles_ * len_);
        yGm.SetGlobalBuffer((__gm__ float *)y, tiles_ * len_);
        pipe.InitBuffer(inQue, 2, len_ * sizeof(float));
        pipe.InitBuffer(outQue, 2, len_ * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t t = 0; t < tiles_; t++) {
            CopyIn(t);
            Compute();
            CopyOut(t);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t t)
    {
        if (validTiles_ == 0) {
            return;
        }
        auto xLocal = inQue.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[t * len_], len_);
        inQue.EnQue(xLocal);
    }
    __aicore__ inline void Compute()
    {
        auto xLocal = inQue.DeQue<float>();
        auto yLocal = outQue.AllocTensor<float>();
        AscendC::Muls(yLocal, xLocal, 2.0f, len_);
        outQue.EnQue(yLocal);
        inQue.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t t)
    {
        auto yLocal = outQue.DeQue<float>();
        AscendC::DataCopy(yGm[t * len_], yLocal, len_);
        outQue.FreeTensor(yLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 2> inQue;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 2> outQue;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t tiles_, validTiles_, len_;
};

extern "C" __global__ __aicore__ void tail_copy(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelTailCopy op;
    op.Init(x, y, tilingData);
    op.Process();
}
