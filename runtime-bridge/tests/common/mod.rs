//! What ran, compared with what was verified.

use syncguard_analyzer::exec::{Action, AgentId, Execution, NodeId};
use syncguard_analyzer::model::OpKind;
use syncguard_runtime_bridge::RunLog;
use syncguard_runtime_bridge::sim::Sim;

/// Whether node `id` is a call of its own: every node but the notify record that
/// `HcommWriteWithNotifyOnThread` adds after its write, which the write's call issues.
fn is_own_call(exec: &Execution, id: NodeId) -> bool {
    let node = exec.node(id);
    let write_notify =
        matches!(node.op.kind, OpKind::RemoteWrite { .. }) && matches!(node.action, Action::ChannelNotifyRecord { .. });
    !write_notify
}

/// The first difference between the calls the run made and the verified Execution's:
/// each host thread's calls in issue order, and each stream's or HCCL thread's calls
/// in the order its queue executed them. `None` when they are the same.
pub fn executed_differs(exec: &Execution, log: &RunLog, sim: &Sim) -> Option<String> {
    let executed = sim.executed_by_agent();
    for (index, agent) in exec.agents.iter().enumerate() {
        let id = AgentId(index as u32);
        let (verified, ran): (Vec<NodeId>, Vec<NodeId>) = if agent.kind.is_device() {
            let verified = agent.nodes.iter().copied().filter(|&n| is_own_call(exec, n));
            (verified.collect(), executed[index].clone())
        } else {
            let issued_by = |n: &NodeId| exec.node(*n).host == id;
            let verified = (0..exec.nodes.len() as u32).map(NodeId).filter(issued_by);
            let ran = log.calls.iter().map(|call| call.node).filter(issued_by);
            (verified.filter(|&n| is_own_call(exec, n)).collect(), ran.collect())
        };
        if verified != ran {
            let calls = |nodes: &[NodeId]| nodes.iter().map(|&n| describe(exec, n)).collect::<Vec<_>>();
            return Some(format!(
                "{}: verified {:?}, ran {:?}",
                exec.agent_name(id),
                calls(&verified),
                calls(&ran)
            ));
        }
    }
    None
}

/// `aclrtRecordEvent#12` (the API and the node).
fn describe(exec: &Execution, id: NodeId) -> String {
    format!("{}#{}", exec.node(id).op.api, id.0)
}
