#include "scale_kernel.h"

extern "C" __global__ __aicore__ void scale_kernel(GM_ADDR x, GM_ADDR y)
{
    ScaleKernel op;
    op.Init(x, y);
    op.Process();
}
