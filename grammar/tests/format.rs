//! `syncguard fmt`: canonical output, comment placement, idempotence, and the round
//! trip print → parse over hand-written sources and over generated syntax trees.

use proptest::collection::vec;
use proptest::prelude::*;
use syncguard_grammar::ast::*;
use syncguard_grammar::lexer::lex;
use syncguard_grammar::spanless::same_syntax;
use syncguard_grammar::{Parsed, format, parse};

/// Format `src`, checking on the way that the output is stable and means the same.
fn fmt(src: &str) -> String {
    let parsed = parse(src);
    assert!(parsed.errors.is_empty(), "input does not parse: {:?}", parsed.errors);
    let out = format(src, &parsed);
    let reparsed = parse(&out);
    assert!(
        reparsed.errors.is_empty(),
        "output does not parse:\n{out}\n{:?}",
        reparsed.errors
    );
    assert!(
        same_syntax(&reparsed.file, &parsed.file),
        "output changed the tree:\n{out}"
    );
    assert_eq!(format(&out, &reparsed), out, "formatting is not idempotent");
    out
}

#[test]
fn comments_stay_where_they_were() {
    let src = "// leading comment
target   A3;   // trailing comment
/* a block
     comment kept verbatim */
thread worker { // after the brace
    f(a,
      // inside an argument list
      b);
    g(); /* two */ // trailing comments

    // before the closing brace
}
// end of file
";
    insta::assert_snapshot!(fmt(src), @r"
    // leading comment
    target A3; // trailing comment
    /* a block
         comment kept verbatim */
    thread worker { // after the brace
        f(a, b); // inside an argument list
        g(); /* two */ // trailing comments

        // before the closing brace
    }
    // end of file
    ");
}

#[test]
fn comments_inside_an_if_chain() {
    let src = "if a < b // why
  && !c { f(); } /* between */ else // after else
  if d { } // empty branch
  else { return; }
for i in 0..N { g(i); // last in loop
}
";
    insta::assert_snapshot!(fmt(src), @r"
    if a < b && !c { // why
        f();
    } else if d { /* between */ // after else
    } else { // empty branch
        return;
    }
    for i in 0..N {
        g(i); // last in loop
    }
    ");
}

#[test]
fn blank_lines_are_kept_and_collapsed() {
    let src = "target A3;



ranks 2;
let s = create();
thread t {

    a();



    // about b
    b();

}
";
    insta::assert_snapshot!(fmt(src), @r"
    target A3;

    ranks 2;
    let s = create();
    thread t {
        a();

        // about b
        b();
    }
    ");
}

#[test]
fn minimal_parentheses() {
    let src = "ranks ((a + b) * c);
param K in (a - (b - c))..=-(a + b);
f(a + (b * c), (a * b) + c, (a - b) - c, !(!x), (a || b) && c, a || (b && c), a < (b < c));
f((-x)[0..1], -(x[0..1]), (a + b)[1..], buf[a * 2..=n]);
";
    insta::assert_snapshot!(fmt(src), @r"
    ranks (a + b) * c;
    param K in a - (b - c)..=-(a + b);
    f(a + b * c, a * b + c, a - b - c, !!x, (a || b) && c, a || b && c, a < (b < c));
    f((-x)[0..1], -x[0..1], (a + b)[1..], buf[a * 2..=n]);
    ");
}

#[test]
fn comparisons_that_would_read_as_template_calls_keep_parentheses() {
    // Bare, `x < g > (y || z)` is the call `x<g>(y || z)`, and so are the arguments
    // `a < b, c > (d || e)`.
    let src = "f((x < g) > (y || z), (a < b), c > (d || e), (p < q) > r);\n";
    insta::assert_snapshot!(fmt(src), @"f((x < g) > (y || z), (a < b), c > (d || e), p < q > r);");
}

#[test]
fn literals_hex_units_and_strings() {
    let src = r#"hccl_buffer_size 0x1f   MiB;
f(4 KiB, 0XfF, 1_000, 0x10 GiB, 7 B, "tab\there \"quoted\" back\\slash\nnewline", NULL, nullptr, true);
"#;
    insta::assert_snapshot!(fmt(src), @r#"
    hccl_buffer_size 0x1F MiB;
    f(4 KiB, 0xFF, 1000, 0x10 GiB, 7 B, "tab\there \"quoted\" back\\slash\nnewline", NULL, NULL, true);
    "#);
}

#[test]
fn nested_if_else_chains() {
    let src = "if a == 1 { f(); } else if b { if c { g(); } else { h(); } } else if !d {} else { return; }
for i in 0..N { if i % 2 == 0 { record(ev, s1); } }
";
    insta::assert_snapshot!(fmt(src), @r"
    if a == 1 {
        f();
    } else if b {
        if c {
            g();
        } else {
            h();
        }
    } else if !d {
    } else {
        return;
    }
    for i in 0..N {
        if i % 2 == 0 {
            record(ev, s1);
        }
    }
    ");
}

#[test]
fn ops_and_kernels() {
    let src = "cann legacy;
ranks N in 2..=8;
op MatmulAllReduce attrs(group,group_tp) { let [t0, t1] = HcclThreadAcquire(comm, 2); }
op Plain attrs() { x(); }
superkernel sk(s1, aic: 24, aiv: 48) {
    subkernel add(tiling_keys: [1, 2]) { AscendC::SetNextTaskStart<PIPE_V, 3, true>(); }
    subkernel plain { desc({ remoteRank: 1, notifyNum: 3 }, {}); k<>(); return; }
}
superkernel empty() {}
";
    insta::assert_snapshot!(fmt(src), @r"
    cann legacy;
    ranks N in 2..=8;
    op MatmulAllReduce attrs(group, group_tp) {
        let [t0, t1] = HcclThreadAcquire(comm, 2);
    }
    op Plain {
        x();
    }
    superkernel sk(s1, aic: 24, aiv: 48) {
        subkernel add(tiling_keys: [1, 2]) {
            AscendC::SetNextTaskStart<PIPE_V, 3, true>();
        }
        subkernel plain {
            desc({ remoteRank: 1, notifyNum: 3 }, {});
            k<>();
            return;
        }
    }
    superkernel empty() {}
    ");
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(fmt(""), "");
    assert_eq!(fmt("\n\n  \n"), "");
    assert_eq!(
        fmt("  // only a comment   \n\n\n/* and another */"),
        "// only a comment\n\n/* and another */\n"
    );
}

#[test]
fn error_nodes_print_without_panicking() {
    let file = File {
        stmts: vec![Stmt {
            kind: StmtKind::Error,
            span: 0..0,
        }],
    };
    let parsed = Parsed {
        file,
        errors: vec![],
        comments: vec![],
    };
    assert_eq!(format("", &parsed), "/* error */\n");
}

mod generated {
    use super::*;
    use proptest::option;
    use proptest::sample::select;

    /// Keywords, setting keys and size units: none of them reads back as a plain name.
    const RESERVED: &[&str] = &[
        "let",
        "if",
        "else",
        "for",
        "in",
        "thread",
        "op",
        "attrs",
        "superkernel",
        "subkernel",
        "return",
        "ranks",
        "param",
        "true",
        "false",
        "NULL",
        "nullptr",
        "target",
        "cann",
        "hccl_buffer_size",
        "B",
        "KiB",
        "MiB",
        "GiB",
        "KB",
        "MB",
        "GB",
    ];

    const BINARY_OPS: [BinaryOp; 15] = [
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::BitAnd,
        BinaryOp::BitOr,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::And,
        BinaryOp::Or,
    ];

    fn expr_of(kind: ExprKind) -> Expr {
        Expr { kind, span: 0..0 }
    }

    fn stmt_of(kind: StmtKind) -> Stmt {
        Stmt { kind, span: 0..0 }
    }

    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z_][a-zA-Z0-9_]{0,5}".prop_filter("reserved word", |name| !RESERVED.contains(&name.as_str()))
    }

    fn ident() -> impl Strategy<Value = Ident> {
        name().prop_map(|name| Ident { name, span: 0..0 })
    }

    fn path() -> impl Strategy<Value = Path> {
        let separator = prop_oneof![Just("."), Just("::")];
        (name(), vec((separator, name()), 0..3)).prop_map(|(first, rest)| {
            let text = rest.into_iter().fold(first, |text, (sep, next)| text + sep + &next);
            Path { text, span: 0..0 }
        })
    }

    fn int_lit(with_unit: bool) -> impl Strategy<Value = IntLit> {
        let unit = if with_unit {
            option::of(select(SizeUnit::ALL.to_vec())).boxed()
        } else {
            Just(None).boxed()
        };
        (any::<u64>(), any::<bool>(), unit).prop_map(|(value, hex, unit)| IntLit { value, hex, unit })
    }

    fn leaf_expr() -> impl Strategy<Value = Expr> {
        prop_oneof![
            int_lit(true).prop_map(ExprKind::Int),
            "[ -~\n\t]{0,6}".prop_map(ExprKind::Str),
            any::<bool>().prop_map(ExprKind::Bool),
            Just(ExprKind::Null),
            path().prop_map(ExprKind::Name),
        ]
        .prop_map(expr_of)
    }

    /// Template arguments are restricted by the grammar to names, integers and booleans.
    fn generic_arg() -> impl Strategy<Value = Expr> {
        prop_oneof![
            path().prop_map(ExprKind::Name),
            int_lit(false).prop_map(ExprKind::Int),
            any::<bool>().prop_map(ExprKind::Bool),
        ]
        .prop_map(expr_of)
    }

    fn range(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = RangeExpr> {
        (expr.clone(), option::of(expr), any::<bool>()).prop_map(|(start, end, inclusive)| RangeExpr {
            inclusive: inclusive && end.is_some(),
            start: Box::new(start),
            end: end.map(Box::new),
            span: 0..0,
        })
    }

    fn args(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = Vec<Arg>> {
        vec((option::of(ident()), expr), 0..4)
            .prop_map(|args| args.into_iter().map(|(name, value)| Arg { name, value }).collect())
    }

    fn call(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = Call> {
        (path(), option::of(vec(generic_arg(), 0..3)), args(expr)).prop_map(|(callee, generics, args)| Call {
            callee,
            generics,
            args,
            span: 0..0,
        })
    }

    fn expr() -> BoxedStrategy<Expr> {
        leaf_expr()
            .prop_recursive(4, 48, 4, |inner| {
                prop_oneof![6 => compound_expr(inner.clone()), 1 => struct_expr(inner)].prop_map(expr_of)
            })
            .boxed()
    }

    /// A condition or loop range: no struct literal at its outermost level (a `{` there
    /// starts the block), but anywhere inside brackets, calls and lists.
    fn condition() -> BoxedStrategy<Expr> {
        leaf_expr()
            .prop_recursive(4, 48, 4, |inner| {
                let full = expr();
                prop_oneof![
                    (select(vec![UnaryOp::Neg, UnaryOp::Not]), inner.clone())
                        .prop_map(|(op, operand)| ExprKind::Unary(op, Box::new(operand))),
                    (select(BINARY_OPS.to_vec()), inner.clone(), inner.clone())
                        .prop_map(|(op, lhs, rhs)| ExprKind::Binary(op, Box::new(lhs), Box::new(rhs))),
                    call(full.clone()).prop_map(|call| ExprKind::Call(Box::new(call))),
                    (inner, range(full.clone())).prop_map(|(base, range)| ExprKind::Slice {
                        base: Box::new(base),
                        range,
                    }),
                    vec(full, 0..4).prop_map(ExprKind::List),
                ]
                .prop_map(expr_of)
            })
            .boxed()
    }

    fn struct_expr(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = ExprKind> {
        vec((ident(), inner), 0..3).prop_map(|fields| {
            let fields = fields.into_iter().map(|(name, value)| Field { name, value });
            ExprKind::Struct(fields.collect())
        })
    }

    fn compound_expr(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = ExprKind> {
        prop_oneof![
            (select(vec![UnaryOp::Neg, UnaryOp::Not]), inner.clone())
                .prop_map(|(op, operand)| ExprKind::Unary(op, Box::new(operand))),
            (select(BINARY_OPS.to_vec()), inner.clone(), inner.clone()).prop_map(|(op, lhs, rhs)| ExprKind::Binary(
                op,
                Box::new(lhs),
                Box::new(rhs)
            )),
            call(inner.clone()).prop_map(|call| ExprKind::Call(Box::new(call))),
            (inner.clone(), range(inner.clone())).prop_map(|(base, range)| ExprKind::Slice {
                base: Box::new(base),
                range,
            }),
            vec(inner, 0..4).prop_map(ExprKind::List),
        ]
    }

    /// Expressions dense in `<`, `>` and parentheses next to names: the shapes where a
    /// comparison could read as template arguments, as in `a < b > (c)` = `a<b>(c)`.
    fn comparison_expr() -> BoxedStrategy<Expr> {
        let leaf = prop_oneof![
            "[a-d]".prop_map(|text| ExprKind::Name(Path { text, span: 0..0 })),
            (0u64..3).prop_map(|value| ExprKind::Int(IntLit {
                value,
                hex: false,
                unit: None
            })),
            any::<bool>().prop_map(ExprKind::Bool),
        ];
        let ops = vec![BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Or, BinaryOp::Mul];
        leaf.prop_map(expr_of)
            .prop_recursive(4, 24, 4, move |inner| {
                prop_oneof![
                    4 => (select(ops.clone()), inner.clone(), inner.clone()).prop_map(
                        |(op, lhs, rhs)| ExprKind::Binary(op, Box::new(lhs), Box::new(rhs))
                    ),
                    1 => inner
                        .clone()
                        .prop_map(|operand| ExprKind::Unary(UnaryOp::Neg, Box::new(operand))),
                    1 => vec(inner.clone(), 0..4).prop_map(ExprKind::List),
                    1 => (inner.clone(), range(inner)).prop_map(|(base, range)| ExprKind::Slice {
                        base: Box::new(base),
                        range,
                    }),
                ]
                .prop_map(expr_of)
            })
            .boxed()
    }

    /// One statement-level call whose positional arguments are [`comparison_expr`]s.
    pub(super) fn comparison_call() -> impl Strategy<Value = File> {
        vec(comparison_expr(), 1..5).prop_map(|values| {
            let call = Call {
                callee: Path {
                    text: "f".into(),
                    span: 0..0,
                },
                generics: None,
                args: values.into_iter().map(|value| Arg { name: None, value }).collect(),
                span: 0..0,
            };
            File {
                stmts: vec![stmt_of(StmtKind::Call(call))],
            }
        })
    }

    fn simple_stmt() -> impl Strategy<Value = Stmt> {
        let expr = expr();
        let setting_key = select(syncguard_grammar::SETTING_KEYS.to_vec());
        let pattern = prop_oneof![
            ident().prop_map(Pattern::Name),
            vec(ident(), 1..4).prop_map(|names| Pattern::List(names, 0..0)),
        ];
        prop_oneof![
            (setting_key, expr.clone()).prop_map(|(key, value)| StmtKind::Setting {
                key: Ident {
                    name: key.to_string(),
                    span: 0..0
                },
                value
            }),
            expr.clone().prop_map(|count| StmtKind::Ranks(RankCount::Fixed(count))),
            (ident(), range(condition())).prop_map(|(name, range)| StmtKind::Ranks(RankCount::Param { name, range })),
            (ident(), range(condition())).prop_map(|(name, range)| StmtKind::Param { name, range }),
            (pattern, call(expr.clone())).prop_map(|(pattern, value)| StmtKind::Let {
                pattern,
                value: expr_of(ExprKind::Call(Box::new(value)))
            }),
            (ident(), expr.clone()).prop_map(|(name, value)| StmtKind::Let {
                pattern: Pattern::Name(name),
                value
            }),
            call(expr).prop_map(StmtKind::Call),
            Just(StmtKind::Return),
        ]
        .prop_map(stmt_of)
    }

    fn block(stmt: BoxedStrategy<Stmt>) -> impl Strategy<Value = Block> {
        vec(stmt, 0..3).prop_map(|stmts| Block { stmts, span: 0..0 })
    }

    /// `if` with an optional `else { }` or `else if` chain of up to two links.
    fn if_stmt(stmt: BoxedStrategy<Stmt>) -> impl Strategy<Value = StmtKind> {
        let link = || (condition(), block(stmt.clone()));
        let tail = option::of(block(stmt.clone()).prop_map(Else::Block));
        (link(), vec(link(), 0..3), tail).prop_map(|((cond, then), else_ifs, tail)| {
            let otherwise = else_ifs.into_iter().rev().fold(tail, |otherwise, (cond, then)| {
                Some(Else::If(Box::new(stmt_of(StmtKind::If { cond, then, otherwise }))))
            });
            StmtKind::If { cond, then, otherwise }
        })
    }

    fn compound_stmt(stmt: BoxedStrategy<Stmt>) -> impl Strategy<Value = Stmt> {
        let body = || block(stmt.clone());
        prop_oneof![
            if_stmt(stmt.clone()),
            (ident(), range(condition()), body()).prop_map(|(var, range, body)| StmtKind::For { var, range, body }),
            (ident(), body()).prop_map(|(name, body)| StmtKind::Thread { name, body }),
            (ident(), vec(ident(), 0..3), body()).prop_map(|(name, attrs, body)| StmtKind::GeOp { name, attrs, body }),
            (ident(), args(expr()), body()).prop_map(|(name, args, body)| StmtKind::SuperKernel { name, args, body }),
            (ident(), args(expr()), body()).prop_map(|(name, args, body)| StmtKind::SubKernel { name, args, body }),
        ]
        .prop_map(stmt_of)
    }

    pub(super) fn file() -> impl Strategy<Value = File> {
        let stmt = simple_stmt().prop_recursive(3, 24, 3, |inner| compound_stmt(inner.boxed()));
        vec(stmt, 0..5).prop_map(|stmts| File { stmts })
    }
}

/// Print a tree that has no source text, parse the output back and print it again.
fn check_round_trip(file: &File) -> Result<(), TestCaseError> {
    let parsed = Parsed {
        file: file.clone(),
        errors: vec![],
        comments: vec![],
    };
    let printed = format("", &parsed);
    let reparsed = parse(&printed);
    prop_assert!(reparsed.errors.is_empty(), "{printed}\n{:?}", reparsed.errors);
    prop_assert!(same_syntax(&reparsed.file, file), "tree changed:\n{printed}");
    prop_assert_eq!(format(&printed, &reparsed), printed);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_trees_print_and_parse_back(file in generated::file()) {
        check_round_trip(&file)?;
    }

    #[test]
    fn comments_anywhere_are_kept_in_order(insertions in vec((any::<prop::sample::Index>(), any::<bool>()), 0..8)) {
        check_comments_kept(&insertions)?;
    }
}

proptest! {
    // Cheap cases, and the shapes they look for are rare: more of them.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn comparisons_never_print_as_template_calls(file in generated::comparison_call()) {
        check_round_trip(&file)?;
    }
}

/// A source with every kind of statement, for comments to be inserted into.
const COMMENT_HOST: &str = "target A3;
ranks N in 2..=8;
param K in 1..=4;

let [t0, t1] = acquire(comm, 2, name: \"x\");
if a < b && !c { f(x[0..4], { k: 1 }); } else if d { } else { return; }
for i in 0..N { op Mm attrs(g) { call<V, 3>(i * (i + 1)); } }
thread w { superkernel sk(s, aic: 2) { subkernel add { g(); } } }
";

/// Insert a comment before the token picked by each index (or at the end of the file),
/// then check that formatting keeps them all, in order, and changes no syntax.
fn check_comments_kept(insertions: &[(prop::sample::Index, bool)]) -> Result<(), TestCaseError> {
    let mut boundaries: Vec<usize> = lex(COMMENT_HOST).tokens.iter().map(|(_, span)| span.start).collect();
    boundaries.push(COMMENT_HOST.len());
    let mut inserts: Vec<(usize, String)> = insertions
        .iter()
        .enumerate()
        .map(|(number, (index, line))| {
            let text = if *line {
                format!("// c{number}")
            } else {
                format!("/* c{number} */")
            };
            (*index.get(&boundaries), text)
        })
        .collect();
    inserts.sort_by_key(|(offset, _)| *offset);
    let mut src = COMMENT_HOST.to_string();
    for (offset, text) in inserts.iter().rev() {
        let separator = if text.starts_with("//") { "\n" } else { " " };
        src.insert_str(*offset, &format!("{text}{separator}"));
    }
    let parsed = parse(&src);
    prop_assert!(parsed.errors.is_empty(), "{src}\n{:?}", parsed.errors);
    let out = format(&src, &parsed);
    let reparsed = parse(&out);
    prop_assert!(reparsed.errors.is_empty(), "{out}\n{:?}", reparsed.errors);
    prop_assert!(same_syntax(&reparsed.file, &parse(COMMENT_HOST).file), "{out}");
    let kept: Vec<String> = reparsed.comments.iter().map(|c| c.text.clone()).collect();
    let inserted: Vec<String> = inserts.into_iter().map(|(_, text)| text).collect();
    prop_assert_eq!(kept, inserted, "{}", out);
    prop_assert_eq!(format(&out, &reparsed), out);
    Ok(())
}
