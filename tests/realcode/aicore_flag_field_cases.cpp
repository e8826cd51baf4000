// expect: clean
// Expected: no finding. Got: SG804 "`TQue::DeQue` waits for a tensor nobody enqueued" (error)
// with `hasBias = 2`: the kernel tests the tiling field only against 0 and 1 (the host
// writes one of them), so no other value is a launch.
#include "kernel_operator.h"

struct BiasTiling {
    uint32_t tileNum;
    uint32_t tileLen;
    uint32_t hasBias;
};

class KernelBiasAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR b, GM_ADDR y, const BiasTiling &tiling)
    {
        tileNum = tiling.tileNum;
        tileLen = tiling.tileLen;
        hasBias = tiling.hasBias;
        xGm.SetGlobalBuffer((__gm__ float *)x + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        bGm.SetGlobalBuffer((__gm__ float *)b, tileLen);
        yGm.SetGlobalBuffer((__gm__ float *)y + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        pipe.InitBuffer(inQue, 1, tileLen * sizeof(float));
        pipe.InitBuffer(outQue, 1, tileLen * sizeof(float));
        if (hasBias == 1) {
            pipe.InitBuffer(biasQue, 1, tileLen * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        if (hasBias == 1) {
            AscendC::LocalTensor<float> bias = biasQue.AllocTensor<float>();
            AscendC::DataCopy(bias, bGm, tileLen);
            biasQue.EnQue(bias);
        }
        for (uint32_t i = 0; i < tileNum; i++) {
            AscendC::LocalTensor<float> in = inQue.AllocTensor<float>();
            AscendC::DataCopy(in, xGm[i * tileLen], tileLen);
            inQue.EnQue(in);
            AscendC::LocalTensor<float> x = inQue.DeQue<float>();
            AscendC::LocalTensor<float> out = outQue.AllocTensor<float>();
            if (hasBias == 0) {
                AscendC::Muls(out, x, 2.0f, tileLen);
            } else {
                AscendC::LocalTensor<float> bias = biasQue.DeQue<float>();
                AscendC::Add(out, x, bias, tileLen);
                biasQue.EnQue(bias);
            }
            outQue.EnQue(out);
            inQue.FreeTensor(x);
            AscendC::LocalTensor<float> y = outQue.DeQue<float>();
            AscendC::DataCopy(yGm[i * tileLen], y, tileLen);
            outQue.FreeTensor(y);
        }
        // The bias goes back into its queue after each tile: take it out for good.
        if (hasBias == 1) {
            AscendC::LocalTensor<float> bias = biasQue.DeQue<float>();
            biasQue.FreeTensor(bias);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQue, biasQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQue;
    AscendC::GlobalTensor<float> xGm, bGm, yGm;
    uint32_t tileNum;
    uint32_t tileLen;
    uint32_t hasBias;
};

extern "C" __global__ __aicore__ void bias_add(GM_ADDR x, GM_ADDR b, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelBiasAdd op;
    op.Init(x, b, y, tilingData);
    op.Process();
}
