// expect: SG804
// Expected: SG804 at the copy-in's `AllocTensor` of the gather build: its input tensor is
// never freed and the queue has one slot, so the second tile's `AllocTensor` waits
// forever. No sampled launch ran the gather build on more than one tile, and z3's launch
// for the loop (three tiles) took the copy build: the loop and each arm counted as
// walked, so the gather arms never saw a second tile.
#include "kernel_operator.h"

struct PickTiling {
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
};

template <int GATHER>
class KernelPick {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const PickTiling &tiling)
    {
        uint32_t rest = tiling.totalLength - tiling.blockLength * AscendC::GetBlockIdx();
        length = rest > tiling.blockLength ? tiling.blockLength : rest;
        tileLength = tiling.tileLength;
        xGm.SetGlobalBuffer((__gm__ float *)x + tiling.blockLength * AscendC::GetBlockIdx(), length);
        yGm.SetGlobalBuffer((__gm__ float *)y + tiling.blockLength * AscendC::GetBlockIdx(), length);
        if constexpr (GATHER == 0) {
            pipe.InitBuffer(passBuf, tileLength * sizeof(float));
        } else {
            pipe.InitBuffer(inQueue, 1, tileLength * sizeof(float));
            pipe.InitBuffer(outQueue, 1, tileLength * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        uint32_t tiles = (length + tileLength - 1) / tileLength;
        for (uint32_t i = 0; i < tiles; i++) {
            if constexpr (GATHER == 0) {
                AscendC::LocalTensor<float> t = passBuf.Get<float>();
                AscendC::DataCopy(t, xGm[i * tileLength], tileLength);
                AscendC::PipeBarrier<PIPE_ALL>();
                AscendC::DataCopy(yGm[i * tileLength], t, tileLength);
                AscendC::PipeBarrier<PIPE_ALL>();
            } else {
                AscendC::LocalTensor<float> xLocal = inQueue.AllocTensor<float>();
                AscendC::DataCopy(xLocal, xGm[i * tileLength], tileLength);
                inQueue.EnQue(xLocal);
                AscendC::LocalTensor<float> xIn = inQueue.DeQue<float>();
                AscendC::LocalTensor<float> yLocal = outQueue.AllocTensor<float>();
                AscendC::Abs(yLocal, xIn, tileLength);
                outQueue.EnQue(yLocal);
                AscendC::LocalTensor<float> yOut = outQueue.DeQue<float>();
                AscendC::DataCopy(yGm[i * tileLength], yOut, tileLength);
                outQueue.FreeTensor(yOut);
            }
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> passBuf;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    uint32_t length;
    uint32_t tileLength;
};

template <int GATHER>
__global__ __aicore__ void pick(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(PickTiling, tilingData, tiling);
    KernelPick<GATHER> op;
    op.Init(x, y, tilingData);
    op.Process();
}
