// expect: clean
// Expected: no finding. Got: SG001 "`FORCE` is `true` or `false`" for the template bool argument.
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void copy_then_start(GM_ADDR x)
{
    AscendC::SetNextTaskStart<PIPE_MTE3, PIPE_FIX, true>();
}
