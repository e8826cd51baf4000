//! Span-insensitive comparison of syntax trees.
//!
//! Two parses of differently laid out source (for example before and after
//! `syncguard fmt`) differ only in their spans. [`strip_spans`] resets every span to
//! `0..0` so that the derived `PartialEq` compares syntax alone.
//!
//! The walk destructures every struct and matches every enum without wildcards, so a
//! new node type or field fails to compile here until its spans are handled.

use crate::ast::*;

/// Set every span in `file` to `0..0`.
pub fn strip_spans(file: &mut File) {
    let File { stmts } = file;
    stmts.iter_mut().for_each(strip_stmt);
}

/// Whether `a` and `b` are the same tree apart from spans.
pub fn same_syntax(a: &File, b: &File) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    strip_spans(&mut a);
    strip_spans(&mut b);
    a == b
}

fn clear(span: &mut Span) {
    *span = 0..0;
}

fn strip_stmt(stmt: &mut Stmt) {
    let Stmt { kind, span } = stmt;
    clear(span);
    match kind {
        StmtKind::Setting { key, value } => {
            strip_ident(key);
            strip_expr(value);
        }
        StmtKind::Ranks(count) => strip_rank_count(count),
        StmtKind::Param { name, range } => {
            strip_ident(name);
            strip_range(range);
        }
        StmtKind::Let { pattern, value } => {
            strip_pattern(pattern);
            strip_expr(value);
        }
        StmtKind::LetMut { name, value } | StmtKind::Assign { name, value } => {
            strip_ident(name);
            strip_expr(value);
        }
        StmtKind::While { cond, body } => {
            strip_expr(cond);
            strip_block(body);
        }
        StmtKind::Call(call) => strip_call(call),
        StmtKind::If { cond, then, otherwise } => {
            strip_expr(cond);
            strip_block(then);
            if let Some(otherwise) = otherwise {
                strip_else(otherwise);
            }
        }
        StmtKind::For { var, range, body } => {
            strip_ident(var);
            strip_range(range);
            strip_block(body);
        }
        StmtKind::Thread { name, body } => {
            strip_ident(name);
            strip_block(body);
        }
        StmtKind::GeOp { name, attrs, body } => {
            strip_ident(name);
            attrs.iter_mut().for_each(strip_ident);
            strip_block(body);
        }
        StmtKind::SuperKernel { name, args, body }
        | StmtKind::SubKernel { name, args, body }
        | StmtKind::AiCore { name, args, body } => {
            strip_ident(name);
            args.iter_mut().for_each(strip_arg);
            strip_block(body);
        }
        StmtKind::Return | StmtKind::Error => {}
    }
}

fn strip_block(block: &mut Block) {
    let Block { stmts, span } = block;
    clear(span);
    stmts.iter_mut().for_each(strip_stmt);
}

fn strip_else(otherwise: &mut Else) {
    match otherwise {
        Else::If(stmt) => strip_stmt(stmt),
        Else::Block(block) => strip_block(block),
    }
}

fn strip_rank_count(count: &mut RankCount) {
    match count {
        RankCount::Fixed(expr) => strip_expr(expr),
        RankCount::Param { name, range } => {
            strip_ident(name);
            strip_range(range);
        }
    }
}

fn strip_pattern(pattern: &mut Pattern) {
    match pattern {
        Pattern::Name(name) => strip_ident(name),
        Pattern::List(names, span) => {
            names.iter_mut().for_each(strip_ident);
            clear(span);
        }
    }
}

fn strip_range(range: &mut RangeExpr) {
    let RangeExpr {
        start,
        end,
        inclusive: _,
        span,
    } = range;
    clear(span);
    strip_expr(start);
    if let Some(end) = end {
        strip_expr(end);
    }
}

fn strip_call(call: &mut Call) {
    let Call {
        callee,
        generics,
        args,
        span,
    } = call;
    clear(span);
    strip_path(callee);
    if let Some(generics) = generics {
        generics.iter_mut().for_each(strip_expr);
    }
    args.iter_mut().for_each(strip_arg);
}

fn strip_arg(arg: &mut Arg) {
    let Arg { name, value } = arg;
    if let Some(name) = name {
        strip_ident(name);
    }
    strip_expr(value);
}

fn strip_expr(expr: &mut Expr) {
    let Expr { kind, span } = expr;
    clear(span);
    match kind {
        ExprKind::Int(_) | ExprKind::Str(_) | ExprKind::Bool(_) | ExprKind::Null => {}
        ExprKind::Name(path) => strip_path(path),
        ExprKind::Unary(_, operand) => strip_expr(operand),
        ExprKind::Binary(_, lhs, rhs) => {
            strip_expr(lhs);
            strip_expr(rhs);
        }
        ExprKind::Cond { cond, then, otherwise } => {
            strip_expr(cond);
            strip_expr(then);
            strip_expr(otherwise);
        }
        ExprKind::Call(call) => strip_call(call),
        ExprKind::Slice { base, range } => {
            strip_expr(base);
            strip_range(range);
        }
        ExprKind::Index { base, index } => {
            strip_expr(base);
            strip_expr(index);
        }
        ExprKind::List(items) => items.iter_mut().for_each(strip_expr),
        ExprKind::ListFor(list) => {
            let ListFor { item, var, range } = &mut **list;
            strip_expr(item);
            strip_ident(var);
            strip_range(range);
        }
        ExprKind::Struct(fields) => fields.iter_mut().for_each(strip_field),
        ExprKind::Error => {}
    }
}

fn strip_field(field: &mut Field) {
    let Field { name, value } = field;
    strip_ident(name);
    strip_expr(value);
}

fn strip_ident(ident: &mut Ident) {
    let Ident { name: _, span } = ident;
    clear(span);
}

fn strip_path(path: &mut Path) {
    let Path { text: _, span } = path;
    clear(span);
}
