//! The largest value an op's integer argument takes, as a formula over the parameters:
//! for fix advice that holds for every rank count ("acquire to_next with `notifyNum:
//! N`"), not only for the counterexample's values. Linear arithmetic only; loop
//! variables and `rank` are replaced by their extreme values, and the conditions
//! around the op are not used, so the bound may be larger than needed, never smaller.

use std::collections::BTreeMap;
use std::fmt;

use super::paths::{Loop, host_ops};
use crate::model::{BinOp, Expr, Op, ParamId, Program, RankCount, UnOp, VarId};

/// `constant + Σ coefficient × atom`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Linear {
    constant: i64,
    terms: BTreeMap<Atom, i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Atom {
    Param(ParamId),
    Var(VarId),
    Rank,
}

/// The largest value `expr` takes where `op` runs, over every iteration of its loops
/// and every rank, as a formula over the parameters; `None` when that is not linear.
pub(crate) fn largest(program: &Program, op: &Op, expr: &Expr) -> Option<Linear> {
    let ops = host_ops(program).ok()?;
    let path = ops.iter().find(|path| std::ptr::eq(path.op, op))?;
    let mut value = Linear::of(expr)?;
    for lp in path.loops.iter().rev() {
        value = value.at_extreme(Atom::Var(lp.var), |upward| loop_end(lp, upward))?;
    }
    let ranks = match program.settings.ranks {
        RankCount::Fixed(n) => Linear::constant(i64::from(n)),
        RankCount::Param(id) => Linear::atom(Atom::Param(id)),
    };
    value.at_extreme(Atom::Rank, |upward| {
        Some(if upward {
            ranks.clone().plus(&Linear::constant(-1), 1)?
        } else {
            Linear::constant(0)
        })
    })
}

/// The loop variable's last value (`upward`) or first.
fn loop_end(lp: &Loop, upward: bool) -> Option<Linear> {
    if !upward {
        return Linear::of(lp.start);
    }
    let end = Linear::of(lp.end)?;
    if lp.inclusive {
        Some(end)
    } else {
        end.plus(&Linear::constant(-1), 1)
    }
}

impl Linear {
    fn constant(value: i64) -> Linear {
        Linear {
            constant: value,
            terms: BTreeMap::new(),
        }
    }

    fn atom(atom: Atom) -> Linear {
        Linear {
            constant: 0,
            terms: BTreeMap::from([(atom, 1)]),
        }
    }

    fn of(expr: &Expr) -> Option<Linear> {
        Some(match expr {
            Expr::Int(value) => Linear::constant(*value),
            Expr::Param(id) => Linear::atom(Atom::Param(*id)),
            Expr::Var(id) => Linear::atom(Atom::Var(*id)),
            Expr::Rank => Linear::atom(Atom::Rank),
            Expr::Unary(UnOp::Neg, operand) => Linear::of(operand)?.scaled(-1)?,
            Expr::Binary(BinOp::Add, a, b) => Linear::of(a)?.plus(&Linear::of(b)?, 1)?,
            Expr::Binary(BinOp::Sub, a, b) => Linear::of(a)?.plus(&Linear::of(b)?, -1)?,
            Expr::Binary(BinOp::Mul, a, b) => {
                let (a, b) = (Linear::of(a)?, Linear::of(b)?);
                match (a.as_constant(), b.as_constant()) {
                    (Some(k), _) => b.scaled(k)?,
                    (_, Some(k)) => a.scaled(k)?,
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// `self + factor × other`
    fn plus(mut self, other: &Linear, factor: i64) -> Option<Linear> {
        self.constant = self.constant.checked_add(other.constant.checked_mul(factor)?)?;
        for (atom, coefficient) in &other.terms {
            let entry = self.terms.entry(*atom).or_insert(0);
            *entry = entry.checked_add(coefficient.checked_mul(factor)?)?;
        }
        self.terms.retain(|_, coefficient| *coefficient != 0);
        Some(self)
    }

    fn scaled(self, factor: i64) -> Option<Linear> {
        Linear::constant(0).plus(&self, factor)
    }

    /// `self` with `atom` at the end of its range that makes `self` largest.
    fn at_extreme(mut self, atom: Atom, end: impl Fn(bool) -> Option<Linear>) -> Option<Linear> {
        let Some(coefficient) = self.terms.remove(&atom) else {
            return Some(self);
        };
        self.plus(&end(coefficient > 0)?, coefficient)
    }

    /// The formula plus `k`.
    pub(crate) fn offset(self, k: i64) -> Option<Linear> {
        self.plus(&Linear::constant(k), 1)
    }

    /// Whether it depends on a parameter (else the concrete value says as much).
    pub(crate) fn is_parametric(&self) -> bool {
        !self.terms.is_empty()
    }

    /// "2 * N - 1", with the program's parameter names.
    pub(crate) fn display<'a>(&'a self, program: &'a Program) -> impl fmt::Display + 'a {
        Shown { linear: self, program }
    }
}

struct Shown<'a> {
    linear: &'a Linear,
    program: &'a Program,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (atom, coefficient) in &self.linear.terms {
            let name = match atom {
                Atom::Param(id) => self.program.params[id.index()].name.as_str(),
                Atom::Var(id) => self.program.vars[id.index()].name.as_str(),
                Atom::Rank => "rank",
            };
            let sign = if *coefficient < 0 { "-" } else { "+" };
            match (first, coefficient.unsigned_abs()) {
                (true, _) if *coefficient < 0 => write!(f, "-")?,
                (true, _) => {}
                (false, _) => write!(f, " {sign} ")?,
            }
            match coefficient.unsigned_abs() {
                1 => write!(f, "{name}")?,
                k => write!(f, "{k} * {name}")?,
            }
            first = false;
        }
        match (first, self.linear.constant) {
            (true, k) => write!(f, "{k}"),
            (false, 0) => Ok(()),
            (false, k) if k < 0 => write!(f, " - {}", k.unsigned_abs()),
            (false, k) => write!(f, " + {k}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_formulas_print_as_written() {
        let program = crate::model::Program::new(crate::source::Span::new(crate::source::FileId(0), 0..0));
        let mut with_n = program.clone();
        with_n.params.push(crate::model::Param {
            name: "N".into(),
            min: 2,
            max: Some(8),
            span: crate::source::Span::new(crate::source::FileId(0), 0..0),
        });
        let n = Linear::atom(Atom::Param(ParamId(0)));
        assert_eq!(n.display(&with_n).to_string(), "N");
        let two_n_minus_one = n.clone().scaled(2).unwrap().offset(-1).unwrap();
        assert_eq!(two_n_minus_one.display(&with_n).to_string(), "2 * N - 1");
        let one_minus_n = n.scaled(-1).unwrap().offset(1).unwrap();
        assert_eq!(one_minus_n.display(&with_n).to_string(), "-N + 1");
        assert_eq!(Linear::constant(3).display(&program).to_string(), "3");
    }
}
