//! The API catalogue: every call syncguard understands, with its real name, its C
//! parameter names in order, what each parameter is, and what it does in the model.
//!
//! One table serves every frontend: `.sync` calls are checked against it positionally,
//! trace lines by parameter name. pyACL and CUDA names are rows of their own that lower
//! to the same ops. To support a new API, add a row (and, for a new kind of effect, an
//! `Effect` and its lowering).

use crate::model::TimeUnit;

/// What an argument must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A stream handle; `NULL`/`0` is the default stream.
    Stream,
    /// An ACL context (`aclrtContext`).
    Context,
    /// A CUDA graph (`cudaGraph_t`) and an executable one (`cudaGraphExec_t`).
    Graph,
    GraphExec,
    Event,
    Notify,
    Comm,
    Channel,
    /// An HCCL thread (`ThreadHandle`).
    Thread,
    /// A list of HCCL threads (`const ThreadHandle *threads`).
    Threads,
    /// A device or host address: a buffer, `buf + offset`, or a slice `buf[a..b]`.
    Ptr,
    /// A list of buffer slices (a kernel's reads or writes).
    Ranges,
    /// An integer expression (sizes, indices, counts).
    Int,
    /// A timeout in the unit the API documents.
    Timeout(TimeUnit),
    /// A bitmap of flag macros (`ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE`) or an integer.
    Flags,
    /// One constant of a family: `COMM_ENGINE_*`, `ACL_MEMCPY_*`, ...
    Enum(EnumFamily),
    Str,
    /// A list of strings.
    Strs,
    /// `HcclChannelDesc` values: one `{ ... }` or a list of them.
    ChannelDescs,
    /// `context`: the `gert::ExeResGenerationContext *` of a GE gen-task callback.
    GenTaskContext,
    /// Local core memory (`UB`, `L1`, `L0C`) or a slice of global memory.
    CoreMem,
    /// `cudaPitchedPtr`: `{ ptr, pitch, xsize, ysize }`.
    PitchedPtr,
    /// `cudaExtent`: `{ width, height, depth }` (bytes, rows, slices).
    Extent,
    /// `const cudaMemcpy3DParms *`: `{ srcPtr, srcPos?, dstPtr, dstPos?, extent, kind }`.
    Memcpy3DParms,
    /// Opaque data the model does not use (`rootInfo`).
    Opaque,
    /// A kernel function (`funcHandle`): any name or string, used only in messages.
    Function,
}

impl ArgKind {
    /// The noun of the object an argument of this kind names, as `ObjectKind::noun`
    /// spells it; "buffer" for pointers.
    pub fn noun(self) -> &'static str {
        match self {
            ArgKind::Stream => "stream",
            ArgKind::Context => "context",
            ArgKind::Graph => "graph",
            ArgKind::GraphExec => "executable graph",
            ArgKind::Event => "event",
            ArgKind::Notify => "notify",
            ArgKind::Comm => "communicator",
            ArgKind::Channel => "channel",
            ArgKind::Thread | ArgKind::Threads => "HCCL thread",
            _ => "buffer",
        }
    }

    /// Whether an object of `kind` is what an argument of this kind names: the same
    /// noun, told apart without comparing the nouns' text (a trace checks it per call).
    pub fn names(self, kind: &crate::model::ObjectKind) -> bool {
        use crate::model::ObjectKind as O;
        match self {
            ArgKind::Stream => matches!(kind, O::Stream(_)),
            ArgKind::Context => matches!(kind, O::Context { .. }),
            ArgKind::Graph => matches!(kind, O::Graph { .. }),
            ArgKind::GraphExec => matches!(kind, O::GraphExec { .. }),
            ArgKind::Event => matches!(kind, O::Event(_)),
            ArgKind::Notify => matches!(kind, O::Notify),
            ArgKind::Comm => matches!(kind, O::Comm),
            ArgKind::Channel => matches!(kind, O::Channel(_)),
            ArgKind::Thread | ArgKind::Threads => matches!(kind, O::HcclThread { .. }),
            _ => matches!(kind, O::Buffer(_)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnumFamily {
    Engine,
    MemcpyKind,
    MallocPolicy,
    /// `HcommDataType`: the element type of the reduce transfers.
    DataType,
    /// `aclrtStreamFailureMode`, in its order (a constant's index is its value).
    StreamFailureMode,
    /// `cudaStreamCaptureMode`, in its order.
    CaptureMode,
    /// `aclmdlRICaptureMode`, in its order.
    AclCaptureMode,
}

impl EnumFamily {
    pub fn constants(self) -> &'static [&'static str] {
        match self {
            // In `CommEngine`'s order: a constant's index is its value.
            EnumFamily::Engine => &[
                "COMM_ENGINE_CPU",
                "COMM_ENGINE_CPU_TS",
                "COMM_ENGINE_AICPU",
                "COMM_ENGINE_AICPU_TS",
                "COMM_ENGINE_AIV",
                "COMM_ENGINE_CCU",
            ],
            EnumFamily::MemcpyKind => &[
                "ACL_MEMCPY_HOST_TO_HOST",
                "ACL_MEMCPY_HOST_TO_DEVICE",
                "ACL_MEMCPY_DEVICE_TO_HOST",
                "ACL_MEMCPY_DEVICE_TO_DEVICE",
                "ACL_MEMCPY_DEFAULT",
                "cudaMemcpyHostToHost",
                "cudaMemcpyHostToDevice",
                "cudaMemcpyDeviceToHost",
                "cudaMemcpyDeviceToDevice",
                "cudaMemcpyDefault",
            ],
            EnumFamily::MallocPolicy => &[
                "ACL_MEM_MALLOC_HUGE_FIRST",
                "ACL_MEM_MALLOC_HUGE_ONLY",
                "ACL_MEM_MALLOC_NORMAL_ONLY",
            ],
            EnumFamily::StreamFailureMode => &["ACL_CONTINUE_ON_FAILURE", "ACL_STOP_ON_FAILURE"],
            EnumFamily::CaptureMode => &[
                "cudaStreamCaptureModeGlobal",
                "cudaStreamCaptureModeThreadLocal",
                "cudaStreamCaptureModeRelaxed",
            ],
            EnumFamily::AclCaptureMode => &[
                "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL",
                "ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL",
                "ACL_MODEL_RI_CAPTURE_MODE_RELAXED",
            ],
            EnumFamily::DataType => &[
                "HCOMM_DATA_TYPE_INT8",
                "HCOMM_DATA_TYPE_INT16",
                "HCOMM_DATA_TYPE_INT32",
                "HCOMM_DATA_TYPE_INT64",
                "HCOMM_DATA_TYPE_UINT8",
                "HCOMM_DATA_TYPE_UINT16",
                "HCOMM_DATA_TYPE_UINT32",
                "HCOMM_DATA_TYPE_UINT64",
                "HCOMM_DATA_TYPE_FP16",
                "HCOMM_DATA_TYPE_BFP16",
                "HCOMM_DATA_TYPE_FP32",
                "HCOMM_DATA_TYPE_FP64",
            ],
        }
    }
}

/// The size in bytes of one element of an `HcommDataType` constant.
pub fn data_type_size(name: &str) -> Option<i64> {
    let bits: i64 = name
        .trim_start_matches("HCOMM_DATA_TYPE_")
        .trim_start_matches(char::is_alphabetic)
        .parse()
        .ok()?;
    Some(bits / 8)
}

/// Flag macros and their values (acl_rt.h, cuda_runtime_api.h).
pub const FLAG_CONSTANTS: &[(&str, u32)] = &[
    ("ACL_EVENT_SYNC", 0x1),
    ("ACL_EVENT_CAPTURE_STREAM_PROGRESS", 0x2),
    ("ACL_EVENT_TIME_LINE", 0x8),
    ("ACL_EVENT_DEVICE_USE_ONLY", 0x10),
    ("ACL_EVENT_EXTERNAL", 0x20),
    ("ACL_EVENT_IPC", 0x40),
    ("ACL_EVENT_RECORD_DEFAULT", 0x0),
    ("ACL_EVENT_RECORD_EXTERNAL", 0x1),
    ("ACL_EVENT_WAIT_DEFAULT", 0x0),
    ("ACL_EVENT_WAIT_EXTERNAL", 0x1),
    ("ACL_NOTIFY_DEFAULT", 0x0),
    ("ACL_NOTIFY_DEVICE_USE_ONLY", 0x1),
    ("ACL_STREAM_FAST_LAUNCH", 0x1),
    ("ACL_STREAM_FAST_SYNC", 0x2),
    ("ACL_STREAM_PERSISTENT", 0x4),
    ("ACL_STREAM_HUGE", 0x8),
    ("ACL_STREAM_CPU_SCHEDULE", 0x10),
    ("ACL_STREAM_DEVICE_USE_ONLY", 0x20),
    ("cudaEventDefault", 0x0),
    ("cudaEventBlockingSync", 0x1),
    ("cudaEventDisableTiming", 0x2),
    ("cudaEventInterprocess", 0x4),
    ("cudaEventRecordDefault", 0x0),
    ("cudaEventRecordExternal", 0x1),
    ("cudaHostAllocDefault", 0x0),
    ("cudaHostAllocPortable", 0x1),
    ("cudaHostAllocMapped", 0x2),
    ("cudaHostAllocWriteCombined", 0x4),
    ("cudaHostRegisterDefault", 0x0),
    ("cudaHostRegisterPortable", 0x1),
    ("cudaHostRegisterMapped", 0x2),
    ("cudaHostRegisterIoMemory", 0x4),
    ("cudaHostRegisterReadOnly", 0x8),
    ("cudaStreamDefault", 0x0),
    ("cudaStreamNonBlocking", 0x1),
    // `cudaMallocManaged`'s attachment: which streams may touch the memory (the default,
    // global, is every stream); orders nothing.
    ("cudaMemAttachGlobal", 0x1),
    ("cudaMemAttachHost", 0x2),
    ("cudaMemAttachSingle", 0x4),
    // Memory-value wait conditions: CANN's documentation spells them
    // `ACL_VALUE_WAIT_*`, its newer headers `ACL_STREAM_WAIT_VALUE_*`; CUDA's driver
    // numbers its own alike.
    ("ACL_VALUE_WAIT_GEQ", 0x0),
    ("ACL_VALUE_WAIT_EQ", 0x1),
    ("ACL_VALUE_WAIT_AND", 0x2),
    ("ACL_VALUE_WAIT_NOR", 0x3),
    ("ACL_STREAM_WAIT_VALUE_GEQ", 0x0),
    ("ACL_STREAM_WAIT_VALUE_EQ", 0x1),
    ("ACL_STREAM_WAIT_VALUE_AND", 0x2),
    ("ACL_STREAM_WAIT_VALUE_NOR", 0x3),
    ("CU_STREAM_WAIT_VALUE_GEQ", 0x0),
    ("CU_STREAM_WAIT_VALUE_EQ", 0x1),
    ("CU_STREAM_WAIT_VALUE_AND", 0x2),
    ("CU_STREAM_WAIT_VALUE_NOR", 0x3),
    ("CU_STREAM_WAIT_VALUE_FLUSH", 1 << 30),
    ("CU_STREAM_WRITE_VALUE_DEFAULT", 0x0),
    ("CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER", 0x1),
];

/// The value of `ACL_EVENT_SYNC`.
pub const ACL_EVENT_SYNC: u32 = 0x1;

/// The value of `ACL_EVENT_EXTERNAL` (an event for updating a captured model runtime
/// instance; not combined with other flags).
pub const ACL_EVENT_EXTERNAL: u32 = 0x20;

/// The value of `ACL_EVENT_IPC`.
pub const ACL_EVENT_IPC: u32 = 0x40;

/// Where a call may appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Host code: the top level of a file or a `thread` block.
    Host,
    /// Inside an `op ... { }` gen-task block.
    GenTask,
    /// Per-core code inside a `subkernel { }`.
    Core,
}

/// What a call creates, bound by `let`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Creates {
    Nothing,
    Stream,
    /// `aclrtCreateContext`: a context, with a default stream of its own, current for
    /// the calling thread.
    Context,
    /// `aclrtGetCurrentContext`: another handle of the calling thread's current context.
    CurrentContext,
    /// `cudaStreamEndCapture`: the work captured on the stream.
    Graph,
    /// `aclrtIpcOpenEventHandle`: another process's IPC event, by its exported handle.
    IpcEvent,
    /// `aclrtNotifyImportByKey`: another process's notify, by its export key.
    IpcNotify,
    /// `aclrtIpcMemImportByKey`: another process's device memory, by its export key.
    IpcMemory,
    /// `cudaGraphInstantiate`: an executable copy of a graph.
    GraphExec,
    Event(crate::model::EventSemantics, crate::model::EventCreator),
    Notify,
    Comm,
    /// One channel per `HcclChannelDesc`.
    Channels,
    /// `threadNum` HCCL threads.
    HcclThreads,
    HcclThreadOnStream,
    DeviceBuffer,
    /// `cudaMallocPitch`: `height` rows of `pitch` bytes.
    PitchedDeviceBuffer,
    HostBuffer,
    /// `malloc`: pageable host memory.
    PageableHostBuffer,
    HcclLocalBuffer,
    HcclPeerBuffer,
    /// A pseudo-call (`existing_event()`, ...) standing for an object that existed before
    /// the code or trace begins: its state then is unknown (SYNC.md, "Objects from
    /// before").
    Existing(Existing),
}

/// What an `existing_*` pseudo-call stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    Event,
    Notify,
    Comm,
    Thread,
    Channel,
    Memory,
    PeerMemory,
}

impl Existing {
    /// The pseudo-call that stands for an object of this kind from before.
    pub fn api(self) -> &'static str {
        match self {
            Existing::Event => "existing_event",
            Existing::Notify => "existing_notify",
            Existing::Comm => "existing_comm",
            Existing::Thread => "existing_thread",
            Existing::Channel => "existing_channel",
            Existing::Memory => "existing_memory",
            Existing::PeerMemory => "existing_peer_memory",
        }
    }
}

/// What a call does; the lowering turns it into a model op from the arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Create,
    Destroy,
    EventRecord,
    EventWait,
    EventReset,
    EventQuery {
        wait_status: bool,
    },
    EventSynchronize,
    /// `aclrtEventElapsedTime`, `cudaEventElapsedTime`: reads both events' timestamps.
    EventElapsedTime,
    StreamSynchronize,
    DeviceSynchronize,
    NotifyRecord,
    NotifyWait,
    ChannelNotifyRecord,
    ChannelNotifyWait,
    ThreadNotifyRecord,
    ThreadNotifyWait,
    /// `reduce`: the length is `count` elements of `dataType`, not bytes.
    RemoteWrite {
        with_notify: bool,
        reduce: bool,
    },
    RemoteRead {
        reduce: bool,
    },
    LocalCopy {
        reduce: bool,
    },
    /// `HcommAclrtNotify*OnThread`: an ACL notify set or waited on from an HCCL thread.
    NotifyRecordOnThread,
    NotifyWaitOnThread,
    /// `aclrtGetNotifyId`: names a notify by its id (what `HcommAclrtNotify*` take).
    NotifyId,
    /// `HcclThreadExportToCommEngine`: the exported handles name the same threads, for
    /// use from another engine.
    ThreadAlias,
    Fence {
        channel: bool,
    },
    ThreadSynchronize,
    Kernel,
    /// `cudaLaunchHostFunc`, `cudaStreamAddCallback`: a host function queued on the
    /// stream, in order with its work (what it touches is not known).
    HostFunc,
    Memcpy {
        with_stream: bool,
    },
    /// `aclrtIpcGetEventHandle`, `aclrtNotifyGetExportKey`: the event or notify can be
    /// opened in another process by the handle or key (the `Str` argument).
    IpcExport,
    /// `cudaSetDevice`, `aclrtSetDevice`: the calling thread's current device, which
    /// `NULL` streams and device synchronizes name.
    SetDevice,
    /// `cudaStreamBeginCapture`: the stream's work is captured into a graph, not run.
    BeginCapture,
    /// `cudaGraphLaunch`: the graph's captured work runs on the stream.
    GraphLaunch,
    /// `cudaHostRegister` (`register`) / `cudaHostUnregister`.
    HostRegister {
        register: bool,
    },
    /// `aclrtValueWrite`, `cuStreamWriteValue*`: the stream writes `value` into the
    /// `bits`-wide word at the address (memory-value synchronization).
    ValueWrite {
        bits: u8,
    },
    /// `aclrtValueWait`, `cuStreamWaitValue*`: the stream blocks until the word
    /// satisfies the condition the flag names (the analyzer's `hb::values`).
    ValueWait {
        bits: u8,
    },
    /// Fills device memory; `with_stream: false` blocks the host.
    Memset {
        with_stream: bool,
    },
    HostAccess {
        write: bool,
    },
    SetWaitTimeout,
    /// `aclrtSetCurrentContext`: the calling thread's `NULL` stream becomes the
    /// context's default stream.
    SetCurrentContext,
    /// `HcommBatchModeStart` / `HcommBatchModeEnd`: the host thread's data-plane calls
    /// in between are cached and submitted together at the end.
    BatchMode {
        start: bool,
    },
    GeHcomRecord,
    GeHcomWait,
    GeAicpuKfc,
    GeAiCore,
    GeCcu,
    GeFusion,
    /// `SetStreamId` on the gen-task created last.
    GeSetStreamId,
    DataCopy,
    SetNextTaskStart,
    WaitPreTaskEnd,
    /// Calls that affect no ordering, resource or memory syncguard models (`aclInit`,
    /// `aclrtSetDevice`, timing queries): accepted and left out of the model.
    None,
}

#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The C prototype's parameter name (and the trace's argument key).
    pub name: &'static str,
    pub kind: ArgKind,
    /// Optional parameters may be left out (a default applies).
    pub optional: bool,
    /// Passed by name only (`stream_id: 1`), not positionally: values set by a
    /// separate call in C, such as `SetStreamId`.
    pub named_only: bool,
}

#[derive(Debug)]
pub struct Api {
    pub name: &'static str,
    pub params: &'static [Param],
    pub creates: Creates,
    pub effect: Effect,
    pub place: Place,
    /// Template parameters (`SetNextTaskStart<AIV_PIPE, AIC_PIPE, FORCE>`); empty if none.
    pub generics: &'static [&'static str],
    /// The output parameter that receives the created handle(s) (`aclrtEvent *event`),
    /// which is where a trace line carries them; empty for calls that create nothing.
    pub output: &'static str,
    /// A free or destroy that releases the object at once, without waiting for device
    /// work that still uses it (`aclrtFree`: "does not perform implicit device
    /// synchronization or stream synchronization").
    pub releases_at_once: bool,
    /// For a query: how a traced call shows it saw the work done.
    pub query: Option<QueryCompletion>,
}

/// How a traced query shows that it saw the work done, and so orders what the host
/// does next after that work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryCompletion {
    /// The call succeeds only then (`cudaErrorNotReady` otherwise).
    Succeeds,
    /// Its `status` out-parameter is this constant (or, where known, its value).
    Status { name: &'static str, value: Option<i64> },
}

impl Api {
    /// Name the output parameter, where it differs from the usual one for what is created.
    const fn out(mut self, output: &'static str) -> Api {
        self.output = output;
        self
    }

    /// See [`Api::releases_at_once`].
    const fn at_once(mut self) -> Api {
        self.releases_at_once = true;
        self
    }

    /// See [`Api::query`].
    const fn completes(mut self, query: QueryCompletion) -> Api {
        self.query = Some(query);
        self
    }

    pub fn required_params(&self) -> usize {
        self.params.iter().filter(|p| !p.optional && !p.named_only).count()
    }

    pub fn positional_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| !p.named_only)
    }

    /// `aclrtRecordEvent(event, stream)`, for messages.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .positional_params()
            .map(|p| {
                if p.optional {
                    format!("{}?", p.name)
                } else {
                    p.name.to_string()
                }
            })
            .collect();
        format!("{}({})", self.name, params.join(", "))
    }
}

const fn p(name: &'static str, kind: ArgKind) -> Param {
    Param {
        name,
        kind,
        optional: false,
        named_only: false,
    }
}

const fn opt(name: &'static str, kind: ArgKind) -> Param {
    Param {
        name,
        kind,
        optional: true,
        named_only: false,
    }
}

const fn named(name: &'static str, kind: ArgKind) -> Param {
    Param {
        name,
        kind,
        optional: true,
        named_only: true,
    }
}

const fn host(name: &'static str, params: &'static [Param], creates: Creates, effect: Effect) -> Api {
    Api {
        name,
        params,
        creates,
        effect,
        place: Place::Host,
        generics: &[],
        output: default_output(creates),
        releases_at_once: false,
        query: None,
    }
}

/// The C name of the output parameter, by what is created (`aclrtMalloc(void **devPtr, ...)`).
const fn default_output(creates: Creates) -> &'static str {
    match creates {
        Creates::Nothing => "",
        Creates::Stream => "stream",
        Creates::Context | Creates::CurrentContext => "context",
        Creates::Graph => "pGraph",
        Creates::GraphExec => "pGraphExec",
        Creates::Event(..) | Creates::IpcEvent => "event",
        Creates::Notify | Creates::IpcNotify => "notify",
        Creates::IpcMemory => "devPtr",
        Creates::Comm => "comm",
        Creates::Channels => "channels",
        Creates::HcclThreads => "threads",
        Creates::HcclThreadOnStream => "thread",
        Creates::DeviceBuffer | Creates::PitchedDeviceBuffer => "devPtr",
        Creates::HostBuffer => "hostPtr",
        Creates::PageableHostBuffer => "ptr",
        Creates::HcclLocalBuffer | Creates::HcclPeerBuffer => "buffer",
        Creates::Existing(Existing::Event) => "event",
        Creates::Existing(Existing::Notify) => "notify",
        Creates::Existing(Existing::Comm) => "comm",
        Creates::Existing(Existing::Thread) => "thread",
        Creates::Existing(Existing::Channel) => "channel",
        Creates::Existing(Existing::Memory | Existing::PeerMemory) => "buffer",
    }
}

const fn gen_task(name: &'static str, params: &'static [Param], effect: Effect) -> Api {
    Api {
        name,
        params,
        creates: Creates::Nothing,
        effect,
        place: Place::GenTask,
        generics: &[],
        output: "",
        releases_at_once: false,
        query: None,
    }
}

const fn core(name: &'static str, params: &'static [Param], generics: &'static [&'static str], effect: Effect) -> Api {
    Api {
        name,
        params,
        creates: Creates::Nothing,
        effect,
        place: Place::Core,
        generics,
        output: "",
        releases_at_once: false,
        query: None,
    }
}

use crate::model::EventCreator::*;
use crate::model::EventSemantics::*;
use ArgKind::*;
use Creates as C;
use Effect as E;

const SEC: ArgKind = Timeout(TimeUnit::Seconds);
const MS: ArgKind = Timeout(TimeUnit::Milliseconds);
const NONE: Creates = C::Nothing;

const P_STREAM: &[Param] = &[p("stream", Stream)];
const P_EVENT: &[Param] = &[p("event", Event)];
/// `aclrtQueryEventStatus` saw the record done.
const EVENT_RECORDED_COMPLETE: QueryCompletion = QueryCompletion::Status {
    name: "ACL_EVENT_RECORDED_STATUS_COMPLETE",
    value: Some(1),
};
/// `aclrtQueryEventWaitStatus` saw every wait on the event done.
const EVENT_WAITS_COMPLETE: QueryCompletion = QueryCompletion::Status {
    name: "ACL_EVENT_WAIT_STATUS_COMPLETE",
    value: Some(0),
};
/// A query with its out-parameter: what it saw (a trace's `status`).
const P_EVENT_STATUS: &[Param] = &[p("event", Event), opt("status", Opaque)];
const P_STREAM_STATUS: &[Param] = &[p("stream", Stream), opt("status", Opaque)];
const P_EVENT_STREAM: &[Param] = &[p("event", Event), p("stream", Stream)];
const P_STREAM_EVENT: &[Param] = &[p("stream", Stream), p("event", Event)];
const P_FLAG: &[Param] = &[p("flag", Flags)];
const P_MALLOC: &[Param] = &[p("size", Int), opt("policy", Enum(EnumFamily::MallocPolicy))];
const P_GROUP_TASK: &[Param] = &[
    p("context", GenTaskContext),
    opt("group_name", Str),
    named("stream_id", Int),
];
const P_TRANSFER: &[Param] = &[
    p("thread", Thread),
    p("channel", Channel),
    p("dst", Ptr),
    p("src", Ptr),
    p("len", Int),
];
const P_TRANSFER_NOTIFY: &[Param] = &[
    p("thread", Thread),
    p("channel", Channel),
    p("dst", Ptr),
    p("src", Ptr),
    p("len", Int),
    p("remoteNotifyIdx", Int),
];
const fn p_reduce(notify: bool) -> &'static [Param] {
    const PLAIN: &[Param] = &[
        p("thread", Thread),
        p("channel", Channel),
        p("dst", Ptr),
        p("src", Ptr),
        p("count", Int),
        p("dataType", Enum(EnumFamily::DataType)),
        p("reduceOp", Opaque),
    ];
    const NOTIFY: &[Param] = &[
        p("thread", Thread),
        p("channel", Channel),
        p("dst", Ptr),
        p("src", Ptr),
        p("count", Int),
        p("dataType", Enum(EnumFamily::DataType)),
        p("reduceOp", Opaque),
        p("remoteNotifyIdx", Int),
    ];
    if notify { NOTIFY } else { PLAIN }
}

/// The catalogue, grouped by family. Names are unique.
pub static APIS: &[Api] = &[
    // ACL streams and device
    host("aclrtCreateStream", &[], C::Stream, E::Create),
    host(
        "aclrtCreateStreamWithConfig",
        &[p("priority", Int), p("flag", Flags)],
        C::Stream,
        E::Create,
    ),
    host("aclrtDestroyStream", P_STREAM, NONE, E::Destroy),
    host("aclrtDestroyStreamForce", P_STREAM, NONE, E::Destroy).at_once(),
    host("aclrtSynchronizeStream", P_STREAM, NONE, E::StreamSynchronize),
    host(
        "aclrtSynchronizeStreamWithTimeout",
        &[p("stream", Stream), p("timeout", MS)],
        NONE,
        E::StreamSynchronize,
    ),
    host("aclrtSynchronizeDevice", &[], NONE, E::DeviceSynchronize),
    // ACL contexts: each has its default stream, which `NULL` names on a thread whose
    // current context it is.
    host("aclrtCreateContext", &[p("deviceId", Int)], C::Context, E::Create),
    host("aclrtDestroyContext", &[p("context", Context)], NONE, E::Destroy),
    host(
        "aclrtSetCurrentContext",
        &[p("context", Context)],
        NONE,
        E::SetCurrentContext,
    ),
    host("aclrtGetCurrentContext", &[], C::CurrentContext, E::Create),
    host("aclrtSetOpWaitTimeout", &[p("timeout", SEC)], NONE, E::SetWaitTimeout),
    host("aclInit", &[opt("configPath", Opaque)], NONE, E::None),
    host("aclFinalize", &[], NONE, E::None),
    host("aclrtSetDevice", &[p("deviceId", Int)], NONE, E::SetDevice),
    host("aclrtResetDevice", &[p("deviceId", Int)], NONE, E::None),
    // What the stream does after a failed task; orders nothing.
    host(
        "aclrtSetStreamFailureMode",
        &[p("stream", Stream), p("mode", Enum(EnumFamily::StreamFailureMode))],
        NONE,
        E::None,
    ),
    host("aclrtStreamQuery", P_STREAM_STATUS, NONE, E::None).completes(QueryCompletion::Status {
        name: "ACL_STREAM_STATUS_COMPLETE",
        value: None,
    }),
    // ACL events
    host("aclrtCreateEvent", &[], C::Event(Sync, AclCreateEvent), E::Create),
    host(
        "aclrtCreateEventWithFlag",
        P_FLAG,
        C::Event(Sync, AclWithFlag),
        E::Create,
    ),
    host(
        "aclrtCreateEventExWithFlag",
        P_FLAG,
        C::Event(Capture, AclExWithFlag),
        E::Create,
    ),
    host("aclrtRecordEvent", P_EVENT_STREAM, NONE, E::EventRecord),
    host(
        "aclrtRecordEventWithFlag",
        &[p("event", Event), p("stream", Stream), opt("flag", Flags)],
        NONE,
        E::EventRecord,
    ),
    host("aclrtStreamWaitEvent", P_STREAM_EVENT, NONE, E::EventWait),
    host(
        "aclrtStreamWaitEventWithFlag",
        &[
            p("stream", Stream),
            p("event", Event),
            p("timeout", SEC),
            opt("flag", Flags),
        ],
        NONE,
        E::EventWait,
    ),
    host(
        "aclrtEventElapsedTime",
        &[p("startEvent", Event), p("endEvent", Event)],
        NONE,
        E::EventElapsedTime,
    ),
    host(
        "aclrtStreamWaitEventWithTimeout",
        &[p("stream", Stream), p("event", Event), p("timeout", SEC)],
        NONE,
        E::EventWait,
    ),
    host("aclrtResetEvent", P_EVENT_STREAM, NONE, E::EventReset),
    host(
        "aclrtQueryEventStatus",
        P_EVENT_STATUS,
        NONE,
        E::EventQuery { wait_status: false },
    )
    .completes(EVENT_RECORDED_COMPLETE),
    host("aclrtQueryEvent", P_EVENT, NONE, E::EventQuery { wait_status: false }),
    host(
        "aclrtQueryEventWaitStatus",
        P_EVENT_STATUS,
        NONE,
        E::EventQuery { wait_status: true },
    )
    .completes(EVENT_WAITS_COMPLETE),
    host("aclrtSynchronizeEvent", P_EVENT, NONE, E::EventSynchronize),
    host(
        "aclrtSynchronizeEventWithTimeout",
        &[p("event", Event), p("timeout", MS)],
        NONE,
        E::EventSynchronize,
    ),
    host("aclrtDestroyEvent", P_EVENT, NONE, E::Destroy),
    // ACL notifies
    host("aclrtCreateNotify", &[opt("flag", Flags)], C::Notify, E::Create),
    host("aclrtDestroyNotify", &[p("notify", Notify)], NONE, E::Destroy),
    // IPC: an event or notify shared with another process of the same trace or program
    // (a rank), named by the handle or key the exporter obtains.
    host(
        "aclrtIpcGetEventHandle",
        &[p("event", Event), p("handle", Str)],
        NONE,
        E::IpcExport,
    ),
    host("aclrtIpcOpenEventHandle", &[p("handle", Str)], C::IpcEvent, E::Create),
    host(
        "aclrtIpcMemGetExportKey",
        &[
            p("devPtr", Ptr),
            p("size", Int),
            p("key", Str),
            opt("len", Int),
            opt("flags", Flags),
        ],
        NONE,
        E::IpcExport,
    ),
    host(
        "aclrtIpcMemImportByKey",
        &[p("key", Str), opt("flags", Flags)],
        C::IpcMemory,
        E::Create,
    ),
    host(
        "aclrtIpcMemSetImportPid",
        &[p("key", Str), opt("pid", Opaque), opt("num", Int)],
        NONE,
        E::None,
    ),
    // Unmaps the imported memory; the model keeps the mapping (a later use is not flagged).
    host("aclrtIpcMemClose", &[p("key", Str)], NONE, E::None),
    host(
        "aclrtNotifyGetExportKey",
        &[p("notify", Notify), p("key", Str), opt("len", Int), opt("flags", Flags)],
        NONE,
        E::IpcExport,
    ),
    host(
        "aclrtNotifySetImportPid",
        &[p("notify", Notify), opt("pid", Opaque), opt("num", Int)],
        NONE,
        E::None,
    ),
    host(
        "aclrtNotifyImportByKey",
        &[p("key", Str), opt("flags", Flags)],
        C::IpcNotify,
        E::Create,
    ),
    host(
        "aclrtRecordNotify",
        &[p("notify", Notify), p("stream", Stream)],
        NONE,
        E::NotifyRecord,
    ),
    host(
        "aclrtWaitAndResetNotify",
        &[p("notify", Notify), p("stream", Stream), p("timeout", SEC)],
        NONE,
        E::NotifyWait,
    ),
    host(
        "aclrtGetNotifyId",
        &[p("notify", Notify), opt("notifyId", Int)],
        NONE,
        E::NotifyId,
    ),
    // ACL memory
    host("aclrtMalloc", P_MALLOC, C::DeviceBuffer, E::Create),
    host("aclrtMallocHost", &[p("size", Int)], C::HostBuffer, E::Create),
    host("aclrtFree", &[p("devPtr", Ptr)], NONE, E::Destroy).at_once(),
    // Waits for the work that uses the memory (an implicit device synchronize).
    host("aclrtFreeWithDevSync", &[p("devPtr", Ptr)], NONE, E::Destroy),
    host("aclrtFreeHost", &[p("hostPtr", Ptr)], NONE, E::Destroy).at_once(),
    host(
        "aclrtMemcpy",
        &[
            p("dst", Ptr),
            p("destMax", Int),
            p("src", Ptr),
            p("count", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
        ],
        NONE,
        E::Memcpy { with_stream: false },
    ),
    host(
        "aclrtMemcpyAsync",
        &[
            p("dst", Ptr),
            p("destMax", Int),
            p("src", Ptr),
            p("count", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
            p("stream", Stream),
        ],
        NONE,
        E::Memcpy { with_stream: true },
    ),
    host(
        "aclrtMemset",
        &[p("devPtr", Ptr), p("maxCount", Int), p("value", Int), p("count", Int)],
        NONE,
        E::Memset { with_stream: false },
    ),
    host(
        "aclrtMemsetAsync",
        &[
            p("devPtr", Ptr),
            p("maxCount", Int),
            p("value", Int),
            p("count", Int),
            p("stream", Stream),
        ],
        NONE,
        E::Memset { with_stream: true },
    ),
    host(
        "aclrtValueWrite",
        &[
            p("devAddr", Ptr),
            p("value", Int),
            p("flag", Flags),
            p("stream", Stream),
        ],
        NONE,
        E::ValueWrite { bits: 64 },
    ),
    host(
        "aclrtValueWait",
        &[
            p("devAddr", Ptr),
            p("value", Int),
            p("flag", Flags),
            p("stream", Stream),
        ],
        NONE,
        E::ValueWait { bits: 64 },
    ),
    // pyACL (same semantics; default stream is 0)
    host("acl.rt.create_stream", &[], C::Stream, E::Create),
    host("acl.rt.destroy_stream", P_STREAM, NONE, E::Destroy),
    host("acl.rt.synchronize_stream", P_STREAM, NONE, E::StreamSynchronize),
    host("acl.rt.synchronize_device", &[], NONE, E::DeviceSynchronize),
    host("acl.rt.create_event", &[], C::Event(Sync, AclCreateEvent), E::Create),
    host(
        "acl.rt.create_event_with_flag",
        P_FLAG,
        C::Event(Sync, AclWithFlag),
        E::Create,
    ),
    host(
        "acl.rt.create_event_ex_with_flag",
        P_FLAG,
        C::Event(Capture, AclExWithFlag),
        E::Create,
    ),
    host("acl.rt.record_event", P_EVENT_STREAM, NONE, E::EventRecord),
    host("acl.rt.stream_wait_event", P_STREAM_EVENT, NONE, E::EventWait),
    host("acl.rt.reset_event", P_EVENT_STREAM, NONE, E::EventReset),
    host(
        "acl.rt.query_event_status",
        P_EVENT_STATUS,
        NONE,
        E::EventQuery { wait_status: false },
    )
    .completes(EVENT_RECORDED_COMPLETE),
    host(
        "acl.rt.query_event_wait_status",
        P_EVENT_STATUS,
        NONE,
        E::EventQuery { wait_status: true },
    )
    .completes(EVENT_WAITS_COMPLETE),
    host("acl.rt.synchronize_event", P_EVENT, NONE, E::EventSynchronize),
    host("acl.rt.destroy_event", P_EVENT, NONE, E::Destroy),
    host("acl.rt.malloc", P_MALLOC, C::DeviceBuffer, E::Create).out("dev_ptr"),
    host("acl.rt.malloc_host", &[p("size", Int)], C::HostBuffer, E::Create).out("host_ptr"),
    host("acl.rt.free", &[p("dev_ptr", Ptr)], NONE, E::Destroy).at_once(),
    host("acl.rt.free_host", &[p("host_ptr", Ptr)], NONE, E::Destroy).at_once(),
    host(
        "acl.rt.memcpy",
        &[
            p("dst", Ptr),
            p("dest_max", Int),
            p("src", Ptr),
            p("count", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
        ],
        NONE,
        E::Memcpy { with_stream: false },
    ),
    host(
        "acl.rt.memcpy_async",
        &[
            p("dst", Ptr),
            p("dest_max", Int),
            p("src", Ptr),
            p("count", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
            p("stream", Stream),
        ],
        NONE,
        E::Memcpy { with_stream: true },
    ),
    host(
        "acl.rt.value_write",
        &[
            p("dev_addr", Ptr),
            p("value", Int),
            p("flag", Flags),
            p("stream", Stream),
        ],
        NONE,
        E::ValueWrite { bits: 64 },
    ),
    host(
        "acl.rt.value_wait",
        &[
            p("dev_addr", Ptr),
            p("value", Int),
            p("flag", Flags),
            p("stream", Stream),
        ],
        NONE,
        E::ValueWait { bits: 64 },
    ),
    // CUDA runtime (events are capture-kind)
    host("cudaStreamCreate", &[], C::Stream, E::Create).out("pStream"),
    host("cudaStreamCreateWithFlags", &[p("flags", Flags)], C::Stream, E::Create).out("pStream"),
    host(
        "cudaStreamCreateWithPriority",
        &[p("flags", Flags), p("priority", Int)],
        C::Stream,
        E::Create,
    )
    .out("pStream"),
    host("cudaStreamDestroy", P_STREAM, NONE, E::Destroy),
    host("cudaStreamSynchronize", P_STREAM, NONE, E::StreamSynchronize),
    host("cudaDeviceSynchronize", &[], NONE, E::DeviceSynchronize),
    host("cudaEventCreate", &[], C::Event(Capture, Cuda), E::Create),
    host(
        "cudaEventCreateWithFlags",
        &[p("flags", Flags)],
        C::Event(Capture, Cuda),
        E::Create,
    ),
    host(
        "cudaEventRecord",
        &[p("event", Event), opt("stream", Stream)],
        NONE,
        E::EventRecord,
    ),
    host(
        "cudaStreamWaitEvent",
        &[p("stream", Stream), p("event", Event), opt("flags", Flags)],
        NONE,
        E::EventWait,
    ),
    host(
        "cudaEventRecordWithFlags",
        &[p("event", Event), opt("stream", Stream), opt("flags", Flags)],
        NONE,
        E::EventRecord,
    ),
    host("cudaEventQuery", P_EVENT, NONE, E::EventQuery { wait_status: false }).completes(QueryCompletion::Succeeds),
    host(
        "cudaEventElapsedTime",
        &[p("start", Event), p("end", Event)],
        NONE,
        E::EventElapsedTime,
    ),
    host("cudaStreamQuery", P_STREAM, NONE, E::None).completes(QueryCompletion::Succeeds),
    host("cudaSetDevice", &[p("device", Int)], NONE, E::SetDevice),
    host("cudaGetLastError", &[], NONE, E::None),
    host("cudaEventSynchronize", P_EVENT, NONE, E::EventSynchronize),
    host("cudaEventDestroy", P_EVENT, NONE, E::Destroy),
    host("cudaMalloc", &[p("size", Int)], C::DeviceBuffer, E::Create),
    host(
        "cudaMallocPitch",
        &[p("width", Int), p("height", Int), opt("pitch", Int)],
        C::PitchedDeviceBuffer,
        E::Create,
    ),
    host("cudaMallocHost", &[p("size", Int)], C::HostBuffer, E::Create).out("ptr"),
    host(
        "cudaHostAlloc",
        &[p("size", Int), opt("flags", Flags)],
        C::HostBuffer,
        E::Create,
    )
    .out("pHost"),
    host("cudaFree", &[p("devPtr", Ptr)], NONE, E::Destroy),
    host("cudaFreeHost", &[p("ptr", Ptr)], NONE, E::Destroy),
    host(
        "cudaMemcpy",
        &[
            p("dst", Ptr),
            p("src", Ptr),
            p("count", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
        ],
        NONE,
        E::Memcpy { with_stream: false },
    ),
    host(
        "cudaMemcpyAsync",
        &[
            p("dst", Ptr),
            p("src", Ptr),
            p("count", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
            opt("stream", Stream),
        ],
        NONE,
        E::Memcpy { with_stream: true },
    ),
    host(
        "cudaMemcpy2D",
        &[
            p("dst", Ptr),
            p("dpitch", Int),
            p("src", Ptr),
            p("spitch", Int),
            p("width", Int),
            p("height", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
        ],
        NONE,
        E::Memcpy { with_stream: false },
    ),
    host(
        "cudaMemcpy2DAsync",
        &[
            p("dst", Ptr),
            p("dpitch", Int),
            p("src", Ptr),
            p("spitch", Int),
            p("width", Int),
            p("height", Int),
            p("kind", Enum(EnumFamily::MemcpyKind)),
            opt("stream", Stream),
        ],
        NONE,
        E::Memcpy { with_stream: true },
    ),
    host(
        "cudaMemset2D",
        &[
            p("devPtr", Ptr),
            p("pitch", Int),
            p("value", Int),
            p("width", Int),
            p("height", Int),
        ],
        NONE,
        E::Memset { with_stream: false },
    ),
    host(
        "cudaMemset2DAsync",
        &[
            p("devPtr", Ptr),
            p("pitch", Int),
            p("value", Int),
            p("width", Int),
            p("height", Int),
            opt("stream", Stream),
        ],
        NONE,
        E::Memset { with_stream: true },
    ),
    // 3D copies and memsets: a pitched pointer is `depth` slices of `ysize` rows of
    // `pitch` bytes; the bytes from the first row's start to the last row's end count
    // as touched (`calls::pitched_range`).
    host(
        "cudaMemcpy3D",
        &[p("p", Memcpy3DParms)],
        NONE,
        E::Memcpy { with_stream: false },
    ),
    host(
        "cudaMemcpy3DAsync",
        &[p("p", Memcpy3DParms), opt("stream", Stream)],
        NONE,
        E::Memcpy { with_stream: true },
    ),
    host(
        "cudaMemset3D",
        &[p("pitchedDevPtr", PitchedPtr), p("value", Int), p("extent", Extent)],
        NONE,
        E::Memset { with_stream: false },
    ),
    host(
        "cudaMemset3DAsync",
        &[
            p("pitchedDevPtr", PitchedPtr),
            p("value", Int),
            p("extent", Extent),
            opt("stream", Stream),
        ],
        NONE,
        E::Memset { with_stream: true },
    ),
    host(
        "cudaMallocManaged",
        &[p("size", Int), opt("flags", Flags)],
        C::DeviceBuffer,
        E::Create,
    ),
    host(
        "cudaLaunchHostFunc",
        &[p("stream", Stream), p("fn", Opaque), p("userData", Opaque)],
        NONE,
        E::HostFunc,
    ),
    host(
        "cudaStreamAddCallback",
        &[
            p("stream", Stream),
            p("callback", Opaque),
            p("userData", Opaque),
            opt("flags", Int),
        ],
        NONE,
        E::HostFunc,
    ),
    // Stream capture and graphs: captured work runs at each launch, not when issued.
    host(
        "cudaStreamBeginCapture",
        &[p("stream", Stream), opt("mode", Enum(EnumFamily::CaptureMode))],
        NONE,
        E::BeginCapture,
    ),
    host("cudaStreamEndCapture", &[p("stream", Stream)], C::Graph, E::Create),
    host(
        "cudaGraphInstantiate",
        &[p("graph", Graph), opt("flags", Int)],
        C::GraphExec,
        E::Create,
    ),
    host(
        "cudaGraphLaunch",
        &[p("graphExec", GraphExec), p("stream", Stream)],
        NONE,
        E::GraphLaunch,
    ),
    host("cudaGraphDestroy", &[p("graph", Graph)], NONE, E::Destroy),
    // ACL's capture into a model runtime instance (`aclmdlRI`), CUDA's stream capture
    // by another name: the instance is what `aclmdlRIExecuteAsync` runs, with no
    // instantiation between.
    host(
        "aclmdlRICaptureBegin",
        &[p("stream", Stream), opt("mode", Enum(EnumFamily::AclCaptureMode))],
        NONE,
        E::BeginCapture,
    ),
    host("aclmdlRICaptureEnd", &[p("stream", Stream)], C::Graph, E::Create).out("modelRI"),
    host(
        "aclmdlRIExecuteAsync",
        &[p("modelRI", Graph), p("stream", Stream)],
        NONE,
        E::GraphLaunch,
    ),
    host("aclmdlRIDestroy", &[p("modelRI", Graph)], NONE, E::Destroy),
    host("cudaGraphExecDestroy", &[p("graphExec", GraphExec)], NONE, E::Destroy),
    // Page-locks existing host memory: orders nothing, but copies of it are no longer
    // staged (the analyzer's `exec::cuda_copy`).
    host(
        "cudaHostRegister",
        &[p("ptr", Ptr), p("size", Int), p("flags", Flags)],
        NONE,
        E::HostRegister { register: true },
    ),
    host(
        "cudaHostUnregister",
        &[p("ptr", Ptr)],
        NONE,
        E::HostRegister { register: false },
    ),
    // The driver's memory-value operations (`cuStreamWriteValue32/64`,
    // `cuStreamWaitValue32/64`), as the runtime's own programs use them.
    host(
        "cuStreamWriteValue32",
        &[p("stream", Stream), p("addr", Ptr), p("value", Int), p("flags", Flags)],
        NONE,
        E::ValueWrite { bits: 32 },
    ),
    host(
        "cuStreamWriteValue64",
        &[p("stream", Stream), p("addr", Ptr), p("value", Int), p("flags", Flags)],
        NONE,
        E::ValueWrite { bits: 64 },
    ),
    host(
        "cuStreamWaitValue32",
        &[p("stream", Stream), p("addr", Ptr), p("value", Int), p("flags", Flags)],
        NONE,
        E::ValueWait { bits: 32 },
    ),
    host(
        "cuStreamWaitValue64",
        &[p("stream", Stream), p("addr", Ptr), p("value", Int), p("flags", Flags)],
        NONE,
        E::ValueWait { bits: 64 },
    ),
    // The C library's pageable host memory.
    host("malloc", &[p("size", Int)], C::PageableHostBuffer, E::Create).out("ptr"),
    host("free", &[p("ptr", Ptr)], NONE, E::Destroy).at_once(),
    host(
        "cudaMemset",
        &[p("devPtr", Ptr), p("value", Int), p("count", Int)],
        NONE,
        E::Memset { with_stream: false },
    ),
    host(
        "cudaMemsetAsync",
        &[
            p("devPtr", Ptr),
            p("value", Int),
            p("count", Int),
            opt("stream", Stream),
        ],
        NONE,
        E::Memset { with_stream: true },
    ),
    // HCCL control plane
    host(
        "HcclCommInitRootInfo",
        &[p("nRanks", Int), p("rootInfo", Opaque), p("rank", Int)],
        C::Comm,
        E::Create,
    ),
    host("HcclCommDestroy", &[p("comm", Comm)], NONE, E::Destroy),
    host(
        "HcclThreadAcquire",
        &[
            p("comm", Comm),
            p("engine", Enum(EnumFamily::Engine)),
            p("threadNum", Int),
            p("notifyNumPerThread", Int),
        ],
        C::HcclThreads,
        E::Create,
    ),
    host(
        "HcclThreadAcquireWithStream",
        &[
            p("comm", Comm),
            p("engine", Enum(EnumFamily::Engine)),
            p("stream", Stream),
            p("notifyNum", Int),
        ],
        C::HcclThreadOnStream,
        E::Create,
    ),
    host(
        "HcclThreadExportToCommEngine",
        &[
            p("comm", Comm),
            p("threadNum", Int),
            p("threads", Threads),
            p("dstCommEngine", Enum(EnumFamily::Engine)),
        ],
        NONE,
        E::ThreadAlias,
    )
    .out("exportedThreads"),
    host(
        "HcclChannelAcquire",
        &[
            p("comm", Comm),
            p("engine", Enum(EnumFamily::Engine)),
            p("channelDescs", ChannelDescs),
            p("channelNum", Int),
        ],
        C::Channels,
        E::Create,
    ),
    host(
        "HcclChannelDescInit",
        &[opt("channelDesc", Opaque), opt("descNum", Int)],
        NONE,
        E::None,
    ),
    host("HcclGetHcclBuffer", &[p("comm", Comm)], C::HcclLocalBuffer, E::Create),
    host(
        "HcclChannelGetHcclBuffer",
        &[p("comm", Comm), p("channel", Channel)],
        C::HcclPeerBuffer,
        E::Create,
    ),
    // HCCL data plane (all enqueued on the thread's stream)
    host(
        "HcommChannelNotifyRecordOnThread",
        &[p("thread", Thread), p("channel", Channel), p("remoteNotifyIdx", Int)],
        NONE,
        E::ChannelNotifyRecord,
    ),
    host(
        "HcommChannelNotifyWaitOnThread",
        &[
            p("thread", Thread),
            p("channel", Channel),
            p("localNotifyIdx", Int),
            p("timeOut", SEC),
        ],
        NONE,
        E::ChannelNotifyWait,
    ),
    host(
        "HcommChannelNotifyWaitOnThreadWithDefaultTimeout",
        &[p("thread", Thread), p("channel", Channel), p("localNotifyIdx", Int)],
        NONE,
        E::ChannelNotifyWait,
    ),
    host(
        "HcommThreadNotifyRecordOnThread",
        &[p("thread", Thread), p("dstThread", Thread), p("dstNotifyIdx", Int)],
        NONE,
        E::ThreadNotifyRecord,
    ),
    host(
        "HcommThreadNotifyWaitOnThread",
        &[p("thread", Thread), p("notifyIdx", Int), p("timeOut", SEC)],
        NONE,
        E::ThreadNotifyWait,
    ),
    host(
        "HcommWriteOnThread",
        P_TRANSFER,
        NONE,
        E::RemoteWrite {
            with_notify: false,
            reduce: false,
        },
    ),
    host(
        "HcommWriteNbiOnThread",
        P_TRANSFER,
        NONE,
        E::RemoteWrite {
            with_notify: false,
            reduce: false,
        },
    ),
    host(
        "HcommWriteWithNotifyOnThread",
        P_TRANSFER_NOTIFY,
        NONE,
        E::RemoteWrite {
            with_notify: true,
            reduce: false,
        },
    ),
    host(
        "HcommWriteWithNotifyNbiOnThread",
        P_TRANSFER_NOTIFY,
        NONE,
        E::RemoteWrite {
            with_notify: true,
            reduce: false,
        },
    ),
    host(
        "HcommWriteReduceOnThread",
        p_reduce(false),
        NONE,
        E::RemoteWrite {
            with_notify: false,
            reduce: true,
        },
    ),
    host(
        "HcommWriteReduceWithNotifyOnThread",
        p_reduce(true),
        NONE,
        E::RemoteWrite {
            with_notify: true,
            reduce: true,
        },
    ),
    host("HcommReadOnThread", P_TRANSFER, NONE, E::RemoteRead { reduce: false }),
    host(
        "HcommReadReduceOnThread",
        p_reduce(false),
        NONE,
        E::RemoteRead { reduce: true },
    ),
    host(
        "HcommReadNbiOnThread",
        P_TRANSFER,
        NONE,
        E::RemoteRead { reduce: false },
    ),
    host(
        "HcommLocalCopyOnThread",
        &[p("thread", Thread), p("dst", Ptr), p("src", Ptr), p("len", Int)],
        NONE,
        E::LocalCopy { reduce: false },
    ),
    host(
        "HcommLocalReduceOnThread",
        &[
            p("thread", Thread),
            p("dst", Ptr),
            p("src", Ptr),
            p("count", Int),
            p("dataType", Enum(EnumFamily::DataType)),
            p("reduceOp", Opaque),
        ],
        NONE,
        E::LocalCopy { reduce: true },
    ),
    host(
        "HcommAclrtNotifyRecordOnThread",
        &[p("thread", Thread), p("dstNotifyId", Notify)],
        NONE,
        E::NotifyRecordOnThread,
    ),
    host(
        "HcommAclrtNotifyWaitOnThread",
        &[p("thread", Thread), p("notifyId", Notify), p("timeOut", SEC)],
        NONE,
        E::NotifyWaitOnThread,
    ),
    host(
        "HcommChannelDrainOnThread",
        &[p("thread", Thread), p("channel", Channel)],
        NONE,
        E::Fence { channel: true },
    ),
    host(
        "HcommChannelFenceOnThread",
        &[p("thread", Thread), p("channel", Channel)],
        NONE,
        E::Fence { channel: true },
    ),
    host(
        "HcommFenceOnThread",
        &[p("thread", Thread)],
        NONE,
        E::Fence { channel: false },
    ),
    host(
        "HcommThreadSynchronize",
        &[p("thread", Thread)],
        NONE,
        E::ThreadSynchronize,
    ),
    host(
        "HcommThreadJoin",
        &[p("thread", Thread), p("timeout", Int)],
        NONE,
        E::ThreadSynchronize,
    ),
    host(
        "HcommSetNotifyWaitTimeOut",
        &[p("timeOut", SEC)],
        NONE,
        E::SetWaitTimeout,
    ),
    host(
        "HcommBatchModeStart",
        &[p("batchTag", Str)],
        NONE,
        E::BatchMode { start: true },
    ),
    host(
        "HcommBatchModeEnd",
        &[p("batchTag", Str)],
        NONE,
        E::BatchMode { start: false },
    ),
    // Pseudo-ops: memory footprints the APIs above do not spell out
    host(
        "kernel",
        &[
            p("stream", Stream),
            p("name", Str),
            named("reads", Ranges),
            named("writes", Ranges),
            named("vectorCores", Int),
            named("schemMode", Int),
            named("collective", Int),
        ],
        NONE,
        E::Kernel,
    ),
    // Real kernel launches: what the kernel touches is in arguments the model cannot
    // read, so a launch declares it with `reads:` / `writes:`; without them its memory
    // is not checked, and the analysis says so (SG004).
    host(
        "aclrtLaunchKernel",
        &[
            p("funcHandle", Function),
            p("numBlocks", Int),
            p("argsData", Opaque),
            p("argsSize", Int),
            opt("stream", Stream),
            named("reads", Ranges),
            named("writes", Ranges),
        ],
        NONE,
        E::Kernel,
    ),
    host(
        "aclrtLaunchKernelWithConfig",
        &[
            p("funcHandle", Function),
            p("numBlocks", Int),
            p("stream", Stream),
            p("cfg", Opaque),
            p("argsHandle", Opaque),
            opt("reserve", Opaque),
            named("reads", Ranges),
            named("writes", Ranges),
        ],
        NONE,
        E::Kernel,
    ),
    host(
        "aclrtLaunchKernelV2",
        &[
            p("funcHandle", Function),
            p("numBlocks", Int),
            p("argsData", Opaque),
            p("argsSize", Int),
            p("cfg", Opaque),
            opt("stream", Stream),
            named("reads", Ranges),
            named("writes", Ranges),
        ],
        NONE,
        E::Kernel,
    ),
    host(
        "cudaLaunchKernel",
        &[
            p("func", Function),
            p("gridDim", Opaque),
            p("blockDim", Opaque),
            p("args", Opaque),
            opt("sharedMem", Int),
            opt("stream", Stream),
            named("reads", Ranges),
            named("writes", Ranges),
        ],
        NONE,
        E::Kernel,
    ),
    host("host_read", &[p("range", Ptr)], NONE, E::HostAccess { write: false }),
    host("host_write", &[p("range", Ptr)], NONE, E::HostAccess { write: true }),
    // Pseudo-ops: objects from before the code or trace begins
    host("existing_event", &[], C::Existing(Existing::Event), E::Create),
    host("existing_notify", &[], C::Existing(Existing::Notify), E::Create),
    host("existing_comm", &[], C::Existing(Existing::Comm), E::Create),
    host(
        "existing_thread",
        &[p("comm", Comm)],
        C::Existing(Existing::Thread),
        E::Create,
    ),
    host(
        "existing_channel",
        &[p("comm", Comm), opt("remoteRank", Int)],
        C::Existing(Existing::Channel),
        E::Create,
    ),
    host("existing_memory", &[], C::Existing(Existing::Memory), E::Create),
    host(
        "existing_peer_memory",
        &[p("channel", Channel)],
        C::Existing(Existing::PeerMemory),
        E::Create,
    ),
    // GE gen-task factories (inside `op`)
    gen_task("KernelLaunchInfo::CreateHcomRecordTask", P_GROUP_TASK, E::GeHcomRecord),
    gen_task("KernelLaunchInfo::CreateHcomWaitTask", P_GROUP_TASK, E::GeHcomWait),
    gen_task(
        "KernelLaunchInfo::CreateAicpuKfcTask",
        &[
            p("context", GenTaskContext),
            p("so_name", Str),
            p("kernel_name", Str),
            named("stream_id", Int),
        ],
        E::GeAicpuKfc,
    ),
    gen_task(
        "KernelLaunchInfo::LoadFromData",
        &[p("context", GenTaskContext), p("data", Str), named("stream_id", Int)],
        E::GeAiCore,
    ),
    gen_task(
        "KernelLaunchInfo::CreateCcuTask",
        &[p("context", GenTaskContext), p("groups", Strs), named("stream_id", Int)],
        E::GeCcu,
    ),
    gen_task(
        "KernelLaunchInfo::CreateFusionTask",
        &[
            p("context", GenTaskContext),
            p("sub_tasks", Opaque),
            named("stream_id", Int),
        ],
        E::GeFusion,
    ),
    gen_task(
        "KernelLaunchInfo::SetStreamId",
        &[p("stream_id", Int)],
        E::GeSetStreamId,
    ),
    // Ascend C, per core (inside `subkernel`)
    core(
        "AscendC::SetNextTaskStart",
        &[],
        &["AIV_PIPE", "AIC_PIPE", "FORCE"],
        E::SetNextTaskStart,
    ),
    core("AscendC::WaitPreTaskEnd", &[], &["FORCE"], E::WaitPreTaskEnd),
    core(
        "AscendC::DataCopy",
        &[p("dst", CoreMem), p("src", CoreMem)],
        &[],
        E::DataCopy,
    ),
];

pub fn lookup(name: &str) -> Option<&'static Api> {
    static TABLE: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, &'static Api>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| APIS.iter().map(|api| (api.name, api)).collect());
    table.get(name).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_names_the_objects_of_its_noun() {
        use crate::model::*;
        let id = ObjId(0);
        let objects = [
            ObjectKind::Stream(StreamSync::Blocking),
            ObjectKind::Context { current: true },
            ObjectKind::Graph { stream: id },
            ObjectKind::GraphExec { graph: id },
            ObjectKind::Event(EventInfo {
                semantics: EventSemantics::Sync,
                creator: EventCreator::Cuda,
                flags: 0,
            }),
            ObjectKind::Notify,
            ObjectKind::Comm,
            ObjectKind::Channel(ChannelInfo {
                comm: id,
                remote_rank: None,
                protocol: String::new(),
                notify_num: Expr::Int(1),
                engine: String::new(),
            }),
            ObjectKind::HcclThread {
                comm: id,
                engine: String::new(),
                stream: None,
                notify_num: Expr::Int(1),
            },
            ObjectKind::Buffer(BufferInfo {
                space: MemorySpace::Device,
                size: Expr::Int(1),
            }),
            ObjectKind::Element {
                array: id,
                index: Expr::Int(0),
            },
        ];
        let kinds = APIS.iter().flat_map(|api| api.params).map(|param| param.kind);
        for kind in kinds {
            for object in &objects {
                assert_eq!(kind.names(object), kind.noun() == object.noun(), "{kind:?} {object:?}");
            }
        }
    }

    #[test]
    fn api_names_are_unique() {
        let mut names: Vec<_> = APIS.iter().map(|a| a.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }

    #[test]
    fn optional_params_come_last() {
        for api in APIS {
            let kinds: Vec<bool> = api.positional_params().map(|p| p.optional).collect();
            assert!(kinds.windows(2).all(|w| w[0] <= w[1]), "{}", api.name);
        }
    }

    #[test]
    fn signature_names_the_c_parameters() {
        assert_eq!(
            lookup("aclrtRecordEvent").unwrap().signature(),
            "aclrtRecordEvent(event, stream)"
        );
    }
}
