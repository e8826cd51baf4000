//! Execution orders that make a hazard happen, found by z3 over integer op times.
//!
//! Each op that can influence the hazard (the ops the hazard's ops depend on, less those
//! every one of them depends on) gets a time; every happens-before edge among them
//! (program order per stream and thread, host issue, host synchronize, signal match) is
//! `t(a) < t(b)`; the hazard adds its own order (`record < reset < wait`) and what must
//! not happen in between (no other record of the event lands between the reset and the
//! wait). `sat` gives the witness order; `unsat` means no schedule produces the hazard,
//! so the happens-before candidate is not reported.

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
    let hazard = Hazard {
        order: hazard.order,
        not_between: &not_between,
    };
    let keys: Vec<NodeId> = hazard
        .order
        .iter()
        .chain(hazard.not_between.iter().flat_map(|(a, m, b)| [a, m, b]))
        .copied()
        .collect();
    let Some(ops) = relevant_ops(analysis, &keys) else {
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

/// The ops `keys` depend on (and the keys), less those every key depends on: those run
/// before all of them in any case. `None` past `MAX_OPS`.
fn relevant_ops(analysis: &Analysis, keys: &[NodeId]) -> Option<Vec<NodeId>> {
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
        if ops.len() > MAX_OPS {
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
        Schedule::Possible { order, before } => out.push(diagnostic.with_note(describe(analysis, &order, before))),
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
