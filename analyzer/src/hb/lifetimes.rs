//! Uses of an object that its destroy (`aclrtDestroyEvent`, `aclrtFree`, ...) does not
//! follow in every execution.
//!
//! The walk resolves a use on another host thread than the destroy's even when it
//! walked the destroy first (host threads are walked one after another, not in run
//! order), so the use keeps its node and its effect on every other rule. Whether it
//! comes before the destroy is decided here, by happens-before.

use super::HappensBefore;
use crate::exec::{Action, AgentKind, Execution, InstId, NodeId};

/// A use of a destroyed instance on another host thread than the destroy's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UseAroundDestroy {
    pub node: NodeId,
    pub instance: InstId,
    pub destroy: NodeId,
    /// `true`: the destroy happens before the use in every execution. `false`: nothing
    /// orders the use's issue before the destroy, so it can come after it.
    pub certainly_after: bool,
}

impl HappensBefore<'_, '_> {
    /// Every use of a destroyed instance that is not issued before its destroy in
    /// every execution, in node order.
    pub fn uses_around_destroys(&self) -> Vec<UseAroundDestroy> {
        let exec = self.exec;
        if exec.instances.iter().all(|i| i.destroyed.is_none()) {
            return Vec::new();
        }
        let mut found = Vec::new();
        for (index, node) in exec.nodes.iter().enumerate() {
            let id = NodeId(index as u32);
            for instance in instances_used(exec, id) {
                let Some(destroy) = exec.instance(instance).destroyed else {
                    continue;
                };
                if destroy == id || exec.node(destroy).agent == node.host || !self.executes(id) {
                    continue;
                }
                let observed = observed_order(exec, id, destroy);
                if self.happens_before(destroy, id) || observed == Some(std::cmp::Ordering::Greater) {
                    found.push(UseAroundDestroy {
                        node: id,
                        instance,
                        destroy,
                        certainly_after: true,
                    });
                } else if observed.is_none() && !self.issued_before(id, destroy) {
                    found.push(UseAroundDestroy {
                        node: id,
                        instance,
                        destroy,
                        certainly_after: false,
                    });
                }
            }
        }
        found
    }

    /// `node` is issued before the host call `then` in every execution: it runs before
    /// `then`, or its host thread issued it before a host call that happens before
    /// `then` (or is `then`).
    fn issued_before(&self, node: NodeId, then: NodeId) -> bool {
        let exec = self.exec;
        let n = exec.node(node);
        if n.agent == n.host || self.happens_before(node, then) {
            return self.happens_before(node, then);
        }
        let host_nodes = &exec.agent(n.host).nodes;
        let next = host_nodes.partition_point(|&h| exec.node(h).issue < n.issue);
        host_nodes
            .get(next)
            .is_some_and(|&h| h == then || self.happens_before(h, then))
    }
}

/// In a trace (one observed run), whether the use's line came before or after the
/// destroy's: the host threads were ordered that way by synchronization the trace does
/// not show. `None` for a program, which stands for every run.
fn observed_order(exec: &Execution, node: NodeId, destroy: NodeId) -> Option<std::cmp::Ordering> {
    if !exec.program.settings.observed_run {
        return None;
    }
    let (used, destroyed) = (&exec.node(node).op.span, &exec.node(destroy).op.span);
    Some(used.range.start.cmp(&destroyed.range.start))
}

/// The instances a node uses: what its action names, and the queue it runs on.
fn instances_used(exec: &Execution, node: NodeId) -> Vec<InstId> {
    let n = exec.node(node);
    let mut used = match &n.action {
        Action::Destroy(i)
        | Action::EventRecord(i)
        | Action::EventWait(i)
        | Action::EventReset(i)
        | Action::EventQuery(i)
        | Action::EventSync(i)
        | Action::NotifyRecord(i)
        | Action::NotifyWait(i)
        | Action::ChannelNotifyRecord { channel: i, .. }
        | Action::ChannelNotifyWait { channel: i, .. }
        | Action::ThreadNotifyRecord { target: i, .. }
        | Action::ThreadNotifyWait { thread: i, .. } => vec![*i],
        Action::Access(accesses) => accesses.iter().map(|a| a.buffer).collect(),
        Action::AgentSync { agent, .. } => queue_instance(exec, *agent).into_iter().collect(),
        Action::Create(_) | Action::DeviceSync { .. } | Action::Spawn(_) | Action::Other => Vec::new(),
    };
    used.extend(queue_instance(exec, n.agent));
    used
}

fn queue_instance(exec: &Execution, agent: crate::exec::AgentId) -> Option<InstId> {
    match exec.agent(agent).kind {
        AgentKind::Stream(inst) | AgentKind::HcclThread(inst) => Some(inst),
        AgentKind::Host(_) => None,
    }
}
