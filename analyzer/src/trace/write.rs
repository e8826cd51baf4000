//! Writing a concrete run as a v1 call trace: one line per host call that was made,
//! its arguments under the C prototype's parameter names, so that `syncguard check`
//! reads the trace back into the same ops (and `loc` points at the `.sync` line).
//!
//! Handles are the objects' names (`s1`, `ev`); a second live instance of one object
//! (a `let` in a loop) is `ev@1`, and so on. GE ops are written at the end, as the
//! `ge.op` line followed by its task list.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::api::{self, Api, ArgKind, Creates, EnumFamily};
use crate::exec::{Access, Action, Execution, InstId, NodeId};
use crate::model::{DefaultStream, GeOp, GeTaskKind, MemorySpace, ObjId, ObjectKind, OpKind, StreamSync};
use crate::source::{Sources, Span};

/// One call as it was made: its node and when (ns since the run started).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracedCall {
    pub node: NodeId,
    pub ts_ns: u64,
}

/// Write `calls` (in the order they were made) of `exec` as a trace to `out`. With
/// `sources`, each line's `loc` names the `.sync` line the call was written on.
pub fn write_trace(
    exec: &Execution,
    calls: &[TracedCall],
    sources: Option<&Sources>,
    out: &mut impl Write,
) -> io::Result<()> {
    let writer = TraceWriter::new(exec, sources);
    let settings = &exec.program.settings;
    let cann = match settings.cann {
        crate::model::CannPolicy::Current => "current",
        crate::model::CannPolicy::Legacy => "legacy",
    };
    let mut header =
        json!({"syncguard_trace": 1, "world_size": exec.ranks, "target": settings.target.name(), "cann": cann});
    if settings.default_stream == DefaultStream::PerThread {
        header["default_stream"] = json!("per-thread");
    }
    writeln!(out, "{header}")?;
    let mut written = vec![false; calls.len()];
    for index in 0..calls.len() {
        if written[index] {
            continue;
        }
        // Calls that create several handles (`HcclChannelAcquire`) are one node per
        // handle, the next calls of their host thread (other threads' calls may come
        // between them in a run).
        let first = calls[index];
        let mut group = vec![first.node];
        let host = writer.exec.node(first.node).host;
        for (later, next) in calls.iter().enumerate().skip(index + 1) {
            if writer.exec.node(next.node).host != host {
                continue;
            }
            if !writer.same_call(first.node, next.node) {
                break;
            }
            group.push(next.node);
            written[later] = true;
        }
        if let Some(line) = writer.line(&group, first.ts_ns) {
            writeln!(out, "{line}")?;
        }
    }
    for op in &exec.program.ge_ops {
        for line in writer.ge_op(op) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

struct TraceWriter<'e, 'p> {
    exec: &'e Execution<'p>,
    sources: Option<&'e Sources>,
    /// Every instance's handle.
    handles: Vec<String>,
    /// Each object's instances on each rank, in creation order.
    instances: HashMap<(u32, ObjId), Vec<InstId>>,
    /// Each rank's communicators, in creation order.
    comms: HashMap<u32, Vec<InstId>>,
}

/// An argument value, by the kind of parameter it fills.
struct Arg {
    kind: ArgKind,
    value: Value,
}

impl Arg {
    fn new(kind: ArgKind, value: Value) -> Self {
        Arg { kind, value }
    }
}

impl<'e, 'p> TraceWriter<'e, 'p> {
    fn new(exec: &'e Execution<'p>, sources: Option<&'e Sources>) -> Self {
        let mut instances: HashMap<(u32, ObjId), Vec<InstId>> = HashMap::new();
        let mut comms: HashMap<u32, Vec<InstId>> = HashMap::new();
        let mut handles = Vec::with_capacity(exec.instances.len());
        for (index, instance) in exec.instances.iter().enumerate() {
            let id = InstId(index as u32);
            let object = exec.program.object(instance.obj);
            let same = instances.entry((instance.rank, instance.obj)).or_default();
            handles.push(match same.len() {
                0 => object.name.clone(),
                n => format!("{}@{n}", object.name),
            });
            same.push(id);
            if matches!(object.kind, ObjectKind::Comm) {
                comms.entry(instance.rank).or_default().push(id);
            }
        }
        TraceWriter {
            exec,
            sources,
            handles,
            instances,
            comms,
        }
    }

    /// Whether `next` is another handle created by the call of `first` (one op per
    /// handle, all spanning the call).
    fn same_call(&self, first: NodeId, next: NodeId) -> bool {
        let (a, b) = (self.exec.node(first), self.exec.node(next));
        let (Action::Create(_), Action::Create(created)) = (&a.action, &b.action) else {
            return false;
        };
        // One op creates every handle of an array; one op per handle otherwise.
        let next_handle = match self.exec.instance(*created).element {
            Some(k) => k > 0,
            None => !std::ptr::eq(a.op, b.op),
        };
        a.host == b.host && a.op.span == b.op.span && next_handle
    }

    fn handle(&self, inst: InstId) -> Value {
        let instance = self.exec.instance(inst);
        if let Some(name) = self.implicit_stream(instance.obj) {
            return name;
        }
        Value::String(self.handles[inst.index()].clone())
    }

    /// The handle of a stream that exists without being created: `null` for the stream
    /// `0` means, the CUDA name for the other.
    fn implicit_stream(&self, obj: ObjId) -> Option<Value> {
        let name = self.exec.program.implicit_stream_name(obj)?;
        Some(name.map_or(Value::Null, |name| json!(name)))
    }

    /// The instance of `obj` that a call at `node` names: the latest one created before it.
    fn object(&self, node: NodeId, obj: ObjId) -> Value {
        if let Some(name) = self.implicit_stream(obj) {
            return name;
        }
        if let Some(inst) = self.exec.element_handle(node, obj) {
            return self.handle(inst);
        }
        let rank = self.exec.node(node).rank(self.exec);
        let created = self.instances.get(&(rank, obj)).map_or(&[][..], Vec::as_slice);
        self.latest_before(created, node)
    }

    /// The last of `instances` (in creation order) created at or before `node`.
    fn latest_before(&self, instances: &[InstId], node: NodeId) -> Value {
        let live = instances.partition_point(|&i| self.exec.instance(i).created.is_none_or(|c| c <= node));
        live.checked_sub(1)
            .map_or(Value::Null, |last| self.handle(instances[last]))
    }

    fn pointer(&self, access: &Access) -> Value {
        json!({"buf": self.handle(access.buffer), "off": access.start, "len": access.end - access.start})
    }

    fn env_eval(&self, node: NodeId, expr: &crate::model::Expr) -> Option<i64> {
        self.exec.host_env(self.exec.node(node).rank(self.exec)).eval(expr).ok()
    }

    fn line(&self, group: &[NodeId], ts_ns: u64) -> Option<Value> {
        let node = self.exec.node(group[0]);
        let api = match node.op.kind {
            // A trace has no SuperKernel lines: the launch is the kernel it runs as.
            OpKind::LaunchSuperKernel(_) => api::lookup("kernel")?,
            _ => api::lookup(node.op.api)?,
        };
        let fields = match (&node.op.kind, &node.action) {
            // The pseudo-op's range is its arguments: `{"buf", "off", "len"}`.
            (OpKind::HostAccess { .. }, Action::Access(accesses)) if !is_memset(api) => self.pointer(accesses.first()?),
            _ => {
                let (args, created) = self.args(group, api)?;
                Value::Object(self.fields(api, &args, &created))
            }
        };
        let rank = node.rank(self.exec);
        let thread = match self.exec.agent(node.host).kind {
            crate::exec::AgentKind::Host(thread) => self.exec.program.threads[thread.index()].name.clone(),
            _ => "main".to_string(),
        };
        let mut line = json!({"rank": rank, "thread": thread, "api": api.name, "args": fields, "ret": 0, "ts": ts_ns});
        if let Some(loc) = self.loc(&node.op.span) {
            line["loc"] = loc;
        }
        Some(line)
    }

    /// The arguments by parameter name: the k-th parameter of a kind gets the k-th value
    /// of that kind; the output parameter gets the created handles.
    fn fields(&self, api: &Api, args: &[Arg], created: &[InstId]) -> Map<String, Value> {
        let mut fields = Map::new();
        let mut used = vec![false; args.len()];
        for param in api.params {
            let slot = args.iter().enumerate().position(|(i, arg)| {
                !used[i]
                    && (arg.kind == param.kind
                        || matches!((arg.kind, param.kind), (ArgKind::Timeout(_), ArgKind::Timeout(_))))
            });
            match slot {
                Some(i) => {
                    used[i] = true;
                    fields.insert(param.name.to_string(), args[i].value.clone());
                }
                None if !param.optional => {
                    fields.insert(param.name.to_string(), default_value(param.kind));
                }
                None => {}
            }
        }
        if !api.output.is_empty() {
            let handles: Vec<Value> = created.iter().map(|&inst| self.handle(inst)).collect();
            let output = match api.creates {
                Creates::Channels | Creates::HcclThreads => Value::Array(handles),
                _ => handles.into_iter().next().unwrap_or(Value::Null),
            };
            fields.insert(api.output.to_string(), output);
        }
        fields
    }

    fn loc(&self, span: &Span) -> Option<Value> {
        let file = self.sources?.get(span.file);
        let (line, col) = file.line_col(span.range.start);
        Some(json!({"file": file.path, "line": line, "col": col}))
    }

    /// The call's argument values (by kind, in parameter order) and what it created.
    fn args(&self, group: &[NodeId], api: &Api) -> Option<(Vec<Arg>, Vec<InstId>)> {
        let id = group[0];
        let node = self.exec.node(id);
        let object = |obj| self.object(id, obj);
        let int = |value: i64| Arg::new(ArgKind::Int, json!(value));
        let timeout = |t: Option<&crate::model::Timeout>| {
            t.and_then(|t| Some(Arg::new(ArgKind::Timeout(t.unit), json!(self.env_eval(id, &t.value)?))))
        };
        let accesses = || match &node.action {
            Action::Access(accesses) => &accesses[..],
            _ => &[],
        };
        let mut args = Vec::new();
        let mut created = Vec::new();
        match (&node.op.kind, &node.action) {
            // A memset is a host write or a kernel in the model, but has its own prototype.
            (_, Action::Access(accesses)) if is_memset(api) => args = self.memset_args(id, api, accesses)?,
            (OpKind::Spawn(_), _) => return None,
            (OpKind::Create(_), _) => {
                created = group
                    .iter()
                    .filter_map(|&n| match self.exec.node(n).action {
                        Action::Create(inst) => Some(inst),
                        _ => None,
                    })
                    .collect();
                args = self.creation_args(id, &created)?;
            }
            (OpKind::Destroy(_), Action::Destroy(inst)) => {
                let kind = api.params.first().map_or(ArgKind::Opaque, |p| p.kind);
                let value = match kind {
                    ArgKind::Ptr => json!({"buf": self.handle(*inst)}),
                    _ => self.handle(*inst),
                };
                args.push(Arg::new(kind, value));
            }
            (OpKind::EventRecord { stream, .. }, Action::EventRecord(event))
            | (OpKind::EventReset { stream, .. }, Action::EventReset(event)) => {
                args.push(Arg::new(ArgKind::Event, self.handle(*event)));
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
            }
            (OpKind::EventWait { stream, timeout: t, .. }, Action::EventWait(event)) => {
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
                args.push(Arg::new(ArgKind::Event, self.handle(*event)));
                args.extend(timeout(t.as_deref()));
            }
            (OpKind::EventQuery { .. }, Action::EventQuery(event)) => {
                args.push(Arg::new(ArgKind::Event, self.handle(*event)));
            }
            (OpKind::EventElapsedTime { .. }, Action::EventElapsedTime { start, end }) => {
                args.push(Arg::new(ArgKind::Event, self.handle(*start)));
                args.push(Arg::new(ArgKind::Event, self.handle(*end)));
            }
            (OpKind::EventSynchronize { timeout: t, .. }, Action::EventSync(event)) => {
                args.push(Arg::new(ArgKind::Event, self.handle(*event)));
                args.extend(timeout(t.as_deref()));
                args.extend(completed_status(api));
            }
            (OpKind::StreamSynchronize { stream, timeout: t }, _) => {
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
                args.extend(timeout(t.as_deref()));
                args.extend(completed_status(api));
            }
            (OpKind::EventWaitsSynchronize { .. }, Action::WaitsSync { event, .. }) => {
                args.push(Arg::new(ArgKind::Event, self.handle(*event)));
                args.extend(completed_status(api));
            }
            (OpKind::DeviceSynchronize, _) => {}
            (OpKind::NotifyRecord { stream, .. }, Action::NotifyRecord(notify)) => {
                args.push(Arg::new(ArgKind::Notify, self.handle(*notify)));
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
            }
            (OpKind::NotifyWait { stream, timeout: t, .. }, Action::NotifyWait(notify)) => {
                args.push(Arg::new(ArgKind::Notify, self.handle(*notify)));
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
                args.extend(timeout(t.as_deref()));
            }
            (OpKind::ChannelNotifyRecord { thread, .. }, Action::ChannelNotifyRecord { channel, index }) => {
                args.push(Arg::new(ArgKind::Thread, object(*thread)));
                args.push(Arg::new(ArgKind::Channel, self.handle(*channel)));
                args.push(int(*index));
            }
            (OpKind::ChannelNotifyWait { thread, timeout: t, .. }, Action::ChannelNotifyWait { channel, index }) => {
                args.push(Arg::new(ArgKind::Thread, object(*thread)));
                args.push(Arg::new(ArgKind::Channel, self.handle(*channel)));
                args.push(int(*index));
                args.extend(timeout(t.as_deref()));
            }
            (OpKind::ThreadNotifyRecord { thread, .. }, Action::ThreadNotifyRecord { target, index }) => {
                args.push(Arg::new(ArgKind::Thread, object(*thread)));
                args.push(Arg::new(ArgKind::Thread, self.handle(*target)));
                args.push(int(*index));
            }
            (OpKind::ThreadNotifyWait { timeout: t, .. }, Action::ThreadNotifyWait { thread, index }) => {
                args.push(Arg::new(ArgKind::Thread, self.handle(*thread)));
                args.push(int(*index));
                args.extend(timeout(t.as_deref()));
            }
            (OpKind::RemoteWrite { thread, channel, .. }, _) | (OpKind::RemoteRead { thread, channel, .. }, _) => {
                let [src, dst] = accesses() else { return None };
                args.push(Arg::new(ArgKind::Thread, object(*thread)));
                args.push(Arg::new(ArgKind::Channel, object(*channel)));
                args.extend(self.transfer(api, dst, src));
                // `HcommWriteWithNotifyOnThread` is a write node and then its record node.
                if let Some(next) = self.exec.nodes.get(id.index() + 1)
                    && std::ptr::eq(next.op, node.op)
                    && let Action::ChannelNotifyRecord { index, .. } = next.action
                {
                    args.push(int(index));
                }
            }
            (OpKind::LocalCopy { thread, .. }, _) => {
                let [src, dst] = accesses() else { return None };
                args.push(Arg::new(ArgKind::Thread, object(*thread)));
                args.extend(self.transfer(api, dst, src));
            }
            (OpKind::Fence { thread, channel }, _) => {
                args.push(Arg::new(ArgKind::Thread, object(*thread)));
                if let Some(channel) = channel {
                    args.push(Arg::new(ArgKind::Channel, object(*channel)));
                }
            }
            (OpKind::ThreadSynchronize { thread }, _) => args.push(Arg::new(ArgKind::Thread, object(*thread))),
            (OpKind::Memcpy { stream, copy }, _) => {
                let [src, dst] = accesses() else { return None };
                let len = json!(dst.end - dst.start);
                args.push(Arg::new(ArgKind::Ptr, self.pointer(dst)));
                args.push(Arg::new(ArgKind::Int, len.clone()));
                args.push(Arg::new(ArgKind::Ptr, self.pointer(src)));
                args.push(Arg::new(ArgKind::Int, len.clone()));
                if api.params.iter().any(|p| p.name == "height") {
                    // `cudaMemcpy2D`: one row (`width`) of the whole span.
                    args.push(Arg::new(ArgKind::Int, len));
                    args.push(Arg::new(ArgKind::Int, json!(1)));
                }
                if let Some(stream) = stream {
                    args.push(Arg::new(ArgKind::Stream, object(*stream)));
                }
                let cuda = api.name.starts_with("cuda");
                args.push(Arg::new(
                    ArgKind::Enum(EnumFamily::MemcpyKind),
                    json!(copy.kind.name(cuda)),
                ));
            }
            (OpKind::Kernel { stream, launch }, Action::Access(accesses)) => {
                let name = &launch.name;
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
                // `kernel`'s `name`, or a real launch's function handle.
                let name_kind = match api.params.iter().any(|p| p.kind == ArgKind::Function) {
                    true => ArgKind::Function,
                    false => ArgKind::Str,
                };
                args.push(Arg::new(name_kind, json!(name)));
                args.extend(self.footprint(accesses));
            }
            (OpKind::LaunchSuperKernel(id), Action::Access(accesses)) => {
                let superkernel = &self.exec.program.superkernels[id.index()];
                args.push(Arg::new(ArgKind::Stream, object(superkernel.stream)));
                args.push(Arg::new(ArgKind::Str, json!(superkernel.name)));
                args.extend(self.footprint(accesses));
            }
            (OpKind::SetWaitTimeout(t), _) => args.extend(timeout(Some(t))),
            (OpKind::BeginCapture { stream, relaxed }, _) => {
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
                let family = if api.name.starts_with("aclmdlRI") {
                    EnumFamily::AclCaptureMode
                } else {
                    EnumFamily::CaptureMode
                };
                let modes = family.constants();
                let mode = if *relaxed { modes[2] } else { modes[0] };
                args.push(Arg::new(ArgKind::Enum(family), json!(mode)));
            }
            (OpKind::GraphLaunch { graph, stream }, _) => {
                let kind = match self.exec.program.kind_of(*graph) {
                    ObjectKind::Graph { .. } => ArgKind::Graph,
                    _ => ArgKind::GraphExec,
                };
                args.push(Arg::new(kind, object(*graph)));
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
            }
            (OpKind::BatchMode { tag, .. }, _) => args.push(Arg::new(ArgKind::Str, json!(tag))),
            (OpKind::ValueWrite { stream, .. }, Action::ValueWrite { word, value }) => {
                args.push(Arg::new(ArgKind::Ptr, self.pointer(word)));
                args.push(Arg::new(ArgKind::Int, json!(value)));
                args.push(Arg::new(ArgKind::Flags, json!(0)));
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
            }
            (
                OpKind::ValueWait { stream, .. },
                Action::ValueWait {
                    word, value, condition, ..
                },
            ) => {
                args.push(Arg::new(ArgKind::Ptr, self.pointer(word)));
                args.push(Arg::new(ArgKind::Int, json!(value)));
                args.push(Arg::new(ArgKind::Flags, json!(*condition as u32)));
                args.push(Arg::new(ArgKind::Stream, object(*stream)));
            }
            _ => return None,
        }
        Some((args, created))
    }

    /// A memset's arguments: the written range as `devPtr`, its length as `count` (and
    /// `maxCount`), the value 0 (the model keeps no value), the stream.
    fn memset_args(&self, id: NodeId, api: &Api, accesses: &[Access]) -> Option<Vec<Arg>> {
        let range = accesses.iter().find(|a| a.write)?;
        let len = json!(range.end - range.start);
        let stream = match &self.exec.node(id).op.kind {
            OpKind::Kernel { stream, .. } => Some(*stream),
            _ => None,
        };
        let args = api.params.iter().filter_map(|param| match param.name {
            "devPtr" => Some(Arg::new(ArgKind::Ptr, self.pointer(range))),
            // `cudaMemset2D`: one row of the whole span.
            "maxCount" | "count" | "pitch" | "width" => Some(Arg::new(ArgKind::Int, len.clone())),
            "height" => Some(Arg::new(ArgKind::Int, json!(1))),
            "value" => Some(Arg::new(ArgKind::Int, json!(0))),
            "stream" => stream.map(|stream| Arg::new(ArgKind::Stream, self.object(id, stream))),
            _ => None,
        });
        Some(args.collect())
    }

    /// A kernel's reads and writes.
    fn footprint(&self, accesses: &[Access]) -> [Arg; 2] {
        let list = |write: bool| {
            Value::Array(
                accesses
                    .iter()
                    .filter(|a| a.write == write)
                    .map(|a| self.pointer(a))
                    .collect(),
            )
        };
        [
            Arg::new(ArgKind::Ranges, list(false)),
            Arg::new(ArgKind::Ranges, list(true)),
        ]
    }

    /// `dst`, `src` and the length (in elements of the data type for reduce transfers).
    fn transfer(&self, api: &Api, dst: &Access, src: &Access) -> Vec<Arg> {
        let bytes = dst.end - dst.start;
        let mut args = vec![
            Arg::new(ArgKind::Ptr, self.pointer(dst)),
            Arg::new(ArgKind::Ptr, self.pointer(src)),
        ];
        args.push(Arg::new(ArgKind::Int, json!(bytes)));
        // Reduce transfers count elements; the model keeps bytes, so they are written as
        // one-byte elements, which reads back to the same length.
        if api.params.iter().any(|p| p.kind == ArgKind::Enum(EnumFamily::DataType)) {
            args.push(Arg::new(
                ArgKind::Enum(EnumFamily::DataType),
                json!("HCOMM_DATA_TYPE_INT8"),
            ));
        }
        args
    }

    fn creation_args(&self, node: NodeId, created: &[InstId]) -> Option<Vec<Arg>> {
        let first = self.exec.instance(*created.first()?);
        let program = self.exec.program;
        let object = |obj| self.object(node, obj);
        let engine = |name: &str| {
            let name = if name.is_empty() { "COMM_ENGINE_AICPU_TS" } else { name };
            Arg::new(ArgKind::Enum(EnumFamily::Engine), json!(name))
        };
        let int = |value: i64| Arg::new(ArgKind::Int, json!(value));
        Some(match &program.object(first.obj).kind {
            ObjectKind::Stream(sync) if self.exec.node(node).op.api.starts_with("cuda") => {
                let non_blocking = match sync {
                    StreamSync::Independent => 1, // cudaStreamNonBlocking
                    StreamSync::Blocking => 0,
                };
                vec![Arg::new(ArgKind::Flags, json!(non_blocking))]
            }
            ObjectKind::Stream(_) | ObjectKind::Notify | ObjectKind::Context { current: true } => Vec::new(),
            ObjectKind::Context { current: false } => vec![int(0)],
            ObjectKind::Graph { stream } => vec![Arg::new(ArgKind::Stream, object(*stream))],
            ObjectKind::GraphExec { graph } => vec![Arg::new(ArgKind::Graph, object(*graph))],
            // An instance is of its array's kind.
            ObjectKind::Element { .. } => return None,
            ObjectKind::Event(info) => vec![Arg::new(ArgKind::Flags, json!(info.flags))],
            ObjectKind::Comm => vec![
                int(i64::from(self.exec.ranks)),
                Arg::new(ArgKind::Opaque, json!("rootInfo")),
                int(i64::from(first.rank)),
            ],
            ObjectKind::Channel(info) => {
                let descs: Vec<Value> = created
                    .iter()
                    .map(|&inst| {
                        let instance = self.exec.instance(inst);
                        json!({
                            "remoteRank": instance.remote_rank.unwrap_or(0),
                            "channelProtocol": info.protocol,
                            "notifyNum": instance.notify_num.unwrap_or(0),
                        })
                    })
                    .collect();
                vec![
                    Arg::new(ArgKind::Comm, object(info.comm)),
                    engine(&info.engine),
                    Arg::new(ArgKind::ChannelDescs, Value::Array(descs)),
                    int(created.len() as i64),
                ]
            }
            ObjectKind::HcclThread {
                comm,
                engine: name,
                stream,
                ..
            } => {
                let mut args = vec![Arg::new(ArgKind::Comm, object(*comm)), engine(name)];
                match stream {
                    Some(stream) => args.push(Arg::new(ArgKind::Stream, object(*stream))),
                    None => args.push(int(created.len() as i64)),
                }
                args.push(int(first.notify_num.unwrap_or(0)));
                args
            }
            ObjectKind::Buffer(info) => match &info.space {
                // `cudaMallocPitch` gets one row of `size` bytes, with that pitch.
                MemorySpace::Device | MemorySpace::Host | MemorySpace::Pageable => {
                    let size = first.size.unwrap_or(0) as i64;
                    match api::lookup(self.exec.node(node).op.api).map(|api| api.creates) {
                        Some(Creates::PitchedDeviceBuffer) => vec![int(size), int(1), int(size)],
                        _ => vec![int(size)],
                    }
                }
                MemorySpace::HcclLocal | MemorySpace::HcclPeer(_) => {
                    let mut args = vec![Arg::new(ArgKind::Comm, self.comm(node))];
                    if let MemorySpace::HcclPeer(channel) = &info.space {
                        args.push(Arg::new(ArgKind::Channel, object(*channel)));
                    }
                    args
                }
                MemorySpace::Before => Vec::new(),
                MemorySpace::BeforePeer(channel) => vec![Arg::new(ArgKind::Channel, object(*channel))],
            },
        })
    }

    /// The rank's communicator when the call was made (an HCCL buffer keeps no link to
    /// its own; a rank has one).
    fn comm(&self, node: NodeId) -> Value {
        let rank = self.exec.node(node).rank(self.exec);
        self.latest_before(self.comms.get(&rank).map_or(&[][..], Vec::as_slice), node)
    }

    /// The `ge.op` line and one line per task (with its `SetStreamId`).
    fn ge_op(&self, op: &GeOp) -> Vec<Value> {
        let attrs: Vec<&str> = op.attrs.iter().map(|(name, _)| name.as_str()).collect();
        let mut lines = vec![self.with_loc(
            json!({"api": "ge.op", "args": {"type": op.name, "attrs": attrs}}),
            &op.span,
        )];
        for task in &op.tasks {
            let args = match &task.kind {
                GeTaskKind::HcomRecord { group, .. } | GeTaskKind::HcomWait { group, .. } => {
                    json!({"group_name": group})
                }
                GeTaskKind::AicpuKfc { so_name, kernel_name } => {
                    json!({"so_name": so_name, "kernel_name": kernel_name})
                }
                GeTaskKind::AiCore { name } => json!({"data": name}),
                GeTaskKind::Ccu { groups } => json!({"groups": groups}),
            };
            lines.push(self.with_loc(json!({"api": task.api, "args": args, "ret": 0}), &task.span));
            lines.push(json!({"api": "KernelLaunchInfo::SetStreamId", "args": {"stream_id": task.stream_id}}));
        }
        lines
    }

    fn with_loc(&self, mut line: Value, span: &Span) -> Value {
        if let Some(loc) = self.loc(span) {
            line["loc"] = loc;
        }
        line
    }
}

/// For a query that stands for a synchronize (it saw the work done), the `status` it
/// returned.
fn completed_status(api: &Api) -> Option<Arg> {
    match api.query? {
        api::QueryCompletion::Status { name, .. } => Some(Arg::new(ArgKind::Opaque, json!(name))),
        api::QueryCompletion::Succeeds => None,
    }
}

fn is_memset(api: &Api) -> bool {
    matches!(api.effect, api::Effect::Memset { .. })
}

/// A value for a required parameter the model does not keep (a memcpy's `kind`).
fn default_value(kind: ArgKind) -> Value {
    match kind {
        ArgKind::Enum(family) => json!(family.constants().last().copied().unwrap_or_default()),
        ArgKind::Flags | ArgKind::Int => json!(0),
        ArgKind::Str => json!(""),
        ArgKind::Strs | ArgKind::Ranges | ArgKind::ChannelDescs => json!([]),
        ArgKind::Opaque => json!("opaque"),
        _ => Value::Null,
    }
}
