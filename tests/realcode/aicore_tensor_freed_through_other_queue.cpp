// expect: SG811
// Expected: SG811 naming the FreeTensor. Got: SG804 "`TQue::AllocTensor` waits for a slot
// nobody freed" (error), a hang release builds do not have: the slot is marked free
// whichever queue object frees it (a debug build asserts instead).
#include "kernel_operator.h"

struct MulTiling {
    uint32_t tileNum;
    uint32_t tileLen;
};

template <typename T>
class KernelMul {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const MulTiling &tiling)
    {
        tileNum = tiling.tileNum;
        tileLen = tiling.tileLen;
        aGm.SetGlobalBuffer((__gm__ T *)a + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        bGm.SetGlobalBuffer((__gm__ T *)b + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        cGm.SetGlobalBuffer((__gm__ T *)c + tileNum * tileLen * AscendC::GetBlockIdx(), tileNum * tileLen);
        pipe.InitBuffer(aQue, 2, tileLen * sizeof(T));
        pipe.InitBuffer(bQue, 2, tileLen * sizeof(T));
        pipe.InitBuffer(cQue, 2, tileLen * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum; i++) {
            AscendC::LocalTensor<T> aIn = aQue.AllocTensor<T>();
            AscendC::LocalTensor<T> bIn = bQue.AllocTensor<T>();
            AscendC::DataCopy(aIn, aGm[i * tileLen], tileLen);
            AscendC::DataCopy(bIn, bGm[i * tileLen], tileLen);
            aQue.EnQue(aIn);
            bQue.EnQue(bIn);
            AscendC::LocalTensor<T> av = aQue.DeQue<T>();
            AscendC::LocalTensor<T> bv = bQue.DeQue<T>();
            AscendC::LocalTensor<T> cOut = cQue.AllocTensor<T>();
            AscendC::Mul(cOut, av, bv, tileLen);
            cQue.EnQue(cOut);
            aQue.FreeTensor(av);
            aQue.FreeTensor(bv);
            AscendC::LocalTensor<T> cv = cQue.DeQue<T>();
            AscendC::DataCopy(cGm[i * tileLen], cv, tileLen);
            cQue.FreeTensor(cv);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> aQue, bQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> cQue;
    AscendC::GlobalTensor<T> aGm, bGm, cGm;
    uint32_t tileNum;
    uint32_t tileLen;
};

extern "C" __global__ __aicore__ void mul_tiles(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelMul<DTYPE_A> op;
    op.Init(a, b, c, tilingData);
    op.Process();
}
