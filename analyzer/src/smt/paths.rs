//! A Program's ops with the conditions under which they run, kept symbolic: the path
//! condition (branches taken, early returns not taken) and the loops around each op.
//! Counting how often an op runs (`count`) and binding loop variables (`bind_loops`)
//! turn them into z3 terms.

use z3::ast::{Bool, Int};

use super::encode::{Encoder, Scope, Unbound};
use crate::model::{Block, Expr, Op, OpKind, Program, Stmt, VarId};
use crate::source::Span;

/// A path condition over model expressions.
#[derive(Clone, Debug)]
pub(crate) enum Guard {
    True,
    False,
    Cond(Expr),
    Not(Box<Guard>),
    And(Vec<Guard>),
    Or(Vec<Guard>),
}

impl Guard {
    fn and(&self, other: Guard) -> Guard {
        match (self, other) {
            (Guard::False, _) | (_, Guard::False) => Guard::False,
            (Guard::True, other) => other,
            (this, Guard::True) => this.clone(),
            (this, other) => Guard::And(vec![this.clone(), other]),
        }
    }

    fn or(&self, other: Guard) -> Guard {
        match (self, other) {
            (Guard::True, _) | (_, Guard::True) => Guard::True,
            (Guard::False, other) => other,
            (this, Guard::False) => this.clone(),
            (this, other) => Guard::Or(vec![this.clone(), other]),
        }
    }

    fn not(&self) -> Guard {
        match self {
            Guard::True => Guard::False,
            Guard::False => Guard::True,
            this => Guard::Not(Box::new(this.clone())),
        }
    }

    fn mentions(&self, var: VarId) -> bool {
        match self {
            Guard::True | Guard::False => false,
            Guard::Cond(expr) => mentions(expr, var),
            Guard::Not(inner) => inner.mentions(var),
            Guard::And(parts) | Guard::Or(parts) => parts.iter().any(|g| g.mentions(var)),
        }
    }
}

/// Whether `expr` refers to loop variable `var`.
fn mentions(expr: &Expr, var: VarId) -> bool {
    expr.mentions(&|id| id == var)
}

/// `for var in start..end` around an op.
#[derive(Clone, Debug)]
pub(crate) struct Loop<'p> {
    pub var: VarId,
    pub start: &'p Expr,
    pub end: &'p Expr,
    pub inclusive: bool,
}

/// One op of the program text with when it runs.
#[derive(Clone, Debug)]
pub(crate) struct PathOp<'p> {
    pub op: &'p Op,
    pub guard: Guard,
    /// Enclosing loops, outermost first.
    pub loops: Vec<Loop<'p>>,
}

/// A condition or loop bound the walk evaluates, and when: where it has no value, the
/// concrete walk of that thread stops.
#[derive(Clone, Debug)]
pub(crate) struct Evaluation<'p> {
    pub expr: &'p Expr,
    /// "the condition of this `if`", as the concrete run says it.
    pub what: &'static str,
    pub span: Span,
    pub guard: Guard,
    pub loops: Vec<Loop<'p>>,
}

/// Why the encoding cannot express a program.
#[derive(Clone, Debug)]
pub(crate) struct Unsupported {
    pub reason: String,
    pub span: Span,
}

/// Every op a rank's host threads run (spawned threads under their spawn's condition).
pub(crate) fn host_ops(program: &Program) -> Result<Vec<PathOp<'_>>, Unsupported> {
    Ok(host_walk(program)?.out)
}

/// Every condition and loop bound a rank's host threads evaluate.
pub(crate) fn host_evaluations(program: &Program) -> Result<Vec<Evaluation<'_>>, Unsupported> {
    Ok(host_walk(program)?.evaluated)
}

fn host_walk(program: &Program) -> Result<Walker<'_>, Unsupported> {
    let mut walker = Walker {
        program,
        out: Vec::new(),
        evaluated: Vec::new(),
    };
    walker.block(&program.threads[Program::MAIN_THREAD.index()].body, &Guard::True, &[])?;
    Ok(walker)
}

/// Every op of one sub-kernel's code, and every condition and loop bound it evaluates.
pub(crate) fn core_walk<'p>(
    program: &'p Program,
    body: &'p Block,
) -> Result<(Vec<PathOp<'p>>, Vec<Evaluation<'p>>), Unsupported> {
    let mut walker = Walker {
        program,
        out: Vec::new(),
        evaluated: Vec::new(),
    };
    walker.block(body, &Guard::True, &[])?;
    Ok((walker.out, walker.evaluated))
}

struct Walker<'p> {
    program: &'p Program,
    out: Vec<PathOp<'p>>,
    evaluated: Vec<Evaluation<'p>>,
}

impl<'p> Walker<'p> {
    /// Collects the ops of `block`; returns the condition under which it returns early.
    fn block(&mut self, block: &'p Block, guard: &Guard, loops: &[Loop<'p>]) -> Result<Guard, Unsupported> {
        let mut returned = Guard::False;
        for stmt in block {
            let here = guard.and(returned.not());
            match stmt {
                Stmt::Op(op) => {
                    self.out.push(PathOp {
                        op,
                        guard: here.clone(),
                        loops: loops.to_vec(),
                    });
                    if let OpKind::Spawn(thread) = op.kind {
                        // A thread's own `return` ends only that thread.
                        self.block(&self.program.threads[thread.index()].body, &here, loops)?;
                    }
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                    span,
                } => {
                    self.evaluates(cond, "the condition of this `if`", span, &here, loops);
                    let taken = self.block(then, &here.and(Guard::Cond((**cond).clone())), loops)?;
                    let skipped = self.block(otherwise, &here.and(Guard::Cond((**cond).clone()).not()), loops)?;
                    returned = returned.or(taken).or(skipped);
                }
                Stmt::For {
                    var,
                    start,
                    end,
                    inclusive,
                    body,
                    span,
                } => {
                    for bound in [start, end] {
                        self.evaluates(bound, "the bounds of this loop", span, &here, loops);
                    }
                    let mut inner = loops.to_vec();
                    inner.push(Loop {
                        var: *var,
                        start,
                        end,
                        inclusive: *inclusive,
                    });
                    let exits = self.block(body, &here, &inner)?;
                    if !matches!(exits, Guard::False) {
                        return Err(Unsupported {
                            reason: "a `return` inside a loop".into(),
                            span: span.clone(),
                        });
                    }
                }
                Stmt::Return(_) => returned = returned.or(here),
                // What a variable holds after a loop of unknown length is not encoded:
                // such code is checked on the concrete runs only.
                Stmt::While { span, .. } => {
                    return Err(Unsupported {
                        reason: "a `while` loop".into(),
                        span: span.clone(),
                    });
                }
                Stmt::Assign { span, .. } => {
                    return Err(Unsupported {
                        reason: "a variable assigned with `let mut`".into(),
                        span: span.clone(),
                    });
                }
                Stmt::QueryBranch { span, .. } => {
                    return Err(Unsupported {
                        reason: "a branch on a query result".into(),
                        span: span.clone(),
                    });
                }
            }
        }
        Ok(returned)
    }

    fn evaluates(&mut self, expr: &'p Expr, what: &'static str, span: &Span, guard: &Guard, loops: &[Loop<'p>]) {
        self.evaluated.push(Evaluation {
            expr,
            what,
            span: span.clone(),
            guard: guard.clone(),
            loops: loops.to_vec(),
        });
    }
}

/// Most iterations of a constant loop that counting expands one by one.
const MAX_UNROLL: i64 = 64;

/// Why an op's execution count cannot be encoded.
pub(crate) enum CountError {
    Unbound(Unbound),
    /// What depends on the loop variable of a loop with non-constant bounds.
    LoopDependent(VarId),
}

impl From<Unbound> for CountError {
    fn from(unbound: Unbound) -> Self {
        CountError::Unbound(unbound)
    }
}

/// How many times `path` runs in `scope` with every `pins` equation `expr == value`
/// also true (for example, "the record targets rank p with index i").
///
/// A loop whose variable a pin determines (`remoteRank: peer`, `index: step + 1`) adds
/// at most one iteration: the one the equation solves for. Other loops the op depends
/// on are expanded when their bounds are constant; the rest multiply by their trip count.
pub(crate) fn count(path: &PathOp, scope: &Scope, pins: &[(&Expr, Int)]) -> Result<Int, CountError> {
    count_from(path, 0, scope, pins)
}

fn count_from(path: &PathOp, level: usize, scope: &Scope, pins: &[(&Expr, Int)]) -> Result<Int, CountError> {
    let Some(lp) = path.loops.get(level) else {
        let mut encoder = Encoder::new(scope);
        let mut runs = vec![encoder.guard(&path.guard)?];
        for (expr, value) in pins {
            runs.push(encoder.int(expr)?.eq(value));
        }
        runs.push(encoder.definedness());
        return Ok(Bool::and(&runs).ite(&Int::from_i64(1), &Int::from_i64(0)));
    };
    let inner_bounds = path.loops[level + 1..].iter().flat_map(|l| [l.start, l.end]);
    let depends = path.guard.mentions(lp.var)
        || pins
            .iter()
            .map(|(e, _)| *e)
            .chain(inner_bounds)
            .any(|e| mentions(e, lp.var));
    let mut encoder = Encoder::new(scope);
    let (start, end) = (encoder.int(lp.start)?, encoder.int(lp.end)?);
    if !depends {
        let trip = trip_count(&start, &end, lp.inclusive);
        let body = count_from(path, level + 1, scope, pins)?;
        return Ok(Int::mul(&[trip, body]));
    }
    for (expr, value) in pins {
        let Some(solved) = solve_for(expr, lp, value.clone(), &mut encoder) else {
            continue;
        };
        let below_end = if lp.inclusive { solved.le(&end) } else { solved.lt(&end) };
        let in_loop = Bool::and(&[solved.ge(&start), below_end]);
        let mut bound = scope.clone();
        bound.vars.insert(lp.var, solved);
        let body = count_from(path, level + 1, &bound, pins)?;
        return Ok(in_loop.ite(&body, &Int::from_i64(0)));
    }
    let (Some(first), Some(last)) = (lp.start.as_const(), lp.end.as_const()) else {
        return Err(CountError::LoopDependent(lp.var));
    };
    let last = if lp.inclusive { last.saturating_add(1) } else { last };
    if last.saturating_sub(first) > MAX_UNROLL {
        return Err(CountError::LoopDependent(lp.var));
    }
    let mut terms = vec![Int::from_i64(0)];
    for value in first..last {
        let mut bound = scope.clone();
        bound.vars.insert(lp.var, Int::from_i64(value));
        terms.push(count_from(path, level + 1, &bound, pins)?);
    }
    Ok(Int::add(&terms))
}

/// The value of `var` in loop `lp` for which `expr == value`, when exactly one value
/// solves it: `expr` is `var` plus or minus terms that do not mention it, possibly taken
/// `% m` where the loop has at most `m` iterations (`for step in 1..N`, `(rank + step) % N`).
fn solve_for(expr: &Expr, lp: &Loop, value: Int, encoder: &mut Encoder) -> Option<Int> {
    use crate::model::{BinOp, UnOp};
    let var = lp.var;
    match expr {
        Expr::Var(id) if *id == var => Some(value),
        Expr::Unary(UnOp::Neg, operand) => solve_for(operand, lp, value.unary_minus(), encoder),
        Expr::Binary(op @ (BinOp::Add | BinOp::Sub), lhs, rhs) => {
            let (lhs_has, rhs_has) = (mentions(lhs, var), mentions(rhs, var));
            match (op, lhs_has, rhs_has) {
                (BinOp::Add, true, false) => solve_for(lhs, lp, value - encoder.int(rhs).ok()?, encoder),
                (BinOp::Add, false, true) => solve_for(rhs, lp, value - encoder.int(lhs).ok()?, encoder),
                (BinOp::Sub, true, false) => solve_for(lhs, lp, value + encoder.int(rhs).ok()?, encoder),
                (BinOp::Sub, false, true) => solve_for(rhs, lp, encoder.int(lhs).ok()? - value, encoder),
                _ => None,
            }
        }
        // `rank ^ 1`: XOR with what does not mention the variable is its own inverse.
        Expr::Binary(BinOp::BitXor, lhs, rhs) if mentions(lhs, var) != mentions(rhs, var) => {
            let (inner, other) = if mentions(lhs, var) { (lhs, rhs) } else { (rhs, lhs) };
            let other = encoder.int(other).ok()?;
            let flipped = Int::from_bv(&value.to_ast(64).bvxor(other.to_ast(64)), true);
            solve_for(inner, lp, flipped, encoder)
        }
        Expr::Binary(BinOp::Rem, lhs, modulus) if !mentions(modulus, var) && fits_in_modulus(lp, modulus) => {
            // Every solution of `lhs == value + k * m` is one of `lhs`'s, shifted by a
            // multiple of m: the loop holds at most one, the first at or after its start.
            let unwrapped = solve_for(lhs, lp, value, encoder)?;
            let (start, m) = (encoder.int(lp.start).ok()?, encoder.int(modulus).ok()?);
            let offset = Int::sub(&[unwrapped, start.clone()]).modulo(&m);
            Some(start + offset)
        }
        _ => None,
    }
}

/// Whether loop `lp` runs at most `modulus` times, by its shape: a constant start of at
/// least 0 and an end of `modulus` or `modulus - k`.
fn fits_in_modulus(lp: &Loop, modulus: &Expr) -> bool {
    use crate::model::BinOp;
    if lp.start.as_const().is_none_or(|s| s < 0) {
        return false;
    }
    let below = match lp.end {
        end if end == modulus => 0,
        Expr::Binary(BinOp::Sub, base, k) if **base == *modulus => k.as_const().unwrap_or(-1),
        _ => return false,
    };
    below >= i64::from(lp.inclusive)
}

/// Iterations of `start..end` (`..=` when inclusive); none when the range is empty.
fn trip_count(start: &Int, end: &Int, inclusive: bool) -> Int {
    let length = if inclusive {
        Int::sub(&[end.clone(), start.clone()]) + 1
    } else {
        Int::sub(&[end.clone(), start.clone()])
    };
    length.gt(0).ite(&length, &Int::from_i64(0))
}

/// A scope where each of `path`'s loop variables is a fresh integer, with the facts
/// that keep it in its loop's range.
/// The facts are per loop, outermost first.
pub(crate) fn bind_loops(loops: &[Loop], scope: &Scope) -> Result<(Scope, Vec<Bool>), Unbound> {
    let mut bound = scope.clone();
    let mut facts = Vec::new();
    for lp in loops {
        let var = Int::fresh_const("loop");
        let mut encoder = Encoder::new(&bound);
        let (start, end) = (encoder.int(lp.start)?, encoder.int(lp.end)?);
        let below_end = if lp.inclusive { var.le(&end) } else { var.lt(&end) };
        facts.push(Bool::and(&[var.ge(&start), below_end, encoder.definedness()]));
        bound.vars.insert(lp.var, var);
    }
    Ok((bound, facts))
}
