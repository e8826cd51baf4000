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
    ///
    /// Returns the permuted calls in an order a run makes: node order, or, where a
    /// synchronize returns only after calls node order puts after its thread's next
    /// call, an equivalent order with those calls first (it differs only in calls that
    /// touch nothing in common, so it is the same execution, and a run forced to issue in
    /// it does not wait forever for its own synchronize).
    pub fn realizable_issue_order(&self, permuted: &[bool]) -> Option<Vec<NodeId>> {
        if !self.stuck_threads_issue_last(permuted) {
            return None;
        }
        let order: Vec<NodeId> = (0..self.exec.nodes.len() as u32)
            .map(NodeId)
            .filter(|n| permuted[n.index()])
            .collect();
        let issued_first = self.synchronizes_return_in_time(permuted, &order)?;
        if issued_first.is_empty() {
            return Some(order);
        }
        // Should the moves contradict each other, node order is still the execution
        // checked; only a run forced into it may give the order up.
        Some(self.equivalent_order(&order, &issued_first).unwrap_or(order))
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

    /// For each synchronize whose thread issues a permuted call `next` after it, the
    /// permuted calls that happen before the synchronize but come after `next`, which
    /// must move before it; `None` when one cannot.
    fn synchronizes_return_in_time(&self, permuted: &[bool], order: &[NodeId]) -> Option<Vec<(NodeId, Vec<NodeId>)>> {
        let exec = self.exec;
        let mut next_permuted: HashMap<AgentId, NodeId> = HashMap::new();
        let mut issued_first = Vec::new();
        for index in (0..exec.nodes.len()).rev() {
            let id = NodeId(index as u32);
            let node = exec.node(id);
            if node.action.blocks_host()
                && self.executes(id)
                && let Some(&next) = next_permuted.get(&node.host)
            {
                let late = self.issued_in_time(id, next, permuted, order)?;
                if !late.is_empty() {
                    issued_first.push((next, late));
                }
            }
            if permuted[index] {
                next_permuted.insert(node.host, id);
            }
        }
        Some(issued_first)
    }

    /// The permuted calls that happen before `sync` but come after `next` (the
    /// synchronizing thread's next permuted call), if they can be moved before it (an
    /// order that differs only in calls touching nothing in common is the same
    /// execution); `None` when they cannot.
    fn issued_in_time(&self, sync: NodeId, next: NodeId, permuted: &[bool], order: &[NodeId]) -> Option<Vec<NodeId>> {
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
            return Some(late);
        };
        // Each call between `next` and a late call must commute with it.
        let window = &order[order.partition_point(|&n| n < next)..order.partition_point(|&n| n < last)];
        let movable = window
            .iter()
            .filter(|z| !late.contains(z))
            .all(|&z| late.iter().filter(|&&m| m > z).all(|&m| self.commute(z, m)));
        movable.then_some(late)
    }

    /// Whether two calls of different threads touch nothing in common, so that issuing
    /// them the other way round makes the same execution.
    fn commute(&self, a: NodeId, b: NodeId) -> bool {
        self.exec.node(a).host != self.exec.node(b).host && !calls_conflict(self.exec, a, b)
    }

    /// `order` with each `(next, late)` pair's late calls before `next`, every other pair
    /// of calls that do not commute kept as it was, and the rest as close to `order` as
    /// that allows; `None` when the moves contradict each other.
    fn equivalent_order(&self, order: &[NodeId], issued_first: &[(NodeId, Vec<NodeId>)]) -> Option<Vec<NodeId>> {
        let position = |n: NodeId| order.binary_search(&n).expect("a permuted call");
        let mut after: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        let mut before_count = vec![0usize; order.len()];
        let mut constrain = |first: usize, then: usize| {
            after[first].push(then);
            before_count[then] += 1;
        };
        for i in 0..order.len() {
            for j in i + 1..order.len() {
                if !self.commute(order[i], order[j]) {
                    constrain(i, j);
                }
            }
        }
        for (next, late) in issued_first {
            for &m in late {
                constrain(position(m), position(*next));
            }
        }
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..order.len())
            .filter(|&i| before_count[i] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut equivalent = Vec::with_capacity(order.len());
        while let Some(std::cmp::Reverse(i)) = ready.pop() {
            equivalent.push(order[i]);
            for &j in &after[i] {
                before_count[j] -= 1;
                if before_count[j] == 0 {
                    ready.push(std::cmp::Reverse(j));
                }
            }
        }
        (equivalent.len() == order.len()).then_some(equivalent)
    }
}
