//! Execution orders that make a hazard happen, found by z3 over integer op times.
//!
//! Each op that can influence the hazard (the ops the hazard's ops depend on, less those
//! every one of them depends on) gets a time; every happens-before edge among them
//! (program order per stream and thread, host issue, host synchronize, signal match) is
//! `t(a) < t(b)`; the hazard adds its own order (`record < reset < wait`) and what must
//! not happen in between (no other record of the event lands between the reset and the
//! wait). `sat` gives the witness order; `unsat` means no schedule produces the hazard,
//! so the happens-before candidate is not reported. A hazard with few "not in between"
//! constraints is decided on the happens-before graph instead, trying both sides of each
//! constraint: the same answer without a solver call.

use std::collections::{HashMap, HashSet};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use z3::ast::{Bool, Int};

use super::{Answer, Query, SmtOptions};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::NodeId;

/// Most ops one schedule query encodes; a hazard that depends on more is reported
/// from happens-before alone, without a witness.
const MAX_OPS: usize = 5_000;

/// A hazard: ops that must run in this order, and triples `(a, m, b)` where `m` must not
/// run between `a` and `b`.
pub(crate) struct Hazard<'h> {
    pub order: &'h [NodeId],
    pub not_between: &'h [(NodeId, NodeId, NodeId)],
}

/// What z3 says about a hazard.
enum Schedule {
    /// It can happen: the hazard's ops in the order of one such execution, and how many
    /// other ops that execution runs before the last of them.
    Possible { order: Vec<NodeId>, before: usize },
    /// No execution produces it.
    Impossible,
    /// Not decided: why.
    Unknown(String),
}

fn find(analysis: &Analysis, hazard: &Hazard, options: &SmtOptions) -> Schedule {
    let hb = analysis.hb;
    if !hazard.order.iter().all(|&n| hb.executes(n)) {
        return Schedule::Impossible;
    }
    // An op that never runs cannot come in between.
    let not_between: Vec<(NodeId, NodeId, NodeId)> = hazard
        .not_between
        .iter()
        .copied()
        .filter(|&(a, m, b)| hb.executes(a) && hb.executes(m) && hb.executes(b))
        .collect();
    if let Some(decided) = decide_on_graph(analysis, hazard.order, &not_between) {
        return decided;
    }
    let hazard = Hazard {
        order: hazard.order,
        not_between: &not_between,
    };
    decide_with_z3(analysis, &hazard, options)
}

/// One integer time per relevant op, happens-before edges as `<`, and the hazard's
/// constraints; a model is a witness execution.
fn decide_with_z3(analysis: &Analysis, hazard: &Hazard, options: &SmtOptions) -> Schedule {
    let keys: Vec<NodeId> = hazard
        .order
        .iter()
        .chain(hazard.not_between.iter().flat_map(|(a, m, b)| [a, m, b]))
        .copied()
        .collect();
    let Some(ops) = relevant_ops(analysis, &keys, MAX_OPS) else {
        return Schedule::Unknown(format!("it depends on more than {MAX_OPS} calls"));
    };
    let time: HashMap<NodeId, Int> = ops.iter().map(|&n| (n, Int::fresh_const("t"))).collect();
    let query = Query::new(options);
    for (&node, t) in &time {
        let index = NodeIndex::new(node.index());
        for source in analysis.hb.graph.neighbors_directed(index, Direction::Incoming) {
            if let Some(before) = time.get(&NodeId(source.index() as u32)) {
                query.assert(&before.lt(t));
            }
        }
    }
    for pair in hazard.order.windows(2) {
        query.assert(&time[&pair[0]].lt(&time[&pair[1]]));
    }
    for (a, m, b) in hazard.not_between {
        let inside = Bool::and(&[time[a].lt(&time[m]), time[m].lt(&time[b])]);
        query.assert(&inside.not());
    }
    match query.solve(&[]) {
        Answer::Holds(_) => Schedule::Impossible,
        Answer::Unknown(reason) => Schedule::Unknown(reason),
        Answer::Fails(model) => {
            let at = |node: &NodeId| super::value_of(&model, &time[node]);
            let mut order = hazard.order.to_vec();
            order.sort_by_key(at);
            let last = order.last().map_or(0, at);
            let before = ops.iter().filter(|n| !order.contains(n) && at(n) < last).count();
            Schedule::Possible { order, before }
        }
    }
}

/// Most open "not in between" constraints decided on the happens-before graph: each is
/// two choices, and every combination is tried. More go to z3.
const MAX_GRAPH_CHOICES: usize = 6;

/// Decide a hazard on the happens-before graph, without z3. "`m` does not run between
/// `a` and `b`" means `m` runs before `a` or after `b`: each choice adds an edge, and
/// the hazard happens when, for some choice, the hazard's order and the added edges close
/// no cycle with happens-before. The witness is the execution that runs only what must
/// come before the hazard's last op, the fewest for any choice. `None` past
/// `MAX_GRAPH_CHOICES` open constraints.
fn decide_on_graph(
    analysis: &Analysis,
    order: &[NodeId],
    not_between: &[(NodeId, NodeId, NodeId)],
) -> Option<Schedule> {
    let hb = analysis.hb;
    // Met in every execution: `m` is an end itself, or happens-before already puts it
    // outside.
    let open: Vec<_> = not_between
        .iter()
        .copied()
        .filter(|&(a, m, b)| m != a && m != b && !hb.happens_before(m, a) && !hb.happens_before(b, m))
        .collect();
    if open.len() > MAX_GRAPH_CHOICES {
        return None;
    }
    let keys: Vec<NodeId> = order
        .iter()
        .copied()
        .chain(not_between.iter().flat_map(|&(a, m, b)| [a, m, b]))
        .collect();
    let ops = relevant_ops(analysis, &keys, usize::MAX).unwrap_or_default();
    let fewest_before = (0..1usize << open.len())
        .filter_map(|choice| {
            let mut edges: Vec<(NodeId, NodeId)> = order.windows(2).map(|pair| (pair[0], pair[1])).collect();
            for (i, &(a, m, b)) in open.iter().enumerate() {
                edges.push(if choice & (1 << i) == 0 { (m, a) } else { (b, m) });
            }
            runs_before_last(analysis, order, &edges, &ops)
        })
        .min();
    Some(match fewest_before {
        Some(before) => Schedule::Possible {
            order: order.to_vec(),
            before,
        },
        None => Schedule::Impossible,
    })
}

/// With `edges` added to happens-before: `None` when they close a cycle, else how many of
/// `ops` (other than `order`'s) must run before the last op of `order`. A cycle must use
/// an added edge, so the closure over the edges' ends (happens-before between them plus
/// the edges) finds it.
fn runs_before_last(
    analysis: &Analysis,
    order: &[NodeId],
    edges: &[(NodeId, NodeId)],
    ops: &[NodeId],
) -> Option<usize> {
    let hb = analysis.hb;
    let last = *order.last()?;
    let mut points: Vec<NodeId> = edges.iter().flat_map(|&(u, v)| [u, v]).chain([last]).collect();
    points.sort();
    points.dedup();
    let at = |node: NodeId| points.binary_search(&node).expect("an end of an edge");
    let n = points.len();
    let mut reach: Vec<Vec<bool>> = points
        .iter()
        .map(|&u| points.iter().map(|&v| hb.happens_before(u, v)).collect())
        .collect();
    for &(u, v) in edges {
        reach[at(u)][at(v)] = true;
    }
    for k in 0..n {
        let through = reach[k].clone();
        for row in reach.iter_mut().filter(|row| row[k]) {
            for (cell, &onward) in row.iter_mut().zip(&through) {
                *cell |= onward;
            }
        }
    }
    if (0..n).any(|i| reach[i][i]) {
        return None;
    }
    let last_at = at(last);
    let before_last: Vec<NodeId> = (0..n)
        .filter(|&i| i == last_at || reach[i][last_at])
        .map(|i| points[i])
        .collect();
    let before = ops
        .iter()
        .filter(|&&node| !order.contains(&node))
        .filter(|&&node| before_last.iter().any(|&p| node == p || hb.happens_before(node, p)))
        .count();
    Some(before)
}

/// The ops `keys` depend on (and the keys), less those every key depends on: those run
/// before all of them in any case. `None` past `limit`.
fn relevant_ops(analysis: &Analysis, keys: &[NodeId], limit: usize) -> Option<Vec<NodeId>> {
    let hb = analysis.hb;
    let mut seen: HashSet<NodeId> = HashSet::new();
    let mut stack: Vec<NodeId> = keys.to_vec();
    let mut ops = Vec::new();
    while let Some(node) = stack.pop() {
        if !seen.insert(node) || !hb.executes(node) {
            continue;
        }
        let common = !keys.contains(&node) && keys.iter().all(|&k| hb.happens_before(node, k));
        if common {
            continue;
        }
        ops.push(node);
        if ops.len() > limit {
            return None;
        }
        let index = NodeIndex::new(node.index());
        stack.extend(
            hb.graph
                .neighbors_directed(index, Direction::Incoming)
                .map(|n| NodeId(n.index() as u32)),
        );
    }
    ops.sort();
    Some(ops)
}

/// Most hazards one rule confirms with z3 in one execution; the rest are reported from
/// happens-before alone (a long trace can hold thousands of instances of one bug).
pub(crate) const MAX_CONFIRMED: usize = 64;

/// Decide a happens-before candidate with z3: report it with its witness schedule, drop
/// it when no schedule produces it, or report it unconfirmed plus SG004 when z3 cannot
/// tell. `budget` counts down the `MAX_CONFIRMED` queries of the calling rule.
pub(crate) fn confirm(
    analysis: &Analysis,
    hazard: &Hazard,
    diagnostic: Diagnostic,
    budget: &mut usize,
    out: &mut Vec<Diagnostic>,
) {
    if *budget == 0 {
        out.push(diagnostic);
        return;
    }
    *budget -= 1;
    match find(analysis, hazard, analysis.smt) {
        Schedule::Possible { order, before } => {
            let focus = crate::window::Focus {
                nodes: &order,
                highlight: crate::timeline::Highlight::Witness,
                race: false,
            };
            let diagnostic = crate::window::with_timeline(analysis, diagnostic, &focus);
            out.push(diagnostic.with_note(describe(analysis, &order, before)));
        }
        Schedule::Impossible => {}
        Schedule::Unknown(reason) => {
            let property = format!("{} {}", diagnostic.code, diagnostic.name);
            out.push(super::solver_unknown(
                &property,
                diagnostic.primary.clone(),
                &reason,
                "reported from happens-before alone, which may be a false alarm",
            ));
            out.push(diagnostic);
        }
    }
}

/// "an execution order where it happens (z3): X, then Y, then Z (with N other calls before)".
fn describe(analysis: &Analysis, order: &[NodeId], before: usize) -> String {
    let steps: Vec<String> = order.iter().map(|&n| analysis.describe(n)).collect();
    let others = match before {
        0 => String::new(),
        1 => " (with 1 other call before)".to_string(),
        n => format!(" (with {n} other calls before)"),
    };
    format!(
        "an execution order where it happens (z3): {}{others}",
        steps.join(", then ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::instantiate;
    use crate::hb::HappensBefore;
    use crate::{Sources, check_sync_bytes};

    /// The graph decision and z3 agree on every hazard over a program with two host
    /// threads and a shared stream, and the graph's witness never runs more calls first.
    #[test]
    fn the_graph_decides_as_z3_does() {
        let text = "let s = aclrtCreateStream(); let s2 = aclrtCreateStream();
            let e = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
            aclrtRecordEvent(e, s); kernel(s, \"a\"); aclrtStreamWaitEvent(s2, e);
            thread w { kernel(s, \"b\"); aclrtRecordEvent(e, s); aclrtResetEvent(e, s2); kernel(s2, \"c\"); }
            kernel(s2, \"d\"); aclrtRecordEvent(e, s2); aclrtSynchronizeStream(s2);";
        let checked = check_sync_bytes(&mut Sources::default(), "t.sync", text.as_bytes());
        let exec = instantiate(&checked.program, Vec::new());
        let hb = HappensBefore::build(&exec).expect("a small execution");
        let options = SmtOptions::default();
        let analysis = Analysis {
            program: &checked.program,
            exec: &exec,
            hb: &hb,
            smt: &options,
        };
        let nodes: Vec<NodeId> = (0..exec.nodes.len() as u32)
            .map(NodeId)
            .filter(|&n| hb.executes(n))
            .collect();
        assert!(nodes.len() >= 12, "{}", nodes.len());
        // A fixed pseudo-random walk over hazards: 2 to 3 ops in order, 0 to 3 triples.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut pick = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let (mut possible, mut impossible) = (0, 0);
        for _ in 0..400 {
            let order: Vec<NodeId> = (0..2 + pick(2)).map(|_| nodes[pick(nodes.len())]).collect();
            let not_between: Vec<_> = (0..pick(4))
                .map(|_| {
                    (
                        nodes[pick(nodes.len())],
                        nodes[pick(nodes.len())],
                        nodes[pick(nodes.len())],
                    )
                })
                .collect();
            let hazard = Hazard {
                order: &order,
                not_between: &not_between,
            };
            let graph = decide_on_graph(&analysis, &order, &not_between).expect("few constraints");
            match (graph, decide_with_z3(&analysis, &hazard, &options)) {
                (Schedule::Possible { before: g, .. }, Schedule::Possible { before: z, .. }) => {
                    assert!(g <= z, "{order:?} {not_between:?}: {g} > {z}");
                    possible += 1;
                }
                (Schedule::Impossible, Schedule::Impossible) => impossible += 1,
                _ => panic!("{order:?} {not_between:?}: the graph and z3 disagree"),
            }
        }
        assert!(
            possible > 50 && impossible > 50,
            "{possible} possible, {impossible} impossible"
        );
    }
}
