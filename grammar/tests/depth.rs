//! The nesting limit: input nested deeper than [`MAX_DEPTH`] is a syntax error at the
//! place where the limit is reached, never a stack overflow in the parser, the
//! formatter or any later pass. These tests run on the default test thread (2 MiB of
//! stack), which is what a debug build has to survive.

use syncguard_grammar::ast::{Block, Else, Expr, ExprKind, RankCount, Stmt, StmtKind};
use syncguard_grammar::{MAX_DEPTH, format, parse};

/// Levels of `Stmt` and `Expr` nodes on the deepest path of the tree.
fn stmt_depth(stmt: &Stmt) -> usize {
    1 + match &stmt.kind {
        StmtKind::Setting { value, .. }
        | StmtKind::Let { value, .. }
        | StmtKind::LetMut { value, .. }
        | StmtKind::Assign { value, .. } => expr_depth(value),
        StmtKind::While { cond, body } => expr_depth(cond).max(block_depth(body)),
        StmtKind::Ranks(RankCount::Fixed(count)) => expr_depth(count),
        StmtKind::Ranks(RankCount::Param { range, .. }) | StmtKind::Param { range, .. } => {
            range_depth(&range.start, range.end.as_deref())
        }
        StmtKind::Call(call) => call.args.iter().map(|arg| expr_depth(&arg.value)).max().unwrap_or(0),
        StmtKind::If { cond, then, otherwise } => {
            let otherwise = match otherwise {
                Some(Else::If(stmt)) => stmt_depth(stmt),
                Some(Else::Block(block)) => block_depth(block),
                None => 0,
            };
            expr_depth(cond).max(block_depth(then)).max(otherwise)
        }
        StmtKind::For { range, body, .. } => range_depth(&range.start, range.end.as_deref()).max(block_depth(body)),
        StmtKind::Thread { body, .. } | StmtKind::GeOp { body, .. } => block_depth(body),
        StmtKind::SuperKernel { args, body, .. }
        | StmtKind::SubKernel { args, body, .. }
        | StmtKind::AiCore { args, body, .. } => {
            let args = args.iter().map(|arg| expr_depth(&arg.value)).max().unwrap_or(0);
            args.max(block_depth(body))
        }
        StmtKind::Return | StmtKind::Error => 0,
    }
}

fn block_depth(block: &Block) -> usize {
    block.stmts.iter().map(stmt_depth).max().unwrap_or(0)
}

fn range_depth(start: &Expr, end: Option<&Expr>) -> usize {
    expr_depth(start).max(end.map_or(0, expr_depth))
}

fn expr_depth(expr: &Expr) -> usize {
    1 + match &expr.kind {
        ExprKind::Unary(_, operand) => expr_depth(operand),
        ExprKind::Binary(_, lhs, rhs) => expr_depth(lhs).max(expr_depth(rhs)),
        ExprKind::Call(call) => call.args.iter().map(|arg| expr_depth(&arg.value)).max().unwrap_or(0),
        ExprKind::List(items) => items.iter().map(expr_depth).max().unwrap_or(0),
        ExprKind::Struct(fields) => fields.iter().map(|field| expr_depth(&field.value)).max().unwrap_or(0),
        ExprKind::Slice { base, range } => expr_depth(base).max(range_depth(&range.start, range.end.as_deref())),
        ExprKind::Index { base, index } => expr_depth(base).max(expr_depth(index)),
        ExprKind::ListFor(list) => {
            expr_depth(&list.item).max(range_depth(&list.range.start, list.range.end.as_deref()))
        }
        ExprKind::Cond { cond, then, otherwise } => expr_depth(cond).max(expr_depth(then)).max(expr_depth(otherwise)),
        _ => 0,
    }
}

fn file_depth(src: &str) -> usize {
    parse(src).file.stmts.iter().map(stmt_depth).max().unwrap_or(0)
}

/// `count` copies of `open`, the `middle`, and `count` copies of `close`.
fn nested(open: &str, middle: &str, close: &str, count: usize) -> String {
    format!("{}{middle}{}", open.repeat(count), close.repeat(count))
}

/// Makes an input that nests `n` levels of one shape.
type Shape = fn(usize) -> String;

/// Each way to nest.
fn shapes() -> Vec<(&'static str, Shape)> {
    vec![
        ("struct literals joined by `+`", |n| {
            format!("let x = {}1;", "{}+".repeat(n))
        }),
        ("an else-if chain", |n| {
            format!("if 1 {{}} {}", "else if 1 {} ".repeat(n))
        }),
        ("parentheses", |n| nested("let x = ", &nested("(", "1", ")", n), ";", 1)),
        ("nested ifs", |n| nested("if 1 { ", "f();", "} ", n)),
        ("nested fors", |n| nested("for i in 0..2 { ", "f();", "} ", n)),
        ("nested whiles", |n| nested("while i < 2 { ", "i = i + 1;", "} ", n)),
        ("nested threads", |n| nested("thread t { ", "f();", "} ", n)),
        ("unary minus", |n| format!("let x = {}1;", "-".repeat(n))),
        ("negation", |n| format!("if {}x {{}}", "!".repeat(n))),
        ("a sum", |n| format!("let x = {}1;", "1 + ".repeat(n))),
        ("a condition", |n| format!("if {}1 {{ f(); }}", "1 < ".repeat(n))),
        ("calls", |n| nested("f(", "1", ")", n) + ";"),
        ("lists", |n| nested("let x = ", &nested("[", "1", "]", n), ";", 1)),
        ("struct fields", |n| {
            nested("let x = ", &nested("{a: ", "1", "}", n), ";", 1)
        }),
        ("slices", |n| format!("let y = x{};", "[0..1]".repeat(n))),
        ("mixed expressions", |n| {
            nested("let x = ", &nested("f([{a: -(1 + ", "1", ")}])", n), ";", 1)
        }),
        ("mixed blocks", |n| {
            nested("for i in 0..2 { if i < 1 { thread t { ", "f();", "} } } ", n)
        }),
    ]
}

/// The generated inputs of the report, and every shape far too deep.
fn too_deep_inputs() -> Vec<(&'static str, String)> {
    let mut inputs = vec![
        ("20k struct literals", shapes()[0].1(20_000)),
        ("48k struct literals", shapes()[0].1(48_000)),
        ("a 30k else-if chain", shapes()[1].1(30_000)),
        ("unclosed parentheses", format!("let x = {}1", "(".repeat(100_000))),
    ];
    inputs.extend(shapes().into_iter().map(|(what, make)| (what, make(100_000))));
    inputs
}

#[test]
fn too_deep_input_is_a_syntax_error_where_the_limit_is_reached() {
    for (what, src) in too_deep_inputs() {
        let parsed = parse(&src);
        let error = parsed
            .errors
            .iter()
            .find(|error| error.message.contains("nested too deeply"))
            .unwrap_or_else(|| panic!("{what}: no nesting error in {:?}", parsed.errors));
        assert!(
            error.message.contains(&MAX_DEPTH.to_string()),
            "{what}: {}",
            error.message
        );
        assert!(
            error.span.start > 0 && error.span.end <= src.len(),
            "{what}: {:?}",
            error.span
        );
        assert!(
            parsed.file.stmts.iter().map(stmt_depth).max().unwrap_or(0) <= MAX_DEPTH,
            "{what}"
        );
        // The formatter and dropping the tree run on what was parsed.
        format(&src, &parsed);
    }
}

/// The largest `n` for which `make(n)` parses without error.
fn deepest_accepted(make: Shape) -> usize {
    let (mut accepted, mut rejected) = (1, MAX_DEPTH + 1);
    assert!(parse(&make(accepted)).errors.is_empty(), "{}", make(accepted));
    while rejected - accepted > 1 {
        let middle = (accepted + rejected) / 2;
        if parse(&make(middle)).errors.is_empty() {
            accepted = middle;
        } else {
            rejected = middle;
        }
    }
    accepted
}

#[test]
fn the_deepest_accepted_input_parses_formats_and_reformats_stably() {
    for (what, make) in shapes() {
        eprintln!("shape {what}");
        let deepest = deepest_accepted(make);
        assert!(deepest >= 20, "{what}: only {deepest} levels accepted");
        let src = make(deepest);
        let parsed = parse(&src);
        assert!(file_depth(&src) <= MAX_DEPTH, "{what}");
        let formatted = format(&src, &parsed);
        let reparsed = parse(&formatted);
        assert!(reparsed.errors.is_empty(), "{what}: {:?}", reparsed.errors);
        assert_eq!(format(&formatted, &reparsed), formatted, "{what}");
        assert!(!parse(&make(deepest + 1)).errors.is_empty(), "{what}");
    }
}

#[test]
fn long_files_of_shallow_statements_are_not_too_deep() {
    let statements = "if rank == 0 && x < 3 { f(a + 1, b - 2); } else { g(); }\n".repeat(5_000);
    let loops = "for i in 0..N - 1 { h(i % 3); }\n".repeat(5_000);
    let list = format!("let x = [{}];", "a + b * c, ".repeat(5_000));
    let sums = format!("f({});", "1 + 2 + 3 + 4, ".repeat(5_000));
    let body = format!("thread t {{ {} }}", "let y = a + b + c + d + e;\n".repeat(5_000));
    for src in [statements, loops, list, sums, body] {
        let parsed = parse(&src);
        assert!(parsed.errors.is_empty(), "{}: {:?}", &src[..40], parsed.errors);
    }
}

#[test]
fn the_statement_over_the_limit_is_dropped_and_the_ones_before_it_are_kept() {
    let src = format!("f();\ng();\nlet x = {}1;\nh();\n", "-".repeat(1_000));
    let parsed = parse(&src);
    assert_eq!(parsed.file.stmts.len(), 2, "{:?}", parsed.file.stmts);
    let error = &parsed.errors[0];
    let limit_reached_at = "f();\ng();\nlet x = ".len() + MAX_DEPTH;
    assert!(
        error.span.start <= limit_reached_at,
        "the error points into the statement: {:?}",
        error.span
    );
}

#[test]
fn a_closer_that_matches_no_open_bracket_closes_nothing() {
    // `{one);`: the `)` is stray, so each line leaves a block open; before, every
    // statement's recovery rescanned the rest of the file (minutes for 50 KB).
    let mut src = String::from("let s1 = aclrtCreateStream();\nthread logger {\n");
    src.push_str(&"thread logger {one);\n".repeat(600));
    src.push_str("thre)d logger {one);\n");
    let started = std::time::Instant::now();
    let parsed = syncguard_grammar::parse(&src);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        parsed.errors.iter().any(|e| e.message.starts_with("nested too deeply")),
        "{:?}",
        parsed.errors.first()
    );
}
