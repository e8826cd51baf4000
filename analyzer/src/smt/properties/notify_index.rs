//! `notify-index-in-range`: for every parameter value, rank and loop iteration that
//! reaches a notify call, its index is in `0..notifyNum` of the channel or thread.

use z3::ast::{Bool, Int};

use super::{Counterexample, NotifyUse, Outcome, SMALLEST, Space, Via, notify_use, unsupported};
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
        match check_op(space, path, &used, &count, options) {
            Ok(Answer::Holds(core)) => add_reasons(space, path, &core, (&object_span, &what), &mut because),
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
pub(super) fn notify_count<'p>(space: &Space<'p>, via: Via) -> Option<(Span, Expr, String)> {
    let (Via::Channel(obj) | Via::Thread(obj)) = via else {
        return None;
    };
    let program = space.program;
    let object = program.object(program.base(obj));
    let count = match &object.kind {
        ObjectKind::Channel(info) => &info.notify_num,
        ObjectKind::HcclThread { notify_num, .. } => notify_num,
        _ => return None,
    };
    let name = &program.object(obj).shown();
    let what = format!("notifyNum of {} {name}", object.kind.noun());
    Some((object.span.clone(), program.attribute_of(obj, count), what))
}

fn check_op(
    space: &Space,
    path: &PathOp,
    used: &NotifyUse,
    count: &Expr,
    options: &SmtOptions,
) -> Result<Answer<Counterexample>, Unbound> {
    Ok(match in_range(space, path, used.index, count, None, options)? {
        Answer::Holds(core) => Answer::Holds(core),
        Answer::Unknown(reason) => Answer::Unknown(reason),
        Answer::Fails(miss) => {
            let RangeMiss {
                index,
                limit,
                ref assignment,
                ..
            } = miss;
            let note = format!("{SMALLEST}: {}: index {index} of {limit} notifies", miss.place());
            let rule = crate::rules::find("SG302").expect("SG302 is in the catalogue");
            let diagnostic = Diagnostic::new(
                rule,
                path.op.span.clone(),
                format!("{} uses notify index {index}, but only {limit} notifies exist: its signal never arrives and the peer's wait times out", path.op.api),
            )
            .with_label(format!("index {index} with {assignment}"))
            .with_note(note)
            .with_help("acquire the channel or thread with as many notifies as the protocol uses, or keep the index below the count");
            Answer::Fails(miss.counterexample(PROPERTY, diagnostic))
        }
    })
}

/// Why an in-range proof holds, from the facts of its unsat core: the parameter range,
/// where the call runs, and `count` (where the limit is set, and what it is).
pub(super) fn add_reasons(
    space: &Space,
    path: &PathOp,
    core: &[usize],
    count: (&Span, &String),
    because: &mut Vec<(Span, String)>,
) {
    for &fact in core {
        let why = match fact {
            FACT_RANKS => (space.span(), "the declared parameter range".to_string()),
            FACT_PATH => (
                path.op.span.clone(),
                format!("where {} runs, and its index", path.op.api),
            ),
            _ => (count.0.clone(), count.1.clone()),
        };
        if !because.contains(&why) {
            because.push(why);
        }
    }
}

/// Where `index` falls outside `0..limit`: the smallest parameter values, rank and
/// loop iteration that reach the call with such an index.
pub(super) struct RangeMiss {
    pub params: Vec<i64>,
    /// "N = 3"
    pub assignment: String,
    pub rank: i64,
    /// "i = 2, j = 0", empty outside loops.
    pub iteration: String,
    pub index: i64,
    pub limit: i64,
    pub smallest: bool,
}

impl RangeMiss {
    /// "N = 3, rank 0 at i = 2"
    pub fn place(&self) -> String {
        let at = if self.iteration.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.iteration)
        };
        format!("{}, rank {}{at}", self.assignment, self.rank)
    }

    pub fn counterexample(self, property: &'static str, diagnostic: Diagnostic) -> Counterexample {
        Counterexample {
            property,
            params: self.params,
            diagnostic,
            smallest: self.smallest,
        }
    }
}

/// Whether `index` is in `0..limit` wherever `path` runs, for every parameter value,
/// rank and loop iteration; only where `limit` is at least `least`, if given (a count
/// below it is reported as another finding).
pub(super) fn in_range(
    space: &Space,
    path: &PathOp,
    index: &Expr,
    limit: &Expr,
    least: Option<i64>,
    options: &SmtOptions,
) -> Result<Answer<RangeMiss>, Unbound> {
    let (rank, rank_facts) = space.rank("rank");
    let mut scope = space.scope.clone();
    scope.rank = Some(rank.clone());
    let (bound, loop_facts) = bind_loops(&path.loops, &scope)?;
    let mut encoder = Encoder::new(&bound);
    let index = encoder.int(index)?;
    let limit = encoder.int(limit)?;
    let runs = Bool::and(&[encoder.guard(&path.guard)?, encoder.definedness()]);
    let mut query = space.query(options);
    query.assert_tracked(&Bool::and(&rank_facts), FACT_RANKS);
    query.assert_tracked(&Bool::and(&[Bool::and(&loop_facts), runs]), FACT_PATH);
    let (index_value, limit_value) = (Int::fresh_const("index"), Int::fresh_const("count"));
    query.assert(&index_value.eq(&index));
    query.assert_tracked(&limit_value.eq(&limit), FACT_COUNT);
    if let Some(least) = least {
        query.assert(&limit_value.ge(least));
    }
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
            Answer::Fails(RangeMiss {
                params,
                assignment,
                rank: value_of(&model, &rank),
                iteration: iteration.join(", "),
                index: value_of(&model, &index_value),
                limit: value_of(&model, &limit_value),
                smallest: query.smallest(),
            })
        }
    })
}
