// expect: clean
// Expected: no finding. Got: SG809 "the V_MTE3 event id allocated here is never
// released" on both kernels' ids. The ids `Init` allocates were moved to the top of the
// kernel, out of the TilingKey branch whose object releases them, so on the other key's
// path they looked allocated and never released; and `InitZeros`, a helper `Process`
// calls only on the cores with work, allocates and releases its id itself but was
// taken for the class's setup because of its name.
#include "kernel_operator.h"

struct ScaleTiling {
    uint32_t usedCores;
    uint32_t len;
};

template <typename T>
class KernelScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ScaleTiling &tiling, AscendC::TPipe *pipeIn)
    {
        pipe = pipeIn;
        usedCores = tiling.usedCores;
        len = tiling.len;
        xGm.SetGlobalBuffer((__gm__ T *)x + AscendC::GetBlockIdx() * len, len);
        yGm.SetGlobalBuffer((__gm__ T *)y + AscendC::GetBlockIdx() * len, len);
        pipe->InitBuffer(work, len * sizeof(T));
        mte2ToV = static_cast<event_t>(pipe->AllocEventID<AscendC::HardEvent::MTE2_V>());
        vToMte3 = static_cast<event_t>(pipe->AllocEventID<AscendC::HardEvent::V_MTE3>());
    }
    __aicore__ inline void Process()
    {
        if (AscendC::GetBlockIdx() >= usedCores) {
            return;
        }
        AscendC::LocalTensor<T> t = work.Get<T>();
        AscendC::DataCopy(t, xGm, len);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(mte2ToV);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(mte2ToV);
        AscendC::Muls(t, t, (T)2, len);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(vToMte3);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(vToMte3);
        AscendC::DataCopy(yGm, t, len);
    }
    __aicore__ inline void Release()
    {
        pipe->ReleaseEventID<AscendC::HardEvent::MTE2_V>(mte2ToV);
        pipe->ReleaseEventID<AscendC::HardEvent::V_MTE3>(vToMte3);
    }

private:
    AscendC::TPipe *pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> work;
    AscendC::GlobalTensor<T> xGm, yGm;
    event_t mte2ToV;
    event_t vToMte3;
    uint32_t usedCores = 0;
    uint32_t len = 0;
};

template <typename T>
class KernelZeros {
public:
    __aicore__ inline void Init(GM_ADDR y, const ScaleTiling &tiling, AscendC::TPipe *pipeIn)
    {
        pipe = pipeIn;
        usedCores = tiling.usedCores;
        len = tiling.len;
        yGm.SetGlobalBuffer((__gm__ T *)y + AscendC::GetBlockIdx() * len, len);
        pipe->InitBuffer(work, len * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        if (AscendC::GetBlockIdx() < usedCores) {
            InitZeros();
        }
    }

private:
    __aicore__ inline void InitZeros()
    {
        AscendC::LocalTensor<T> t = work.Get<T>();
        AscendC::Duplicate(t, (T)0, len);
        event_t vToMte3 = static_cast<event_t>(pipe->AllocEventID<AscendC::HardEvent::V_MTE3>());
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(vToMte3);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(vToMte3);
        pipe->ReleaseEventID<AscendC::HardEvent::V_MTE3>(vToMte3);
        AscendC::DataCopy(yGm, t, len);
    }

    AscendC::TPipe *pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> work;
    AscendC::GlobalTensor<T> yGm;
    uint32_t usedCores = 0;
    uint32_t len = 0;
};

extern "C" __global__ __aicore__ void scale_or_zeros(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    AscendC::TPipe pipe;
    if (TILING_KEY_IS(0)) {
        KernelScale<float> op;
        op.Init(x, y, tilingData, &pipe);
        op.Process();
        op.Release();
    } else if (TILING_KEY_IS(1)) {
        KernelZeros<float> op;
        op.Init(y, tilingData, &pipe);
        op.Process();
    }
}
