//! Integer and boolean expressions: parameters, loop variables, `rank`, and in kernel
//! code the Ascend C builtins `GetBlockIdx()`, `TILING_KEY_IS(k)`, `ASCEND_IS_AIV/AIC`.

use crate::ast::{self, BinaryOp, ExprKind, UnaryOp};

use super::{Binding, Lowerer};
use syncguard_model::model::{BinOp, Expr, UnOp};

impl Lowerer<'_> {
    /// Lower an integer expression. On a problem it reports and yields `0`, so that the
    /// statement around it is still lowered.
    pub(super) fn lower_expr(&mut self, expr: &ast::Expr) -> Expr {
        match &expr.kind {
            ExprKind::Int(lit) => match lit.scaled().and_then(|v| i64::try_from(v).ok()) {
                Some(value) => Expr::Int(value),
                None => {
                    self.syntax_error(
                        &expr.span,
                        "number too large",
                        "does not fit in a signed 64-bit integer",
                    );
                    Expr::Int(0)
                }
            },
            ExprKind::Bool(value) => Expr::Bool(*value),
            ExprKind::Name(path) => self.lower_name(&path.text, &expr.span),
            ExprKind::Unary(op, operand) => {
                let op = match op {
                    UnaryOp::Neg => UnOp::Neg,
                    UnaryOp::Not => UnOp::Not,
                };
                folded(Expr::Unary(op, Box::new(self.lower_expr(operand))))
            }
            ExprKind::Binary(op, lhs, rhs) => {
                let lhs = self.lower_expr(lhs);
                let rhs = self.lower_expr(rhs);
                folded(Expr::Binary(binary_op(*op), Box::new(lhs), Box::new(rhs)))
            }
            ExprKind::Cond { cond, then, otherwise } => {
                let cond = self.lower_expr(cond);
                let (then, otherwise) = (self.lower_expr(then), self.lower_expr(otherwise));
                match cond.as_const() {
                    Some(0) => otherwise,
                    Some(_) => then,
                    None => Expr::cond(cond, then, otherwise),
                }
            }
            ExprKind::Call(call) => self.lower_builtin_call(call),
            ExprKind::Error => Expr::Int(0),
            ExprKind::Str(_)
            | ExprKind::Null
            | ExprKind::Slice { .. }
            | ExprKind::Index { .. }
            | ExprKind::List(_)
            | ExprKind::ListFor(_)
            | ExprKind::Struct(_) => {
                self.syntax_error(&expr.span, "expected an integer expression", "not a number");
                Expr::Int(0)
            }
        }
    }

    /// The value of an expression that must be a constant (settings, core counts).
    pub(super) fn const_int(&mut self, expr: &ast::Expr) -> Option<i64> {
        let errors_before = self.diagnostics.len();
        let value = self.lower_expr(expr).as_const();
        if value.is_none() && self.diagnostics.len() == errors_before {
            self.syntax_error(
                &expr.span,
                "expected a constant",
                "this depends on a parameter, rank or loop",
            );
        }
        value
    }

    fn lower_name(&mut self, name: &str, span: &ast::Span) -> Expr {
        match (self.lookup(name), name) {
            (Some(Binding::Param(id)), _) => Expr::Param(id),
            (Some(Binding::Var(id)), _) => Expr::Var(id),
            (Some(Binding::Value(index)), _) => self.values[index].clone(),
            (Some(Binding::Object(id)), _) => {
                let object = self.program.object(id);
                let message = format!(
                    "`{name}` is {}, not a number",
                    syncguard_model::diagnostic::with_article(object.kind.noun())
                );
                self.syntax_error(span, message, "expected an integer expression");
                Expr::Int(0)
            }
            (Some(Binding::Gm(_) | Binding::LocalBuffer(_) | Binding::Tensor(_)), _) => {
                self.syntax_error(span, format!("`{name}` is kernel memory, not a number"), "");
                Expr::Int(0)
            }
            (Some(Binding::Thread(_)), _) => {
                self.syntax_error(span, format!("`{name}` is a host thread, not a number"), "");
                Expr::Int(0)
            }
            (None, "rank") => Expr::Rank,
            (None, "ASCEND_IS_AIV") if self.place.is_core() => Expr::CoreIsAiv,
            (None, "ASCEND_IS_AIC") if self.place.is_core() => Expr::Unary(UnOp::Not, Box::new(Expr::CoreIsAiv)),
            (None, _) => {
                let mut candidates: Vec<String> = self
                    .scopes
                    .iter()
                    .flat_map(|s| s.iter())
                    .filter(|(_, b)| matches!(b, Binding::Param(_) | Binding::Var(_) | Binding::Value(_)))
                    .map(|(n, _)| n.clone())
                    .collect();
                candidates.push("rank".into());
                if self.place.is_core() {
                    candidates.extend(["ASCEND_IS_AIV".into(), "ASCEND_IS_AIC".into()]);
                }
                self.unknown_name(span, "name", name, candidates.iter().map(String::as_str));
                Expr::Int(0)
            }
        }
    }

    fn lower_builtin_call(&mut self, call: &ast::Call) -> Expr {
        let name = call.callee.text.as_str();
        let name = name.strip_prefix("AscendC::").unwrap_or(name);
        match (name, call.args.as_slice(), self.place.is_core()) {
            ("GetBlockIdx", [], true) => Expr::BlockIdx,
            ("GetBlockNum", [], true) if self.kernel.is_some() => self
                .kernel
                .as_ref()
                .map_or(Expr::Int(1), |kernel| kernel.blocks.clone()),
            ("TILING_KEY_IS", [key], true) => {
                let key = self.lower_expr(&key.value);
                Expr::Binary(BinOp::Eq, Box::new(Expr::TilingKey), Box::new(key))
            }
            ("GetBlockIdx" | "GetBlockNum" | "TILING_KEY_IS", _, true) => {
                self.syntax_error(
                    &call.span,
                    format!("wrong arguments to `{name}`"),
                    "expected `GetBlockIdx()` or `TILING_KEY_IS(key)`",
                );
                Expr::Int(0)
            }
            _ => {
                self.syntax_error(
                    &call.span,
                    format!("`{}` cannot be used in an expression", call.callee.text),
                    "only `GetBlockIdx()` and `TILING_KEY_IS(key)` can, inside a subkernel",
                );
                Expr::Int(0)
            }
        }
    }
}

/// `expr` as a constant when its operands are (already folded) constants, so that a
/// `let` chain (`let x1 = x0 + x0;`) names one number instead of a copied tree that
/// doubles with every step. An overflow stays unfolded: evaluating it reports it.
pub(super) fn folded(expr: Expr) -> Expr {
    // Only integer arithmetic: a comparison or `!` stays a condition for the prover.
    let arithmetic = |op: &BinOp| {
        matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Div
                | BinOp::Rem
                | BinOp::BitAnd
                | BinOp::BitXor
                | BinOp::BitOr
                | BinOp::Shl
                | BinOp::Shr
        )
    };
    let operands_constant = match &expr {
        Expr::Unary(UnOp::Neg, operand) => matches!(**operand, Expr::Int(_)),
        Expr::Binary(op, lhs, rhs) => arithmetic(op) && matches!((&**lhs, &**rhs), (Expr::Int(_), Expr::Int(_))),
        _ => false,
    };
    match operands_constant.then(|| expr.as_const()).flatten() {
        Some(value) => Expr::Int(value),
        None => expr,
    }
}

/// `GetBlockIdx()` and `TILING_KEY_IS(k)`: calls that are values, not API calls.
pub(super) fn is_builtin_call(call: &ast::Call) -> bool {
    let name = call.callee.text.strip_prefix("AscendC::").unwrap_or(&call.callee.text);
    BUILTIN_CALLS.contains(&name)
}

const BUILTIN_CALLS: [&str; 3] = ["GetBlockIdx", "GetBlockNum", "TILING_KEY_IS"];

fn binary_op(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Rem => BinOp::Rem,
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::BitAnd => BinOp::BitAnd,
        BinaryOp::BitXor => BinOp::BitXor,
        BinaryOp::BitOr => BinOp::BitOr,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::Eq => BinOp::Eq,
        BinaryOp::Ne => BinOp::Ne,
        BinaryOp::Lt => BinOp::Lt,
        BinaryOp::Le => BinOp::Le,
        BinaryOp::Gt => BinOp::Gt,
        BinaryOp::Ge => BinOp::Ge,
        BinaryOp::And => BinOp::And,
        BinaryOp::Or => BinOp::Or,
    }
}
