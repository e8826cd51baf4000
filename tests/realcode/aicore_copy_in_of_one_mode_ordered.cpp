// expect: clean
// Expected: clean. The mode-0 arm of `aicore_copy_in_of_one_mode_beside_a_copy_empty_at_small_values.cpp`
// with its barrier: the launch z3 finds for the pair (mode 0, rotaryDim 16) runs both
// copies with bytes and finds them ordered.
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
            AscendC::PipeBarrier<PIPE_ALL>();
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
