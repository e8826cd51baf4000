//! `syncguard convert`: a trace as the equivalent `.sync` program, printed by the
//! `.sync` pretty-printer. The program is built from the same Program the checker
//! analyzes (each call from its resolved arguments), so checking the converted file
//! reports what checking the trace reports.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::PathBuf;

use syncguard_grammar::ast;

use super::lower::{ReadTrace, RecordedCall};
use syncguard_model::api::{self, Api, ArgKind, Creates, FLAG_CONSTANTS};
use syncguard_model::calls::ArgValue;
use syncguard_model::diagnostic::{Diagnostic, UsedBeforeCreation};
use syncguard_model::model::{self, BinOp, MemRange, MemorySpace, ObjId, ObjectKind, OpKind, Program, RankCount, Stmt};
use syncguard_model::source::Sources;

/// A converted trace, and what reading it reported (malformed lines are left out).
pub struct Converted {
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    /// Events used before the line that creates them: the analyzer's SG101.
    pub used_before_creation: Vec<UsedBeforeCreation>,
    /// A host thread uses an object its rank creates only after the thread started, and
    /// its `let` could not be moved above the thread (another object has its name):
    /// `.sync` names are lexically scoped, so the program does not read as the trace.
    pub inexpressible: bool,
}

/// Convert the trace read from `reader` (shown as `display`).
pub fn convert_trace(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
) -> Converted {
    let lowerer = super::read_trace(sources, display, reader, reread, true, false);
    let ReadTrace {
        program,
        mut diagnostics,
        used_before_creation,
        calls,
        ..
    } = lowerer.into_read(None, None);
    Diagnostic::sort(&mut diagnostics);
    let printer = Printer {
        program: &program,
        calls: calls.unwrap_or_default(),
        reused_names: reused_names(&program),
        inexpressible: Cell::new(false),
    };
    let file = ast::File { stmts: printer.file() };
    let inexpressible = printer.inexpressible.get();
    let parsed = syncguard_grammar::Parsed {
        file,
        errors: Vec::new(),
        comments: Vec::new(),
    };
    Converted {
        text: syncguard_grammar::format("", &parsed),
        diagnostics,
        used_before_creation,
        inexpressible,
    }
}

struct Printer<'p> {
    program: &'p Program,
    calls: HashMap<usize, RecordedCall>,
    /// Names that more than one object has (a handle created again).
    reused_names: HashSet<&'p str>,
    inexpressible: Cell<bool>,
}

impl Printer<'_> {
    fn file(&self) -> Vec<ast::Stmt> {
        let settings = &self.program.settings;
        let mut stmts = vec![setting("target", name(settings.target.name()))];
        if settings.hccl_buffer_size != model::Settings::default().hccl_buffer_size {
            stmts.push(setting("hccl_buffer_size", int(settings.hccl_buffer_size as i64)));
        }
        if settings.default_stream == model::DefaultStream::PerThread {
            stmts.push(setting("default_stream", name("per_thread")));
        }
        if settings.cann == model::CannPolicy::Legacy {
            stmts.push(setting("cann", name("legacy")));
        }
        if let RankCount::Fixed(ranks) = settings.ranks
            && ranks > 1
        {
            stmts.push(stmt(ast::StmtKind::Ranks(ast::RankCount::Fixed(int(ranks as i64)))));
        }
        stmts.extend(self.block(&self.program.threads[Program::MAIN_THREAD.index()].body));
        stmts.extend(self.program.ge_ops.iter().map(|op| self.ge_op(op)));
        stmts
    }

    fn block(&self, block: &[Stmt]) -> Vec<ast::Stmt> {
        let mut out = Vec::new();
        let mut last_line = None;
        for item in self.creations_before_threads(block).into_iter().map(|i| &block[i]) {
            match item {
                Stmt::If { cond, then, .. } => out.push(stmt(ast::StmtKind::If {
                    cond: expr(cond),
                    then: ast::Block {
                        stmts: self.block(then),
                        span: 0..0,
                    },
                    otherwise: None,
                })),
                Stmt::Op(op) => {
                    if let OpKind::Spawn(thread) = op.kind {
                        out.push(self.thread(thread));
                        continue;
                    }
                    if let Some(created) = self.implicit_creation(op) {
                        out.extend(created);
                        continue;
                    }
                    // One line can create several objects (channels, threads): print it once.
                    let line = op.span.range.start;
                    if last_line != Some(line) || !self.calls.contains_key(&line) {
                        out.extend(self.op(op));
                    }
                    last_line = Some(line);
                }
                // A trace lowers to calls and rank branches only.
                Stmt::For { .. }
                | Stmt::While { .. }
                | Stmt::Assign { .. }
                | Stmt::QueryBranch { .. }
                | Stmt::Return(_) => {}
            }
        }
        out
    }

    /// The order to print `block` in: each thread's spawn comes after the creation of
    /// every object the thread uses. A trace's host threads create their objects on the
    /// rank's main thread, in the order of the trace, so a thread can use an object
    /// created after it started, which `.sync` scoping cannot say; creating an object
    /// orders nothing, so its `let` (and those of the objects it is made from) moves
    /// up to just before the thread.
    fn creations_before_threads(&self, block: &[Stmt]) -> Vec<usize> {
        let mut order = Vec::with_capacity(block.len());
        let mut placed = vec![false; block.len()];
        for (index, stmt) in block.iter().enumerate() {
            if placed[index] {
                continue;
            }
            if let Stmt::Op(op) = stmt
                && let OpKind::Spawn(thread) = op.kind
            {
                for hoisted in self.creations_needed_later(block, index, thread) {
                    if !placed[hoisted] {
                        placed[hoisted] = true;
                        order.push(hoisted);
                    }
                }
            }
            placed[index] = true;
            order.push(index);
        }
        order
    }

    /// The creations after `spawn` in `block` (in order) that the thread's calls need,
    /// directly or as what a needed object is made from.
    fn creations_needed_later(&self, block: &[Stmt], spawn: usize, thread: model::ThreadId) -> Vec<usize> {
        let mut needed = HashSet::new();
        self.objects_used(&self.program.threads[thread.index()].body, &mut needed);
        let mut hoisted = std::collections::BTreeSet::new();
        // Later creations can only need earlier ones, so one backward pass closes the set.
        for index in (spawn + 1..block.len()).rev() {
            let Stmt::Op(op) = &block[index] else { continue };
            let OpKind::Create(id) = op.kind else { continue };
            if !needed.contains(&id) {
                continue;
            }
            if self.name_is_reused(id) {
                self.inexpressible.set(true);
                continue;
            }
            hoisted.insert(index);
            if let Some(call) = self.calls.get(&op.span.range.start) {
                needed.extend(call_objects(call));
            }
        }
        // A line that creates several objects (channels) moves whole.
        let lines: HashSet<usize> = hoisted.iter().map(|&i| stmt_line(&block[i])).collect();
        (spawn + 1..block.len())
            .filter(|&i| matches!(&block[i], Stmt::Op(op) if matches!(op.kind, OpKind::Create(_))))
            .filter(|&i| lines.contains(&stmt_line(&block[i])))
            .collect()
    }

    /// Every object the calls of `block` name, nested threads included.
    fn objects_used(&self, block: &[Stmt], out: &mut HashSet<ObjId>) {
        for stmt in block {
            match stmt {
                Stmt::Op(op) => {
                    if let OpKind::Spawn(thread) = op.kind {
                        self.objects_used(&self.program.threads[thread.index()].body, out);
                    } else if let Some(call) = self.calls.get(&op.span.range.start) {
                        out.extend(call_objects(call));
                    }
                }
                Stmt::If { then, otherwise, .. } => {
                    self.objects_used(then, out);
                    self.objects_used(otherwise, out);
                }
                Stmt::For { body, .. } | Stmt::While { body, .. } => self.objects_used(body, out),
                Stmt::QueryBranch { done, pending, .. } => {
                    self.objects_used(done, out);
                    self.objects_used(pending, out);
                }
                Stmt::Return(_) | Stmt::Assign { .. } => {}
            }
        }
    }

    /// Another object has `id`'s name (a handle created again): moving its `let` would
    /// change which object the name means in between.
    fn name_is_reused(&self, id: ObjId) -> bool {
        self.reused_names.contains(self.program.object(id).name.as_str())
    }

    fn thread(&self, id: model::ThreadId) -> ast::Stmt {
        let thread = &self.program.threads[id.index()];
        let ident: String = thread
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        stmt(ast::StmtKind::Thread {
            name: ident_of(&ident),
            body: ast::Block {
                stmts: self.block(&thread.body),
                span: 0..0,
            },
        })
    }

    fn op(&self, op: &model::Op) -> Option<ast::Stmt> {
        let call = self.calls.get(&op.span.range.start)?;
        if let Some(synchronize) = synchronize_for_query(op, call) {
            // A traced query that saw the work done orders like this synchronize; in
            // `.sync`, where the code's use of the result is not known, a query orders
            // nothing.
            let args = self.arguments(call, |name| name != "status");
            return Some(stmt(ast::StmtKind::Call(make_call(synchronize, args))));
        }
        if let (OpKind::EventWaitsSynchronize { .. }, Some(api::QueryCompletion::Status { name: done, .. })) =
            (&op.kind, call.api.query)
        {
            // No synchronize stands for it: the busy-wait on the query says the same.
            let query = make_call(call.api.name, self.arguments(call, |name| name != "status"));
            let cond = plain(ast::ExprKind::Binary(
                ast::BinaryOp::Ne,
                Box::new(plain(ast::ExprKind::Call(Box::new(query)))),
                Box::new(name(done)),
            ));
            let body = ast::Block {
                stmts: Vec::new(),
                span: 0..0,
            };
            return Some(stmt(ast::StmtKind::While { cond, body }));
        }
        Some(self.recorded(call))
    }

    /// The `let` of an object in use before the trace began (created at the start of
    /// its rank, with no creating line: its span is the line that first used it, whose
    /// call is printed in its own place), or `None` for any other op.
    fn implicit_creation(&self, op: &model::Op) -> Option<Option<ast::Stmt>> {
        let OpKind::Create(id) = op.kind else { return None };
        let created_here = self.calls.get(&op.span.range.start);
        if created_here.is_some_and(|call| call.created.contains(&id)) {
            return None;
        }
        let Some(api) = api::lookup(op.api) else {
            return Some(None);
        };
        let object_name = |id: ObjId| name(&self.program.object(id).name);
        let args = match &self.program.object(id).kind {
            ObjectKind::Buffer(info) => match info.space {
                MemorySpace::Before => Vec::new(),
                MemorySpace::BeforePeer(channel) => vec![object_name(channel)],
                _ => vec![expr(&info.size)],
            },
            ObjectKind::HcclThread { comm, .. } => vec![object_name(*comm)],
            ObjectKind::Channel(info) => std::iter::once(object_name(info.comm))
                .chain(info.remote_rank.as_ref().map(expr))
                .collect(),
            _ => Vec::new(),
        };
        Some(Some(let_call(api, &[id], args, self.program)))
    }

    fn recorded(&self, call: &RecordedCall) -> ast::Stmt {
        // A query's `status` is what the run saw, not an argument the code passes.
        let args = self.arguments(call, |name| name != "status");
        if call.created.is_empty() {
            return stmt(ast::StmtKind::Call(make_call(call.api.name, args)));
        }
        let names = call
            .created
            .iter()
            .map(|id| ident_of(&self.program.object(*id).name))
            .collect();
        let pattern = match call.api.creates {
            Creates::Channels | Creates::HcclThreads => ast::Pattern::List(names, 0..0),
            _ => ast::Pattern::Name(names.into_iter().next().unwrap_or_else(|| ident_of("_"))),
        };
        stmt(ast::StmtKind::Let {
            pattern,
            value: call_expr(make_call(call.api.name, args)),
        })
    }

    /// The call's arguments as written: positional until one is left out, named after.
    fn arguments(&self, call: &RecordedCall, keep: impl Fn(&str) -> bool) -> Vec<ast::Arg> {
        let mut args = Vec::new();
        let mut gap = false;
        for (index, param) in call.api.params.iter().enumerate().filter(|(_, p)| keep(p.name)) {
            let value = match call.args.get(index) {
                Some(value) => self.value(call.api, param.kind, value),
                // A trace has no gen-task `context` to show; `.sync` spells it out.
                None if param.kind == ArgKind::GenTaskContext => name("context"),
                None => {
                    gap = true;
                    continue;
                }
            };
            let named = param.named_only || gap;
            args.push(ast::Arg {
                name: named.then(|| ident_of(param.name)),
                value,
            });
        }
        args
    }

    /// One task of a gen-task list: its call as traced, with the stream it ended on
    /// (a later `SetStreamId` may have changed it).
    fn ge_task(&self, task: &model::GeTask) -> ast::Stmt {
        let mut args = match self.calls.get(&task.span.range.start) {
            Some(call) => self.arguments(call, |name| name != "stream_id"),
            None => vec![ast::Arg {
                name: None,
                value: name("context"),
            }],
        };
        args.push(ast::Arg {
            name: Some(ident_of("stream_id")),
            value: int(task.stream_id as i64),
        });
        stmt(ast::StmtKind::Call(make_call(task.api, args)))
    }

    fn ge_op(&self, op: &model::GeOp) -> ast::Stmt {
        stmt(ast::StmtKind::GeOp {
            name: ident_of(&op.name),
            attrs: op.attrs.iter().map(|(attr, _)| ident_of(attr)).collect(),
            body: ast::Block {
                stmts: op.tasks.iter().map(|task| self.ge_task(task)).collect(),
                span: 0..0,
            },
        })
    }

    fn value(&self, api: &Api, kind: ArgKind, value: &ArgValue) -> ast::Expr {
        match value {
            ArgValue::Object(id) if let Some(implicit) = self.program.implicit_stream_name(*id) => {
                implicit.map_or(plain(ast::ExprKind::Null), name)
            }
            ArgValue::Object(id) => name(&self.program.object(*id).name),
            ArgValue::Objects(ids) => plain(ast::ExprKind::List(
                ids.iter().map(|id| name(&self.program.object(*id).name)).collect(),
            )),
            ArgValue::Int(value) => expr(value),
            ArgValue::Address(address) => self.address(address),
            ArgValue::Ranges(ranges) => plain(ast::ExprKind::List(ranges.iter().map(|r| self.range(r)).collect())),
            ArgValue::Timeout(timeout) => expr(&timeout.value),
            ArgValue::Flags(bits) => flags(api, *bits),
            ArgValue::Enum(constant) => name(constant),
            ArgValue::Str(text, _) => plain(ast::ExprKind::Str(text.clone())),
            ArgValue::Strs(items) => plain(ast::ExprKind::List(
                items.iter().map(|s| plain(ast::ExprKind::Str(s.clone()))).collect(),
            )),
            // A trace lists its descriptors one by one.
            ArgValue::ChannelDescArray(..) => plain(ast::ExprKind::Error),
            ArgValue::ChannelDescs(descs) => plain(ast::ExprKind::List(
                descs
                    .iter()
                    .map(|desc| {
                        plain(ast::ExprKind::Struct(vec![
                            field("remoteRank", expr(&desc.remote_rank)),
                            field("channelProtocol", name(&desc.protocol)),
                            field("notifyNum", expr(&desc.notify_num)),
                        ]))
                    })
                    .collect(),
            )),
            ArgValue::Pitched(pitched) => self.pitched(pitched),
            ArgValue::Extent(extent) => triple(["width", "height", "depth"], extent),
            ArgValue::Copy3D(copy) => plain(ast::ExprKind::Struct(vec![
                field("srcPtr", self.pitched(&copy.src)),
                field("srcPos", triple(["x", "y", "z"], &copy.src_pos)),
                field("dstPtr", self.pitched(&copy.dst)),
                field("dstPos", triple(["x", "y", "z"], &copy.dst_pos)),
                field("extent", triple(["width", "height", "depth"], &copy.extent)),
                field("kind", name(copy.kind)),
            ])),
            ArgValue::CoreMem(_) | ArgValue::Opaque if kind == ArgKind::GenTaskContext => name("context"),
            ArgValue::CoreMem(_) | ArgValue::Opaque => plain(ast::ExprKind::Str(String::new())),
        }
    }

    fn address(&self, address: &syncguard_model::calls::Address) -> ast::Expr {
        let base = name(&self.program.object(address.buffer).name);
        let offset = expr(&address.offset);
        match &address.len {
            Some(len) => slice(base, offset, expr(len)),
            None if address.offset == model::Expr::Int(0) => base,
            None => binary(ast::BinaryOp::Add, base, offset),
        }
    }

    fn pitched(&self, pitched: &syncguard_model::calls::Pitched) -> ast::Expr {
        plain(ast::ExprKind::Struct(vec![
            field("ptr", self.address(&pitched.address)),
            field("pitch", expr(&pitched.pitch)),
            field("ysize", expr(&pitched.ysize)),
        ]))
    }

    fn range(&self, range: &MemRange) -> ast::Expr {
        slice(
            name(&self.program.object(range.buffer).name),
            expr(&range.offset),
            expr(&range.len),
        )
    }
}

/// `let name = api(args);` for an object that has no recorded call.
fn let_call(api: &Api, created: &[ObjId], args: Vec<ast::Expr>, program: &Program) -> ast::Stmt {
    let args = args.into_iter().map(|value| ast::Arg { name: None, value }).collect();
    stmt(ast::StmtKind::Let {
        pattern: ast::Pattern::Name(ident_of(&program.object(created[0]).name)),
        value: call_expr(make_call(api.name, args)),
    })
}

/// Flag bits by name where the API's family of constants spells them exactly.
fn flags(api: &Api, bits: u32) -> ast::Expr {
    // The constants of the family this API's flags come from (acl_rt.h, cuda_runtime_api.h).
    let (prefix, excluded): (&str, &[&str]) = match api.name {
        n if n.contains("HostAlloc") => ("cudaHostAlloc", &[]),
        n if n.starts_with("cuda") && n.contains("EventRecord") => ("cudaEventRecord", &[]),
        n if n.starts_with("cuda") && n.contains("Event") => ("cudaEvent", &["cudaEventRecord"]),
        n if n.starts_with("cuda") => ("cudaStream", &[]),
        n if n.contains("RecordEvent") => ("ACL_EVENT_RECORD_", &[]),
        n if n.contains("WaitEvent") => ("ACL_EVENT_WAIT_", &[]),
        n if n.contains("Notify") => ("ACL_NOTIFY_", &[]),
        n if n.contains("Stream") => ("ACL_STREAM_", &[]),
        _ => ("ACL_EVENT_", &["ACL_EVENT_RECORD_", "ACL_EVENT_WAIT_"]),
    };
    let family: Vec<(&str, u32)> = FLAG_CONSTANTS
        .iter()
        .filter(|(n, v)| n.starts_with(prefix) && !excluded.iter().any(|x| n.starts_with(x)) && *v != 0)
        .copied()
        .collect();
    let names: Vec<&str> = family.iter().filter(|(_, v)| bits & v == *v).map(|(n, _)| *n).collect();
    let covered = family
        .iter()
        .filter(|(_, v)| bits & v == *v)
        .fold(0, |acc, (_, v)| acc | v);
    if bits == 0 || covered != bits {
        return int(bits as i64);
    }
    names
        .into_iter()
        .map(name)
        .reduce(|a, b| binary(ast::BinaryOp::BitOr, a, b))
        .unwrap_or_else(|| int(0))
}

fn expr(value: &model::Expr) -> ast::Expr {
    match value {
        model::Expr::Int(v) if *v < 0 => plain(ast::ExprKind::Unary(ast::UnaryOp::Neg, Box::new(int(-v)))),
        model::Expr::Int(v) => int(*v),
        model::Expr::Rank => name("rank"),
        model::Expr::Binary(op, a, b) => binary(binary_op(*op), expr(a), expr(b)),
        model::Expr::Cond(parts) => {
            let [cond, then, otherwise] = parts.each_ref().map(|e| Box::new(expr(e)));
            plain(ast::ExprKind::Cond { cond, then, otherwise })
        }
        other => int(other.as_const().unwrap_or(0)),
    }
}

fn binary_op(op: BinOp) -> ast::BinaryOp {
    match op {
        BinOp::Add => ast::BinaryOp::Add,
        BinOp::Sub => ast::BinaryOp::Sub,
        BinOp::Mul => ast::BinaryOp::Mul,
        BinOp::Div => ast::BinaryOp::Div,
        BinOp::Rem => ast::BinaryOp::Rem,
        BinOp::BitAnd => ast::BinaryOp::BitAnd,
        BinOp::BitXor => ast::BinaryOp::BitXor,
        BinOp::BitOr => ast::BinaryOp::BitOr,
        BinOp::Shl => ast::BinaryOp::Shl,
        BinOp::Shr => ast::BinaryOp::Shr,
        BinOp::Eq => ast::BinaryOp::Eq,
        BinOp::Ne => ast::BinaryOp::Ne,
        BinOp::Lt => ast::BinaryOp::Lt,
        BinOp::Le => ast::BinaryOp::Le,
        BinOp::Gt => ast::BinaryOp::Gt,
        BinOp::Ge => ast::BinaryOp::Ge,
        BinOp::And => ast::BinaryOp::And,
        BinOp::Or => ast::BinaryOp::Or,
    }
}

fn slice(base: ast::Expr, offset: ast::Expr, len: ast::Expr) -> ast::Expr {
    let end = match (&offset.kind, &len.kind) {
        (ast::ExprKind::Int(a), ast::ExprKind::Int(b)) => int(a.value.saturating_add(b.value) as i64),
        _ => binary(ast::BinaryOp::Add, offset.clone(), len),
    };
    plain(ast::ExprKind::Slice {
        base: Box::new(base),
        range: ast::RangeExpr {
            start: Box::new(offset),
            end: Some(Box::new(end)),
            inclusive: false,
            span: 0..0,
        },
    })
}

fn setting(key: &str, value: ast::Expr) -> ast::Stmt {
    stmt(ast::StmtKind::Setting {
        key: ident_of(key),
        value,
    })
}

/// `{ x: .., y: .., z: .. }` and the like.
fn triple(names: [&str; 3], values: &[model::Expr; 3]) -> ast::Expr {
    plain(ast::ExprKind::Struct(
        names
            .iter()
            .zip(values)
            .map(|(key, value)| field(key, expr(value)))
            .collect(),
    ))
}

fn field(key: &str, value: ast::Expr) -> ast::Field {
    ast::Field {
        name: ident_of(key),
        value,
    }
}

fn make_call(callee: &str, args: Vec<ast::Arg>) -> ast::Call {
    ast::Call {
        callee: ast::Path {
            text: callee.to_string(),
            span: 0..0,
        },
        generics: None,
        args,
        span: 0..0,
    }
}

fn call_expr(call: ast::Call) -> ast::Expr {
    plain(ast::ExprKind::Call(Box::new(call)))
}

fn binary(op: ast::BinaryOp, a: ast::Expr, b: ast::Expr) -> ast::Expr {
    plain(ast::ExprKind::Binary(op, Box::new(a), Box::new(b)))
}

fn int(value: i64) -> ast::Expr {
    plain(ast::ExprKind::Int(ast::IntLit {
        value: value.unsigned_abs(),
        hex: false,
        unit: None,
    }))
}

fn name(text: &str) -> ast::Expr {
    plain(ast::ExprKind::Name(ast::Path {
        text: text.to_string(),
        span: 0..0,
    }))
}

fn ident_of(text: &str) -> ast::Ident {
    ast::Ident {
        name: text.to_string(),
        span: 0..0,
    }
}

fn plain(kind: ast::ExprKind) -> ast::Expr {
    ast::Expr { kind, span: 0..0 }
}

fn stmt(kind: ast::StmtKind) -> ast::Stmt {
    ast::Stmt { kind, span: 0..0 }
}

/// Names that more than one of `program`'s objects has.
fn reused_names(program: &Program) -> HashSet<&str> {
    let mut seen = HashSet::new();
    program
        .objects
        .iter()
        .map(|object| object.name.as_str())
        .filter(|name| !seen.insert(*name))
        .collect()
}

/// The objects a recorded call names: handles, pointers and memory ranges.
/// The synchronize a traced query stands for, when its op became one (it saw the work
/// done).
fn synchronize_for_query(op: &model::Op, call: &RecordedCall) -> Option<&'static str> {
    call.api.query?;
    let name = call.api.name;
    Some(match op.kind {
        OpKind::EventSynchronize { .. } if name.starts_with("cuda") => "cudaEventSynchronize",
        OpKind::EventSynchronize { .. } if name.starts_with("acl.rt.") => "acl.rt.synchronize_event",
        OpKind::EventSynchronize { .. } => "aclrtSynchronizeEvent",
        OpKind::StreamSynchronize { .. } if name.starts_with("cuda") => "cudaStreamSynchronize",
        OpKind::StreamSynchronize { .. } => "aclrtSynchronizeStream",
        _ => return None,
    })
}

fn call_objects(call: &RecordedCall) -> impl Iterator<Item = ObjId> + '_ {
    call.args.values.iter().flatten().flat_map(|value| match value {
        ArgValue::Object(id) => vec![*id],
        ArgValue::Address(address) => vec![address.buffer],
        ArgValue::Ranges(ranges) => ranges.iter().map(|r| r.buffer).collect(),
        ArgValue::CoreMem(syncguard_model::calls::CoreMem::Global(range)) => vec![range.buffer],
        _ => Vec::new(),
    })
}

fn stmt_line(stmt: &Stmt) -> usize {
    match stmt {
        Stmt::Op(op) => op.span.range.start,
        Stmt::If { span, .. }
        | Stmt::For { span, .. }
        | Stmt::While { span, .. }
        | Stmt::Assign { span, .. }
        | Stmt::QueryBranch { span, .. }
        | Stmt::Return(span) => span.range.start,
    }
}
