//! The pretty-printer behind `syncguard fmt`: canonical layout with comments kept.
//!
//! Statements are printed one per line with four-space indentation. Comments are placed
//! by their byte spans relative to the statements around them, and blank lines between
//! statements (or comments) are kept, collapsed to one. Expressions get the minimal
//! parentheses that make them parse back to the same tree.
//!
//! A statement longer than [`MAX_WIDTH`] columns wraps: its outermost bracketed list
//! that does not fit (call arguments, list and struct literals, `let` patterns, `op`
//! attributes, kernel arguments) is broken one item per line, with a trailing comma, and
//! items that are still too long break the same way. Everything else (operators, ranges,
//! template arguments) stays on one line. Comments inside a broken list stay at the item
//! they were next to.

use crate::Parsed;
use crate::ast::*;
use crate::lexer::{has_line_end, lines};

const INDENT: &str = "    ";
/// Lines longer than this wrap where they can. Trailing comments do not count.
const MAX_WIDTH: usize = 100;
/// Binding strength of `c ? a : b`: below every binary operator.
const COND_PRECEDENCE: u8 = 1;
/// Binding strength of prefix operators: above every binary operator.
const UNARY_PRECEDENCE: u8 = 11;
/// Literals, names, calls, slices, lists and structs never need parentheses.
const ATOM_PRECEDENCE: u8 = 12;

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
                comment_start < end || self.src.get(end..comment_start).is_some_and(|gap| !has_line_end(gap))
            })
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Setting { key, value } => {
                let doc = concat([text(format!("{} ", key.name)), expr_doc(value), text(";")]);
                self.render(&doc, 0);
            }
            StmtKind::Ranks(RankCount::Fixed(count)) => {
                self.render(&concat([text("ranks "), expr_doc(count), text(";")]), 0);
            }
            StmtKind::Ranks(RankCount::Param { name, range }) => {
                self.push(&format!("ranks {} in {};", name.name, range_text(range)));
            }
            StmtKind::Param { name, range } => {
                self.push(&format!("param {} in {};", name.name, range_text(range)));
            }
            StmtKind::Let { pattern, value } => {
                let doc = concat([
                    text("let "),
                    pattern_doc(pattern),
                    text(" = "),
                    expr_doc(value),
                    text(";"),
                ]);
                self.render(&doc, 0);
            }
            StmtKind::LetMut { name, value } => {
                let doc = concat([text(format!("let mut {} = ", name.name)), expr_doc(value), text(";")]);
                self.render(&doc, 0);
            }
            StmtKind::Assign { name, value } => {
                let doc = concat([text(format!("{} = ", name.name)), expr_doc(value), text(";")]);
                self.render(&doc, 0);
            }
            StmtKind::While { cond, body } => {
                self.push(&format!("while {} ", expr(cond)));
                self.block(body);
            }
            StmtKind::Call(call) => self.render(&concat([call_doc(call), text(";")]), 0),
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
                let mut header = vec![text(format!("op {}", name.name))];
                if !attrs.is_empty() {
                    let entries = attrs
                        .iter()
                        .map(|attr| Entry {
                            doc: text(&attr.name),
                            span: attr.span.clone(),
                        })
                        .collect();
                    header.push(text(" attrs"));
                    header.push(list("(", ")", false, entries, name.span.end, body.span.start));
                }
                self.block_after_header(&Doc::Concat(header), body);
            }
            StmtKind::SuperKernel { name, args, body } => {
                // The grammar requires the argument list here, even when it is empty.
                let args = args_doc(args, name.span.end, body.span.start);
                self.block_after_header(&concat([text(format!("superkernel {}", name.name)), args]), body);
            }
            StmtKind::AiCore { name, args, body } => {
                let args = args_doc(args, name.span.end, body.span.start);
                self.block_after_header(&concat([text(format!("aicore {}", name.name)), args]), body);
            }
            StmtKind::SubKernel { name, args, body } => {
                let mut header = vec![text(format!("subkernel {}", name.name))];
                if !args.is_empty() {
                    header.push(args_doc(args, name.span.end, body.span.start));
                }
                self.block_after_header(&Doc::Concat(header), body);
            }
            StmtKind::Return => self.push("return;"),
            StmtKind::Error => self.push("/* error */"),
        }
    }

    /// `header {`, the header wrapped if `header {` is too long, then the block.
    fn block_after_header(&mut self, header: &Doc, body: &Block) {
        self.render(header, self.block_opening_width(body, false));
        self.push(" ");
        self.block(body);
    }

    fn if_chain(&mut self, cond: &Expr, then: &Block, otherwise: Option<&Else>) {
        // `} else {` reads better than `{} else {`, so an empty branch opens a line.
        let expand_empty = otherwise.is_some();
        let opening = self.block_opening_width(then, expand_empty);
        self.render(&concat([text("if "), expr_doc(cond)]), opening);
        self.push(" ");
        self.block_with(then, expand_empty);
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

    /// The column the next character goes to.
    fn column(&self) -> usize {
        let line_start = self.out.rfind('\n').map_or(0, |newline| newline + 1);
        self.out[line_start..].chars().count()
    }

    /// Print `doc` from the current column, followed on its last line by `rest` more
    /// columns of text that cannot break: a list that does not fit breaks (see
    /// [`Printer::broken_list`]), one that does stays on one line.
    fn render(&mut self, doc: &Doc, rest: usize) {
        match doc {
            Doc::Text(text) => self.push(text),
            Doc::Concat(parts) => {
                for (index, part) in parts.iter().enumerate() {
                    // A later list may break right after its opening bracket, so only
                    // the text up to there has to fit on this line.
                    let (head, breaks) = head_width(&parts[index + 1..]);
                    self.render(part, if breaks { head } else { head + rest });
                }
            }
            Doc::List(list) => {
                if list.entries.is_empty() || self.column() + width(doc) + rest <= MAX_WIDTH {
                    self.push(&flat(doc));
                } else {
                    self.broken_list(list);
                }
            }
        }
    }

    /// The opening bracket, each entry on a line of its own one level deeper with a
    /// comma after it, and the closing bracket on a line of its own. The comments
    /// between the entries are printed there, rather than after the statement.
    fn broken_list(&mut self, list: &ListDoc) {
        self.push(list.open);
        // Comments on the source line of the opening bracket trail it.
        self.last_end = Some(list.open_at);
        self.line_open = true;
        self.at_block_start = true;
        self.depth += 1;
        for entry in &list.entries {
            self.comments_before(entry.span.start);
            self.begin_line();
            self.render(&entry.doc, ",".len());
            self.push(",");
            self.item_printed(entry.span.end, true);
        }
        self.comments_before(list.close_at);
        self.depth -= 1;
        self.begin_line();
        self.push(list.close);
    }

    /// `{ ... }` starting on the current line; `{}` when there is nothing inside.
    fn block(&mut self, block: &Block) {
        self.block_with(block, false);
    }

    /// Whether [`Printer::block_with`] will print the block as lines rather than `{}`.
    fn block_is_expanded(&self, block: &Block, expand_empty: bool) -> bool {
        expand_empty || !block.stmts.is_empty() || self.comment_pending_before(block.span.end.saturating_sub(1))
    }

    /// Columns that the block takes after its header on the header's line: ` {`, or
    /// ` {}` when it is empty. A comment that the header itself prints (which it does
    /// only when it wraps) can make this ` {` for a block that turns out `{}`; then the
    /// line is the header's last, `) {}`, and short anyway.
    fn block_opening_width(&self, block: &Block, expand_empty: bool) -> usize {
        if self.block_is_expanded(block, expand_empty) {
            " {".len()
        } else {
            " {}".len()
        }
    }

    fn block_with(&mut self, block: &Block, expand_empty: bool) {
        let expanded = self.block_is_expanded(block, expand_empty);
        self.push("{");
        self.last_end = Some(block.span.start + 1);
        self.line_open = true;
        self.at_block_start = true;
        let close_brace = block.span.end.saturating_sub(1);
        if expanded {
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
    let mut lines = lines(gap);
    // The first and last pieces are the rests of the lines the two items are on.
    lines.next();
    lines.next_back();
    lines.any(|line| line.trim().is_empty())
}

/// The comment as written, minus trailing whitespace on its lines.
fn tidy_comment(text: &str) -> String {
    lines(text).map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// A statement's text with the places where it may break: its bracketed lists.
enum Doc {
    Text(String),
    Concat(Vec<Doc>),
    /// Never empty: an empty list is text.
    List(Box<ListDoc>),
}

/// A bracketed, comma-separated list that may print one entry per line.
struct ListDoc {
    open: &'static str,
    close: &'static str,
    /// Spaces inside the brackets on one line: `{ a: 1 }`.
    padded: bool,
    entries: Vec<Entry>,
    /// A source offset on the line of the opening bracket: comments after it, on that
    /// line, trail the bracket.
    open_at: usize,
    /// The source offset of the closing bracket: comments before it stay in the list.
    close_at: usize,
}

struct Entry {
    doc: Doc,
    /// Where the entry is in the source, for the comments around it.
    span: Span,
}

fn text(text: impl Into<String>) -> Doc {
    Doc::Text(text.into())
}

fn concat<const N: usize>(parts: [Doc; N]) -> Doc {
    Doc::Concat(parts.into())
}

/// A list doc, or plain brackets when there is nothing in them.
fn list(
    open: &'static str,
    close: &'static str,
    padded: bool,
    entries: Vec<Entry>,
    open_at: usize,
    close_at: usize,
) -> Doc {
    if entries.is_empty() {
        return text(format!("{open}{close}"));
    }
    Doc::List(Box::new(ListDoc {
        open,
        close,
        padded,
        entries,
        open_at,
        close_at,
    }))
}

/// The one-line text of a doc.
fn flat(doc: &Doc) -> String {
    let mut out = String::new();
    write_flat(doc, &mut out);
    out
}

fn write_flat(doc: &Doc, out: &mut String) {
    match doc {
        Doc::Text(text) => out.push_str(text),
        Doc::Concat(parts) => parts.iter().for_each(|part| write_flat(part, out)),
        Doc::List(list) => {
            out.push_str(list.open);
            if list.padded {
                out.push(' ');
            }
            for (index, entry) in list.entries.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_flat(&entry.doc, out);
            }
            if list.padded {
                out.push(' ');
            }
            out.push_str(list.close);
        }
    }
}

/// Columns the doc takes on one line.
fn width(doc: &Doc) -> usize {
    flat(doc).chars().count()
}

/// Columns that `docs` take up to and including the first opening bracket of a list,
/// and whether there is such a list (a place where the line may break).
fn head_width(docs: &[Doc]) -> (usize, bool) {
    let mut total = 0;
    for doc in docs {
        match doc {
            Doc::Text(text) => total += text.chars().count(),
            Doc::Concat(parts) => {
                let (head, breaks) = head_width(parts);
                total += head;
                if breaks {
                    return (total, true);
                }
            }
            Doc::List(list) => return (total + list.open.len(), true),
        }
    }
    (total, false)
}

fn pattern_doc(pattern: &Pattern) -> Doc {
    match pattern {
        Pattern::Name(name) => text(&name.name),
        Pattern::List(names, span) => {
            let entries = names
                .iter()
                .map(|name| Entry {
                    doc: text(&name.name),
                    span: name.span.clone(),
                })
                .collect();
            list("[", "]", false, entries, span.start, span.end.saturating_sub(1))
        }
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

fn call_doc(call: &Call) -> Doc {
    let (generics, generics_end) = match &call.generics {
        None => (String::new(), call.callee.span.end),
        Some(generics) => {
            let end = generics.last().map_or(call.callee.span.end, |last| last.span.end);
            let generics: Vec<String> = generics.iter().map(expr).collect();
            (format!("<{}>", generics.join(", ")), end)
        }
    };
    let args = args_doc(&call.args, generics_end, call.span.end.saturating_sub(1));
    concat([text(format!("{}{generics}", call.callee.text)), args])
}

/// `(args)`; `open_at` and `close_at` as in [`ListDoc`].
fn args_doc(args: &[Arg], open_at: usize, close_at: usize) -> Doc {
    let items: Vec<ListItem> = args.iter().map(|arg| (arg.name.as_ref(), &arg.value)).collect();
    list("(", ")", false, comma_entries(&items), open_at, close_at)
}

/// One element of a comma-separated list: an optional `name:` and a value.
type ListItem<'e> = (Option<&'e Ident>, &'e Expr);

fn comma_entries(items: &[ListItem]) -> Vec<Entry> {
    (0..items.len())
        .map(|index| {
            let (name, value) = items[index];
            let value_doc = if opens_generic_call(&items[index..]) {
                text(parenthesized(value))
            } else {
                expr_doc(value)
            };
            match name {
                Some(name) => Entry {
                    doc: concat([text(format!("{}: ", name.name)), value_doc]),
                    span: name.span.start..value.span.end,
                },
                None => Entry {
                    doc: value_doc,
                    span: value.span.clone(),
                },
            }
        })
        .collect()
}

fn struct_doc(fields: &[Field], span: &Span) -> Doc {
    let entries = fields
        .iter()
        .map(|field| Entry {
            doc: concat([text(format!("{}: ", field.name.name)), expr_doc(&field.value)]),
            span: field.name.span.start..field.value.span.end,
        })
        .collect();
    list("{", "}", true, entries, span.start, span.end.saturating_sub(1))
}

/// An expression that may break: calls, lists and struct literals break at their
/// brackets; operators and slices stay on one line, and so do the lists inside them.
fn expr_doc(e: &Expr) -> Doc {
    match &e.kind {
        ExprKind::Call(call) => call_doc(call),
        ExprKind::List(items) => {
            let items: Vec<ListItem> = items.iter().map(|item| (None, item)).collect();
            list(
                "[",
                "]",
                false,
                comma_entries(&items),
                e.span.start,
                e.span.end.saturating_sub(1),
            )
        }
        ExprKind::Struct(fields) => struct_doc(fields, &e.span),
        ExprKind::ListFor(list) => Doc::Concat(vec![
            text("["),
            expr_doc(&list.item),
            text(format!(" for {} in {}]", list.var.name, range_text(&list.range))),
        ]),
        _ => text(expr(e)),
    }
}

fn precedence(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Binary(op, _, _) => op.precedence(),
        ExprKind::Cond { .. } => COND_PRECEDENCE,
        ExprKind::Unary(_, _) => UNARY_PRECEDENCE,
        _ => ATOM_PRECEDENCE,
    }
}

/// One expression as `fmt` writes it, on one line (for messages).
pub fn expr_text(e: &Expr) -> String {
    expr(e)
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
        // A conditional in the middle branch keeps its parentheses, for the reader.
        ExprKind::Cond { cond, then, otherwise } => format!(
            "{} ? {} : {}",
            operand_text(cond, COND_PRECEDENCE + 1),
            operand_text(then, COND_PRECEDENCE + 1),
            expr(otherwise)
        ),
        ExprKind::Call(_) | ExprKind::List(_) | ExprKind::Struct(_) => flat(&expr_doc(e)),
        ExprKind::Slice { base, range } => {
            format!("{}[{}]", operand_text(base, ATOM_PRECEDENCE), range_text(range))
        }
        ExprKind::Index { base, index } => format!("{}[{}]", operand_text(base, ATOM_PRECEDENCE), expr(index)),
        ExprKind::ListFor(_) => flat(&expr_doc(e)),
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
            '\r' => out.push_str("\\r"),
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
