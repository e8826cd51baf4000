// expect: clean
// An in-place kernel of a type the build picks: each tile copies rows of `x` in, works
// on them, and copies them back where they came from (MTE3); the next tile's rows are
// copied in after them (MTE2). A tile's offset counts elements of `T` (`tile *
// tileElems`, whole blocks of a row), its copies count blocks of 32 bytes (`blockLen`
// from the tiling, a gap between rows in UB): only the host knows that the two agree.
// With global offsets symbolic in `sizeof_T`, the walk at `rowLen = 2` (no whole block:
// every tile at offset 0) with `blockLen = 2` put two tiles' rows on one byte, an error
// for tiling values no host gives. Global offsets of a build type stay unknown steps:
// the overlap is information marked undecided.
#include "kernel_operator.h"

constexpr uint16_t ROWS_PER_TILE = 2;
constexpr uint32_t ELEMS_PER_BLOCK = 16;

struct RowsTiling {
    uint32_t tiles;
    uint32_t rows;
    uint32_t rowLen;
    uint32_t tileElems;
    uint16_t blockLen;
    uint16_t gap;
};

template <typename T>
class KernelRowsInPlace {
public:
    __aicore__ inline void Init(GM_ADDR x, const RowsTiling *tiling)
    {
        tiles = tiling->tiles;
        rows = tiling->rows;
        rowLen = tiling->rowLen;
        tileElems = rows * (rowLen / ELEMS_PER_BLOCK) * ELEMS_PER_BLOCK;
        copyIn.blockCount = 1;
        copyIn.blockLen = tiling->blockLen;
        copyIn.srcStride = 0;
        copyIn.dstStride = tiling->gap;
        copyOut.blockCount = 1;
        copyOut.blockLen = tiling->blockLen;
        copyOut.srcStride = tiling->gap;
        copyOut.dstStride = 0;
        xGm.SetGlobalBuffer((__gm__ T *)x);
        pipe.InitBuffer(inQueue, 1, 8192);
        pipe.InitBuffer(outQueue, 1, 8192);
    }
    __aicore__ inline void Process()
    {
        for (uint32_t tile = 0; tile < tiles; tile++) {
            copyIn.blockCount = ROWS_PER_TILE;
            copyOut.blockCount = ROWS_PER_TILE;
            AscendC::LocalTensor<T> in = inQueue.AllocTensor<T>();
            AscendC::DataCopy(in, xGm[tile * tileElems], copyIn);
            inQueue.EnQue(in);
            AscendC::LocalTensor<T> got = inQueue.DeQue<T>();
            AscendC::LocalTensor<T> out = outQueue.AllocTensor<T>();
            AscendC::Abs(out, got, rows * rowLen);
            outQueue.EnQue(out);
            inQueue.FreeTensor(got);
            AscendC::LocalTensor<T> done = outQueue.DeQue<T>();
            AscendC::DataCopy(xGm[tile * tileElems], done, copyOut);
            outQueue.FreeTensor(done);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<T> xGm;
    AscendC::DataCopyParams copyIn;
    AscendC::DataCopyParams copyOut;
    uint32_t tiles;
    uint32_t rows;
    uint32_t rowLen;
    uint32_t tileElems;
};

template <typename T>
__global__ __aicore__ void rows_in_place(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(RowsTiling, tilingData, tiling);
    KernelRowsInPlace<T> op;
    op.Init(x, &tilingData);
    op.Process();
}
