// expect: SG803
// Expected: SG803 for the merge stage's SetFlag that no WaitFlag takes. Got: no finding
// and no note: the out-of-line methods of the class templates (`Stage<T>::Run`) were filed
// under `Stage<T>`, not `Stage`, so `stage.Run()` went to another class's `Run`, and the
// member `merge` of the sort stage called the caller's own `Run` instead of its class's.
#include "kernel_operator.h"

template <typename T>
class MergeStage {
public:
    __aicore__ inline void Run();
};

template <typename T>
__aicore__ inline void MergeStage<T>::Run()
{
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
}

template <typename T>
class SortStage {
public:
    __aicore__ inline void Run();

private:
    MergeStage<T> merge;
};

template <typename T>
__aicore__ inline void SortStage<T>::Run()
{
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    merge.Run();
}

template <typename T>
class CopyStage {
public:
    __aicore__ inline void Run();
};

template <typename T>
__aicore__ inline void CopyStage<T>::Run()
{
    AscendC::PipeBarrier<PIPE_ALL>();
}

extern "C" __global__ __aicore__ void sort_then_merge(GM_ADDR x, GM_ADDR y)
{
    SortStage<int32_t> stage;
    stage.Run();
}
