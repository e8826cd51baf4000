//! Parser regressions: forms that must parse, and how `<` is disambiguated.

use syncguard_grammar::ast::{BinaryOp, ExprKind, StmtKind};
use syncguard_grammar::parse;

#[test]
fn struct_literals_nested_in_conditions_and_ranges_parse() {
    for src in [
        "if f({ a: 1 }) { g(); }",
        "if [{ a: 1 }] == x { g(); }",
        "if ({ a: 1 }) == x { g(); }",
        "for a in 0..f({ b: 2 }) { x(); }",
        "for i in 0.. { x(); }",
        "param K in 1..=4;",
    ] {
        let parsed = parse(src);
        assert!(parsed.errors.is_empty(), "{src}: {:?}", parsed.errors);
    }
}

#[test]
fn a_condition_block_is_never_a_struct_literal() {
    let parsed = parse("if ready { x: 1 }");
    assert!(
        !parsed.errors.is_empty(),
        "`{{ x: 1 }}` is a block, and `x: 1` is not a statement"
    );
    let parsed = parse("if ready { go(); }");
    assert!(parsed.errors.is_empty());
}

#[test]
fn less_than_is_a_template_only_before_parenthesised_arguments() {
    let call = |src: &str| match &parse(src).file.stmts[0].kind {
        StmtKind::Call(call) => call.clone(),
        other => panic!("{other:?}"),
    };
    assert!(call("F<PIPE_V>();").generics.is_some());
    let compare = call("f(a < b);");
    assert!(matches!(compare.args[0].value.kind, ExprKind::Binary(..)));
}

#[test]
fn product_names_starting_with_a_digit_are_names() {
    let parsed = parse("target 310P;");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert!(
        !parse("let x = 310Q;").errors.is_empty(),
        "other digit-led words stay bad numbers"
    );
}

#[test]
fn op_types_and_attributes_may_be_named_like_keywords() {
    let parsed = parse("op return attrs(group, ranks, attrs, thread) { }");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let StmtKind::GeOp { name, attrs, .. } = &parsed.file.stmts[0].kind else {
        panic!("{:?}", parsed.file.stmts[0]);
    };
    assert_eq!(name.name, "return");
    let attrs: Vec<&str> = attrs.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(attrs, ["group", "ranks", "attrs", "thread"]);
    // `NULL` and `nullptr` are one keyword: neither could read back as written.
    assert!(!parse("op X attrs(nullptr) { }").errors.is_empty());
}

#[test]
fn conditionals_are_right_associative_and_bind_loosest() {
    let parsed = parse("let x = a || b ? c + 1 : d ? e : f;");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let StmtKind::Let { value, .. } = &parsed.file.stmts[0].kind else {
        panic!("{:?}", parsed.file.stmts[0]);
    };
    let ExprKind::Cond { cond, otherwise, .. } = &value.kind else {
        panic!("{value:?}");
    };
    assert!(matches!(cond.kind, ExprKind::Binary(BinaryOp::Or, ..)));
    assert!(matches!(otherwise.kind, ExprKind::Cond { .. }));
}

#[test]
fn shifts_bind_between_sums_and_bitwise_and() {
    let parsed = parse("let x = a & b << c + d ^ e;");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let StmtKind::Let { value, .. } = &parsed.file.stmts[0].kind else {
        panic!("{:?}", parsed.file.stmts[0]);
    };
    // ((a & (b << (c + d))) ^ e)
    let ExprKind::Binary(BinaryOp::BitXor, lhs, _) = &value.kind else {
        panic!("{value:?}");
    };
    let ExprKind::Binary(BinaryOp::BitAnd, _, shifted) = &lhs.kind else {
        panic!("{lhs:?}");
    };
    assert!(matches!(shifted.kind, ExprKind::Binary(BinaryOp::Shl, ..)));
}

#[test]
fn keywords_may_name_arguments() {
    let parsed = parse("HcommThreadSynchronize(thread: t); f(return: 1, ranks: 2);");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let StmtKind::Call(call) = &parsed.file.stmts[0].kind else {
        panic!("{:?}", parsed.file.stmts[0]);
    };
    assert_eq!(call.args[0].name.as_ref().map(|n| n.name.as_str()), Some("thread"));
}

#[test]
fn brackets_after_an_expression_index_or_slice_it() {
    let parsed = parse("f(ts[i + 1], buf[0..4][1], xs[i][j]);");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let StmtKind::Call(call) = &parsed.file.stmts[0].kind else {
        panic!("{:?}", parsed.file.stmts[0]);
    };
    let ExprKind::Index { base, index } = &call.args[0].value.kind else {
        panic!("{:?}", call.args[0].value);
    };
    assert!(matches!(base.kind, ExprKind::Name(_)));
    assert!(matches!(index.kind, ExprKind::Binary(BinaryOp::Add, ..)));
    let ExprKind::Index { base, .. } = &call.args[1].value.kind else {
        panic!("{:?}", call.args[1].value);
    };
    assert!(matches!(base.kind, ExprKind::Slice { .. }));
    assert!(matches!(call.args[2].value.kind, ExprKind::Index { .. }));
}

#[test]
fn a_list_may_be_built_by_a_loop() {
    let parsed = parse("f([{ remoteRank: (rank + 1 + i) % N } for i in 0..N - 1], [a, b], [a,]);\ng([for]);");
    assert_eq!(parsed.errors.len(), 1, "only `[for]` is wrong: {:?}", parsed.errors);
    let StmtKind::Call(call) = &parsed.file.stmts[0].kind else {
        panic!("{:?}", parsed.file.stmts[0]);
    };
    let ExprKind::ListFor(list) = &call.args[0].value.kind else {
        panic!("{:?}", call.args[0].value);
    };
    assert!(matches!(list.item.kind, ExprKind::Struct(_)));
    assert_eq!(list.var.name, "i");
    assert!(!list.range.inclusive && list.range.end.is_some());
    assert!(matches!(call.args[1].value.kind, ExprKind::List(_)));
}

#[test]
fn host_code_has_mutable_variables_and_while_loops() {
    let parsed = parse("let mut left = N;\nwhile left > 0 { left = left - 1; }\nlet muted = 1;");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let kinds: Vec<&StmtKind> = parsed.file.stmts.iter().map(|s| &s.kind).collect();
    assert!(matches!(kinds[0], StmtKind::LetMut { name, .. } if name.name == "left"));
    let StmtKind::While { cond, body } = kinds[1] else {
        panic!("{:?}", kinds[1]);
    };
    assert!(matches!(cond.kind, ExprKind::Binary(BinaryOp::Gt, ..)));
    assert!(matches!(&body.stmts[0].kind, StmtKind::Assign { name, .. } if name.name == "left"));
    // `mut` is a keyword only as a word of its own.
    assert!(matches!(kinds[2], StmtKind::Let { .. }));
}
