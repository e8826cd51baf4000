//! `next-task-start-once` and `wait-pre-task-end-once`: in every sub-kernel that calls
//! `SetNextTaskStart` (or `WaitPreTaskEnd`) at all, every core calls it exactly once, for
//! every TilingKey in the sub-kernel's domain, every core index and core type, and every
//! parameter value and rank the kernel code mentions.

use z3::Model;
use z3::ast::{Bool, Int};

use super::{Counterexample, Outcome, Space};
use crate::diagnostic::Diagnostic;
use crate::model::{OpKind, Program, SubKernel, SuperKernel};
use crate::smt::encode::Scope;
use crate::smt::paths::{Evaluation, PathOp, core_walk, count};
use crate::smt::{Answer, Proof, SmtOptions, Unproved, value_of};

/// A call every core makes exactly once.
struct Once {
    property: &'static str,
    is_call: fn(&OpKind) -> bool,
    api: &'static str,
    /// The rule for a core that never calls it while another does.
    never: &'static str,
    /// The rule for a core that calls it more than once.
    repeated: &'static str,
}

const PROPERTIES: [Once; 2] = [
    Once {
        property: "next-task-start-once",
        is_call: |kind| matches!(kind, OpKind::SetNextTaskStart { .. }),
        api: "SetNextTaskStart",
        never: "SG401",
        repeated: "SG402",
    },
    Once {
        property: "wait-pre-task-end-once",
        is_call: |kind| matches!(kind, OpKind::WaitPreTaskEnd { .. }),
        api: "WaitPreTaskEnd",
        never: "SG406",
        repeated: "SG406",
    },
];

/// The property whose rule has this code.
pub(super) fn refuted_by(code: &str) -> Option<&'static str> {
    PROPERTIES
        .iter()
        .find(|once| once.never == code || once.repeated == code)
        .map(|once| once.property)
}

/// `space` makes the parameter space on first use: a sub-kernel that calls neither API
/// needs no z3 term, so a kernel without them starts no z3 context.
pub(super) fn prove<'s, 'p: 's>(
    program: &'p Program,
    space: impl Fn() -> &'s Space<'p>,
    options: &SmtOptions,
    outcome: &mut Outcome,
) {
    for superkernel in &program.superkernels {
        for sub in &superkernel.subkernels {
            let (ops, evaluations) = match core_walk(program, &sub.body) {
                Ok(walk) => walk,
                Err(unsupported) => {
                    for once in &PROPERTIES {
                        outcome.unproved.push(Unproved::new(
                            once.property,
                            unsupported.reason.clone(),
                            unsupported.span.clone(),
                        ));
                    }
                    continue;
                }
            };
            // Asked only of a sub-kernel with a member: the answer matters to no other.
            let mut undefined = None;
            for once in &PROPERTIES {
                let members: Vec<&PathOp> = ops.iter().filter(|p| (once.is_call)(&p.op.kind)).collect();
                if members.is_empty() {
                    continue;
                }
                let space = space();
                match undefined.get_or_insert_with(|| undefined_value(space, sub, &evaluations, options)) {
                    Some((reason, span)) => {
                        outcome
                            .unproved
                            .push(Unproved::new(once.property, reason.clone(), span.clone()))
                    }
                    None => prove_once(space, superkernel, sub, &members, once, options, outcome),
                }
            }
        }
    }
}

/// Why no early-start property of `sub` is proved: a condition or loop bound that has no
/// value on some core for some parameter value. That core's concrete walk stops there,
/// a semantics the call counts do not encode; the concrete runs check such programs.
fn undefined_value(
    space: &Space,
    sub: &SubKernel,
    evaluations: &[Evaluation],
    options: &SmtOptions,
) -> Option<(String, crate::source::Span)> {
    for evaluation in evaluations {
        let (rank, rank_facts) = space.rank("rank");
        let core = core(space, sub, &rank);
        let query = space.query(options);
        query.assert(&Bool::and(&rank_facts));
        query.assert(&Bool::and(&core.facts));
        if super::defined::assert_reached_without_value(&query, &core.scope, evaluation).is_err() {
            let reason = format!("{} uses a name z3 cannot bind there", evaluation.what);
            return Some((reason, evaluation.span.clone()));
        }
        let reason = match query.solve(&[]) {
            Answer::Holds(_) => continue,
            Answer::Fails(model) => {
                let (_, assignment) = space.assignment(&model);
                let at = match assignment.is_empty() {
                    true => core.describe(&model),
                    false => format!("{}, {assignment}", core.describe(&model)),
                };
                format!("{} has no value on {at}, where that core's walk stops", evaluation.what)
            }
            Answer::Unknown(reason) => format!(
                "z3 cannot decide whether {} always has a value: {reason}",
                evaluation.what
            ),
        };
        return Some((reason, evaluation.span.clone()));
    }
    None
}

/// One core of a sub-kernel: its TilingKey, type and index, as z3 terms.
struct Core {
    scope: Scope,
    facts: Vec<Bool>,
    tiling_key: Int,
    is_aiv: Bool,
    block_idx: Int,
}

impl Core {
    /// "AIV core 0 with tiling key 3" in `model`.
    fn describe(&self, model: &Model) -> String {
        let aiv = model.eval(&self.is_aiv, true).and_then(|b| b.as_bool()).unwrap_or(true);
        format!(
            "{} core {} with tiling key {}",
            if aiv { "AIV" } else { "AIC" },
            value_of(model, &self.block_idx),
            value_of(model, &self.tiling_key)
        )
    }
}

/// A core on `rank`; two cores of one launch share the parameters and the rank.
fn core(space: &Space, sub: &SubKernel, rank: &Int) -> Core {
    let tiling_key = Int::fresh_const("tiling_key");
    let is_aiv = Bool::fresh_const("is_aiv");
    let block_idx = Int::fresh_const("block_idx");
    let keys: Vec<Bool> = sub.tiling_keys.iter().map(|&k| tiling_key.eq(k)).collect();
    let cores = is_aiv.ite(
        &Int::from_i64(sub.aiv_cores as i64),
        &Int::from_i64(sub.aic_cores as i64),
    );
    let facts = vec![Bool::or(&keys), block_idx.ge(0), block_idx.lt(&cores)];
    let mut scope = space.scope.clone();
    scope.rank = Some(rank.clone());
    scope.tiling_key = Some(tiling_key.clone());
    scope.is_aiv = Some(is_aiv.clone());
    scope.block_idx = Some(block_idx.clone());
    Core {
        scope,
        facts,
        tiling_key,
        is_aiv,
        block_idx,
    }
}

fn prove_once(
    space: &Space,
    superkernel: &SuperKernel,
    sub: &SubKernel,
    members: &[&PathOp],
    once: &Once,
    options: &SmtOptions,
    outcome: &mut Outcome,
) {
    let (name, api) = (once.property, once.api);
    let (rank, rank_facts) = space.rank("rank");
    let (this, other) = (core(space, sub, &rank), core(space, sub, &rank));
    let mut query = space.query(options);
    let mut calls = Vec::new();
    for core in [&this, &other] {
        let mut total = vec![Int::from_i64(0)];
        for (id, path) in members.iter().enumerate() {
            match count(path, &core.scope, &[]) {
                Ok(runs) => {
                    let runs_here = Int::fresh_const("runs");
                    query.assert_tracked(&runs_here.eq(&runs), id);
                    total.push(runs_here);
                }
                Err(error) => {
                    let unsupported = super::unsupported(space.program, path, error);
                    outcome
                        .unproved
                        .push(Unproved::new(name, unsupported.reason, unsupported.span));
                    return;
                }
            }
        }
        calls.push(Int::add(&total));
    }
    // Broken: a core calls it twice, or never while another core of the same launch
    // (same parameters; any tiling key) does. A launch where no core calls it is fine.
    query.assert(&Bool::and(&rank_facts));
    query.assert(&Bool::and(&this.facts));
    query.assert(&Bool::and(&other.facts));
    query.assert(&Bool::or(&[
        calls[0].ge(2),
        Bool::and(&[calls[0].eq(0), calls[1].ge(1)]),
    ]));
    let mut objectives = vec![
        (this.tiling_key.clone(), i64::MIN / 2),
        (this.is_aiv.ite(&Int::from_i64(0), &Int::from_i64(1)), 0),
        (this.block_idx.clone(), 0),
    ];
    objectives.extend(space.objectives());
    objectives.push((rank.clone(), 0));
    objectives.push((other.tiling_key.clone(), i64::MIN / 2));
    objectives.push((other.block_idx.clone(), 0));
    match query.solve(&objectives) {
        Answer::Holds(core) => outcome.proofs.push(Proof {
            property: name,
            scope: scope(space, sub),
            span: sub.span.clone(),
            because: core
                .into_iter()
                .map(|id| {
                    (
                        members[id].op.span.clone(),
                        format!("where {api} runs, on every path of every core"),
                    )
                })
                .collect(),
        }),
        Answer::Unknown(reason) => space.unknown(outcome, name, sub.span.clone(), &reason),
        Answer::Fails(model) => {
            let runs = value_of(&model, &calls[0]);
            let (code, how_often) = if runs == 0 {
                (
                    once.never,
                    format!("never calls {api}, while {} does", other.describe(&model)),
                )
            } else {
                (once.repeated, format!("calls {api} {runs} times"))
            };
            let (params, assignment) = space.assignment(&model);
            let with = if assignment.is_empty() {
                String::new()
            } else {
                format!(", {assignment}")
            };
            let at = this.describe(&model);
            let rule = crate::rules::find(code).expect("the early-start rules are in the catalogue");
            let diagnostic = Diagnostic::new(
                rule,
                members[0].op.span.clone(),
                format!(
                    "SuperKernel {} hangs: in sub-kernel {}, {at} {how_often}; every core must call it exactly once on every tiling key",
                    superkernel.name, sub.name
                ),
            )
            .with_label(format!("not exactly once on {at}"))
            .with_related(sub.span.clone(), format!("sub-kernel {} runs with tiling keys {:?}", sub.name, sub.tiling_keys))
            .with_note(format!("smallest counterexample (z3): {at}{with}: {api} runs {runs} time(s)"))
            .with_help(format!("call {api} once on every path: out of branches on GetBlockIdx(), TILING_KEY_IS() or the core type"));
            outcome.counterexamples.push(Counterexample {
                property: name,
                params,
                diagnostic,
                smallest: query.smallest(),
            });
        }
    }
}

/// "TilingKey in [1, 2], every AIV core, N in 2..=8".
fn scope(space: &Space, sub: &SubKernel) -> String {
    let keys: Vec<String> = sub.tiling_keys.iter().map(|k| k.to_string()).collect();
    let cores = match (sub.aiv_cores, sub.aic_cores) {
        (0, aic) => format!("all {aic} AIC cores"),
        (aiv, 0) => format!("all {aiv} AIV cores"),
        (aiv, aic) => format!("all {aiv} AIV and {aic} AIC cores"),
    };
    let mut text = format!("sub-kernel {}, TilingKey in [{}], {cores}", sub.name, keys.join(", "));
    if !space.program.params.is_empty() {
        text = format!("{text}, {}", space.describe());
    }
    text
}
