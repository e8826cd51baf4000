//! Tiling fields a kernel divides by: `blockLength = totalLength / blockDim`,
//! `tileLength = blockLength / tileNum / BUFFER_NUM`. The host's tiling never writes a
//! zero there (the samples assert it: `ASSERT(tileNum != 0)`), and a launch that did
//! would divide by zero before its first instruction, so walking it checks nothing and
//! only stops the walk. Such a field's launches take values from 1, and the assumption
//! is said as a note, as case fields' are.

use std::collections::BTreeSet;

use crate::model::{BinOp, Expr, ParamId, Program};
use syncguard_model::kernel::Kernel;

/// The fields that are, alone or as factors of a product, the right side of a `/` or
/// `%` in the kernel, whose range starts at 0. A divisor like `n - 1` says nothing
/// about `n` and is left alone.
pub fn divisor_fields(program: &Program, kernel: &Kernel) -> Vec<ParamId> {
    let mut fields = BTreeSet::new();
    super::for_each_expr(kernel, &mut |expr| record(expr, &mut fields));
    fields
        .into_iter()
        .filter(|param| {
            let param = &program.params[param.0 as usize];
            param.min < 1 && param.max.is_none_or(|max| max >= 1)
        })
        .collect()
}

/// `program` with each divisor field's range starting at 1.
pub fn narrowed(mut program: Program, fields: &[ParamId]) -> Program {
    for field in fields {
        let param = &mut program.params[field.0 as usize];
        param.min = param.min.max(1);
    }
    program
}

/// The note on a kernel's divisor fields.
pub fn assumption(program: &Program, kernel: &Kernel, fields: &[ParamId]) -> String {
    let names: Vec<String> = fields
        .iter()
        .map(|field| format!("`{}`", program.params[field.0 as usize].name))
        .collect();
    format!(
        "kernel `{}` divides by {}: it is checked for values from 1, not for 0 (a launch dividing by zero runs \
         nothing the kernel was written for)",
        kernel.name,
        names.join(", ")
    )
}

fn record(expr: &Expr, fields: &mut BTreeSet<ParamId>) {
    match expr {
        Expr::Binary(BinOp::Div | BinOp::Rem, a, b) => {
            record(a, fields);
            factors(b, fields);
            record(b, fields);
        }
        Expr::Unary(_, a) => record(a, fields),
        Expr::Binary(_, a, b) => {
            record(a, fields);
            record(b, fields);
        }
        Expr::Cond(parts) => parts.iter().for_each(|part| record(part, fields)),
        _ => {}
    }
}

/// The fields of a divisor that is a product of fields and positive constants.
fn factors(divisor: &Expr, fields: &mut BTreeSet<ParamId>) {
    fn collect(expr: &Expr, found: &mut Vec<ParamId>) -> bool {
        match expr {
            Expr::Param(param) => {
                found.push(*param);
                true
            }
            Expr::Int(value) => *value > 0,
            Expr::Binary(BinOp::Mul, a, b) => collect(a, found) && collect(b, found),
            _ => false,
        }
    }
    let mut found = Vec::new();
    if collect(divisor, &mut found) {
        fields.extend(found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(id: u32) -> Box<Expr> {
        Box::new(Expr::Param(ParamId(id)))
    }

    fn fields_of(expr: &Expr) -> BTreeSet<ParamId> {
        let mut fields = BTreeSet::new();
        record(expr, &mut fields);
        fields
    }

    #[test]
    fn a_field_divided_by_is_a_divisor() {
        let length = Expr::Binary(BinOp::Div, param(0), param(1));
        assert_eq!(fields_of(&length), BTreeSet::from([ParamId(1)]));
    }

    #[test]
    fn the_factors_of_a_product_are_divisors() {
        let product = Expr::Binary(BinOp::Mul, param(1), Box::new(Expr::Int(2)));
        let length = Expr::Binary(BinOp::Rem, param(0), Box::new(product));
        assert_eq!(fields_of(&length), BTreeSet::from([ParamId(1)]));
    }

    #[test]
    fn a_difference_says_nothing() {
        let less_one = Expr::Binary(BinOp::Sub, param(1), Box::new(Expr::Int(1)));
        let length = Expr::Binary(BinOp::Div, param(0), Box::new(less_one));
        assert!(fields_of(&length).is_empty());
    }
}
