//! `notify-index-in-range`: for every parameter value, rank and loop iteration that
//! reaches a notify call, its index is in `0..notifyNum` of the channel or thread.

use z3::ast::{Bool, Int};

use super::{Counterexample, NotifyUse, Outcome, Space, Via, notify_use, unsupported};
use crate::diagnostic::Diagnostic;
use crate::model::{Expr, ObjectKind};
use crate::smt::encode::{Encoder, Unbound};
use crate::smt::paths::{CountError, PathOp, bind_loops};
use crate::smt::{Answer, SmtOptions, Unproved, value_of};
use crate::source::Span;

pub(super) const PROPERTY: &str = "notify-index-in-range";

/// Tracked facts of one query, for "proved because".
const FACT_RANKS: usize = 0;
const FACT_PATH: usize = 1;
const FACT_COUNT: usize = 2;

pub(super) fn prove(space: &Space, ops: &[PathOp], options: &SmtOptions, outcome: &mut Outcome) {
    let mut because: Vec<(Span, String)> = Vec::new();
    let mut failed = false;
    let mut checked = 0;
    for path in ops {
        let Some(used) = notify_use(path.op) else {
            continue;
        };
        let Some((object_span, count, what)) = notify_count(space, used.via) else {
            continue;
        };
        checked += 1;
        match check_op(space, path, &used, count, options) {
            Ok(Answer::Holds(core)) => {
                for fact in core {
                    let why = match fact {
                        FACT_RANKS => (space.span(), "the declared parameter range".to_string()),
                        FACT_PATH => (
                            path.op.span.clone(),
                            format!("where {} runs, and its index", path.op.api),
                        ),
                        _ => (object_span.clone(), what.clone()),
                    };
                    if !because.contains(&why) {
                        because.push(why);
                    }
                }
            }
            Ok(Answer::Fails(found)) => {
                failed = true;
                outcome.counterexamples.push(found);
            }
            Ok(Answer::Unknown(reason)) => {
                failed = true;
                space.unknown(outcome, PROPERTY, path.op.span.clone(), &reason);
            }
            Err(error) => {
                failed = true;
                let unsupported = unsupported(space.program, path, CountError::Unbound(error));
                outcome
                    .unproved
                    .push(Unproved::new(PROPERTY, unsupported.reason, unsupported.span));
            }
        }
    }
    if checked > 0 && !failed {
        because.sort_by_key(|(span, why)| (span.file.0, span.range.start, why.clone()));
        space.proved(outcome, PROPERTY, because);
    }
}

/// The expression for how many notifies `via` has, where it was acquired, and what it is
/// called ("notifyNum of channel to_next").
pub(super) fn notify_count<'p>(space: &Space<'p>, via: Via) -> Option<(Span, &'p Expr, String)> {
    let (Via::Channel(obj) | Via::Thread(obj)) = via else {
        return None;
    };
    let object = space.program.object(obj);
    let count = match &object.kind {
        ObjectKind::Channel(info) => &info.notify_num,
        ObjectKind::HcclThread { notify_num, .. } => notify_num,
        _ => return None,
    };
    let what = format!("notifyNum of {} {}", object.kind.noun(), object.name);
    Some((object.span.clone(), count, what))
}

fn check_op(
    space: &Space,
    path: &PathOp,
    used: &NotifyUse,
    count: &Expr,
    options: &SmtOptions,
) -> Result<Answer<Counterexample>, Unbound> {
    let (rank, rank_facts) = space.rank("rank");
    let mut scope = space.scope.clone();
    scope.rank = Some(rank.clone());
    let (bound, loop_facts) = bind_loops(&path.loops, &scope)?;
    let mut encoder = Encoder::new(&bound);
    let index = encoder.int(used.index)?;
    let limit = encoder.int(count)?;
    let runs = Bool::and(&[encoder.guard(&path.guard)?, encoder.definedness()]);
    let mut query = space.query(options);
    query.assert_tracked(&Bool::and(&rank_facts), FACT_RANKS);
    query.assert_tracked(&Bool::and(&[Bool::and(&loop_facts), runs]), FACT_PATH);
    let (index_value, limit_value) = (Int::fresh_const("index"), Int::fresh_const("count"));
    query.assert(&index_value.eq(&index));
    query.assert_tracked(&limit_value.eq(&limit), FACT_COUNT);
    query.assert(&Bool::or(&[index_value.lt(0), index_value.ge(&limit_value)]));
    let mut objectives = space.objectives();
    objectives.push((rank.clone(), 0));
    let loop_vars: Vec<Int> = path.loops.iter().map(|lp| bound.vars[&lp.var].clone()).collect();
    for (lp, var) in path.loops.iter().zip(&loop_vars) {
        objectives.push((var.clone(), lp.start.as_const().unwrap_or(0)));
    }
    Ok(match query.solve(&objectives) {
        Answer::Holds(core) => Answer::Holds(core),
        Answer::Unknown(reason) => Answer::Unknown(reason),
        Answer::Fails(model) => {
            let (params, assignment) = space.assignment(&model);
            let iteration: Vec<String> = path
                .loops
                .iter()
                .zip(&loop_vars)
                .map(|(lp, var)| {
                    format!(
                        "{} = {}",
                        space.program.vars[lp.var.index()].name,
                        value_of(&model, var)
                    )
                })
                .collect();
            let at = if iteration.is_empty() {
                String::new()
            } else {
                format!(" at {}", iteration.join(", "))
            };
            let (index, limit) = (value_of(&model, &index_value), value_of(&model, &limit_value));
            let note = format!(
                "smallest counterexample (z3): {assignment}, rank {}{at}: index {index} of {limit} notifies",
                value_of(&model, &rank)
            );
            let rule = crate::rules::find("SG302").expect("SG302 is in the catalogue");
            let diagnostic = Diagnostic::new(
                rule,
                path.op.span.clone(),
                format!("{} uses notify index {index}, but only {limit} notifies exist: its signal never arrives and the peer's wait times out", path.op.api),
            )
            .with_label(format!("index {index} with {assignment}"))
            .with_note(note)
            .with_help("acquire the channel or thread with as many notifies as the protocol uses, or keep the index below the count");
            Answer::Fails(Counterexample {
                property: PROPERTY,
                params,
                diagnostic,
                smallest: query.smallest(),
            })
        }
    })
}
