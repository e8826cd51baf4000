// expect: SG801
// Expected: SG801 between the mode-0 copy in of a cache row (MTE2, `sectionLen` floats)
// and the vector copy that reads the row after the `if`: the mode-0 arm has no barrier
// after its copy. The vector copy is counted in 32-byte blocks, `rotaryDim / 8 / 2` of
// them: zero for every `rotaryDim` below 16, so the sampled launches of mode 0 ran it
// without moving a byte. z3's launch for it (rotaryDim 16 and up, as few fields at zero
// as it can: `mode` 1) takes the other arm, whose copy has its barriers: no launch ran
// the two with bytes together until one was asked for the pair.
#include "kernel_operator.h"

struct SectionTiling {
    uint32_t rotaryDim;
    uint32_t sectionLen;
    uint32_t mode;
};

class KernelSectionRows {
public:
    __aicore__ inline void Init(GM_ADDR cache, GM_ADDR out, const SectionTiling &tiling)
    {
        rotaryDim = tiling.rotaryDim;
        sectionLen = tiling.sectionLen;
        mode = tiling.mode;
        cacheGm.SetGlobalBuffer((__gm__ float *)cache);
        outGm.SetGlobalBuffer((__gm__ float *)out);
        pipe.InitBuffer(rowBuf, rotaryDim * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> row = rowBuf.Get<float>();
        uint16_t halfBlocks = static_cast<uint16_t>(rotaryDim / 8 / 2);
        if (mode == 0) {
            AscendC::DataCopyPad(row, cacheGm, {1, static_cast<uint32_t>(sectionLen * sizeof(float)), 0, 0, 0},
                                 {false, 0, 0, 0});
        } else {
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::DataCopy(row, cacheGm, {1, halfBlocks, 0, 0});
            AscendC::PipeBarrier<PIPE_ALL>();
        }
        AscendC::DataCopy(row[rotaryDim / 2], row, {1, halfBlocks, 0, 0});
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(outGm, row, {1, static_cast<uint16_t>(halfBlocks * 2), 0, 0});
        AscendC::PipeBarrier<PIPE_ALL>();
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> rowBuf;
    AscendC::GlobalTensor<float> cacheGm;
    AscendC::GlobalTensor<float> outGm;
    uint32_t rotaryDim;
    uint32_t sectionLen;
    uint32_t mode;
};

extern "C" __global__ __aicore__ void section_rows(GM_ADDR cache, GM_ADDR out, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(SectionTiling, tilingData, tiling);
    KernelSectionRows op;
    op.Init(cache, out, tilingData);
    op.Process();
}
