// expect: clean
// Expected: no finding. Got: SG855 "kernel hangs: AIV core 0 reaches SyncAll once, AIV
// core 0 only 0 times": the runs of the two TilingKeys were compared as if they were
// cores of one launch. A TilingKey is the launch's: every core takes the same branch.
#include "kernel_operator.h"

template <int MODE>
class KernelZeroFill {
public:
    __aicore__ inline void Init(GM_ADDR y)
    {
        yGm.SetGlobalBuffer((__gm__ float *)y);
        pipe.InitBuffer(zeros, 64 * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> t = zeros.Get<float>();
        AscendC::Duplicate(t, 0.0f, 64);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
        AscendC::DataCopy(yGm[AscendC::GetBlockIdx() * 64], t, 64);
        if constexpr (MODE == 0) {
            // The accumulate mode reads every core's zeros after this.
            AscendC::SyncAll();
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> zeros;
    AscendC::GlobalTensor<float> yGm;
};

extern "C" __global__ __aicore__ void zero_fill(GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    if (TILING_KEY_IS(0)) {
        KernelZeroFill<0> op;
        op.Init(y);
        op.Process();
    } else if (TILING_KEY_IS(1)) {
        KernelZeroFill<1> op;
        op.Init(y);
        op.Process();
    }
}
