//! Definedness: a condition or loop bound with no value (division by zero, i64
//! overflow) stops that host thread's concrete walk, so no property is proved for every
//! parameter value while one exists. The smallest values where one has none are an
//! SG001 counterexample; the concrete run at them reports the same.

use z3::ast::{Bool, Int};

use super::{Counterexample, Outcome, Space};
use crate::diagnostic::Diagnostic;
use crate::smt::encode::{Encoder, Scope, Unbound};
use crate::smt::paths::{Evaluation, bind_loops};
use crate::smt::{Answer, Query, SmtOptions, value_of};

/// Every condition and loop bound of the host code has a value for every parameter value.
pub(crate) const PROPERTY: &str = "values-defined";

/// Why no host property can be proved, if some value can be undefined (the smallest
/// such values are pushed as a counterexample).
pub(super) fn check(
    space: &Space,
    evaluations: &[Evaluation],
    options: &SmtOptions,
    outcome: &mut Outcome,
) -> Option<String> {
    let mut smallest: Option<(Vec<i64>, Counterexample)> = None;
    let mut undecided = None;
    for evaluation in evaluations {
        match undefined_at(space, evaluation, options) {
            Ok(Answer::Holds(_)) => {}
            Ok(Answer::Fails(found)) => {
                if smallest.as_ref().is_none_or(|(params, _)| found.params < *params) {
                    smallest = Some((found.params.clone(), found));
                }
            }
            Ok(Answer::Unknown(reason)) => {
                undecided = Some(format!("whether {} always has a value: {reason}", evaluation.what))
            }
            Err(_) => undecided = Some(format!("{} uses a name z3 cannot bind there", evaluation.what)),
        }
    }
    if let Some((_, found)) = smallest {
        let reason = found
            .diagnostic
            .notes
            .first()
            .cloned()
            .unwrap_or_default()
            .replace("smallest counterexample (z3): ", "a value has none (SG007) with ");
        outcome.counterexamples.push(found);
        return Some(reason);
    }
    undecided.map(|what| format!("z3 cannot decide {what}"))
}

/// Whether, at parameter values `params`, some rank's walk reaches a value that has none
/// (or z3 cannot tell): that walk stops there, so what a property's encoding counts past
/// that point does not happen in the concrete run.
pub(super) fn undefined_with(space: &Space, evaluations: &[Evaluation], params: &[i64], options: &SmtOptions) -> bool {
    evaluations.iter().any(|evaluation| {
        let (rank, facts) = space.rank("rank");
        let query = space.query(options);
        query.assert(&Bool::and(&facts));
        for (param, &value) in space.scope.params.iter().zip(params) {
            query.assert(&param.eq(value));
        }
        let mut scope = space.scope.clone();
        scope.rank = Some(rank);
        assert_reached_without_value(&query, &scope, evaluation).is_err()
            || !matches!(query.solve(&[]), Answer::Holds(_))
    })
}

/// The smallest parameter values and rank where `evaluation` is reached and has no value.
fn undefined_at(
    space: &Space,
    evaluation: &Evaluation,
    options: &SmtOptions,
) -> Result<Answer<Counterexample>, Unbound> {
    let (rank, facts) = space.rank("rank");
    let query = space.query(options);
    query.assert(&Bool::and(&facts));
    let mut scope = space.scope.clone();
    scope.rank = Some(rank.clone());
    assert_reached_without_value(&query, &scope, evaluation)?;
    let mut objectives = space.objectives();
    objectives.push((rank.clone(), 0));
    Ok(match query.solve(&objectives) {
        Answer::Holds(core) => Answer::Holds(core),
        Answer::Unknown(reason) => Answer::Unknown(reason),
        Answer::Fails(model) => Answer::Fails(Counterexample {
            smallest: query.smallest(),
            ..counterexample(space, evaluation, &rank, &model)
        }),
    })
}

/// Asserts that the walk reaches `evaluation` in `scope` (its loops bound, its path
/// taken with every value on it defined) and that the value there has none.
pub(super) fn assert_reached_without_value(
    query: &Query,
    scope: &Scope,
    evaluation: &Evaluation,
) -> Result<(), Unbound> {
    let (bound, loop_facts) = bind_loops(&evaluation.loops, scope)?;
    for fact in &loop_facts {
        query.assert(fact);
    }
    let mut reach = Encoder::new(&bound);
    query.assert(&reach.guard(&evaluation.guard)?);
    query.assert(&reach.definedness());
    let mut value = Encoder::new(&bound);
    value.bool(evaluation.expr)?;
    query.assert(&value.definedness().not());
    Ok(())
}

fn counterexample(space: &Space, evaluation: &Evaluation, rank: &Int, model: &z3::Model) -> Counterexample {
    let (params, assignment) = space.assignment(model);
    let rank = value_of(model, rank);
    let diagnostic = Diagnostic::new(
        &crate::rules::UndefinedValue::INFO,
        evaluation.span.clone(),
        format!(
            "{} has no value on rank {rank} with {assignment}: it overflows a signed 64-bit integer or divides by zero",
            evaluation.what
        ),
    )
    .with_label(format!("no value with {assignment}"))
    .with_note(format!(
        "smallest counterexample (z3): {assignment}, rank {rank}: {} has no value",
        evaluation.what
    ))
    .with_help("guard the expression so that it is defined for every rank and parameter value");
    Counterexample {
        property: PROPERTY,
        params,
        diagnostic,
        smallest: true,
    }
}
