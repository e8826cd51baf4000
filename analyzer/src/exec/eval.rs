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

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// Overflow or division by zero.
    Arithmetic,
    /// A builtin used outside the code it belongs to (`GetBlockIdx()` in host code).
    Unbound,
}

impl Env {
    pub fn eval(&self, expr: &Expr) -> Result<i64, EvalError> {
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
                let v = self.eval(operand)?;
                match op {
                    UnOp::Neg => v.checked_neg().ok_or(EvalError::Arithmetic)?,
                    UnOp::Not => (v == 0) as i64,
                }
            }
            Expr::Binary(op, lhs, rhs) => {
                // `&&` and `||` short-circuit, so `rank > 0 && 10 / rank > 2` is fine.
                let a = self.eval(lhs)?;
                match (op, a != 0) {
                    (BinOp::And, false) => return Ok(0),
                    (BinOp::Or, true) => return Ok(1),
                    _ => {}
                }
                let b = self.eval(rhs)?;
                op.apply(a, b).ok_or(EvalError::Arithmetic)?
            }
        })
    }

    pub fn truthy(&self, expr: &Expr) -> Result<bool, EvalError> {
        Ok(self.eval(expr)? != 0)
    }

    /// The values a `for` loop's variable takes.
    pub fn loop_range(&self, start: &Expr, end: &Expr, inclusive: bool) -> Result<std::ops::Range<i64>, EvalError> {
        let (start, end) = (self.eval(start)?, self.eval(end)?);
        Ok(start..if inclusive { end.saturating_add(1) } else { end })
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
}
