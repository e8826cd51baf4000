//! What a Python expression evaluates to, as far as synchronization goes.

/// Where a buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Device,
    /// Page-locked host memory (`pin_memory=True`, `acl.rt.malloc_host`).
    Pinned,
    /// Ordinary host memory (a CPU tensor, a numpy array).
    Pageable,
}

impl Place {
    pub fn is_host(self) -> bool {
        self != Place::Device
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Nothing the extraction can follow.
    Unknown,
    None,
    Int(i64),
    Bool(bool),
    Str(String),
    /// A stream, by its `.sync` name.
    Stream(String),
    /// The default stream of a device (`torch.npu.default_stream(d)`).
    DefaultStream(i64),
    Event(String),
    /// A tensor or a pointer to memory, by its `.sync` name.
    Buffer(String, Place),
    Tuple(Vec<Value>),
    List(Vec<Value>),
    /// A dict with keys of known value (`{"main": torch.npu.Stream(), ...}`), in
    /// insertion order.
    Dict(Vec<(Value, Value)>),
    /// An instance of a class the files define (its slot in the heap).
    Object(usize),
    /// A class the files define, by name.
    Class(String),
    /// A function the files define (its position in the index).
    Function(usize),
    /// A method of an object.
    Method(usize, usize),
    /// A function defined inside a function the walk is in (its position among them).
    Nested(usize),
    /// A `threading.Thread` (its position among them).
    HostThread(usize),
    /// A module or a name in one, alias-resolved: `torch.npu`, `acl.rt`.
    Module(String),
    /// `torch.npu.stream(s)`: a context that makes `s` current (and its device).
    StreamContext(Box<Value>),
    /// `torch.npu.device(d)`: a context that makes device `d` current.
    DeviceContext(i64),
    /// A pyACL dataset (`acl.mdl.create_dataset()`): its slot in the heap.
    Dataset(usize),
    /// A pyACL data buffer (`acl.create_data_buffer(ptr, size)`) over a buffer.
    DataBuffer(Box<Value>),
    /// An NPU graph (`torch.npu.NPUGraph()`): its slot in the heap, which holds its
    /// captured instance once a capture ends.
    Graph(usize),
    /// A captured model runtime instance, by its `.sync` name.
    GraphExec(String),
    /// `torch.npu.graph(g, stream=s)`: a context that captures its body into `g`.
    GraphContext(Box<GraphCapture>),
    /// An object the entry point receives from outside (a parameter), by its position
    /// among them: a stream, event or tensor from before once a use shows which.
    Received(usize),
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(value) => Some(*value),
            Value::Bool(value) => Some(i64::from(*value)),
            _ => None,
        }
    }

    /// Its truth, where Python's is known.
    pub fn truth(&self) -> Option<bool> {
        match self {
            Value::Int(value) => Some(*value != 0),
            Value::Bool(value) => Some(*value),
            Value::None => Some(false),
            Value::Str(text) => Some(!text.is_empty()),
            Value::Tuple(items) | Value::List(items) => Some(!items.is_empty()),
            Value::Dict(pairs) => Some(!pairs.is_empty()),
            Value::Stream(_)
            | Value::Event(_)
            | Value::Object(_)
            | Value::Class(_)
            | Value::Function(_)
            | Value::Nested(_)
            | Value::HostThread(_)
            | Value::Method(..)
            | Value::Module(_)
            | Value::StreamContext(_)
            | Value::DeviceContext(_)
            | Value::Graph(_)
            | Value::GraphExec(_)
            | Value::GraphContext(_)
            | Value::Dataset(_)
            | Value::DataBuffer(_)
            | Value::DefaultStream(_) => Some(true),
            _ => None,
        }
    }

    pub fn buffer(&self) -> Option<(&str, Place)> {
        match self {
            Value::Buffer(name, place) => Some((name, *place)),
            _ => None,
        }
    }

    /// Whether it holds a handle or buffer anywhere (an unknown call receiving it may
    /// change what is synchronized).
    pub fn holds_handle(&self) -> bool {
        match self {
            Value::Stream(_)
            | Value::Event(_)
            | Value::Buffer(..)
            | Value::DataBuffer(_)
            | Value::Dataset(_)
            | Value::GraphExec(_) => true,
            Value::Tuple(items) | Value::List(items) => items.iter().any(Value::holds_handle),
            Value::Dict(pairs) => pairs.iter().any(|(_, value)| value.holds_handle()),
            _ => false,
        }
    }
}

impl Value {
    /// The `.sync` names of the handles and buffers it holds, anywhere inside it.
    pub fn for_each_name(&self, visit: &mut impl FnMut(&str)) {
        match self {
            Value::Stream(name) | Value::Event(name) | Value::Buffer(name, _) | Value::GraphExec(name) => visit(name),
            Value::Tuple(items) | Value::List(items) => items.iter().for_each(|item| item.for_each_name(visit)),
            Value::Dict(pairs) => pairs.iter().for_each(|(_, value)| value.for_each_name(visit)),
            Value::StreamContext(inner) | Value::DataBuffer(inner) => inner.for_each_name(visit),
            _ => {}
        }
    }

    /// Whether it holds a handle or buffer named by `names`.
    pub fn mentions(&self, names: &std::collections::HashSet<String>) -> bool {
        let mut found = false;
        self.for_each_name(&mut |name| found |= names.contains(name));
        found
    }

    /// The same value with the handles and buffers `renamed` names called by their new name.
    pub fn rename(&mut self, renamed: &std::collections::HashMap<String, String>) {
        match self {
            Value::Stream(name) | Value::Event(name) | Value::Buffer(name, _) | Value::GraphExec(name) => {
                if let Some(new) = renamed.get(name.as_str()) {
                    name.clone_from(new);
                }
            }
            Value::Tuple(items) | Value::List(items) => items.iter_mut().for_each(|item| item.rename(renamed)),
            Value::Dict(pairs) => pairs.iter_mut().for_each(|(_, value)| value.rename(renamed)),
            Value::StreamContext(inner) | Value::DataBuffer(inner) => inner.rename(renamed),
            _ => {}
        }
    }
}

/// `torch.npu.graph(...)`'s arguments: the graph, the capture stream given, the
/// capture mode given (`"global"`, `"thread_local"`, `"relaxed"`).
#[derive(Clone, Debug, PartialEq)]
pub struct GraphCapture {
    pub graph: Value,
    pub stream: Option<Value>,
    pub mode: Option<Value>,
}
