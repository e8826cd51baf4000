//! Objects the entry point receives from outside: its parameters (and those of the
//! constructor of the object a method entry point runs on), the attributes of its
//! object that the constructor does not set, and their attributes.
//!
//! Each is an object from before of its own, of the kind its first use shows (or its
//! annotation says): a stream where a stream is expected (`let s1 =
//! acl.rt.create_stream();`), an event (`existing_event()`), a tensor or pointer
//! (`existing_memory()`, on the device). It is declared at the top of the program, named
//! after the parameter, so two parameters are never the same object. A use that does
//! not show what it is (`n + 1`, `model(x)`, `len(xs)`) leaves it unknown.

use super::*;

/// What a received object is taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Stream,
    Event,
    Tensor,
}

/// One object received from outside.
pub(super) struct Received {
    /// The Python name (`s1`, `self.stream`, `config.stream`).
    name: String,
    /// Where the code receives it (the parameter).
    span: Range<usize>,
    /// What its annotation says it is, if that is one kind for certain.
    annotated: Option<Kind>,
    /// The object it became at its first use as one.
    became: Option<Value>,
    /// Its attributes read so far: each a received object of its own.
    attrs: HashMap<String, usize>,
}

/// Methods only streams have.
const STREAM_METHODS: &[&str] = &["wait_stream", "wait_event", "record_event"];
/// Methods only events have.
const EVENT_METHODS: &[&str] = &["record", "wait", "elapsed_time", "reset"];
/// Methods only tensors have, among those code calls on tensors it receives (a method
/// ending in `_` is an in-place tensor operation too).
const TENSOR_METHODS: &[&str] = &[
    "abs",
    "add",
    "all",
    "any",
    "argmax",
    "argmin",
    "bfloat16",
    "bmm",
    "bool",
    "chunk",
    "clamp",
    "clone",
    "contiguous",
    "copy_",
    "cpu",
    "cuda",
    "cumsum",
    "detach",
    "dim",
    "div",
    "element_size",
    "eq",
    "exp",
    "expand",
    "expand_as",
    "flatten",
    "float",
    "gather",
    "ge",
    "gt",
    "half",
    "index_select",
    "int",
    "is_pinned",
    "item",
    "le",
    "log",
    "long",
    "lt",
    "masked_fill",
    "matmul",
    "max",
    "mean",
    "min",
    "mm",
    "mul",
    "narrow",
    "ne",
    "neg",
    "norm",
    "npu",
    "numel",
    "numpy",
    "permute",
    "pin_memory",
    "pow",
    "record_stream",
    "relu",
    "reshape",
    "select",
    "sigmoid",
    "softmax",
    "split",
    "sqrt",
    "squeeze",
    "stride",
    "sub",
    "sum",
    "t",
    "tanh",
    "to",
    "tolist",
    "topk",
    "transpose",
    "type_as",
    "unbind",
    "unflatten",
    "unsqueeze",
    "view",
    "view_as",
];

/// torch functions that are not operations on the tensors they are given.
const NOT_TENSOR_FUNCTIONS: &[&str] = &[
    "compile",
    "device",
    "enable_grad",
    "get_default_dtype",
    "inference_mode",
    "load",
    "manual_seed",
    "no_grad",
    "save",
    "seed",
    "set_default_dtype",
    "set_grad_enabled",
    "use_deterministic_algorithms",
];

/// Modules whose lowercase functions operate on the tensors they are given.
const TENSOR_MODULES: &[&str] = &[
    "torch",
    "torch_npu",
    "torch.nn.functional",
    "torch.special",
    "torch.linalg",
    "torch.fft",
    "torch.nn.init",
];

/// Received objects whose names grow longer than this (`a.b.c...`) are not followed.
const MAX_NAME: usize = 64;

impl<'t> Walker<'_, 't> {
    /// A parameter of the entry point (or of its object's constructor) that the code
    /// receives from outside; `param` is its node, `annotation` its type as written.
    pub(super) fn receive(&mut self, name: &str, param: Node<'t>, annotation: Option<&str>) -> Value {
        let annotated = annotation.and_then(annotated_kind);
        let at = self.new_received(name.to_string(), self.range(param), annotated);
        let value = Value::Received(at);
        match annotated {
            Some(kind) => self.received_as(value, kind),
            None => value,
        }
    }

    fn new_received(&mut self, name: String, span: Range<usize>, annotated: Option<Kind>) -> usize {
        self.received.push(Received {
            name,
            span,
            annotated,
            became: None,
            attrs: HashMap::new(),
        });
        self.received.len() - 1
    }

    /// A received object's attribute (`config.stream`): a received object of its own.
    pub(super) fn received_attr(&mut self, at: usize, attr: &str) -> Value {
        let Some(received) = self.received.get(at) else {
            return Value::Unknown;
        };
        if let Some(known) = received.attrs.get(attr) {
            return self.resolve(Value::Received(*known));
        }
        let name = format!("{}.{attr}", received.name);
        if name.len() > MAX_NAME {
            return Value::Unknown;
        }
        let span = received.span.clone();
        let new = self.new_received(name, span, None);
        self.received[at].attrs.insert(attr.to_string(), new);
        Value::Received(new)
    }

    /// An attribute of the entry point's object that nothing set: received.
    pub(super) fn entry_attr(&mut self, attr: &str, at: Node<'t>) -> Value {
        if let Some(known) = self.entry_attrs.get(attr) {
            return self.resolve(Value::Received(*known));
        }
        let new = self.new_received(format!("self.{attr}"), self.range(at), None);
        self.entry_attrs.insert(attr.to_string(), new);
        Value::Received(new)
    }

    /// `value` as a `kind` where it is a received object: the object from before it
    /// becomes (declared at its first such use); any other value as it is.
    pub(super) fn received_as(&mut self, value: Value, kind: Kind) -> Value {
        self.received_on(value, kind, None)
    }

    /// `value` as host memory, where it is a received object.
    pub(super) fn received_in_host_memory(&mut self, value: Value) -> Value {
        self.received_on(value, Kind::Tensor, Some(Place::Pageable))
    }

    /// As `received_as`; a tensor is in memory of the `place` given (that of the
    /// tensors it is used with), else of the place its name says (`mask_cpu`, `out_host`
    /// are host tensors), else on the device.
    fn received_on(&mut self, value: Value, kind: Kind, place: Option<Place>) -> Value {
        let Value::Received(at) = value else {
            return value;
        };
        if let Some(became) = &self.received[at].became {
            return became.clone();
        }
        if let Some(same) = self.aliased(at, kind) {
            self.received[at].became = Some(same.clone());
            return same;
        }
        let received = &self.received[at];
        let span = received.span.clone();
        let base = received.name.clone();
        let name = self.fresh_written(&base);
        let (api, object) = match kind {
            Kind::Stream => ("acl.rt.create_stream", Value::Stream(name.clone())),
            Kind::Event => ("existing_event", Value::Event(name.clone())),
            Kind::Tensor => {
                let place = place.or_else(|| place_by_name(&base)).unwrap_or(Place::Device);
                self.tensor_devices.insert(name.clone(), self.device);
                ("existing_memory", Value::Buffer(name.clone(), place))
            }
        };
        self.declare(&name, api, Vec::new(), span);
        self.received[at].became = Some(object.clone());
        object
    }

    /// The object another name of `at`'s alias group (`--alias`) already became, if
    /// it is of `kind`: the same object.
    fn aliased(&self, at: usize, kind: Kind) -> Option<Value> {
        let name = alias_name(&self.received[at].name);
        let group = self
            .aliases
            .iter()
            .find(|group| group.iter().any(|member| member == name))?;
        self.received.iter().enumerate().find_map(|(other, received)| {
            let became = received.became.as_ref()?;
            let member = alias_name(&received.name);
            (other != at && member != name && group.iter().any(|m| m == member) && kind_of(became) == Some(kind))
                .then(|| became.clone())
        })
    }

    /// Values given to an operation on tensors: the received objects among them (also
    /// inside lists and tuples) are tensors, where the others are (on the device if
    /// any of them is).
    pub(super) fn received_tensors(&mut self, values: Vec<Value>) -> Vec<Value> {
        let place = operands_place(&values);
        values
            .into_iter()
            .map(|value| self.received_tensor(value, place, 0))
            .collect()
    }

    fn received_tensor(&mut self, value: Value, place: Option<Place>, depth: usize) -> Value {
        match value {
            Value::Received(_) => self.received_on(value, Kind::Tensor, place),
            Value::List(items) if depth < 8 => Value::List(
                items
                    .into_iter()
                    .map(|item| self.received_tensor(item, place, depth + 1))
                    .collect(),
            ),
            Value::Tuple(items) if depth < 8 => Value::Tuple(
                items
                    .into_iter()
                    .map(|item| self.received_tensor(item, place, depth + 1))
                    .collect(),
            ),
            other => other,
        }
    }

    /// A value with every received object that became one replaced by that object.
    pub(super) fn resolve(&self, value: Value) -> Value {
        if self.received.iter().all(|received| received.became.is_none()) {
            return value;
        }
        self.resolve_in(value, 0)
    }

    fn resolve_in(&self, value: Value, depth: usize) -> Value {
        match value {
            Value::Received(at) => self.received[at].became.clone().unwrap_or(value),
            _ if depth >= 8 => value,
            Value::List(items) => Value::List(items.into_iter().map(|item| self.resolve_in(item, depth + 1)).collect()),
            Value::Tuple(items) => {
                Value::Tuple(items.into_iter().map(|item| self.resolve_in(item, depth + 1)).collect())
            }
            Value::Dict(pairs) => Value::Dict(
                pairs
                    .into_iter()
                    .map(|(key, value)| (key, self.resolve_in(value, depth + 1)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// `x.name(...)` on a received object that has not shown what it is yet: the
    /// method decides, where only one kind has it.
    pub(super) fn received_method(&mut self, node: Node<'t>, at: usize, name: &str) -> Value {
        let received = &self.received[at];
        let kind = if STREAM_METHODS.contains(&name) {
            Some(Kind::Stream)
        } else if EVENT_METHODS.contains(&name) {
            Some(Kind::Event)
        } else if TENSOR_METHODS.contains(&name) || (name.ends_with('_') && !name.starts_with('_')) {
            Some(Kind::Tensor)
        } else if matches!(name, "synchronize" | "query") {
            received.annotated.or_else(|| kind_by_name(&received.name))
        } else {
            None
        };
        match kind {
            Some(kind) => {
                let object = self.received_as(Value::Received(at), kind);
                self.method_call(node, object, name)
            }
            None => {
                if matches!(name, "synchronize" | "query") {
                    let what = received.name.clone();
                    self.note(
                        node,
                        format!("`{what}.{name}()`: whether `{what}` is a stream or an event is not known: the call is left out"),
                    );
                    self.arguments(node);
                    return Value::Unknown;
                }
                self.opaque_call(node, name)
            }
        }
    }
}

/// Whether a torch function (`torch.matmul`, `torch_npu.npu_rms_norm`, by its path
/// after `torch.`) operates on the tensors it is given.
pub(super) fn is_tensor_function(path: &str) -> bool {
    let (module, function) = path.rsplit_once('.').unwrap_or(("torch", path));
    let module = if path.contains('.') {
        format!("torch.{module}")
    } else {
        module.to_string()
    };
    function.starts_with(|c: char| c.is_ascii_lowercase())
        && !NOT_TENSOR_FUNCTIONS.contains(&function)
        && !function.starts_with("set_")
        && !function.starts_with("get_")
        && !function.starts_with("is_")
        && TENSOR_MODULES.contains(&module.as_str())
}

/// The kind a type annotation names for certain (`torch.Tensor`, `torch.npu.Stream`,
/// not `Optional[torch.Tensor]`).
fn annotated_kind(annotation: &str) -> Option<Kind> {
    if annotation.contains("None") || annotation.contains("Optional") || annotation.contains('|') {
        return None;
    }
    let last = annotation.rsplit('.').next().unwrap_or(annotation).trim();
    match last {
        "Stream" => Some(Kind::Stream),
        "Event" | "ExternalEvent" => Some(Kind::Event),
        "Tensor" => Some(Kind::Tensor),
        _ => None,
    }
}

/// Where the tensors among `values` are: on the device if any is, else on the host if
/// any is there.
fn operands_place(values: &[Value]) -> Option<Place> {
    let places: Vec<Place> = flatten(values)
        .iter()
        .filter_map(|value| value.buffer().map(|(_, place)| place))
        .collect();
    if places.contains(&Place::Device) {
        return Some(Place::Device);
    }
    places.first().copied()
}

/// The host memory a tensor's name says it is in (`mask_cpu`, `host_out`): pageable,
/// which torch copies from and to synchronously.
fn place_by_name(name: &str) -> Option<Place> {
    let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    let words: Vec<&str> = last.split('_').collect();
    words
        .iter()
        .any(|word| matches!(*word, "cpu" | "host" | "np" | "numpy"))
        .then_some(Place::Pageable)
}

/// What a name says an object is, where it says so (`copy_stream`, `done_event`).
fn kind_by_name(name: &str) -> Option<Kind> {
    let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    if last.contains("stream") {
        Some(Kind::Stream)
    } else if last.contains("event") || last == "ev" || last.starts_with("ev_") || last.ends_with("_ev") {
        Some(Kind::Event)
    } else {
        None
    }
}

/// The name an alias group gives a received object: `stream` for `self.stream`.
fn alias_name(name: &str) -> &str {
    name.strip_prefix("self.").unwrap_or(name)
}

/// The kind of object a received object became.
fn kind_of(value: &Value) -> Option<Kind> {
    match value {
        Value::Stream(_) => Some(Kind::Stream),
        Value::Event(_) => Some(Kind::Event),
        Value::Buffer(..) => Some(Kind::Tensor),
        _ => None,
    }
}
