// expect: clean
// Expected: clean. The passing twin of `aicore_copy_in_blocks_zero_at_small_values.cpp`:
// a barrier orders the copy in of each cache row (MTE2) before the vector copy that reads
// it, also in the launch z3 finds with `rotaryDim` at 16 or more.
#include "kernel_operator.h"

struct CacheTiling {
    uint32_t rotaryDim;
    uint32_t tokens;
};

class KernelCacheRows {
public:
    __aicore__ inline void Init(GM_ADDR cache, GM_ADDR out, const CacheTiling &tiling)
    {
        rotaryDim = tiling.rotaryDim;
        tokens = tiling.tokens;
        cacheGm.SetGlobalBuffer((__gm__ float *)cache);
        outGm.SetGlobalBuffer((__gm__ float *)out);
        pipe.InitBuffer(rowBuf, rotaryDim * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> row = rowBuf.Get<float>();
        uint16_t halfBlocks = static_cast<uint16_t>(rotaryDim / 8 / 2);
        for (uint32_t i = 0; i < tokens; i++) {
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::DataCopy(row, cacheGm[i * rotaryDim], {1, halfBlocks, 0, 0});
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::DataCopy(row[rotaryDim / 2], row, {1, halfBlocks, 0, 0});
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::DataCopy(outGm[i * rotaryDim], row, {1, static_cast<uint16_t>(halfBlocks * 2), 0, 0});
        }
        AscendC::PipeBarrier<PIPE_ALL>();
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> rowBuf;
    AscendC::GlobalTensor<float> cacheGm;
    AscendC::GlobalTensor<float> outGm;
    uint32_t rotaryDim;
    uint32_t tokens;
};

extern "C" __global__ __aicore__ void cache_rows(GM_ADDR cache, GM_ADDR out, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(CacheTiling, tilingData, tiling);
    KernelCacheRows op;
    op.Init(cache, out, tilingData);
    op.Process();
}
