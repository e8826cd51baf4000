//! One core's path through a sub-kernel's code, within a step budget: kernel loops are
//! unrolled like host loops, so a loop of 10^12 iterations must be refused before it
//! runs, and a condition with no value must stop the walk where both the concrete runs
//! and the prover can say so.

use super::eval::{Env, EvalError, iterations};
use crate::model::{Block, Op, Stmt};
use crate::source::Span;

/// Statements and loop iterations one SuperKernel launch's cores may walk in all.
pub const MAX_CORE_STEPS: u64 = 4_000_000;

/// How a core's walk ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoreEnd {
    /// It ran to the end of the sub-kernel.
    Ran,
    /// It took an early `return`.
    Returned,
    /// It could not go on: what follows is not walked.
    Stopped(CoreStop),
}

/// Why a core's walk stopped before the end of its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreStop {
    pub span: Span,
    pub reason: StopReason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A condition or loop bound has no value on this core.
    Undefined { what: &'static str, error: EvalError },
    /// A loop of this many iterations does not fit in what is left of the step budget.
    TooLong { iterations: u128 },
    /// The step budget ran out here.
    OutOfSteps,
}

impl CoreStop {
    /// "the condition of this `if` has no value: it divides by zero" for messages.
    pub fn describe(&self) -> String {
        match &self.reason {
            StopReason::Undefined { what, error } => format!("{what} has no value: it {}", error.reason()),
            StopReason::TooLong { iterations } => format!(
                "this loop runs {iterations} iterations, more than the {MAX_CORE_STEPS} steps a SuperKernel launch's cores may take"
            ),
            StopReason::OutOfSteps => {
                format!("the launch's cores take more than {MAX_CORE_STEPS} steps to get here")
            }
        }
    }
}

/// Walk one core's code path, calling `visit` for each op in execution order. `budget`
/// is the steps left (statements and loop iterations), shared by the cores of a launch.
pub fn walk_core<'p>(
    block: &'p Block,
    env: &mut Env,
    budget: &mut u64,
    visit: &mut impl FnMut(&'p Op, &Env),
) -> CoreEnd {
    for stmt in block {
        if !take(budget, 1) {
            return stopped(stmt_span(stmt), StopReason::OutOfSteps);
        }
        let end = match stmt {
            Stmt::Op(op) => {
                visit(op, env);
                CoreEnd::Ran
            }
            Stmt::If {
                cond,
                then,
                otherwise,
                span,
            } => match env.truthy(cond) {
                Ok(true) => walk_core(then, env, budget, visit),
                Ok(false) => walk_core(otherwise, env, budget, visit),
                Err(error) => undefined(span, "the condition of this `if`", error),
            },
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
                span,
            } => {
                let range = match env.loop_range(start, end, *inclusive) {
                    Ok(range) => range,
                    Err(error) => return undefined(span, "the bounds of this loop", error),
                };
                let count = iterations(&range);
                if count > u128::from(*budget) {
                    return stopped(span, StopReason::TooLong { iterations: count });
                }
                let mut end = CoreEnd::Ran;
                for i in range {
                    env.vars[var.index()] = Some(i);
                    take(budget, 1);
                    end = walk_core(body, env, budget, visit);
                    if end != CoreEnd::Ran {
                        break;
                    }
                }
                env.vars[var.index()] = None;
                end
            }
            Stmt::Return(_) => CoreEnd::Returned,
            // Kernel code has neither today (the lowering keeps them to host code); they
            // mean here what they mean there.
            Stmt::Assign { var, value, span } => match env.eval(value) {
                Ok(value) => {
                    env.vars[var.index()] = Some(value);
                    CoreEnd::Ran
                }
                Err(error) => undefined(span, "the value of this assignment", error),
            },
            // A query is a host call, which kernel code cannot make.
            Stmt::QueryBranch { pending, .. } => walk_core(pending, env, budget, visit),
            Stmt::While { cond, body, span } => loop {
                match env.truthy(cond) {
                    Ok(true) => {}
                    Ok(false) => break CoreEnd::Ran,
                    Err(error) => break undefined(span, "the condition of this `while`", error),
                }
                if !take(budget, 1) {
                    break stopped(span, StopReason::TooLong { iterations: u128::MAX });
                }
                let end = walk_core(body, env, budget, visit);
                if end != CoreEnd::Ran {
                    break end;
                }
            },
        };
        if end != CoreEnd::Ran {
            return end;
        }
    }
    CoreEnd::Ran
}

/// Take `n` steps from `budget`; false when there are not that many left.
fn take(budget: &mut u64, n: u64) -> bool {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}

fn undefined(span: &Span, what: &'static str, error: EvalError) -> CoreEnd {
    stopped(span, StopReason::Undefined { what, error })
}

fn stopped(span: &Span, reason: StopReason) -> CoreEnd {
    CoreEnd::Stopped(CoreStop {
        span: span.clone(),
        reason,
    })
}

fn stmt_span(stmt: &Stmt) -> &Span {
    match stmt {
        Stmt::Op(op) => &op.span,
        Stmt::If { span, .. }
        | Stmt::For { span, .. }
        | Stmt::While { span, .. }
        | Stmt::Assign { span, .. }
        | Stmt::QueryBranch { span, .. } => span,
        Stmt::Return(span) => span,
    }
}
