// expect: SG801
// Expected: SG801, the vector unit reads the tile before MTE2 has filled it. Got: the
// finding as information only ("undecided"): the `#if` that no flag decides was taken
// for a reading limit, though both of its arms are walked, each a build of its own, and
// the race is in both.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void scale_tile(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    constexpr int32_t LEN = 256;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf, outBuf;
    AscendC::GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)x + AscendC::GetBlockIdx() * LEN, LEN);
    yGm.SetGlobalBuffer((__gm__ half *)y + AscendC::GetBlockIdx() * LEN, LEN);
    pipe.InitBuffer(inBuf, LEN * sizeof(half));
    pipe.InitBuffer(outBuf, LEN * sizeof(half));
    AscendC::LocalTensor<half> in = inBuf.Get<half>();
    AscendC::LocalTensor<half> out = outBuf.Get<half>();
    AscendC::DataCopy(in, xGm, LEN);
#if SCALE_BY_TWO
    AscendC::Muls(out, in, (half)2, LEN);
#else
    AscendC::Adds(out, in, (half)1, LEN);
#endif
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopy(yGm, out, LEN);
}
