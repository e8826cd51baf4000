//! Concrete executions: the symbolic Program instantiated for one parameter assignment.
//! Every rank's host threads are walked with loops unrolled and branches decided; each
//! call becomes a node on the agent that executes it (a host thread, a stream, an HCCL
//! thread), with the objects it touches resolved to instances (a `let` in a loop creates
//! a new event in every iteration).

mod build;
mod core_walk;
mod cuda_copy;
mod eval;
mod issue_orders;
mod split;

pub use build::{core_envs, instantiate, instantiate_in_one_part, instantiate_in_parts, instantiate_with_outcomes};
pub use core_walk::{CoreEnd, CoreStop, MAX_CORE_STEPS, StopReason, walk_core};
pub use eval::{CoreEnv, Env, EvalError};
pub use issue_orders::{IssueOrders, MAX_ISSUE_ORDERS, calls_conflict, issue_orders, reorder};

use rustc_hash::FxHashMap as HashMap;

use crate::model::{ObjId, Op, Program, ThreadId, ValueCondition};
use crate::source::Span;

syncguard_model::id_type!(AgentId, NodeId, InstId);

/// One concrete run of a Program.
#[derive(Debug)]
pub struct Execution<'p> {
    pub program: &'p Program,
    pub ranks: u32,
    /// The value of each parameter (by `ParamId`) in this run.
    pub params: Vec<i64>,
    pub agents: Vec<Agent>,
    pub nodes: Vec<Node<'p>>,
    pub instances: Vec<Instance>,
    /// Calls that named an object with no live instance (never created here, or destroyed).
    pub bad_uses: Vec<BadUse<'p>>,
    /// Handles named by an index outside their array (`ts[3]` of 3 threads).
    pub bad_indices: Vec<BadIndex<'p>>,
    /// The handle each `array[i]` of a node's call named when it was issued.
    pub elements: HashMap<(NodeId, ObjId), InstId>,
    /// Each query a branch looked at, in walk order, and whether it saw the work done.
    pub query_outcomes: Vec<(&'p Op, bool)>,
    /// The synchronizes of the queries that saw the work done: a run in which one never
    /// returns is not a run (the query would have said "not done").
    pub query_syncs: Vec<NodeId>,
    /// Calls, conditions and loops left out because a value they need has none on
    /// that rank (overflow, division by zero, an unbound name).
    pub eval_errors: Vec<EvalFailure>,
    /// Memory ranges with a negative offset or length.
    pub invalid_ranges: Vec<&'p Op>,
    /// Notify calls with an index outside their channel's or thread's notifies, with the
    /// instance whose count applies and the index. The runtime rejects them, so they are
    /// ordering-neutral nodes (`Action::Other`), kept here for SG302 alone.
    pub rejected_notifies: Vec<(NodeId, InstId, i64)>,
    /// Batches (`HcommBatchModeStart`) still open when their host thread ended: their
    /// calls are never submitted (`Action::Other`).
    pub unsubmitted_batches: Vec<UnsubmittedBatch>,
    /// Each context instance and its default stream instance.
    pub context_streams: Vec<(InstId, InstId)>,
    /// Why the run was cut short, if it was.
    pub cutoff: Option<Cutoff>,
    /// Whether the default stream is CUDA's legacy default stream (the program calls
    /// the CUDA runtime), which synchronizes with every blocking stream.
    pub legacy_default_stream: bool,
    /// Host calls that run as work of a stream and return once it is done (CUDA's
    /// `cudaMemcpy` on the default stream), with that stream; sorted by node.
    pub synchronous_work: Vec<(NodeId, AgentId)>,
    /// Calls issued to a stream under capture that a graph cannot hold in the model
    /// (event and notify calls, waits): left out of the analysis.
    pub uncaptured: Vec<&'p Op>,
    /// The nodes a `cudaGraphLaunch` ran (captured work), with the launch; sorted by node.
    pub graph_launches: Vec<(NodeId, &'p Op)>,
    /// `cudaSetDevice` / `aclrtSetDevice` calls that switched a thread to another device
    /// than its rank's own.
    pub other_devices: Vec<&'p Op>,
    /// Stream captures misused: never ended, or broken by a call a capture forbids.
    pub capture_misuses: Vec<CaptureMisuse<'p>>,
    /// IPC: each event or notify a process opened (`aclrtIpcOpenEventHandle`,
    /// `aclrtNotifyImportByKey`) and the instance the exporting process shared by that
    /// handle or key. Signals match through the exporter's instance (`ipc_shared`).
    pub ipc_opened: HashMap<InstId, InstId>,
    /// IPC opens whose handle or key nothing in the run exported: objects from outside
    /// it, treated as objects from before.
    pub ipc_unexported: Vec<InstId>,
    /// IPC exports whose handle or key no process of the run opens, with that handle
    /// or key: the process that opens it is outside the run.
    pub ipc_unopened: Vec<(InstId, Box<str>)>,
}

/// A stream capture (`cudaStreamBeginCapture`) whose work never runs as captured.
#[derive(Clone, Debug)]
pub struct CaptureMisuse<'p> {
    pub begin: &'p Op,
    pub rank: u32,
    /// The stream under capture.
    pub stream: AgentId,
    pub problem: CaptureProblem<'p>,
}

#[derive(Clone, Debug)]
pub enum CaptureProblem<'p> {
    /// Still open when the rank's code ends: the calls captured never run.
    NeverEnded { captured: Vec<&'p Op> },
    /// A synchronize the capture forbids: it fails and invalidates the capture.
    Forbidden(&'p Op),
}

/// How an agent's work is ordered against CUDA's legacy default stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegacyOrder {
    /// The legacy default stream itself.
    Legacy,
    /// A blocking stream: ordered after the legacy stream's earlier work, and before
    /// its later work.
    Blocking,
    /// Not ordered against it: host threads, HCCL threads, ACL and non-blocking streams.
    Independent,
}

/// Stack of a thread that walks a run (or part of one): the usual size of a main thread,
/// as the walk recurses into nested blocks.
pub const WALK_STACK: usize = 8 << 20;

/// Concrete ops kept per run, so that a runaway loop cannot exhaust memory.
pub const MAX_NODES: usize = 20_000_000;

/// Streams, threads and ranks' host threads per run: each is an entry of every vector
/// clock, and some checks look at every agent per synchronize.
pub const MAX_AGENTS: usize = 1 << 16;

/// Most handles one array may have (`threadNum`, `channelNum`): more than any
/// communicator gives, and few enough that a wrong count is reported, not expanded.
pub const MAX_ARRAY_LEN: u32 = 1 << 16;

/// Statements and loop iterations walked per run: a loop that issues no calls still
/// costs time.
pub const MAX_STEPS: u64 = 4 * MAX_NODES as u64;

/// A statement, call or loop that has no value on some rank.
#[derive(Clone, Debug)]
pub struct EvalFailure {
    pub span: Span,
    /// "the condition of this `if`", "an argument of aclrtRecordEvent".
    pub what: String,
    pub rank: u32,
    pub error: EvalError,
    /// "this call is left out of the analysis": what the analysis did without the value.
    pub left_out: &'static str,
}

/// Why a run was cut short, with the size it would have had where known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cutoff {
    /// More than `MAX_NODES` calls were issued.
    Calls,
    /// More than `MAX_STEPS` statements and loop iterations were walked.
    Steps,
    /// A loop refused before it ran: its iterations, and the calls each issues at least.
    Loop {
        span: Span,
        iterations: u128,
        calls_per_iteration: u64,
    },
    /// A `while` loop still running when the budgets ran out, after this many iterations.
    While { span: Span, iterations: u128 },
    /// Too many ranks: at least this many agents in all.
    Ranks { ranks: u32, agents: u64 },
    /// A SuperKernel's cores walk too many steps.
    Kernel(CoreStop),
}

impl Cutoff {
    /// The loop or statement the run was cut off at, where one is to blame.
    pub fn span(&self) -> Option<&Span> {
        match self {
            Cutoff::Loop { span, .. } | Cutoff::While { span, .. } => Some(span),
            Cutoff::Kernel(stop) => Some(&stop.span),
            Cutoff::Calls | Cutoff::Steps | Cutoff::Ranks { .. } => None,
        }
    }

    /// "unrolls to more than 20000000 calls" for messages.
    pub fn describe(&self) -> String {
        match self {
            Cutoff::Calls => format!("unrolls to more than {MAX_NODES} calls"),
            Cutoff::Steps => format!("walks more than {MAX_STEPS} statements and loop iterations"),
            Cutoff::Loop {
                iterations,
                calls_per_iteration: 0,
                ..
            } => format!("has a loop of {iterations} iterations (the limit is {MAX_STEPS})"),
            Cutoff::Loop {
                iterations,
                calls_per_iteration,
                ..
            } => format!(
                "has a loop of {iterations} iterations issuing at least {calls_per_iteration} call{} each, {} calls in all (the limit is {MAX_NODES})",
                if *calls_per_iteration == 1 { "" } else { "s" },
                iterations.saturating_mul(u128::from(*calls_per_iteration))
            ),
            Cutoff::While { iterations, .. } => format!(
                "has a `while` loop still running after {iterations} iterations, past the limits of {MAX_STEPS} steps and {MAX_NODES} calls (it may never end)"
            ),
            Cutoff::Kernel(stop) => format!("has a SuperKernel too large to walk: {}", stop.describe()),
            Cutoff::Ranks { ranks, agents } => format!(
                "runs on {ranks} ranks: at least {agents} streams and threads, more than the {MAX_AGENTS} the happens-before analysis holds"
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Agent {
    pub rank: u32,
    pub kind: AgentKind,
    /// The device of a stream or HCCL thread: `None` for the rank's own (the first one
    /// it sets, device 0 if none), `Some(d)` for another one it switched to.
    pub device: Option<u32>,
    /// This agent's nodes in execution (FIFO) order.
    pub nodes: Vec<NodeId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    Host(ThreadId),
    /// A runtime stream (including the default stream).
    Stream(InstId),
    /// An HCCL thread with a queue of its own (`HcclThreadAcquire`).
    HcclThread(InstId),
}

impl AgentKind {
    pub fn is_device(self) -> bool {
        !matches!(self, AgentKind::Host(_))
    }
}

/// One concrete call.
#[derive(Clone, Debug)]
pub struct Node<'p> {
    pub agent: AgentId,
    pub op: &'p Op,
    pub action: Action,
    /// The host thread that issued it, and its position in that rank's issue order.
    pub host: AgentId,
    pub issue: u32,
    /// `issued_after()` in four bytes (`NO_NODE` for none): a trace has millions of nodes.
    issued_after: u32,
}

const NO_NODE: u32 = u32::MAX;

impl Node<'_> {
    /// For a device op: the host-side node issued just before it on the same host
    /// thread. Whatever the host finished before issuing is ordered before this op.
    pub fn issued_after(&self) -> Option<NodeId> {
        (self.issued_after != NO_NODE).then_some(NodeId(self.issued_after))
    }

    fn set_issued_after(&mut self, node: Option<NodeId>) {
        self.issued_after = node.map_or(NO_NODE, |node| node.0);
    }

    pub fn rank(&self, exec: &Execution) -> u32 {
        exec.agents[self.agent.index()].rank
    }
}

/// What a node does, with every object resolved to an instance and every value computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Create(InstId),
    Destroy(InstId),
    EventRecord(InstId),
    EventWait(InstId),
    EventReset(InstId),
    EventQuery(InstId),
    EventElapsedTime {
        start: InstId,
        end: InstId,
    },
    /// The host blocks until the event's record has executed.
    EventSync(InstId),
    /// The host blocks until everything issued to the agent so far has executed:
    /// `upto` is the agent's last node at that moment.
    AgentSync {
        agent: AgentId,
        upto: Option<NodeId>,
    },
    /// `aclrtSynchronizeDevice`: every device agent of the rank.
    DeviceSync {
        upto: Box<[NodeId]>,
    },
    /// The event's waits are done (`aclrtQueryEventWaitStatus`): `upto` is the last wait
    /// on it of each queue of the rank at that moment.
    WaitsSync {
        event: InstId,
        upto: Box<[NodeId]>,
    },
    NotifyRecord(InstId),
    NotifyWait(InstId),
    /// Sets notify `index` on the peer of `channel`.
    ChannelNotifyRecord {
        channel: InstId,
        index: i64,
    },
    ChannelNotifyWait {
        channel: InstId,
        index: i64,
    },
    /// Sets notify `index` of HCCL thread `target`.
    ThreadNotifyRecord {
        target: InstId,
        index: i64,
    },
    ThreadNotifyWait {
        thread: InstId,
        index: i64,
    },
    /// `aclrtValueWrite`: the word's new content. (Words are boxed: every node is as
    /// large as the largest action.)
    ValueWrite {
        word: Box<Access>,
        value: u64,
    },
    /// `aclrtValueWait`: blocks until the word satisfies `condition` (`hb::values`).
    ValueWait {
        word: Box<Access>,
        value: u64,
        condition: ValueCondition,
        bits: u8,
    },
    /// Memory traffic: kernels, copies, transfers, host accesses. (Boxed slices, not
    /// vectors: every node is as large as the largest action.)
    Access(Box<[Access]>),
    /// A new host thread starts.
    Spawn(AgentId),
    /// Ordering-neutral calls (fences, timeouts, SuperKernel-internal ops).
    Other,
}

impl Action {
    /// A host call that returns only once device work (or a record) has run.
    pub fn blocks_host(&self) -> bool {
        matches!(
            self,
            Action::EventSync(_) | Action::AgentSync { .. } | Action::DeviceSync { .. } | Action::WaitsSync { .. }
        )
    }
}

/// Bytes `start..end` of one memory region, read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub memory: Memory,
    /// The buffer instance the call named: for an HCCL buffer, the local or the channel
    /// handle it was reached through (a runtime needs that handle's address).
    pub buffer: InstId,
    pub start: u64,
    pub end: u64,
    pub write: bool,
}

/// A memory region's identity. A rank's HCCL buffer is one region whether it is
/// reached locally (`HcclGetHcclBuffer`) or by a peer (`HcclChannelGetHcclBuffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Memory {
    Buffer(InstId),
    HcclBuffer { rank: u32 },
}

/// One creation of an object on one rank.
#[derive(Clone, Debug)]
pub struct Instance {
    pub rank: u32,
    pub obj: ObjId,
    pub created: Option<NodeId>,
    pub destroyed: Option<NodeId>,
    /// The agent that executes a stream's or HCCL thread's ops.
    pub agent: Option<AgentId>,
    /// Channels: the peer rank as given (a rank outside `0..ranks` does not exist, which
    /// the rules report). HCCL threads and channels: the notify count.
    pub remote_rank: Option<i64>,
    pub notify_num: Option<i64>,
    /// Buffers: size in bytes.
    pub size: Option<u64>,
    /// The handle's index in its array (`ts[2]`), for an array object.
    pub element: Option<u32>,
    /// A peer's HCCL buffer: the channel instance it is seen through.
    pub channel: Option<InstId>,
}

/// A batch never ended, with the calls it cached.
#[derive(Clone, Debug)]
pub struct UnsubmittedBatch {
    pub start: NodeId,
    /// The cached calls' nodes (now `Action::Other`), with what each would have done.
    pub calls: Vec<(NodeId, Action)>,
    /// `HcommBatchModeEnd` calls that named another batch tag.
    pub other_tags: Vec<NodeId>,
}

/// `array[index]` with `index` outside the array's `len` handles.
#[derive(Clone, Debug)]
pub struct BadIndex<'p> {
    pub op: &'p Op,
    pub rank: u32,
    /// The element object the call names (`ts[i]`).
    pub element: ObjId,
    pub index: i64,
    pub len: u32,
    /// The notify record the rejected call would have made, if it signals.
    pub missed: Option<MissedSignal>,
}

/// A notify record a rejected call does not make: the waits it would have satisfied
/// starve. Objects are arrays' base objects, so that any element of them matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissedSignal {
    /// `index` of an HCCL thread of `target`, on the calling rank.
    Thread { target: ObjId, index: i64 },
    /// `index` of the peer's end of a channel of `channel`, on another rank.
    Channel { channel: ObjId, index: i64 },
}

/// A call naming an object that has no live instance at that point.
#[derive(Clone, Debug)]
pub struct BadUse<'p> {
    pub op: &'p Op,
    pub rank: u32,
    pub obj: ObjId,
    /// `Some`: the instance existed but was destroyed by that node.
    pub destroyed_by: Option<NodeId>,
}

impl<'p> Execution<'p> {
    /// Frees the run, its nodes beside the rest: a million nodes, each with its own
    /// accesses, take as long to free as some of the analysis.
    pub fn free_in_parallel(self) {
        let Execution { nodes, instances, .. } = self;
        rayon::join(|| drop(nodes), || drop(instances));
    }

    /// Ranks with more than one host thread: where threads can issue concurrently.
    pub fn ranks_with_several_host_threads(&self) -> Vec<u32> {
        let hosts: Vec<u32> = self
            .agents
            .iter()
            .filter(|a| matches!(a.kind, AgentKind::Host(_)))
            .map(|a| a.rank)
            .collect();
        // Agents are created rank by rank, so a rank's host threads are neighbours.
        let mut ranks: Vec<u32> = hosts
            .windows(2)
            .filter(|pair| pair[0] == pair[1])
            .map(|pair| pair[0])
            .collect();
        ranks.dedup();
        ranks
    }

    /// The run was cut short (see `cutoff`): it is not the whole program.
    pub fn truncated(&self) -> bool {
        self.cutoff.is_some()
    }

    pub fn node(&self, id: NodeId) -> &Node<'p> {
        &self.nodes[id.index()]
    }

    pub fn agent(&self, id: AgentId) -> &Agent {
        &self.agents[id.index()]
    }

    pub fn instance(&self, id: InstId) -> &Instance {
        &self.instances[id.index()]
    }

    /// Whether the instance stands for an object from before the code or trace begins
    /// (an `existing_*` pseudo-call): its state at that point is unknown.
    pub fn existed_before(&self, id: InstId) -> bool {
        self.program.object(self.instance(id).obj).existed_before() || self.ipc_unexported.contains(&id)
    }

    /// Whether a process outside the run shares the instance by an IPC handle or key
    /// (it opened what this run exports, or exported what this run opens): what that
    /// process signals or consumes is unknown.
    pub fn shared_outside(&self, id: InstId) -> bool {
        let shared = self.ipc_shared(id);
        self.ipc_unexported.contains(&id) || self.ipc_unopened.iter().any(|(inst, _)| *inst == shared)
    }

    /// The instance signals on `id` go through: the exporter's, for an IPC open.
    pub fn ipc_shared(&self, id: InstId) -> InstId {
        self.ipc_opened.get(&id).copied().unwrap_or(id)
    }

    /// The stream a host call runs its work on, for a synchronous copy.
    /// The `cudaGraphLaunch` that ran `node`, if a graph launch did.
    pub fn launch_of(&self, node: NodeId) -> Option<&'p Op> {
        let at = self.graph_launches.binary_search_by_key(&node, |&(n, _)| n).ok()?;
        Some(self.graph_launches[at].1)
    }

    pub fn synchronous_work_of(&self, node: NodeId) -> Option<AgentId> {
        let at = self.synchronous_work.binary_search_by_key(&node, |&(n, _)| n).ok()?;
        Some(self.synchronous_work[at].1)
    }

    /// How `agent`'s work is ordered against CUDA's legacy default stream.
    pub fn legacy_order(&self, agent: AgentId) -> LegacyOrder {
        let AgentKind::Stream(inst) = self.agent(agent).kind else {
            return LegacyOrder::Independent;
        };
        if !self.legacy_default_stream {
            return LegacyOrder::Independent;
        }
        let obj = self.instance(inst).obj;
        match self.program.object(obj).kind {
            _ if obj == crate::model::Program::DEFAULT_STREAM => LegacyOrder::Legacy,
            crate::model::ObjectKind::Stream(crate::model::StreamSync::Blocking) => LegacyOrder::Blocking,
            _ => LegacyOrder::Independent,
        }
    }

    /// The context whose own default stream `stream` is (`aclrtCreateContext`); `None`
    /// for the device's.
    pub fn own_context(&self, stream: InstId) -> Option<InstId> {
        let &(context, _) = self.context_streams.iter().find(|&&(_, s)| s == stream)?;
        let own = matches!(
            self.program.object(self.instance(context).obj).kind,
            crate::model::ObjectKind::Context { current: false }
        );
        own.then_some(context)
    }

    /// "stream s2", "HCCL thread t (rank 1)", "host thread main" for messages.
    pub fn agent_name(&self, id: AgentId) -> String {
        let agent = self.agent(id);
        let name = match agent.kind {
            AgentKind::Host(thread) => format!("host thread {}", self.program.threads[thread.index()].name),
            AgentKind::Stream(inst) if self.instance(inst).obj == crate::model::Program::DEFAULT_STREAM => {
                match (self.own_context(inst), self.legacy_default_stream) {
                    (Some(context), _) => {
                        format!(
                            "the default stream of context {}",
                            self.program.object(self.instance(context).obj).shown()
                        )
                    }
                    (None, legacy) => {
                        let stream = if legacy {
                            "the legacy default stream"
                        } else {
                            "the default stream"
                        };
                        match agent.device {
                            Some(device) => format!("{stream} of device {device}"),
                            None => stream.to_string(),
                        }
                    }
                }
            }
            AgentKind::Stream(inst) if self.instance(inst).obj == crate::model::Program::PER_THREAD_STREAM => {
                // Only its own host thread issues to it.
                let owner = agent.nodes.first().map(|&n| self.agent_name(self.node(n).host));
                format!("the per-thread default stream of {}", owner.unwrap_or_default())
            }
            AgentKind::Stream(inst) | AgentKind::HcclThread(inst) => {
                let object = self.program.object(self.instance(inst).obj);
                format!("{} {}", object.kind.noun(), self.handle_name(inst))
            }
        };
        if self.ranks > 1 {
            format!("{name} (rank {})", agent.rank)
        } else {
            name
        }
    }

    /// The handle `obj` names in `node`'s call: the one `array[i]` named when the call
    /// was issued, else `None` (look the object up as usual).
    pub fn element_handle(&self, node: NodeId, obj: ObjId) -> Option<InstId> {
        self.elements.get(&(node, obj)).copied()
    }

    /// The object's name, with its index in its array (`workers[2]`).
    fn handle_name(&self, id: InstId) -> String {
        let instance = self.instance(id);
        let name = self.program.object(instance.obj).shown();
        match instance.element {
            Some(k) => format!("{name}[{k}]"),
            None => name.to_string(),
        }
    }

    /// The object's name, with its rank when there are several.
    pub fn instance_name(&self, id: InstId) -> String {
        let instance = self.instance(id);
        let name = self.handle_name(id);
        if self.ranks > 1 {
            format!("{name} (rank {})", instance.rank)
        } else {
            name
        }
    }

    /// `*flag`, `*(flag + 8)`: the word a memory-value call names, for messages.
    pub fn word_name(&self, word: &Access) -> String {
        let name = self.instance_name(word.buffer);
        match word.start {
            0 => format!("*{name}"),
            offset => format!("*({name} + {offset})"),
        }
    }

    /// "aclrtStreamWaitEvent on stream s2", "kernel `matmul` on stream s1" for messages.
    pub fn describe(&self, node: NodeId) -> String {
        let n = self.node(node);
        let what = match &n.op.kind {
            crate::model::OpKind::Kernel { launch, .. } => format!("kernel `{}`", launch.name),
            _ => n.op.api.to_string(),
        };
        format!("{what} on {}", self.agent_name(n.agent))
    }

    /// "buffer x", "the HCCL buffer of rank 1".
    pub fn memory_name(&self, memory: Memory) -> String {
        match memory {
            Memory::Buffer(inst) => format!("buffer {}", self.instance_name(inst)),
            Memory::HcclBuffer { rank } => format!("the HCCL buffer of rank {rank}"),
        }
    }

    /// The environment a host call of `rank` is evaluated in, outside any loop (what a
    /// runtime or a trace needs of the few arguments the nodes do not resolve).
    pub fn host_env(&self, rank: u32) -> Env {
        Env {
            params: self.params.clone(),
            rank: i64::from(rank),
            vars: vec![None; self.program.vars.len()],
            core: None,
        }
    }

    /// "N = 2, PROFILE = 0" when the program has parameters.
    pub fn assignment(&self) -> Option<String> {
        if self.program.params.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .program
            .params
            .iter()
            .zip(&self.params)
            .map(|(param, value)| format!("{} = {value}", param.name))
            .collect();
        Some(parts.join(", "))
    }
}

#[cfg(test)]
mod layout {
    /// One node per call of a trace: every byte here is ten megabytes of a
    /// ten-million-call check's peak (see `syncguard_model`'s `a_call_stays_small`).
    #[test]
    fn a_node_stays_small() {
        assert_eq!(size_of::<super::Action>(), 24);
        assert_eq!(size_of::<super::Node>(), 48);
    }
}
