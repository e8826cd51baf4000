// expect: clean
// Expected: no error (the two slots of each buffer never share a byte). Got: SG801
// between the slots: `GetWithOffset<T>(N, slot * N * sizeof(T))` with `T` from the build
// had no known element size, and the tensor was silently taken as the whole buffer. The
// byte offset is kept now; how far each slot's copy reaches is not known (the element
// size), so the race the walk sees between the slots is undecided information.
#include "kernel_operator.h"

template <typename T>
__aicore__ inline void AbsTwoSlots(GM_ADDR x, GM_ADDR y)
{
    constexpr uint32_t N = 256;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf, outBuf;
    AscendC::GlobalTensor<T> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ T *)x);
    yGm.SetGlobalBuffer((__gm__ T *)y);
    pipe.InitBuffer(inBuf, 2 * N * sizeof(T));
    pipe.InitBuffer(outBuf, 2 * N * sizeof(T));
    for (uint32_t slot = 0; slot < 2; slot++) {
        AscendC::LocalTensor<T> in = inBuf.template GetWithOffset<T>(N, slot * N * sizeof(T));
        AscendC::LocalTensor<T> out = outBuf.template GetWithOffset<T>(N, slot * N * sizeof(T));
        AscendC::DataCopy(in, xGm[slot * N], N);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(slot);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(slot);
        AscendC::Abs(out, in, N);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(slot);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(slot);
        AscendC::DataCopy(yGm[slot * N], out, N);
    }
}

extern "C" __global__ __aicore__ void abs_two_slots(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    AbsTwoSlots<DTYPE_X>(x, y);
}
