//! GE gen-task callbacks (`ge::Status Fn(const gert::ExeResGenerationContext *context,
//! std::vector<std::vector<uint8_t>> &tasks)`, registered with
//! `IMPL_OP_CT(Op).GenerateTask(Fn)`): the task list the callback leaves in `tasks`,
//! each task as its factory made it and with its last `SetStreamId`, becomes the `.sync`
//! `op Op attrs(...) { ... }` block, with the attributes the op's definition declares.

use syncguard_grammar::ast;
use syncguard_grammar::extracted::GE_OP_PREFIX;
use syncguard_model::api::{self, Api};
use tree_sitter::Node;

use super::Walker;
use super::value::{GenTask, Value};
use crate::fields::FieldChild;
use crate::index::{FnDef, op_attributes};

impl<'u> Walker<'_, 'u> {
    /// A callback taking the gen-task context: `tasks` starts as GE hands it over,
    /// holding the op's AI Core task.
    pub(super) fn begin_gen_task(&mut self, entry: &FnDef<'u>) {
        if !entry
            .params
            .iter()
            .any(|param| param.type_text.contains("ExeResGenerationContext"))
        {
            return;
        }
        let Some(tasks) = entry.params.iter().find(|param| param.type_text.contains("vector")) else {
            return;
        };
        let Some(place) = self.lookup_local(&tasks.name) else {
            return;
        };
        let op = self
            .index
            .gen_task_ops
            .get(entry.simple_name())
            .cloned()
            .unwrap_or_else(|| entry.simple_name().trim_end_matches("GenTask").to_string());
        let span = self.range(entry.node);
        let load = ast::Call {
            callee: ast::Path {
                text: "KernelLaunchInfo::LoadFromData".into(),
                span: span.clone(),
            },
            generics: None,
            args: vec![context_arg(span.clone()), string_arg(&snake_case(&op), span.clone())],
            span,
        };
        self.store.insert(
            format!("{place}[0]"),
            Value::Task(Box::new(GenTask {
                call: load,
                stream: None,
            })),
        );
        self.store.insert(format!("{place}.#len"), Value::Int(1));
        self.gen_task = Some((op, place));
    }

    /// The op block: the tasks left in `tasks`, in order.
    pub(super) fn end_gen_task(&mut self, entry: &FnDef<'u>) {
        let Some((op, place)) = self.gen_task.take() else {
            return;
        };
        let len = self
            .store
            .get(&format!("{place}.#len"))
            .and_then(Value::int)
            .unwrap_or(0);
        let mut body = Vec::new();
        for k in 0..len.clamp(0, 1 << 16) {
            match self.store.get(&format!("{place}[{k}]")).cloned() {
                Some(Value::Task(task)) => {
                    let mut call = task.call;
                    if let Some(stream) = task.stream {
                        call.args.push(ast::Arg {
                            name: Some(ast::Ident {
                                name: "stream_id".into(),
                                span: stream.span.clone(),
                            }),
                            value: stream,
                        });
                    }
                    let span = call.span.clone();
                    body.push(ast::Stmt {
                        kind: ast::StmtKind::Call(call),
                        span,
                    });
                }
                _ => self.unresolved(
                    entry.body,
                    format!("task {k} of the list is not one the extractor can follow"),
                ),
            }
        }
        self.api_calls += body.len();
        let span = self.range(entry.node);
        let attrs = match op_attributes(self.index, op.as_str()) {
            Some(attrs) => attrs,
            None => {
                self.unresolved(
                    entry.node,
                    format!(
                        "no analyzed file defines op `{op}` (`OP_ADD({op})`): its group names are not checked \
                         against its attributes (SG203)"
                    ),
                );
                group_names(&body)
                    .into_iter()
                    .map(|name| (name, span.clone()))
                    .collect()
            }
        };
        let ident = |name: &str, span: std::ops::Range<usize>| ast::Ident {
            name: super::value::identifier(name),
            span,
        };
        self.emit(
            ast::StmtKind::GeOp {
                name: ident(&op, span.clone()),
                attrs: attrs.into_iter().map(|(attr, at)| ident(&attr, at)).collect(),
                body: ast::Block {
                    stmts: body,
                    span: span.clone(),
                },
            },
            span,
        );
    }

    /// `KernelLaunchInfo::CreateHcomWaitTask(context, "group")` and the other factories:
    /// the task, as a value the code stores, configures and serializes.
    pub(super) fn gen_task_factory(&mut self, node: Node<'u>, api: &'static Api, args: &[Node<'u>]) -> Value {
        let mut converted = Vec::new();
        for (param, arg) in api.positional_params().zip(args) {
            let value = self.eval(*arg);
            let span = self.range(*arg);
            let expr = match (param.kind, value) {
                (api::ArgKind::GenTaskContext, _) => context_arg(span).value,
                (_, Value::Str(text)) => string_arg(&text, span).value,
                (api::ArgKind::Str, _) => string_arg(self.text(*arg), span).value,
                (_, value) => match super::expr::symbolic(&value, span) {
                    Some(expr) => expr,
                    None => {
                        self.unresolved(
                            *arg,
                            format!("`{}`'s `{}` is not known: the task is left out", api.name, param.name),
                        );
                        return Value::Unknown;
                    }
                },
            };
            converted.push(ast::Arg {
                name: None,
                value: expr,
            });
        }
        let call = self.ast_call(api.name, node, converted, Vec::new());
        Value::Task(Box::new(GenTask { call, stream: None }))
    }

    /// `task.SetStreamId(id)` and `task.Serialize()` on a task the code holds.
    pub(super) fn task_method(&mut self, function: Node<'u>, method: &str, args: &[Node<'u>]) -> Option<Value> {
        if self.gen_task.is_none() || !matches!(method, "SetStreamId" | "Serialize") {
            return None;
        }
        let base = function.field_child("argument")?;
        let place = self.place_of(base)?;
        let Some(Value::Task(mut task)) = self.store.get(&place).cloned() else {
            return None;
        };
        if method == "Serialize" {
            return Some(Value::Task(task));
        }
        let id = args.first().map_or(Value::Unknown, |arg| self.eval(*arg));
        task.stream = super::expr::symbolic(&id, args.first().map_or(0..0, |arg| self.range(*arg)));
        if task.stream.is_none() {
            // What rests on the stream taken is undecided: the op's tasks are named.
            let op = self.gen_task.as_ref().map(|(op, _)| format!("{GE_OP_PREFIX}{op}"));
            self.unresolved_touching(
                function,
                "the task's stream id is not known: it is taken as stream 0",
                op.into_iter().collect(),
            );
        }
        self.store.insert(place, Value::Task(task));
        Some(Value::Int(0))
    }

    /// `context->GetStreamId()` (stream 0) and `context->GetAttachedStreamInfos()`
    /// (attached stream `k` is stream `k + 1`) in a gen-task callback.
    pub(super) fn stream_info(&mut self, method: &str) -> Option<Value> {
        self.gen_task.as_ref()?;
        match method {
            "GetStreamId" => Some(Value::Int(0)),
            "GetAttachedStreamInfos" => {
                let place = self.fresh_place("attached_streams");
                for k in 0..16 {
                    self.store.insert(format!("{place}[{k}].stream_id"), Value::Int(k + 1));
                }
                self.store.insert(format!("{place}.#len"), Value::Int(16));
                Some(Value::Ref(place))
            }
            _ => None,
        }
    }
}

fn context_arg(span: std::ops::Range<usize>) -> ast::Arg {
    ast::Arg {
        name: None,
        value: ast::Expr::name("context", span),
    }
}

fn string_arg(text: &str, span: std::ops::Range<usize>) -> ast::Arg {
    ast::Arg {
        name: None,
        value: ast::Expr {
            kind: ast::ExprKind::Str(text.to_string()),
            span,
        },
    }
}

/// The group names the tasks use: the attributes assumed when no op definition says.
fn group_names(tasks: &[ast::Stmt]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for task in tasks {
        let ast::StmtKind::Call(call) = &task.kind else {
            continue;
        };
        let group = match call.args.get(1).map(|arg| &arg.value.kind) {
            Some(ast::ExprKind::Str(name)) if call.callee.text.contains("Hcom") => name.clone(),
            None if call.callee.text.contains("Hcom") => "group".to_string(),
            _ => continue,
        };
        if !names.contains(&group) {
            names.push(group);
        }
    }
    names
}

/// `MatmulReduceScatter` → `matmul_reduce_scatter`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (position, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if position > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
