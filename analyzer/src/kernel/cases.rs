//! Tiling fields a kernel only compares with constants: `if (hasBias == 1) {...}`,
//! `if (hasBias == 0) {...} else {...}`, `mode != 2`. Such a field is a flag or a mode
//! the host writes one of the compared values to; a launch at any other value runs code
//! the kernel was never written for (an `else` meant for `hasBias == 1` at `hasBias = 2`
//! waits for a queue the `== 1` arm never filled). Its launches take the values compared
//! (from the smallest to the largest), and the assumption is said as a note.

use std::collections::{BTreeSet, HashMap};

use crate::model::{BinOp, Expr, ParamId, Program};
use crate::source::Span;
use syncguard_model::kernel::{KStmt, Kernel};

/// A field and the constants it is compared with.
pub struct Case {
    pub param: ParamId,
    pub values: BTreeSet<i64>,
}

/// The kernel's fields used only in `==` / `!=` against two or more constants. Only
/// fields without an upper bound (values from the tiling data) are cases: a bounded
/// parameter (a branch the reader could not decide, the type the build picks) already
/// ranges over exactly its alternatives.
pub fn case_fields(program: &Program, kernel: &Kernel) -> Vec<Case> {
    let mut uses: HashMap<ParamId, Option<BTreeSet<i64>>> = HashMap::new();
    super::for_each_expr(kernel, &mut |expr| record(expr, &mut uses));
    let mut cases: Vec<Case> = uses
        .into_iter()
        .filter_map(|(param, values)| Some(Case { param, values: values? }))
        .filter(|case| case.values.len() >= 2 && program.params[case.param.0 as usize].max.is_none())
        .collect();
    cases.sort_by_key(|case| case.param.0);
    cases
}

/// `program` with each case field's range cut to its compared values.
pub fn narrowed(program: &Program, cases: &[Case]) -> Program {
    let mut program = program.clone();
    for case in cases {
        let param = &mut program.params[case.param.0 as usize];
        let (Some(&low), Some(&high)) = (case.values.first(), case.values.last()) else {
            continue;
        };
        param.min = low.max(param.min);
        param.max = Some(param.max.map_or(high, |max| max.min(high)));
    }
    program
}

/// What each parameter in `expr` is used for: `Some(constants)` while every use is a
/// comparison with a constant, `None` once any other use is seen.
fn record(expr: &Expr, uses: &mut HashMap<ParamId, Option<BTreeSet<i64>>>) {
    match expr {
        Expr::Binary(BinOp::Eq | BinOp::Ne, a, b) => match (a.as_ref(), b.as_ref()) {
            (Expr::Param(param), Expr::Int(value)) | (Expr::Int(value), Expr::Param(param)) => {
                if let Some(values) = uses.entry(*param).or_insert_with(|| Some(BTreeSet::new())) {
                    values.insert(*value);
                }
            }
            _ => {
                record(a, uses);
                record(b, uses);
            }
        },
        Expr::Param(param) => {
            uses.insert(*param, None);
        }
        Expr::Unary(_, a) => record(a, uses),
        Expr::Binary(_, a, b) => {
            record(a, uses);
            record(b, uses);
        }
        Expr::Cond(parts) => parts.iter().for_each(|part| record(part, uses)),
        _ => {}
    }
}

/// The note on a case field: where it is first compared, and what is assumed.
pub fn assumption(program: &Program, kernel: &Kernel, case: &Case) -> (Span, String) {
    let values: Vec<String> = case.values.iter().map(i64::to_string).collect();
    let (low, high) = (&values[0], &values[values.len() - 1]);
    let listed = match values.as_slice() {
        [a, b] => format!("{a} and {b}"),
        _ => values.join(", "),
    };
    let name = &program.params[case.param.0 as usize].name;
    let span = first_comparison(kernel, case.param).unwrap_or_else(|| kernel.span.clone());
    let message = format!(
        "kernel `{}` only compares `{name}` with {listed}: it is checked for values from {low} to {high}, not for \
         others",
        kernel.name
    );
    (span, message)
}

/// Where a case field is compared first: the note's place.
fn first_comparison(kernel: &Kernel, param: ParamId) -> Option<Span> {
    fn find(stmts: &[KStmt], param: ParamId) -> Option<Span> {
        stmts.iter().find_map(|stmt| match stmt {
            KStmt::If {
                cond,
                then,
                otherwise,
                span,
            } => mentions(cond, param)
                .then(|| span.clone())
                .or_else(|| find(then, param))
                .or_else(|| find(otherwise, param)),
            KStmt::For { body, .. } => find(body, param),
            _ => None,
        })
    }
    find(&kernel.body, param)
}

fn mentions(expr: &Expr, param: ParamId) -> bool {
    match expr {
        Expr::Param(p) => *p == param,
        Expr::Unary(_, a) => mentions(a, param),
        Expr::Binary(_, a, b) => mentions(a, param) || mentions(b, param),
        Expr::Cond(parts) => parts.iter().any(|part| mentions(part, param)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eq(param: u32, value: i64) -> Expr {
        Expr::Binary(
            BinOp::Eq,
            Box::new(Expr::Param(ParamId(param))),
            Box::new(Expr::Int(value)),
        )
    }

    fn uses_of(exprs: &[Expr]) -> HashMap<ParamId, Option<BTreeSet<i64>>> {
        let mut uses = HashMap::new();
        exprs.iter().for_each(|expr| record(expr, &mut uses));
        uses
    }

    #[test]
    fn a_field_only_compared_is_a_case() {
        let uses = uses_of(&[eq(0, 1), eq(0, 0)]);
        assert_eq!(uses[&ParamId(0)], Some(BTreeSet::from([0, 1])));
    }

    #[test]
    fn any_other_use_makes_it_a_number() {
        let length = Expr::Binary(BinOp::Mul, Box::new(Expr::Param(ParamId(0))), Box::new(Expr::Int(4)));
        assert_eq!(uses_of(&[eq(0, 1), length.clone()])[&ParamId(0)], None);
        assert_eq!(uses_of(&[length, eq(0, 1)])[&ParamId(0)], None);
    }
}
