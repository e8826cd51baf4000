//! Walks over the extracted program's syntax tree: the names its blocks declare, every
//! expression of a statement (to rename objects, or to read what they name).

use std::collections::{HashMap, HashSet};

use syncguard_grammar::ast;

/// Every name declared in `stmts`, nested blocks included.
pub(super) fn declared_names(stmts: &[ast::Stmt]) -> HashSet<String> {
    let mut names = HashSet::new();
    collect_declared(stmts, &mut names);
    names
}

fn collect_declared(stmts: &[ast::Stmt], names: &mut HashSet<String>) {
    for stmt in stmts {
        match &stmt.kind {
            ast::StmtKind::Let { pattern, .. } => names.extend(pattern.names().iter().map(|name| name.name.clone())),
            ast::StmtKind::LetMut { name, .. } => {
                names.insert(name.name.clone());
            }
            _ => {}
        }
        for block in blocks(stmt) {
            collect_declared(&block.stmts, names);
        }
    }
}

/// Whether `stmts` (nested blocks included) call `api`.
pub(super) fn calls(stmts: &[ast::Stmt], api: &str) -> bool {
    stmts.iter().any(|stmt| match &stmt.kind {
        ast::StmtKind::Call(call) if call.callee.text == api => true,
        _ => blocks(stmt).iter().any(|block| calls(&block.stmts, api)),
    })
}

/// The names of the objects `stmts` (nested blocks included) pass to calls: every
/// name that is not a constant (`ACL_EVENT_SYNC`).
pub(super) fn objects_used(stmts: &[ast::Stmt]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for stmt in stmts {
        let mut copy = stmt.clone();
        for_each_stmt_expr(&mut copy, &mut |expr| {
            if let ast::ExprKind::Name(path) = &expr.kind
                && !path
                    .text
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && !names.contains(&path.text)
            {
                names.push(path.text.clone());
            }
        });
    }
    names
}

/// The blocks nested in a statement (an `else if` chain's arms included).
pub(super) fn blocks(stmt: &ast::Stmt) -> Vec<&ast::Block> {
    match &stmt.kind {
        ast::StmtKind::If { then, otherwise, .. } => {
            let mut out = vec![then];
            match otherwise {
                Some(ast::Else::Block(block)) => out.push(block),
                Some(ast::Else::If(nested)) => out.extend(blocks(nested)),
                None => {}
            }
            out
        }
        ast::StmtKind::For { body, .. }
        | ast::StmtKind::While { body, .. }
        | ast::StmtKind::Thread { body, .. }
        | ast::StmtKind::GeOp { body, .. }
        | ast::StmtKind::SuperKernel { body, .. }
        | ast::StmtKind::SubKernel { body, .. }
        | ast::StmtKind::AiCore { body, .. } => vec![body],
        _ => Vec::new(),
    }
}

/// Whether an expression uses any of `names`.
pub(super) fn mentions_any(expr: &ast::Expr, names: &HashSet<String>) -> bool {
    let mut found = false;
    // The visitor changes what it visits; a copy is visited to read.
    let mut probe = expr.clone();
    for_each_expr(&mut probe, &mut |expr| {
        if let ast::ExprKind::Name(path) = &expr.kind {
            found |= names.contains(&path.text);
        }
    });
    found
}

/// Rename the names `renamed` maps wherever `stmts` use or declare them.
pub(super) fn rename(stmts: &mut [ast::Stmt], renamed: &HashMap<String, String>) {
    let mut rename_name = |name: &mut String| {
        if let Some(new) = renamed.get(name.as_str()) {
            name.clone_from(new);
        }
    };
    for stmt in stmts {
        for_each_declared(stmt, &mut rename_name);
        for_each_stmt_expr(stmt, &mut |expr| {
            if let ast::ExprKind::Name(path) = &mut expr.kind {
                rename_name(&mut path.text);
            }
        });
    }
}

/// The names a statement and the statements nested in it declare, for `visit` to change.
fn for_each_declared(stmt: &mut ast::Stmt, visit: &mut dyn FnMut(&mut String)) {
    use ast::StmtKind as K;
    match &mut stmt.kind {
        K::Let { pattern, .. } => match pattern {
            ast::Pattern::Name(name) => visit(&mut name.name),
            ast::Pattern::List(names, _) => names.iter_mut().for_each(|name| visit(&mut name.name)),
        },
        K::LetMut { name, .. } | K::Assign { name, .. } => visit(&mut name.name),
        _ => {}
    }
    for block in stmt.blocks_mut() {
        block.stmts.iter_mut().for_each(|stmt| for_each_declared(stmt, visit));
    }
}

/// Every expression of a statement and of the statements nested in it (outer ones
/// before the ones inside them), for `visit` to change.
pub(super) fn for_each_stmt_expr(stmt: &mut ast::Stmt, visit: &mut dyn FnMut(&mut ast::Expr)) {
    use ast::StmtKind as K;
    match &mut stmt.kind {
        K::Setting { value, .. }
        | K::Ranks(ast::RankCount::Fixed(value))
        | K::Let { value, .. }
        | K::LetMut { value, .. }
        | K::Assign { value, .. } => for_each_expr(value, visit),
        K::Ranks(ast::RankCount::Param { range, .. }) | K::Param { range, .. } | K::For { range, .. } => {
            for_each_range_expr(range, visit);
        }
        K::Call(call) => for_each_call_expr(call, visit),
        K::If { cond, otherwise, .. } => {
            for_each_expr(cond, visit);
            if let Some(ast::Else::If(nested)) = otherwise {
                for_each_stmt_expr(nested, visit);
            }
        }
        K::While { cond, .. } => for_each_expr(cond, visit),
        K::SuperKernel { args, .. } | K::SubKernel { args, .. } | K::AiCore { args, .. } => {
            args.iter_mut().for_each(|arg| for_each_expr(&mut arg.value, visit));
        }
        K::Thread { .. } | K::GeOp { .. } | K::Return | K::Error => {}
    }
    // `blocks_mut` lists an `else if`'s blocks too, but the nested `if` was visited
    // whole above: only the blocks of this statement itself are left.
    let nested_else_if = matches!(
        &stmt.kind,
        K::If {
            otherwise: Some(ast::Else::If(_)),
            ..
        }
    );
    let blocks = stmt.blocks_mut();
    let own = if nested_else_if { 1 } else { blocks.len() };
    for block in blocks.into_iter().take(own) {
        block.stmts.iter_mut().for_each(|stmt| for_each_stmt_expr(stmt, visit));
    }
}

fn for_each_call_expr(call: &mut ast::Call, visit: &mut dyn FnMut(&mut ast::Expr)) {
    for generic in call.generics.iter_mut().flatten() {
        for_each_expr(generic, visit);
    }
    for arg in &mut call.args {
        for_each_expr(&mut arg.value, visit);
    }
}

fn for_each_range_expr(range: &mut ast::RangeExpr, visit: &mut dyn FnMut(&mut ast::Expr)) {
    for_each_expr(&mut range.start, visit);
    if let Some(end) = &mut range.end {
        for_each_expr(end, visit);
    }
}

/// An expression and every expression inside it, outer ones first.
pub(super) fn for_each_expr(expr: &mut ast::Expr, visit: &mut dyn FnMut(&mut ast::Expr)) {
    use ast::ExprKind as E;
    visit(expr);
    match &mut expr.kind {
        E::Unary(_, operand) => for_each_expr(operand, visit),
        E::Binary(_, left, right)
        | E::Index {
            base: left,
            index: right,
        } => {
            for_each_expr(left, visit);
            for_each_expr(right, visit);
        }
        E::Cond { cond, then, otherwise } => {
            for_each_expr(cond, visit);
            for_each_expr(then, visit);
            for_each_expr(otherwise, visit);
        }
        E::Call(call) => for_each_call_expr(call, visit),
        E::Slice { base, range } => {
            for_each_expr(base, visit);
            for_each_range_expr(range, visit);
        }
        E::List(items) => items.iter_mut().for_each(|item| for_each_expr(item, visit)),
        E::ListFor(list) => {
            for_each_expr(&mut list.item, visit);
            for_each_range_expr(&mut list.range, visit);
        }
        E::Struct(fields) => fields
            .iter_mut()
            .for_each(|field| for_each_expr(&mut field.value, visit)),
        E::Name(_) | E::Int(_) | E::Str(_) | E::Bool(_) | E::Null | E::Error => {}
    }
}
