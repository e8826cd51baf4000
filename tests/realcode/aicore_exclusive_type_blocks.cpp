// expect: clean
// Expected: no finding. Got: SG804 "`TQue::DeQue` waits for a tensor nobody enqueued" (error):
// three `if constexpr` blocks on the element type, not chained by `else`, were three
// independent choices, so the walk took builds where none of them (or two) ran.
#include "kernel_operator.h"

struct PickTiling {
    uint32_t tileNum;
    uint32_t tileLen;
};

template <typename T>
class KernelPick {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const PickTiling &tiling)
    {
        tileNum = tiling.tileNum;
        tileLen = tiling.tileLen;
        xGm.SetGlobalBuffer((__gm__ T *)x + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        yGm.SetGlobalBuffer((__gm__ T *)y + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        pipe.InitBuffer(inQue, 2, tileLen * sizeof(T));
        pipe.InitBuffer(outQue, 2, tileLen * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum; i++) {
            AscendC::LocalTensor<T> in = inQue.AllocTensor<T>();
            AscendC::DataCopy(in, xGm[i * tileLen], tileLen);
            inQue.EnQue(in);
            Compute();
            AscendC::LocalTensor<T> out = outQue.DeQue<T>();
            AscendC::DataCopy(yGm[i * tileLen], out, tileLen);
            outQue.FreeTensor(out);
        }
    }
    __aicore__ inline void Compute()
    {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t>) {
            AscendC::LocalTensor<float> a = inQue.DeQue<float>();
            AscendC::LocalTensor<float> b = outQue.AllocTensor<float>();
            AscendC::Abs(b, a, tileLen);
            outQue.EnQue(b);
            inQue.FreeTensor(a);
        }
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, int16_t>) {
            AscendC::LocalTensor<half> a = inQue.DeQue<half>();
            AscendC::LocalTensor<half> b = outQue.AllocTensor<half>();
            AscendC::Abs(b, a, tileLen);
            outQue.EnQue(b);
            inQue.FreeTensor(a);
        }
        if constexpr (std::is_same<T, int8_t>::value) {
            AscendC::LocalTensor<int8_t> a = inQue.DeQue<int8_t>();
            AscendC::LocalTensor<int8_t> b = outQue.AllocTensor<int8_t>();
            AscendC::Adds(b, a, (int8_t)1, tileLen);
            outQue.EnQue(b);
            inQue.FreeTensor(a);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQue;
    AscendC::GlobalTensor<T> xGm, yGm;
    uint32_t tileNum;
    uint32_t tileLen;
};

extern "C" __global__ __aicore__ void pick_abs(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelPick<DTYPE_X> op;
    op.Init(x, y, tilingData);
    op.Process();
}
