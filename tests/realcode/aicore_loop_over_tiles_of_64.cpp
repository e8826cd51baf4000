// expect: SG804
// Expected: SG804 for the DeQue of a tensor nobody enqueued (the EnQue is missing). Got:
// no finding: the tile count is the row length divided by 64 elements, and the tiling
// values the walk sampled (1 to 4) never ran the loop. z3 now picks a launch per loop.
#include "kernel_operator.h"

struct RowTiling {
    uint32_t rowLen;
};

constexpr uint32_t TILE = 64;

class KernelRowScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const RowTiling &tiling)
    {
        tiles = tiling.rowLen / TILE;
        xGm.SetGlobalBuffer((__gm__ float *)x + tiling.rowLen * AscendC::GetBlockIdx(), tiling.rowLen);
        yGm.SetGlobalBuffer((__gm__ float *)y + tiling.rowLen * AscendC::GetBlockIdx(), tiling.rowLen);
        pipe.InitBuffer(inQue, 2, TILE * sizeof(float));
        pipe.InitBuffer(outQue, 2, TILE * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tiles; i++) {
            AscendC::LocalTensor<float> in = inQue.AllocTensor<float>();
            AscendC::DataCopy(in, xGm[i * TILE], TILE);
            AscendC::LocalTensor<float> x = inQue.DeQue<float>();
            AscendC::LocalTensor<float> out = outQue.AllocTensor<float>();
            AscendC::Muls(out, x, 0.5f, TILE);
            outQue.EnQue(out);
            inQue.FreeTensor(x);
            AscendC::LocalTensor<float> y = outQue.DeQue<float>();
            AscendC::DataCopy(yGm[i * TILE], y, TILE);
            outQue.FreeTensor(y);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQue;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t tiles;
};

extern "C" __global__ __aicore__ void row_scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelRowScale op;
    op.Init(x, y, tilingData);
    op.Process();
}
