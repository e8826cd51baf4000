// expect: clean
// Expected: no finding, and no reading limit. Got: SG003 "a branch here returns early
// under a condition with no known value", and the caller's `if (CopyIn(t))` took the
// value of the arm walked last (`true`): `Compute` dequeued a tile `CopyIn` never
// enqueued, on the path where it returned early.
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
            if (!CopyIn(t)) {
                continue;
            }
            Compute();
            CopyOut(t);
        }
    }

private:
    __aicore__ inline bool CopyIn(uint32_t t)
    {
        if (validTiles_ == 0) {
            return false;
        }
        auto xLocal = inQue.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[t * len_], len_);
        inQue.EnQue(xLocal);
        return true;
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
