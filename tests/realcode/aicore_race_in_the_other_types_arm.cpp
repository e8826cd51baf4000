// expect: SG801
// Expected: SG801 in the `else` arm, the build for every element type but float: the
// cast reads the tile before MTE2 has filled it. Got: clean. The element type from the
// build took only the types the kernel tests it against (float), so the `else` arm, code
// for the other types, was never walked.
#include "kernel_operator.h"

template <typename T>
class KernelToFloat {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y)
    {
        xGm.SetGlobalBuffer((__gm__ T *)x + AscendC::GetBlockIdx() * LEN, LEN);
        yGm.SetGlobalBuffer((__gm__ float *)y + AscendC::GetBlockIdx() * LEN, LEN);
        pipe.InitBuffer(inBuf, LEN * sizeof(float));
        pipe.InitBuffer(outBuf, LEN * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> out = outBuf.Get<float>();
        if constexpr (std::is_same_v<T, float>) {
            AscendC::DataCopy(out, xGm, LEN);
            AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
        } else {
            AscendC::LocalTensor<T> in = inBuf.Get<T>();
            AscendC::DataCopy(in, xGm, LEN);
            AscendC::Cast(out, in, AscendC::RoundMode::CAST_NONE, LEN);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
        }
        AscendC::DataCopy(yGm, out, LEN);
    }

private:
    static constexpr int32_t LEN = 256;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf, outBuf;
    AscendC::GlobalTensor<T> xGm;
    AscendC::GlobalTensor<float> yGm;
};

extern "C" __global__ __aicore__ void to_float(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KernelToFloat<DTYPE_X> op;
    op.Init(x, y);
    op.Process();
}
