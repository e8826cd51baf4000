// expect: clean
// Expected: no finding but the note that the walk stopped. Got: SG804 "`TQue::AllocTensor`
// waits for a slot nobody freed" (error): the reader stopped inside the tile loop (too many
// data-dependent branches), so the loop's FreeTensor was never read, and the walk repeated
// the cut-off loop body as if the kernel never freed its slot.
#include "kernel_operator.h"

struct ClampTiling {
    uint32_t tileNum;
    uint32_t tileLen;
};

class KernelClampCount {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ClampTiling &tiling)
    {
        tileNum = tiling.tileNum;
        tileLen = tiling.tileLen;
        xGm.SetGlobalBuffer((__gm__ float *)x + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        yGm.SetGlobalBuffer((__gm__ float *)y + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        pipe.InitBuffer(inQue, 2, tileLen * sizeof(float));
        pipe.InitBuffer(outQue, 2, tileLen * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum; i++) {
            AscendC::LocalTensor<float> in = inQue.AllocTensor<float>();
            AscendC::DataCopy(in, xGm[i * tileLen], tileLen);
            inQue.EnQue(in);
            AscendC::LocalTensor<float> x = inQue.DeQue<float>();
            AscendC::LocalTensor<float> out = outQue.AllocTensor<float>();
            AscendC::Maxs(out, x, 0.0f, tileLen);
            // A scalar pass over the first elements: one data-dependent branch each.
            ClampAt(x, out, 0);
            ClampAt(x, out, 1);
            ClampAt(x, out, 2);
            ClampAt(x, out, 3);
            ClampAt(x, out, 4);
            ClampAt(x, out, 5);
            ClampAt(x, out, 6);
            ClampAt(x, out, 7);
            ClampAt(x, out, 8);
            ClampAt(x, out, 9);
            ClampAt(x, out, 10);
            ClampAt(x, out, 11);
            ClampAt(x, out, 12);
            ClampAt(x, out, 13);
            ClampAt(x, out, 14);
            ClampAt(x, out, 15);
            ClampAt(x, out, 16);
            ClampAt(x, out, 17);
            ClampAt(x, out, 18);
            ClampAt(x, out, 19);
            ClampAt(x, out, 20);
            ClampAt(x, out, 21);
            ClampAt(x, out, 22);
            ClampAt(x, out, 23);
            ClampAt(x, out, 24);
            ClampAt(x, out, 25);
            ClampAt(x, out, 26);
            ClampAt(x, out, 27);
            ClampAt(x, out, 28);
            ClampAt(x, out, 29);
            ClampAt(x, out, 30);
            ClampAt(x, out, 31);
            ClampAt(x, out, 32);
            ClampAt(x, out, 33);
            outQue.EnQue(out);
            inQue.FreeTensor(x);
            AscendC::LocalTensor<float> y = outQue.DeQue<float>();
            AscendC::DataCopy(yGm[i * tileLen], y, tileLen);
            outQue.FreeTensor(y);
        }
    }

    __aicore__ inline void ClampAt(AscendC::LocalTensor<float> &x, AscendC::LocalTensor<float> &out, int32_t k)
    {
        if (x.GetValue(k) > 1.0f) {
            out.SetValue(k, 1.0f);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQue;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t tileNum;
    uint32_t tileLen;
};

extern "C" __global__ __aicore__ void clamp_count(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelClampCount op;
    op.Init(x, y, tilingData);
    op.Process();
}
