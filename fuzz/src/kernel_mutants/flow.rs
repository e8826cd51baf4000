//! The control flow of a pipe program's `aicore` block (`if` arms, loops and their next
//! iteration, `return`) and what each statement is to the pipes: work on a pipe and the
//! memories it touches, a flag, a queue operation, a barrier. The mutation harness walks
//! it to know a mutant equivalent (`order`: whether deleting a barrier or a flag pair
//! removes an order two instructions need; here: whether a statement can run after
//! another).

use std::collections::HashMap;

use syncguard_grammar::ast::{BinaryOp, Block, Call, Else, Expr, ExprKind, Ident, Stmt, StmtKind, UnaryOp};

use super::statement_pipe;

/// Memory a tensor whose buffer is not known may be.
pub(super) const ANY_MEMORY: &str = "*";

/// One tensor argument of an instruction.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) struct Touch {
    /// The buffer (or GM argument) it is in, however the tensor is named.
    pub memory: String,
    /// Where it starts, when that is sure: the buffer a `TBuf::Get` tensor is, or the
    /// tensor itself, and the start of its range as written (`b@0`). Two touches with
    /// one such place overlap whatever their lengths above zero.
    pub place: Option<String>,
    /// The instruction's first tensor, which Ascend C writes (`GetValue` writes none).
    pub write: bool,
    /// The tensor, by the name the `let` of its queue operation (or the global tensor)
    /// has, through other names bound to it: which of a queue's buffers it is in.
    pub tensor: Option<String>,
}

/// That a parameter of the program (a tiling field, a build type, a branch the reader
/// could not decide: constant for a kernel's run) equals a value, or does not.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) struct Fact {
    pub name: String,
    pub value: u64,
    pub equal: bool,
}

impl Fact {
    fn negated(self) -> Fact {
        Fact {
            equal: !self.equal,
            ..self
        }
    }

    /// Whether `self` can hold beside `facts`.
    pub fn agrees_with(&self, facts: &[Fact]) -> bool {
        facts.iter().all(|fact| {
            fact.name != self.name
                || match (fact.equal, self.equal) {
                    (true, true) => fact.value == self.value,
                    (true, false) | (false, true) => fact.value != self.value,
                    (false, false) => true,
                }
        })
    }
}

/// Adds what node `kind` says of a parameter to `facts` (the facts of a path); `false`
/// when it contradicts them: the path cannot go through it.
pub(super) fn take_fact(facts: &mut Vec<Fact>, kind: &Kind) -> bool {
    let Kind::Assume(fact) = kind else {
        return true;
    };
    if !fact.agrees_with(facts) {
        return false;
    }
    if !facts.contains(fact) {
        facts.push(fact.clone());
    }
    true
}

/// What a queue operation is.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum QueueOp {
    AllocTensor,
    EnQue,
    DeQue,
    FreeTensor,
}

/// What a statement of the pipe program is to the pipes.
#[derive(Clone, PartialEq, Debug)]
pub(super) enum Kind {
    /// Issues nothing that orders or touches: a `let`, an `if` or `for` head, a barrier
    /// of one pipe (which orders that pipe with itself, as it is anyway).
    Nothing,
    /// Work on a pipe and the tensors it touches.
    Access(&'static str, Vec<Touch>),
    /// `PipeBarrier<PIPE_ALL>` or `SyncAll`: waits for every pipe of the core.
    BarrierAll,
    /// `SetFlag<event>(id)`, with the event (`MTE2_V`) and the id as written.
    SetFlag(String, String),
    WaitFlag(String, String),
    /// A queue operation on a queue, with the tensor it binds or takes (by the name of
    /// its binding, as [`Touch::tensor`]).
    Queue(QueueOp, String, Option<String>),
    /// The start of an `if` arm whose condition says a parameter's value.
    Assume(Fact),
    /// An instruction whose pipes are not plain (a cube or cross-core instruction):
    /// nothing around it is judged.
    Unplain,
    /// A statement whose control flow is not followed (a `while`): nothing is judged.
    Unread,
}

pub(super) struct Node {
    pub line: usize,
    pub kind: Kind,
    pub next: Vec<usize>,
    pub previous: Vec<usize>,
}

/// A queue's pipes: the one that fills it (`EnQue` sets its flag) and the one that
/// takes from it (`DeQue` waits), and its depth.
#[derive(Clone, Copy)]
pub(super) struct QueuePipes {
    pub producer: &'static str,
    pub consumer: &'static str,
    pub depth: i64,
}

/// The control-flow graph of one `aicore` block's body. Node 0 is its entry, the last
/// node its end.
pub(super) struct Flow<'a> {
    lines: &'a [&'a str],
    converted: &'a str,
    /// The GM tensors: the block's unnamed arguments (`blocks: 8` and the like are named).
    gm: Vec<String>,
    /// A vector kernel (`type: AIV_ONLY`, or no type) with the automatic sync on (no
    /// `auto_sync: false`): the compiler orders the scalar pipe with V, MTE2 and MTE3.
    pub scalar_auto_synced: bool,
    bindings: Bindings,
    /// The program's parameters: the names an arm's condition can say a value of.
    params: Vec<String>,
    line_starts: Vec<usize>,
    pub nodes: Vec<Node>,
}

/// What the block's `let`s bind: each tensor's memory and place, each queue's pipes.
#[derive(Default)]
struct Bindings {
    memory_of: HashMap<String, String>,
    place_of: HashMap<String, String>,
    queues: HashMap<String, QueuePipes>,
}

impl<'a> Flow<'a> {
    /// The flow of the `aicore` block holding line `at` of the pipe program `converted`
    /// (`lines` its lines), and the node of the statement starting there.
    pub(super) fn around(converted: &'a str, lines: &'a [&'a str], at: usize) -> Option<(Self, usize)> {
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
        let mut bindings = Bindings::default();
        bindings.collect(&body.stmts, converted);
        let mut flow = Flow {
            lines,
            converted,
            gm: args
                .iter()
                .filter(|arg| arg.name.is_none())
                .map(|arg| converted[arg.value.span.clone()].to_string())
                .collect(),
            scalar_auto_synced: named("type").is_none_or(|kind| kind == "AIV_ONLY")
                && named("auto_sync") != Some("false"),
            bindings,
            params: parsed
                .file
                .stmts
                .iter()
                .filter_map(|stmt| match &stmt.kind {
                    StmtKind::Param { name, .. } => Some(name.name.clone()),
                    _ => None,
                })
                .collect(),
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
                let kind = self.call_kind(line, call, None);
                vec![self.node(line, kind, &from)]
            }
            StmtKind::Let { value, pattern } => vec![self.binding(line, pattern.names(), value, &from)],
            StmtKind::LetMut { name, value } | StmtKind::Assign { name, value } => {
                vec![self.binding(line, std::slice::from_ref(name), value, &from)]
            }
            StmtKind::If { cond, then, otherwise } => {
                let head = self.node(line, Kind::Nothing, &from);
                // Each arm starts with what its condition says of a parameter, when it
                // is that simple: a path through an arm that contradicts an earlier one
                // (a build type's arm after another's) is no path.
                let fact = self.fact(cond);
                let arm_start = |flow: &mut Self, fact: Option<Fact>| match fact {
                    Some(fact) => flow.node(line, Kind::Assume(fact), &[head]),
                    None => head,
                };
                let then_start = arm_start(self, fact.clone());
                let else_start = arm_start(self, fact.map(Fact::negated));
                let mut out = self.block(then, vec![then_start], returns);
                out.extend(match otherwise {
                    None => vec![else_start],
                    Some(Else::Block(block)) => self.block(block, vec![else_start], returns),
                    Some(Else::If(stmt)) => self.stmt(stmt, vec![else_start], returns),
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

    /// What a condition says of a parameter: `p == 3`, `p != 0`, `!p`, `p`.
    fn fact(&self, cond: &Expr) -> Option<Fact> {
        let param = |expr: &Expr| match &expr.kind {
            ExprKind::Name(path) if self.params.contains(&path.text) => Some(path.text.clone()),
            _ => None,
        };
        let int = |expr: &Expr| match &expr.kind {
            ExprKind::Int(lit) => Some(lit.value),
            _ => None,
        };
        let fact = |name, value, equal| Some(Fact { name, value, equal });
        match &cond.kind {
            ExprKind::Binary(op @ (BinaryOp::Eq | BinaryOp::Ne), left, right) => {
                let (name, value) = param(left).zip(int(right)).or_else(|| param(right).zip(int(left)))?;
                fact(name, value, *op == BinaryOp::Eq)
            }
            ExprKind::Unary(UnaryOp::Not, operand) => fact(param(operand)?, 0, true),
            ExprKind::Name(_) => fact(param(cond)?, 0, false),
            _ => None,
        }
    }

    /// The node of a `let` or an assignment: a queue operation binding its one name, or
    /// nothing that touches memory.
    fn binding(&mut self, line: usize, names: &[Ident], value: &Expr, from: &[usize]) -> usize {
        let kind = match (&value.kind, names) {
            (ExprKind::Call(call), [name]) if call.callee.text.starts_with("TQue::") => {
                self.call_kind(line, call, Some(&name.name))
            }
            _ => self.access_kind(line, std::iter::empty()),
        };
        self.node(line, kind, from)
    }

    /// What a call statement (or a `let` of a queue operation, binding `bound`) is.
    fn call_kind(&self, line: usize, call: &Call, bound: Option<&str>) -> Kind {
        let text = |expr: &Expr| self.converted[expr.span.clone()].to_string();
        let first_arg = || call.args.first().and_then(|arg| tensor_name(&arg.value));
        let callee = call.callee.text.rsplit("::").next().unwrap_or("");
        let flag = || {
            let event = call.generics.as_ref()?.first().map(text)?;
            let id = call.args.first().map(|arg| text(&arg.value))?;
            Some((event, id))
        };
        let queue_op = match callee {
            "AllocTensor" => Some(QueueOp::AllocTensor),
            "EnQue" => Some(QueueOp::EnQue),
            "DeQue" => Some(QueueOp::DeQue),
            "FreeTensor" => Some(QueueOp::FreeTensor),
            _ => None,
        };
        match callee {
            "SetFlag" | "WaitFlag" => match flag() {
                Some((event, id)) if callee == "SetFlag" => Kind::SetFlag(event, id),
                Some((event, id)) => Kind::WaitFlag(event, id),
                None => Kind::Unplain,
            },
            "SyncAll" => Kind::BarrierAll,
            _ if call.callee.text.starts_with("TQue::") => match (queue_op, first_arg()) {
                (Some(op), Some(queue)) => {
                    let tensor = match op {
                        QueueOp::AllocTensor | QueueOp::DeQue => bound.map(str::to_string),
                        QueueOp::EnQue | QueueOp::FreeTensor => call
                            .args
                            .get(1)
                            .and_then(|arg| tensor_name(&arg.value))
                            .map(|name| self.tensor_of(&name)),
                    };
                    Kind::Queue(op, queue, tensor)
                }
                _ => Kind::Nothing,
            },
            _ => self.access_kind(line, call.args.iter().map(|arg| &arg.value)),
        }
    }

    /// What a statement is by its first line, `args` its tensors: work on a pipe (with
    /// what it touches), a barrier, or nothing that touches memory.
    fn access_kind<'e>(&self, line: usize, args: impl Iterator<Item = &'e Expr>) -> Kind {
        if self.lines[line].contains("PipeBarrier<PIPE_ALL>") {
            return Kind::BarrierAll;
        }
        if self.lines[line].contains("PipeBarrier<PIPE_") {
            return Kind::Nothing;
        }
        match statement_pipe(self.lines, line, &self.gm) {
            Some(None) => Kind::Nothing,
            Some(Some(pipe)) => {
                let reads_only = pipe == "S" && self.lines[line].contains("GetValue(");
                let touches = args
                    .filter_map(|arg| self.touch(arg))
                    .enumerate()
                    .map(|(k, mut touch)| {
                        touch.write = k == 0 && !reads_only;
                        touch
                    })
                    .collect();
                Kind::Access(pipe, touches)
            }
            None => Kind::Unplain,
        }
    }

    /// What a tensor argument touches; `None` for an argument that is no tensor.
    fn touch(&self, arg: &Expr) -> Option<Touch> {
        let name = tensor_name(arg)?;
        let memory = if self.gm.contains(&name) {
            name.clone()
        } else {
            self.bindings
                .memory_of
                .get(&name)
                .cloned()
                .unwrap_or_else(|| ANY_MEMORY.to_string())
        };
        let start = match &arg.kind {
            ExprKind::Name(_) => Some("0".to_string()),
            ExprKind::Slice { range, .. } => Some(self.converted[range.start.span.clone()].to_string()),
            _ => None,
        };
        let base = if self.gm.contains(&name) {
            Some(&name)
        } else {
            self.bindings.place_of.get(&name)
        };
        let place = start.zip(base).map(|(start, base)| format!("{base}@{start}"));
        Some(Touch {
            memory,
            place,
            write: false,
            tensor: Some(self.tensor_of(&name)),
        })
    }

    /// The memory (buffer, queue or global tensor) a tensor name is in.
    pub fn memory_of(&self, name: &str) -> Option<&str> {
        self.bindings.memory_of.get(name).map(String::as_str)
    }

    /// Whether `tensor` is bound by an operation of a queue whose pipes are known.
    pub fn is_queue_tensor(&self, tensor: &str) -> bool {
        self.memory_of(tensor)
            .is_some_and(|memory| self.bindings.queues.contains_key(memory))
            && self.bindings.place_of.get(tensor).is_some_and(|place| place == tensor)
    }

    /// The tensor a name stands for: the name of the binding it comes from.
    fn tensor_of(&self, name: &str) -> String {
        self.bindings
            .place_of
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    /// Per node: the facts every path from the kernel's start to it has taken (those of
    /// the arms around it), its own included.
    pub(super) fn facts_holding(&self) -> Vec<Vec<Fact>> {
        // The facts on the way into each node; `None`: not reached yet.
        let mut into: Vec<Option<Vec<Fact>>> = vec![None; self.nodes.len()];
        into[0] = Some(Vec::new());
        let mut work = vec![0usize];
        while let Some(id) = work.pop() {
            let mut facts = into[id].clone().unwrap_or_default();
            take_fact(&mut facts, &self.nodes[id].kind);
            for &next in &self.nodes[id].next {
                let joined = match &into[next] {
                    None => facts.clone(),
                    Some(old) => old.iter().filter(|fact| facts.contains(fact)).cloned().collect(),
                };
                if into[next].as_ref() != Some(&joined) {
                    into[next] = Some(joined);
                    work.push(next);
                }
            }
        }
        into.into_iter()
            .zip(&self.nodes)
            .map(|(facts, node)| {
                let mut facts = facts.unwrap_or_default();
                take_fact(&mut facts, &node.kind);
                facts
            })
            .collect()
    }

    /// A queue's pipes, when its position is one whose pipes are known.
    pub(super) fn queue(&self, name: &str) -> Option<QueuePipes> {
        self.bindings.queues.get(name).copied()
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

impl Bindings {
    /// Each tensor name a `let` of the statements binds, to the memory it is in: a
    /// buffer's own name (`let b = TBuf<VECCALC>(...)`), the buffer a tensor is taken
    /// from (`TBuf::Get(b)`, `TQue::AllocTensor(q)`, `TQue::DeQue(q)`), or another
    /// tensor's; where it starts (a `TBuf::Get` tensor at its buffer's start, a queue's
    /// tensor at its own slot, a name for another tensor where that one starts); each
    /// queue `TQue<VECIN>(depth, len)` with its pipes.
    fn collect<'s>(&mut self, stmts: impl IntoIterator<Item = &'s Stmt>, converted: &str) {
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Let { pattern, value } => {
                    let [name] = pattern.names() else { continue };
                    self.bind(&name.name, value, converted);
                }
                StmtKind::If { then, otherwise, .. } => {
                    self.collect(&then.stmts, converted);
                    match otherwise {
                        Some(Else::Block(block)) => self.collect(&block.stmts, converted),
                        Some(Else::If(stmt)) => self.collect([&**stmt], converted),
                        None => {}
                    }
                }
                StmtKind::For { body, .. } => self.collect(&body.stmts, converted),
                _ => {}
            }
        }
    }

    fn bind(&mut self, name: &str, value: &Expr, converted: &str) {
        let (memory, place) = match &value.kind {
            ExprKind::Call(call) if call.callee.text == "TBuf" || call.callee.text == "TQue" => {
                if call.callee.text == "TQue"
                    && let Some(pipes) = queue_pipes(call, converted)
                {
                    self.queues.insert(name.to_string(), pipes);
                }
                (Some(name.to_string()), Some(name.to_string()))
            }
            ExprKind::Call(call) => {
                let from = call.args.first().and_then(|arg| tensor_name(&arg.value));
                let place = if call.callee.text == "TBuf::Get" {
                    from.clone()
                } else {
                    Some(name.to_string())
                };
                (from, place)
            }
            ExprKind::Name(path) => (
                Some(path.text.clone()),
                Some(self.place_of.get(&path.text).cloned().unwrap_or(path.text.clone())),
            ),
            _ => (tensor_name(value), None),
        };
        if let Some(memory) = memory {
            let memory = self.memory_of.get(&memory).cloned().unwrap_or(memory);
            self.memory_of.insert(name.to_string(), memory);
        }
        match place {
            Some(place) => self.place_of.insert(name.to_string(), place),
            None => self.place_of.remove(name),
        };
    }
}

/// The pipes of a `TQue<POS>(depth, len)`: a vector core's input queue is filled by
/// MTE2 and taken by V, its output queue filled by V and taken by MTE3 (asc-devkit,
/// "TQue": `EnQue` sets the producer's flag, `DeQue` waits for it on the consumer's
/// pipe; `FreeTensor` and `AllocTensor` the other way). Other positions: `None`.
fn queue_pipes(call: &Call, converted: &str) -> Option<QueuePipes> {
    let position = call.generics.as_ref()?.first()?;
    let (producer, consumer) = match &converted[position.span.clone()] {
        "VECIN" => ("MTE2", "V"),
        "VECOUT" => ("V", "MTE3"),
        _ => return None,
    };
    let depth = converted[call.args.first()?.value.span.clone()].trim().parse().ok()?;
    Some(QueuePipes {
        producer,
        consumer,
        depth,
    })
}

/// Whether no statement whose first line holds `text` can run after the statement
/// starting at line `at` (in a later iteration of a loop around it too). `false` when
/// the flow is not read to the end.
pub(super) fn never_followed_by(converted: &str, lines: &[&str], at: usize, text: &str) -> bool {
    let Some((flow, from)) = Flow::around(converted, lines, at) else {
        return false;
    };
    let mut seen = std::collections::HashSet::new();
    let holding = flow.facts_holding().swap_remove(from);
    let mut stack: Vec<(usize, Vec<Fact>)> = flow.nodes[from].next.iter().map(|&id| (id, holding.clone())).collect();
    while let Some((id, mut facts)) = stack.pop() {
        let node = &flow.nodes[id];
        if !take_fact(&mut facts, &node.kind) {
            continue;
        }
        if !seen.insert((id, facts.clone())) {
            continue;
        }
        if node.kind == Kind::Unread || lines[node.line].contains(text) {
            return false;
        }
        stack.extend(node.next.iter().map(|&next| (next, facts.clone())));
    }
    true
}
