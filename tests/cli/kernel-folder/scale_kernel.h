// The kernel class lives in a header, as in most operator repositories.
#include "kernel_operator.h"
using namespace AscendC;

class ScaleKernel {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y)
    {
        xGm.SetGlobalBuffer((__gm__ half *)x + GetBlockIdx() * 1024, 1024);
        yGm.SetGlobalBuffer((__gm__ half *)y + GetBlockIdx() * 1024, 1024);
        pipe.InitBuffer(inQueue, 1, 2048);
        pipe.InitBuffer(outQueue, 1, 2048);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        DataCopy(xLocal, xGm, 1024);
        inQueue.EnQue(xLocal);
        LocalTensor<half> xIn = inQueue.DeQue<half>();
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        Muls(yLocal, xIn, (half)2.0, 1024);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xIn);
        LocalTensor<half> yOut = outQueue.DeQue<half>();
        DataCopy(yGm, yOut, 1024);
        outQueue.FreeTensor(yOut);
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQueue;
    TQue<TPosition::VECOUT, 1> outQueue;
    GlobalTensor<half> xGm;
    GlobalTensor<half> yGm;
};
