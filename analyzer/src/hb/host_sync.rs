//! What a host synchronize (`aclrtSynchronizeStream`, `aclrtSynchronizeDevice`) waits
//! for.
//!
//! The walk records, for each synchronize, the last node each synchronized queue had
//! when the walk reached it. Host threads are walked one after another, so that node
//! may have been issued by another host thread that, at run time, issues it only after
//! the synchronize returned. A synchronize covers exactly the work issued before it in
//! every execution: by its own host thread earlier, or by another host thread before a
//! host call that happens before the synchronize. The second kind depends on the
//! happens-before relation itself, so it is found by iterating to a fixed point.

use crate::exec::{Action, AgentId, Execution, NodeId};

/// One synchronize and the queue nodes the walk saw on one synchronized queue.
#[derive(Clone, Copy)]
pub(super) struct SyncedQueue {
    pub sync: NodeId,
    /// The queue's last node when the walk reached the synchronize.
    pub upto: NodeId,
}

/// Every (synchronize, queue) pair of an execution.
pub(super) fn synced_queues(exec: &Execution) -> Vec<SyncedQueue> {
    let mut out = Vec::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        let sync = NodeId(index as u32);
        let upto: &[NodeId] = match &node.action {
            Action::AgentSync { upto: Some(last), .. } => std::slice::from_ref(last),
            Action::DeviceSync { upto } | Action::WaitsSync { upto, .. } => upto,
            _ => continue,
        };
        out.extend(upto.iter().map(|&upto| SyncedQueue { sync, upto }));
    }
    out
}

/// What one host thread issued to one queue, in queue order:
/// `(position in the queue, issue number, node)`.
type Issued = Vec<(u32, u32, NodeId)>;

/// For each queue, the nodes each host thread issued to it.
pub(super) struct IssueIndex {
    /// Per queue (by agent index): each host thread that issued to it, in the order of
    /// their first issue, with what it issued. A queue has one or a few issuing threads,
    /// and every synchronize asks about each of them.
    by_queue: Vec<Vec<(AgentId, Issued)>>,
    position: Vec<u32>,
}

impl IssueIndex {
    /// Only the queues some synchronize waits for are indexed.
    pub fn new(exec: &Execution, synced: &[SyncedQueue]) -> Self {
        let mut position = vec![0u32; exec.nodes.len()];
        let mut by_queue: Vec<Vec<(AgentId, Issued)>> = vec![Vec::new(); exec.agents.len()];
        let mut queues: Vec<AgentId> = synced.iter().map(|s| exec.node(s.upto).agent).collect();
        queues.sort();
        queues.dedup();
        for queue in queues {
            let hosts = &mut by_queue[queue.index()];
            for (at, &node) in exec.agent(queue).nodes.iter().enumerate() {
                position[node.index()] = at as u32;
                let n = exec.node(node);
                let issued = match hosts.iter().position(|(host, _)| *host == n.host) {
                    Some(known) => &mut hosts[known].1,
                    None => {
                        hosts.push((n.host, Vec::new()));
                        &mut hosts.last_mut().expect("just pushed").1
                    }
                };
                issued.push((at as u32, n.issue, node));
            }
        }
        IssueIndex { by_queue, position }
    }

    /// Host threads that issued to the queue of `synced`.
    pub fn hosts(&self, exec: &Execution, synced: SyncedQueue) -> impl Iterator<Item = AgentId> + '_ {
        let queue = exec.node(synced.upto).agent;
        self.by_queue[queue.index()].iter().map(|&(host, _)| host)
    }

    /// The last node `host` issued to the queue of `synced`, no later in the queue than
    /// what the walk saw, whose issue number is below `issued_before`.
    pub fn last_issued(
        &self,
        exec: &Execution,
        synced: SyncedQueue,
        host: AgentId,
        issued_before: u32,
    ) -> Option<NodeId> {
        let queue = exec.node(synced.upto).agent;
        let limit = self.position[synced.upto.index()];
        let (_, issued) = self.by_queue[queue.index()]
            .iter()
            .find(|(issuer, _)| *issuer == host)?;
        // Both the queue position and the issue number grow along one host's list.
        let end = issued.partition_point(|&(at, issue, _)| at <= limit && issue < issued_before);
        end.checked_sub(1).map(|last| issued[last].2)
    }
}
