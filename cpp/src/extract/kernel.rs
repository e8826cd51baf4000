//! Ascend C kernels (`extern "C" __global__ __aicore__ void k(GM_ADDR x, ...)`) that use
//! SuperKernel early start: the code one core runs, with the kernel class's methods
//! inlined, becomes the sub-kernel of a `.sync` `superkernel`; `GetBlockIdx()` and
//! `TILING_KEY_IS(k)` stay symbolic, so each core and TilingKey takes its own path.
//! Global tensors are the kernel's `GM_ADDR` buffers from the byte their
//! `SetGlobalBuffer` names; local tensors are the core's unified buffer (`UB`).

use syncguard_grammar::ast;
use syncguard_model::api::{self, Api, ArgKind};
use tree_sitter::Node;

use super::value::{Scale, Value};
use super::{Walker, ast_binary};
use crate::fields::FieldChild;
use crate::index::FnDef;

/// What the walk of a kernel collects besides its per-core code.
#[derive(Default)]
pub(super) struct CoreState {
    /// The TilingKeys the kernel tests, in order of appearance.
    tiling_keys: Vec<i64>,
    /// `KERNEL_TYPE_AIV_ONLY`: the kernel runs on the vector cores only.
    vector_only: bool,
}

impl<'u> Walker<'_, 'u> {
    /// One kernel's per-core code as a `subkernel` (and whether it runs on the vector
    /// cores only). Its parameters are buffers from before, one per name in `buffers`
    /// (shared by the kernels of one SuperKernel).
    pub(super) fn subkernel(
        &mut self,
        kernel: &FnDef<'u>,
        buffers: &mut std::collections::HashMap<String, Value>,
    ) -> (ast::Stmt, bool) {
        let span = self.range_in(kernel.unit, kernel.node);
        if self.used_names.insert("stream".into()) {
            self.prelude.push(let_call("stream", "aclrtCreateStream", span.clone()));
        }
        self.enter(kernel);
        self.core = Some(CoreState::default());
        for param in &kernel.params {
            let place = self.declare(&param.name);
            let buffer = match buffers.get(&param.name) {
                Some(buffer) => buffer.clone(),
                None => {
                    let name = self.object_name(&param.name);
                    self.prelude.push(let_call(&name, "existing_memory", span.clone()));
                    let buffer = Value::Buffer {
                        name,
                        offset: 0,
                        scale: Scale::Bytes(1),
                    };
                    buffers.insert(param.name.clone(), buffer.clone());
                    buffer
                }
            };
            self.store.insert(place, buffer);
        }
        self.open_block();
        self.stmt(kernel.body);
        let body = self.close_block();
        let core = self.core.take().unwrap_or_default();
        let keys = if core.tiling_keys.is_empty() {
            vec![0]
        } else {
            core.tiling_keys
        };
        let sub = ast::Stmt {
            kind: ast::StmtKind::SubKernel {
                name: ident(kernel.simple_name(), span.clone()),
                args: vec![named_arg(
                    "tiling_keys",
                    ast::Expr {
                        kind: ast::ExprKind::List(keys.into_iter().map(|k| ast::Expr::int(k, span.clone())).collect()),
                        span: span.clone(),
                    },
                    span.clone(),
                )],
                body: ast::Block {
                    stmts: body,
                    span: span.clone(),
                },
            },
            span,
        };
        (sub, core.vector_only)
    }

    /// `superkernel NAME(stream, aiv: 48) { subkernels }`, emitted.
    pub(super) fn superkernel(
        &mut self,
        name: &str,
        subs: Vec<ast::Stmt>,
        vector_only: bool,
        span: std::ops::Range<usize>,
    ) {
        let mut args = vec![ast::Arg {
            name: None,
            value: ast::Expr::name("stream", span.clone()),
        }];
        if vector_only {
            args.push(named_arg("aiv", ast::Expr::int(48, span.clone()), span.clone()));
        }
        self.emit(
            ast::StmtKind::SuperKernel {
                name: ident(name, span.clone()),
                args,
                body: ast::Block {
                    stmts: subs,
                    span: span.clone(),
                },
            },
            span,
        );
    }

    /// Kernel code's own calls: the core index, TilingKeys, per-core APIs, global and
    /// local tensors. `None` for calls walked as usual.
    pub(super) fn core_call(
        &mut self,
        node: Node<'u>,
        function: Node<'u>,
        name: &str,
        simple: &str,
        args: &[Node<'u>],
    ) -> Option<Value> {
        if self.aicore.is_some()
            && let Some(value) = self.aicore_call(node, function, name, simple, args)
        {
            return Some(value);
        }
        let span = self.range(node);
        match simple {
            "GetBlockIdx" => return Some(Value::Sym(call_expr("GetBlockIdx", Vec::new(), span))),
            "TILING_KEY_IS" => {
                let key = args.first().and_then(|arg| self.eval(*arg).int());
                // `aicore`: a key of no known value (a constant of a header not read)
                // leaves the branch a choice, as any condition of no known value.
                let key = match key {
                    None if self.aicore.is_some() => return Some(Value::Unknown),
                    key => key?,
                };
                if let Some(core) = self.core.as_mut()
                    && !core.tiling_keys.contains(&key)
                {
                    core.tiling_keys.push(key);
                }
                return Some(Value::Sym(call_expr(
                    "TILING_KEY_IS",
                    vec![ast::Expr::int(key, span.clone())],
                    span,
                )));
            }
            "KERNEL_TASK_TYPE_DEFAULT" => {
                if self.text(node).contains("AIV_ONLY")
                    && let Some(core) = self.core.as_mut()
                {
                    core.vector_only = true;
                }
                return Some(Value::Int(0));
            }
            // Local tensors live in the core's unified buffer.
            "AllocTensor" | "DeQue" | "Get" => return Some(Value::Sym(ast::Expr::name("UB", span))),
            "SetGlobalBuffer" => {
                let base = function.field_child("argument")?;
                let place = self.place_of(base)?;
                let value = args.first().map_or(Value::Unknown, |arg| self.eval(*arg));
                self.store.insert(place, value);
                return Some(Value::Int(0));
            }
            _ => {}
        }
        let api = api::lookup(name).or_else(|| api::lookup(&format!("AscendC::{simple}")))?;
        if api.place != api::Place::Core {
            return None;
        }
        Some(self.core_api(node, function, api, args))
    }

    /// `AscendC::SetNextTaskStart<...>()`, `WaitPreTaskEnd()`, `DataCopy(dst, src, count)`.
    fn core_api(&mut self, node: Node<'u>, function: Node<'u>, api: &'static Api, args: &[Node<'u>]) -> Value {
        self.api_calls += 1;
        let mut converted = Vec::new();
        if api.params.iter().any(|param| param.kind == ArgKind::CoreMem) {
            let count = args.get(2).map_or(Value::Unknown, |arg| self.eval(*arg));
            for arg in args.iter().take(2) {
                let value = self.eval(*arg);
                match core_memory(&value, &count, self.range(*arg)) {
                    Some(expr) => converted.push(ast::Arg {
                        name: None,
                        value: expr,
                    }),
                    None => {
                        self.unresolved(
                            *arg,
                            format!("`{}` is left out: the global range it copies is not known", api.name),
                        );
                        return Value::Unknown;
                    }
                }
            }
        }
        let mut call = self.ast_call(api.name, node, converted, Vec::new());
        call.generics = match self.template_arguments(api, function) {
            Ok(generics) => generics,
            Err(note) => {
                self.unresolved(node, note);
                return Value::Int(0);
            }
        };
        let span = call.span.clone();
        self.emit(ast::StmtKind::Call(call), span);
        Value::Int(0)
    }
}

/// One side of a `DataCopy`: a global tensor position as the byte slice `count`
/// elements long, anything else the unified buffer.
fn core_memory(value: &Value, count: &Value, span: std::ops::Range<usize>) -> Option<ast::Expr> {
    let (name, start, scale) = match value {
        Value::Buffer { name, offset, scale } => (name, ast::Expr::int(*offset, span.clone()), scale),
        Value::SymBuffer { name, offset, scale } => (name, offset.clone(), scale),
        _ => return Some(ast::Expr::name("UB", span)),
    };
    let count = super::expr::symbolic(count, span.clone())?;
    let size = scale
        .expr(span.clone())
        .unwrap_or_else(|| ast::Expr::int(0, span.clone()));
    let length = ast_binary(ast::BinaryOp::Mul, count, size);
    let end = ast_binary(ast::BinaryOp::Add, start.clone(), length);
    Some(super::byte_slice(ast::Expr::name(name, span.clone()), start, end, span))
}

impl<'u> Walker<'_, 'u> {
    /// `SetNextTaskStart<PIPE_MTE3, PIPE_FIX, true>`: the template arguments, pipes as
    /// names and `FORCE` as a `.sync` boolean (`true`, or a constant that evaluates);
    /// `Err` with a note when `FORCE` has no value.
    fn template_arguments(&mut self, api: &Api, function: Node<'u>) -> Result<Option<Vec<ast::Expr>>, String> {
        let Some(list) = template_argument_list(function) else {
            return Ok(None);
        };
        let mut cursor = list.walk();
        let args: Vec<Node<'u>> = list.named_children(&mut cursor).collect();
        let mut generics = Vec::new();
        for (position, arg) in args.into_iter().enumerate() {
            let span = self.range(arg);
            if api.generics.get(position) != Some(&"FORCE") {
                generics.push(ast::Expr::name(self.text(arg).trim(), span));
                continue;
            }
            // A constant's name parses as a type (`type_descriptor`): looked up by name.
            let text = self.text(arg).trim();
            let value = match text {
                "true" => Some(true),
                "false" => Some(false),
                _ => self
                    .eval(arg)
                    .truth()
                    .or_else(|| self.named_constant(text).map(|value| value != 0)),
            };
            let Some(force) = value else {
                return Err(format!(
                    "`{}` is left out: its `FORCE` (`{}`) has no value the extractor can follow",
                    api.name,
                    self.text(arg).trim()
                ));
            };
            generics.push(ast::Expr {
                kind: ast::ExprKind::Bool(force),
                span,
            });
        }
        Ok(Some(generics))
    }
}

/// The `<...>` of a call's template function, where it has one.
pub(super) fn template_argument_list(function: Node) -> Option<Node> {
    let mut stack = vec![function];
    while let Some(node) = stack.pop() {
        if node.kind() == "template_argument_list" {
            return Some(node);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    None
}

fn call_expr(name: &str, args: Vec<ast::Expr>, span: std::ops::Range<usize>) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Call(Box::new(ast::Call {
            callee: ast::Path {
                text: name.into(),
                span: span.clone(),
            },
            generics: None,
            args: args.into_iter().map(|value| ast::Arg { name: None, value }).collect(),
            span: span.clone(),
        })),
        span,
    }
}

pub(super) fn let_call(name: &str, api: &str, span: std::ops::Range<usize>) -> ast::Stmt {
    ast::Stmt {
        kind: ast::StmtKind::Let {
            pattern: ast::Pattern::Name(ident(name, span.clone())),
            value: call_expr(api, Vec::new(), span.clone()),
        },
        span,
    }
}

fn named_arg(label: &str, value: ast::Expr, span: std::ops::Range<usize>) -> ast::Arg {
    ast::Arg {
        name: Some(ident(label, span)),
        value,
    }
}

fn ident(name: &str, span: std::ops::Range<usize>) -> ast::Ident {
    ast::Ident {
        name: super::value::identifier(name),
        span,
    }
}
