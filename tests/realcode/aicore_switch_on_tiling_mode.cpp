// expect: clean
// Expected: no finding. Got: SG801 "write-after-read race on tensor `rowLocal`" (error):
// the `switch` on the tiling's mode was a choice of its own, so the walk took the mode
// that loads a row (`mode != 0`) in the `if` and the mode that never loads one (case 0,
// no barrier after the row's use) in the `switch`: a path the kernel never runs.
#include "kernel_operator.h"

struct RowTiling {
    uint32_t mode;
    uint32_t tiles;
    uint32_t rows;
    uint32_t len;
};

class KernelRowScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const RowTiling &tiling)
    {
        mode_ = tiling.mode;
        tiles_ = tiling.tiles;
        rows_ = tiling.rows;
        len_ = tiling.len;
        xGm.SetGlobalBuffer((__gm__ float *)x, tiles_ * len_);
        yGm.SetGlobalBuffer((__gm__ float *)y, rows_ * tiles_ * len_);
        pipe.InitBuffer(rowBuf, len_ * sizeof(float));
        pipe.InitBuffer(wideBuf, len_ * sizeof(float));
        pipe.InitBuffer(outQue, 1, len_ * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t t = 0; t < tiles_; t++) {
            if (mode_ != 0) {
                LoadRow(t);
            }
            for (uint32_t r = 0; r < rows_; r++) {
                switch (mode_) {
                    case 0:
                        Fill(r, t);
                        break;
                    case 1:
                        Scale(r, t);
                        break;
                    default:
                        break;
                }
            }
        }
    }

private:
    __aicore__ inline void LoadRow(uint32_t t)
    {
        auto rowLocal = rowBuf.Get<float>();
        AscendC::DataCopy(rowLocal, xGm[t * len_], len_);
        AscendC::PipeBarrier<PIPE_ALL>();
        auto wide = wideBuf.Get<float>();
        AscendC::Muls(wide, rowLocal, 2.0f, len_);
    }
    __aicore__ inline void Fill(uint32_t r, uint32_t t)
    {
        AscendC::LocalTensor<float> out = outQue.AllocTensor<float>();
        AscendC::Duplicate(out, 0.0f, len_);
        CopyOut(out, r, t);
    }
    __aicore__ inline void Scale(uint32_t r, uint32_t t)
    {
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::LocalTensor<float> out = outQue.AllocTensor<float>();
        auto wide = wideBuf.Get<float>();
        AscendC::Muls(out, wide, 0.5f, len_);
        CopyOut(out, r, t);
    }
    __aicore__ inline void CopyOut(AscendC::LocalTensor<float> &out, uint32_t r, uint32_t t)
    {
        outQue.EnQue(out);
        AscendC::LocalTensor<float> y = outQue.DeQue<float>();
        AscendC::DataCopy(yGm[(r * tiles_ + t) * len_], y, len_);
        outQue.FreeTensor(y);
    }

    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> rowBuf, wideBuf;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQue;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t mode_;
    uint32_t tiles_;
    uint32_t rows_;
    uint32_t len_;
};

extern "C" __global__ __aicore__ void row_scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelRowScale op;
    op.Init(x, y, tilingData);
    op.Process();
}
