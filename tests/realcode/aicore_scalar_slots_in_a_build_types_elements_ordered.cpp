// expect: clean
// The twin of `aicore_scalar_slots_in_a_build_types_elements.cpp` with the MTE2 -> V
// flag before the `Cast`: the slots, in elements of the build's `T`, are ordered.
#include "kernel_operator.h"

template <typename T>
class KernelScaleFactors {
    static constexpr int32_t SLOT_BYTES = 32;
    static constexpr int32_t SLOT = SLOT_BYTES / static_cast<int32_t>(sizeof(T));
    static constexpr int32_t FACTORS = 3;
    static constexpr bool NARROW = !AscendC::IsSameType<T, float>::value;

public:
    __aicore__ inline void Init(GM_ADDR alpha, GM_ADDR beta, GM_ADDR gamma)
    {
        alphaGm.SetGlobalBuffer((__gm__ T *)alpha, 1);
        betaGm.SetGlobalBuffer((__gm__ T *)beta, 1);
        gammaGm.SetGlobalBuffer((__gm__ T *)gamma, 1);
        pipe.InitBuffer(rawBuf, FACTORS * SLOT_BYTES);
        pipe.InitBuffer(wideBuf, FACTORS * SLOT * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<T> raw = rawBuf.Get<T>();
        AscendC::DataCopyExtParams one{1, static_cast<uint32_t>(sizeof(T)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(raw[0 * SLOT], alphaGm, one, pad);
        AscendC::DataCopyPad(raw[1 * SLOT], betaGm, one, pad);
        AscendC::DataCopyPad(raw[2 * SLOT], gammaGm, one, pad);
        if constexpr (!NARROW) {
            AscendC::SetFlag<AscendC::HardEvent::MTE2_S>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_S>(EVENT_ID0);
            alpha = raw.GetValue(0 * SLOT);
            beta = raw.GetValue(1 * SLOT);
            gamma = raw.GetValue(2 * SLOT);
        } else {
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
            AscendC::LocalTensor<float> wide = wideBuf.Get<float>();
            AscendC::Cast(wide, raw, AscendC::RoundMode::CAST_NONE, FACTORS * SLOT);
            AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
            alpha = wide.GetValue(0 * SLOT);
            beta = wide.GetValue(1 * SLOT);
            gamma = wide.GetValue(2 * SLOT);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> rawBuf;
    AscendC::TBuf<AscendC::TPosition::VECCALC> wideBuf;
    AscendC::GlobalTensor<T> alphaGm;
    AscendC::GlobalTensor<T> betaGm;
    AscendC::GlobalTensor<T> gammaGm;
    float alpha;
    float beta;
    float gamma;
};

template <typename T>
__global__ __aicore__ void scale_factors(GM_ADDR alpha, GM_ADDR beta, GM_ADDR gamma)
{
    KernelScaleFactors<T> op;
    op.Init(alpha, beta, gamma);
    op.Process();
}
