// expect: SG204
/*
 * Gen-task callback of the MC2 op MatmulReduceScatter (op_graph/
 * matmul_reduce_scatter_gen_task.cpp). GE hands over the op's AI Core task as the only
 * element of `tasks`; the callback rebuilds the list as [wait, aicpu, record, aicore]:
 * the Wait task and the AI CPU KFC server on the attached stream, the Record task and the
 * AI Core kernel on the op's own stream, all bound to the group of attribute `group`.
 * BUG: the Wait task gets the op's own stream id (copied from the Record task's lines)
 * instead of the attached stream's. Wait and Record of "group" now share one stream and
 * the Wait comes first: the Record that would release it is queued behind it.
 */
#include <cstdint>
#include <vector>
#include "graph/kernel_launch_info.h"
#include "register/op_ct_impl_registry.h"

namespace ops {
namespace {
const char *const AICPU_SO_NAME = "libccl_kernel.so";
const char *const AICPU_KERNEL_NAME = "RunAicpuKfcSrvLaunch";
} // namespace

static ge::Status MatmulReduceScatterGenTask(const gert::ExeResGenerationContext *context,
                                             std::vector<std::vector<uint8_t>> &tasks)
{
    if (context == nullptr || tasks.size() != 1U) {
        return ge::GRAPH_FAILED;
    }
    const auto streamInfos = context->GetAttachedStreamInfos();
    if (streamInfos.empty()) {
        return ge::GRAPH_FAILED;
    }
    const int64_t attachStreamId = streamInfos[0].stream_id;
    const int64_t streamId = context->GetStreamId();

    const std::vector<uint8_t> aicoreData = tasks.back();
    tasks.clear();

    ge::KernelLaunchInfo waitTask = ge::KernelLaunchInfo::CreateHcomWaitTask(context, "group");
    waitTask.SetStreamId(static_cast<uint32_t>(streamId));
    tasks.push_back(waitTask.Serialize());

    ge::KernelLaunchInfo aicpuTask =
        ge::KernelLaunchInfo::CreateAicpuKfcTask(context, AICPU_SO_NAME, AICPU_KERNEL_NAME);
    aicpuTask.SetStreamId(static_cast<uint32_t>(attachStreamId));
    tasks.push_back(aicpuTask.Serialize());

    ge::KernelLaunchInfo recordTask = ge::KernelLaunchInfo::CreateHcomRecordTask(context, "group");
    recordTask.SetStreamId(static_cast<uint32_t>(streamId));
    tasks.push_back(recordTask.Serialize());

    ge::KernelLaunchInfo aicoreTask = ge::KernelLaunchInfo::LoadFromData(context, aicoreData);
    tasks.push_back(aicoreTask.Serialize());
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_CT(MatmulReduceScatter).GenerateTask(MatmulReduceScatterGenTask);
} // namespace ops
