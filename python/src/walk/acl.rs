//! pyACL: `acl.rt.*` calls as catalogue calls (arguments mapped to the catalogue's
//! parameters, handles bound from `(handle, ret)`), model and operator execution,
//! `acl.util` host views.

use super::*;

impl<'t> Walker<'_, 't> {
    pub(super) fn acl_call(&mut self, node: Node<'t>, path: &str) -> Value {
        match path {
            "acl.util.ptr_to_numpy" | "acl.util.ptr_to_bytes" => {
                let args = self.positional_args(node);
                // The host views the memory: host memory, whatever else it was taken for
                // (a pointer received from outside).
                let first = args.first().cloned().map(|ptr| self.received_in_host_memory(ptr));
                if let Some(Value::Buffer(name, place)) = &first {
                    let span = self.range(node);
                    let place = if place.is_host() { *place } else { Place::Pageable };
                    self.host_access(name, place, false, span);
                }
                return Value::Unknown;
            }
            "acl.util.numpy_to_ptr" | "acl.util.bytes_to_ptr" => {
                self.arguments(node);
                let name = self.fresh_hint("host");
                self.create(
                    node,
                    "malloc",
                    &name,
                    vec![ast::Expr::int(TENSOR_BYTES, self.range(node))],
                );
                let span = self.range(node);
                self.host_access(&name, Place::Pageable, true, span);
                return Value::Buffer(name, Place::Pageable);
            }
            "acl.create_data_buffer" => {
                let args = self.positional_args(node);
                return Value::DataBuffer(Box::new(args.into_iter().next().unwrap_or(Value::Unknown)));
            }
            "acl.mdl.create_dataset" => {
                self.heap.push(Obj::default());
                return Value::Dataset(self.heap.len() - 1);
            }
            "acl.mdl.add_dataset_buffer" => {
                let args = self.positional_args(node);
                if let (Some(Value::Dataset(slot)), Some(buffer)) = (args.first(), args.get(1))
                    && let Some(obj) = self.heap.get_mut(*slot)
                {
                    obj.items.push(buffer.clone());
                }
                return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
            }
            "acl.op.execute_v2" | "acl.op.execute" => {
                // (op_type, input_desc, inputs, output_desc, outputs, attr, stream)
                let args = self.positional_args(node);
                let label = match args.first() {
                    Some(Value::Str(name)) => name.clone(),
                    _ => "op".to_string(),
                };
                let names = |value: Option<&Value>| -> Vec<String> {
                    flatten(value.map(std::slice::from_ref).unwrap_or_default())
                        .iter()
                        .filter_map(|value| value.buffer().map(|(name, _)| name.to_string()))
                        .collect()
                };
                let (reads, writes) = (names(args.get(2)), names(args.get(4)));
                let stream = args.get(6).cloned().unwrap_or(Value::Unknown);
                let Some(stream_expr) = self.stream_expr(&stream, node) else {
                    self.note(node, "the operator's stream is not known: it is left out");
                    return Value::Int(0);
                };
                self.kernel(node, stream_expr, &label, &reads, &writes);
                return Value::Int(0);
            }
            "acl.mdl.execute_async" | "acl.mdl.execute" => {
                let args = self.positional_args(node);
                let stream = match path {
                    "acl.mdl.execute" => Value::Int(0),
                    _ => args.get(3).cloned().unwrap_or(Value::Unknown),
                };
                let reads = self.dataset_buffers(args.get(1));
                let writes = self.dataset_buffers(args.get(2));
                let Some(stream_expr) = self.stream_expr(&stream, node) else {
                    self.note(node, "the model execution's stream is not known: it is left out");
                    return Value::Int(0);
                };
                self.kernel(node, stream_expr, "model", &reads, &writes);
                if path == "acl.mdl.execute" {
                    let span = self.range(node);
                    self.catalogued(node, "acl.rt.synchronize_stream", vec![ast::Expr::int(0, span)]);
                }
                return Value::Int(0);
            }
            _ => {}
        }
        let Some(api) = syncguard_model::api::lookup(path) else {
            let (args, kwargs) = self.arguments(node);
            if args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(Value::holds_handle)
            {
                self.note(
                    node,
                    format!("`{path}` is not in the catalogue: what it does with its handles is not known"),
                );
            }
            return Value::Int(0);
        };
        let (arg_nodes, keyword_nodes) = self.argument_nodes(node);
        let params: Vec<_> = api.positional_params().collect();
        let mut converted = Vec::new();
        let mut positional = arg_nodes.into_iter();
        for param in &params {
            let arg = keyword_nodes
                .iter()
                .find(|(key, _)| key == param.name)
                .map(|(_, node)| *node)
                .or_else(|| positional.next());
            let Some(arg) = arg else {
                if param.optional {
                    continue;
                }
                self.note(
                    node,
                    format!("`{path}` is left out: it has no argument `{}`", param.name),
                );
                return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
            };
            match self.acl_arg(arg, param.kind) {
                Some(expr) => converted.push(expr),
                None => {
                    let mut touches: Vec<String> = converted
                        .iter()
                        .flat_map(ast::Expr::names)
                        .map(str::to_string)
                        .collect();
                    touches.extend(positional.by_ref().flat_map(|rest| self.object_names(rest)));
                    self.note_touching(
                        arg,
                        format!(
                            "`{path}` is left out: its argument `{}` has no value the extraction can follow",
                            param.name
                        ),
                        touches,
                    );
                    return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
                }
            }
        }
        let range = self.range(node);
        self.last_api = Some((range.clone(), api));
        let created = match api.creates {
            Creates::Stream => Some(("stream", None)),
            Creates::Event(..) => Some(("event", None)),
            Creates::DeviceBuffer => Some(("dev_ptr", Some(Place::Device))),
            Creates::HostBuffer => Some(("host_ptr", Some(Place::Pinned))),
            Creates::PageableHostBuffer => Some(("host_ptr", Some(Place::Pageable))),
            _ => None,
        };
        match created {
            Some((default, place)) => {
                let name = self.fresh_hint(default);
                self.create(node, api.name, &name, converted);
                let object = match (api.creates, place) {
                    (Creates::Stream, _) => Value::Stream(name),
                    (_, Some(place)) => Value::Buffer(name, place),
                    _ => Value::Event(name),
                };
                Value::Tuple(vec![object, Value::Int(0)])
            }
            None => {
                self.api_calls += 1;
                let ast::Expr {
                    kind: ast::ExprKind::Call(call),
                    ..
                } = call_expr(api.name, converted, Vec::new(), range.clone())
                else {
                    return Value::Int(0);
                };
                self.emit(ast::StmtKind::Call(*call), range);
                if api.query.is_some() {
                    // `status, ret = acl.rt.query_event_status(ev)`: the status is not known.
                    return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
                }
                Value::Int(0)
            }
        }
    }

    pub(super) fn dataset_buffers(&self, dataset: Option<&Value>) -> Vec<String> {
        let Some(Value::Dataset(slot)) = dataset else {
            return Vec::new();
        };
        let Some(obj) = self.heap.get(*slot) else {
            return Vec::new();
        };
        obj.items
            .iter()
            .filter_map(|item| match item {
                Value::DataBuffer(inner) => inner.buffer().map(|(name, _)| name.to_string()),
                _ => None,
            })
            .collect()
    }

    /// The `.sync` names of the objects a plain name or attribute (`s1`, `self.stream`)
    /// holds; other expressions are not evaluated again.
    fn object_names(&mut self, node: Node<'t>) -> Vec<String> {
        if !matches!(node.kind(), "identifier" | "attribute") {
            return Vec::new();
        }
        match self.eval(node) {
            Value::Stream(name) | Value::Event(name) | Value::Buffer(name, _) => vec![name],
            _ => Vec::new(),
        }
    }

    /// One pyACL argument as the catalogue's parameter kind wants it.
    pub(super) fn acl_arg(&mut self, arg: Node<'t>, kind: ArgKind) -> Option<ast::Expr> {
        let span = self.range(arg);
        // Constants by name, as pyACL samples define them (`ACL_MEMCPY_HOST_TO_DEVICE = 1`).
        let written = self.text(arg).rsplit('.').next().unwrap_or("").to_string();
        let value = self.eval(arg);
        match kind {
            ArgKind::Stream => self.stream_expr(&value, arg),
            ArgKind::Event => match self.received_as(value, received::Kind::Event) {
                Value::Event(name) => Some(ast::Expr::name(&name, span)),
                _ => None,
            },
            ArgKind::Ptr => match self.received_as(value, received::Kind::Tensor) {
                Value::Buffer(name, _) => Some(ast::Expr::name(&name, span)),
                _ => None,
            },
            ArgKind::Enum(family) => {
                if family.constants().contains(&written.as_str()) {
                    return Some(ast::Expr::name(&written, span));
                }
                let acl: Vec<&str> = family
                    .constants()
                    .iter()
                    .copied()
                    .filter(|name| name.starts_with("ACL_"))
                    .collect();
                let at = usize::try_from(value.int()?).ok()?;
                acl.get(at).map(|name| ast::Expr::name(name, span))
            }
            ArgKind::Flags => {
                if syncguard_model::api::FLAG_CONSTANTS
                    .iter()
                    .any(|(name, _)| *name == written)
                {
                    return Some(ast::Expr::name(&written, span));
                }
                value.int().map(|v| ast::Expr::int(v, span))
            }
            ArgKind::Int | ArgKind::Timeout(_) => match value.int() {
                Some(v) => Some(ast::Expr::int(v, span)),
                // A size the code does not show: the tensor size taken.
                None => Some(ast::Expr::int(TENSOR_BYTES, span)),
            },
            ArgKind::Str => match value {
                Value::Str(text) => Some(ast::Expr {
                    kind: ast::ExprKind::Str(text),
                    span,
                }),
                _ => None,
            },
            ArgKind::Opaque => Some(ast::Expr::int(0, span)),
            _ => None,
        }
    }
}
