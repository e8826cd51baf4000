// expect: clean
// The attached stream's id comes from a library helper no analyzed file defines, so the
// Wait task's stream id cannot be followed (a reader's limit, taken as stream 0 and said
// with --explain). That the Wait and the Record then share a stream rests on the
// assumption: undecided, not an SG204 deadlock (an error before).
#include <cstdint>
#include <vector>
#include "graph/kernel_launch_info.h"
#include "register/op_ct_impl_registry.h"

int64_t AttachedStreamOf(const gert::ExeResGenerationContext *context);

static ge::Status GatherGenTask(const gert::ExeResGenerationContext *context, std::vector<std::vector<uint8_t>> &tasks)
{
    const int64_t attachStreamId = AttachedStreamOf(context);
    const int64_t streamId = context->GetStreamId();
    const std::vector<uint8_t> aicoreData = tasks.back();
    tasks.clear();
    ge::KernelLaunchInfo waitTask = ge::KernelLaunchInfo::CreateHcomWaitTask(context, "group");
    waitTask.SetStreamId(static_cast<uint32_t>(attachStreamId));
    tasks.push_back(waitTask.Serialize());
    ge::KernelLaunchInfo recordTask = ge::KernelLaunchInfo::CreateHcomRecordTask(context, "group");
    recordTask.SetStreamId(static_cast<uint32_t>(streamId));
    tasks.push_back(recordTask.Serialize());
    ge::KernelLaunchInfo aicoreTask = ge::KernelLaunchInfo::LoadFromData(context, aicoreData);
    tasks.push_back(aicoreTask.Serialize());
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_CT(Gather).GenerateTask(GatherGenTask);
