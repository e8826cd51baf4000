//! Memory-value synchronization (`aclrtValueWrite` / `aclrtValueWait`, CUDA's
//! `cuStreamWriteValue*` / `cuStreamWaitValue*`).
//!
//! A wait blocks its stream until the word satisfies its condition. Unlike a notify,
//! nothing is consumed: any write of a satisfying value lets every such wait pass until
//! another write changes the word. So a wait is matched by reachability in the graph
//! built so far, not by counting:
//! - its candidates are the writes of a satisfying value that no other write certainly
//!   overwrote before the wait (write → overwrite → wait in happens-before order);
//! - it is ordered after the candidate that precedes every other one (it completes
//!   after one of them, so after that one); when candidates on different queues are
//!   unordered, it is ordered after none, which can only add reported races;
//! - with no candidate it never passes (SG502), and a candidate that already happens
//!   before the wait makes it pass at once, whatever write it was meant for (SG308);
//! - a word nothing writes before the wait holds whatever the memory held (SG309).
//!
//! Any other write to the word before the wait (a memset, a copy, a kernel) counts as
//! setting it to a value that does not satisfy the wait: syncguard does not know the
//! bytes a memset or kernel writes.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};

use super::EdgeKind;
use crate::exec::{Access, Action, Execution, Memory, NodeId};

/// Most graph steps the matching may take (each wait costs at most six walks of the
/// graph); past it the waits are left unmatched and SG004 says so.
const MAX_STEPS: usize = 1_000_000_000;

/// How one memory-value wait was matched.
#[derive(Clone, Debug)]
pub struct ValueWaitMatch {
    pub wait: NodeId,
    /// Writes of a satisfying value not certainly overwritten before the wait.
    pub candidates: Vec<NodeId>,
    /// A candidate that already happens before the wait: it passes at once.
    pub already: Option<NodeId>,
    /// No write of the word happens before the wait.
    pub unset: bool,
}

#[derive(Debug, Default)]
pub struct ValueMatching {
    pub waits: Vec<ValueWaitMatch>,
    /// The program has more value waits than the matching can afford (`affordable`):
    /// none was matched, and SG004 says so.
    pub too_large: bool,
}

/// The word a value op or a memory write names.
type Word = (Memory, u64);

fn word(access: &Access) -> Word {
    (access.memory, access.start)
}

/// Matches every value wait, adds its edge to `graph`, and returns the waits nothing
/// satisfies (with the matches).
pub(super) fn match_values(exec: &Execution, graph: &mut DiGraph<(), EdgeKind, u32>) -> (ValueMatching, Vec<NodeId>) {
    let mut matching = ValueMatching::default();
    let mut unsatisfied = Vec::new();
    let waits: Vec<NodeId> = (0..exec.nodes.len() as u32)
        .map(NodeId)
        .filter(|&id| matches!(exec.node(id).action, Action::ValueWait { .. }))
        .collect();
    if waits.is_empty() {
        return (matching, unsatisfied);
    }
    if !affordable(exec) {
        matching.too_large = true;
        return (matching, unsatisfied);
    }
    let writes = value_writes(exec);
    for wait in waits {
        let Action::ValueWait {
            word: ref waited,
            value,
            condition,
            bits,
        } = exec.node(wait).action
        else {
            continue;
        };
        let key = word(waited);
        let before = reach(graph, &[wait], true);
        let same_word = writes.get(&key).map(Vec::as_slice).unwrap_or_default();
        let satisfies = |write: NodeId| match exec.node(write).action {
            Action::ValueWrite { value: written, .. } => condition.holds(written, value, bits),
            _ => false,
        };
        let overwrites: Vec<NodeId> = same_word
            .iter()
            .copied()
            .filter(|&w| before[w.index()] && !satisfies(w))
            .chain(other_writes_before(exec, key, &before))
            .collect();
        // A satisfying write that reaches an overwrite before the wait is gone by then.
        let overwritten = reach(graph, &overwrites, true);
        let candidates: Vec<NodeId> = same_word
            .iter()
            .copied()
            .filter(|&w| satisfies(w) && !overwritten[w.index()])
            .collect();
        let unset = !same_word.iter().any(|w| before[w.index()]) && overwrites.is_empty();
        let already = candidates.iter().copied().find(|c| before[c.index()]);
        let after = first_of(graph, &candidates);
        match (after, already) {
            (None, _) if candidates.is_empty() => unsatisfied.push(wait),
            (Some(write), None) => {
                graph.add_edge(
                    NodeIndex::new(write.index()),
                    NodeIndex::new(wait.index()),
                    EdgeKind::Match,
                );
            }
            _ => {}
        }
        matching.waits.push(ValueWaitMatch {
            wait,
            candidates,
            already,
            unset,
        });
    }
    (matching, unsatisfied)
}

/// Whether matching the value waits stays within `MAX_STEPS`: each wait walks the
/// graph (about three edges per node) at most six times.
pub fn affordable(exec: &Execution) -> bool {
    let waits = exec
        .nodes
        .iter()
        .filter(|node| matches!(node.action, Action::ValueWait { .. }))
        .count();
    waits
        .saturating_mul(6)
        .saturating_mul(exec.nodes.len().saturating_mul(4))
        <= MAX_STEPS
}

/// Every value write, by the word it writes, in node order.
fn value_writes(exec: &Execution) -> HashMap<Word, Vec<NodeId>> {
    let mut writes: HashMap<Word, Vec<NodeId>> = HashMap::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        if let Action::ValueWrite { word: ref written, .. } = node.action {
            writes.entry(word(written)).or_default().push(NodeId(index as u32));
        }
    }
    writes
}

/// Memory writes other than value writes that cover the word and happen before.
fn other_writes_before<'a>(exec: &'a Execution, key: Word, before: &'a [bool]) -> impl Iterator<Item = NodeId> + 'a {
    let (memory, start) = key;
    exec.nodes.iter().enumerate().filter_map(move |(index, node)| {
        let Action::Access(accesses) = &node.action else {
            return None;
        };
        let covers = accesses
            .iter()
            .any(|a| a.write && a.memory == memory && a.start <= start && start < a.end);
        (covers && before[index]).then_some(NodeId(index as u32))
    })
}

/// The candidate that reaches every other one, among the first `MAX_TRIES` in node
/// order (issue order puts the earliest write first in real code).
fn first_of(graph: &DiGraph<(), EdgeKind, u32>, candidates: &[NodeId]) -> Option<NodeId> {
    const MAX_TRIES: usize = 4;
    candidates.iter().copied().take(MAX_TRIES).find(|&c| {
        let later = reach(graph, &[c], false);
        candidates.iter().all(|&d| d == c || later[d.index()])
    })
}

/// The nodes that reach one of `from` (`backwards`) or that one of `from` reaches,
/// each of `from` included only if another one reaches it.
fn reach(graph: &DiGraph<(), EdgeKind, u32>, from: &[NodeId], backwards: bool) -> Vec<bool> {
    let mut seen = vec![false; graph.node_count()];
    let mut stack: Vec<NodeIndex<u32>> = from.iter().map(|n| NodeIndex::new(n.index())).collect();
    let direction = if backwards {
        petgraph::Direction::Incoming
    } else {
        petgraph::Direction::Outgoing
    };
    while let Some(node) = stack.pop() {
        for next in graph.neighbors_directed(node, direction) {
            if !seen[next.index()] {
                seen[next.index()] = true;
                stack.push(next);
            }
        }
    }
    seen
}
