// expect: SG801
// A copy kernel that moves each tile GM -> UB -> GM through one `TQue<VECIN>`: the queue's
// EnQue/DeQue order MTE2 before the vector pipe, not before MTE3, so the copy out may read
// the tile before it arrives (a `TQueBind<VECIN, VECOUT>` orders MTE2 -> MTE3).
#include "kernel_operator.h"

struct CopyTiling {
    uint32_t tileNum;
    uint32_t tileLen;
};

class KernelTileCopy {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const CopyTiling &tiling)
    {
        tileNum = tiling.tileNum;
        tileLen = tiling.tileLen;
        xGm.SetGlobalBuffer((__gm__ float *)x + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        yGm.SetGlobalBuffer((__gm__ float *)y + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        pipe.InitBuffer(tileQue, 2, tileLen * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum; i++) {
            AscendC::LocalTensor<float> in = tileQue.AllocTensor<float>();
            AscendC::DataCopy(in, xGm[i * tileLen], tileLen);
            tileQue.EnQue(in);
            AscendC::LocalTensor<float> out = tileQue.DeQue<float>();
            AscendC::DataCopy(yGm[i * tileLen], out, tileLen);
            tileQue.FreeTensor(out);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> tileQue;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t tileNum;
    uint32_t tileLen;
};

extern "C" __global__ __aicore__ void tile_copy(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelTileCopy op;
    op.Init(x, y, tilingData);
    op.Process();
}
