//! Device-side blocks: GE gen-task ops and SuperKernels with their sub-kernels.

use crate::ast::{self, ExprKind, StmtKind};

use super::{Lowerer, Place};
use syncguard_model::api::ArgKind;
use syncguard_model::model::{Block, GeOp, Op, OpKind, Stmt, SubKernel, SuperKernel, SuperKernelId};

impl Lowerer<'_> {
    pub(super) fn lower_ge_op(&mut self, stmt: &ast::Stmt, name: &ast::Ident, attrs: &[ast::Ident], body: &ast::Block) {
        if self.place != Place::Host || self.scopes.len() > 1 {
            self.syntax_error(
                &stmt.span,
                "an `op` block belongs at the top level of the file",
                "nested op",
            );
            return;
        }
        let index = self.program.ge_ops.len();
        self.program.ge_ops.push(GeOp {
            name: name.name.clone(),
            attrs: attrs.iter().map(|a| (a.name.clone(), self.span(&a.span))).collect(),
            tasks: Vec::new(),
            span: self.span(&name.span),
        });
        self.in_scope(Place::GenTask(index), |this| {
            for task in &body.stmts {
                match &task.kind {
                    StmtKind::Call(_) | StmtKind::Error => this.lower_stmt(task, &mut Vec::new()),
                    _ => this.syntax_error(
                        &task.span,
                        "an `op` block lists gen-task calls only",
                        "expected `KernelLaunchInfo::Create...Task(context, ...)`",
                    ),
                }
            }
        });
    }

    pub(super) fn lower_superkernel(
        &mut self,
        stmt: &ast::Stmt,
        name: &ast::Ident,
        args: &[ast::Arg],
        body: &ast::Block,
        out: &mut Block,
    ) {
        if !self.require_place(stmt, Place::Host, "a `superkernel`", "in host code") {
            return;
        }
        let mut stream = None;
        let mut cores = (None, None);
        for arg in args {
            match arg.name.as_ref().map(|n| n.name.as_str()) {
                None if stream.is_none() => stream = self.arg_object(&arg.value, ArgKind::Stream),
                Some("aic") => cores.0 = self.core_count(&arg.value),
                Some("aiv") => cores.1 = self.core_count(&arg.value),
                _ => self.syntax_error(
                    &arg.value.span,
                    "a superkernel takes its stream, `aic:` and `aiv:`",
                    "unexpected argument",
                ),
            }
        }
        let Some(stream) = stream else {
            self.syntax_error(
                &stmt.span,
                "a superkernel needs the stream it is launched on",
                "e.g. `superkernel sk(s1, aiv: 48)`",
            );
            return;
        };
        let id = SuperKernelId(self.program.superkernels.len() as u32);
        self.program.superkernels.push(SuperKernel {
            name: name.name.clone(),
            stream,
            aic_cores: cores.0.unwrap_or(0),
            aiv_cores: cores.1.unwrap_or(0),
            subkernels: Vec::new(),
            span: self.span(&name.span),
        });
        self.in_scope(Place::SuperKernel(id.index()), |this| this.lower_stmts(&body.stmts));
        out.push(Stmt::Op(Op {
            api: "superkernel",
            kind: OpKind::LaunchSuperKernel(id),
            span: self.span(&stmt.span),
        }));
    }

    pub(super) fn lower_subkernel(
        &mut self,
        stmt: &ast::Stmt,
        name: &ast::Ident,
        args: &[ast::Arg],
        body: &ast::Block,
    ) {
        let Place::SuperKernel(index) = self.place else {
            self.syntax_error(
                &stmt.span,
                "a `subkernel` is only allowed inside a `superkernel`",
                "misplaced subkernel",
            );
            return;
        };
        let parent = &self.program.superkernels[index];
        let mut subkernel = SubKernel {
            name: name.name.clone(),
            tiling_keys: vec![0],
            aic_cores: parent.aic_cores,
            aiv_cores: parent.aiv_cores,
            body: Vec::new(),
            span: self.span(&name.span),
        };
        for arg in args {
            match arg.name.as_ref().map(|n| n.name.as_str()) {
                Some("tiling_keys") => subkernel.tiling_keys = self.tiling_keys(&arg.value),
                Some("aic") => subkernel.aic_cores = self.core_count(&arg.value).unwrap_or(0),
                Some("aiv") => subkernel.aiv_cores = self.core_count(&arg.value).unwrap_or(0),
                _ => self.syntax_error(
                    &arg.value.span,
                    "a subkernel takes `tiling_keys:`, `aic:` and `aiv:`",
                    "unexpected argument",
                ),
            }
        }
        subkernel.body = self.in_scope(Place::Core, |this| this.lower_stmts(&body.stmts));
        self.program.superkernels[index].subkernels.push(subkernel);
    }

    fn core_count(&mut self, expr: &ast::Expr) -> Option<u32> {
        let value = self.const_int(expr)?;
        u32::try_from(value).ok().or_else(|| {
            self.syntax_error(&expr.span, "a core count is a non-negative number", "");
            None
        })
    }

    fn tiling_keys(&mut self, expr: &ast::Expr) -> Vec<i64> {
        let ExprKind::List(items) = &expr.kind else {
            self.syntax_error(&expr.span, "`tiling_keys` is a list of numbers", "e.g. `[1, 2, 3]`");
            return vec![0];
        };
        let keys: Vec<i64> = items.iter().filter_map(|item| self.const_int(item)).collect();
        if keys.is_empty() {
            self.syntax_error(&expr.span, "`tiling_keys` needs at least one key", "empty list");
            return vec![0];
        }
        keys
    }
}
