//! Catalogued API calls and kernel launches, as `.sync` statements: the C argument list
//! (with its output parameters) to the catalogue's parameters, each value to `.sync`
//! syntax. Objects the code receives from outside (entry parameters, globals) become
//! objects from before, declared at the top of the program.

use syncguard_grammar::ast;
use syncguard_model::api::{Api, ArgKind, Creates, Effect, EnumFamily, Param, QueryCompletion};
use syncguard_model::reading_rules::failure_changes_synchronization;
use tree_sitter::Node;

use super::value::{Scale, Value};
use super::{Walker, ast_binary};

/// The `.sync` names of the objects among a call's argument values.
fn object_names(values: &[Value]) -> Vec<String> {
    values.iter().flat_map(Value::object_names).collect()
}

use crate::fields::FieldChild;
/// The size taken for memory whose size the code does not show (1 TiB): larger than any
/// real allocation, so no copy into it is reported as too long.
use syncguard_model::model::UNKNOWN_SIZE;

impl<'u> Walker<'_, 'u> {
    pub(super) fn api_call(&mut self, node: Node<'u>, api: &'static Api, args: &[Node<'u>]) -> Value {
        let before = self.api_calls;
        let value = self.api_call_followed(node, api, args);
        // A call left out (its note says why) still synchronizes: its entry point is
        // checked and the note listed. Not the C library's `malloc`/`free`, which are
        // catalogued only so that host buffers are followed.
        if self.api_calls == before && !matches!(api.name, "malloc" | "free") {
            self.api_calls += 1;
        }
        value
    }

    /// A catalogued call as a `.sync` statement (counted in `api_calls`), or left out
    /// with a note.
    fn api_call_followed(&mut self, node: Node<'u>, api: &'static Api, args: &[Node<'u>]) -> Value {
        if let Some(expectation) = self.expected_to_fail(node) {
            // The code states the call fails: it changes nothing, and its code is no success.
            let expectation = expectation.split_whitespace().collect::<Vec<_>>().join(" ");
            self.unresolved(
                node,
                format!(
                    "`{}` is left out: the code expects it to fail (`{expectation}`)",
                    api.name
                ),
            );
            return Value::Unknown;
        }
        if let Effect::BatchMode { start } = api.effect
            && let Some(note) = self.batch_from_before(start, args.first().copied())
        {
            self.unresolved(node, format!("`{}` is left out: {note}", api.name));
            return self.call_result();
        }
        let params: Vec<_> = api.positional_params().collect();
        let outputs = output_positions(self, api, args, params.len());
        if self.is_discarded(node)
            && failure_changes_synchronization(api)
            && !outputs
                .first()
                .is_some_and(|&at| self.null_checked_next(node, args[at]))
            && !self.last_error_checked_next(node, api)
        {
            let range = self.range(node);
            if !self.unchecked.iter().any(|(seen, _)| *seen == range) {
                self.unchecked.push((range, api));
            }
        }
        let inputs: Vec<Node<'u>> = args
            .iter()
            .enumerate()
            .filter(|(position, _)| !outputs.contains(position))
            .map(|(_, arg)| *arg)
            .collect();
        let values: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(position, arg)| match params.get(position) {
                Some(param) => self.eval_argument(param.kind, *arg),
                None => self.eval(*arg),
            })
            .collect();
        let count_of = |name: &str| {
            let position = params.iter().position(|param| param.name == name)?;
            values.get(position).and_then(Value::int)
        };
        let channel_count = count_of("channelNum");
        let created_count = count_of("threadNum").or(channel_count);
        let mut converted = Vec::new();
        for ((param, arg), value) in params.iter().zip(&inputs).zip(&values) {
            if param.kind == ArgKind::ChannelDescs {
                match self.channel_descs(value, channel_count, self.range(*arg)) {
                    Some(expr) => {
                        converted.push(ast::Arg {
                            name: None,
                            value: expr,
                        });
                        continue;
                    }
                    None => {
                        self.unresolved_touching(
                            *arg,
                            format!("`{}` is left out: its channel descriptors are not known", api.name),
                            object_names(&values),
                        );
                        return Value::Int(0);
                    }
                }
            }
            let expr = match (param.kind, value) {
                (ArgKind::Int, Value::Unknown) => self.unknown_int(api, param, *arg, &values),
                _ => self
                    .argument(param.kind, *arg, value)
                    .map_err(|why| format!("`{}` is left out: its `{}` {why}", api.name, param.name)),
            };
            match expr {
                Ok(expr) => converted.push(ast::Arg {
                    name: None,
                    value: expr,
                }),
                Err(note) => {
                    self.unresolved_touching(*arg, note, object_names(&values));
                    return Value::Int(0);
                }
            }
        }
        if inputs.len() > params.len() {
            self.unresolved_touching(
                node,
                format!(
                    "`{}` takes {} arguments besides its outputs: the call is left out",
                    api.name,
                    params.len()
                ),
                object_names(&values),
            );
            return Value::Int(0);
        }
        let call = self.ast_call(api.name, node, converted, Vec::new());
        let target = outputs.first().and_then(|&position| self.output_place(args[position]));
        match (api.creates, target) {
            (Creates::Nothing, _) => {
                self.api_calls += 1;
                self.emit(ast::StmtKind::Call(call), self.range(node));
            }
            (creates, Some(place)) => {
                self.api_calls += 1;
                let name = self.object_name(&place);
                self.record_written(&name, args[outputs[0]]);
                let span = self.range(args[outputs[0]]);
                self.emit(
                    ast::StmtKind::Let {
                        pattern: ast::Pattern::Name(ast::Ident {
                            name: name.clone(),
                            span,
                        }),
                        value: ast::Expr {
                            span: call.span.clone(),
                            kind: ast::ExprKind::Call(Box::new(call)),
                        },
                    },
                    self.range(node),
                );
                if matches!(creates, Creates::HcclThreads | Creates::Channels) {
                    self.store_handle_array(&place, &name, created_count);
                    return Value::Int(0);
                }
                let value = if is_memory(creates) {
                    let size = values.first().and_then(Value::int).unwrap_or(UNKNOWN_SIZE);
                    self.store.insert(format!("{name}.#size"), Value::Int(size));
                    let scale = self
                        .store
                        .get(&format!("{place}.#elem"))
                        .and_then(Value::int)
                        .map_or(Scale::Bytes(1), Scale::Bytes);
                    Value::Buffer { name, offset: 0, scale }
                } else {
                    Value::Handle(name)
                };
                self.store.insert(place, value);
            }
            (_, None) => {
                self.unresolved(
                    node,
                    format!(
                        "`{}` creates an object into a place the extractor cannot follow",
                        api.name
                    ),
                );
            }
        }
        self.call_result()
    }

    /// Where an output argument (`&ev`, `out`, `threads`) puts what the call creates.
    pub(super) fn output_place(&mut self, arg: Node<'u>) -> Option<String> {
        let arg = strip_casts(arg);
        if arg.kind() == "pointer_expression" && self.text(arg).starts_with('&') {
            return self.place_of(arg.field_child("argument")?);
        }
        match self.eval(arg) {
            Value::Ref(place) => Some(place),
            _ => self.place_of(arg),
        }
    }

    /// One argument as `.sync` syntax, or why it cannot be.
    fn argument(&mut self, kind: ArgKind, arg: Node<'u>, value: &Value) -> Result<ast::Expr, String> {
        let span = self.range(arg);
        match (kind, value) {
            (ArgKind::Stream, Value::Null | Value::Int(0)) => Ok(ast::Expr {
                kind: ast::ExprKind::Null,
                span,
            }),
            (
                ArgKind::Stream
                | ArgKind::Event
                | ArgKind::Notify
                | ArgKind::Comm
                | ArgKind::Context
                | ArgKind::Graph
                | ArgKind::GraphExec
                | ArgKind::Channel
                | ArgKind::Thread,
                Value::Handle(name),
            ) => Ok(ast::Expr::name(name, span)),
            (ArgKind::Ptr, Value::Buffer { name, offset, .. }) => Ok(pointer(name, *offset, span)),
            (ArgKind::Ptr, Value::SymBuffer { name, offset, .. }) => Ok(ast_binary(
                ast::BinaryOp::Add,
                ast::Expr::name(name, span),
                offset.clone(),
            )),
            // A handle array's element (`workers[2]`), an index over `rank`.
            (
                ArgKind::Stream
                | ArgKind::Event
                | ArgKind::Notify
                | ArgKind::Channel
                | ArgKind::Thread
                | ArgKind::Int
                | ArgKind::Timeout(_),
                Value::Sym(expr),
            ) => Ok(expr.clone()),
            (ArgKind::Int | ArgKind::Timeout(_) | ArgKind::Flags, Value::Int(value)) => {
                Ok(ast::Expr::int(*value, span))
            }
            (ArgKind::Flags, Value::Sym(expr)) => Ok(expr.clone()),
            // One of the family's names, or a number where the catalogue says which
            // name has it; anything else is no constant the lowering could read.
            (ArgKind::Enum(family), Value::Sym(expr)) if names_constant_of(expr, family) => Ok(expr.clone()),
            (ArgKind::Enum(family), Value::Int(value)) if enum_constant(family, *value).is_some() => {
                Ok(ast::Expr::name(enum_constant(family, *value).unwrap_or_default(), span))
            }
            (ArgKind::Enum(_), Value::Sym(_) | Value::Int(_)) => Err(format!(
                "(`{}`) is not a constant the catalogue names",
                self.text(arg).trim()
            )),
            (ArgKind::Timeout(_) | ArgKind::Flags, Value::Unknown) => Ok(ast::Expr::int(0, span)),
            (ArgKind::Str | ArgKind::Function, Value::Str(text)) => Ok(ast_str(text, span)),
            (ArgKind::Str | ArgKind::Function, _) => Ok(ast_str(self.text(arg), span)),
            (ArgKind::Opaque, _) => Ok(ast::Expr::int(0, span)),
            (kind, Value::Unknown) => self
                .object_from_before(kind, arg)
                .ok_or_else(|| "has no value the extractor can follow".into()),
            (kind, _) => Err(format!("is not a {} the extractor can follow", kind.noun())),
        }
    }

    /// `descs.data()` after a loop filled `descs[i].remoteRank = ...`: the list of
    /// `{ field: value }` descriptors (one struct for one channel), from what the code
    /// stored in each element.
    fn channel_descs(&self, value: &Value, count: Option<i64>, span: std::ops::Range<usize>) -> Option<ast::Expr> {
        let Value::Ref(place) = value else { return None };
        let count = count?;
        let element = |prefix: &str| -> Option<ast::Expr> {
            let mut fields: Vec<(&str, ast::Expr)> = self
                .store
                .under(prefix)
                .filter_map(|(key, value)| {
                    let field = key.strip_prefix(prefix)?.strip_prefix('.')?;
                    // `#len`, `#size`: the extractor's own bookkeeping, not fields.
                    (!field.contains(['.', '[']) && !field.starts_with('#')).then_some(())?;
                    Some((field, super::expr::symbolic(value, span.clone())?))
                })
                .collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            (!fields.is_empty()).then(|| ast::Expr {
                kind: ast::ExprKind::Struct(
                    fields
                        .into_iter()
                        .map(|(name, value)| ast::Field {
                            name: ast::Ident {
                                name: name.to_string(),
                                span: span.clone(),
                            },
                            value,
                        })
                        .collect(),
                ),
                span: span.clone(),
            })
        };
        // `&desc`: one descriptor, stored at the place itself.
        if let Some(single) = element(place).filter(|_| count == 1) {
            return Some(single);
        }
        let items: Option<Vec<ast::Expr>> = (0..count.clamp(0, 1 << 16))
            .map(|k| element(&format!("{place}[{k}]")))
            .collect();
        let mut items = items?;
        if items.len() == 1 {
            return items.pop();
        }
        Some(ast::Expr {
            kind: ast::ExprKind::List(items),
            span,
        })
    }

    /// Threads or channels created into an array: the `.sync` name is the array when
    /// there are several, each element `name[k]`; the handle itself when there is one.
    fn store_handle_array(&mut self, place: &str, name: &str, count: Option<i64>) {
        let span = 0..0;
        match count {
            Some(1) | None => {
                self.store
                    .insert(format!("{place}[0]"), Value::Handle(name.to_string()));
                if !self.store.get(place).is_some_and(|v| matches!(v, Value::Ref(_))) {
                    self.store.insert(place.to_string(), Value::Handle(name.to_string()));
                }
            }
            Some(count) => {
                for k in 0..count.clamp(0, 1 << 16) {
                    let element = ast::Expr {
                        kind: ast::ExprKind::Index {
                            base: Box::new(ast::Expr::name(name, span.clone())),
                            index: Box::new(ast::Expr::int(k, span.clone())),
                        },
                        span: span.clone(),
                    };
                    self.store.insert(format!("{place}[{k}]"), Value::Sym(element));
                }
            }
        }
    }

    /// An integer argument with no value the extractor can follow. A size or length of
    /// memory (a copy's count, an allocation's size) moves the space left in the call's
    /// buffers, as documented; a parameter the model does not read (a memset's fill byte,
    /// a launch's block count) is written 0, on which no finding depends. Any other
    /// number would be a guess the findings rest on, so the call is left out instead
    /// (`Err` holds the note): for a device id, the thread stays on its device.
    fn unknown_int(&mut self, api: &Api, param: &Param, arg: Node<'u>, values: &[Value]) -> Result<ast::Expr, String> {
        let span = self.range(arg);
        match int_role(api, param) {
            IntRole::Size => Ok(ast::Expr::int(self.size_fallback(values), span)),
            IntRole::Unread => Ok(ast::Expr::int(0, span)),
            IntRole::Device => Err(format!(
                "`{}` is left out: its device `{}` has no value the extractor can follow{}",
                api.name,
                self.text(arg).trim(),
                if api.effect == Effect::SetDevice {
                    "; the thread is taken to stay on its device (the rank's own)"
                } else {
                    ""
                }
            )),
            IntRole::Read => Err(format!(
                "`{}` is left out: its `{}` (`{}`) has no value the extractor can follow",
                api.name,
                param.name,
                self.text(arg).trim()
            )),
        }
    }

    /// The smallest space left in the call's buffers: the count a copy of unknown size
    /// is taken to move.
    fn size_fallback(&self, values: &[Value]) -> i64 {
        values
            .iter()
            .filter_map(|value| match value {
                Value::Buffer { name, offset, .. } => self
                    .store
                    .get(&format!("{name}.#size"))
                    .and_then(Value::int)
                    .map(|size| size.saturating_sub(*offset).max(1)),
                _ => None,
            })
            .min()
            .unwrap_or(UNKNOWN_SIZE)
    }

    /// `k<<<grid, block, smem, stream>>>(args)` (CUDA), `k<<<blockDim, l2ctrl,
    /// stream>>>(args)` (Ascend C) or `k<<<blocks, threads, dynUbuf, stream>>>(args)`
    /// (an Ascend C SIMT kernel): a kernel on the stream that reads and writes the
    /// buffers it is given, as its visible definition shows (written through a
    /// non-`const` pointer it assigns through, read otherwise); without a definition,
    /// every buffer argument is read and written.
    pub(super) fn launch(
        &mut self,
        node: Node<'u>,
        kernel: Node<'u>,
        config_call: Node<'u>,
        args: &[Node<'u>],
    ) -> Value {
        let config: Vec<Node<'u>> = config_call
            .field_child("arguments")
            .map(|list| {
                let mut cursor = list.walk();
                list.named_children(&mut cursor).collect()
            })
            .unwrap_or_default();
        self.api_calls += 1;
        let stream = match launch_stream_position(self.source_unit().0.cuda, config.len()).and_then(|at| config.get(at))
        {
            Some(stream) => {
                let value = self.eval_argument(ArgKind::Stream, *stream);
                match self.argument(ArgKind::Stream, *stream, &value) {
                    Ok(expr) => expr,
                    Err(why) => {
                        self.unresolved(*stream, format!("the launch is left out: its stream {why}"));
                        return Value::Unknown;
                    }
                }
            }
            None => ast::Expr {
                kind: ast::ExprKind::Null,
                span: self.range(kernel),
            },
        };
        let kernel_name = self.text(kernel).trim().to_string();
        let from = self.scope_unit();
        let simple_kernel = kernel_name.rsplit("::").next().unwrap_or_default();
        let definition = self
            .index
            .lookup_from(from, simple_kernel)
            .find(|def| def.kernel || def.params.len() == args.len())
            .cloned();
        let prototype = self.index.prototype_from(from, simple_kernel);
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for (position, arg) in args.iter().enumerate() {
            let value = self.eval(*arg);
            let Value::Buffer { name, offset, .. } = &value else {
                continue;
            };
            let range = self.kernel_argument_slice(*arg, name, *offset);
            let access = match (&definition, prototype) {
                (Some(def), _) => Some(kernel_access(self.index, def, position)),
                // A declaration shows only `const`: what is not const is written.
                (None, Some(params)) => params
                    .get(position)
                    .map(|param| match (param.indirect, param.is_const) {
                        (false, _) => Access::None,
                        (true, true) => Access::Read,
                        (true, false) => Access::Write,
                    }),
                (None, None) => None,
            };
            match access {
                Some(Access::Read) => reads.push(range),
                Some(Access::Write) => writes.push(range),
                Some(Access::None) => {}
                None => {
                    reads.push(range.clone());
                    writes.push(range);
                }
            }
        }
        let span = self.range(node);
        let mut named = Vec::new();
        for (label, ranges) in [("reads", reads), ("writes", writes)] {
            if !ranges.is_empty() {
                named.push(ast::Arg {
                    name: Some(ast::Ident {
                        name: label.into(),
                        span: span.clone(),
                    }),
                    value: ast::Expr {
                        kind: ast::ExprKind::List(ranges),
                        span: span.clone(),
                    },
                });
            }
        }
        let positional = vec![
            ast::Arg {
                name: None,
                value: stream,
            },
            ast::Arg {
                name: None,
                value: ast_str(&kernel_name, self.range(kernel)),
            },
        ];
        let call = self.ast_call("kernel", node, positional, named);
        self.emit(ast::StmtKind::Call(call), span);
        Value::Unknown
    }

    /// A buffer from `offset` to its end (the whole buffer at offset 0).
    pub(super) fn buffer_slice(&self, name: &str, offset: i64, span: std::ops::Range<usize>) -> ast::Expr {
        let size = self.store.get(&format!("{name}.#size")).and_then(Value::int);
        if offset == 0 {
            return ast::Expr::name(name, span);
        }
        let end = size.unwrap_or(UNKNOWN_SIZE).max(offset + 1);
        ast::Expr {
            kind: ast::ExprKind::Slice {
                base: Box::new(ast::Expr::name(name, span.clone())),
                range: ast::RangeExpr {
                    start: Box::new(ast::Expr::int(offset, span.clone())),
                    end: Some(Box::new(ast::Expr::int(end, span.clone()))),
                    inclusive: false,
                    span: span.clone(),
                },
            },
            span,
        }
    }

    /// The host reads or writes a buffer directly (`h[i]`, `*h = x`, a loop over it).
    pub(super) fn host_access(&mut self, node: Node<'u>, buffer: &Value, write: bool) {
        if self.aicore.is_some() {
            // Kernel code: a scalar access of global or local memory.
            self.scalar_memory_access(node, buffer, write);
            return;
        }
        let Value::Buffer { name, offset, .. } = buffer else {
            return;
        };
        let span = self.range(node);
        let range = self.buffer_slice(name, *offset, span.clone());
        let api = if write { "host_write" } else { "host_read" };
        let call = self.ast_call(
            api,
            node,
            vec![ast::Arg {
                name: None,
                value: range,
            }],
            Vec::new(),
        );
        self.emit(ast::StmtKind::Call(call), span);
    }

    pub(super) fn ast_call(&self, name: &str, node: Node<'u>, args: Vec<ast::Arg>, named: Vec<ast::Arg>) -> ast::Call {
        let span = self.range(node);
        let callee_span = node
            .field_child("function")
            .map_or(span.clone(), |function| self.range(function));
        ast::Call {
            callee: ast::Path {
                text: name.to_string(),
                span: callee_span,
            },
            generics: None,
            args: args.into_iter().chain(named).collect(),
            span,
        }
    }

    /// A loop that polls a query until the work is done (`while (aclrtQueryEventStatus(
    /// ev, &status) ... != COMPLETE)`, or a `do` loop around the query): written as the
    /// `.sync` busy-wait, which orders what follows after the work.
    pub(super) fn busy_wait(&mut self, node: Node<'u>, condition: Option<Node<'u>>, body: Option<Node<'u>>) -> bool {
        let mut queries = Vec::new();
        let mut other_calls = false;
        for part in [condition, body].into_iter().flatten() {
            for call in calls_in(part) {
                let name = self.text(call.field_child("function").unwrap_or(call));
                match syncguard_model::api::lookup(name.trim()) {
                    Some(api) if api.query.is_some() => queries.push((call, api)),
                    Some(api) if api.effect != Effect::None => other_calls = true,
                    _ => {}
                }
            }
        }
        let [(query, api)] = queries[..] else { return false };
        if other_calls {
            return false;
        }
        let Some(arguments) = query.field_child("arguments") else {
            return false;
        };
        self.api_calls += 1;
        let mut cursor = arguments.walk();
        let args: Vec<Node<'u>> = arguments.named_children(&mut cursor).collect();
        let mut converted = Vec::new();
        for (param, arg) in api.positional_params().filter(|p| !p.optional).zip(&args) {
            let value = self.eval(*arg);
            match self.argument(param.kind, *arg, &value) {
                Ok(expr) => converted.push(ast::Arg {
                    name: None,
                    value: expr,
                }),
                Err(why) => {
                    self.unresolved(
                        *arg,
                        format!("the polling loop is left out: its `{}` {why}", param.name),
                    );
                    return true;
                }
            }
        }
        let done = match api.query {
            Some(QueryCompletion::Status { name, .. }) => name,
            _ => "cudaSuccess",
        };
        let span = self.range(node);
        let call = self.ast_call(api.name, query, converted, Vec::new());
        let cond = ast_binary(
            ast::BinaryOp::Ne,
            ast::Expr {
                span: call.span.clone(),
                kind: ast::ExprKind::Call(Box::new(call)),
            },
            ast::Expr::name(done, span.clone()),
        );
        self.emit(
            ast::StmtKind::While {
                cond,
                body: ast::Block {
                    stmts: Vec::new(),
                    span: span.clone(),
                },
            },
            span,
        );
        true
    }

    /// A loop that calls nothing (it computes on host data): not unrolled; the buffers
    /// it indexes are read or written by the host once, as a whole.
    pub(super) fn is_data_loop(&self, body: Node<'u>) -> bool {
        // Casts written as calls (`static_cast<float>(i)`) compute, they call nothing;
        // printing a mismatch (`printf`, a log macro) does nothing to synchronization.
        let real_call = |call: &Node| {
            let function = call.field_child("function");
            let callee = function.map_or("", |f| self.text(f));
            // `float(i)`: a conversion written as a call.
            let conversion = function.is_some_and(|f| f.kind() == "primitive_type");
            !conversion
                && !["static_cast", "reinterpret_cast", "const_cast"]
                    .iter()
                    .any(|cast| callee.starts_with(cast))
                && !super::expr::is_harmless(callee.trim())
        };
        if calls_in(body).iter().any(real_call) {
            return false;
        }
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            if matches!(node.kind(), "subscript_expression" | "pointer_expression")
                && let Some(base) = node.field_child("argument")
                && base.kind() == "identifier"
                && let Some(place) = self.lookup_local(self.text(base))
                && matches!(self.store.get(&place), Some(Value::Buffer { .. }))
            {
                return true;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        false
    }

    pub(super) fn data_loop(&mut self, body: Node<'u>) {
        let mut stack = vec![body];
        let mut touched: Vec<(Node<'u>, Value, bool)> = Vec::new();
        while let Some(node) = stack.pop() {
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
            let written = |node: Node| {
                node.parent().is_some_and(|parent| {
                    matches!(parent.kind(), "assignment_expression" | "update_expression")
                        && parent.field_child("left").is_none_or(|left| left == node)
                })
            };
            match node.kind() {
                "subscript_expression" | "pointer_expression" => {
                    let Some(base) = node.field_child("argument") else {
                        continue;
                    };
                    if node.kind() == "pointer_expression" && self.text(node).starts_with('&') {
                        continue;
                    }
                    if base.kind() != "identifier" {
                        continue;
                    }
                    let value = self
                        .lookup_local(self.text(base))
                        .and_then(|place| self.store.get(&place).cloned());
                    if let Some(value @ Value::Buffer { .. }) = value {
                        let write = written(node);
                        if !touched.iter().any(|(_, v, w)| *v == value && *w == write) {
                            touched.push((node, value, write));
                        }
                    }
                }
                // Variables the loop changes have no known value after it.
                "assignment_expression" | "update_expression" => {
                    let target = node.field_child("left").or_else(|| node.field_child("argument"));
                    if let Some(target) = target
                        && target.kind() == "identifier"
                        && let Some(place) = self.lookup_local(self.text(target))
                    {
                        self.store.insert(place, Value::Unknown);
                    }
                }
                _ => {}
            }
        }
        touched.sort_by_key(|(node, _, _)| node.start_byte());
        for (node, value, write) in touched {
            self.host_access(node, &value, write);
        }
    }
}

/// Whether `expr` is a name of `family` (`ACL_MEMCPY_HOST_TO_DEVICE`).
fn names_constant_of(expr: &ast::Expr, family: EnumFamily) -> bool {
    matches!(&expr.kind, ast::ExprKind::Name(path) if family.constants().contains(&path.text.rsplit("::").next().unwrap_or(&path.text)))
}

/// The constant of `family` whose value is `value`, for the families whose constants
/// the catalogue lists in value order (`CommEngine`, the stream failure and capture
/// modes); `None` for the others, whose numbers it does not know.
fn enum_constant(family: EnumFamily, value: i64) -> Option<&'static str> {
    let by_position = matches!(
        family,
        EnumFamily::Engine | EnumFamily::StreamFailureMode | EnumFamily::CaptureMode
    );
    let position = usize::try_from(value).ok().filter(|_| by_position)?;
    family.constants().get(position).copied()
}

/// Which launch configuration argument is the stream, if one is: CUDA's fourth
/// (`<<<grid, block, smem, stream>>>`); Ascend C's last of three (`<<<blockDim,
/// l2ctrl, stream>>>`) or, for a SIMT kernel, of four (`<<<blocks, threads, dynUbuf,
/// stream>>>`). Without it the launch is on the default stream.
fn launch_stream_position(cuda: bool, count: usize) -> Option<usize> {
    match (cuda, count) {
        (true, _) => Some(3),
        (false, 3 | 4) => Some(count - 1),
        (false, _) => None,
    }
}

/// What an integer parameter of the catalogue means to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IntRole {
    /// A size or length of memory (`SIZE_PARAMS`): with no value, the space left in the
    /// call's buffers.
    Size,
    /// A device (`aclrtSetDevice`, `aclrtResetDevice`, `cudaSetDevice`).
    Device,
    /// A parameter no op of the model reads.
    Unread,
    /// Anything else: an index, a count of objects, a rank, a value waited for.
    Read,
}

/// Sizes and lengths of memory, by the catalogue's parameter names: one length each.
/// A 2D copy's width, height and pitches are not: with no value, the space left in its
/// buffers is no row length, and their product is nothing the call moves.
const SIZE_PARAMS: &[&str] = &["size", "len", "count", "destMax", "dest_max", "maxCount"];

/// Parameters the model's ops do not read: a stream's priority, a launch's block count
/// and argument size, its dynamic shared memory.
const UNREAD_PARAMS: &[&str] = &["priority", "numBlocks", "argsSize", "sharedMem"];

fn int_role(api: &Api, param: &Param) -> IntRole {
    if api.effect == Effect::SetDevice
        || (matches!(param.name, "deviceId" | "device") && api.creates != Creates::Context)
    {
        return IntRole::Device;
    }
    if SIZE_PARAMS.contains(&param.name) {
        return IntRole::Size;
    }
    let unread = UNREAD_PARAMS.contains(&param.name)
        // A call with no effect (`aclrtIpcMemSetImportPid`), a context (made on any
        // device), a memset's fill byte: the model keeps no value of them.
        || api.effect == Effect::None
        || api.creates == Creates::Context
        || (matches!(api.effect, Effect::Memset { .. }) && param.name == "value");
    if unread { IntRole::Unread } else { IntRole::Read }
}

/// How a kernel uses one parameter.
enum Access {
    Read,
    Write,
    None,
}

fn kernel_access(index: &crate::index::Index, definition: &crate::index::FnDef, position: usize) -> Access {
    let Some(param) = definition.params.get(position) else {
        return Access::None;
    };
    if !param.indirect {
        return Access::None;
    }
    if param.is_const {
        return Access::Read;
    }
    let unit = index.unit(definition.unit);
    let mut stack = vec![definition.body];
    while let Some(node) = stack.pop() {
        if matches!(node.kind(), "assignment_expression" | "update_expression")
            && let Some(target) = node.field_child("left").or_else(|| node.field_child("argument"))
            && mentions(unit, target, &param.name)
        {
            return Access::Write;
        }
        // Handing the pointer on (`SetGlobalBuffer(x)`, a device helper) may write.
        if node.kind() == "call_expression"
            && let Some(arguments) = node.field_child("arguments")
            && mentions(unit, arguments, &param.name)
        {
            return Access::Write;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    Access::Read
}

fn mentions(unit: &crate::index::Unit, node: Node, name: &str) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" && unit.text_of(node) == name {
            return true;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    false
}

/// Which arguments are outputs (`aclrtEvent *event`), which the `.sync` form binds
/// with `let` instead of passing: those beyond the catalogue's parameters, preferring
/// `&x` arguments; handle arrays (`HcclThreadAcquire`'s `threads`) come last.
fn output_positions(walker: &Walker, api: &Api, args: &[Node], params: usize) -> Vec<usize> {
    let extra = args.len().saturating_sub(params);
    if extra == 0 {
        return Vec::new();
    }
    let addressed: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(_, arg)| {
            let arg = strip_casts(**arg);
            arg.kind() == "pointer_expression" && walker.text(arg).starts_with('&')
        })
        .map(|(position, _)| position)
        .collect();
    // HCCL returns its arrays (and a single `&channel`) last, after descriptors that
    // are passed by address too.
    if matches!(api.creates, Creates::HcclThreads | Creates::Channels) {
        return (args.len() - extra..args.len()).collect();
    }
    if addressed.len() >= extra {
        return addressed[..extra].to_vec();
    }
    (0..extra).collect()
}

fn is_memory(creates: Creates) -> bool {
    matches!(
        creates,
        Creates::DeviceBuffer
            | Creates::PitchedDeviceBuffer
            | Creates::HostBuffer
            | Creates::PageableHostBuffer
            | Creates::HcclLocalBuffer
            | Creates::HcclPeerBuffer
            | Creates::IpcMemory
    )
}

/// `(void **)&p`, `reinterpret_cast<void **>(&p)`: the expression inside.
pub(super) fn strip_casts(mut node: Node) -> Node {
    for _ in 0..16 {
        node = match node.kind() {
            "cast_expression" => match node.field_child("value") {
                Some(value) => value,
                None => return node,
            },
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => inner,
                None => return node,
            },
            "call_expression"
                if node
                    .field_child("function")
                    .is_some_and(|f| f.kind() == "template_function" && f.field_child("name").is_some()) =>
            {
                match node.field_child("arguments").and_then(|a| a.named_child(0)) {
                    Some(inner) => inner,
                    None => return node,
                }
            }
            _ => return node,
        };
    }
    node
}

/// Every call in `node`'s subtree (launches included).
fn calls_in(node: Node) -> Vec<Node> {
    let mut calls = Vec::new();
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.kind() == "call_expression" {
            calls.push(node);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    calls
}

pub(super) fn pointer(name: &str, offset: i64, span: std::ops::Range<usize>) -> ast::Expr {
    if offset == 0 {
        return ast::Expr::name(name, span);
    }
    ast_binary(
        ast::BinaryOp::Add,
        ast::Expr::name(name, span.clone()),
        ast::Expr::int(offset, span),
    )
}

fn ast_str(text: &str, span: std::ops::Range<usize>) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Str(text.to_string()),
        span,
    }
}
