//! Type tests in kernel code: `std::is_same<T, half>::value`, `std::is_same_v<T, half>`,
//! `AscendC::IsSameType<T, half>::value`. Where the kernel class's template arguments
//! name both types the test is decided. Where one comes from the build (`DTYPE_X`), the
//! build picks one of the types the kernel tests it against: one parameter per such type
//! for the whole entry point (`param type_DTYPE_X in 0..=2;`, one value per type tested),
//! so that the same test in every tile, helper and `if constexpr` decides the same way and
//! two tests of one type never both hold. Each test asked afresh would let the walk take
//! builds that do not exist: none of three exclusive `if constexpr` blocks, or two. The
//! build type's size (`sizeof_DTYPE_X`) follows the same choice where the tested types'
//! sizes are known.

use tree_sitter::Node;

use super::Walker;
use super::ast;
use super::value::Value;

/// The types built from a name with no definition in the files, as tested so far.
#[derive(Clone, Default)]
pub(super) struct TypeChoices {
    /// The type's name (`DTYPE_X`), its parameter, and the types tested against it in
    /// the order first tested (the parameter's values).
    choices: Vec<(String, String, Vec<String>)>,
}

/// Ascend C scalar types the C/C++ sizes table (`expr::type_size`) does not size: with
/// those it sizes, a test between two of them is decided.
const UNSIZED_KERNEL_TYPES: &[&str] = &[
    "int4b_t",
    "hifloat8_t",
    "fp8_e4m3fn_t",
    "fp8_e5m2_t",
    "fp4x2_e2m1_t",
    "fp4x2_e1m2_t",
];

fn is_known_type(name: &str) -> bool {
    super::expr::type_size(name).is_some() || UNSIZED_KERNEL_TYPES.contains(&name)
}

/// How deep template arguments are followed (`T` → `U` → `half`).
const MAX_BINDINGS: usize = 4;

impl<'u> Walker<'_, 'u> {
    /// Whether `node` is a type test this module decides.
    pub(super) fn is_type_test(&self, node: Node<'u>) -> bool {
        self.aicore.is_some() && parse_type_test(self.text(node)).is_some()
    }

    /// The value of a type test: 1 or 0 where both types are known (or are the same
    /// name), else `type_NAME == k` for the `k`-th type tested against the build's type.
    pub(super) fn type_test(&mut self, node: Node<'u>) -> Value {
        let Some((left, right)) = parse_type_test(self.text(node)) else {
            return Value::Unknown;
        };
        let (left, right) = (self.bound_type(&left), self.bound_type(&right));
        if left == right {
            return Value::Int(1);
        }
        let (built, tested) = match (is_known_type(&left), is_known_type(&right)) {
            (true, true) => return Value::Int(0),
            (false, true) => (left, right),
            (true, false) => (right, left),
            (false, false) => return Value::Unknown,
        };
        let span = self.range(node);
        let (param, index) = self.type_choice(&built, &tested, span.clone());
        Value::Sym(super::ast_binary(
            ast::BinaryOp::Eq,
            ast::Expr::name(&param, span.clone()),
            ast::Expr::int(index as i64, span),
        ))
    }

    /// The type a name stands for through the kernel class's template arguments.
    fn bound_type(&self, name: &str) -> String {
        let mut name = canonical(name);
        for _ in 0..MAX_BINDINGS {
            match self.aicore.as_ref().and_then(|state| state.type_args.get(&name)) {
                Some(bound) if canonical(bound) != name => name = canonical(bound),
                _ => break,
            }
        }
        name
    }

    /// The parameter of `built` and the value that stands for `tested`, declaring them
    /// on first use.
    fn type_choice(&mut self, built: &str, tested: &str, span: std::ops::Range<usize>) -> (String, usize) {
        let existing = self
            .aicore
            .as_ref()
            .and_then(|state| state.type_choices.choices.iter().position(|(name, _, _)| name == built));
        let at = match existing {
            Some(at) => at,
            None => {
                let param = self.object_name(&format!("type_{}", identifier_of(built)));
                self.declare_param(&param, 0, Some(0), span);
                let state = self.aicore.as_mut().expect("type tests are decided in kernels");
                state.type_choices.choices.push((built.to_string(), param, Vec::new()));
                state.type_choices.choices.len() - 1
            }
        };
        let state = self.aicore.as_mut().expect("type tests are decided in kernels");
        let (_, param, tested_types) = &mut state.type_choices.choices[at];
        let index = match tested_types.iter().position(|t| t == tested) {
            Some(index) => index,
            None => {
                tested_types.push(tested.to_string());
                tested_types.len() - 1
            }
        };
        (param.clone(), index)
    }

    /// Give each type parameter one value per type tested (declared as `0..=0`), and one
    /// more where the kernel has code for a type none of its tests names (an `else`
    /// after them, a negated test): the build makes such a type too.
    pub(super) fn bound_type_choices(&mut self) {
        let Some(state) = self.aicore.as_ref() else {
            return;
        };
        let body = self.blocks.last().map(Vec::as_slice).unwrap_or_default();
        let mut ties: Vec<(String, String, Vec<String>, bool)> = Vec::new();
        for (built, param, tested) in &state.type_choices.choices {
            let other = code_for_another_type(body, param, 0);
            for stmt in &mut self.prelude {
                if let ast::StmtKind::Param { name, range } = &mut stmt.kind
                    && name.name == *param
                    && let Some(end) = &mut range.end
                {
                    let last = (tested.len() + usize::from(other)).saturating_sub(1) as i64;
                    **end = ast::Expr::int(last, end.span.clone());
                }
            }
            if let Some(size) = state.params.get(&format!("sizeof({built})")) {
                ties.push((size.clone(), param.clone(), tested.clone(), other));
            }
        }
        for (size, param, tested, other) in ties {
            self.tie_size(&size, &param, &tested, other);
        }
    }

    /// Ties the build type's `sizeof_X` to its choice `type_X`, where every type tested
    /// against it has a known size: `let sizeof_X = type_X == 0 ? 4 : type_X == 1 ? 2 :
    /// sizeof_X_other;`, the last a free size only where the build also makes a type no
    /// test names. A finding then names no size its build type does not have.
    fn tie_size(&mut self, size: &str, param: &str, tested: &[String], other: bool) {
        let Some(sizes) = tested
            .iter()
            .map(|t| self.type_size_of(t))
            .collect::<Option<Vec<i64>>>()
        else {
            return;
        };
        let Some(at) = self.prelude.iter().position(|stmt| declares(stmt, size)) else {
            return;
        };
        let span = self.prelude[at].span.clone();
        let (mut value, arms, free) = match (other, sizes.split_last()) {
            (true, _) => {
                let free = self.object_name(&format!("{size}_other"));
                if let ast::StmtKind::Param { name, .. } = &mut self.prelude[at].kind {
                    name.name = free.clone();
                }
                (ast::Expr::name(&free, span.clone()), sizes.as_slice(), Some(free))
            }
            (false, Some((last, arms))) => {
                self.prelude.remove(at);
                (ast::Expr::int(*last, span.clone()), arms, None)
            }
            (false, None) => return,
        };
        for (index, bytes) in arms.iter().enumerate().rev() {
            value = size_if_chosen(param, index, *bytes, value);
        }
        // After the parameters it reads.
        let after = self
            .prelude
            .iter()
            .rposition(|stmt| declares(stmt, param) || free.as_deref().is_some_and(|free| declares(stmt, free)))
            .map_or(0, |at| at + 1);
        let name = ast::Ident {
            name: size.to_string(),
            span: span.clone(),
        };
        self.prelude.insert(
            after,
            ast::Stmt {
                kind: ast::StmtKind::Let {
                    pattern: ast::Pattern::Name(name),
                    value,
                },
                span,
            },
        );
    }
}

/// `param == index ? bytes : otherwise`.
fn size_if_chosen(param: &str, index: usize, bytes: i64, otherwise: ast::Expr) -> ast::Expr {
    let span = otherwise.span.clone();
    let cond = super::ast_binary(
        ast::BinaryOp::Eq,
        ast::Expr::name(param, span.clone()),
        ast::Expr::int(index as i64, span.clone()),
    );
    ast::Expr {
        span: span.clone(),
        kind: ast::ExprKind::Cond {
            cond: Box::new(cond),
            then: Box::new(ast::Expr::int(bytes, span)),
            otherwise: Box::new(otherwise),
        },
    }
}

/// Whether `stmt` declares the parameter `name`.
fn declares(stmt: &ast::Stmt, name: &str) -> bool {
    matches!(&stmt.kind, ast::StmtKind::Param { name: declared, .. } if declared.name == name)
}

/// `is_same<A, B>::value`, `is_same_v<A, B>`, `IsSameType<A, B>::value` (any namespace):
/// `(A, B)`.
fn parse_type_test(text: &str) -> Option<(String, String)> {
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let open = text.find('<')?;
    let trait_name = text[..open].trim().rsplit("::").next()?.trim();
    let close = text.rfind('>')?;
    let suffix = text[close + 1..].trim();
    let wants_value = match trait_name {
        "is_same" | "IsSameType" => true,
        "is_same_v" => false,
        _ => return None,
    };
    if wants_value != (suffix == "::value") || (!wants_value && !suffix.is_empty()) {
        return None;
    }
    let args = super::aicore::split_top_level(&text[open + 1..close]);
    match args.as_slice() {
        [left, right] => Some((left.trim().to_string(), right.trim().to_string())),
        _ => None,
    }
}

/// A type's name without qualifiers, namespaces or blanks; `float16_t` is `half`.
fn canonical(name: &str) -> String {
    let name = name
        .trim()
        .trim_start_matches("const ")
        .trim_end_matches(" const")
        .trim();
    let name = name.trim_start_matches("::");
    let name = name
        .strip_prefix("std::")
        .or_else(|| name.strip_prefix("AscendC::"))
        .unwrap_or(name);
    match name {
        "float16_t" => "half".to_string(),
        "float32_t" => "float".to_string(),
        other => other.split_whitespace().collect(),
    }
}

/// A type's name as part of a parameter name.
fn identifier_of(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Whether `stmts` hold an arm that runs for a type none of the tests of `param` names:
/// a non-empty `else` ending a chain of tests (`if constexpr (is_same_v<T, float>) {..}
/// else {..}`), or a test negated (`!is_same_v<T, float>`).
fn code_for_another_type(stmts: &[ast::Stmt], param: &str, depth: usize) -> bool {
    if depth > super::MAX_NESTING {
        return false;
    }
    stmts.iter().any(|stmt| {
        let untested_arm = match &stmt.kind {
            ast::StmtKind::If { cond, otherwise, .. } if mentions(cond, param) => {
                negated(cond) || else_after_tests(otherwise.as_ref(), param)
            }
            _ => false,
        };
        untested_arm
            || stmt
                .blocks()
                .into_iter()
                .any(|block| code_for_another_type(&block.stmts, param, depth + 1))
    })
}

/// Whether the `else` chain after a type test ends in code of its own.
fn else_after_tests(mut otherwise: Option<&ast::Else>, param: &str) -> bool {
    for _ in 0..super::MAX_NESTING {
        // `else if` is read as an `else` block holding the next `if`.
        let nested = match otherwise {
            Some(ast::Else::Block(block)) => match block.stmts.as_slice() {
                [] => return false,
                [only] => only,
                _ => return true,
            },
            Some(ast::Else::If(nested)) => nested,
            None => return false,
        };
        match &nested.kind {
            ast::StmtKind::If {
                cond, otherwise: next, ..
            } if mentions(cond, param) => otherwise = next.as_ref(),
            _ => return true,
        }
    }
    false
}

fn negated(cond: &ast::Expr) -> bool {
    matches!(
        cond.kind,
        ast::ExprKind::Unary(ast::UnaryOp::Not, _) | ast::ExprKind::Binary(ast::BinaryOp::Ne, _, _)
    )
}

fn mentions(expr: &ast::Expr, param: &str) -> bool {
    fn visit(expr: &ast::Expr, param: &str, depth: usize) -> bool {
        depth <= super::MAX_NESTING
            && match &expr.kind {
                ast::ExprKind::Name(path) => path.text == param,
                ast::ExprKind::Unary(_, inner) => visit(inner, param, depth + 1),
                ast::ExprKind::Binary(_, a, b) => visit(a, param, depth + 1) || visit(b, param, depth + 1),
                _ => false,
            }
    }
    visit(expr, param, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_spellings() {
        let pair = |a: &str, b: &str| Some((a.to_string(), b.to_string()));
        assert_eq!(parse_type_test("std::is_same<T, half>::value"), pair("T", "half"));
        assert_eq!(
            parse_type_test("std::is_same_v<T, bfloat16_t>"),
            pair("T", "bfloat16_t")
        );
        assert_eq!(
            parse_type_test("AscendC::IsSameType<U, float>::value"),
            pair("U", "float")
        );
        assert_eq!(parse_type_test("is_same_v<T, Foo<int, 2>>"), pair("T", "Foo<int, 2>"));
    }

    #[test]
    fn leaves_other_traits_and_forms() {
        assert_eq!(parse_type_test("std::is_integral<T>::value"), None);
        assert_eq!(parse_type_test("std::is_same<T, half>"), None);
        assert_eq!(parse_type_test("std::is_same_v<T, half>::value"), None);
        assert_eq!(parse_type_test("std::is_same<T>::value"), None);
    }

    #[test]
    fn canonical_names() {
        assert_eq!(canonical("const float16_t"), "half");
        assert_eq!(canonical("std::int32_t"), "int32_t");
        assert_eq!(canonical("AscendC::bfloat16_t"), "bfloat16_t");
    }
}
