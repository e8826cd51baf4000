//! Expressions and calls: values, operators, names, attributes, subscripts, and the
//! dispatch of a call to a function, method, class, library or unknown callable.

use super::*;

impl<'t> Walker<'_, 't> {
    pub(super) fn positional_args(&mut self, call: Node<'t>) -> Vec<Value> {
        self.arguments(call).0
    }

    /// A call's arguments, evaluated: positional and keyword. The name the call's
    /// result will be stored under is not theirs.
    pub(super) fn arguments(&mut self, call: Node<'t>) -> (Vec<Value>, Vec<(String, Value)>) {
        let hint = self.hint.take();
        let arguments = self.arguments_inner(call);
        self.hint = hint;
        arguments
    }

    pub(super) fn arguments_inner(&mut self, call: Node<'t>) -> (Vec<Value>, Vec<(String, Value)>) {
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        let Some(list) = call.child_by_field_name("arguments") else {
            return (positional, keywords);
        };
        let mut cursor = list.walk();
        let children: Vec<Node<'t>> = list.named_children(&mut cursor).collect();
        for arg in children {
            match arg.kind() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) =
                        (arg.child_by_field_name("name"), arg.child_by_field_name("value"))
                    {
                        let name = self.text(name).to_string();
                        let value = self.eval(value);
                        keywords.push((name, value));
                    }
                }
                "comment" => {}
                "list_splat" | "dictionary_splat" => {
                    if let Some(inner) = arg.named_child(0) {
                        self.eval(inner);
                    }
                    positional.push(Value::Unknown);
                }
                _ => positional.push(self.eval(arg)),
            }
        }
        (positional, keywords)
    }

    /// A call's argument nodes: positional ones and keyword ones by name.
    pub(super) fn argument_nodes(&self, call: Node<'t>) -> (Vec<Node<'t>>, Vec<(String, Node<'t>)>) {
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        if let Some(list) = call.child_by_field_name("arguments") {
            let mut cursor = list.walk();
            for arg in list.named_children(&mut cursor) {
                match arg.kind() {
                    "keyword_argument" => {
                        if let (Some(name), Some(value)) =
                            (arg.child_by_field_name("name"), arg.child_by_field_name("value"))
                        {
                            keywords.push((self.text(name).to_string(), value));
                        }
                    }
                    "comment" => {}
                    _ => positional.push(arg),
                }
            }
        }
        (positional, keywords)
    }

    pub fn eval(&mut self, node: Node<'t>) -> Value {
        if self.nesting >= MAX_NESTING {
            self.note(
                node,
                format!("expressions nested deeper than {MAX_NESTING} are not followed"),
            );
            return Value::Unknown;
        }
        if !self.step(node) {
            return Value::Unknown;
        }
        self.nesting += 1;
        let value = self.eval_inner(node);
        self.nesting -= 1;
        value
    }

    pub(super) fn eval_inner(&mut self, node: Node<'t>) -> Value {
        match node.kind() {
            "integer" => parse_int(self.text(node)).map_or(Value::Unknown, Value::Int),
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "none" => Value::None,
            "string" => {
                let raw = self.text(node);
                if raw.starts_with(['f', 'F']) {
                    return Value::Unknown;
                }
                let mut cursor = node.walk();
                let content: String = node
                    .named_children(&mut cursor)
                    .filter(|child| child.kind() == "string_content")
                    .map(|child| self.text(child))
                    .collect();
                Value::Str(content)
            }
            "concatenated_string" => Value::Unknown,
            "identifier" => self.identifier(node),
            "attribute" => self.attribute(node),
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => self.eval(inner),
                None => Value::Unknown,
            },
            "tuple" | "list" | "expression_list" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let items: Vec<Value> = children.into_iter().map(|child| self.eval(child)).collect();
                if items.len() > MAX_ITEMS {
                    Value::Unknown
                } else if node.kind() == "list" {
                    Value::List(items)
                } else {
                    Value::Tuple(items)
                }
            }
            "list_comprehension" | "generator_expression" => self.comprehension(node),
            "dictionary" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let hint = self.hint.clone();
                let mut pairs = Vec::new();
                let mut known = true;
                for child in children {
                    let (Some(key), Some(value)) =
                        (child.child_by_field_name("key"), child.child_by_field_name("value"))
                    else {
                        // `**other`, a comprehension: the dict is not known.
                        self.eval(child);
                        known = false;
                        continue;
                    };
                    let key = self.eval(key);
                    self.hint = match (&hint, &key) {
                        (Some(hint), Value::Str(text)) => Some(format!("{hint}[{text:?}]")),
                        (Some(hint), Value::Int(at)) => Some(format!("{hint}[{at}]")),
                        _ => hint.clone(),
                    };
                    let value = self.eval(value);
                    pairs.push((key, value));
                }
                self.hint = hint;
                if known && pairs.len() <= MAX_ITEMS && pairs.iter().all(|(key, _)| is_key(key)) {
                    Value::Dict(pairs)
                } else {
                    Value::Unknown
                }
            }
            "call" => self.call(node),
            "subscript" => self.subscript(node),
            "unary_operator" => {
                let value = node.child_by_field_name("argument").map(|arg| self.eval(arg));
                let op = node.child_by_field_name("operator").map(|op| self.text(op));
                match (op, value.as_ref().and_then(Value::int)) {
                    (Some("-"), Some(v)) => v.checked_neg().map_or(Value::Unknown, Value::Int),
                    (Some("+"), Some(v)) => Value::Int(v),
                    (Some("~"), Some(v)) => Value::Int(!v),
                    _ => Value::Unknown,
                }
            }
            "not_operator" => {
                let value = node.child_by_field_name("argument").map(|arg| self.eval(arg));
                match value.and_then(|value| value.truth()) {
                    Some(truth) => Value::Bool(!truth),
                    None => Value::Unknown,
                }
            }
            "boolean_operator" => {
                let (Some(left), Some(right), Some(op)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    node.child_by_field_name("operator"),
                ) else {
                    return Value::Unknown;
                };
                let is_and = self.text(op) == "and";
                let left = self.eval(left);
                match (left.truth(), is_and) {
                    (Some(false), true) => left,
                    (Some(true), false) => left,
                    (Some(_), _) => self.eval(right),
                    (None, _) => {
                        let right = self.eval(right);
                        match (right.truth(), is_and) {
                            (Some(false), true) => Value::Bool(false),
                            (Some(true), false) => Value::Bool(true),
                            _ => Value::Unknown,
                        }
                    }
                }
            }
            "binary_operator" => {
                let (Some(left), Some(right), Some(op)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    node.child_by_field_name("operator"),
                ) else {
                    return Value::Unknown;
                };
                let op = self.text(op).to_string();
                let left = self.eval(left);
                let right = self.eval(right);
                let (left, right) = self.tensor_operands(&op, left, right);
                if left.buffer().is_some() || right.buffer().is_some() {
                    return self.tensor_op(node, operator_name(&op), &[left, right], None);
                }
                arith(&op, &left, &right)
            }
            "comparison_operator" => self.comparison(node),
            "conditional_expression" => {
                let mut cursor = node.walk();
                let parts: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let [then, cond, otherwise] = parts.as_slice() else {
                    return Value::Unknown;
                };
                match self.condition(*cond) {
                    Some(true) => self.eval(*then),
                    Some(false) => self.eval(*otherwise),
                    None => {
                        let a = self.eval(*then);
                        let b = self.eval(*otherwise);
                        if a == b { a } else { Value::Unknown }
                    }
                }
            }
            "await" => match node.named_child(0) {
                Some(inner) => self.eval(inner),
                None => Value::Unknown,
            },
            "lambda" => Value::Unknown,
            "named_expression" => {
                let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value"))
                else {
                    return Value::Unknown;
                };
                let value = self.eval(value);
                self.store(name, value.clone());
                value
            }
            _ => {
                // Evaluate what is inside (calls in a dict, a set) for their effects.
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.eval(child);
                }
                Value::Unknown
            }
        }
    }

    pub(super) fn identifier(&mut self, node: Node<'t>) -> Value {
        let name = self.text(node);
        if let Some(value) = self.lookup(name) {
            return self.resolve(value);
        }
        self.global(name, node)
    }

    /// A name no local binds: an import, a module constant, a function or class.
    pub(super) fn global(&mut self, name: &str, at: Node<'t>) -> Value {
        let unit = self.frames.last().map_or(0, |frame| frame.unit);
        let scope = &self.index.modules[unit];
        if let Some(full) = scope.aliases.and_then(|aliases| aliases.get(name)) {
            let full = full.clone();
            let simple = full.rsplit('.').next().unwrap_or(&full).to_string();
            // `from helpers import setup`: a function of another analyzed file.
            if !is_library(&full)
                && let Some(def) = self.index.function(unit, &simple)
            {
                return Value::Function(def);
            }
            if !is_library(&full) && self.index.class(&simple).is_some() {
                return Value::Class(simple);
            }
            return Value::Module(full);
        }
        if let Some(def) = self.index.function(unit, name) {
            return Value::Function(def);
        }
        if self.index.class(name).is_some() {
            return Value::Class(name.to_string());
        }
        if let Some(expr) = scope.globals.get(name).copied() {
            // A module constant, evaluated in its module (once per use; bounded by
            // the nesting limit, which also stops `A = A`).
            let hint = self.hint.take();
            self.enter(unit, HashMap::new());
            let value = if self.nesting < 16 {
                self.eval(expr)
            } else {
                Value::Unknown
            };
            self.frames.pop();
            self.hint = hint;
            return value;
        }
        match name {
            // The success code pyACL samples compare with.
            "ACL_SUCCESS" | "ACL_ERROR_NONE" => Value::Int(0),
            "True" => Value::Bool(true),
            "False" => Value::Bool(false),
            "None" => Value::None,
            _ if name.starts_with("ACL_") => Value::Module(name.to_string()),
            _ => {
                let _ = at;
                Value::Unknown
            }
        }
    }

    pub(super) fn attribute(&mut self, node: Node<'t>) -> Value {
        let (Some(object), Some(attr)) = (
            node.child_by_field_name("object"),
            node.child_by_field_name("attribute"),
        ) else {
            return Value::Unknown;
        };
        let attr = self.text(attr).to_string();
        let base = self.eval(object);
        match base {
            Value::Module(path) => Value::Module(format!("{path}.{attr}")),
            Value::Object(slot) => {
                if let Some(value) = self.heap.get(slot).and_then(|obj| obj.attrs.get(&attr)) {
                    let value = value.clone();
                    return self.resolve(value);
                }
                let class = self.heap.get(slot).map(|obj| obj.class.clone()).unwrap_or_default();
                match self.index.method(&class, &attr) {
                    Some(def) => Value::Method(slot, def),
                    None if self.entry_object == Some(slot) => self.entry_attr(&attr, node),
                    None => Value::Unknown,
                }
            }
            Value::Received(at) => self.received_attr(at, &attr),
            Value::Buffer(..) if matches!(attr.as_str(), "T" | "mT" | "real" | "imag" | "data") => base,
            Value::Buffer(name, place) if attr == "device" => match place {
                Place::Device => Value::Str(format!("npu:{}", self.tensor_device(&name))),
                _ => Value::Str("cpu".into()),
            },
            _ => Value::Unknown,
        }
    }

    pub(super) fn subscript(&mut self, node: Node<'t>) -> Value {
        let Some(base) = node.child_by_field_name("value") else {
            return Value::Unknown;
        };
        let container = self.eval(base);
        let mut cursor = node.walk();
        let indices: Vec<Node<'t>> = node.children_by_field_name("subscript", &mut cursor).collect();
        let index = match indices.as_slice() {
            [one] => self.eval(*one),
            _ => {
                for index in indices {
                    self.eval(index);
                }
                Value::Unknown
            }
        };
        match container {
            Value::Tuple(items) | Value::List(items) => match index.int() {
                Some(at) => {
                    let len = items.len() as i64;
                    let at = if at < 0 { at + len } else { at };
                    if (0..len).contains(&at) {
                        items[at as usize].clone()
                    } else {
                        Value::Unknown
                    }
                }
                None => {
                    if items.iter().any(Value::holds_handle) && items.iter().any(|item| *item != items[0]) {
                        self.note(
                            node,
                            "an index with no known value into handles: the element is not known",
                        );
                    }
                    if items.iter().all(|item| *item == items[0]) {
                        items.first().cloned().unwrap_or(Value::Unknown)
                    } else {
                        Value::Unknown
                    }
                }
            },
            Value::Dict(pairs) => dict_get(&pairs, &index).unwrap_or(Value::Unknown),
            // `x[0]`, `x[:n]` of a tensor: a view of the same memory.
            Value::Buffer(..) => container,
            _ => Value::Unknown,
        }
    }

    pub(super) fn comparison(&mut self, node: Node<'t>) -> Value {
        let mut cursor = node.walk();
        let operands: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        let mut cursor = node.walk();
        let operators: Vec<String> = node
            .children_by_field_name("operators", &mut cursor)
            .map(|op| self.text(op).to_string())
            .collect();
        let values: Vec<Value> = operands.iter().map(|operand| self.eval(*operand)).collect();
        let mut result = Some(true);
        for (position, op) in operators.iter().enumerate() {
            let (Some(left), Some(right)) = (values.get(position), values.get(position + 1)) else {
                return Value::Unknown;
            };
            let known = compare(op, left, right);
            result = match (result, known) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
        }
        // A comparison of a device tensor reads it on the host.
        for value in &values {
            if let Value::Buffer(name, place) = value {
                let span = self.range(node);
                self.host_read_value(&name.clone(), *place, span);
            }
        }
        result.map_or(Value::Unknown, Value::Bool)
    }

    pub(super) fn comprehension(&mut self, node: Node<'t>) -> Value {
        let (Some(body), Some(clause)) = (node.child_by_field_name("body"), node.named_child(1)) else {
            return Value::Unknown;
        };
        if clause.kind() != "for_in_clause" {
            return Value::Unknown;
        }
        let (Some(left), Some(right)) = (clause.child_by_field_name("left"), clause.child_by_field_name("right"))
        else {
            return Value::Unknown;
        };
        let Some(items) = self.iterable(right) else {
            return Value::Unknown;
        };
        let hint = self.hint.clone();
        let mut out = Vec::new();
        for (position, item) in items.into_iter().enumerate() {
            if position as i64 >= MAX_ITERATIONS || self.incomplete.is_some() {
                break;
            }
            self.hint = hint.as_ref().map(|hint| format!("{hint}[{position}]"));
            self.store(left, item);
            out.push(self.eval(body));
        }
        self.hint = hint;
        if out.len() > MAX_ITEMS {
            return Value::Unknown;
        }
        Value::List(out)
    }

    // ---- calls ---------------------------------------------------------------------

    pub(super) fn call(&mut self, node: Node<'t>) -> Value {
        let Some(function) = node.child_by_field_name("function") else {
            return Value::Unknown;
        };
        // A method call: `obj.name(...)`.
        if function.kind() == "attribute"
            && let (Some(object), Some(attr)) = (
                function.child_by_field_name("object"),
                function.child_by_field_name("attribute"),
            )
        {
            let hint = self.hint.take();
            let receiver = self.eval(object);
            self.hint = hint;
            let name = self.text(attr).to_string();
            return self.method_call(node, receiver, &name);
        }
        let hint = self.hint.take();
        let callee = self.eval(function);
        self.hint = hint;
        self.call_value(node, callee)
    }

    pub(super) fn call_value(&mut self, node: Node<'t>, callee: Value) -> Value {
        match callee {
            Value::Function(def) => {
                let (args, kwargs) = self.arguments(node);
                self.call_function(def, args, kwargs, node)
            }
            Value::Method(slot, def) => {
                let (mut args, kwargs) = self.arguments(node);
                args.insert(0, Value::Object(slot));
                self.call_function(def, args, kwargs, node)
            }
            Value::Nested(at) => {
                let (args, kwargs) = self.arguments(node);
                self.call_nested(at, args, kwargs, node)
            }
            Value::Class(class) => {
                let (args, kwargs) = self.arguments(node);
                self.construct(&class, args, kwargs, node)
            }
            Value::Module(path) => {
                // `helpers.setup(...)`, `runner.Runner(...)`: a function or class of an
                // analyzed module, called through the module.
                let module = path.trim_start_matches('.').split('.').next().unwrap_or("");
                if !is_library(&path)
                    && (self.index.stems.contains(module) || path.starts_with('.'))
                    && let Some(simple) = path.rsplit('.').next()
                {
                    let unit = self.frames.last().map_or(0, |frame| frame.unit);
                    if let Some(def) = self.index.function(unit, simple) {
                        let (args, kwargs) = self.arguments(node);
                        return self.call_function(def, args, kwargs, node);
                    }
                    if self.index.class(simple).is_some() {
                        let (args, kwargs) = self.arguments(node);
                        return self.construct(simple, args, kwargs, node);
                    }
                }
                self.library_call(node, &path)
            }
            // `model(x)` on an object: its `forward` (nn.Module) or `__call__`.
            Value::Object(slot) => {
                let class = self.heap.get(slot).map(|obj| obj.class.clone()).unwrap_or_default();
                let method = self
                    .index
                    .method(&class, "__call__")
                    .or_else(|| self.index.method(&class, "forward"));
                match method {
                    Some(def) => {
                        let (mut args, kwargs) = self.arguments(node);
                        args.insert(0, Value::Object(slot));
                        self.call_function(def, args, kwargs, node)
                    }
                    None => self.opaque_call(node, "call"),
                }
            }
            _ => {
                let name = node
                    .child_by_field_name("function")
                    .map(|f| self.text(f).rsplit('.').next().unwrap_or("").to_string())
                    .unwrap_or_default();
                match name.as_str() {
                    "print" | "str" | "repr" | "float" | "int" | "bool" | "len" | "list" | "tuple" | "format" => {
                        self.builtin(node, &name)
                    }
                    // Builtins that look at objects, not at a tensor's data.
                    "isinstance" | "issubclass" | "type" | "id" | "hasattr" | "getattr" | "callable" | "hash"
                    | "dir" | "vars" => {
                        self.arguments(node);
                        Value::Unknown
                    }
                    _ => self.opaque_call(node, &name),
                }
            }
        }
    }

    /// A callable the files do not define: on device tensors it is a kernel on the
    /// current stream that reads them and writes its result; host tensors it reads on
    /// the host; on handles it is listed.
    pub(super) fn opaque_call(&mut self, node: Node<'t>, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let all: Vec<Value> = args.iter().chain(kwargs.iter().map(|(_, v)| v)).cloned().collect();
        let buffers: Vec<(String, Place)> = flatten(&all)
            .iter()
            .filter_map(|value| value.buffer().map(|(name, place)| (name.to_string(), place)))
            .collect();
        if is_host_check(name) {
            self.host_reads(&buffers, node);
            return Value::Unknown;
        }
        if buffers.iter().any(|(_, place)| *place == Place::Device) {
            return self.tensor_op(node, name, &all, None);
        }
        let span = self.range(node);
        for (buffer, place) in buffers {
            self.host_access(&buffer, place, false, span.clone());
        }
        let handles: Vec<String> = flatten(&all)
            .into_iter()
            .filter_map(|value| match value {
                Value::Stream(name) | Value::Event(name) => Some(name),
                _ => None,
            })
            .collect();
        if !handles.is_empty() {
            let name = node
                .child_by_field_name("function")
                .map_or("", |f| self.text(f))
                .to_string();
            // What it does with them is unknown: findings that rest on them are undecided.
            self.note_touching(
                node,
                format!("`{name}` is neither catalogued nor defined in the analyzed files, and receives a stream or event: what it does with it is not known"),
                handles,
            );
        }
        Value::Unknown
    }

    /// The host reads `buffers` (a device tensor through the blocking copy torch makes).
    pub(super) fn host_reads(&mut self, buffers: &[(String, Place)], node: Node<'t>) {
        let span = self.range(node);
        for (buffer, place) in buffers {
            self.host_read_value(buffer, *place, span.clone());
        }
    }

    pub(super) fn builtin(&mut self, node: Node<'t>, name: &str) -> Value {
        let args = self.positional_args(node);
        let span = self.range(node);
        // Printing or converting a tensor reads it on the host.
        for value in flatten(&args) {
            if let Value::Buffer(buffer, place) = value {
                self.host_read_value(&buffer, place, span.clone());
            }
        }
        match (name, args.first()) {
            ("int", Some(value)) => value.int().map_or(Value::Unknown, Value::Int),
            ("bool", Some(value)) => value.truth().map_or(Value::Unknown, Value::Bool),
            ("len", Some(Value::List(items) | Value::Tuple(items))) => Value::Int(items.len() as i64),
            ("list" | "tuple", Some(Value::List(items) | Value::Tuple(items))) => Value::List(items.clone()),
            _ => Value::Unknown,
        }
    }

    /// A call of a library function by its resolved path (`acl.rt.record_event`,
    /// `torch.npu.Stream`, `torch.zeros`).
    pub(super) fn library_call(&mut self, node: Node<'t>, path: &str) -> Value {
        if path.starts_with("acl.") {
            return self.acl_call(node, path);
        }
        if path == "threading.Thread" {
            return self.new_thread(node);
        }
        let torch = torch_path(path);
        match torch.as_deref() {
            Some("npu.Stream" | "npu.streams.Stream" | "cuda.Stream") => {
                // A stream of the device given (the current one by default).
                let device = self.device_argument(node);
                let name = self.fresh_hint("stream");
                let span = self.range(node);
                self.program_on(device, span);
                self.create(node, "acl.rt.create_stream", &name, Vec::new());
                self.stream_devices.insert(name.clone(), device);
                Value::Stream(name)
            }
            Some("npu.Event" | "npu.streams.Event" | "cuda.Event") => {
                self.arguments(node);
                self.torch_event(node)
            }
            Some("npu.ExternalEvent") => {
                // An ACL sync event: a wait blocks until a record, and is reset after.
                self.arguments(node);
                let name = self.fresh_hint("event");
                let span = self.range(node);
                self.create(
                    node,
                    "acl.rt.create_event_with_flag",
                    &name,
                    vec![ast::Expr::name("ACL_EVENT_SYNC", span)],
                );
                if let Some(owned) = self.owned.last_mut() {
                    owned.push(name.clone());
                }
                Value::Event(name)
            }
            Some("npu.current_stream" | "cuda.current_stream") => {
                let device = self.device_argument(node);
                self.current_stream_of(device)
            }
            Some("npu.default_stream" | "cuda.default_stream") => Value::DefaultStream(self.device_argument(node)),
            Some("npu.set_stream" | "cuda.set_stream") => {
                if let Some(stream) = self.positional_args(node).into_iter().next() {
                    let stream = self.received_as(stream, received::Kind::Stream);
                    self.switch_device(self.stream_device(&stream));
                    self.current = stream;
                }
                Value::None
            }
            Some("npu.set_device" | "cuda.set_device") => {
                let device = self.device_argument(node);
                self.switch_device(device);
                Value::None
            }
            Some("npu.device" | "cuda.device") => Value::DeviceContext(self.device_argument(node)),
            Some("npu.NPUGraph" | "npu.graphs.NPUGraph" | "cuda.CUDAGraph" | "cuda.graphs.CUDAGraph") => {
                self.new_graph(node)
            }
            Some("npu.graph" | "npu.graphs.graph" | "cuda.graph" | "cuda.graphs.graph") => self.graph_context(node),
            Some("npu.current_device" | "cuda.current_device") => {
                self.arguments(node);
                Value::Int(self.device)
            }
            Some("npu.stream" | "cuda.stream") => {
                let stream = self.positional_args(node).into_iter().next().unwrap_or(Value::Unknown);
                let stream = match stream {
                    Value::None => self.current.clone(),
                    other => self.received_as(other, received::Kind::Stream),
                };
                Value::StreamContext(Box::new(stream))
            }
            Some("npu.synchronize" | "cuda.synchronize") => {
                let device = self.device_argument(node);
                let span = self.range(node);
                self.program_on(device, span);
                self.catalogued(node, "acl.rt.synchronize_device", Vec::new());
                Value::None
            }
            Some("device") => {
                let args = self.positional_args(node);
                self.device_value(&args)
            }
            Some(name) if is_tensor_factory(name) => self.tensor_factory(node, name),
            Some("from_numpy" | "as_tensor" | "asarray") => {
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
                Value::Buffer(name, Place::Pageable)
            }
            Some(name) if name.starts_with("npu.") || name.starts_with("cuda.") || name.starts_with("distributed") => {
                self.opaque_call(node, name)
            }
            // Comparisons that answer on the host (`torch.allclose`, `torch.testing.assert_close`).
            Some(name) if is_host_check(name) => self.opaque_call(node, name),
            Some(name) => {
                // `torch.matmul(a, b)`, `torch.nn.functional.relu(x)`, `torch_npu.npu_rms_norm(x)`.
                let short = name.rsplit('.').next().unwrap_or(name).to_string();
                let (mut args, mut kwargs) = self.arguments(node);
                if received::is_tensor_function(name) {
                    args = self.received_tensors(args);
                    let (keys, values): (Vec<String>, Vec<Value>) = kwargs.into_iter().unzip();
                    kwargs = keys.into_iter().zip(self.received_tensors(values)).collect();
                }
                let out = kwargs
                    .iter()
                    .find(|(key, _)| key == "out")
                    .map(|(_, value)| value.clone());
                let all: Vec<Value> = args.into_iter().chain(kwargs.into_iter().map(|(_, v)| v)).collect();
                if flatten(&all).iter().any(|value| value.buffer().is_some()) {
                    self.tensor_op(node, &short, &all, out)
                } else {
                    Value::Unknown
                }
            }
            None => {
                if path.starts_with("numpy.") || path.starts_with("np.") {
                    let args = self.positional_args(node);
                    let span = self.range(node);
                    for value in flatten(&args) {
                        if let Value::Buffer(buffer, place) = value {
                            self.host_read_value(&buffer, place, span.clone());
                        }
                    }
                    return Value::Unknown;
                }
                self.opaque_call(node, path)
            }
        }
    }

    /// The operands of a binary operator: a received object is a tensor where the
    /// other operand is one (in the same memory), or where the operator is `@`.
    pub(super) fn tensor_operands(&mut self, op: &str, left: Value, right: Value) -> (Value, Value) {
        let tensors = op == "@" || left.buffer().is_some() || right.buffer().is_some();
        if !tensors {
            return (left, right);
        }
        match self.received_tensors(vec![left, right]).as_slice() {
            [left, right] => (left.clone(), right.clone()),
            _ => (Value::Unknown, Value::Unknown),
        }
    }

    /// The device a call names (`device=`, or its first argument; the current device
    /// where it names none).
    pub(super) fn device_argument(&mut self, node: Node<'t>) -> i64 {
        let (args, kwargs) = self.arguments(node);
        let given = kwargs
            .iter()
            .find(|(key, _)| key == "device")
            .map(|(_, value)| value)
            .or(args.first());
        given.and_then(|value| self.device_index(value)).unwrap_or(self.device)
    }

    pub(super) fn fresh_hint(&mut self, default: &str) -> String {
        match self.hint.take() {
            Some(hint) => self.fresh_written(&hint),
            None => self.fresh_name(default),
        }
    }

    /// `torch.npu.Event()`: an event whose records capture the stream's progress so far
    /// (torch_npu creates it with `aclrtCreateEventExWithFlag`).
    pub(super) fn torch_event(&mut self, node: Node<'t>) -> Value {
        let name = self.fresh_hint("event");
        let span = self.range(node);
        self.create(
            node,
            "acl.rt.create_event_ex_with_flag",
            &name,
            vec![ast::Expr::name("ACL_EVENT_SYNC", span)],
        );
        if let Some(owned) = self.owned.last_mut() {
            owned.push(name.clone());
        }
        self.torch_events.insert(name.clone());
        Value::Event(name)
    }

    /// `let NAME = API(args);`
    pub(super) fn create(&mut self, node: Node<'t>, api: &str, name: &str, args: Vec<ast::Expr>) {
        let span = self.range(node);
        self.api_calls += 1;
        let call = call_expr(api, args, Vec::new(), span.clone());
        self.emit(
            ast::StmtKind::Let {
                pattern: ast::Pattern::Name(ident(name, span.clone())),
                value: call,
            },
            span,
        );
    }

    /// A catalogued call statement `API(args);`.
    pub(super) fn catalogued(&mut self, node: Node<'t>, api: &str, args: Vec<ast::Expr>) {
        let span = self.range(node);
        self.api_calls += 1;
        let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr(api, args, Vec::new(), span.clone())
        else {
            return;
        };
        self.emit(ast::StmtKind::Call(*call), span);
    }

    pub(super) fn stream_expr(&mut self, stream: &Value, node: Node<'t>) -> Option<ast::Expr> {
        let span = self.range(node);
        let stream = &self.received_as(stream.clone(), received::Kind::Stream);
        match stream {
            Value::DefaultStream(device) => Some(Self::default_stream_expr(*device, span)),
            // pyACL's `0`: the default stream of the device the program set.
            Value::Int(0) | Value::None => Some(ast::Expr::int(0, span)),
            Value::Stream(name) => Some(ast::Expr::name(name, span)),
            _ => None,
        }
    }
}
