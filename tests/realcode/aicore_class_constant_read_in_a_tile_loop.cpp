// expect: SG801
// Expected: SG801 in `CopyTiles`, each tile's copy-in overwrites the tile the vector unit
// is still reading from the tile before (no V_MTE2 flag between them). Got: an undecided
// race (information). The class constant `BLOCK_SIZE`, first read inside the warm-up
// loop, was taken for a value that loop changes: after it, every offset computed from
// it was unknown.
#include "kernel_operator.h"

struct PadTiling {
    uint32_t warmups;
    uint32_t tileNum;
    uint32_t tileLen;
};

template <typename T>
class KernelPadCopy {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const PadTiling &tiling)
    {
        warmups = tiling.warmups;
        tileNum = tiling.tileNum;
        tileLen = tiling.tileLen;
        xGm.SetGlobalBuffer((__gm__ T *)x);
        yGm.SetGlobalBuffer((__gm__ T *)y);
        pipe.InitBuffer(inBuf, 8192);
        pipe.InitBuffer(outBuf, 8192);
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < warmups; i++) {
            WarmUp(i);
        }
        CopyTiles();
    }

private:
    __aicore__ inline void WarmUp(uint32_t i)
    {
        AscendC::LocalTensor<T> in = inBuf.Get<T>();
        AscendC::DataCopy(in, xGm[i * BLOCK_SIZE], BLOCK_SIZE / sizeof(T));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(0);
        AscendC::DataCopy(yGm[i * BLOCK_SIZE], in, BLOCK_SIZE / sizeof(T));
        AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(0);
    }
    __aicore__ inline void CopyTiles()
    {
        AscendC::LocalTensor<T> in = inBuf.Get<T>();
        AscendC::LocalTensor<T> out = outBuf.Get<T>();
        for (uint32_t i = 0; i < tileNum; i++) {
            uint8_t pad = (tileLen * sizeof(T) % BLOCK_SIZE) / sizeof(T);
            AscendC::DataCopyPad(in[BLOCK_SIZE / sizeof(T) - pad], xGm[i * tileLen],
                {1, static_cast<uint16_t>(tileLen * sizeof(T)), 0, 0}, {true, pad, 0, 0});
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
            AscendC::Abs(out, in, BLOCK_SIZE / sizeof(T));
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
            AscendC::DataCopy(yGm[i * 8], out, BLOCK_SIZE / sizeof(T));
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(0);
        }
    }

    static constexpr uint32_t BLOCK_SIZE = 32;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf;
    AscendC::TBuf<AscendC::TPosition::VECCALC> outBuf;
    AscendC::GlobalTensor<T> xGm;
    AscendC::GlobalTensor<T> yGm;
    uint32_t warmups;
    uint32_t tileNum;
    uint32_t tileLen;
};

extern "C" __global__ __aicore__ void pad_copy(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(PadTiling, tilingData, tiling);
    KernelPadCopy<float> op;
    op.Init(x, y, tilingData);
    op.Process();
}
