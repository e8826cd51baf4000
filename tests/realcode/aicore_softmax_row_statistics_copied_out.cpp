// expect: SG801
// Expected: SG801, the row maximum `SoftMax` writes (its third tensor, on PIPE_V) read by
// the copy out (PIPE_MTE3) right after it, before the out queue's V to MTE3 sync, with no
// V_MTE3 flag. Got: clean. Every vector instruction was read as writing its first tensor
// only, so `SoftMax`'s sum and max outputs were reads, and the shape struct
// `{rows, cols, rows, cols}` was taken as its first field, a count for every tensor.
#include "kernel_operator.h"

struct RowTiling {
    uint32_t rowBlocks;
    uint32_t rows;
    uint32_t cols;
};

class KernelRowSoftmax {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR rowMax, const RowTiling &tiling)
    {
        rowBlocks_ = tiling.rowBlocks;
        rows_ = tiling.rows;
        cols_ = tiling.cols;
        xGm.SetGlobalBuffer((__gm__ float *)x, rowBlocks_ * rows_ * cols_);
        yGm.SetGlobalBuffer((__gm__ float *)y, rowBlocks_ * rows_ * cols_);
        maxGm.SetGlobalBuffer((__gm__ float *)rowMax, rowBlocks_ * rows_ * 8);
        pipe.InitBuffer(inQueue, 2, rows_ * cols_ * sizeof(float));
        pipe.InitBuffer(outQueue, 2, rows_ * cols_ * sizeof(float));
        pipe.InitBuffer(sumBuf, rows_ * 8 * sizeof(float));
        pipe.InitBuffer(maxBuf, rows_ * 8 * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> sumLocal = sumBuf.Get<float>();
        AscendC::LocalTensor<float> maxLocal = maxBuf.Get<float>();
        for (uint32_t b = 0; b < rowBlocks_; b++) {
            AscendC::LocalTensor<float> xIn = inQueue.AllocTensor<float>();
            AscendC::DataCopy(xIn, xGm[b * rows_ * cols_], rows_ * cols_);
            inQueue.EnQue(xIn);
            AscendC::LocalTensor<float> xv = inQueue.DeQue<float>();
            AscendC::LocalTensor<float> yOut = outQueue.AllocTensor<float>();
            AscendC::SoftMaxShapeInfo shape = {rows_, cols_, rows_, cols_};
            AscendC::SoftMax<float>(yOut, sumLocal, maxLocal, xv, softmaxTiling, shape);
            AscendC::DataCopy(maxGm[b * rows_ * 8], maxLocal, rows_ * 8);
            inQueue.FreeTensor(xv);
            outQueue.EnQue(yOut);
            AscendC::LocalTensor<float> yv = outQueue.DeQue<float>();
            AscendC::DataCopy(yGm[b * rows_ * cols_], yv, rows_ * cols_);
            outQueue.FreeTensor(yv);
            event_t mte3ToV = static_cast<event_t>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::MTE3_V));
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(mte3ToV);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(mte3ToV);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQueue;
    AscendC::TBuf<AscendC::TPosition::VECCALC> sumBuf, maxBuf;
    AscendC::GlobalTensor<float> xGm, yGm, maxGm;
    SoftMaxTiling softmaxTiling;
    uint32_t rowBlocks_ = 0;
    uint32_t rows_ = 0;
    uint32_t cols_ = 0;
};

extern "C" __global__ __aicore__ void row_softmax(GM_ADDR x, GM_ADDR y, GM_ADDR rowMax, GM_ADDR workspace,
                                                  GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelRowSoftmax op;
    op.Init(x, y, rowMax, tilingData);
    op.Process();
}
