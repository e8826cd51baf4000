// expect: clean
// Expected: read in well under a second. Got: no answer for minutes (hours at 24 passes):
// each pass of the integer square root below doubled the symbolic expression of `r`,
// copied whole at every step, so reading the kernel built millions of nodes.
#include "kernel_operator.h"

struct TriTiling {
    uint32_t pairs;
    uint32_t tileLen;
};

class KernelPairs {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TriTiling &tiling)
    {
        tileLen = tiling.tileLen;
        // Rows of the upper triangle holding `pairs` pairs: r with r * (r - 1) / 2 >= pairs.
        int64_t d = 2 * static_cast<int64_t>(tiling.pairs);
        int64_t r = d;
        for (int32_t pass = 0; pass < 24; pass++) {
            r = (r + d / r) / 2;
        }
        rows = static_cast<uint32_t>(r) + 1;
        xGm.SetGlobalBuffer((__gm__ float *)x, rows * tileLen);
        yGm.SetGlobalBuffer((__gm__ float *)y, rows * tileLen);
        pipe.InitBuffer(inQue, 2, tileLen * sizeof(float));
        pipe.InitBuffer(outQue, 2, tileLen * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = AscendC::GetBlockIdx(); i < rows; i += AscendC::GetBlockNum()) {
            AscendC::LocalTensor<float> in = inQue.AllocTensor<float>();
            AscendC::DataCopy(in, xGm[i * tileLen], tileLen);
            inQue.EnQue(in);
            AscendC::LocalTensor<float> x = inQue.DeQue<float>();
            AscendC::LocalTensor<float> out = outQue.AllocTensor<float>();
            AscendC::Mul(out, x, x, tileLen);
            outQue.EnQue(out);
            inQue.FreeTensor(x);
            AscendC::LocalTensor<float> yv = outQue.DeQue<float>();
            AscendC::DataCopy(yGm[i * tileLen], yv, tileLen);
            outQue.FreeTensor(yv);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQue;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t rows;
    uint32_t tileLen;
};

extern "C" __global__ __aicore__ void pair_rows(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelPairs op;
    op.Init(x, y, tilingData);
    op.Process();
}
