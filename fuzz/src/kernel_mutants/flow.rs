//! The control flow of a pipe program's `aicore` block (`if` arms, loops and their next
//! iteration, `return`), and the questions the mutation harness asks of it to know a
//! mutant equivalent: whether a statement can run after another, and whether a
//! `PipeBarrier<PIPE_ALL>` or a `SetFlag`/`WaitFlag` pair orders anything (a pair
//! orders its source pipe's instructions before the set with every instruction after
//! the wait: judged as a barrier, on that pipe's side only).
//!
//! Deleting the barrier leaves unordered only the pairs of instructions it separated
//! with no other `PIPE_ALL` barrier between them: one that can run before it (walking
//! back from it, through loop back edges, up to a barrier or the kernel's start) and
//! one that can run after it (forward, up to a barrier or the kernel's end, which waits
//! for every pipe). The barrier orders nothing when no such pair touches one memory (a
//! buffer, however its tensors are named, or a GM argument) from two pipes that nothing
//! else orders: one pipe keeps its own order, and in a vector kernel the compiler's
//! automatic sync orders the scalar pipe with V, MTE2 and MTE3. Flags and queue
//! operations are not counted as ordering anything, and a tensor whose buffer the
//! reading cannot name touches every memory. Anything it cannot place on a plain pipe
//! (a cube or cross-core instruction, a `while`) makes the barrier count as needed. A conservative judge: what it calls equivalent is.

use std::collections::HashMap;

use syncguard_grammar::ast::{Block, Else, Expr, ExprKind, Stmt, StmtKind};

use super::statement_pipe;

/// Memory a tensor whose buffer is not known may be.
const ANY_MEMORY: &str = "*";

/// What a statement of the pipe program is to the flow.
#[derive(Clone, PartialEq)]
enum Kind {
    /// Issues work on no pipe: a `let`, a queue operation, a flag, an `if` or `for` head.
    Nothing,
    /// Work on a pipe, with the memories (buffers, GM arguments) its tensors are in.
    Access(&'static str, Vec<String>),
    BarrierAll,
    /// An instruction whose pipes are not plain (a cube or cross-core instruction): no
    /// barrier around it is judged.
    Unplain,
    /// A statement whose control flow is not followed (a `while`): nothing is judged.
    Unread,
}

struct Node {
    line: usize,
    kind: Kind,
    next: Vec<usize>,
    previous: Vec<usize>,
}

/// The control-flow graph of one `aicore` block's body.
struct Flow<'a> {
    lines: &'a [&'a str],
    /// The GM tensors: the block's unnamed arguments (`blocks: 8` and the like are named).
    gm: Vec<String>,
    /// A vector kernel (`type: AIV_ONLY`, or no type) with the automatic sync on (no
    /// `auto_sync: false`): the compiler orders the scalar pipe with V, MTE2 and MTE3.
    scalar_auto_synced: bool,
    /// A tensor's name to the memory it is in (`let t = TBuf::Get(b)`: `b`).
    memory_of: HashMap<String, String>,
    line_starts: Vec<usize>,
    nodes: Vec<Node>,
}

impl<'a> Flow<'a> {
    /// The flow of the `aicore` block holding line `at` of the pipe program `converted`
    /// (`lines` its lines), and the node of the statement starting there.
    fn around(converted: &str, lines: &'a [&'a str], at: usize) -> Option<(Self, usize)> {
        let parsed = syncguard_grammar::parse(converted);
        if !parsed.errors.is_empty() {
            return None;
        }
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(converted.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let offset = *line_starts.get(at)?;
        let (args, body) = parsed.file.stmts.iter().find_map(|stmt| match &stmt.kind {
            StmtKind::AiCore { args, body, .. } if stmt.span.contains(&offset) => Some((args, body)),
            _ => None,
        })?;
        let named = |key: &str| {
            args.iter()
                .find(|arg| arg.name.as_ref().is_some_and(|name| name.name == key))
                .map(|arg| &converted[arg.value.span.clone()])
        };
        let mut memory_of = HashMap::new();
        memories_bound(&body.stmts, &mut memory_of);
        let mut flow = Flow {
            lines,
            gm: args
                .iter()
                .filter(|arg| arg.name.is_none())
                .map(|arg| converted[arg.value.span.clone()].to_string())
                .collect(),
            scalar_auto_synced: named("type").is_none_or(|kind| kind == "AIV_ONLY")
                && named("auto_sync") != Some("false"),
            memory_of,
            line_starts,
            nodes: Vec::new(),
        };
        let entry = flow.node(0, Kind::Nothing, &[]);
        let mut returns = Vec::new();
        let mut ends = flow.block(body, vec![entry], &mut returns);
        ends.extend(returns);
        flow.node(0, Kind::Nothing, &ends);
        let node = flow.nodes.iter().position(|node| node.line == at)?;
        Some((flow, node))
    }

    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    fn node(&mut self, line: usize, kind: Kind, from: &[usize]) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            line,
            kind,
            next: Vec::new(),
            previous: from.to_vec(),
        });
        for &before in from {
            self.nodes[before].next.push(id);
        }
        id
    }

    /// Adds `block`'s statements reached from `from`; the nodes its end is reached from.
    /// `returns` collects the `return`s (they reach the kernel's end).
    fn block(&mut self, block: &Block, from: Vec<usize>, returns: &mut Vec<usize>) -> Vec<usize> {
        block
            .stmts
            .iter()
            .fold(from, |from, stmt| self.stmt(stmt, from, returns))
    }

    fn stmt(&mut self, stmt: &Stmt, from: Vec<usize>, returns: &mut Vec<usize>) -> Vec<usize> {
        let line = self.line_of(stmt.span.start);
        match &stmt.kind {
            StmtKind::Call(call) => {
                let kind = self.kind(line, call.args.iter().map(|arg| &arg.value));
                vec![self.node(line, kind, &from)]
            }
            StmtKind::Let { .. } | StmtKind::LetMut { .. } | StmtKind::Assign { .. } => {
                let kind = self.kind(line, std::iter::empty());
                vec![self.node(line, kind, &from)]
            }
            StmtKind::If { then, otherwise, .. } => {
                let head = self.node(line, Kind::Nothing, &from);
                let mut out = self.block(then, vec![head], returns);
                out.extend(match otherwise {
                    None => vec![head],
                    Some(Else::Block(block)) => self.block(block, vec![head], returns),
                    Some(Else::If(stmt)) => self.stmt(stmt, vec![head], returns),
                });
                out
            }
            StmtKind::For { body, .. } => {
                // The head is where each iteration starts and where the loop is left
                // (after the last iteration, or with none).
                let head = self.node(line, Kind::Nothing, &from);
                let ends = self.block(body, vec![head], returns);
                for end in ends {
                    self.nodes[end].next.push(head);
                    self.nodes[head].previous.push(end);
                }
                vec![head]
            }
            StmtKind::Return => {
                returns.extend(from);
                Vec::new()
            }
            _ => vec![self.node(line, Kind::Unread, &from)],
        }
    }

    fn kind<'e>(&self, line: usize, args: impl Iterator<Item = &'e Expr>) -> Kind {
        if self.lines[line].contains("PipeBarrier<PIPE_ALL>") {
            return Kind::BarrierAll;
        }
        // A barrier of one pipe orders that pipe with itself, which it keeps anyway; not
        // counted as ordering anything, like flags.
        if self.lines[line].contains("PipeBarrier<PIPE_") {
            return Kind::Nothing;
        }
        match statement_pipe(self.lines, line, &self.gm) {
            Some(None) => Kind::Nothing,
            Some(Some(pipe)) => Kind::Access(pipe, args.filter_map(|arg| self.memory(arg)).collect()),
            None => Kind::Unplain,
        }
    }

    /// The memory a tensor argument is in; `None` for an argument that is no tensor.
    fn memory(&self, arg: &Expr) -> Option<String> {
        let name = tensor_name(arg)?;
        if self.gm.contains(&name) {
            return Some(name);
        }
        Some(
            self.memory_of
                .get(&name)
                .cloned()
                .unwrap_or_else(|| ANY_MEMORY.to_string()),
        )
    }

    /// The instructions reachable from `from` (its successors, or with `backward` its
    /// predecessors) before a `PIPE_ALL` barrier; `None` when one is not plain.
    fn accesses_until_barrier(&self, from: usize, backward: bool) -> Option<Vec<(&'static str, &[String])>> {
        let neighbours = |id: usize| {
            if backward {
                &self.nodes[id].previous
            } else {
                &self.nodes[id].next
            }
        };
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = neighbours(from).clone();
        let mut accesses = Vec::new();
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id], true) {
                continue;
            }
            match &self.nodes[id].kind {
                Kind::BarrierAll => continue,
                Kind::Unplain | Kind::Unread => return None,
                Kind::Access(pipe, memories) => accesses.push((*pipe, memories.as_slice())),
                Kind::Nothing => {}
            }
            stack.extend(neighbours(id));
        }
        Some(accesses)
    }
}

/// The name of the tensor an argument is (`t`, `t[0..64]`), as written.
fn tensor_name(arg: &Expr) -> Option<String> {
    match &arg.kind {
        ExprKind::Name(path) => Some(path.text.clone()),
        ExprKind::Slice { base, .. } | ExprKind::Index { base, .. } => tensor_name(base),
        _ => None,
    }
}

/// Each tensor name a `let` of the statements binds, to the memory it is in: a buffer's
/// own name (`let b = TBuf<VECCALC>(...)`), the buffer a tensor is taken from
/// (`TBuf::Get(b)`, `TQue::AllocTensor(q)`, `TQue::DeQue(q)`), or another tensor's.
fn memories_bound<'s>(stmts: impl IntoIterator<Item = &'s Stmt>, out: &mut HashMap<String, String>) {
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::Let { pattern, value } => {
                let [name] = pattern.names() else { continue };
                let memory = match &value.kind {
                    ExprKind::Call(call) if call.callee.text == "TBuf" || call.callee.text == "TQue" => {
                        Some(name.name.clone())
                    }
                    ExprKind::Call(call) => call.args.first().and_then(|arg| tensor_name(&arg.value)),
                    _ => tensor_name(value),
                };
                if let Some(memory) = memory {
                    let memory = out.get(&memory).cloned().unwrap_or(memory);
                    out.insert(name.name.clone(), memory);
                }
            }
            StmtKind::If { then, otherwise, .. } => {
                memories_bound(&then.stmts, out);
                match otherwise {
                    Some(Else::Block(block)) => memories_bound(&block.stmts, out),
                    Some(Else::If(stmt)) => memories_bound([&**stmt], out),
                    None => {}
                }
            }
            StmtKind::For { body, .. } => memories_bound(&body.stmts, out),
            _ => {}
        }
    }
}

/// Whether two instructions on either side of the barrier need it: on two pipes that
/// nothing else orders, touching one memory.
fn conflict(
    (pipe_a, memories_a): (&str, &[String]),
    (pipe_b, memories_b): (&str, &[String]),
    scalar_auto_synced: bool,
) -> bool {
    let auto_synced = |a: &str, b: &str| a == "S" && ["V", "MTE2", "MTE3"].contains(&b);
    if pipe_a == pipe_b || (scalar_auto_synced && (auto_synced(pipe_a, pipe_b) || auto_synced(pipe_b, pipe_a))) {
        return false;
    }
    memories_a
        .iter()
        .any(|a| memories_b.iter().any(|b| a == b || a == ANY_MEMORY || b == ANY_MEMORY))
}

/// Whether the `PIPE_ALL` barrier starting at line `at` of the pipe program `converted`
/// orders no two instructions that need it (the module's doc comment).
pub(super) fn barrier_orders_nothing(converted: &str, lines: &[&str], at: usize) -> bool {
    separates_nothing(converted, lines, (at, None), at)
}

/// Whether the flag pair whose `SetFlag` starts at line `set` and `WaitFlag` at line
/// `wait` orders no two instructions that need it. It orders the instructions of its
/// source pipe `source` before the set with every instruction after the wait (the
/// waiting pipe's, and through that pipe's later syncs any other's): judged as a
/// barrier would be, on that source pipe's side only.
pub(super) fn pair_orders_nothing(converted: &str, lines: &[&str], (set, source): (usize, &str), wait: usize) -> bool {
    separates_nothing(converted, lines, (set, Some(source)), wait)
}

/// Whether no instruction reachable backward from the statement at line `before` (on
/// pipe `pipe` only, when given) conflicts with one reachable forward from the
/// statement at line `after`, up to `PIPE_ALL` barriers.
fn separates_nothing(converted: &str, lines: &[&str], (before, pipe): (usize, Option<&str>), after: usize) -> bool {
    let Some((flow, before)) = Flow::around(converted, lines, before) else {
        return false;
    };
    let Some(after) = flow.nodes.iter().position(|node| node.line == after) else {
        return false;
    };
    let (Some(before), Some(after)) = (
        flow.accesses_until_barrier(before, true),
        flow.accesses_until_barrier(after, false),
    ) else {
        return false;
    };
    !before
        .iter()
        .filter(|(on, _)| pipe.is_none_or(|pipe| pipe == *on))
        .any(|&a| after.iter().any(|&b| conflict(a, b, flow.scalar_auto_synced)))
}

/// Whether no statement whose first line holds `text` can run after the statement
/// starting at line `at` (in a later iteration of a loop around it too). `false` when
/// the flow is not read to the end.
pub(super) fn never_followed_by(converted: &str, lines: &[&str], at: usize, text: &str) -> bool {
    let Some((flow, from)) = Flow::around(converted, lines, at) else {
        return false;
    };
    let mut seen = vec![false; flow.nodes.len()];
    let mut stack = flow.nodes[from].next.clone();
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        let node = &flow.nodes[id];
        if node.kind == Kind::Unread || lines[node.line].contains(text) {
            return false;
        }
        stack.extend(&node.next);
    }
    true
}
