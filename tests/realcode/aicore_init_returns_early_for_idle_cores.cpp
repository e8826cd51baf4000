// expect: clean
// Expected: no finding. Got: SG801 "read-after-write race on GM `x` between PIPE_MTE3
// and PIPE_MTE2": `Init` returns early on a core with no elements, and the member it
// would have set (`blockLen_`, default 0) lost its value after the branch, because the
// arm that returned never wrote it. The tile loop then had no bound and the tile
// length no value, so each tile's in-place read seemed to overlap the previous write.
#include "kernel_operator.h"
using namespace AscendC;

struct ScaleTiling {
    int64_t ubFactor;
    int64_t totalElements;
    int64_t blockFactor;
};

class KernelInplaceScale {
public:
    __aicore__ inline void Init(GM_ADDR x, const ScaleTiling *tiling)
    {
        ubFactor_ = tiling->ubFactor;
        if (tiling->totalElements <= 0 || tiling->blockFactor <= 0) {
            return;
        }
        int64_t blockOffset = tiling->blockFactor * static_cast<int64_t>(GetBlockIdx());
        int64_t remain = tiling->totalElements - blockOffset;
        if (remain <= 0) {
            return;
        }
        blockLen_ = remain > tiling->blockFactor ? tiling->blockFactor : remain;
        xGm_.SetGlobalBuffer((__gm__ float *)x + blockOffset, blockLen_);
        pipe_.InitBuffer(inQue_, 1, ubFactor_ * sizeof(float));
        pipe_.InitBuffer(outQue_, 1, ubFactor_ * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        if (blockLen_ <= 0) {
            return;
        }
        int64_t loops = (blockLen_ + ubFactor_ - 1) / ubFactor_;
        for (int64_t i = 0; i < loops; ++i) {
            int64_t offset = i * ubFactor_;
            int64_t count = blockLen_ - offset;
            count = count > ubFactor_ ? ubFactor_ : count;
            CopyIn(offset, count);
            Compute(count);
            CopyOut(offset, count);
        }
    }

private:
    __aicore__ inline void CopyIn(int64_t offset, int64_t count)
    {
        LocalTensor<float> xLocal = inQue_.AllocTensor<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        DataCopyPad(xLocal, xGm_[offset], params, pad);
        inQue_.EnQue(xLocal);
    }
    __aicore__ inline void Compute(int64_t count)
    {
        LocalTensor<float> xLocal = inQue_.DeQue<float>();
        LocalTensor<float> yLocal = outQue_.AllocTensor<float>();
        Muls(yLocal, xLocal, 0.5f, count);
        outQue_.EnQue(yLocal);
        inQue_.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(int64_t offset, int64_t count)
    {
        LocalTensor<float> yLocal = outQue_.DeQue<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(float)), 0, 0, 0};
        DataCopyPad(xGm_[offset], yLocal, params);
        outQue_.FreeTensor(yLocal);
    }

    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> inQue_;
    TQue<QuePosition::VECOUT, 1> outQue_;
    GlobalTensor<float> xGm_;
    int64_t blockLen_ = 0;
    int64_t ubFactor_ = 0;
};

extern "C" __global__ __aicore__ void inplace_scale(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelInplaceScale op;
    op.Init(x, &tilingData);
    op.Process();
}
