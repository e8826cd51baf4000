//! Whether a run issues the calls in an execution's node order: the orders
//! `exec::issue_orders` builds by permuting host threads' calls on shared objects are
//! checked only if some run makes them.

use std::collections::HashMap;

use super::HappensBefore;
use crate::exec::{Action, AgentId, NodeId, calls_conflict};

impl HappensBefore<'_, '_> {
    /// Whether some run issues the calls `permuted` marks (by node) in node order:
    /// - no host thread issues a permuted call after a synchronize that returns only once
    ///   another thread's permuted call, issued later in that order, has run;
    /// - a host thread never issues what follows a synchronize that never returns (nor
    ///   do the threads it would start after it): such calls come after every other
    ///   thread's issued calls on the same objects, where they affect nothing.
    ///
    /// The other calls keep their place in their own thread only; where the order puts
    /// them among other threads' calls changes nothing, so they are not judged.
    pub fn issue_order_realizable(&self, permuted: &[bool]) -> bool {
        self.stuck_threads_issue_last(permuted) && self.synchronizes_return_in_time(permuted)
    }

    fn stuck_threads_issue_last(&self, permuted: &[bool]) -> bool {
        /// Never-issued calls compared one by one with each later issued call; past this
        /// many, any later issued call on the rank makes the order unrealizable.
        const COMPARED: usize = 1024;
        let exec = self.exec;
        let mut stuck_hosts: Vec<AgentId> = Vec::new();
        let mut never_issued: HashMap<u32, Vec<NodeId>> = HashMap::new();
        for (index, node) in exec.nodes.iter().enumerate() {
            let id = NodeId(index as u32);
            let rank = node.rank(exec);
            if stuck_hosts.contains(&node.host) {
                if permuted[index] {
                    never_issued.entry(rank).or_default().push(id);
                }
                // A thread it would start never starts.
                if let Action::Spawn(child) = node.action {
                    stuck_hosts.push(child);
                }
            } else if permuted[index]
                && let Some(before) = never_issued.get(&rank)
                && (before.len() > COMPARED || before.iter().any(|&never| calls_conflict(exec, never, id)))
            {
                return false;
            }
            if node.action.blocks_host() && !self.executes(id) {
                stuck_hosts.push(node.host);
            }
        }
        true
    }

    fn synchronizes_return_in_time(&self, permuted: &[bool]) -> bool {
        let exec = self.exec;
        let order: Vec<NodeId> = (0..exec.nodes.len() as u32)
            .map(NodeId)
            .filter(|n| permuted[n.index()])
            .collect();
        let mut next_permuted: HashMap<AgentId, NodeId> = HashMap::new();
        for index in (0..exec.nodes.len()).rev() {
            let id = NodeId(index as u32);
            let node = exec.node(id);
            if node.action.blocks_host()
                && self.executes(id)
                && let Some(&next) = next_permuted.get(&node.host)
                && !self.issued_in_time(id, next, permuted, &order)
            {
                return false;
            }
            if permuted[index] {
                next_permuted.insert(node.host, id);
            }
        }
        true
    }

    /// Whether the permuted calls that happen before `sync` are issued before `next`
    /// (the synchronizing thread's next permuted call), or can be moved there: an order
    /// that differs only in calls touching nothing in common is the same execution.
    fn issued_in_time(&self, sync: NodeId, next: NodeId, permuted: &[bool], order: &[NodeId]) -> bool {
        let exec = self.exec;
        let rank = exec.node(sync).rank(exec);
        let mut late: Vec<NodeId> = Vec::new();
        for (index, agent) in exec.agents.iter().enumerate() {
            let seen = self.clock(sync, AgentId(index as u32)) as usize;
            if agent.rank != rank || seen == 0 {
                continue;
            }
            let before = &agent.nodes[..seen];
            late.extend(
                before
                    .iter()
                    .rev()
                    .take_while(|&&n| n > next)
                    .filter(|n| permuted[n.index()]),
            );
        }
        let Some(&last) = late.iter().max() else {
            return true;
        };
        // Each call between `next` and a late call must commute with it.
        let window = &order[order.partition_point(|&n| n < next)..order.partition_point(|&n| n < last)];
        window.iter().filter(|z| !late.contains(z)).all(|&z| {
            late.iter()
                .filter(|&&m| m > z)
                .all(|&m| exec.node(z).host != exec.node(m).host && !calls_conflict(exec, z, m))
        })
    }
}
