// expect: SG801
// Expected: SG801, MTE3 copies out the tile `GatherMask` writes on the vector unit with
// no V_MTE3 flag between them. Got: clean. `GatherMask` ends with `rsvdCnt`, the count
// of elements it gathered, written back; it was read as the instruction's element count
// (0 here), so its write touched no byte.
#include "kernel_operator.h"

constexpr uint32_t HALF = 64;

class KernelEvenLanes {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y)
    {
        xGm.SetGlobalBuffer((__gm__ float *)x, 2 * HALF);
        yGm.SetGlobalBuffer((__gm__ float *)y, HALF);
        pipe.InitBuffer(inBuf, 2 * HALF * sizeof(float));
        pipe.InitBuffer(outBuf, HALF * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> in = inBuf.Get<float>();
        AscendC::LocalTensor<float> out = outBuf.Get<float>();
        AscendC::DataCopy(in, xGm, 2 * HALF);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
        uint64_t gathered = 0;
        AscendC::GatherMask(out, in, static_cast<uint8_t>(1), true, 2 * HALF, {1, 1, 0, 0}, gathered);
        AscendC::DataCopy(yGm, out, HALF);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf;
    AscendC::TBuf<AscendC::TPosition::VECCALC> outBuf;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
};

extern "C" __global__ __aicore__ void even_lanes(GM_ADDR x, GM_ADDR y)
{
    KernelEvenLanes op;
    op.Init(x, y);
    op.Process();
}
