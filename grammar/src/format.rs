//! The pretty-printer behind `syncguard fmt`: canonical layout with comments kept.
//!
//! Statements are printed one per line with four-space indentation. Comments are placed
//! by their byte spans relative to the statements around them, and blank lines between
//! statements (or comments) are kept, collapsed to one. Expressions get the minimal
//! parentheses that make them parse back to the same tree.

use crate::Parsed;
use crate::ast::*;

const INDENT: &str = "    ";
/// Binding strength of prefix operators: above every binary operator.
const UNARY_PRECEDENCE: u8 = 8;
/// Literals, names, calls, slices, lists and structs never need parentheses.
const ATOM_PRECEDENCE: u8 = 9;

/// Print a parsed file canonically. `parsed` must come from parsing `src`; the source
/// text is only consulted for blank lines and comment positions, so spans that do not
/// point into `src` (a tree built by hand) are tolerated.
pub fn format(src: &str, parsed: &Parsed) -> String {
    let mut printer = Printer::new(src, &parsed.comments);
    printer.stmts(&parsed.file.stmts);
    printer.comments_before(usize::MAX);
    printer.finish()
}

/// Writes statements and comments line by line, tracking where in the source the last
/// printed item ended so that comments and blank lines land where they were.
struct Printer<'a> {
    src: &'a str,
    /// In source order, as the lexer produces them.
    comments: &'a [Comment],
    next_comment: usize,
    out: String,
    depth: usize,
    /// Source offset just past the last printed statement, brace or comment.
    last_end: Option<usize>,
    /// Whether a comment may still be appended to the current output line; a line
    /// comment closes it.
    line_open: bool,
    /// Nothing printed yet at this nesting level, so no blank line may follow.
    at_block_start: bool,
}

impl<'a> Printer<'a> {
    fn new(src: &'a str, comments: &'a [Comment]) -> Self {
        Printer {
            src,
            comments,
            next_comment: 0,
            out: String::new(),
            depth: 0,
            last_end: None,
            line_open: false,
            at_block_start: true,
        }
    }

    fn finish(mut self) -> String {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// Start an output line for an item that begins at `item_start` in the source,
    /// preceded by one blank line when the source had any there.
    fn begin_item_line(&mut self, item_start: usize) {
        if self.blank_line_before(item_start) {
            self.out.push('\n');
        }
        self.begin_line();
    }

    fn begin_line(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        for _ in 0..self.depth {
            self.out.push_str(INDENT);
        }
    }

    fn blank_line_before(&self, item_start: usize) -> bool {
        !self.at_block_start
            && self
                .last_end
                .and_then(|end| self.src.get(end..item_start))
                .is_some_and(has_blank_line)
    }

    fn item_printed(&mut self, source_end: usize, line_open: bool) {
        self.last_end = Some(source_end);
        self.line_open = line_open;
        self.at_block_start = false;
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.comments_before(stmt.span.start);
            self.begin_item_line(stmt.span.start);
            self.stmt(stmt);
            self.item_printed(stmt.span.end, true);
        }
    }

    /// Print every not yet printed comment that starts before `limit`.
    fn comments_before(&mut self, limit: usize) {
        let comments = self.comments;
        while let Some(comment) = comments
            .get(self.next_comment)
            .filter(|comment| comment.span.start < limit)
        {
            self.next_comment += 1;
            self.comment(comment);
        }
    }

    fn comment_pending_before(&self, limit: usize) -> bool {
        self.comments
            .get(self.next_comment)
            .is_some_and(|comment| comment.span.start < limit)
    }

    fn comment(&mut self, comment: &Comment) {
        let text = tidy_comment(&comment.text);
        if self.fits_as_trailing(comment.span.start) {
            self.push(" ");
        } else {
            self.begin_item_line(comment.span.start);
        }
        self.push(&text);
        self.item_printed(comment.span.end, !comment.text.starts_with("//"));
    }

    /// A comment stays on the current line when it started on the same source line as
    /// the item printed last, or inside it (between a statement's tokens).
    fn fits_as_trailing(&self, comment_start: usize) -> bool {
        self.line_open
            && self.last_end.is_some_and(|end| {
                comment_start < end || self.src.get(end..comment_start).is_some_and(|gap| !gap.contains('\n'))
            })
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Setting { key, value } => {
                self.push(&format!("{} {};", key.name, expr(value)));
            }
            StmtKind::Ranks(RankCount::Fixed(count)) => {
                self.push(&format!("ranks {};", expr(count)));
            }
            StmtKind::Ranks(RankCount::Param { name, range }) => {
                self.push(&format!("ranks {} in {};", name.name, range_text(range)));
            }
            StmtKind::Param { name, range } => {
                self.push(&format!("param {} in {};", name.name, range_text(range)));
            }
            StmtKind::Let { pattern, value } => {
                self.push(&format!("let {} = {};", pattern_text(pattern), expr(value)));
            }
            StmtKind::Call(call) => self.push(&format!("{};", call_text(call))),
            StmtKind::If { cond, then, otherwise } => self.if_chain(cond, then, otherwise.as_ref()),
            StmtKind::For { var, range, body } => {
                self.push(&format!("for {} in {} ", var.name, range_text(range)));
                self.block(body);
            }
            StmtKind::Thread { name, body } => {
                self.push(&format!("thread {} ", name.name));
                self.block(body);
            }
            StmtKind::GeOp { name, attrs, body } => {
                self.push(&format!("op {}{} ", name.name, attrs_text(attrs)));
                self.block(body);
            }
            StmtKind::SuperKernel { name, args, body } => {
                // The grammar requires the argument list here, even when it is empty.
                self.push(&format!("superkernel {}({}) ", name.name, arg_list(args)));
                self.block(body);
            }
            StmtKind::SubKernel { name, args, body } => {
                let args = if args.is_empty() {
                    String::new()
                } else {
                    format!("({})", arg_list(args))
                };
                self.push(&format!("subkernel {}{args} ", name.name));
                self.block(body);
            }
            StmtKind::Return => self.push("return;"),
            StmtKind::Error => self.push("/* error */"),
        }
    }

    fn if_chain(&mut self, cond: &Expr, then: &Block, otherwise: Option<&Else>) {
        self.push(&format!("if {} ", expr(cond)));
        // `} else {` reads better than `{} else {`, so an empty branch opens a line.
        self.block_with(then, otherwise.is_some());
        match otherwise {
            None => {}
            Some(Else::Block(block)) => {
                self.push(" else ");
                self.block(block);
            }
            Some(Else::If(stmt)) => {
                self.push(" else ");
                if let StmtKind::If { cond, then, otherwise } = &stmt.kind {
                    self.if_chain(cond, then, otherwise.as_ref());
                } else {
                    // Not produced by the parser; a block is the nearest valid syntax.
                    self.block(&Block {
                        stmts: vec![(**stmt).clone()],
                        span: stmt.span.clone(),
                    });
                }
            }
        }
    }

    /// `{ ... }` starting on the current line; `{}` when there is nothing inside.
    fn block(&mut self, block: &Block) {
        self.block_with(block, false);
    }

    fn block_with(&mut self, block: &Block, expand_empty: bool) {
        self.push("{");
        self.last_end = Some(block.span.start + 1);
        self.line_open = true;
        self.at_block_start = true;
        let close_brace = block.span.end.saturating_sub(1);
        if expand_empty || !block.stmts.is_empty() || self.comment_pending_before(close_brace) {
            self.depth += 1;
            self.stmts(&block.stmts);
            self.comments_before(close_brace);
            self.depth -= 1;
            self.begin_line();
        }
        self.push("}");
        self.item_printed(block.span.end, true);
    }
}

/// Whether the whitespace between two items contains a line with nothing on it.
fn has_blank_line(gap: &str) -> bool {
    let mut lines = gap.split('\n');
    // The first and last pieces are the rests of the lines the two items are on.
    lines.next();
    lines.next_back();
    lines.any(|line| line.trim().is_empty())
}

/// The comment as written, minus trailing whitespace on its lines.
fn tidy_comment(text: &str) -> String {
    text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

fn pattern_text(pattern: &Pattern) -> String {
    match pattern {
        Pattern::Name(name) => name.name.clone(),
        Pattern::List(names, _) => format!("[{}]", names_text(names)),
    }
}

fn names_text(names: &[Ident]) -> String {
    let names: Vec<&str> = names.iter().map(|name| name.name.as_str()).collect();
    names.join(", ")
}

fn attrs_text(attrs: &[Ident]) -> String {
    if attrs.is_empty() {
        String::new()
    } else {
        format!(" attrs({})", names_text(attrs))
    }
}

fn range_text(range: &RangeExpr) -> String {
    let start = expr(&range.start);
    match (&range.end, range.inclusive) {
        (None, _) => format!("{start}.."),
        (Some(end), false) => format!("{start}..{}", expr(end)),
        (Some(end), true) => format!("{start}..={}", expr(end)),
    }
}

fn call_text(call: &Call) -> String {
    let generics = match &call.generics {
        None => String::new(),
        Some(generics) => {
            let generics: Vec<String> = generics.iter().map(expr).collect();
            format!("<{}>", generics.join(", "))
        }
    };
    format!("{}{generics}({})", call.callee.text, arg_list(&call.args))
}

fn arg_list(args: &[Arg]) -> String {
    let items: Vec<ListItem> = args.iter().map(|arg| (arg.name.as_ref(), &arg.value)).collect();
    comma_list(&items)
}

/// One element of a comma-separated list: an optional `name:` and a value.
type ListItem<'e> = (Option<&'e Ident>, &'e Expr);

fn comma_list(items: &[ListItem]) -> String {
    let texts: Vec<String> = (0..items.len())
        .map(|index| {
            let (name, value) = items[index];
            let value = if opens_generic_call(&items[index..]) {
                parenthesized(value)
            } else {
                expr(value)
            };
            match name {
                Some(name) => format!("{}: {value}", name.name),
                None => value,
            }
        })
        .collect();
    texts.join(", ")
}

fn struct_text(fields: &[Field]) -> String {
    if fields.is_empty() {
        return "{}".into();
    }
    let fields: Vec<String> = fields
        .iter()
        .map(|field| format!("{}: {}", field.name.name, expr(&field.value)))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

fn precedence(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Binary(op, _, _) => op.precedence(),
        ExprKind::Unary(_, _) => UNARY_PRECEDENCE,
        _ => ATOM_PRECEDENCE,
    }
}

fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(lit) => int_text(lit),
        ExprKind::Str(text) => quoted(text),
        ExprKind::Bool(value) => value.to_string(),
        ExprKind::Null => "NULL".into(),
        ExprKind::Name(path) => path.text.clone(),
        ExprKind::Unary(op, operand) => {
            let op = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
            };
            format!("{op}{}", operand_text(operand, UNARY_PRECEDENCE))
        }
        ExprKind::Binary(op, lhs, rhs) => binary_text(*op, lhs, rhs),
        ExprKind::Call(call) => call_text(call),
        ExprKind::Slice { base, range } => {
            format!("{}[{}]", operand_text(base, ATOM_PRECEDENCE), range_text(range))
        }
        ExprKind::List(items) => {
            let items: Vec<ListItem> = items.iter().map(|item| (None, item)).collect();
            format!("[{}]", comma_list(&items))
        }
        ExprKind::Struct(fields) => struct_text(fields),
        ExprKind::Error => "/* error */".into(),
    }
}

/// `expr` in a position that binds at least as tightly as `min_precedence`.
fn operand_text(e: &Expr, min_precedence: u8) -> String {
    if precedence(e) < min_precedence {
        parenthesized(e)
    } else {
        expr(e)
    }
}

fn parenthesized(e: &Expr) -> String {
    format!("({})", expr(e))
}

/// Operators associate left, so a right operand of equal precedence needs parentheses.
fn binary_text(op: BinaryOp, lhs: &Expr, rhs: &Expr) -> String {
    let rhs_text = operand_text(rhs, op.precedence() + 1);
    let lhs_text = if op == BinaryOp::Gt && rhs_text.starts_with('(') && ends_with_generic_open(lhs) {
        // `a < b > (c)` would read as the call `a<b>(c)`.
        parenthesized(lhs)
    } else {
        operand_text(lhs, op.precedence())
    };
    format!("{lhs_text} {} {rhs_text}", op.as_str())
}

fn int_text(lit: &IntLit) -> String {
    let digits = if lit.hex {
        format!("0x{:X}", lit.value)
    } else {
        lit.value.to_string()
    };
    match lit.unit {
        Some(unit) => format!("{digits} {}", unit.as_str()),
        None => digits,
    }
}

fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

// The call grammar `name<G, ...>(args)` overlaps with comparisons: printed bare,
// `a < b > (c)` or the arguments `a < b, c > (d)` parse as a call of `a`. The helpers
// below recognise those shapes so that the `<` comparison can be parenthesized.

/// Whether the expression can stand between `<` and `>` as a template argument.
fn is_generic_arg(e: &Expr) -> bool {
    matches!(
        &e.kind,
        ExprKind::Name(_) | ExprKind::Int(IntLit { unit: None, .. }) | ExprKind::Bool(_)
    )
}

/// Whether the printed expression ends in `name < G`: the start of a template call.
fn ends_with_generic_open(e: &Expr) -> bool {
    let ExprKind::Binary(op, lhs, rhs) = &e.kind else {
        return false;
    };
    let opens_here =
        *op == BinaryOp::Lt && is_generic_arg(rhs) && precedence(lhs) >= op.precedence() && ends_with_name(lhs);
    opens_here || (precedence(rhs) > op.precedence() && ends_with_generic_open(rhs))
}

/// Whether the printed expression ends in a bare name (which could be a callee).
fn ends_with_name(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(_) => true,
        ExprKind::Unary(_, operand) => precedence(operand) >= UNARY_PRECEDENCE && ends_with_name(operand),
        ExprKind::Binary(op, _, rhs) => precedence(rhs) > op.precedence() && ends_with_name(rhs),
        _ => false,
    }
}

/// Whether the printed expression starts with `G > (`: the end of template arguments.
fn closes_generics(e: &Expr) -> bool {
    let ExprKind::Binary(op, lhs, rhs) = &e.kind else {
        return false;
    };
    let closes_here =
        *op == BinaryOp::Gt && is_generic_arg(lhs) && operand_text(rhs, op.precedence() + 1).starts_with('(');
    closes_here || (precedence(lhs) >= op.precedence() && closes_generics(lhs))
}

/// Whether the first item, followed by the rest, would print as `name < G, ..., G > (`.
fn opens_generic_call(items: &[ListItem]) -> bool {
    let Some(((_, first), rest)) = items.split_first() else {
        return false;
    };
    if !ends_with_generic_open(first) {
        return false;
    }
    for (name, value) in rest {
        if name.is_some() {
            return false;
        }
        if closes_generics(value) {
            return true;
        }
        if !is_generic_arg(value) {
            return false;
        }
    }
    false
}
