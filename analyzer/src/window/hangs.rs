//! Host synchronizes that never return. Happens-before orders nothing after an op that
//! never runs, so such a synchronize would be drawn wherever its host thread reached it,
//! before the stuck work it waits for; the window places it after the last op of each
//! queue it waits for, and says where that queue is stuck.

use std::collections::BTreeSet;

use crate::exec::{Execution, NodeId};
use crate::hb::HappensBefore;

/// One queue a hung synchronize waits for, in terms of nodes.
pub(super) struct Planned {
    pub sync: NodeId,
    /// The queue's last node the synchronize covers (it never runs).
    pub covered: NodeId,
    /// The queue's first node that never runs: where it is stuck.
    pub stuck: NodeId,
}

/// The synchronizes among `chosen` that their host thread reaches and that never
/// return, with each stuck queue they wait for.
pub(super) fn plan(exec: &Execution, hb: &HappensBefore, chosen: &BTreeSet<NodeId>) -> Vec<Planned> {
    let mut hangs = Vec::new();
    for &sync in chosen {
        let node = exec.node(sync);
        let reached = node.issued_after().is_none_or(|before| hb.executes(before));
        if !node.action.blocks_host() || hb.executes(sync) || !reached {
            continue;
        }
        for covered in hb.waited_for(sync).into_iter().filter(|&n| !hb.executes(n)) {
            let lane = &exec.agent(exec.node(covered).agent).nodes;
            if let Some(&stuck) = lane.iter().find(|&&n| !hb.executes(n)) {
                hangs.push(Planned { sync, covered, stuck });
            }
        }
    }
    hangs
}

/// The window's nodes on `covered`'s queue up to it: what the synchronize is drawn after.
pub(super) fn queue_before(exec: &Execution, chosen: &[NodeId], covered: NodeId) -> Vec<NodeId> {
    let agent = exec.node(covered).agent;
    chosen
        .iter()
        .copied()
        .filter(|&n| exec.node(n).agent == agent && n <= covered)
        .collect()
}
