// expect: clean
// Expected: no finding. Got: SG801 between the mask `Compare` writes (PIPE_V) into one
// 32-byte slot and the copy out (PIPE_MTE3) of the other slot: the mask of 256 compared
// elements was taken as 256 bytes, one per element, so it reached into the next slot.
// A comparison writes one bit per element.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void negative_mask(GM_ADDR x, GM_ADDR mask, GM_ADDR workspace, GM_ADDR tiling)
{
    constexpr int32_t TILE = 256;
    constexpr int32_t TILES = 4;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf, zeroBuf, maskBuf;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<uint8_t> maskGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    maskGm.SetGlobalBuffer((__gm__ uint8_t *)mask);
    pipe.InitBuffer(inBuf, 2 * TILE * sizeof(float));
    pipe.InitBuffer(zeroBuf, TILE * sizeof(float));
    pipe.InitBuffer(maskBuf, 2 * TILE / 8);
    AscendC::LocalTensor<float> zero = zeroBuf.Get<float>();
    AscendC::Duplicate(zero, 0.0f, TILE);
    for (int32_t i = 0; i < TILES; i++) {
        int32_t slot = i % 2;
        if (i >= 2) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(slot);
        }
        AscendC::LocalTensor<float> in = inBuf.GetWithOffset<float>(TILE, slot * TILE * sizeof(float));
        AscendC::DataCopy(in, xGm[i * TILE], TILE);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(slot);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(slot);
        AscendC::LocalTensor<uint8_t> bits = maskBuf.GetWithOffset<uint8_t>(TILE / 8, slot * TILE / 8);
        AscendC::Compare(bits, in, zero, AscendC::CMPMODE::LT, TILE);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(slot);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(slot);
        AscendC::DataCopy(maskGm[i * TILE / 8], bits, TILE / 8);
        if (i + 2 < TILES) {
            AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(slot);
        }
    }
}
