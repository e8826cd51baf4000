//! Model expressions as z3 terms, with the same semantics as `exec::Env::eval`:
//! integers throughout (a comparison is 0 or 1), `/` truncating, `%` Euclidean.
//! A division by zero or a result outside i64 has no value: the encoder collects
//! definedness side conditions, since the concrete walk leaves out a call whose
//! argument has no value and stops at a condition that has none.

use std::collections::HashMap;

use z3::ast::{Bool, Int};

use super::paths::Guard;
use crate::model::{BinOp, Expr, UnOp, VarId};

/// Why an expression cannot be encoded where it is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unbound {
    /// A loop variable outside its loop (an object created in a loop, used after it).
    Var(VarId),
    /// A builtin of the other kind of code (`rank` in kernel code, `GetBlockIdx()` on the host).
    Builtin(&'static str),
}

/// The z3 terms every symbolic name stands for.
#[derive(Clone, Default)]
pub(crate) struct Scope {
    pub params: Vec<Int>,
    pub rank: Option<Int>,
    pub vars: HashMap<VarId, Int>,
    pub block_idx: Option<Int>,
    pub tiling_key: Option<Int>,
    pub is_aiv: Option<Bool>,
}

/// Encodes expressions in one scope, collecting definedness conditions.
pub(crate) struct Encoder<'s> {
    pub scope: &'s Scope,
    pub defined: Vec<Bool>,
}

impl<'s> Encoder<'s> {
    pub fn new(scope: &'s Scope) -> Self {
        Encoder {
            scope,
            defined: Vec::new(),
        }
    }

    /// Every division in what was encoded so far has a non-zero divisor, and every
    /// intermediate value fits an i64.
    pub fn definedness(&self) -> Bool {
        Bool::and(&self.defined)
    }

    pub fn int(&mut self, expr: &Expr) -> Result<Int, Unbound> {
        let value = self.int_unchecked(expr)?;
        if matches!(
            expr,
            Expr::Unary(UnOp::Neg, _) | Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, _, _)
        ) {
            // The concrete walk computes in i64: a result outside it has no value there.
            self.defined.push(Bool::and(&[value.ge(i64::MIN), value.le(i64::MAX)]));
        }
        Ok(value)
    }

    fn int_unchecked(&mut self, expr: &Expr) -> Result<Int, Unbound> {
        Ok(match expr {
            Expr::Int(v) => Int::from_i64(*v),
            Expr::Bool(b) => Int::from_i64(*b as i64),
            Expr::Param(id) => self.scope.params[id.index()].clone(),
            Expr::Var(id) => self.scope.vars.get(id).cloned().ok_or(Unbound::Var(*id))?,
            Expr::Rank => self.scope.rank.clone().ok_or(Unbound::Builtin("rank"))?,
            Expr::BlockIdx => self.scope.block_idx.clone().ok_or(Unbound::Builtin("GetBlockIdx()"))?,
            Expr::TilingKey => self.scope.tiling_key.clone().ok_or(Unbound::Builtin("TILING_KEY_IS"))?,
            Expr::CoreIsAiv | Expr::Unary(UnOp::Not, _) => self.bool(expr)?.ite(&Int::from_i64(1), &Int::from_i64(0)),
            Expr::Unary(UnOp::Neg, operand) => self.int(operand)?.unary_minus(),
            Expr::Binary(op, lhs, rhs) => match op {
                BinOp::Add => Int::add(&[self.int(lhs)?, self.int(rhs)?]),
                BinOp::Sub => Int::sub(&[self.int(lhs)?, self.int(rhs)?]),
                BinOp::Mul => Int::mul(&[self.int(lhs)?, self.int(rhs)?]),
                BinOp::Div => {
                    let (a, b) = (self.int(lhs)?, self.int(rhs)?);
                    self.defined.push(b.ne(0));
                    truncating_div(&a, &b)
                }
                BinOp::Rem => {
                    let (a, b) = (self.int(lhs)?, self.int(rhs)?);
                    // `i64::MIN % -1` overflows in Rust (`checked_rem_euclid`).
                    let min_by_minus_one = Bool::and(&[a.eq(i64::MIN), b.eq(-1)]);
                    self.defined.push(Bool::and(&[b.ne(0), min_by_minus_one.not()]));
                    a.modulo(&b)
                }
                BinOp::BitAnd | BinOp::BitXor if let Some(linear) = self.with_constant_mask(*op, lhs, rhs)? => linear,
                BinOp::BitAnd | BinOp::BitXor | BinOp::BitOr => {
                    let (a, b) = (self.int(lhs)?.to_ast(64), self.int(rhs)?.to_ast(64));
                    let bits = match op {
                        BinOp::BitAnd => a.bvand(&b),
                        BinOp::BitXor => a.bvxor(&b),
                        _ => a.bvor(&b),
                    };
                    Int::from_bv(&bits, true)
                }
                BinOp::Shl | BinOp::Shr => self.shift(*op, lhs, rhs)?,
                _ => self.bool(expr)?.ite(&Int::from_i64(1), &Int::from_i64(0)),
            },
            Expr::Cond(parts) => {
                let [cond, then, otherwise] = &**parts;
                // Only the branch taken is evaluated, so only it must be defined.
                let taken = self.bool(cond)?;
                let outer = std::mem::take(&mut self.defined);
                let then = self.int(then)?;
                let then_defined = Bool::and(&std::mem::take(&mut self.defined));
                let otherwise = self.int(otherwise)?;
                let otherwise_defined = Bool::and(&std::mem::replace(&mut self.defined, outer));
                self.defined.push(taken.implies(&then_defined));
                self.defined.push(taken.not().implies(&otherwise_defined));
                taken.ite(&then, &otherwise)
            }
        })
    }

    /// `a & (2^k - 1)` and `a ^ c` for a constant `c` without integer-bitvector
    /// conversions, which z3 decides slowly: `a mod 2^k`, and `a` with each bit `k` of
    /// `c` flipped, `a + (1 - 2 * ((a div 2^k) mod 2)) * 2^k` (z3's `div` and `mod`
    /// round down, which matches two's complement bits also for negative `a`).
    fn with_constant_mask(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<Option<Int>, Unbound> {
        /// More set bits than this are left to bitvectors.
        const MAX_FLIPPED_BITS: u32 = 16;
        let (operand, mask) = match (lhs.as_const(), rhs.as_const()) {
            (_, Some(mask)) if mask >= 0 => (lhs, mask),
            (Some(mask), _) if mask >= 0 => (rhs, mask),
            _ => return Ok(None),
        };
        let a = self.int(operand)?;
        Ok(match op {
            BinOp::BitAnd if mask.checked_add(1).is_some_and(|m| m.count_ones() == 1) => Some(a.modulo(mask + 1)),
            BinOp::BitXor if mask.count_ones() <= MAX_FLIPPED_BITS => {
                let mut flipped = vec![a.clone()];
                for bit in (0..63).filter(|bit| mask & (1 << bit) != 0) {
                    let set = a.div(1i64 << bit).modulo(2);
                    let sign = Int::sub(&[Int::from_i64(1), Int::mul(&[Int::from_i64(2), set])]);
                    flipped.push(Int::mul(&[sign, Int::from_i64(1 << bit)]));
                }
                Some(Int::add(&flipped))
            }
            _ => None,
        })
    }

    /// `a << b` and `a >> b` as `BinOp::apply` defines them: counts in `0..=62` for `<<`
    /// (and no bit lost), `0..=63` for `>>` (arithmetic).
    fn shift(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<Int, Unbound> {
        let (a, b) = (self.int(lhs)?, self.int(rhs)?);
        // By a constant count: linear, which z3 decides fast.
        match (op, rhs.as_const()) {
            (BinOp::Shl, Some(count @ 0..=62)) => {
                let shifted = Int::mul(&[a, Int::from_i64(1 << count)]);
                self.defined
                    .push(Bool::and(&[shifted.ge(i64::MIN), shifted.le(i64::MAX)]));
                return Ok(shifted);
            }
            (BinOp::Shr, Some(count @ 0..=62)) => return Ok(a.div(1i64 << count)),
            _ => {}
        }
        let (a_bits, b_bits) = (a.to_ast(64), b.to_ast(64));
        let left = op == BinOp::Shl;
        let bits = if left {
            a_bits.bvshl(&b_bits)
        } else {
            a_bits.bvashr(&b_bits)
        };
        let mut defined = vec![b.ge(0), b.le(if left { 62 } else { 63 })];
        if left {
            defined.push(Int::from_bv(&bits.bvashr(&b_bits), true).eq(&a));
        }
        self.defined.push(Bool::and(&defined));
        Ok(Int::from_bv(&bits, true))
    }

    /// `expr` as a condition (non-zero is true).
    pub fn bool(&mut self, expr: &Expr) -> Result<Bool, Unbound> {
        Ok(match expr {
            Expr::Bool(b) => Bool::from_bool(*b),
            Expr::CoreIsAiv => self.scope.is_aiv.clone().ok_or(Unbound::Builtin("ASCEND_IS_AIV"))?,
            Expr::Unary(UnOp::Not, operand) => self.bool(operand)?.not(),
            Expr::Binary(op, lhs, rhs) => match op {
                BinOp::Eq => self.int(lhs)?.eq(self.int(rhs)?),
                BinOp::Ne => self.int(lhs)?.ne(self.int(rhs)?),
                BinOp::Lt => self.int(lhs)?.lt(self.int(rhs)?),
                BinOp::Le => self.int(lhs)?.le(self.int(rhs)?),
                BinOp::Gt => self.int(lhs)?.gt(self.int(rhs)?),
                BinOp::Ge => self.int(lhs)?.ge(self.int(rhs)?),
                // Short-circuit: the right side's divisions only matter when it is evaluated.
                BinOp::And | BinOp::Or => {
                    let a = self.bool(lhs)?;
                    let outer = std::mem::take(&mut self.defined);
                    let b = self.bool(rhs)?;
                    let inner = Bool::and(&std::mem::replace(&mut self.defined, outer));
                    let evaluated = if *op == BinOp::And { a.clone() } else { a.not() };
                    self.defined.push(evaluated.implies(&inner));
                    if *op == BinOp::And {
                        Bool::and(&[a, b])
                    } else {
                        Bool::or(&[a, b])
                    }
                }
                _ => self.int(expr)?.ne(0),
            },
            _ => self.int(expr)?.ne(0),
        })
    }

    /// A path condition.
    pub fn guard(&mut self, guard: &Guard) -> Result<Bool, Unbound> {
        Ok(match guard {
            Guard::True => Bool::from_bool(true),
            Guard::False => Bool::from_bool(false),
            Guard::Cond(expr) => self.bool(expr)?,
            Guard::Not(inner) => self.guard(inner)?.not(),
            Guard::And(parts) => self.in_walk_order(parts, true)?,
            Guard::Or(parts) => self.in_walk_order(parts, false)?,
        })
    }

    /// Path conditions joined by and (`all`) or by or, in the order the walk meets them:
    /// a part's values are computed only when the parts before it let the walk get there
    /// (all true for and, all false for or), so only then must they be defined. `if N > 2
    /// { if rank % (N - 2) == 0 { return; } }` says nothing about N = 2.
    fn in_walk_order(&mut self, parts: &[Guard], all: bool) -> Result<Bool, Unbound> {
        let mut values: Vec<Bool> = Vec::new();
        for part in parts {
            let outer = std::mem::take(&mut self.defined);
            let value = self.guard(part);
            let inner = Bool::and(&std::mem::replace(&mut self.defined, outer));
            let value = value?;
            let gets_here: Vec<Bool> = values.iter().map(|v| if all { v.clone() } else { v.not() }).collect();
            self.defined.push(Bool::and(&gets_here).implies(&inner));
            values.push(value);
        }
        Ok(if all { Bool::and(&values) } else { Bool::or(&values) })
    }
}

/// Rust's `/` (rounds toward zero); z3's `div` rounds toward negative infinity for a
/// positive divisor.
fn truncating_div(a: &Int, b: &Int) -> Int {
    let abs = |x: &Int| x.ge(0).ite(x, &x.unary_minus());
    let quotient = abs(a).div(abs(b));
    let same_sign = a.ge(0).iff(b.ge(0));
    same_sign.ite(&quotient, &quotient.unary_minus())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use z3::{SatResult, Solver};

    use super::*;
    use crate::exec::Env;
    use crate::model::ParamId;

    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            (-40i64..40).prop_map(Expr::Int),
            prop::sample::select(vec![i64::MIN, i64::MAX, 1 << 62]).prop_map(Expr::Int),
            Just(Expr::Param(ParamId(0))),
            Just(Expr::Rank)
        ];
        leaf.prop_recursive(4, 24, 2, |inner| {
            let ops = prop::sample::select(vec![
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::Div,
                BinOp::Rem,
                BinOp::BitAnd,
                BinOp::BitXor,
                BinOp::BitOr,
                BinOp::Shl,
                BinOp::Shr,
                BinOp::Eq,
                BinOp::Ne,
                BinOp::Lt,
                BinOp::Le,
                BinOp::Gt,
                BinOp::Ge,
                BinOp::And,
                BinOp::Or,
            ]);
            prop_oneof![
                (ops, inner.clone(), inner.clone()).prop_map(|(op, a, b)| Expr::Binary(op, Box::new(a), Box::new(b))),
                (prop::sample::select(vec![UnOp::Neg, UnOp::Not]), inner.clone())
                    .prop_map(|(op, e)| Expr::Unary(op, Box::new(e))),
                (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| Expr::cond(c, a, b)),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The encoding means what the concrete evaluator computes: for fixed values of
        /// `N` and `rank`, z3 cannot make the term differ from `Env::eval`, and where the
        /// evaluator divides by zero or overflows, the definedness condition is false.
        #[test]
        fn encoding_agrees_with_concrete_evaluation(e in expr(), n in -6i64..6, rank in -6i64..6) {
            let scope = Scope {
                params: vec![Int::from_i64(n)],
                rank: Some(Int::from_i64(rank)),
                ..Scope::default()
            };
            let mut encoder = Encoder::new(&scope);
            let term = encoder.int(&e).unwrap();
            let solver = Solver::new();
            let env = Env { params: vec![n], rank, ..Env::default() };
            match env.eval(&e) {
                Ok(value) => {
                    solver.assert(encoder.definedness());
                    solver.assert(term.ne(value));
                    prop_assert_eq!(solver.check(), SatResult::Unsat, "{:?} = {}", e, value);
                }
                Err(crate::exec::EvalError::Arithmetic) => {
                    solver.assert(encoder.definedness());
                    prop_assert_eq!(solver.check(), SatResult::Unsat, "{:?} is undefined", e);
                }
                Err(_) => {}
            }
        }
    }
}
