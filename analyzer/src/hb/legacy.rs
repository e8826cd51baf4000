//! CUDA's legacy default stream: work on it waits for the earlier work of every blocking
//! stream of the device (each device of a rank has its own), and later work on a blocking stream waits for it (the CUDA
//! runtime's "stream synchronization behavior"). Non-blocking streams, ACL streams and
//! HCCL threads are not ordered so.
//!
//! "Earlier" is issue order, which the node order of one issue order gives: the calls
//! this ordering depends on are permuted between host threads (`exec::issue_orders`).

use std::collections::{BTreeMap, BTreeSet};

use crate::exec::{Action, AgentId, Execution, LegacyOrder, NodeId};

/// The edges the legacy default stream adds, `(before, after)`.
pub fn legacy_edges(exec: &Execution) -> Vec<(NodeId, NodeId)> {
    if !exec.legacy_default_stream {
        return Vec::new();
    }
    let mut edges = Vec::new();
    let mut devices: BTreeMap<(u32, Option<u32>), RankState> = BTreeMap::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        let device_of = |agent: AgentId| (node.rank(exec), exec.agent(agent).device);
        if let Action::AgentSync { agent, .. } = node.action
            && exec.legacy_order(agent) == LegacyOrder::Legacy
        {
            // Synchronizing the legacy stream waits for the blocking streams too (and for
            // work a host call ran on it, which its program order does not reach).
            let state = devices.entry(device_of(agent)).or_default();
            edges.extend(state.last_on_ordered(exec).map(|last| (last, id)));
            continue;
        }
        let on_host = !exec.agent(node.agent).kind.is_device();
        let queue = if on_host {
            exec.synchronous_work_of(id)
        } else {
            Some(node.agent)
        };
        let Some(queue) = queue else {
            continue;
        };
        let state = devices.entry(device_of(queue)).or_default();
        if on_host && let Some(&last) = state.last_on.get(&queue) {
            // Work a host call runs on a stream comes after the stream's earlier work.
            edges.push((last, id));
        }
        match exec.legacy_order(queue) {
            LegacyOrder::Legacy => {
                let since = std::mem::take(&mut state.since_legacy);
                edges.extend(since.into_iter().map(|stream| (state.last_on[&stream], id)));
                if let Some(previous) = state.last_legacy
                    && !exec.agent(exec.node(previous).agent).kind.is_device()
                {
                    // The stream's program order does not reach a host call's work.
                    edges.push((previous, id));
                }
                state.after_legacy.clear();
                state.last_legacy = Some(id);
            }
            LegacyOrder::Blocking => {
                if let Some(legacy) = state.last_legacy
                    && state.after_legacy.insert(queue)
                {
                    edges.push((legacy, id));
                }
                state.since_legacy.insert(queue);
            }
            LegacyOrder::Independent => {}
        }
        state.last_on.insert(queue, id);
    }
    edges
}

/// Ordered maps: the edges come out in the same order on every run (the shortest
/// deadlock cycle reported depends on it).
#[derive(Default)]
struct RankState {
    /// The last work issued to each stream.
    last_on: BTreeMap<AgentId, NodeId>,
    /// Blocking streams with work since the last legacy work.
    since_legacy: BTreeSet<AgentId>,
    /// Blocking streams whose work is already ordered after the last legacy work.
    after_legacy: BTreeSet<AgentId>,
    last_legacy: Option<NodeId>,
}

impl RankState {
    /// The last work on the legacy stream and on each blocking stream.
    fn last_on_ordered<'s>(&'s self, exec: &'s Execution) -> impl Iterator<Item = NodeId> + 's {
        self.last_on
            .iter()
            .filter(|&(&stream, _)| exec.legacy_order(stream) != LegacyOrder::Independent)
            .map(|(_, &last)| last)
    }
}
