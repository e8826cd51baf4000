//! torch_npu: streams, events, the current stream, tensors (factories, copies, host
//! reads and writes, operations as kernels) mapped to ACL calls.

use super::*;

impl<'t> Walker<'_, 't> {
    /// `torch.zeros(..., device="npu")`, `torch.empty(..., pin_memory=True)`, `*_like`.
    pub(super) fn tensor_factory(&mut self, node: Node<'t>, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let keyword = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let like = name.ends_with("_like").then(|| args.first().cloned()).flatten();
        let like = like.map(|like| self.received_as(like, received::Kind::Tensor));
        let (device, index) = match keyword("device") {
            Some(device) => (device_of(Some(&device)), self.device_index(&device)),
            None => match &like {
                Some(Value::Buffer(like, place)) => (Some(*place == Place::Device), Some(self.tensor_device(like))),
                _ => (Some(false), None),
            },
        };
        let index = index.unwrap_or(self.device);
        let pinned = keyword("pin_memory").and_then(|v| v.truth()).unwrap_or(false);
        let span = self.range(node);
        let size = ast::Expr::int(TENSOR_BYTES, span.clone());
        let filled = !name.starts_with("empty");
        let name = self.fresh_hint("tensor");
        match device {
            Some(true) => {
                self.create(
                    node,
                    "acl.rt.malloc",
                    &name,
                    vec![size, ast::Expr::name("ACL_MEM_MALLOC_HUGE_FIRST", span.clone())],
                );
                self.tensor_devices.insert(name.clone(), index);
                if filled && let Some(stream) = self.current_stream_at(index, span.clone()) {
                    self.kernel(node, stream, "fill", &[], std::slice::from_ref(&name));
                }
                Value::Buffer(name, Place::Device)
            }
            Some(false) => {
                let place = if pinned { Place::Pinned } else { Place::Pageable };
                let api = if pinned { "acl.rt.malloc_host" } else { "malloc" };
                self.create(node, api, &name, vec![size]);
                if filled {
                    self.host_access(&name, place, true, span);
                }
                Value::Buffer(name, place)
            }
            None => {
                self.note(
                    node,
                    "a tensor on a device the extraction cannot tell: it is not followed",
                );
                Value::Unknown
            }
        }
    }

    /// `kernel(stream, "name", reads: [...], writes: [...]);`
    pub(super) fn kernel(
        &mut self,
        node: Node<'t>,
        stream: ast::Expr,
        name: &str,
        reads: &[String],
        writes: &[String],
    ) {
        let span = self.range(node);
        let list = |names: &[String]| ast::Expr {
            kind: ast::ExprKind::List(names.iter().map(|name| ast::Expr::name(name, span.clone())).collect()),
            span: span.clone(),
        };
        let mut named = Vec::new();
        if !reads.is_empty() {
            named.push(("reads", list(reads)));
        }
        if !writes.is_empty() {
            named.push(("writes", list(writes)));
        }
        let label = ast::Expr {
            kind: ast::ExprKind::Str(name.chars().filter(|c| *c != '"' && *c != '\\').take(64).collect()),
            span: span.clone(),
        };
        self.api_calls += 1;
        let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr("kernel", vec![stream, label], named, span.clone())
        else {
            return;
        };
        self.emit(ast::StmtKind::Call(*call), span);
    }

    /// `host_read(buf);` / `host_write(buf);` for host memory; a device tensor read
    /// on the host is a blocking copy out (`.item()`, `print(x)`).
    pub(super) fn host_access(&mut self, name: &str, place: Place, write: bool, span: Range<usize>) {
        if !place.is_host() {
            return;
        }
        self.api_calls += 1;
        let api = if write { "host_write" } else { "host_read" };
        let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr(api, vec![ast::Expr::name(name, span.clone())], Vec::new(), span.clone())
        else {
            return;
        };
        self.emit(ast::StmtKind::Call(*call), span);
    }

    /// The host reads a tensor: a host one directly, a device one through the blocking
    /// copy torch makes (`.item()`, `.tolist()`, `print`), which waits for the current stream.
    pub(super) fn host_read_value(&mut self, name: &str, place: Place, span: Range<usize>) {
        if place.is_host() {
            self.host_access(name, place, false, span);
            return;
        }
        let Some(stream) = self.current_stream_at(self.tensor_device(name), span.clone()) else {
            return;
        };
        let host = self.fresh_name(&format!("{name}_host"));
        self.api_calls += 3;
        let size = || ast::Expr::int(TENSOR_BYTES, span.clone());
        self.emit(
            ast::StmtKind::Let {
                pattern: ast::Pattern::Name(ident(&host, span.clone())),
                value: call_expr("malloc", vec![size()], Vec::new(), span.clone()),
            },
            span.clone(),
        );
        self.copy_stmt(&host, name, "ACL_MEMCPY_DEVICE_TO_HOST", stream.clone(), span.clone());
        self.sync_stream_stmt(stream, span.clone());
        self.host_access(&host, Place::Pageable, false, span);
    }

    /// The expression of the current stream of `device`.
    pub(super) fn current_stream_at(&mut self, device: i64, span: Range<usize>) -> Option<ast::Expr> {
        match self.current_stream_of(device) {
            Value::DefaultStream(device) => Some(Self::default_stream_expr(device, span)),
            Value::Stream(name) => Some(ast::Expr::name(&name, span)),
            _ => {
                self.unresolved.push((
                    span,
                    "the current stream is not known here: the operation is left out".into(),
                    Vec::new(),
                ));
                None
            }
        }
    }

    pub(super) fn copy_stmt(&mut self, dst: &str, src: &str, kind: &str, stream: ast::Expr, span: Range<usize>) {
        let size = || ast::Expr::int(TENSOR_BYTES, span.clone());
        let args = vec![
            ast::Expr::name(dst, span.clone()),
            size(),
            ast::Expr::name(src, span.clone()),
            size(),
            ast::Expr::name(kind, span.clone()),
            stream,
        ];
        if let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr("acl.rt.memcpy_async", args, Vec::new(), span.clone())
        {
            self.emit(ast::StmtKind::Call(*call), span);
        }
    }

    pub(super) fn sync_stream_stmt(&mut self, stream: ast::Expr, span: Range<usize>) {
        if let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr("acl.rt.synchronize_stream", vec![stream], Vec::new(), span.clone())
        {
            self.emit(ast::StmtKind::Call(*call), span);
        }
    }

    /// A copy `src` → `dst` on the current stream; `blocking` waits for it (torch
    /// synchronizes the stream after a copy that is not `non_blocking`).
    pub(super) fn tensor_copy(&mut self, node: Node<'t>, dst: (&str, Place), src: (&str, Place), blocking: bool) {
        let span = self.range(node);
        if dst.1.is_host() && src.1.is_host() {
            self.host_access(src.0, src.1, false, span.clone());
            self.host_access(dst.0, dst.1, true, span);
            return;
        }
        let (src_device, dst_device) = (self.tensor_device(src.0), self.tensor_device(dst.0));
        if !src.1.is_host() && !dst.1.is_host() && src_device != dst_device {
            self.copy_between_devices(node, dst.0, src.0);
            return;
        }
        let device = if src.1.is_host() { dst_device } else { src_device };
        let Some(stream) = self.current_stream_at(device, span.clone()) else {
            return;
        };
        let kind = match (src.1.is_host(), dst.1.is_host()) {
            (true, false) => "ACL_MEMCPY_HOST_TO_DEVICE",
            (false, true) => "ACL_MEMCPY_DEVICE_TO_HOST",
            _ => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        };
        self.api_calls += 1;
        self.copy_stmt(dst.0, src.0, kind, stream.clone(), span.clone());
        // A copy from pageable memory is staged: the host returns once the source is
        // read, so the source is free again; the copy out of a device is awaited
        // unless `non_blocking`.
        let waits = blocking && kind != "ACL_MEMCPY_DEVICE_TO_DEVICE" || (src.1 == Place::Pageable && !dst.1.is_host());
        if waits {
            self.api_calls += 1;
            self.sync_stream_stmt(stream, span);
        }
    }

    /// A copy between tensors on two devices, as torch_npu makes it (`copy_d2d`): on the
    /// current stream of the source's device, which first waits for the current stream
    /// of the destination's device; that stream then waits for the copy. (torch_npu
    /// records IPC events for this, where the device supports them, and synchronizes
    /// the streams from the host otherwise, which orders more.)
    fn copy_between_devices(&mut self, node: Node<'t>, dst: &str, src: &str) {
        let span = self.range(node);
        let (src_stream, dst_stream) = (
            self.current_stream_at(self.tensor_device(src), span.clone()),
            self.current_stream_at(self.tensor_device(dst), span.clone()),
        );
        let (Some(src_stream), Some(dst_stream)) = (src_stream, dst_stream) else {
            return;
        };
        self.stream_waits_for(node, src_stream.clone(), dst_stream.clone(), "dst_ready");
        self.api_calls += 1;
        self.copy_stmt(dst, src, "ACL_MEMCPY_DEVICE_TO_DEVICE", src_stream.clone(), span);
        self.stream_waits_for(node, dst_stream, src_stream, "src_ready");
    }

    /// `waiting` waits for the work issued to `other` so far: a new event recorded on
    /// `other` (named after `hint`) and waited for on `waiting`.
    fn stream_waits_for(&mut self, node: Node<'t>, waiting: ast::Expr, other: ast::Expr, hint: &str) {
        let span = self.range(node);
        let saved = self.hint.replace(hint.into());
        let event = self.torch_event(node);
        self.hint = saved;
        if let Value::Event(event) = event {
            self.recorded.insert(event.clone());
            self.catalogued(
                node,
                "acl.rt.record_event",
                vec![ast::Expr::name(&event, span.clone()), other],
            );
            self.catalogued(
                node,
                "acl.rt.stream_wait_event",
                vec![waiting, ast::Expr::name(&event, span)],
            );
        }
    }

    /// An operation on tensors: device ones a kernel on the current stream, host ones
    /// host reads and writes. `out` is the tensor written (a new one when `None`).
    pub(super) fn tensor_op(&mut self, node: Node<'t>, name: &str, operands: &[Value], out: Option<Value>) -> Value {
        let buffers: Vec<(String, Place)> = flatten(operands)
            .into_iter()
            .filter_map(|value| match value {
                Value::Buffer(name, place) => Some((name, place)),
                _ => None,
            })
            .collect();
        let on_device = buffers.iter().any(|(_, place)| *place == Place::Device);
        let span = self.range(node);
        if !on_device {
            for (buffer, place) in &buffers {
                self.host_access(buffer, *place, false, span.clone());
            }
            return match out {
                Some(Value::Buffer(out, place)) => {
                    self.host_access(&out, place, true, span);
                    Value::Buffer(out, place)
                }
                _ => {
                    let result = self.fresh_hint("host");
                    self.create(
                        node,
                        "malloc",
                        &result,
                        vec![ast::Expr::int(TENSOR_BYTES, span.clone())],
                    );
                    self.host_access(&result, Place::Pageable, true, span);
                    Value::Buffer(result, Place::Pageable)
                }
            };
        }
        let Some((device, stream)) = self.operation_stream(&buffers, node) else {
            return Value::Unknown;
        };
        let mut reads: Vec<String> = Vec::new();
        for (buffer, _) in &buffers {
            if !reads.contains(buffer) {
                reads.push(buffer.clone());
            }
        }
        let result = match out {
            Some(Value::Buffer(out, place)) => Value::Buffer(out, place),
            _ => {
                // Named after what it is stored in, else after the operation that made it.
                let result = self.fresh_hint(name);
                self.create(
                    node,
                    "acl.rt.malloc",
                    &result,
                    vec![
                        ast::Expr::int(TENSOR_BYTES, span.clone()),
                        ast::Expr::name("ACL_MEM_MALLOC_HUGE_FIRST", span.clone()),
                    ],
                );
                self.tensor_devices.insert(result.clone(), device);
                Value::Buffer(result, Place::Device)
            }
        };
        let written = result.buffer().map(|(name, _)| name.to_string()).unwrap_or_default();
        self.kernel(node, stream, name, &reads, std::slice::from_ref(&written));
        result
    }

    /// `recv.name(args)`.
    pub(super) fn method_call(&mut self, node: Node<'t>, receiver: Value, name: &str) -> Value {
        match receiver {
            Value::Object(slot) => {
                if let Some(value) = self.heap.get(slot).and_then(|obj| obj.attrs.get(name)).cloned() {
                    return self.call_value(node, value);
                }
                let class = self.heap.get(slot).map(|obj| obj.class.clone()).unwrap_or_default();
                match self.index.method(&class, name) {
                    Some(def) => {
                        let (mut args, kwargs) = self.arguments(node);
                        args.insert(0, Value::Object(slot));
                        self.call_function(def, args, kwargs, node)
                    }
                    None => match self.thread_of_object(slot) {
                        Some(thread) if matches!(name, "start" | "join") => self.thread_method(node, thread, name),
                        _ => self.opaque_call(node, name),
                    },
                }
            }
            Value::HostThread(thread) => self.thread_method(node, thread, name),
            Value::Graph(slot) => self.graph_method(node, slot, name),
            Value::Module(path) => self.call_value(node, Value::Module(format!("{path}.{name}"))),
            Value::Received(at) => self.received_method(node, at, name),
            Value::Stream(_) | Value::DefaultStream(_) => self.stream_method(node, receiver, name),
            Value::Event(event) => self.event_method(node, &event, name),
            Value::Buffer(buffer, place) => self.tensor_method(node, &buffer, place, name),
            Value::List(items) if name == "append" => {
                let args = self.positional_args(node);
                let mut items = items;
                items.extend(args);
                let items = if items.len() > MAX_ITEMS {
                    Value::Unknown
                } else {
                    Value::List(items)
                };
                if let Some(target) = node
                    .child_by_field_name("function")
                    .and_then(|f| f.child_by_field_name("object"))
                {
                    self.store(target, items);
                }
                Value::None
            }
            Value::Dict(pairs) => {
                let args = self.positional_args(node);
                match name {
                    "get" => args
                        .first()
                        .and_then(|key| dict_get(&pairs, key))
                        .or_else(|| args.get(1).cloned())
                        .unwrap_or(Value::None),
                    "values" => Value::List(pairs.into_iter().map(|(_, value)| value).collect()),
                    "keys" => Value::List(pairs.into_iter().map(|(key, _)| key).collect()),
                    "items" => Value::List(
                        pairs
                            .into_iter()
                            .map(|(key, value)| Value::Tuple(vec![key, value]))
                            .collect(),
                    ),
                    _ => Value::Unknown,
                }
            }
            Value::StreamContext(_) => {
                self.arguments(node);
                Value::Unknown
            }
            _ => self.opaque_call(node, name),
        }
    }

    pub(super) fn stream_method(&mut self, node: Node<'t>, stream: Value, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let arg = |key: &str| {
            kwargs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .or_else(|| args.first().cloned())
        };
        let span = self.range(node);
        let Some(stream_expr) = self.stream_expr(&stream, node) else {
            return Value::Unknown;
        };
        match name {
            "synchronize" => {
                self.catalogued(node, "acl.rt.synchronize_stream", vec![stream_expr]);
                Value::None
            }
            "wait_event" => {
                let event = arg("event").map(|event| self.received_as(event, received::Kind::Event));
                match event {
                    Some(Value::Event(event)) if self.never_recorded(&event) => {}
                    Some(Value::Event(event)) => self.catalogued(
                        node,
                        "acl.rt.stream_wait_event",
                        vec![stream_expr, ast::Expr::name(&event, span)],
                    ),
                    _ => self.note(
                        node,
                        "`wait_event` of an event the extraction cannot follow is left out",
                    ),
                }
                Value::None
            }
            "wait_stream" => {
                // torch: `self.wait_event(stream.record_event())`, with a new event.
                let other = arg("stream").unwrap_or(Value::Unknown);
                let Some(other_expr) = self.stream_expr(&other, node) else {
                    self.note(
                        node,
                        "`wait_stream` on a stream the extraction cannot follow is left out",
                    );
                    return Value::None;
                };
                self.stream_waits_for(node, stream_expr, other_expr, "wait_stream_event");
                Value::None
            }
            "record_event" => {
                let event = match arg("event") {
                    Some(Value::Event(event)) => Value::Event(event),
                    _ => self.torch_event(node),
                };
                if let Value::Event(name) = &event {
                    self.recorded.insert(name.clone());
                    self.catalogued(
                        node,
                        "acl.rt.record_event",
                        vec![ast::Expr::name(name, span), stream_expr],
                    );
                }
                event
            }
            "query" => Value::Unknown,
            _ => Value::Unknown,
        }
    }

    /// A torch event no record has reached yet: torch_npu has not created it, and a
    /// wait on it does nothing.
    pub(super) fn never_recorded(&self, event: &str) -> bool {
        self.torch_events.contains(event) && !self.recorded.contains(event)
    }

    pub(super) fn event_method(&mut self, node: Node<'t>, event: &str, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let stream = kwargs
            .iter()
            .find(|(k, _)| k == "stream")
            .map(|(_, v)| v.clone())
            .or_else(|| args.first().cloned());
        let span = self.range(node);
        let stream = match stream {
            Some(stream) if !matches!(stream, Value::None) => stream,
            _ => self.current.clone(),
        };
        let stream_expr = self.stream_expr(&stream, node);
        if stream_expr.is_none() && matches!(name, "record" | "wait" | "reset") {
            // What rests on this event rests on a call left out.
            let call = node.child_by_field_name("function").map_or("", |f| self.text(f));
            self.note_touching(
                node,
                format!("`{call}(...)` is left out: the stream it is on is not known here"),
                vec![event.to_string()],
            );
        }
        let never_recorded = self.never_recorded(event);
        match name {
            "record" => {
                self.recorded.insert(event.to_string());
                if let Some(stream) = stream_expr {
                    self.catalogued(node, "acl.rt.record_event", vec![ast::Expr::name(event, span), stream]);
                }
                Value::None
            }
            "wait" | "synchronize" if never_recorded => Value::None,
            "wait" => {
                if let Some(stream) = stream_expr {
                    self.catalogued(
                        node,
                        "acl.rt.stream_wait_event",
                        vec![stream, ast::Expr::name(event, span)],
                    );
                }
                Value::None
            }
            "synchronize" => {
                self.catalogued(node, "acl.rt.synchronize_event", vec![ast::Expr::name(event, span)]);
                Value::None
            }
            // `ExternalEvent.reset(stream)`
            "reset" => {
                if let Some(stream) = stream_expr {
                    self.catalogued(node, "acl.rt.reset_event", vec![ast::Expr::name(event, span), stream]);
                }
                Value::None
            }
            _ => Value::Unknown,
        }
    }

    pub(super) fn tensor_method(&mut self, node: Node<'t>, buffer: &str, place: Place, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let keyword = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let non_blocking = keyword("non_blocking").and_then(|v| v.truth()).unwrap_or(false);
        let span = self.range(node);
        match name {
            "npu" | "cuda" | "cpu" | "to" => {
                let here = (place == Place::Device).then(|| self.tensor_device(buffer));
                let device = keyword("device").or_else(|| args.first().cloned());
                // The device the tensor goes to (`None`: the host).
                let target = match (name, device) {
                    ("cpu", _) => None,
                    ("npu" | "cuda", None) => Some(self.device),
                    (_, None) => here,
                    (_, Some(device)) => match device_of(Some(&device)) {
                        Some(true) => Some(self.device_index(&device).unwrap_or(self.device)),
                        Some(false) => None,
                        // `.to(torch.float16)` and other conversions: the same place.
                        None if matches!(device, Value::Module(_)) => here,
                        None => {
                            self.note(
                                node,
                                "a tensor moved to a device the extraction cannot tell is not followed",
                            );
                            return Value::Unknown;
                        }
                    },
                };
                if target == here {
                    // Already there: the same tensor.
                    return Value::Buffer(buffer.to_string(), place);
                }
                let to_device = target.is_some();
                let default = format!("{buffer}_{}", if to_device { "dev" } else { "host" });
                let result = self.fresh_hint(&default);
                if !self.written.contains_key(&result) {
                    let text = self.text(node).to_string();
                    self.remember_written(&result, &text);
                }
                let result_place = if to_device {
                    self.create(
                        node,
                        "acl.rt.malloc",
                        &result,
                        vec![
                            ast::Expr::int(TENSOR_BYTES, span.clone()),
                            ast::Expr::name("ACL_MEM_MALLOC_HUGE_FIRST", span.clone()),
                        ],
                    );
                    self.tensor_devices
                        .insert(result.clone(), target.unwrap_or(self.device));
                    Place::Device
                } else if non_blocking {
                    // torch allocates the result of a non-blocking copy out in pinned memory.
                    self.create(
                        node,
                        "acl.rt.malloc_host",
                        &result,
                        vec![ast::Expr::int(TENSOR_BYTES, span.clone())],
                    );
                    Place::Pinned
                } else {
                    self.create(
                        node,
                        "malloc",
                        &result,
                        vec![ast::Expr::int(TENSOR_BYTES, span.clone())],
                    );
                    Place::Pageable
                };
                self.tensor_copy(node, (&result, result_place), (buffer, place), !non_blocking);
                Value::Buffer(result, result_place)
            }
            "copy_" => {
                let source = args
                    .first()
                    .cloned()
                    .map(|src| self.received_as(src, received::Kind::Tensor));
                match source.as_ref() {
                    Some(Value::Buffer(src, src_place)) => {
                        let src = src.clone();
                        self.tensor_copy(node, (buffer, place), (&src, *src_place), !non_blocking);
                    }
                    _ => self.note(node, "`copy_` from a value the extraction cannot follow is left out"),
                }
                Value::Buffer(buffer.to_string(), place)
            }
            // A numpy array over a host tensor's memory: read where it is used.
            "numpy" if place.is_host() => Value::Buffer(buffer.to_string(), place),
            "item" | "tolist" | "numpy" | "__bool__" | "__float__" => {
                self.host_read_value(buffer, place, span);
                Value::Unknown
            }
            "record_stream" | "pin_memory" | "size" | "dim" | "numel" | "element_size" | "is_pinned" | "data_ptr"
            | "stride" | "storage_offset" => {
                if name == "pin_memory" && place == Place::Pageable {
                    let result = self.fresh_hint("pinned");
                    self.create(
                        node,
                        "acl.rt.malloc_host",
                        &result,
                        vec![ast::Expr::int(TENSOR_BYTES, span.clone())],
                    );
                    self.host_access(buffer, place, false, span.clone());
                    self.host_access(&result, Place::Pinned, true, span);
                    return Value::Buffer(result, Place::Pinned);
                }
                if name == "pin_memory" {
                    return Value::Buffer(buffer.to_string(), place);
                }
                Value::Unknown
            }
            "view" | "reshape" | "view_as" | "transpose" | "permute" | "t" | "squeeze" | "unsqueeze" | "flatten"
            | "expand" | "expand_as" | "narrow" | "detach" | "contiguous" | "chunk" | "split" | "unbind"
            | "as_strided" | "select" | "unflatten" | "movedim" | "resize_" | "resize_as_" | "requires_grad_" => {
                let view = Value::Buffer(buffer.to_string(), place);
                if matches!(name, "chunk" | "split" | "unbind") {
                    if let Some(count) = args.first().and_then(Value::int).filter(|n| (1..=64).contains(n)) {
                        return Value::Tuple(vec![view; count as usize]);
                    }
                    return Value::Unknown;
                }
                view
            }
            _ => {
                let mut operands = vec![Value::Buffer(buffer.to_string(), place)];
                operands.extend(args);
                operands.extend(kwargs.into_iter().map(|(_, v)| v));
                // `x.add_(y)` writes x; `x.add(y)` a new tensor.
                let out =
                    (name.ends_with('_') && !name.starts_with('_')).then(|| Value::Buffer(buffer.to_string(), place));
                self.tensor_op(node, name, &operands, out)
            }
        }
    }
}
