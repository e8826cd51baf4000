//! `syncguard fmt`: canonical output, line wrapping, comment placement, idempotence, and
//! the round trip print → parse over hand-written sources and over generated syntax trees.

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
fn shifts_exclusive_or_and_conditionals() {
    let src = "let peer = (rank ^ 1);
let half = ((rank % 2) == 0) ? 0 : (CHUNK >> 1);
let x = (a ? b : c) ? (d ? e : f) : (g ? h : i);
f(1 << (n + 1), (1 << n) + 1, (a & b) ^ c, a ^ (b | c), -(a ? b : c), thread: t);
";
    insta::assert_snapshot!(fmt(src), @r"
    let peer = rank ^ 1;
    let half = rank % 2 == 0 ? 0 : CHUNK >> 1;
    let x = (a ? b : c) ? (d ? e : f) : g ? h : i;
    f(1 << n + 1, (1 << n) + 1, a & b ^ c, a ^ (b | c), -(a ? b : c), thread: t);
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
fn long_calls_wrap_one_argument_per_line() {
    // A struct that fits on its line stays whole; the list around two of them does not.
    let src = "let ch = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{ remoteRank: (rank + 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }, { remoteRank: (rank + N - 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }], 2);
let ch = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{ remoteRank: (rank + 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2, tag: [first_tag_of_this_channel, second_tag_of_this_channel] }], 1);
";
    insta::assert_snapshot!(fmt(src), @r"
    let ch = HcclChannelAcquire(
        comm,
        COMM_ENGINE_CPU_TS,
        [
            { remoteRank: (rank + 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 },
            { remoteRank: (rank + N - 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 },
        ],
        2,
    );
    let ch = HcclChannelAcquire(
        comm,
        COMM_ENGINE_CPU_TS,
        [
            {
                remoteRank: (rank + 1) % N,
                channelProtocol: COMM_PROTOCOL_HCCS,
                notifyNum: 2,
                tag: [first_tag_of_this_channel, second_tag_of_this_channel],
            },
        ],
        1,
    );
    ");
}

#[test]
fn a_statement_of_exactly_100_columns_stays_on_one_line() {
    let call = |width: usize| format!("f({}, b);", "a".repeat(width - "f(, b);".len()));
    let exact = call(100);
    assert_eq!(exact.len(), 100);
    assert_eq!(fmt(&exact), format!("{exact}\n"));
    // Trailing comments do not count.
    assert_eq!(fmt(&format!("{exact} // why")), format!("{exact} // why\n"));
    let over = call(101);
    assert_eq!(fmt(&over), format!("f(\n    {},\n    b,\n);\n", "a".repeat(94)));
    // Inside a block the indentation counts.
    let nested = format!("thread t {{ {} }}", call(96));
    assert_eq!(fmt(&nested), format!("thread t {{\n    {}\n}}\n", call(96)));
    assert_eq!(fmt(&format!("thread t {{ {} }}", call(97))).lines().count(), 6);
}

#[test]
fn an_empty_block_counts_as_part_of_its_header_line() {
    // `op o attrs(a...) {` is 100 columns, `op o attrs(a...) {}` 101.
    let header = format!("op o attrs({})", "a".repeat(98 - "op o attrs()".len()));
    assert_eq!(
        fmt(&format!("{header} {{ f(); }}")),
        format!("{header} {{\n    f();\n}}\n")
    );
    let wrapped = format!("op o attrs(\n    {},\n) {{}}\n", "a".repeat(86));
    assert_eq!(fmt(&format!("{header} {{}}")), wrapped);
    // A comment in the header ends up in the block, which then prints as lines.
    let commented = format!("{header} {{ /* c */\n}}\n");
    assert_eq!(fmt(&format!("{header} /* c */ {{}}")), commented);
    let lines = |src: String| fmt(&src).lines().count();
    assert_eq!(lines(format!("if {} {{}}", "a".repeat(94))), 1);
    assert_eq!(lines(format!("if f({}) {{}}", "a".repeat(92))), 3);
}

#[test]
fn deeply_indented_calls_wrap_against_their_indentation() {
    let src = "thread worker { for i in 0..N { if rank == 0 {
superkernel fused(s1, aic: 24, aiv: 48) {
    subkernel add_custom(tiling_keys: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]) {
        AscendC::DataCopy(y[tile..tile + 1 KiB], UB, count: 1 KiB, extra: { a: 1, b: [1, 2, 3] });
        kernel(s1, \"producer_with_a_long_name\", reads: [a[0..4 KiB], b[0..4 KiB]], writes: [c, d]);
        f(x);
    }
} } } }
";
    insta::assert_snapshot!(fmt(src), @r#"
    thread worker {
        for i in 0..N {
            if rank == 0 {
                superkernel fused(s1, aic: 24, aiv: 48) {
                    subkernel add_custom(
                        tiling_keys: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
                    ) {
                        AscendC::DataCopy(
                            y[tile..tile + 1 KiB],
                            UB,
                            count: 1 KiB,
                            extra: { a: 1, b: [1, 2, 3] },
                        );
                        kernel(
                            s1,
                            "producer_with_a_long_name",
                            reads: [a[0..4 KiB], b[0..4 KiB]],
                            writes: [c, d],
                        );
                        f(x);
                    }
                }
            }
        }
    }
    "#);
}

#[test]
fn long_headers_and_patterns_wrap() {
    let src = "op MoeDistributeDispatch attrs(group_ep, ep_world_size, ep_rank_id, moe_expert_num, group_tp, tp_world_size) { f(); }
superkernel a_superkernel_with_a_long_name(stream_with_a_long_name, aic: 24, aiv: 48, extra_argument: 1) {}
let [first_thread, second_thread, third_thread, fourth_thread, fifth_thread, sixth_thread] = HcclThreadAcquire(comm, COMM_ENGINE_AICPU_TS, 6, 3);
let [t0, t1] = HcclThreadAcquire(comm_with_a_long_name, COMM_ENGINE_AICPU_TS, thread_number_for_this, 3);
if check_something_with_a_long_name(first_argument_is_long, second_argument_is_long, third_argument) {}
";
    insta::assert_snapshot!(fmt(src), @r"
    op MoeDistributeDispatch attrs(
        group_ep,
        ep_world_size,
        ep_rank_id,
        moe_expert_num,
        group_tp,
        tp_world_size,
    ) {
        f();
    }
    superkernel a_superkernel_with_a_long_name(
        stream_with_a_long_name,
        aic: 24,
        aiv: 48,
        extra_argument: 1,
    ) {}
    let [
        first_thread,
        second_thread,
        third_thread,
        fourth_thread,
        fifth_thread,
        sixth_thread,
    ] = HcclThreadAcquire(comm, COMM_ENGINE_AICPU_TS, 6, 3);
    let [t0, t1] = HcclThreadAcquire(
        comm_with_a_long_name,
        COMM_ENGINE_AICPU_TS,
        thread_number_for_this,
        3,
    );
    if check_something_with_a_long_name(
        first_argument_is_long,
        second_argument_is_long,
        third_argument,
    ) {}
    ");
}

#[test]
fn operators_and_slices_never_break() {
    let src =
        "f(the_first_operand_of_a_long_sum + the_second_operand_of_a_long_sum + g(the_third_operand, of_the_sum), b);
kernel(s, \"pack\", writes: [local_buffer_of_this_rank[rank * CHUNK_SIZE_IN_BYTES..(rank + 1) * CHUNK_SIZE_IN_BYTES]]);
let x = [1, 2, 3] + [the_first_element_of_a_long_list, the_second_element_of_a_long_list, the_third];
";
    insta::assert_snapshot!(fmt(src), @r#"
    f(
        the_first_operand_of_a_long_sum + the_second_operand_of_a_long_sum + g(the_third_operand, of_the_sum),
        b,
    );
    kernel(
        s,
        "pack",
        writes: [
            local_buffer_of_this_rank[rank * CHUNK_SIZE_IN_BYTES..(rank + 1) * CHUNK_SIZE_IN_BYTES],
        ],
    );
    let x = [1, 2, 3] + [the_first_element_of_a_long_list, the_second_element_of_a_long_list, the_third];
    "#);
}

#[test]
fn wrapped_comparisons_keep_the_parentheses_that_stop_template_calls() {
    // One per line, `a < b,` and `c > (d || e)` still read as template arguments.
    let src = "f((a_long_name_on_the_left < b), c > (d_long_name_on_the_right || e_another_long_name), (x < g) > (y || z));\n";
    insta::assert_snapshot!(fmt(src), @r"
    f(
        (a_long_name_on_the_left < b),
        c > (d_long_name_on_the_right || e_another_long_name),
        (x < g) > (y || z),
    );
    ");
}

#[test]
fn comments_in_a_wrapped_statement_stay_at_their_items() {
    let src = "let ch = HcclChannelAcquire(comm, // the communicator
    COMM_ENGINE_CPU_TS,
    // one descriptor per neighbour
    [{ remoteRank: (rank + 1) % N, /* next */ channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 },
     { remoteRank: (rank + N - 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 } /* prev */ ],

    // channelNum
    2 /* two */ // after two
); // after the statement
f(a, // short: the comments trail the statement
  b);
op MoeDistributeDispatch /* x */ attrs( // attrs
    group_ep, ep_world_size, ep_rank_id, moe_expert_num, group_tp, tp_world_size, tp_rank_id
    // last
) // before the block
{ f(); }
";
    insta::assert_snapshot!(fmt(src), @r"
    let ch = HcclChannelAcquire(
        comm, // the communicator
        COMM_ENGINE_CPU_TS,
        // one descriptor per neighbour
        [
            { remoteRank: (rank + 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }, /* next */
            { remoteRank: (rank + N - 1) % N, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }, /* prev */
        ],

        // channelNum
        2, /* two */ // after two
    ); // after the statement
    f(a, b); // short: the comments trail the statement
    op MoeDistributeDispatch attrs( /* x */ // attrs
        group_ep,
        ep_world_size,
        ep_rank_id,
        moe_expert_num,
        group_tp,
        tp_world_size,
        tp_rank_id,
        // last
        // before the block
    ) {
        f();
    }
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

    /// Setting keys and size units: like the lexer's keywords, none of them reads back as a
    /// plain name.
    const RESERVED: &[&str] = &[
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

    fn reserved(name: &str) -> bool {
        RESERVED.contains(&name) || syncguard_grammar::lexer::Keyword::is_keyword(name)
    }

    const BINARY_OPS: [BinaryOp; 18] = [
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::BitAnd,
        BinaryOp::BitXor,
        BinaryOp::BitOr,
        BinaryOp::Shl,
        BinaryOp::Shr,
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

    /// Mostly short, now and then long enough to push a statement past the line width.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![4 => "[a-zA-Z_][a-zA-Z0-9_]{0,5}", 1 => "[a-zA-Z_][a-zA-Z0-9_]{12,40}"]
            .prop_filter("reserved word", |name| !reserved(name))
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
                    (inner.clone(), range(full.clone())).prop_map(|(base, range)| ExprKind::Slice {
                        base: Box::new(base),
                        range,
                    }),
                    vec(full, 0..4).prop_map(ExprKind::List),
                    (inner.clone(), inner.clone(), inner).prop_map(|(cond, then, otherwise)| ExprKind::Cond {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                    }),
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
            vec(inner.clone(), 0..4).prop_map(ExprKind::List),
            (inner.clone(), inner.clone()).prop_map(|(base, index)| ExprKind::Index {
                base: Box::new(base),
                index: Box::new(index),
            }),
            (inner.clone(), ident(), range(inner.clone()))
                .prop_map(|(item, var, range)| ExprKind::ListFor(Box::new(ListFor { item, var, range }))),
            (inner.clone(), inner.clone(), inner).prop_map(|(cond, then, otherwise)| ExprKind::Cond {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            }),
        ]
    }

    /// Expressions dense in `<`, `>` and parentheses next to names: the shapes where a
    /// comparison could read as template arguments, as in `a < b > (c)` = `a<b>(c)`.
    fn comparison_expr() -> BoxedStrategy<Expr> {
        let leaf = prop_oneof![
            // Long names make the call wrap, one argument per line.
            prop_oneof![4 => "[a-d]", 1 => "[a-d]{20,30}"].prop_map(|text| ExprKind::Name(Path { text, span: 0..0 })),
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
            (ident(), expr.clone()).prop_map(|(name, value)| StmtKind::LetMut { name, value }),
            (ident(), expr.clone()).prop_map(|(name, value)| StmtKind::Assign { name, value }),
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
            (condition(), body()).prop_map(|(cond, body)| StmtKind::While { cond, body }),
            (ident(), body()).prop_map(|(name, body)| StmtKind::Thread { name, body }),
            (ident(), vec(ident(), 0..3), body()).prop_map(|(name, attrs, body)| StmtKind::GeOp { name, attrs, body }),
            (ident(), args(expr()), body()).prop_map(|(name, args, body)| StmtKind::SuperKernel { name, args, body }),
            (ident(), args(expr()), body()).prop_map(|(name, args, body)| StmtKind::SubKernel { name, args, body }),
            (ident(), args(expr()), body()).prop_map(|(name, args, body)| StmtKind::AiCore { name, args, body }),
        ]
        .prop_map(stmt_of)
    }

    pub(super) fn file() -> impl Strategy<Value = File> {
        let stmt = simple_stmt().prop_recursive(3, 24, 3, |inner| compound_stmt(inner.boxed()));
        vec(stmt, 0..5).prop_map(|stmts| File { stmts })
    }

    /// A name of at most 20 characters.
    fn short_ident() -> impl Strategy<Value = Ident> {
        "[a-z_][a-z0-9_]{0,19}"
            .prop_filter("reserved word", |name| !reserved(name))
            .prop_map(|name| Ident { name, span: 0..0 })
    }

    fn short_path() -> impl Strategy<Value = Path> {
        short_ident().prop_map(|ident| Path {
            text: ident.name,
            span: 0..0,
        })
    }

    fn wrappable_call(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = Call> {
        let args = vec((option::of(short_ident()), inner), 0..8)
            .prop_map(|args| args.into_iter().map(|(name, value)| Arg { name, value }).collect());
        (short_path(), args).prop_map(|(callee, args)| Call {
            callee,
            generics: None,
            args,
            span: 0..0,
        })
    }

    /// Calls, lists and struct literals three deep around short names and numbers:
    /// every line of such a statement can be made to fit.
    fn wrappable_expr() -> BoxedStrategy<Expr> {
        let leaf = prop_oneof![
            short_path().prop_map(ExprKind::Name),
            (0u64..100_000).prop_map(|value| ExprKind::Int(IntLit {
                value,
                hex: false,
                unit: None
            })),
        ];
        leaf.prop_map(expr_of)
            .prop_recursive(3, 64, 8, |inner| {
                prop_oneof![
                    wrappable_call(inner.clone()).prop_map(|call| ExprKind::Call(Box::new(call))),
                    vec(inner.clone(), 0..8).prop_map(ExprKind::List),
                    vec((short_ident(), inner), 0..6).prop_map(|fields| {
                        let fields = fields.into_iter().map(|(name, value)| Field { name, value });
                        ExprKind::Struct(fields.collect())
                    }),
                ]
                .prop_map(expr_of)
            })
            .boxed()
    }

    /// Statements over [`wrappable_expr`], in blocks up to two deep.
    pub(super) fn wrappable_file() -> impl Strategy<Value = File> {
        let call = || wrappable_call(wrappable_expr());
        let simple = prop_oneof![
            (short_ident(), wrappable_expr()).prop_map(|(name, value)| StmtKind::Let {
                pattern: Pattern::Name(name),
                value
            }),
            (vec(short_ident(), 1..8), call()).prop_map(|(names, call)| StmtKind::Let {
                pattern: Pattern::List(names, 0..0),
                value: expr_of(ExprKind::Call(Box::new(call)))
            }),
            call().prop_map(StmtKind::Call),
        ]
        .prop_map(stmt_of);
        let stmt = simple.prop_recursive(2, 16, 4, |inner| {
            let body = || block(inner.clone().boxed());
            let args = vec((option::of(short_ident()), wrappable_expr()), 0..8)
                .prop_map(|args| args.into_iter().map(|(name, value)| Arg { name, value }).collect());
            prop_oneof![
                (short_ident(), vec(short_ident(), 0..12), body()).prop_map(|(name, attrs, body)| StmtKind::GeOp {
                    name,
                    attrs,
                    body
                }),
                (short_ident(), args, body()).prop_map(|(name, args, body)| StmtKind::SubKernel { name, args, body }),
            ]
            .prop_map(stmt_of)
        });
        vec(stmt, 0..4).prop_map(|stmts| File { stmts })
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
    prop_assert_eq!(format(&printed, &reparsed), printed.clone());
    check_breaks_are_needed(&printed)?;
    Ok(())
}

const MAX_WIDTH: usize = 100;

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Every list printed over several lines (a line that ends in its opening bracket, up to
/// the line of its closing bracket) would have been too long on one line. Only for
/// output without comments.
fn check_breaks_are_needed(printed: &str) -> Result<(), TestCaseError> {
    let lines: Vec<&str> = printed.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let close = match line.chars().last() {
            Some('(') => ')',
            Some('[') => ']',
            Some('{') => '}',
            _ => continue,
        };
        let end = lines[index + 1..]
            .iter()
            .position(|next| indentation(next) <= indentation(line))
            .map(|offset| index + 1 + offset);
        let Some(end) = end else {
            return Err(TestCaseError::fail(format!("line {index} is never closed:\n{printed}")));
        };
        let closing = lines[end].trim_start();
        prop_assert!(
            closing.starts_with(close),
            "line {} closes line {index}:\n{printed}",
            end
        );
        if close == '}' && (closing == "}" || closing.starts_with("} else")) {
            continue; // a block, not a struct literal
        }
        let joined = join_broken_lines(&lines[index..=end]);
        prop_assert!(
            joined.chars().count() > MAX_WIDTH,
            "broken although it fits:\n{joined}\nin\n{printed}"
        );
    }
    Ok(())
}

/// The one-line form of a list printed one item per line.
fn join_broken_lines(lines: &[&str]) -> String {
    let mut joined = lines[0].to_string();
    for line in &lines[1..] {
        let line = line.trim_start();
        if line.starts_with([')', ']', '}']) && joined.ends_with(',') {
            joined.pop();
        }
        if !joined.ends_with(['(', '[']) && !line.starts_with([')', ']']) {
            joined.push(' ');
        }
        joined.push_str(line);
    }
    joined
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_trees_print_and_parse_back(file in generated::file()) {
        check_round_trip(&file)?;
    }

    #[test]
    fn comments_anywhere_are_kept_in_order(insertions in vec((any::<prop::sample::Index>(), any::<bool>()), 0..12)) {
        check_comments_kept(&insertions)?;
    }

    #[test]
    fn short_atoms_always_fit_in_100_columns(file in generated::wrappable_file()) {
        check_round_trip(&file)?;
        let parsed = Parsed { file, errors: vec![], comments: vec![] };
        let printed = format("", &parsed);
        for line in printed.lines() {
            prop_assert!(line.chars().count() <= MAX_WIDTH, "too long: {line}\n{printed}");
        }
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

/// A source with every kind of statement, some too long for one line, for comments to
/// be inserted into.
const COMMENT_HOST: &str = "target A3;
ranks N in 2..=8;
param K in 1..=4;

let [t0, t1] = acquire(comm, 2, name: \"x\");
if a < b && !c { f(x[0..4], { k: 1 }); } else if d { } else { return; }
for i in 0..N { op Mm attrs(g) { call<V, 3>(i * (i + 1)); } }
thread w { superkernel sk(s, aic: 2) { subkernel add { g(); } } }
let [to_next, to_prev] = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{ remoteRank: (rank + 1) % N, channelProtocol: COMM_PROTOCOL_ROCE }, { remoteRank: (rank + N - 1) % N, notifyNum: 2 }], 2);
op MoeDistributeDispatch attrs(group_ep, ep_world_size, ep_rank_id, moe_expert_num, group_tp, tp_rank_id) {
    superkernel fused(stream_with_a_long_name, aic: 24, aiv: 48, tiling_keys: [1, 2, 3, 4, 5, 6, 7]) {}
}
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
