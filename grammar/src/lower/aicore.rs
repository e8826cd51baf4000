//! `aicore NAME(x, y, blocks: 8, type: AIV_ONLY) { ... }`: the pipe program every AI
//! core of a kernel runs, lowered into a [`Kernel`] (grammar/SYNC.md, "Kernels inside").

use crate::ast::{self, ExprKind};

use super::{Binding, Lowerer, Place};
use syncguard_model::kernel::{
    Access, HardEvent, KOp, KOpKind, KStmt, Kernel, KernelCall, KernelKind, Known, LocalBuffer, LocalTensor, Named,
    Position, Space, Target, UNKNOWN_END, copy_pipe, vector_writes,
};
use syncguard_model::model::{BinOp, Expr, Param, Pipe};

impl Lowerer<'_> {
    pub(super) fn lower_aicore(&mut self, stmt: &ast::Stmt, name: &ast::Ident, args: &[ast::Arg], body: &ast::Block) {
        if self.place != Place::Host || self.scopes.len() > 1 {
            self.syntax_error(
                &stmt.span,
                "an `aicore` kernel belongs at the top level of the file",
                "nested aicore",
            );
            return;
        }
        let mut kernel = Kernel {
            name: name.name.clone(),
            kind: KernelKind::AivOnly,
            blocks: Expr::Int(1),
            auto_sync: true,
            gm: Vec::new(),
            buffers: Vec::new(),
            tensors: Vec::new(),
            body: Vec::new(),
            span: self.span(&name.span),
        };
        let mut blocks = None;
        for arg in args {
            match (arg.name.as_ref().map(|n| n.name.as_str()), &arg.value.kind) {
                (None, ExprKind::Name(path)) => kernel.gm.push(Named {
                    name: path.text.clone(),
                    span: self.span(&arg.value.span),
                }),
                (Some("blocks"), _) => blocks = Some(self.lower_expr(&arg.value)),
                (Some("type"), ExprKind::Name(path)) => match KernelKind::from_name(&path.text) {
                    Some(kind) => kernel.kind = kind,
                    None => self.unknown_name(
                        &arg.value.span,
                        "constant",
                        &path.text,
                        KernelKind::NAMES.iter().map(|(n, _)| *n),
                    ),
                },
                (Some("auto_sync"), ExprKind::Bool(on)) => kernel.auto_sync = *on,
                _ => self.syntax_error(
                    &arg.value.span,
                    "an aicore kernel takes its GM parameters, `blocks:`, `type:` and `auto_sync:`",
                    "unexpected argument",
                ),
            }
        }
        kernel.blocks = blocks.unwrap_or_else(|| self.unknown_block_count(&kernel));
        let gm: Vec<String> = kernel.gm.iter().map(|g| g.name.clone()).collect();
        self.kernel = Some(kernel);
        let body = self.in_scope(Place::AiCore, |this| {
            for (index, name) in gm.iter().enumerate() {
                this.bind(name, Binding::Gm(index));
            }
            this.kernel_stmts(&body.stmts)
        });
        if let Some(mut kernel) = self.kernel.take() {
            kernel.body = body;
            self.program.kernels.push(kernel);
        }
    }

    /// `GetBlockNum()` of a kernel whose launch is not written: any count from one to
    /// the target's cores of the kernel's type.
    fn unknown_block_count(&mut self, kernel: &Kernel) -> Expr {
        let cores = self.program.settings.target.cores();
        let max = cores.map(|c| {
            i64::from(if kernel.kind == KernelKind::AivOnly {
                c.aiv
            } else {
                c.aic
            })
        });
        let id = syncguard_model::model::ParamId(self.program.params.len() as u32);
        self.program.params.push(Param {
            name: format!("{}.blocks", kernel.name),
            min: 1,
            max,
            span: kernel.span.clone(),
        });
        Expr::Param(id)
    }

    fn kernel_stmts(&mut self, stmts: &[ast::Stmt]) -> Vec<KStmt> {
        let mut out = Vec::new();
        for stmt in stmts {
            self.kernel_stmt(stmt, &mut out);
        }
        out
    }

    fn kernel_block(&mut self, block: &ast::Block) -> Vec<KStmt> {
        self.in_scope(Place::AiCore, |this| this.kernel_stmts(&block.stmts))
    }

    fn kernel_stmt(&mut self, stmt: &ast::Stmt, out: &mut Vec<KStmt>) {
        use ast::StmtKind as K;
        match &stmt.kind {
            K::Let {
                pattern: ast::Pattern::Name(name),
                value,
            } => match &value.kind {
                ExprKind::Call(call) if KernelCall::lookup(&call.callee.text).is_some() => {
                    self.kernel_call(call, Some(name), out)
                }
                _ => {
                    let value = self.lower_expr(value);
                    self.values.push(value);
                    self.bind(&name.name, Binding::Value(self.values.len() - 1));
                }
            },
            K::Call(call) => self.kernel_call(call, None, out),
            K::If { cond, then, otherwise } => {
                let cond = self.lower_expr(cond);
                let then = self.kernel_block(then);
                let otherwise = match otherwise {
                    None => Vec::new(),
                    Some(ast::Else::Block(block)) => self.kernel_block(block),
                    Some(ast::Else::If(nested)) => {
                        let mut block = Vec::new();
                        self.kernel_stmt(nested, &mut block);
                        block
                    }
                };
                out.push(KStmt::If {
                    cond,
                    then,
                    otherwise,
                    span: self.span(&stmt.span),
                });
            }
            K::For { var, range, body } => {
                let start = self.lower_expr(&range.start);
                let Some(end) = &range.end else {
                    self.syntax_error(&range.span, "a loop needs an upper bound", "add an end, e.g. `0..N`");
                    return;
                };
                let mut end = self.lower_expr(end);
                if range.inclusive {
                    end = Expr::Binary(BinOp::Add, Box::new(end), Box::new(Expr::Int(1)));
                }
                let id = self.new_var(var);
                let body = self.in_scope(Place::AiCore, |this| {
                    this.bind(&var.name, Binding::Var(id));
                    this.kernel_stmts(&body.stmts)
                });
                out.push(KStmt::For {
                    var: id,
                    start,
                    end,
                    body,
                    span: self.span(&stmt.span),
                });
            }
            K::Return => out.push(KStmt::Return(self.span(&stmt.span))),
            K::Error => {}
            _ => self.syntax_error(
                &stmt.span,
                "an aicore kernel holds calls, `let`, `if`, `for` and `return`",
                "not allowed in an aicore block",
            ),
        }
    }

    fn kernel_call(&mut self, call: &ast::Call, bound: Option<&ast::Ident>, out: &mut Vec<KStmt>) {
        let Some(which) = KernelCall::lookup(&call.callee.text) else {
            let candidates = [
                "AscendC::DataCopy",
                "AscendC::SetFlag",
                "AscendC::WaitFlag",
                "TQue::DeQue",
            ];
            self.unknown_name(&call.callee.span, "kernel call", &call.callee.text, candidates);
            return;
        };
        let Some(kind) = self.kernel_op(which, call, bound) else {
            return;
        };
        out.push(KStmt::Op(KOp {
            api: call.callee.text.clone(),
            kind,
            span: self.span(&call.span),
        }));
    }

    fn kernel_op(&mut self, which: KernelCall, call: &ast::Call, bound: Option<&ast::Ident>) -> Option<KOpKind> {
        use KernelCall as C;
        let arg = |i: usize| call.args.get(i).map(|a| &a.value);
        Some(match which {
            C::Queue | C::QueueBind | C::Buf => {
                self.declare_buffer(which, call, bound);
                return None;
            }
            C::AllocTensor | C::DeQue | C::GetBuf => {
                let buffer = self.buffer_arg(call, 0)?;
                let tensor = self.new_tensor(call, bound, buffer)?;
                match which {
                    C::AllocTensor => KOpKind::AllocTensor { buffer, tensor },
                    C::DeQue => KOpKind::DeQue { buffer, tensor },
                    _ => KOpKind::GetBuf { buffer, tensor },
                }
            }
            C::EnQue | C::FreeTensor => {
                let buffer = self.buffer_arg(call, 0)?;
                let tensor = self.tensor_arg(call, 1)?;
                if which == C::EnQue {
                    KOpKind::EnQue { buffer, tensor }
                } else {
                    KOpKind::FreeTensor { buffer, tensor }
                }
            }
            C::SetFlag | C::WaitFlag => {
                let event = self.hard_event(call)?;
                let id = {
                    let e = self.required(call, 0, "an event id")?;
                    self.lower_expr(e)
                };
                if which == C::SetFlag {
                    KOpKind::SetFlag { event, id }
                } else {
                    KOpKind::WaitFlag { event, id }
                }
            }
            C::PipeBarrier => KOpKind::Barrier(self.pipe_generic(call, 0, None)?),
            C::AllocEventId | C::FetchEventId => {
                let event = self.hard_event(call)?;
                let Some(name) = bound else {
                    self.syntax_error(&call.span, "bind the event id: `let id = ...`", "id not kept");
                    return None;
                };
                let var = self.new_var(name);
                self.bind(&name.name, Binding::Var(var));
                KOpKind::AllocEventId {
                    event,
                    var,
                    fetch: which == C::FetchEventId,
                }
            }
            C::ReleaseEventId => {
                let event = self.hard_event(call)?;
                let id = {
                    let e = self.required(call, 0, "the event id")?;
                    self.lower_expr(e)
                };
                KOpKind::ReleaseEventId { event, id }
            }
            C::CrossCoreSetFlag | C::CrossCoreWaitFlag => {
                let set = which == C::CrossCoreSetFlag;
                let mode = match call.generics.as_deref().and_then(|g| g.first()) {
                    Some(mode) => self.const_int(mode)?,
                    None if !set => 0,
                    None => {
                        self.syntax_error(
                            &call.span,
                            "give the mode and pipe",
                            "e.g. `CrossCoreSetFlag<2, PIPE_MTE3>(0)`",
                        );
                        return None;
                    }
                };
                let pipe = self.pipe_generic(call, 1, (!set).then_some(Pipe::S))?;
                let flag = {
                    let e = self.required(call, 0, "a flag id")?;
                    self.lower_expr(e)
                };
                let mode = u8::try_from(mode).unwrap_or(u8::MAX);
                if set {
                    KOpKind::CrossCoreSetFlag { mode, pipe, flag }
                } else {
                    KOpKind::CrossCoreWaitFlag { mode, pipe, flag }
                }
            }
            C::SyncAll => match arg(0) {
                None => {
                    let aiv_only = match call.generics.as_deref().and_then(|g| g.first()) {
                        Some(value) => self.const_int(value)? != 0,
                        None => true,
                    };
                    KOpKind::SyncAll {
                        aiv_only,
                        workspace: None,
                    }
                }
                Some(workspace) => KOpKind::SyncAll {
                    aiv_only: true,
                    workspace: Some(self.access(workspace)?),
                },
            },
            C::Copy | C::LoadData | C::Fixpipe => {
                let dst = {
                    let e = self.required(call, 0, "a destination")?;
                    self.access(e)?
                };
                let src = {
                    let e = self.required(call, 1, "a source")?;
                    self.access(e)?
                };
                let (to, from) = (self.space_of(&dst), self.space_of(&src));
                let Some(pipe) = copy_pipe(to, from) else {
                    let message = format!("no pipe moves data from {} to {}", from.name(), to.name());
                    self.syntax_error(&call.span, message, "unsupported copy");
                    return None;
                };
                KOpKind::Work {
                    pipe,
                    writes: vec![dst],
                    reads: vec![src],
                }
            }
            C::Mmad | C::Vector | C::ScalarRead | C::ScalarWrite => {
                let mut accesses = Vec::new();
                for arg in &call.args {
                    if let Some(access) = self.access_if_memory(&arg.value) {
                        accesses.push(access);
                    }
                }
                if accesses.is_empty() {
                    self.syntax_error(
                        &call.span,
                        "name the memory the instruction touches",
                        "no tensor argument",
                    );
                    return None;
                }
                let (pipe, writes, reads) = match which {
                    C::Mmad => (Pipe::M, vec![accesses.remove(0)], accesses),
                    C::Vector => {
                        let op = call.callee.text.rsplit("::").next().unwrap_or_default();
                        let written = vector_writes(op, accesses.len());
                        let (writes, reads) = accesses
                            .into_iter()
                            .enumerate()
                            .partition::<Vec<_>, _>(|(position, _)| written.contains(position));
                        let strip = |accesses: Vec<(usize, Access)>| accesses.into_iter().map(|(_, a)| a).collect();
                        (Pipe::V, strip(writes), strip(reads))
                    }
                    C::ScalarRead => (Pipe::S, Vec::new(), accesses),
                    _ => (Pipe::S, accesses, Vec::new()),
                };
                KOpKind::Work { pipe, writes, reads }
            }
        })
    }

    fn required<'c>(&mut self, call: &'c ast::Call, index: usize, what: &str) -> Option<&'c ast::Expr> {
        let arg = call.args.get(index).map(|a| &a.value);
        if arg.is_none() {
            self.syntax_error(
                &call.span,
                format!("`{}` needs {what}", call.callee.text),
                "missing argument",
            );
        }
        arg
    }

    /// `let q = TQue<VECIN>(2, 1 KiB);`, `TQueBind<VECIN, VECOUT>(depth, len)`,
    /// `TBuf<VECCALC>(len)`.
    fn declare_buffer(&mut self, which: KernelCall, call: &ast::Call, bound: Option<&ast::Ident>) {
        let Some(name) = bound else {
            self.syntax_error(
                &call.span,
                "bind the buffer: `let q = TQue<VECIN>(2, 1 KiB);`",
                "unnamed",
            );
            return;
        };
        let generics = call.generics.as_deref().unwrap_or_default();
        let position = |this: &mut Self, index: usize| -> Option<Position> {
            let Some(ast::Expr {
                kind: ExprKind::Name(path),
                span,
            }) = generics.get(index)
            else {
                this.syntax_error(&call.span, "give the buffer's position", "e.g. `TQue<VECIN>(2, 1 KiB)`");
                return None;
            };
            let found = Position::from_name(&path.text);
            if found.is_none() {
                this.unknown_name(span, "constant", &path.text, Position::NAMES.iter().map(|(n, _)| *n));
            }
            found
        };
        let Some(src) = position(self, 0) else { return };
        let dst = if which == KernelCall::QueueBind {
            let Some(dst) = position(self, 1) else { return };
            dst
        } else {
            src
        };
        let queue = which != KernelCall::Buf;
        let args: Vec<&ast::Expr> = call.args.iter().map(|a| &a.value).collect();
        let (depth, len) = match (queue, args.as_slice()) {
            (true, [depth, len]) => (self.const_int(depth), self.lower_expr(len)),
            (false, [len]) => (Some(1), self.lower_expr(len)),
            _ => {
                let expected = if queue { "(depth, bytes per slot)" } else { "(bytes)" };
                self.syntax_error(
                    &call.span,
                    format!("`{}` takes {expected}", call.callee.text),
                    "wrong arguments",
                );
                return;
            }
        };
        let depth = u32::try_from(depth.unwrap_or(1)).unwrap_or(1).max(1);
        let Some(kernel) = self.kernel.as_mut() else { return };
        kernel.buffers.push(LocalBuffer {
            name: name.name.clone(),
            src,
            dst,
            queue,
            depth,
            len,
            span: (self.place_span)(&call.span),
        });
        let index = kernel.buffers.len() - 1;
        self.bind(&name.name, Binding::LocalBuffer(index));
    }

    fn new_tensor(&mut self, call: &ast::Call, bound: Option<&ast::Ident>, buffer: usize) -> Option<usize> {
        let Some(name) = bound else {
            self.syntax_error(
                &call.span,
                "bind the tensor: `let x = TQue::DeQue(q);`",
                "tensor not kept",
            );
            return None;
        };
        let span = self.span(&name.span);
        let kernel = self.kernel.as_mut()?;
        kernel.tensors.push(LocalTensor {
            name: name.name.clone(),
            buffer,
            span,
        });
        let index = kernel.tensors.len() - 1;
        self.bind(&name.name, Binding::Tensor(index));
        Some(index)
    }

    fn buffer_arg(&mut self, call: &ast::Call, index: usize) -> Option<usize> {
        match call.args.get(index).map(|a| (&a.value.kind, &a.value.span)) {
            Some((ExprKind::Name(path), span)) => match self.lookup(&path.text) {
                Some(Binding::LocalBuffer(buffer)) => Some(buffer),
                _ => {
                    self.unknown_name(span, "queue", &path.text, Vec::<&str>::new());
                    None
                }
            },
            _ => {
                self.syntax_error(&call.span, "name the queue or buffer", "expected its name");
                None
            }
        }
    }

    fn tensor_arg(&mut self, call: &ast::Call, index: usize) -> Option<usize> {
        match call.args.get(index).map(|a| (&a.value.kind, &a.value.span)) {
            Some((ExprKind::Name(path), span)) => match self.lookup(&path.text) {
                Some(Binding::Tensor(tensor)) => Some(tensor),
                _ => {
                    self.unknown_name(span, "tensor", &path.text, Vec::<&str>::new());
                    None
                }
            },
            _ => {
                self.syntax_error(&call.span, "name the tensor", "expected its name");
                None
            }
        }
    }

    fn hard_event(&mut self, call: &ast::Call) -> Option<HardEvent> {
        let Some(ast::Expr {
            kind: ExprKind::Name(path),
            span,
        }) = call.generics.as_deref().and_then(|g| g.first())
        else {
            self.syntax_error(&call.span, "give the HardEvent", "e.g. `SetFlag<MTE2_V>(0)`");
            return None;
        };
        let event = HardEvent::from_name(&path.text);
        if event.is_none() {
            self.unknown_name(
                span,
                "constant",
                &path.text,
                ["MTE2_V", "V_MTE3", "MTE3_MTE2", "V_MTE2", "S_V"],
            );
        }
        event
    }

    fn pipe_generic(&mut self, call: &ast::Call, index: usize, default: Option<Pipe>) -> Option<Pipe> {
        match call.generics.as_deref().and_then(|g| g.get(index)) {
            Some(ast::Expr {
                kind: ExprKind::Name(path),
                span,
            }) => {
                let pipe = Pipe::from_name(&path.text);
                if pipe.is_none() {
                    self.unknown_name(span, "pipe", &path.text, Pipe::NAMES.iter().map(|(n, _)| *n));
                }
                pipe
            }
            _ if default.is_some() => default,
            _ => {
                self.syntax_error(&call.span, "give the pipe", "e.g. `PipeBarrier<PIPE_V>()`");
                None
            }
        }
    }

    /// `x`, `x[a..b]`: a GM parameter, a local tensor or a local space, whole or a byte range.
    fn access(&mut self, expr: &ast::Expr) -> Option<Access> {
        let access = self.access_if_memory(expr);
        if access.is_none() {
            self.syntax_error(&expr.span, "expected memory", "a GM parameter, a tensor, or `UB[a..b]`");
        }
        access
    }

    fn access_if_memory(&mut self, expr: &ast::Expr) -> Option<Access> {
        let (base, range) = match &expr.kind {
            ExprKind::Slice { base, range } => (base.as_ref(), Some(range)),
            _ => (expr, None),
        };
        let ExprKind::Name(path) = &base.kind else {
            return None;
        };
        let target = match self.lookup(&path.text) {
            Some(Binding::Gm(index)) => Target::Gm(index),
            Some(Binding::Tensor(index)) => Target::Tensor(index),
            None => Target::Local(Space::from_name(&path.text).filter(|s| *s != Space::Gm)?),
            _ => return None,
        };
        let unknown = |bound: Option<&ast::Expr>| {
            bound.is_some_and(|bound| matches!(&bound.kind, ExprKind::Name(path) if path.text == UNKNOWN_END))
        };
        let known = match range {
            Some(range) if unknown(Some(&range.start)) => Known::Nothing,
            Some(range) if unknown(range.end.as_deref()) => Known::Start,
            _ => Known::Range,
        };
        let (offset, len) = match range {
            None => (Expr::Int(0), None),
            Some(_) if known == Known::Nothing => (Expr::Int(0), None),
            Some(range) => {
                let start = self.lower_expr(&range.start);
                let len = range.end.as_ref().filter(|_| known == Known::Range).map(|end| {
                    let mut end = self.lower_expr(end);
                    if range.inclusive {
                        end = Expr::Binary(BinOp::Add, Box::new(end), Box::new(Expr::Int(1)));
                    }
                    Expr::Binary(BinOp::Sub, Box::new(end), Box::new(start.clone()))
                });
                (start, len)
            }
        };
        Some(Access {
            target,
            offset,
            len,
            known,
            span: self.span(&expr.span),
        })
    }

    fn space_of(&self, access: &Access) -> Space {
        match access.target {
            Target::Gm(_) => Space::Gm,
            Target::Local(space) => space,
            Target::Tensor(tensor) => self.kernel.as_ref().map_or(Space::Ub, |kernel| {
                let buffer = &kernel.buffers[kernel.tensors[tensor].buffer];
                buffer.src.space()
            }),
        }
    }
}
