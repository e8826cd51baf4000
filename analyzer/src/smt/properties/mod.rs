//! Properties proved for every value of a Program's parameters (every rank count `N` in
//! its range, every other `param`), or refuted with the smallest counterexample:
//! - `notify-index-in-range` (SG302): every notify index is below its `notifyNum`;
//! - `handle-index-in-range` (SG605): every `array[i]` a call names is in its array;
//! - `notify-balance` (SG301, SG502): for every pair of ranks and every notify index, the
//!   records into the flag equal the peer's waits on it, so no wait lacks its record;
//! - `next-task-start-once`, `wait-pre-task-end-once` (SG401, SG402, SG406): on every
//!   core, for every TilingKey in its domain, exactly once (or on no core at all).
//!
//! A counterexample is handed back as the parameter values to run concretely: the
//! happens-before rules then report it with every involved call, and the solver's note
//! (which rank, which index, which TilingKey) is added to their finding.

pub(crate) mod core_counts;
mod defined;
pub(crate) mod loop_reach;

pub(crate) use defined::PROPERTY as VALUES_DEFINED;
mod early_start;
mod handle_index;
mod notify_balance;
mod notify_index;

use std::cell::OnceCell;

use z3::Model;
use z3::ast::{Bool, Int};

use super::encode::Scope;
use super::paths::{CountError, Evaluation, PathOp, Unsupported, host_evaluations, host_ops};
use super::{Proof, Query, SmtOptions, Unproved, solver_unknown, value_of};
use crate::diagnostic::Diagnostic;
use crate::model::{Program, RankCount};
use crate::source::Span;

/// The property a concrete finding refutes: a run that reports this rule's code violates
/// it at that run's parameter values.
pub(crate) fn refuted_by(code: &str) -> Option<&'static str> {
    match code {
        "SG301" => Some(notify_balance::PROPERTY),
        "SG302" => Some(notify_index::PROPERTY),
        "SG605" => Some(handle_index::PROPERTY),
        _ => early_start::refuted_by(code),
    }
}

/// What the prover found for one Program.
#[derive(Default)]
pub(crate) struct Outcome {
    pub proofs: Vec<Proof>,
    pub unproved: Vec<Unproved>,
    /// SG004 notices.
    pub unknown: Vec<Diagnostic>,
    pub counterexamples: Vec<Counterexample>,
}

/// A property that fails for some parameter values: the smallest ones.
pub(crate) struct Counterexample {
    /// The property it refutes.
    pub property: &'static str,
    /// The parameter values (by `ParamId`) to instantiate.
    pub params: Vec<i64>,
    /// The finding as the solver sees it; reported as is when no concrete rule does.
    pub diagnostic: Diagnostic,
    /// Its values are the smallest (the search for smaller ones finished in time).
    pub smallest: bool,
}

/// How a counterexample's note begins.
const SMALLEST: &str = "smallest counterexample (z3)";
const NOT_SMALLEST: &str = "counterexample (z3; a smaller one may exist: the search for it ran out of time)";

/// Prove every property that applies to `program`.
pub(crate) fn prove(program: &Program, options: &SmtOptions) -> Outcome {
    let mut outcome = Outcome::default();
    if program.params.is_empty() && program.superkernels.is_empty() {
        // Nothing symbolic: the concrete run decides everything (and z3 is not started).
        return outcome;
    }
    // The z3 terms are made at the first property that needs them: a kernel that calls
    // no early-start API starts no z3 context (some 4,000 page faults).
    let made = OnceCell::new();
    let lazy_space = || made.get_or_init(|| Space::new(program));
    if !program.params.is_empty() {
        match host_ops(program) {
            Ok(ops) => {
                let evaluations = host_evaluations(program).unwrap_or_default();
                if host_properties_ask(program, &ops, &evaluations) {
                    prove_host(lazy_space(), (&ops, &evaluations), options, &mut outcome);
                }
            }
            Err(unsupported) => {
                let arrays = program.objects.iter().any(|object| object.array.is_some());
                let properties = [notify_index::PROPERTY, handle_index::PROPERTY, notify_balance::PROPERTY];
                for property in properties
                    .into_iter()
                    .filter(|p| arrays || *p != handle_index::PROPERTY)
                {
                    outcome.unproved.push(Unproved::new(
                        property,
                        unsupported.reason.clone(),
                        unsupported.span.clone(),
                    ));
                }
            }
        }
    }
    early_start::prove(program, lazy_space, options, &mut outcome);
    for found in outcome.counterexamples.iter_mut().filter(|found| !found.smallest) {
        for note in &mut found.diagnostic.notes {
            if let Some(rest) = note.strip_prefix(SMALLEST) {
                *note = format!("{NOT_SMALLEST}{rest}");
            }
        }
    }
    outcome
}

/// The host properties, over the host walk's ops and the values it evaluates.
fn prove_host(
    space: &Space,
    (ops, evaluations): (&[PathOp], &[Evaluation]),
    options: &SmtOptions,
    outcome: &mut Outcome,
) {
    notify_index::prove(space, ops, options, outcome);
    handle_index::prove(space, ops, options, outcome);
    notify_balance::prove(space, ops, options, outcome);
    if let Some(reason) = defined::check(space, evaluations, options, outcome) {
        unprove_host_properties(outcome, &reason);
        // A host counterexample where some walk stops early is not one the run
        // at its values shows; the concrete runs report what does happen there.
        outcome.counterexamples.retain(|found| {
            found.property == defined::PROPERTY || !defined::undefined_with(space, evaluations, &found.params, options)
        });
    }
}

/// Whether a host property has anything to ask z3 about: a notify use (notify-index,
/// notify-balance), a handle of an array element (handle-index), or a condition or loop
/// bound (values-defined). Without any, each of them returns without a term or a
/// proof, so the parameter space (a z3 context, some 4,200 page faults, where the
/// thread has none yet) is not made for them.
fn host_properties_ask(program: &Program, ops: &[PathOp], evaluations: &[Evaluation]) -> bool {
    !evaluations.is_empty()
        || ops.iter().any(|path| {
            notify_use(path.op).is_some() || !handle_index::named_elements(program, &path.op.kind).is_empty()
        })
}

/// A host property is not proved while some value the host walk needs can be undefined:
/// the walk stops there, which no property's encoding accounts for in every shape.
fn unprove_host_properties(outcome: &mut Outcome, reason: &str) {
    let (host, others): (Vec<Proof>, Vec<Proof>) = std::mem::take(&mut outcome.proofs).into_iter().partition(|p| {
        [notify_index::PROPERTY, handle_index::PROPERTY, notify_balance::PROPERTY].contains(&p.property)
    });
    outcome.proofs = others;
    for proof in host {
        outcome
            .unproved
            .push(Unproved::new(proof.property, reason.to_string(), proof.span));
    }
}

/// The parameter space: a z3 constant per parameter, with its declared range.
pub(crate) struct Space<'p> {
    pub program: &'p Program,
    pub scope: Scope,
    pub domain: Vec<Bool>,
    /// The number of ranks (the `ranks` parameter, or the fixed count).
    pub ranks: Int,
}

impl<'p> Space<'p> {
    fn new(program: &'p Program) -> Self {
        crate::smt::note_thread_context_used();
        let mut scope = Scope::default();
        let mut domain = Vec::new();
        for param in &program.params {
            let value = Int::new_const(param.name.as_str());
            domain.push(value.ge(param.min));
            // The concrete runs compute in i64: so are the parameters.
            domain.push(value.le(param.max.unwrap_or(i64::MAX)));
            scope.params.push(value);
        }
        let ranks = match program.settings.ranks {
            RankCount::Fixed(n) => Int::from_i64(n as i64),
            RankCount::Param(id) => scope.params[id.index()].clone(),
        };
        Space {
            program,
            scope,
            domain,
            ranks,
        }
    }

    /// "N in 2..=1024, K in 1..=4": what a proof covers.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .program
            .params
            .iter()
            .map(|p| match p.max {
                Some(max) => format!("{} in {}..={max}", p.name, p.min),
                None => format!("every {} >= {}", p.name, p.min),
            })
            .collect();
        if parts.is_empty() {
            "every run".into()
        } else {
            parts.join(", ")
        }
    }

    /// Where proofs about the whole program point: the first parameter's declaration.
    pub fn span(&self) -> Span {
        self.program.params.first().map_or_else(
            || self.program.threads[Program::MAIN_THREAD.index()].span.clone(),
            |p| p.span.clone(),
        )
    }

    /// A fresh rank in `0..ranks`, with the facts that bound it.
    pub fn rank(&self, name: &str) -> (Int, [Bool; 2]) {
        let rank = Int::fresh_const(name);
        let facts = [rank.ge(0), rank.lt(&self.ranks)];
        (rank, facts)
    }

    /// A query with the parameter domains asserted.
    pub fn query(&self, options: &SmtOptions) -> Query {
        let query = Query::new(options);
        for fact in &self.domain {
            query.assert(fact);
        }
        query
    }

    /// Objectives for the smallest counterexample: the parameters in declaration order.
    pub fn objectives(&self) -> Vec<(Int, i64)> {
        self.scope
            .params
            .iter()
            .zip(&self.program.params)
            .map(|(value, param)| (value.clone(), param.min))
            .collect()
    }

    /// The parameter values of a counterexample, and "N = 3" for messages.
    pub fn assignment(&self, model: &Model) -> (Vec<i64>, String) {
        let values: Vec<i64> = self.scope.params.iter().map(|p| value_of(model, p)).collect();
        let text: Vec<String> = self
            .program
            .params
            .iter()
            .zip(&values)
            .map(|(p, v)| format!("{} = {v}", p.name))
            .collect();
        (values, text.join(", "))
    }

    /// `property` holds for every parameter value.
    fn proved(&self, outcome: &mut Outcome, property: &'static str, because: Vec<(Span, String)>) {
        outcome.proofs.push(Proof {
            property,
            scope: self.describe(),
            span: self.span(),
            because,
        });
    }

    fn unknown(&self, outcome: &mut Outcome, property: &'static str, span: Span, reason: &str) {
        outcome.unknown.push(solver_unknown(
            property,
            span.clone(),
            reason,
            "the property is checked only on the concrete runs (the smallest parameter values)",
        ));
        outcome.unproved.push(Unproved::new(property, reason.to_string(), span));
    }
}

/// Why a property's encoding does not cover `path`, for the "not proved" line.
fn unsupported(program: &Program, path: &PathOp, error: CountError) -> Unsupported {
    let reason = match error {
        CountError::LoopDependent(var) => format!(
            "what {} targets depends on loop variable `{}`, whose loop bounds are not constants",
            path.op.api,
            program.vars[var.index()].name
        ),
        CountError::Unbound(super::encode::Unbound::Var(var)) => format!(
            "{} uses an object whose attributes depend on loop variable `{}` of the loop that created it",
            path.op.api,
            program.vars[var.index()].name
        ),
        CountError::Unbound(super::encode::Unbound::Builtin(name)) => {
            format!("{} uses `{name}` outside the code it belongs to", path.op.api)
        }
    };
    Unsupported {
        reason,
        span: path.op.span.clone(),
    }
}

/// Which side of a notify an op is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Record,
    Wait,
}

/// The notifies an op's index selects from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Via {
    /// The peer's notifies behind a channel (record), or this end's (wait).
    Channel(crate::model::ObjId),
    /// An HCCL thread's notifies: the destination of a record, the waiting thread.
    Thread(crate::model::ObjId),
    /// An ACL notify (one flag).
    Acl(crate::model::ObjId),
}

/// A record into or a wait on a notify flag.
struct NotifyUse<'p> {
    side: Side,
    via: Via,
    index: &'p crate::model::Expr,
}

static ZERO: crate::model::Expr = crate::model::Expr::Int(0);

fn notify_use(op: &crate::model::Op) -> Option<NotifyUse<'_>> {
    use crate::model::OpKind;
    let (side, via, index) = match &op.kind {
        OpKind::ChannelNotifyRecord { .. } | OpKind::RemoteWrite { .. } => {
            let (channel, index) = op.kind.channel_notify_record()?;
            (Side::Record, Via::Channel(channel), index)
        }
        OpKind::ChannelNotifyWait { channel, index, .. } => (Side::Wait, Via::Channel(*channel), index),
        OpKind::ThreadNotifyRecord { target, index, .. } => (Side::Record, Via::Thread(*target), index),
        OpKind::ThreadNotifyWait { thread, index, .. } => (Side::Wait, Via::Thread(*thread), index),
        OpKind::NotifyRecord { notify, .. } => (Side::Record, Via::Acl(*notify), &ZERO),
        OpKind::NotifyWait { notify, .. } => (Side::Wait, Via::Acl(*notify), &ZERO),
        _ => return None,
    };
    Some(NotifyUse { side, via, index })
}
