//! One call statement to one model op, driven by the API catalogue.

use crate::ast;

use super::args::BoundArgs;
use super::{Lowerer, Place};
use syncguard_model::api::{self, Api, Creates, Effect};
use syncguard_model::calls::{self, CallArgs};
use syncguard_model::model::{Block, GeTask, ObjId, Op, OpKind, Pipe, Stmt};
use syncguard_model::reading_rules::unknown_api;

impl Lowerer<'_> {
    pub(super) fn lower_call(&mut self, call: &ast::Call, pattern: Option<&ast::Pattern>, out: &mut Block) {
        let Some(api) = api::lookup(&call.callee.text) else {
            let span = self.span(&call.callee.span);
            self.diagnostics.push(unknown_api(span, &call.callee.text, None));
            return;
        };
        if api.effect == Effect::ThreadAlias {
            self.lower_thread_alias(api, call, pattern);
            return;
        }
        if !self.check_call_shape(api, call, pattern) {
            return;
        }
        let Some(bound) = self.bind_args(api, call) else {
            return;
        };
        let Some(args) = self.resolve_args(api, &bound) else {
            return;
        };
        if let Place::GenTask(index) = self.place {
            self.lower_ge_task(index, api, &args, &bound, call);
            return;
        }
        let kinds = match pattern {
            Some(pattern) => self
                .lower_creation(api, &args, &bound, pattern, call)
                .into_iter()
                .map(OpKind::Create)
                .collect(),
            None => self.lower_effect(api, &args, call).into_iter().collect::<Vec<_>>(),
        };
        for kind in kinds {
            out.push(Stmt::Op(Op {
                api: api.name,
                kind,
                span: self.span(&call.span),
            }));
        }
    }

    /// Place, binding and template arguments; everything but the argument values.
    fn check_call_shape(&mut self, api: &Api, call: &ast::Call, pattern: Option<&ast::Pattern>) -> bool {
        let place_ok = match (api.place, self.place) {
            (api::Place::Host, Place::Host) | (api::Place::Core, Place::Core) => true,
            (api::Place::GenTask, Place::GenTask(_)) => true,
            (api::Place::Host, _) => self.misplaced(api, call, "in host code"),
            (api::Place::GenTask, _) => self.misplaced(api, call, "inside an `op` block"),
            (api::Place::Core, _) => self.misplaced(api, call, "inside a `subkernel` block"),
        };
        if !place_ok {
            return false;
        }
        let creates = api.creates != Creates::Nothing;
        match (creates, pattern) {
            (true, None) => {
                let message = format!("the result of `{}` must be bound with `let`", api.name);
                self.syntax_error(&call.span, message, "created here but never named");
                return false;
            }
            (false, Some(pattern)) => {
                let span = pattern.names()[0].span.start..call.span.end;
                self.syntax_error(
                    &span,
                    format!("`{}` creates nothing to bind", api.name),
                    "remove `let ... =`",
                );
                return false;
            }
            _ => {}
        }
        match &call.generics {
            Some(generics) if generics.len() > api.generics.len() => {
                let message = match api.generics.len() {
                    0 => format!("`{}` takes no template arguments", api.name),
                    n => format!("`{}` takes at most {n} template arguments", api.name),
                };
                let label = format!("template parameters: <{}>", api.generics.join(", "));
                self.syntax_error(&call.span, message, label);
                false
            }
            _ => true,
        }
    }

    fn misplaced(&mut self, api: &Api, call: &ast::Call, where_: &str) -> bool {
        self.syntax_error(
            &call.callee.span,
            format!("`{}` can only be called {where_}", api.name),
            "called here",
        );
        false
    }

    /// Creates the objects a `let` binds; one `Create` op per handle.
    /// `let [x] = HcclThreadExportToCommEngine(comm, 1, [t], engine);`: each name is
    /// another handle of its thread (for the other engine), not a new object.
    fn lower_thread_alias(&mut self, api: &Api, call: &ast::Call, pattern: Option<&ast::Pattern>) {
        let Some(pattern) = pattern else {
            let message = format!("the exported handles of `{}` must be bound with `let`", api.name);
            self.syntax_error(&call.span, message, "exported here but never named");
            return;
        };
        let Some(bound) = self.bind_args(api, call) else {
            return;
        };
        if let (ast::Pattern::Name(name), Some(threads)) = (pattern, bound.get(2))
            && self.alias_array(name, threads, bound.get(1), call)
        {
            return;
        }
        let Some(args) = self.resolve_args(api, &bound) else {
            return;
        };
        let Some(calls::ArgValue::Objects(threads)) = args.get(2) else {
            return;
        };
        let names = pattern.names();
        let count = args.int(1).and_then(|n| n.as_const());
        if names.len() != threads.len() || count.is_some_and(|n| n != threads.len() as i64) {
            let message = format!(
                "`{}` exports {} thread(s) (`threadNum` {}) but {} name(s) are bound",
                api.name,
                threads.len(),
                count.map_or("unknown".to_string(), |n| n.to_string()),
                names.len()
            );
            self.syntax_error(&call.span, message, "one name per exported thread");
            return;
        }
        for (name, &thread) in names.iter().zip(threads) {
            self.bind(&name.name, super::Binding::Object(thread));
        }
    }

    fn lower_creation(
        &mut self,
        api: &Api,
        args: &CallArgs,
        bound: &BoundArgs,
        pattern: &ast::Pattern,
        call: &ast::Call,
    ) -> Vec<ObjId> {
        let names = pattern.names();
        if let ast::Pattern::Name(name) = pattern
            && let Some(shape) = self.array_shape(api, args, name)
        {
            return self
                .lower_array_creation(api, args, name, shape, call)
                .into_iter()
                .collect();
        }
        if !self.check_created_count(api, args, bound, names.len(), call) {
            return Vec::new();
        }
        let Some(kinds) = calls::created_objects(api, args, names.len(), &self.program) else {
            return Vec::new();
        };
        if kinds.len() != names.len() {
            let message = format!(
                "`{}` creates {} handle(s) but {} name(s) are bound",
                api.name,
                kinds.len(),
                names.len()
            );
            self.syntax_error(&call.span, message, "make the names match the count");
            return Vec::new();
        }
        let ipc_key = calls::ipc_key(api, args);
        names
            .iter()
            .zip(kinds)
            .map(|(name, kind)| {
                let id = self.new_object(name, kind, api.name);
                self.program.objects[id.index()].ipc_key = ipc_key.clone();
                id
            })
            .collect()
    }

    /// `threadNum` and `channelNum` must agree with what the call binds and describes.
    fn check_created_count(
        &mut self,
        api: &Api,
        args: &CallArgs,
        bound: &BoundArgs,
        names: usize,
        call: &ast::Call,
    ) -> bool {
        let count = calls::created_count(api, args);
        match (api.creates, bound.get(2), bound.get(3)) {
            (Creates::HcclThreads, Some(thread_num), _) if count != Some(names) => {
                let message = format!("`threadNum` must be the number of names bound ({names})");
                self.syntax_error(&thread_num.span, message, "threadNum and the `let [...]` list disagree");
                false
            }
            (Creates::Channels, _, Some(channel_num)) => {
                let descs = count.unwrap_or(0);
                if args.int(3).and_then(|n| n.as_const()) != Some(descs as i64) {
                    let message = format!("`channelNum` must equal the number of channel descriptors ({descs})");
                    self.syntax_error(&channel_num.span, message, "channelNum disagrees with channelDescs");
                    return false;
                }
                if descs == 0 {
                    self.syntax_error(&call.span, "`HcclChannelAcquire` needs at least one descriptor", "");
                    return false;
                }
                true
            }
            _ => true,
        }
    }

    /// The op of a call that creates nothing.
    fn lower_effect(&mut self, api: &Api, args: &CallArgs, call: &ast::Call) -> Option<OpKind> {
        match api.effect {
            Effect::SetNextTaskStart => {
                let generics = call.generics.as_deref().unwrap_or_default();
                Some(OpKind::SetNextTaskStart {
                    aiv_pipe: self.generic_pipe(generics.first(), Pipe::Mte3)?,
                    aic_pipe: self.generic_pipe(generics.get(1), Pipe::Fix)?,
                    force: self.generic_bool(generics.get(2))?,
                })
            }
            Effect::WaitPreTaskEnd => {
                let generics = call.generics.as_deref().unwrap_or_default();
                Some(OpKind::WaitPreTaskEnd {
                    force: self.generic_bool(generics.first())?,
                })
            }
            Effect::DataCopy => calls::effect_op(api, args, &self.program).or_else(|| {
                self.syntax_error(
                    &call.span,
                    "`DataCopy` moves data between global memory and a local buffer",
                    "write `DataCopy(UB, x[0..1 KiB])` (in) or `DataCopy(y[0..1 KiB], UB)` (out)",
                );
                None
            }),
            _ => calls::effect_op(api, args, &self.program),
        }
    }

    fn generic_pipe(&mut self, expr: Option<&ast::Expr>, default: Pipe) -> Option<Pipe> {
        let Some(expr) = expr else { return Some(default) };
        let name = match &expr.kind {
            ast::ExprKind::Name(path) => path.text.rsplit("::").next().unwrap_or(&path.text),
            _ => "",
        };
        Pipe::from_name(name).or_else(|| {
            let names = Pipe::NAMES.iter().map(|(n, _)| *n);
            self.unknown_name(&expr.span, "pipe", name, names);
            None
        })
    }

    fn generic_bool(&mut self, expr: Option<&ast::Expr>) -> Option<bool> {
        match expr.map(|e| &e.kind) {
            None => Some(false),
            Some(ast::ExprKind::Bool(value)) => Some(*value),
            Some(_) => {
                self.syntax_error(&expr?.span, "`FORCE` is `true` or `false`", "");
                None
            }
        }
    }

    /// A gen-task factory call: one entry of the op's serialized task list.
    fn lower_ge_task(&mut self, index: usize, api: &Api, args: &CallArgs, bound: &BoundArgs, call: &ast::Call) {
        let stream_id = match api
            .params
            .iter()
            .position(|p| p.name == "stream_id")
            .and_then(|i| bound.get(i))
        {
            Some(expr) => match self.const_int(expr).map(u32::try_from) {
                Some(Ok(id)) => id,
                _ => return,
            },
            None => 0,
        };
        let span = self.span(&call.span);
        if api.effect == Effect::GeSetStreamId {
            match self.program.ge_ops[index].tasks.last_mut() {
                Some(task) => task.stream_id = stream_id,
                None => self.syntax_error(
                    &call.span,
                    "`SetStreamId` needs a task created before it",
                    "no task yet",
                ),
            }
            return;
        }
        if let Some(kind) = calls::ge_task_kind(api, args, &span) {
            self.program.ge_ops[index].tasks.push(GeTask {
                api: api.name,
                kind,
                stream_id,
                span,
            });
        }
    }
}
