//! The Program: the single model every frontend lowers to and every rule reads.
//!
//! A Program is the code one rank runs (SPMD), kept symbolic: loops, rank-dependent
//! branches and parameters such as `N` stay as they are written, so that the solver can
//! reason about every rank count. A trace lowers to the same type with no control flow.
//! Every op carries the span of the call that produced it.

use crate::source::Span;

/// Declares `u32` index newtypes (`ObjId(3)`), shared by the model and executions.
#[macro_export]
macro_rules! id_type {
    ($($name:ident),*) => {$(
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    )*};
}
id_type!(ObjId, ParamId, VarId, ThreadId, SuperKernelId);

#[derive(Clone, Debug)]
pub struct Program {
    pub settings: Settings,
    pub params: Vec<Param>,
    /// Every resource a program creates: streams, events, notifies, buffers, HCCL handles.
    /// `objects[0]` is the default stream and `objects[1]` CUDA's per-thread default
    /// stream, which exist without being created.
    pub objects: Vec<Object>,
    /// Loop variables, for names in messages.
    pub vars: Vec<Var>,
    /// Host threads; `threads[0]` is the main thread (the top level of a `.sync` file).
    pub threads: Vec<HostThread>,
    pub ge_ops: Vec<GeOp>,
    pub superkernels: Vec<SuperKernel>,
    /// Kernels checked inside: each AI core's pipe program (`aicore` blocks, Ascend C
    /// kernels).
    pub kernels: Vec<crate::kernel::Kernel>,
    /// A call trace read for a timeline (`SmtOptions::timelines`): the `ts` (ns) of each
    /// call, by the byte offset of its line. Empty otherwise, so that a large trace does
    /// not keep one entry per line for nothing.
    pub call_times: std::collections::HashMap<usize, u64>,
}

impl Program {
    /// The stream `0` / `NULL` names: ACL's default stream, or CUDA's legacy default
    /// stream (`cudaStreamLegacy`), one per rank.
    pub const DEFAULT_STREAM: ObjId = ObjId(0);
    /// CUDA's per-thread default stream (`cudaStreamPerThread`, and `0` in a program
    /// built with `--default-stream per-thread`): one per host thread.
    pub const PER_THREAD_STREAM: ObjId = ObjId(1);
    pub const MAIN_THREAD: ThreadId = ThreadId(0);

    pub fn new(main_span: Span) -> Self {
        let implicit_stream = |name: &str, sync| Object {
            name: name.into(),
            written: None,
            kind: ObjectKind::Stream(sync),
            span: main_span.clone(),
            created_by: None,
            array: None,
            ipc_key: None,
        };
        Program {
            settings: Settings::default(),
            params: Vec::new(),
            objects: vec![
                implicit_stream("default stream", StreamSync::Independent),
                implicit_stream("per-thread default stream", StreamSync::Blocking),
            ],
            vars: Vec::new(),
            threads: vec![HostThread {
                name: "main".into(),
                body: Vec::new(),
                span: main_span,
            }],
            ge_ops: Vec::new(),
            superkernels: Vec::new(),
            kernels: Vec::new(),
            call_times: std::collections::HashMap::new(),
        }
    }

    pub fn object(&self, id: ObjId) -> &Object {
        &self.objects[id.index()]
    }

    /// The object a name stands for: the array of an element `array[i]`, else `id`.
    pub fn base(&self, id: ObjId) -> ObjId {
        match self.object(id).kind {
            ObjectKind::Element { array, .. } => array,
            _ => id,
        }
    }

    /// The kind of what `id` names: an element is a handle of its array's kind.
    pub fn kind_of(&self, id: ObjId) -> &ObjectKind {
        &self.object(self.base(id)).kind
    }

    /// An attribute of the handle `id` names (a channel's peer, a notify count), with
    /// the element index of an array substituted: `(rank + 1 + i) % N` of `chs[j + 1]`
    /// is `(rank + 1 + (j + 1)) % N`.
    pub fn attribute_of(&self, id: ObjId, attribute: &Expr) -> Expr {
        let (ObjectKind::Element { array, index }, Some(shape)) =
            (&self.object(id).kind, self.object(self.base(id)).array.as_ref())
        else {
            return attribute.clone();
        };
        debug_assert_eq!(self.base(id), *array);
        attribute.substitute(shape.element, index)
    }

    /// The stream `0` / `NULL` names in this program.
    pub fn default_stream(&self) -> ObjId {
        match self.settings.default_stream {
            DefaultStream::Legacy => Program::DEFAULT_STREAM,
            DefaultStream::PerThread => Program::PER_THREAD_STREAM,
        }
    }

    /// CUDA's names for the implicit streams, whatever `0` means in the program.
    pub const CUDA_STREAM_NAMES: [(&'static str, ObjId); 2] = [
        ("cudaStreamLegacy", Program::DEFAULT_STREAM),
        ("cudaStreamPerThread", Program::PER_THREAD_STREAM),
    ];

    /// The implicit stream a CUDA name means.
    pub fn cuda_stream(name: &str) -> Option<ObjId> {
        Program::CUDA_STREAM_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, id)| *id)
    }

    /// How a call names `obj` if it is an implicit stream: `Some(None)` for the stream
    /// `0` means, `Some(Some(name))` for the other; `None` for any other object.
    pub fn implicit_stream_name(&self, obj: ObjId) -> Option<Option<&'static str>> {
        if obj == self.default_stream() {
            return Some(None);
        }
        Program::CUDA_STREAM_NAMES
            .iter()
            .find(|(_, id)| *id == obj)
            .map(|(name, _)| Some(*name))
    }

    /// Whether the program calls the CUDA runtime: then its default stream is CUDA's
    /// legacy default stream, which synchronizes with every blocking stream.
    pub fn calls_cuda(&self) -> bool {
        let mut cuda = false;
        for thread in &self.threads {
            for_each_op(&thread.body, &mut |op| cuda |= op.api.starts_with("cuda"));
        }
        cuda
    }

    /// Number of ops in the program text (not unrolled).
    pub fn op_count(&self) -> usize {
        fn count(block: &Block) -> usize {
            let mut n = 0;
            for_each_op(block, &mut |_| n += 1);
            n
        }
        let host: usize = self.threads.iter().map(|t| count(&t.body)).sum();
        let cores: usize = self
            .superkernels
            .iter()
            .flat_map(|sk| &sk.subkernels)
            .map(|sub| count(&sub.body))
            .sum();
        let tasks: usize = self.ge_ops.iter().map(|op| op.tasks.len()).sum();
        host + cores + tasks
    }
}

/// Program-wide policies: which product, which CANN documentation, how many ranks.
#[derive(Clone, Debug)]
pub struct Settings {
    pub target: Target,
    pub cann: CannPolicy,
    pub ranks: RankCount,
    /// Size of each rank's HCCL buffer (2 x HCCL_BUFFSIZE; 400 MiB by default).
    pub hccl_buffer_size: u64,
    /// The Program is one observed run (a call trace), not code: calls on different host
    /// threads happened in the order of their lines, ordered by host synchronization a
    /// trace cannot show (a join, a mutex). Only object lifetimes rely on it.
    pub observed_run: bool,
    /// What `0` / `NULL` means as a CUDA stream (`nvcc --default-stream`).
    pub default_stream: DefaultStream,
}

/// The stream CUDA code means by `0` / `NULL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DefaultStream {
    /// The legacy default stream, shared by the host threads (nvcc's default).
    #[default]
    Legacy,
    /// Each host thread's own default stream (`--default-stream per-thread`).
    PerThread,
}

impl DefaultStream {
    pub const NAMES: [(&'static str, DefaultStream); 2] = [
        ("legacy", DefaultStream::Legacy),
        ("per-thread", DefaultStream::PerThread),
    ];

    pub fn from_name(name: &str) -> Option<DefaultStream> {
        let name = name.replace('_', "-");
        DefaultStream::NAMES.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            target: Target::A3,
            cann: CannPolicy::Current,
            ranks: RankCount::Fixed(1),
            hccl_buffer_size: 400 << 20,
            observed_run: false,
            default_stream: DefaultStream::Legacy,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    A2,
    A3,
    Ascend950,
    Ascend310P,
}

impl Target {
    pub const NAMES: [(&'static str, Target); 4] = [
        ("A2", Target::A2),
        ("A3", Target::A3),
        ("950", Target::Ascend950),
        ("310P", Target::Ascend310P),
    ];

    pub fn from_name(name: &str) -> Option<Target> {
        Target::NAMES
            .iter()
            .find(|(text, _)| text.eq_ignore_ascii_case(name))
            .map(|(_, t)| *t)
    }

    pub fn name(self) -> &'static str {
        Target::NAMES
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("?", |(text, _)| text)
    }
}

/// Which CANN documentation decides what `aclrtResetEvent` accepts (grammar/SYNC.md, `cann`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CannPolicy {
    /// Current docs: only `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)` events may be reset.
    Current,
    /// CANN <= 7.0 docs: `aclrtCreateEvent` events may be reset too.
    Legacy,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankCount {
    Fixed(u32),
    /// `ranks N in lo..=hi`: the count is the parameter.
    Param(ParamId),
}

/// A symbolic integer: `N`, a tiling key domain, a loop bound.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub min: i64,
    /// `None`: unbounded above (`ranks N in 2..`).
    pub max: Option<i64>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct HostThread {
    pub name: String,
    pub body: Block,
    pub span: Span,
}

pub type Block = Vec<Stmt>;

/// Every op of `block` in text order: both branches of every `if`, the body of every
/// loop once, reachable or not.
pub fn for_each_op<'p>(block: &'p Block, f: &mut impl FnMut(&'p Op)) {
    for stmt in block {
        match stmt {
            Stmt::Op(op) => f(op),
            Stmt::If { then, otherwise, .. } => {
                for_each_op(then, f);
                for_each_op(otherwise, f);
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } => for_each_op(body, f),
            Stmt::QueryBranch {
                sync, done, pending, ..
            } => {
                f(sync);
                for_each_op(done, f);
                for_each_op(pending, f);
            }
            Stmt::Return(_) | Stmt::Assign { .. } => {}
        }
    }
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Op(Op),
    /// (The expressions of `If` and `For` are boxed so that no statement is larger than
    /// an `Op`: a trace is millions of them.)
    If {
        cond: Box<Expr>,
        then: Block,
        otherwise: Block,
        span: Span,
    },
    /// `for var in start..end` (`end` inclusive when `inclusive`).
    For {
        var: VarId,
        start: Box<Expr>,
        end: Box<Expr>,
        inclusive: bool,
        body: Block,
        span: Span,
    },
    Return(Span),
    /// `let mut x = value;` or `x = value;`: the variable's value from here on.
    Assign {
        var: VarId,
        value: Expr,
        span: Span,
    },
    /// `while cond { body }`: repeated while `cond` holds; the walk's step budget
    /// bounds a loop that never ends.
    While {
        cond: Expr,
        body: Block,
        span: Span,
    },
    /// `if aclrtQueryEventStatus(ev) == COMPLETE { done } else { pending }`: which branch
    /// runs depends on timing, so the analysis takes each. In `done`, the query saw the
    /// work finished: `sync` (the synchronize it stands for) runs first.
    QueryBranch {
        /// Boxed: a trace's millions of statements are all `Op`s, sized by the largest variant.
        sync: Box<Op>,
        done: Block,
        pending: Block,
        span: Span,
    },
}

/// One call: which API it was (as written), what it does, and where.
#[derive(Clone, Debug)]
pub struct Op {
    pub api: &'static str,
    pub kind: OpKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum OpKind {
    /// `thread name { ... }`: a host thread starts here, after everything the spawning
    /// thread did before.
    Spawn(ThreadId),
    /// A resource comes into existence (its attributes are in `Program::objects`).
    Create(ObjId),
    Destroy(ObjId),
    EventRecord {
        event: ObjId,
        stream: ObjId,
    },
    EventWait {
        stream: ObjId,
        event: ObjId,
        timeout: Option<Box<Timeout>>,
    },
    EventReset {
        event: ObjId,
        stream: ObjId,
    },
    EventQuery {
        event: ObjId,
        /// `aclrtQueryEventWaitStatus` asks about the waits rather than the record.
        wait_status: bool,
    },
    EventSynchronize {
        event: ObjId,
        timeout: Option<Box<Timeout>>,
    },
    /// `aclrtQueryEventWaitStatus` saw every wait on the event done (a traced `status`
    /// of `ACL_EVENT_WAIT_STATUS_COMPLETE`, or the end of a busy-wait on it): the host
    /// is ordered after the waits issued on it so far.
    EventWaitsSynchronize {
        event: ObjId,
    },
    /// The time between two events' records, read on the host.
    EventElapsedTime {
        start: ObjId,
        end: ObjId,
    },
    StreamSynchronize {
        stream: ObjId,
        timeout: Option<Box<Timeout>>,
    },
    DeviceSynchronize,
    NotifyRecord {
        notify: ObjId,
        stream: ObjId,
    },
    /// `aclrtWaitAndResetNotify`: waits, then consumes the flag.
    NotifyWait {
        notify: ObjId,
        stream: ObjId,
        timeout: Option<Box<Timeout>>,
    },
    /// Sets notify `index` of the peer at the far end of `channel`.
    ChannelNotifyRecord {
        thread: ObjId,
        channel: ObjId,
        index: Expr,
    },
    /// Waits on this rank's notify `index` of `channel`.
    ChannelNotifyWait {
        thread: ObjId,
        channel: ObjId,
        index: Expr,
        timeout: Option<Box<Timeout>>,
    },
    ThreadNotifyRecord {
        thread: ObjId,
        target: ObjId,
        index: Expr,
    },
    ThreadNotifyWait {
        thread: ObjId,
        index: Expr,
        timeout: Option<Box<Timeout>>,
    },
    /// One-sided write into the peer's memory; `notify` for the `WithNotify` variants.
    RemoteWrite {
        thread: ObjId,
        channel: ObjId,
        dst: Box<MemRange>,
        src: Box<MemRange>,
        notify: Option<Box<Expr>>,
    },
    /// One-sided read of the peer's memory into local memory.
    RemoteRead {
        thread: ObjId,
        channel: ObjId,
        dst: Box<MemRange>,
        src: Box<MemRange>,
    },
    LocalCopy {
        thread: ObjId,
        dst: Box<MemRange>,
        src: Box<MemRange>,
    },
    /// Orders this thread's earlier transfers (on `channel`, or all channels) before later ops.
    Fence {
        thread: ObjId,
        channel: Option<ObjId>,
    },
    ThreadSynchronize {
        thread: ObjId,
    },
    /// A kernel launch with its memory footprint (boxed, like every large part of a
    /// call: a trace holds millions of `Op`s, each as large as the largest kind).
    Kernel {
        stream: ObjId,
        launch: Box<KernelLaunch>,
    },
    /// `stream: None` is a synchronous copy that blocks the host.
    Memcpy {
        stream: Option<ObjId>,
        copy: Box<MemoryCopy>,
    },
    /// `aclrtValueWrite`: `stream` writes `value` into the `bits`-wide word at `word`.
    ValueWrite {
        stream: ObjId,
        word: Box<MemRange>,
        value: Expr,
        bits: u8,
    },
    /// `aclrtValueWait`: `stream` blocks until the word at `word` satisfies `condition`
    /// against `value`.
    ValueWait {
        stream: ObjId,
        word: Box<MemRange>,
        value: Expr,
        condition: ValueCondition,
        bits: u8,
    },
    /// `aclrtIpcGetEventHandle`, `aclrtNotifyGetExportKey`, `aclrtIpcMemGetExportKey`:
    /// `obj` (device memory from `offset` on) can be opened by another process with `key`.
    IpcExport {
        obj: ObjId,
        offset: Expr,
        key: Box<str>,
    },
    /// `cudaSetDevice`, `aclrtSetDevice`.
    SetDevice(Expr),
    /// `cudaStreamBeginCapture`: the stream's work is captured until its
    /// `cudaStreamEndCapture`.
    BeginCapture {
        stream: ObjId,
        /// `cudaStreamCaptureModeRelaxed`: other calls of the thread are not restricted.
        relaxed: bool,
    },
    /// `cudaGraphLaunch`: the work `graph` captured runs on `stream`, in captured order.
    GraphLaunch {
        graph: ObjId,
        stream: ObjId,
    },
    /// `cudaHostRegister`: page-locks `range` until its `cudaHostUnregister`.
    HostRegister(Box<MemRange>),
    /// `cudaHostUnregister`: the registration that starts at `ptr` ends.
    HostUnregister(Box<MemRange>),
    HostAccess {
        write: bool,
        /// Boxed, like every range of a call: it would make every `Op` larger.
        range: Box<MemRange>,
    },
    /// Process-wide wait timeout (`aclrtSetOpWaitTimeout`, `HcommSetNotifyWaitTimeOut`).
    SetWaitTimeout(Box<Timeout>),
    /// `aclrtSetCurrentContext`.
    SetCurrentContext(ObjId),
    /// `HcommBatchModeStart` (`start`) / `HcommBatchModeEnd` with its batch tag: the
    /// HCCL-thread calls the host thread issues in between are submitted at the end.
    BatchMode {
        start: bool,
        tag: String,
    },
    LaunchSuperKernel(SuperKernelId),
    /// A core's data movement between global memory and its local buffers.
    DataCopy {
        direction: CopyDirection,
        range: Box<MemRange>,
    },
    SetNextTaskStart {
        aiv_pipe: Pipe,
        aic_pipe: Pipe,
        force: bool,
    },
    WaitPreTaskEnd {
        force: bool,
    },
}

impl OpKind {
    /// Every object the call names: handles, and the buffers of the memory it touches.
    pub fn objects(&self) -> Vec<ObjId> {
        use OpKind as K;
        let ranges = |ranges: &[&MemRange]| ranges.iter().map(|range| range.buffer).collect::<Vec<_>>();
        match self {
            K::Spawn(_)
            | K::DeviceSynchronize
            | K::SetDevice(_)
            | K::SetWaitTimeout(_)
            | K::BatchMode { .. }
            | K::LaunchSuperKernel(_)
            | K::SetNextTaskStart { .. }
            | K::WaitPreTaskEnd { .. } => Vec::new(),
            K::Create(obj)
            | K::Destroy(obj)
            | K::EventQuery { event: obj, .. }
            | K::EventSynchronize { event: obj, .. }
            | K::EventWaitsSynchronize { event: obj }
            | K::StreamSynchronize { stream: obj, .. }
            | K::SetCurrentContext(obj)
            | K::BeginCapture { stream: obj, .. } => vec![*obj],
            K::EventRecord { event, stream } | K::EventWait { stream, event, .. } | K::EventReset { event, stream } => {
                vec![*event, *stream]
            }
            K::EventElapsedTime { start, end } => vec![*start, *end],
            K::NotifyRecord { notify, stream } | K::NotifyWait { notify, stream, .. } => vec![*notify, *stream],
            K::ChannelNotifyRecord { thread, channel, .. } | K::ChannelNotifyWait { thread, channel, .. } => {
                vec![*thread, *channel]
            }
            K::ThreadNotifyRecord { thread, target, .. } => vec![*thread, *target],
            K::ThreadNotifyWait { thread, .. } | K::ThreadSynchronize { thread } => vec![*thread],
            K::RemoteWrite {
                thread,
                channel,
                dst,
                src,
                ..
            }
            | K::RemoteRead {
                thread,
                channel,
                dst,
                src,
                ..
            } => [vec![*thread, *channel], ranges(&[dst, src])].concat(),
            K::LocalCopy { thread, dst, src } => [vec![*thread], ranges(&[dst, src])].concat(),
            K::Fence { thread, channel } => std::iter::once(*thread).chain(*channel).collect(),
            K::Kernel { stream, launch } => std::iter::once(*stream)
                .chain(launch.reads.iter().chain(&launch.writes).map(|range| range.buffer))
                .collect(),
            K::Memcpy { stream, copy } => stream
                .iter()
                .chain(&copy.synchronous_on)
                .copied()
                .chain(ranges(&[&copy.dst, &copy.src]))
                .collect(),
            K::ValueWrite { stream, word, .. } | K::ValueWait { stream, word, .. } => vec![*stream, word.buffer],
            K::IpcExport { obj, .. } => vec![*obj],
            K::GraphLaunch { graph, stream } => vec![*graph, *stream],
            K::HostRegister(range) | K::HostUnregister(range) | K::HostAccess { range, .. } => vec![range.buffer],
            K::DataCopy { range, .. } => vec![range.buffer],
        }
    }

    /// The channel and notify index of a call that sets a notify on the channel's peer:
    /// `ChannelNotifyRecord`, or a `WithNotify` remote write.
    pub fn channel_notify_record(&self) -> Option<(ObjId, &Expr)> {
        match self {
            OpKind::ChannelNotifyRecord { channel, index, .. } => Some((*channel, index)),
            OpKind::RemoteWrite {
                channel,
                notify: Some(index),
                ..
            } => Some((*channel, index)),
            _ => None,
        }
    }

    /// The HCCL threads and channels the call names (the handles an array can give).
    pub fn hccl_handles(&self) -> Vec<ObjId> {
        match self {
            OpKind::ChannelNotifyRecord { thread, channel, .. }
            | OpKind::ChannelNotifyWait { thread, channel, .. }
            | OpKind::RemoteWrite { thread, channel, .. }
            | OpKind::RemoteRead { thread, channel, .. } => vec![*thread, *channel],
            OpKind::ThreadNotifyRecord { thread, target, .. } => vec![*thread, *target],
            OpKind::ThreadNotifyWait { thread, .. }
            | OpKind::LocalCopy { thread, .. }
            | OpKind::ThreadSynchronize { thread } => vec![*thread],
            OpKind::Fence { thread, channel } => std::iter::once(*thread).chain(*channel).collect(),
            _ => Vec::new(),
        }
    }
}

/// What a kernel launch is called and touches.
#[derive(Clone, Debug)]
pub struct KernelLaunch {
    pub name: String,
    pub reads: Vec<MemRange>,
    pub writes: Vec<MemRange>,
    /// The cores it must be given, where the launch says (`vectorCores:`); `None`
    /// for a launch that does not.
    pub cores: Option<CoreClaim>,
}

/// The AI cores a kernel occupies while it runs, and how the task scheduler gives
/// them (`schemMode` of `aclrtLaunchKernelAttrValue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreClaim {
    /// Vector cores (AIV) it runs on.
    pub vector_cores: u32,
    /// Batch scheduling (`schemMode` 1): the kernel starts only once all its cores
    /// are free at the same time.
    pub all_at_once: bool,
    /// A collective's kernel: inside, it waits for the other ranks, holding its cores.
    pub collective: bool,
}

/// A memory copy, apart from the stream it is issued to.
#[derive(Clone, Debug)]
pub struct MemoryCopy {
    /// A synchronous copy that runs as work of this stream and returns once it is
    /// done (CUDA's `cudaMemcpy`, on the default stream); `None` for ACL's, which
    /// the host makes itself.
    pub synchronous_on: Option<ObjId>,
    pub dst: MemRange,
    pub src: MemRange,
    /// `destMax` of the ACL copies (the capacity the caller declares for `dst`);
    /// `None` for APIs without it (CUDA).
    pub dest_max: Option<Expr>,
    /// The direction the `kind` argument declares: where memory from before lives.
    pub kind: CopyKind,
    /// A CUDA copy: pageable host memory changes when it returns (the analyzer's `exec::cuda_copy`).
    pub staged_by_cuda: bool,
}

/// What a memory-value wait waits for (`flag` of `aclrtValueWait`, `flags` of
/// `cuStreamWaitValue*`; both number them alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueCondition {
    /// `(int)(*addr - value) >= 0`: a cyclic comparison, for counters.
    Geq = 0,
    Eq = 1,
    /// `(*addr & value) != 0`.
    And = 2,
    /// `~(*addr | value) != 0`.
    Nor = 3,
}

impl ValueCondition {
    /// The condition in the low two bits; higher bits (CUDA's `FLUSH`) do not change it.
    pub fn from_flags(flags: u32) -> ValueCondition {
        match flags & 0x3 {
            0 => ValueCondition::Geq,
            1 => ValueCondition::Eq,
            2 => ValueCondition::And,
            _ => ValueCondition::Nor,
        }
    }

    /// Whether a `bits`-wide word holding `content` lets the wait pass.
    pub fn holds(self, content: u64, value: u64, bits: u8) -> bool {
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let (content, value) = (content & mask, value & mask);
        match self {
            ValueCondition::Geq => {
                let difference = content.wrapping_sub(value) & mask;
                difference >> (bits.clamp(1, 64) - 1) == 0
            }
            ValueCondition::Eq => content == value,
            ValueCondition::And => content & value != 0,
            ValueCondition::Nor => !(content | value) & mask != 0,
        }
    }

    /// The condition as C would write it, for messages.
    pub fn describe(self, word: &str, value: u64) -> String {
        match self {
            ValueCondition::Geq => format!("{word} >= {value} (cyclic)"),
            ValueCondition::Eq => format!("{word} == {value}"),
            ValueCondition::And => format!("({word} & {value:#x}) != 0"),
            ValueCondition::Nor => format!("~({word} | {value:#x}) != 0"),
        }
    }
}

/// A copy's `kind` argument (`cudaMemcpyKind`, `aclrtMemcpyKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    /// `*Default`: the runtime tells from the pointers.
    Default,
}

impl CopyKind {
    pub fn from_name(name: &str) -> CopyKind {
        match name {
            "ACL_MEMCPY_HOST_TO_HOST" | "cudaMemcpyHostToHost" => CopyKind::HostToHost,
            "ACL_MEMCPY_HOST_TO_DEVICE" | "cudaMemcpyHostToDevice" => CopyKind::HostToDevice,
            "ACL_MEMCPY_DEVICE_TO_HOST" | "cudaMemcpyDeviceToHost" => CopyKind::DeviceToHost,
            "ACL_MEMCPY_DEVICE_TO_DEVICE" | "cudaMemcpyDeviceToDevice" => CopyKind::DeviceToDevice,
            _ => CopyKind::Default,
        }
    }

    /// The constant that names the kind, in CUDA's spelling or ACL's.
    pub fn name(self, cuda: bool) -> &'static str {
        match (self, cuda) {
            (CopyKind::HostToHost, true) => "cudaMemcpyHostToHost",
            (CopyKind::HostToDevice, true) => "cudaMemcpyHostToDevice",
            (CopyKind::DeviceToHost, true) => "cudaMemcpyDeviceToHost",
            (CopyKind::DeviceToDevice, true) => "cudaMemcpyDeviceToDevice",
            (CopyKind::Default, true) => "cudaMemcpyDefault",
            (CopyKind::HostToHost, false) => "ACL_MEMCPY_HOST_TO_HOST",
            (CopyKind::HostToDevice, false) => "ACL_MEMCPY_HOST_TO_DEVICE",
            (CopyKind::DeviceToHost, false) => "ACL_MEMCPY_DEVICE_TO_HOST",
            (CopyKind::DeviceToDevice, false) => "ACL_MEMCPY_DEVICE_TO_DEVICE",
            (CopyKind::Default, false) => "ACL_MEMCPY_DEFAULT",
        }
    }

    /// Whether the kind declares the source and the destination host memory (`None`:
    /// not declared).
    pub fn host_sides(self) -> (Option<bool>, Option<bool>) {
        match self {
            CopyKind::HostToHost => (Some(true), Some(true)),
            CopyKind::HostToDevice => (Some(true), Some(false)),
            CopyKind::DeviceToHost => (Some(false), Some(true)),
            CopyKind::DeviceToDevice => (Some(false), Some(false)),
            CopyKind::Default => (None, None),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDirection {
    /// GM to local (MTE2).
    In,
    /// Local to GM (MTE3 on AIV, FIX on AIC).
    Out,
}

/// A timeout argument as written, with the unit its API documents.
#[derive(Clone, Debug)]
pub struct Timeout {
    pub value: Expr,
    pub unit: TimeUnit,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Milliseconds,
}

/// Hardware pipes named by `SetNextTaskStart<AIV_PIPE, AIC_PIPE>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pipe {
    Mte1,
    Mte2,
    Mte3,
    S,
    V,
    Fix,
    M,
    All,
}

impl Pipe {
    pub const NAMES: [(&'static str, Pipe); 8] = [
        ("PIPE_MTE1", Pipe::Mte1),
        ("PIPE_MTE2", Pipe::Mte2),
        ("PIPE_MTE3", Pipe::Mte3),
        ("PIPE_S", Pipe::S),
        ("PIPE_V", Pipe::V),
        ("PIPE_FIX", Pipe::Fix),
        ("PIPE_M", Pipe::M),
        ("PIPE_ALL", Pipe::All),
    ];

    pub fn from_name(name: &str) -> Option<Pipe> {
        Pipe::NAMES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    pub fn name(self) -> &'static str {
        Pipe::NAMES.iter().find(|(_, p)| *p == self).map_or("?", |(n, _)| n)
    }
}

/// `len` bytes of `buffer` starting at `offset`.
#[derive(Clone, Debug)]
pub struct MemRange {
    pub buffer: ObjId,
    pub offset: Expr,
    pub len: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Object {
    /// The program's own name for it, unique in the program (`pipeline_inReady`).
    pub name: String,
    /// The handle as the user's source writes it (`inReady_`, `this->streams_[1]`, `x`),
    /// where a frontend knows it: what messages call it. Objects written alike (two
    /// instances of a class, two iterations of a loop) are numbered: `stream #2`, which
    /// code names `stream` ([`as_code`]).
    pub written: Option<String>,
    pub kind: ObjectKind,
    pub span: Span,
    /// The API that created it; `None` for implicit objects such as the default stream.
    pub created_by: Option<String>,
    /// `Some` for a handle array: one call creates `len` handles of this kind.
    pub array: Option<ArrayShape>,
    /// An event or notify opened from another process (`aclrtIpcOpenEventHandle`,
    /// `aclrtNotifyImportByKey`): the handle or key it was opened by.
    pub ipc_key: Option<String>,
}

/// A handle's name in messages as code writes it: without the number that tells apart
/// objects written alike (`stream #2` is `stream`).
pub fn as_code(shown: &str) -> &str {
    match shown.rsplit_once(" #") {
        Some((code, number)) if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) => code,
        _ => shown,
    }
}

/// The handles of an array (`let ts = HcclThreadAcquire(comm, engine, N - 1, 1);`): the
/// object's attributes may depend on `element`, the index of the handle they describe
/// (`remoteRank: (rank + 1 + i) % N` of `[{ ... } for i in 0..N - 1]`).
#[derive(Clone, Debug)]
pub struct ArrayShape {
    pub len: Expr,
    pub element: VarId,
}

impl Object {
    /// What messages call it: the handle as written, else the program's name.
    pub fn shown(&self) -> &str {
        self.written.as_deref().unwrap_or(&self.name)
    }

    /// Whether it stands for an object from before the code or trace begins (an
    /// `existing_*` pseudo-call): its state at that point is unknown.
    pub fn existed_before(&self) -> bool {
        self.created_by
            .as_deref()
            .and_then(crate::api::lookup)
            .is_some_and(|api| matches!(api.creates, crate::api::Creates::Existing(_)))
    }
}

#[derive(Clone, Debug)]
pub enum ObjectKind {
    Stream(StreamSync),
    /// An ACL context; `current` for `aclrtGetCurrentContext`'s handle of whatever
    /// context is current when it runs.
    Context {
        current: bool,
    },
    /// A CUDA graph: the work `cudaStreamEndCapture` took from `stream`'s capture.
    Graph {
        stream: ObjId,
    },
    /// `cudaGraphInstantiate` of `graph`: what `cudaGraphLaunch` runs.
    GraphExec {
        graph: ObjId,
    },
    Event(EventInfo),
    /// An ACL notify (`aclrtCreateNotify`).
    Notify,
    Comm,
    Channel(ChannelInfo),
    /// An HCCL thread: a stream bound to a communicator, with its own notifies.
    HcclThread {
        comm: ObjId,
        /// The `COMM_ENGINE_*` it was acquired for.
        engine: String,
        stream: Option<ObjId>,
        notify_num: Expr,
    },
    Buffer(BufferInfo),
    /// `array[index]`: one handle of a handle array, chosen when the call runs.
    Element {
        array: ObjId,
        index: Expr,
    },
}

impl ObjectKind {
    /// "stream", "event", ... for messages.
    pub fn noun(&self) -> &'static str {
        match self {
            ObjectKind::Stream(_) => "stream",
            ObjectKind::Context { .. } => "context",
            ObjectKind::Graph { .. } => "graph",
            ObjectKind::GraphExec { .. } => "executable graph",
            ObjectKind::Event(_) => "event",
            ObjectKind::Notify => "notify",
            ObjectKind::Comm => "communicator",
            ObjectKind::Channel(_) => "channel",
            ObjectKind::HcclThread { .. } => "HCCL thread",
            ObjectKind::Buffer(_) => "buffer",
            ObjectKind::Element { .. } => "handle",
        }
    }
}

/// How a stream's work is ordered against CUDA's legacy default stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamSync {
    /// Only by its own work and explicit waits: ACL streams, and CUDA streams created
    /// with `cudaStreamNonBlocking`.
    Independent,
    /// A CUDA blocking stream (`cudaStreamCreate`, or no `cudaStreamNonBlocking` flag):
    /// its work waits for the legacy default stream's earlier work, and the legacy
    /// default stream's later work waits for its work.
    Blocking,
}

#[derive(Clone, Debug)]
pub struct EventInfo {
    pub semantics: EventSemantics,
    pub creator: EventCreator,
    /// The flag bitmap passed at creation (`ACL_EVENT_*`, `cudaEvent*`).
    pub flags: u32,
}

/// How a wait binds to records (README, "How the analysis works").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventSemantics {
    /// One record per reset cycle; a wait blocks until that record has executed.
    Sync,
    /// Each record overwrites; a wait binds at issue time to the latest issued record.
    Capture,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventCreator {
    /// `aclrtCreateEvent`
    AclCreateEvent,
    /// `aclrtCreateEventWithFlag`
    AclWithFlag,
    /// `aclrtCreateEventExWithFlag`
    AclExWithFlag,
    /// `cudaEventCreate*`
    Cuda,
    /// `existing_event()`: created before the code or trace begins, with unknown flags.
    Existing,
    /// `aclrtIpcOpenEventHandle`: another process's IPC event.
    IpcOpen,
}

#[derive(Clone, Debug)]
pub struct ChannelInfo {
    pub comm: ObjId,
    /// `None` for a channel from before whose peer is unknown (a trace of more than two
    /// ranks): its notifies order nothing, and the peer memory behind it is its own.
    pub remote_rank: Option<Expr>,
    pub protocol: String,
    /// `notifyNum` of the `HcclChannelDesc`; 0 when not given, as `HcclChannelDescInit` sets it.
    pub notify_num: Expr,
    pub engine: String,
}

/// The size source frontends give memory whose size the code does not state (a
/// pointer the caller passes in, a copy of `size` bytes): larger than any real buffer.
pub const UNKNOWN_SIZE: i64 = 1 << 40;

/// Whether a byte range `start..end` has a length the code does not state: a copy of
/// unknown size, taken to run to [`UNKNOWN_SIZE`].
pub fn length_unknown(start: u64, end: u64) -> bool {
    end == UNKNOWN_SIZE as u64 || end.saturating_sub(start) >= UNKNOWN_SIZE as u64
}

/// `bytes 0..256`, or `bytes 256..` when the range runs to a size the code does not state
/// (that of memory from before included).
pub fn byte_range(start: u64, end: u64) -> String {
    if end == UNKNOWN_SIZE as u64 || end == crate::calls::EXISTING_MEMORY_SIZE as u64 {
        format!("bytes {start}..")
    } else {
        format!("bytes {start}..{end}")
    }
}

#[derive(Clone, Debug)]
pub struct BufferInfo {
    pub space: MemorySpace,
    pub size: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemorySpace {
    Device,
    /// Page-locked host memory (`aclrtMallocHost`, `cudaMallocHost`, `cudaHostAlloc`).
    Host,
    /// Pageable host memory (`malloc`): a CUDA copy stages it through page-locked memory,
    /// which changes when the call returns (the analyzer's `exec::cuda_copy`).
    Pageable,
    /// This rank's HCCL buffer (`HcclGetHcclBuffer`).
    HcclLocal,
    /// The peer's HCCL buffer seen through a channel (`HcclChannelGetHcclBuffer`).
    HcclPeer(ObjId),
    /// A rank's memory from before the code (`existing_memory()`): one space at the raw
    /// addresses a trace shows, whatever allocation they fall in.
    Before,
    /// The peer's memory from before, reached through a channel
    /// (`existing_peer_memory(channel)`). The peer maps it at other addresses than this
    /// rank sees, so it is a space of its own: transfers into it are checked against
    /// each other only.
    BeforePeer(ObjId),
}

/// A GE op's gen-task output: its prototype attributes and serialized task list.
#[derive(Clone, Debug)]
pub struct GeOp {
    pub name: String,
    pub attrs: Vec<(String, Span)>,
    pub tasks: Vec<GeTask>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct GeTask {
    pub api: &'static str,
    pub kind: GeTaskKind,
    pub stream_id: u32,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GeTaskKind {
    HcomRecord {
        group: String,
        group_span: Span,
    },
    HcomWait {
        group: String,
        group_span: Span,
    },
    AicpuKfc {
        so_name: String,
        kernel_name: String,
    },
    /// An AI Core task, loaded from serialized data.
    AiCore {
        name: String,
    },
    Ccu {
        groups: Vec<String>,
    },
}

/// `superkernel name(stream, aic: A, aiv: V) { subkernel ... }`
#[derive(Clone, Debug)]
pub struct SuperKernel {
    pub name: String,
    pub stream: ObjId,
    pub aic_cores: u32,
    pub aiv_cores: u32,
    pub subkernels: Vec<SubKernel>,
    pub span: Span,
}

/// One sub-kernel: the code every core runs, for each TilingKey in its domain.
#[derive(Clone, Debug)]
pub struct SubKernel {
    pub name: String,
    pub tiling_keys: Vec<i64>,
    pub aic_cores: u32,
    pub aiv_cores: u32,
    pub body: Block,
    pub span: Span,
}

/// A symbolic integer or boolean expression over parameters, loop variables and the
/// per-rank / per-core builtins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Int(i64),
    Bool(bool),
    Param(ParamId),
    Var(VarId),
    /// This rank's id (`rank`).
    Rank,
    /// `GetBlockIdx()`: this core's index.
    BlockIdx,
    /// The sub-kernel's TilingKey (`TILING_KEY_IS(k)` is `TilingKey == k`).
    TilingKey,
    /// `ASCEND_IS_AIV` (and `!` of it for `ASCEND_IS_AIC`).
    CoreIsAiv,
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : otherwise`: only the branch taken is evaluated. (One box for the
    /// three keeps every expression, and so every call of a trace, smaller.)
    Cond(Box<[Expr; 3]>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitXor,
    BitOr,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl Expr {
    /// `cond ? then : otherwise`.
    pub fn cond(cond: Expr, then: Expr, otherwise: Expr) -> Expr {
        Expr::Cond(Box::new([cond, then, otherwise]))
    }

    /// The value when the expression mentions nothing symbolic.
    pub fn as_const(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            Expr::Bool(b) => Some(*b as i64),
            Expr::Unary(op, e) => {
                let v = e.as_const()?;
                Some(match op {
                    UnOp::Neg => v.checked_neg()?,
                    UnOp::Not => (v == 0) as i64,
                })
            }
            Expr::Binary(op, a, b) => op.apply(a.as_const()?, b.as_const()?),
            Expr::Cond(parts) => {
                let [cond, then, otherwise] = &**parts;
                match cond.as_const()? {
                    0 => otherwise.as_const(),
                    _ => then.as_const(),
                }
            }
            _ => None,
        }
    }

    /// Whether the expression uses a variable that `var` holds for.
    pub fn mentions(&self, var: &impl Fn(VarId) -> bool) -> bool {
        match self {
            Expr::Var(id) => var(*id),
            Expr::Unary(_, operand) => operand.mentions(var),
            Expr::Binary(_, lhs, rhs) => lhs.mentions(var) || rhs.mentions(var),
            Expr::Cond(parts) => parts.iter().any(|e| e.mentions(var)),
            _ => false,
        }
    }

    /// This expression with every use of `var` replaced by `value`.
    pub fn substitute(&self, var: VarId, value: &Expr) -> Expr {
        let sub = |e: &Expr| Box::new(e.substitute(var, value));
        match self {
            Expr::Var(id) if *id == var => value.clone(),
            Expr::Unary(op, e) => Expr::Unary(*op, sub(e)),
            Expr::Binary(op, a, b) => Expr::Binary(*op, sub(a), sub(b)),
            Expr::Cond(parts) => Expr::Cond(Box::new(parts.each_ref().map(|e| e.substitute(var, value)))),
            _ => self.clone(),
        }
    }
}

impl BinOp {
    /// Integer semantics; `None` on overflow or division by zero.
    pub fn apply(self, a: i64, b: i64) -> Option<i64> {
        Some(match self {
            BinOp::Add => a.checked_add(b)?,
            BinOp::Sub => a.checked_sub(b)?,
            BinOp::Mul => a.checked_mul(b)?,
            BinOp::Div => a.checked_div(b)?,
            BinOp::Rem => a.checked_rem_euclid(b)?,
            BinOp::BitAnd => a & b,
            BinOp::BitXor => a ^ b,
            BinOp::BitOr => a | b,
            // C's shifts of a signed value: defined while no bit is lost, for counts in
            // 0..=62 (`<<`) and 0..=63 (`>>`, arithmetic).
            BinOp::Shl => a.checked_mul(1i64.checked_shl(u32::try_from(b).ok().filter(|&b| b <= 62)?)?)?,
            BinOp::Shr => a >> u32::try_from(b).ok().filter(|&b| b <= 63)?,
            BinOp::Eq => (a == b) as i64,
            BinOp::Ne => (a != b) as i64,
            BinOp::Lt => (a < b) as i64,
            BinOp::Le => (a <= b) as i64,
            BinOp::Gt => (a > b) as i64,
            BinOp::Ge => (a >= b) as i64,
            BinOp::And => (a != 0 && b != 0) as i64,
            BinOp::Or => (a != 0 || b != 0) as i64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ValueCondition;

    #[test]
    fn value_conditions_compare_as_the_runtimes_document() {
        use ValueCondition::*;
        // GEQ is cyclic: a counter that wrapped past the value still counts as reached.
        assert!(Geq.holds(5, 5, 64) && Geq.holds(6, 5, 64) && !Geq.holds(4, 5, 64));
        assert!(Geq.holds(1, u64::MAX, 64));
        assert!(!Geq.holds(u64::MAX, 1, 64));
        // 32-bit words compare their low 32 bits only.
        assert!(Geq.holds(0x1_0000_0000, 0xFFFF_FFFF, 32));
        assert!(Eq.holds(0x1_0000_0007, 7, 32) && !Eq.holds(0x1_0000_0007, 7, 64));
        assert!(And.holds(0b110, 0b010, 64) && !And.holds(0b100, 0b010, 64));
        assert!(Nor.holds(0, 0, 64) && !Nor.holds(u64::MAX, 0, 64) && !Nor.holds(0xFFFF_FFFF, 0, 32));
        assert_eq!(ValueCondition::from_flags(1 | 1 << 30), Eq);
    }
}

#[cfg(test)]
mod layout {
    use super::{Expr, MemRange, OpKind, Stmt};

    /// A trace of ten million calls holds ten million statements, so every byte of a
    /// statement is ten megabytes of a large check's peak: a new field that grows one
    /// of these should be boxed instead.
    #[test]
    fn a_call_stays_small() {
        assert_eq!(size_of::<Expr>(), 24);
        assert_eq!(size_of::<MemRange>(), 80);
        assert_eq!(size_of::<OpKind>(), 48);
        assert_eq!(size_of::<Stmt>(), 88);
    }
}
