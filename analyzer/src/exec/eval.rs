//! Evaluating model expressions for one rank, one parameter assignment, and (in kernel
//! code) one core and tiling key.

use crate::model::{BinOp, Expr, UnOp};

/// The values a concrete run gives to every symbolic name.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub params: Vec<i64>,
    pub rank: i64,
    /// Loop variables by `VarId`; `None` outside their loop.
    pub vars: Vec<Option<i64>>,
    pub core: Option<CoreEnv>,
}

/// Which core a sub-kernel's code runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreEnv {
    pub block_idx: i64,
    pub tiling_key: i64,
    pub is_aiv: bool,
}

impl CoreEnv {
    /// "AIV core 3 with tiling key 2" for messages.
    pub fn describe(&self) -> String {
        let kind = if self.is_aiv { "AIV" } else { "AIC" };
        format!("{kind} core {} with tiling key {}", self.block_idx, self.tiling_key)
    }
}

/// Why an expression has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// Overflow (the result does not fit in a signed 64-bit integer) or division by zero.
    Arithmetic,
    /// A name with no value here: a builtin used outside the code it belongs to
    /// (`GetBlockIdx()` in host code), a loop variable outside its loop.
    Unbound,
    /// Nested deeper than `MAX_EVAL_DEPTH` (a programmatically built model).
    TooDeep,
    /// A number of handles below 0 or above `MAX_ARRAY_LEN`.
    BadCount,
    /// A device number below 0 or above what a `u32` holds.
    BadDevice,
}

impl EvalError {
    /// "overflows", "divides by zero" for messages.
    pub fn reason(self) -> &'static str {
        match self {
            EvalError::Arithmetic => "overflows a signed 64-bit integer or divides by zero",
            EvalError::Unbound => "uses a name that has no value here",
            EvalError::TooDeep => "is nested too deeply to evaluate",
            EvalError::BadCount => "is negative or more than 65536 handles",
            EvalError::BadDevice => "is not a device number (0 to 4294967295)",
        }
    }
}

/// Deepest expression `Env::eval` walks: evaluation is recursive, and a model built by
/// a program or a trace has no parser to limit it.
pub const MAX_EVAL_DEPTH: usize = 1024;

impl Env {
    pub fn eval(&self, expr: &Expr) -> Result<i64, EvalError> {
        self.eval_at(expr, 0)
    }

    fn eval_at(&self, expr: &Expr, depth: usize) -> Result<i64, EvalError> {
        if depth > MAX_EVAL_DEPTH {
            return Err(EvalError::TooDeep);
        }
        Ok(match expr {
            Expr::Int(v) => *v,
            Expr::Bool(b) => *b as i64,
            Expr::Param(id) => *self.params.get(id.index()).ok_or(EvalError::Unbound)?,
            Expr::Var(id) => self.vars.get(id.index()).copied().flatten().ok_or(EvalError::Unbound)?,
            Expr::Rank => self.rank,
            Expr::BlockIdx => self.core.ok_or(EvalError::Unbound)?.block_idx,
            Expr::TilingKey => self.core.ok_or(EvalError::Unbound)?.tiling_key,
            Expr::CoreIsAiv => self.core.ok_or(EvalError::Unbound)?.is_aiv as i64,
            Expr::Unary(op, operand) => {
                let v = self.eval_at(operand, depth + 1)?;
                match op {
                    UnOp::Neg => v.checked_neg().ok_or(EvalError::Arithmetic)?,
                    UnOp::Not => (v == 0) as i64,
                }
            }
            Expr::Binary(op, lhs, rhs) => {
                // `&&` and `||` short-circuit, so `rank > 0 && 10 / rank > 2` is fine.
                let a = self.eval_at(lhs, depth + 1)?;
                match (op, a != 0) {
                    (BinOp::And, false) => return Ok(0),
                    (BinOp::Or, true) => return Ok(1),
                    _ => {}
                }
                let b = self.eval_at(rhs, depth + 1)?;
                op.apply(a, b).ok_or(EvalError::Arithmetic)?
            }
            Expr::Cond(parts) => {
                let [cond, then, otherwise] = &**parts;
                match self.eval_at(cond, depth + 1)? {
                    0 => self.eval_at(otherwise, depth + 1)?,
                    _ => self.eval_at(then, depth + 1)?,
                }
            }
        })
    }

    pub fn truthy(&self, expr: &Expr) -> Result<bool, EvalError> {
        Ok(self.eval(expr)? != 0)
    }

    /// The values a `for` loop's variable takes. Always an inclusive range, so that a
    /// loop up to `i64::MAX` still runs its last iteration.
    pub fn loop_range(
        &self,
        start: &Expr,
        end: &Expr,
        inclusive: bool,
    ) -> Result<std::ops::RangeInclusive<i64>, EvalError> {
        let (start, end) = (self.eval(start)?, self.eval(end)?);
        Ok(match (inclusive, end.checked_sub(1)) {
            (true, _) => start..=end,
            (false, Some(last)) => start..=last,
            // `start..i64::MIN` is empty.
            (false, None) => std::ops::RangeInclusive::new(1, 0),
        })
    }
}

/// How many iterations a loop range has (up to 2^64, so `u128`).
pub fn iterations(range: &std::ops::RangeInclusive<i64>) -> u128 {
    if range.is_empty() {
        0
    } else {
        (i128::from(*range.end()) - i128::from(*range.start()) + 1) as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ParamId;

    #[test]
    fn ring_neighbour_wraps() {
        let env = Env {
            params: vec![4],
            rank: 3,
            ..Env::default()
        };
        let next = Expr::Binary(
            BinOp::Rem,
            Box::new(Expr::Binary(BinOp::Add, Box::new(Expr::Rank), Box::new(Expr::Int(1)))),
            Box::new(Expr::Param(ParamId(0))),
        );
        assert_eq!(env.eval(&next), Ok(0));
    }

    #[test]
    fn short_circuit_avoids_division_by_zero() {
        let env = Env::default();
        let guarded = Expr::Binary(
            BinOp::And,
            Box::new(Expr::Binary(BinOp::Gt, Box::new(Expr::Rank), Box::new(Expr::Int(0)))),
            Box::new(Expr::Binary(BinOp::Div, Box::new(Expr::Int(10)), Box::new(Expr::Rank))),
        );
        assert_eq!(env.eval(&guarded), Ok(0));
        assert_eq!(env.eval(&Expr::BlockIdx), Err(EvalError::Unbound));
    }

    #[test]
    fn inclusive_range_up_to_i64_max_has_its_iteration() {
        let env = Env::default();
        let max = Expr::Int(i64::MAX);
        let range = env.loop_range(&max, &max, true).unwrap();
        assert_eq!(range.clone().collect::<Vec<_>>(), vec![i64::MAX]);
        assert_eq!(iterations(&range), 1);
        let empty = env.loop_range(&Expr::Int(0), &Expr::Int(i64::MIN), false).unwrap();
        assert_eq!(iterations(&empty), 0);
    }

    #[test]
    fn too_deep_an_expression_is_an_error_not_a_stack_overflow() {
        let mut deep = Expr::Int(1);
        for _ in 0..=MAX_EVAL_DEPTH {
            deep = Expr::Unary(UnOp::Neg, Box::new(deep));
        }
        assert_eq!(Env::default().eval(&deep), Err(EvalError::TooDeep));
    }
}
