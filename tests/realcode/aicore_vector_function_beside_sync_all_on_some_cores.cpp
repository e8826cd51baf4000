// expect: SG855
// Expected: SG855 at `SyncAll`: only core 0 reaches it, and every core waits for all. The
// kernel also calls a vector function through `asc_vf_call`, whose reads and writes of
// the unified buffer the reader does not follow (said with `--explain`); such a call only
// moves data, so it leaves the kernel's races undecided but not its `SyncAll` count.
#include "kernel_operator.h"
using namespace AscendC;

struct VfTiling {
    uint32_t len;
};

template <typename T>
__simd_vf__ inline void NegVf(__ubuf__ T* dst, __ubuf__ T* src)
{
    MicroAPI::RegTensor<T> reg;
    MicroAPI::MaskReg mask = MicroAPI::CreateMask<T>();
    MicroAPI::DataCopy(reg, src);
    MicroAPI::Neg(reg, reg, mask);
    MicroAPI::DataCopy(dst, reg, mask);
}

class KernelNegSync {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const VfTiling &tiling)
    {
        len = tiling.len;
        xGm.SetGlobalBuffer((__gm__ float *)x);
        yGm.SetGlobalBuffer((__gm__ float *)y);
        pipe.InitBuffer(inQ, 1, 256 * sizeof(float));
        pipe.InitBuffer(outQ, 1, 256 * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> xLocal = inQ.AllocTensor<float>();
        DataCopy(xLocal, xGm[GetBlockIdx() * 256], 256);
        inQ.EnQue(xLocal);
        xLocal = inQ.DeQue<float>();
        LocalTensor<float> yLocal = outQ.AllocTensor<float>();
        auto* src = reinterpret_cast<__ubuf__ float*>(xLocal.GetPhyAddr());
        auto* dst = reinterpret_cast<__ubuf__ float*>(yLocal.GetPhyAddr());
        asc_vf_call<NegVf<float>>(dst, src);
        outQ.EnQue(yLocal);
        yLocal = outQ.DeQue<float>();
        DataCopy(yGm[GetBlockIdx() * 256], yLocal, 256);
        outQ.FreeTensor(yLocal);
        inQ.FreeTensor(xLocal);
        if (GetBlockIdx() == 0) {
            SyncAll();
        }
    }
private:
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    GlobalTensor<float> xGm, yGm;
    uint32_t len;
};

extern "C" __global__ __aicore__ void neg_sync(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(VfTiling, tilingData, tiling);
    KernelNegSync op;
    op.Init(x, y, tilingData);
    op.Process();
}
