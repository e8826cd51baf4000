//! Kernel arguments that point into the middle of a buffer (`d_a + i * chunk`), as
//! chunked multi-stream code passes them: the kernel's length is not in the call, so a
//! chunk is taken to end where the next chunk of the same buffer that the program
//! passes to a kernel starts (or at the buffer's end). Taking every chunk to the
//! buffer's end would make each stream's chunk overlap the next stream's: a race on
//! correct code.

use std::collections::{BTreeSet, HashMap};

use syncguard_grammar::ast;
use tree_sitter::Node;

use super::Walker;
use crate::fields::FieldChild;

/// The end a chunk's slice is emitted with until `bound_chunks` knows the next start.
const UNBOUNDED_CHUNK: i64 = i64::MAX - 1;

/// Where the program's kernel arguments start chunks, per buffer.
pub(super) type ChunkStarts = HashMap<String, BTreeSet<i64>>;

impl<'u> Walker<'_, 'u> {
    /// The slice a kernel argument `arg` at `offset` into `name` covers: a chunk when the
    /// argument is pointer arithmetic, otherwise the buffer from `offset` on.
    pub(super) fn kernel_argument_slice(&mut self, arg: Node<'u>, name: &str, offset: i64) -> ast::Expr {
        let span = self.range(arg);
        if !is_pointer_arithmetic(arg) {
            return self.buffer_slice(name, offset, span);
        }
        self.chunk_starts.entry(name.to_string()).or_default().insert(offset);
        ast::Expr {
            kind: ast::ExprKind::Slice {
                base: Box::new(ast::Expr::name(name, span.clone())),
                range: ast::RangeExpr {
                    start: Box::new(ast::Expr::int(offset, span.clone())),
                    end: Some(Box::new(ast::Expr::int(UNBOUNDED_CHUNK, span.clone()))),
                    inclusive: false,
                    span: span.clone(),
                },
            },
            span,
        }
    }
}

/// `p + k`, `p - k`, `&p[k]` (under casts and parentheses).
fn is_pointer_arithmetic(arg: Node) -> bool {
    let arg = super::api::strip_casts(arg);
    match arg.kind() {
        "binary_expression" => arg
            .field_child("operator")
            .is_some_and(|op| matches!(op.kind(), "+" | "-")),
        "pointer_expression" => {
            arg.field_child("argument")
                .is_some_and(|inner| inner.kind() == "subscript_expression")
                && arg.child(0).is_some_and(|op| op.kind() == "&")
        }
        _ => false,
    }
}

/// Give every chunk its end: the next chunk start of its buffer, or `end_of(buffer)`.
pub(super) fn bound_chunks(stmts: &mut [ast::Stmt], starts: &ChunkStarts, end_of: &dyn Fn(&str) -> i64) {
    if starts.is_empty() {
        return;
    }
    for stmt in stmts {
        if let ast::StmtKind::Call(call) = &mut stmt.kind {
            for arg in &mut call.args {
                let ast::ExprKind::List(items) = &mut arg.value.kind else {
                    continue;
                };
                for item in items {
                    bound_chunk(item, starts, end_of);
                }
            }
        }
        for block in stmt.blocks_mut() {
            bound_chunks(&mut block.stmts, starts, end_of);
        }
    }
}

fn bound_chunk(item: &mut ast::Expr, starts: &ChunkStarts, end_of: &dyn Fn(&str) -> i64) {
    let ast::ExprKind::Slice { base, range } = &mut item.kind else {
        return;
    };
    let (ast::ExprKind::Name(name), ast::ExprKind::Int(start), Some(end)) =
        (&base.kind, &range.start.kind, range.end.as_mut())
    else {
        return;
    };
    if !matches!(&end.kind, ast::ExprKind::Int(value) if value.value == UNBOUNDED_CHUNK as u64) {
        return;
    }
    let (Ok(start), name) = (i64::try_from(start.value), name.text.as_str()) else {
        return;
    };
    let next = starts.get(name).and_then(|set| set.range(start + 1..).next().copied());
    let bound = next.unwrap_or_else(|| end_of(name)).max(start + 1);
    **end = ast::Expr::int(bound, end.span.clone());
}
