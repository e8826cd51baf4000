//! The backend trait: the runtime a verified program's calls are made against.
//!
//! The driver ([`crate::run`]) plays each host thread's calls in issue order; a backend
//! is what those calls reach: the simulator, the ACL/HCCL runtime, or the CUDA driver.
//! Every method is one host API call. Work on a stream or HCCL thread is enqueued and
//! runs later, in FIFO order, exactly as the runtime would run it; host synchronizes
//! block the calling host thread.
//!
//! Objects are named by the Execution's instance ids ([`InstId`]): an object created in
//! a loop is a new instance in every iteration, as it is a new handle at run time.

use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use syncguard_analyzer::exec::{Access, AgentId, InstId, NodeId};
use syncguard_analyzer::model::{EventCreator, EventSemantics, GeOp, TimeUnit};

/// The host thread making a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    pub rank: u32,
    pub agent: AgentId,
    /// The call, for reports.
    pub node: NodeId,
}

/// What a creation call creates, with every attribute resolved for this run.
#[derive(Clone, Debug)]
pub enum ObjectSpec {
    Stream,
    /// The rank's default stream (`NULL`), which exists without a creating call: the
    /// driver announces it before the rank's first call.
    DefaultStream,
    Event {
        semantics: EventSemantics,
        creator: EventCreator,
        /// The flag bitmap passed at creation.
        flags: u32,
    },
    /// An ACL notify (`aclrtCreateNotify`).
    Notify,
    /// A communicator over `ranks` ranks.
    Comm {
        ranks: u32,
    },
    Channel {
        comm: Option<InstId>,
        remote_rank: u32,
        notify_num: u32,
        protocol: String,
        engine: String,
    },
    /// An HCCL thread of the rank's communicator; bound to `stream` for
    /// `HcclThreadAcquireWithStream`.
    HcclThread {
        comm: Option<InstId>,
        /// The `COMM_ENGINE_*` the program acquired it for.
        engine: String,
        stream: Option<InstId>,
        notify_num: u32,
    },
    /// Memory: device or host allocations, the rank's HCCL buffer (of its
    /// communicator), or a peer's HCCL buffer reached through `channel`.
    Buffer {
        space: BufferSpace,
        size: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferSpace {
    Device,
    Host,
    HcclLocal,
    HcclPeer { channel: InstId },
}

/// A wait timeout as the API takes it: the value in the API's own unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    pub value: i64,
    pub unit: TimeUnit,
}

impl Timeout {
    /// `None`: wait forever (0 for the second-based APIs, a negative value for the
    /// millisecond ones).
    pub fn duration(self) -> Option<Duration> {
        match self.unit {
            TimeUnit::Seconds if self.value > 0 => Some(Duration::from_secs(self.value as u64)),
            TimeUnit::Milliseconds if self.value >= 0 => Some(Duration::from_millis(self.value as u64)),
            _ => None,
        }
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            TimeUnit::Seconds => write!(f, "{} s", self.value),
            TimeUnit::Milliseconds => write!(f, "{} ms", self.value),
        }
    }
}

/// Asynchronous work enqueued on a stream or HCCL thread.
#[derive(Clone, Debug)]
pub enum Work {
    RecordEvent(InstId),
    WaitEvent {
        event: InstId,
        timeout: Option<Timeout>,
    },
    /// Clears the event; enqueued on the waiting stream.
    ResetEvent(InstId),
    RecordNotify(InstId),
    /// Waits for the notify, then consumes it (`aclrtWaitAndResetNotify`).
    WaitNotify {
        notify: InstId,
        timeout: Option<Timeout>,
    },
    /// Sets notify `index` of the peer at the far end of `channel`.
    ChannelRecord {
        channel: InstId,
        index: u32,
    },
    ChannelWait {
        channel: InstId,
        index: u32,
        timeout: Option<Timeout>,
    },
    /// Sets notify `index` of HCCL thread `target`.
    ThreadRecord {
        target: InstId,
        index: u32,
    },
    /// Waits on notify `index` of the queue's own HCCL thread.
    ThreadWait {
        index: u32,
        timeout: Option<Timeout>,
    },
    /// A kernel: timed work that reads and writes its declared byte ranges.
    Kernel {
        name: String,
        accesses: Vec<Access>,
    },
    /// Copies `src` into `dst` (same length).
    Copy {
        dst: Access,
        src: Access,
        via: CopyVia,
    },
    /// Orders earlier transfers of the thread before later ops.
    Fence {
        channel: Option<InstId>,
    },
    /// A SuperKernel launch, run as one kernel over its cores' footprint.
    SuperKernel {
        name: String,
        accesses: Vec<Access>,
    },
}

/// Which API moves the bytes of a [`Work::Copy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyVia {
    /// `aclrtMemcpyAsync` / `cudaMemcpyAsync`.
    Memcpy,
    /// `HcommLocalCopyOnThread`.
    Local,
    /// `HcommWriteOnThread` into the peer of `channel`; `notify`: the `WithNotify`
    /// variant also records that notify index on the peer once the write is done.
    Write { channel: InstId, notify: Option<u32> },
    /// `HcommReadOnThread` from the peer of `channel`.
    Read { channel: InstId },
}

/// A call that blocks or acts on the host thread itself.
#[derive(Clone, Debug)]
pub enum HostCall {
    SynchronizeStream {
        queue: InstId,
        timeout: Option<Timeout>,
    },
    /// `HcommThreadSynchronize`.
    SynchronizeThread {
        thread: InstId,
    },
    SynchronizeEvent {
        event: InstId,
        timeout: Option<Timeout>,
    },
    SynchronizeDevice,
    QueryEvent {
        event: InstId,
        wait_status: bool,
    },
    /// `aclrtEventElapsedTime`, `cuEventElapsedTime`; the time is not needed.
    EventElapsedTime {
        start: InstId,
        end: InstId,
    },
    /// A synchronous copy (`aclrtMemcpy`).
    Copy {
        dst: Access,
        src: Access,
    },
    /// The host reads or writes memory directly.
    Access(Access),
    /// Process-wide wait timeout (`aclrtSetOpWaitTimeout`, `HcommSetNotifyWaitTimeOut`).
    SetWaitTimeout {
        /// `aclrtSetOpWaitTimeout` or `HcommSetNotifyWaitTimeOut`.
        api: &'static str,
        timeout: Timeout,
    },
}

/// Why a call did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The runtime returned an error code.
    Api { api: String, code: i64, detail: String },
    /// A wait timed out (after the API's timeout).
    Timeout { what: String },
    /// The run was stopped (a hang was detected elsewhere); nothing to report here.
    Aborted,
    /// The backend cannot execute this call at all.
    Unsupported { what: String },
    /// The simulator would need more than `limit` bytes of memory for the buffers.
    MemoryLimit { limit: u64 },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Api { api, code, detail } if detail.is_empty() => write!(f, "{api} returned {code}"),
            Fault::Api { api, code, detail } => write!(f, "{api} returned {code}: {detail}"),
            Fault::Timeout { what } => write!(f, "{what} timed out"),
            Fault::Aborted => write!(f, "stopped after a hang elsewhere"),
            Fault::Unsupported { what } => write!(f, "{what} is not supported by this backend"),
            Fault::MemoryLimit { limit } => write!(
                f,
                "the simulator's memory limit of {} MiB is used up by the bytes the program's buffers hold (raise it with --sim-memory)",
                limit >> 20
            ),
        }
    }
}

/// A GE op's task list, run on one rank's GE streams (`stream_id`).
#[derive(Clone, Copy, Debug)]
pub struct GroupTasks<'p> {
    pub rank: u32,
    pub op: &'p GeOp,
    /// Index of the op in `Program::ge_ops`.
    pub index: usize,
}

/// A runtime that executes calls. Methods are called concurrently from the host
/// threads of every rank.
pub trait Backend: Sync {
    /// Creates `inst`.
    fn create(&self, host: Host, inst: InstId, object: &ObjectSpec) -> Result<(), Fault>;
    fn destroy(&self, host: Host, inst: InstId) -> Result<(), Fault>;
    /// Enqueues `work` on the stream or HCCL thread `queue`; returns once issued.
    fn enqueue(&self, host: Host, queue: InstId, work: &Work, node: NodeId) -> Result<(), Fault>;
    /// A host-side call; blocks as the API does.
    fn host_call(&self, host: Host, call: &HostCall) -> Result<(), Fault>;
    /// `host_call`, calling `issued` once the call is issued: for a synchronize, once
    /// what it waits for is fixed, before it blocks. A run that forces the order in
    /// which host threads issue lets the next thread go then.
    fn host_call_issued(&self, host: Host, call: &HostCall, issued: &dyn Fn()) -> Result<(), Fault> {
        issued();
        self.host_call(host, call)
    }
    /// Runs a GE op's serialized task list (group Record/Wait tasks and their kernels).
    fn group_tasks(&self, tasks: GroupTasks<'_>) -> Result<(), Fault>;
    /// A host thread is about to start (before its first call), spawned by `parent`
    /// after everything `parent` did so far; the simulator needs to know which threads
    /// can still make progress.
    fn host_started(&self, _agent: AgentId, _parent: Option<AgentId>) {}
    /// A host thread has made its last call.
    fn host_finished(&self, _agent: AgentId) {}
    /// Called after every host thread has finished: waits until the devices are idle
    /// (or the run is known to hang) and releases what the run left behind.
    fn finish(&self) -> Result<(), Fault>;
}

/// A call naming an instance this backend holds no such object for (its creation
/// failed, or the plan names something no call created).
pub(crate) fn never_created(kind: &str, inst: InstId) -> Fault {
    Fault::Unsupported {
        what: format!("a call naming {kind} #{} (never created on this backend)", inst.0),
    }
}

/// The byte a kernel writes: the low byte of its call's node id, so that copies
/// visibly move what each kernel wrote.
pub(crate) fn fill_byte(node: NodeId) -> u8 {
    node.0 as u8
}

/// Locks `mutex`; a panic on another thread leaves the data as usable as it was.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
