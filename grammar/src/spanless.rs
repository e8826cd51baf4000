//! Span-insensitive comparison of syntax trees, and moving spans.
//!
//! Two parses of differently laid out source (for example before and after
//! `syncguard fmt`) differ only in their spans. [`strip_spans`] resets every span to
//! `0..0` so that the derived `PartialEq` compares syntax alone; [`map_spans`] moves
//! each span (a program extracted before an edit, moved to where its code is now).
//!
//! The walk destructures every struct and matches every enum without wildcards, so a
//! new node type or field fails to compile here until its spans are handled.

use crate::ast::*;

/// Set every span in `file` to `0..0`.
pub fn strip_spans(file: &mut File) {
    map_spans(file, &mut |span| *span = 0..0);
}

/// Apply `f` to every span in `file`.
pub fn map_spans(file: &mut File, f: &mut dyn FnMut(&mut Span)) {
    let File { stmts } = file;
    stmts.iter_mut().for_each(|stmt| visit_stmt(stmt, f));
}

/// Whether `a` and `b` are the same tree apart from spans.
pub fn same_syntax(a: &File, b: &File) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    strip_spans(&mut a);
    strip_spans(&mut b);
    a == b
}

fn visit_stmt(stmt: &mut Stmt, f: &mut dyn FnMut(&mut Span)) {
    let Stmt { kind, span } = stmt;
    f(span);
    match kind {
        StmtKind::Setting { key, value } => {
            visit_ident(key, f);
            visit_expr(value, f);
        }
        StmtKind::Ranks(count) => visit_rank_count(count, f),
        StmtKind::Param { name, range } => {
            visit_ident(name, f);
            visit_range(range, f);
        }
        StmtKind::Let { pattern, value } => {
            visit_pattern(pattern, f);
            visit_expr(value, f);
        }
        StmtKind::LetMut { name, value } | StmtKind::Assign { name, value } => {
            visit_ident(name, f);
            visit_expr(value, f);
        }
        StmtKind::While { cond, body } => {
            visit_expr(cond, f);
            visit_block(body, f);
        }
        StmtKind::Call(call) => visit_call(call, f),
        StmtKind::If { cond, then, otherwise } => {
            visit_expr(cond, f);
            visit_block(then, f);
            if let Some(otherwise) = otherwise {
                visit_else(otherwise, f);
            }
        }
        StmtKind::For { var, range, body } => {
            visit_ident(var, f);
            visit_range(range, f);
            visit_block(body, f);
        }
        StmtKind::Thread { name, body } => {
            visit_ident(name, f);
            visit_block(body, f);
        }
        StmtKind::GeOp { name, attrs, body } => {
            visit_ident(name, f);
            attrs.iter_mut().for_each(|item| visit_ident(item, f));
            visit_block(body, f);
        }
        StmtKind::SuperKernel { name, args, body }
        | StmtKind::SubKernel { name, args, body }
        | StmtKind::AiCore { name, args, body } => {
            visit_ident(name, f);
            args.iter_mut().for_each(|item| visit_arg(item, f));
            visit_block(body, f);
        }
        StmtKind::Return | StmtKind::Error => {}
    }
}

fn visit_block(block: &mut Block, f: &mut dyn FnMut(&mut Span)) {
    let Block { stmts, span } = block;
    f(span);
    stmts.iter_mut().for_each(|item| visit_stmt(item, f));
}

fn visit_else(otherwise: &mut Else, f: &mut dyn FnMut(&mut Span)) {
    match otherwise {
        Else::If(stmt) => visit_stmt(stmt, f),
        Else::Block(block) => visit_block(block, f),
    }
}

fn visit_rank_count(count: &mut RankCount, f: &mut dyn FnMut(&mut Span)) {
    match count {
        RankCount::Fixed(expr) => visit_expr(expr, f),
        RankCount::Param { name, range } => {
            visit_ident(name, f);
            visit_range(range, f);
        }
    }
}

fn visit_pattern(pattern: &mut Pattern, f: &mut dyn FnMut(&mut Span)) {
    match pattern {
        Pattern::Name(name) => visit_ident(name, f),
        Pattern::List(names, span) => {
            names.iter_mut().for_each(|item| visit_ident(item, f));
            f(span);
        }
    }
}

fn visit_range(range: &mut RangeExpr, f: &mut dyn FnMut(&mut Span)) {
    let RangeExpr {
        start,
        end,
        inclusive: _,
        span,
    } = range;
    f(span);
    visit_expr(start, f);
    if let Some(end) = end {
        visit_expr(end, f);
    }
}

fn visit_call(call: &mut Call, f: &mut dyn FnMut(&mut Span)) {
    let Call {
        callee,
        generics,
        args,
        span,
    } = call;
    f(span);
    visit_path(callee, f);
    if let Some(generics) = generics {
        generics.iter_mut().for_each(|item| visit_expr(item, f));
    }
    args.iter_mut().for_each(|item| visit_arg(item, f));
}

fn visit_arg(arg: &mut Arg, f: &mut dyn FnMut(&mut Span)) {
    let Arg { name, value } = arg;
    if let Some(name) = name {
        visit_ident(name, f);
    }
    visit_expr(value, f);
}

fn visit_expr(expr: &mut Expr, f: &mut dyn FnMut(&mut Span)) {
    let Expr { kind, span } = expr;
    f(span);
    match kind {
        ExprKind::Int(_) | ExprKind::Str(_) | ExprKind::Bool(_) | ExprKind::Null => {}
        ExprKind::Name(path) => visit_path(path, f),
        ExprKind::Unary(_, operand) => visit_expr(operand, f),
        ExprKind::Binary(_, lhs, rhs) => {
            visit_expr(lhs, f);
            visit_expr(rhs, f);
        }
        ExprKind::Cond { cond, then, otherwise } => {
            visit_expr(cond, f);
            visit_expr(then, f);
            visit_expr(otherwise, f);
        }
        ExprKind::Call(call) => visit_call(call, f),
        ExprKind::Slice { base, range } => {
            visit_expr(base, f);
            visit_range(range, f);
        }
        ExprKind::Index { base, index } => {
            visit_expr(base, f);
            visit_expr(index, f);
        }
        ExprKind::List(items) => items.iter_mut().for_each(|item| visit_expr(item, f)),
        ExprKind::ListFor(list) => {
            let ListFor { item, var, range } = &mut **list;
            visit_expr(item, f);
            visit_ident(var, f);
            visit_range(range, f);
        }
        ExprKind::Struct(fields) => fields.iter_mut().for_each(|item| visit_field(item, f)),
        ExprKind::Error => {}
    }
}

fn visit_field(field: &mut Field, f: &mut dyn FnMut(&mut Span)) {
    let Field { name, value } = field;
    visit_ident(name, f);
    visit_expr(value, f);
}

fn visit_ident(ident: &mut Ident, f: &mut dyn FnMut(&mut Span)) {
    let Ident { name: _, span } = ident;
    f(span);
}

fn visit_path(path: &mut Path, f: &mut dyn FnMut(&mut Span)) {
    let Path { text: _, span } = path;
    f(span);
}
