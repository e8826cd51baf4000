//! From a concrete Execution to what each host thread calls, in its issue order.

use std::collections::HashMap;

use syncguard_analyzer::api::ArgKind;
use syncguard_analyzer::exec::{Action, AgentId, AgentKind, Env, Execution, InstId, NodeId};
use syncguard_analyzer::model::{self, MemorySpace, ObjId, ObjectKind, OpKind, Program};

use crate::backend::{BufferSpace, CopyVia, HostCall, ObjectSpec, Timeout, Work};

/// One host call.
#[derive(Clone, Debug)]
pub enum Call {
    Create(InstId, ObjectSpec),
    Destroy(InstId),
    /// Work for the stream or HCCL thread `queue`.
    Enqueue {
        queue: InstId,
        work: Work,
    },
    Host(HostCall),
    /// Starts the host thread `agent`.
    Spawn(AgentId),
}

#[derive(Clone, Debug)]
pub struct Step {
    pub node: NodeId,
    pub call: Call,
}

/// One host thread's calls.
#[derive(Clone, Debug)]
pub struct Script {
    pub agent: AgentId,
    pub rank: u32,
    pub steps: Vec<Step>,
}

/// Everything a run executes.
pub struct Plan<'e, 'p> {
    pub exec: &'e Execution<'p>,
    /// Every host thread's script, by agent; `None` for device agents.
    pub scripts: Vec<Option<Script>>,
    /// The main thread of each rank: the threads that start on their own.
    pub mains: Vec<AgentId>,
    /// Each rank's default stream instance and its host threads' per-thread default
    /// streams, if the program uses them: streams no call creates.
    pub default_streams: Vec<(u32, InstId)>,
}

impl<'e, 'p> Plan<'e, 'p> {
    pub fn new(exec: &'e Execution<'p>) -> Self {
        let mut scripts: Vec<Option<Script>> = exec
            .agents
            .iter()
            .enumerate()
            .map(|(index, agent)| {
                matches!(agent.kind, AgentKind::Host(_)).then(|| Script {
                    agent: AgentId(index as u32),
                    rank: agent.rank,
                    steps: Vec::new(),
                })
            })
            .collect();
        let envs: Vec<Env> = (0..exec.ranks).map(|rank| exec.host_env(rank)).collect();
        let mut live = LiveObjects::default();
        // Objects that exist without a creating call (the default stream).
        for (index, instance) in exec.instances.iter().enumerate() {
            if instance.created.is_none() {
                live.current.insert((instance.rank, instance.obj), InstId(index as u32));
            }
        }
        // Node order is each rank's issue order.
        for (index, node) in exec.nodes.iter().enumerate() {
            let id = NodeId(index as u32);
            let rank = node.rank(exec);
            if let Action::Create(inst) = node.action {
                live.current.insert((rank, exec.instance(inst).obj), inst);
            }
            if is_notify_of_write_call(exec, id) {
                continue;
            }
            let Some(call) = call_of(exec, &envs, &live, id) else {
                continue;
            };
            if let Some(Some(script)) = scripts.get_mut(node.host.index()) {
                script.steps.push(Step { node: id, call });
            }
        }
        let mains = exec
            .agents
            .iter()
            .enumerate()
            .filter(|(_, agent)| agent.kind == AgentKind::Host(Program::MAIN_THREAD))
            .map(|(index, _)| AgentId(index as u32))
            .collect();
        let default_streams = exec
            .instances
            .iter()
            .enumerate()
            .filter(|(_, instance)| {
                let implicit_stream = [Program::DEFAULT_STREAM, Program::PER_THREAD_STREAM].contains(&instance.obj);
                instance.created.is_none() && implicit_stream
            })
            .map(|(index, instance)| (instance.rank, InstId(index as u32)))
            .collect();
        Plan {
            exec,
            scripts,
            mains,
            default_streams,
        }
    }

    /// Host calls in the plan, over every thread.
    pub fn call_count(&self) -> usize {
        self.scripts.iter().flatten().map(|s| s.steps.len()).sum()
    }
}

/// Why the backends cannot run `exec` as the execution that was verified, if so: an
/// object from before the code (`existing_*`) has a state no run can recreate, a branch
/// on a query result goes the way the run's timing decides, and the
/// backends run every stream as an ordinary one, so work that CUDA's legacy default
/// stream orders would run unordered.
pub fn cannot_run(exec: &Execution) -> Option<String> {
    let before = exec
        .instances
        .iter()
        .enumerate()
        .find(|(index, _)| exec.existed_before(InstId(*index as u32)));
    if let Some((_, instance)) = before {
        let object = exec.program.object(instance.obj);
        return Some(format!(
            "uses {} {}, which existed before the code it shows: a run cannot recreate its state",
            object.kind.noun(),
            object.name
        ));
    }
    let host_memory_of_its_own = exec.nodes.iter().find(|node| {
        let pageable = matches!(node.action, Action::Create(inst) if matches!(
            &exec.program.object(exec.instance(inst).obj).kind,
            ObjectKind::Buffer(info) if info.space == MemorySpace::Pageable
        ));
        pageable || matches!(node.op.kind, OpKind::HostRegister(_) | OpKind::HostUnregister(_))
    });
    if let Some(node) = host_memory_of_its_own {
        return Some(format!(
            "uses host memory the runtime did not allocate ({}), which no backend replays yet",
            node.op.api
        ));
    }
    if let Some(node) = exec
        .nodes
        .iter()
        .find(|node| matches!(node.action, Action::WaitsSync { .. }))
    {
        return Some(format!(
            "waits until {} reports every wait on its event done, which no backend replays yet",
            node.op.api
        ));
    }
    // A context's own default stream (not the device's, which every backend has).
    let context_stream = exec.context_streams.iter().find(|&&(context, stream)| {
        matches!(
            exec.program.object(exec.instance(context).obj).kind,
            ObjectKind::Context { current: false }
        ) && exec
            .instance(stream)
            .agent
            .is_some_and(|agent| !exec.agent(agent).nodes.is_empty())
    });
    if let Some(&(context, _)) = context_stream {
        return Some(format!(
            "issues work to the default stream of context {}, which no backend replays yet",
            exec.program.object(exec.instance(context).obj).name
        ));
    }
    if let Some(op) = exec.other_devices.first() {
        return Some(format!(
            "switches a thread to another device than its rank's ({}), which no backend replays yet",
            op.api
        ));
    }
    let pitched = |api: &str| {
        syncguard_analyzer::api::lookup(api).is_some_and(|api| {
            api.params
                .iter()
                .any(|p| matches!(p.kind, ArgKind::Memcpy3DParms | ArgKind::PitchedPtr))
        })
    };
    if let Some(node) = exec.nodes.iter().find(|node| pitched(node.op.api)) {
        return Some(format!(
            "makes 3D copies or memsets ({}), which no backend replays yet",
            node.op.api
        ));
    }
    if let Some(node) = exec.nodes.iter().find(|node| {
        let creates_ipc_open = matches!(node.action, Action::Create(inst)
            if exec.program.object(exec.instance(inst).obj).ipc_key.is_some());
        creates_ipc_open || matches!(node.op.kind, OpKind::IpcExport { .. })
    }) {
        return Some(format!(
            "shares events, notifies or memory between processes ({}), which no backend replays yet",
            node.op.api
        ));
    }
    if let Some(node) = exec
        .nodes
        .iter()
        .find(|node| matches!(node.action, Action::ValueWrite { .. } | Action::ValueWait { .. }))
    {
        return Some(format!(
            "synchronizes streams through memory values ({}), which no backend replays yet",
            node.op.api
        ));
    }
    if let Some(node) = exec
        .nodes
        .iter()
        .find(|node| matches!(node.op.kind, OpKind::BeginCapture { .. } | OpKind::GraphLaunch { .. }))
    {
        return Some(format!(
            "captures or launches CUDA graphs ({}), which no backend replays yet",
            node.op.api
        ));
    }
    if let Some(node) = exec
        .nodes
        .iter()
        .find(|node| matches!(node.op.kind, OpKind::BatchMode { .. }))
    {
        return Some(format!(
            "caches HCCL calls in batch mode ({}), which no backend replays yet",
            node.op.api
        ));
    }
    if let Some((query, _)) = exec.query_outcomes.first() {
        return Some(format!(
            "branches on what {} reports, which a run decides by its timing: no run can be made to take the branches that were verified",
            query.api
        ));
    }
    let implicit = syncguard_analyzer::hb::legacy_edges(exec).len();
    let plural = if implicit == 1 { "y" } else { "ies" };
    (implicit > 0).then(|| {
        format!(
            "relies on CUDA's legacy default stream to order its work ({implicit} implicit dependenc{plural}), which no backend executes yet"
        )
    })
}

/// Which instance of each object is live on each rank, as the calls are replayed.
#[derive(Default)]
struct LiveObjects {
    current: HashMap<(u32, ObjId), InstId>,
}

impl LiveObjects {
    fn get(&self, rank: u32, obj: ObjId) -> Option<InstId> {
        self.current.get(&(rank, obj)).copied()
    }
}

fn call_of(exec: &Execution, envs: &[Env], live: &LiveObjects, id: NodeId) -> Option<Call> {
    let node = exec.node(id);
    let rank = node.rank(exec);
    let env = &envs[rank as usize];
    let timeout = |t: Option<&model::Timeout>| {
        t.and_then(|t| {
            Some(Timeout {
                value: env.eval(&t.value).ok()?,
                unit: t.unit,
            })
        })
    };
    // The instance an op names as its queue: the HCCL thread for Hcomm calls (even
    // when it is bound to a stream), else the stream.
    // A per-thread default stream is one instance per host thread: the node's own.
    let own_stream = || {
        let agent = match node.action {
            Action::AgentSync { agent, .. } => agent,
            _ => node.agent,
        };
        match exec.agent(agent).kind {
            AgentKind::Stream(inst) => Some(inst),
            _ => None,
        }
    };
    // `array[i]` names the handle it named when the call was issued.
    let handle = |obj: ObjId| exec.element_handle(id, obj).or_else(|| live.get(rank, obj));
    let queue = |obj: ObjId| match obj {
        Program::PER_THREAD_STREAM => own_stream(),
        _ => handle(obj),
    };
    let enqueue = |queue: Option<InstId>, work: Work| Some(Call::Enqueue { queue: queue?, work });
    let index = |i: i64| u32::try_from(i).ok();
    Some(match (&node.op.kind, &node.action) {
        (_, Action::Spawn(agent)) => Call::Spawn(*agent),
        // Contexts only decide which default stream `NULL` is: `cannot_run` refuses
        // work on any but the device's.
        (_, Action::Create(inst) | Action::Destroy(inst)) if is_context(exec, *inst) => return None,
        (OpKind::SetCurrentContext(_), _) | (OpKind::Create(_), Action::Other) => return None,
        (_, Action::Create(inst)) => Call::Create(*inst, object_spec(exec, live, *inst)),
        (_, Action::Destroy(inst)) => Call::Destroy(*inst),
        (OpKind::EventRecord { stream, .. }, Action::EventRecord(event)) => {
            enqueue(queue(*stream), Work::RecordEvent(*event))?
        }
        (OpKind::EventWait { stream, timeout: t, .. }, Action::EventWait(event)) => enqueue(
            queue(*stream),
            Work::WaitEvent {
                event: *event,
                timeout: timeout(t.as_deref()),
            },
        )?,
        (OpKind::EventReset { stream, .. }, Action::EventReset(event)) => {
            enqueue(queue(*stream), Work::ResetEvent(*event))?
        }
        (OpKind::NotifyRecord { stream, .. }, Action::NotifyRecord(notify)) => {
            enqueue(queue(*stream), Work::RecordNotify(*notify))?
        }
        (OpKind::NotifyWait { stream, timeout: t, .. }, Action::NotifyWait(notify)) => enqueue(
            queue(*stream),
            Work::WaitNotify {
                notify: *notify,
                timeout: timeout(t.as_deref()),
            },
        )?,
        (OpKind::ChannelNotifyRecord { thread, .. }, Action::ChannelNotifyRecord { channel, index: i }) => enqueue(
            queue(*thread),
            Work::ChannelRecord {
                channel: *channel,
                index: index(*i)?,
            },
        )?,
        (OpKind::ChannelNotifyWait { thread, timeout: t, .. }, Action::ChannelNotifyWait { channel, index: i }) => {
            enqueue(
                queue(*thread),
                Work::ChannelWait {
                    channel: *channel,
                    index: index(*i)?,
                    timeout: timeout(t.as_deref()),
                },
            )?
        }
        (OpKind::ThreadNotifyRecord { thread, .. }, Action::ThreadNotifyRecord { target, index: i }) => enqueue(
            queue(*thread),
            Work::ThreadRecord {
                target: *target,
                index: index(*i)?,
            },
        )?,
        (OpKind::ThreadNotifyWait { thread, timeout: t, .. }, Action::ThreadNotifyWait { index: i, .. }) => enqueue(
            queue(*thread),
            Work::ThreadWait {
                index: index(*i)?,
                timeout: timeout(t.as_deref()),
            },
        )?,
        (
            OpKind::RemoteWrite {
                thread,
                channel,
                notify,
                ..
            },
            Action::Access(accesses),
        ) => {
            let notify = match notify {
                Some(expr) => Some(index(env.eval(expr).ok().or_else(|| notify_index_of_next(exec, id))?)?),
                None => None,
            };
            let via = CopyVia::Write {
                channel: handle(*channel)?,
                notify,
            };
            enqueue(queue(*thread), copy(accesses, via)?)?
        }
        (OpKind::RemoteRead { thread, channel, .. }, Action::Access(accesses)) => {
            let via = CopyVia::Read {
                channel: handle(*channel)?,
            };
            enqueue(queue(*thread), copy(accesses, via)?)?
        }
        (OpKind::LocalCopy { thread, .. }, Action::Access(accesses)) => {
            enqueue(queue(*thread), copy(accesses, CopyVia::Local)?)?
        }
        (
            OpKind::Memcpy {
                stream: Some(stream), ..
            },
            Action::Access(accesses),
        ) => enqueue(queue(*stream), copy(accesses, CopyVia::Memcpy)?)?,
        // `cudaMemcpy` between device buffers: work of the default stream.
        (OpKind::Memcpy { stream: None, .. }, Action::Access(accesses)) if exec.agent(node.agent).kind.is_device() => {
            enqueue(own_stream(), copy(accesses, CopyVia::Memcpy)?)?
        }
        (OpKind::Memcpy { stream: None, .. }, Action::Access(accesses)) => {
            let [src, dst] = &accesses[..] else { return None };
            Call::Host(HostCall::Copy {
                dst: dst.clone(),
                src: src.clone(),
            })
        }
        (OpKind::Fence { thread, channel }, _) => enqueue(
            queue(*thread),
            Work::Fence {
                channel: channel.and_then(handle),
            },
        )?,
        (OpKind::Kernel { stream, launch }, Action::Access(accesses)) => enqueue(
            queue(*stream),
            Work::Kernel {
                name: launch.name.clone(),
                accesses: accesses.to_vec(),
            },
        )?,
        (OpKind::LaunchSuperKernel(id), Action::Access(accesses)) => {
            let superkernel = &exec.program.superkernels[id.index()];
            enqueue(
                queue(superkernel.stream),
                Work::SuperKernel {
                    name: superkernel.name.clone(),
                    accesses: accesses.to_vec(),
                },
            )?
        }
        (OpKind::HostAccess { .. }, Action::Access(accesses)) => {
            Call::Host(HostCall::Access(accesses.first()?.clone()))
        }
        (OpKind::SetWaitTimeout(t), _) => Call::Host(HostCall::SetWaitTimeout {
            api: node.op.api,
            timeout: timeout(Some(t))?,
        }),
        (OpKind::StreamSynchronize { stream, timeout: t }, _) => Call::Host(HostCall::SynchronizeStream {
            queue: queue(*stream)?,
            timeout: timeout(t.as_deref()),
        }),
        (OpKind::ThreadSynchronize { thread }, _) => Call::Host(HostCall::SynchronizeThread {
            thread: queue(*thread)?,
        }),
        (OpKind::DeviceSynchronize, _) => Call::Host(HostCall::SynchronizeDevice),
        (OpKind::EventSynchronize { timeout: t, .. }, Action::EventSync(event)) => {
            Call::Host(HostCall::SynchronizeEvent {
                event: *event,
                timeout: timeout(t.as_deref()),
            })
        }
        (OpKind::EventQuery { wait_status, .. }, Action::EventQuery(event)) => Call::Host(HostCall::QueryEvent {
            event: *event,
            wait_status: *wait_status,
        }),
        (OpKind::EventElapsedTime { .. }, Action::EventElapsedTime { start, end }) => {
            Call::Host(HostCall::EventElapsedTime {
                start: *start,
                end: *end,
            })
        }
        _ => return None,
    })
}

/// Whether `id` is the notify record of an `HcommWriteWithNotifyOnThread`: one call
/// that became two nodes, the write and then its record. Consecutive nodes of the same
/// op are otherwise separate calls (a loop whose body is that one call).
fn is_notify_of_write_call(exec: &Execution, id: NodeId) -> bool {
    let node = exec.node(id);
    let Some(previous) = id.index().checked_sub(1).map(|i| &exec.nodes[i]) else {
        return false;
    };
    matches!(node.op.kind, OpKind::RemoteWrite { .. })
        && matches!(node.action, Action::ChannelNotifyRecord { .. })
        && std::ptr::eq(previous.op, node.op)
        && matches!(previous.action, Action::Access(_))
}

/// The notify index of a `WithNotify` write whose index depends on a loop variable:
/// the instantiated record node that follows it.
fn notify_index_of_next(exec: &Execution, id: NodeId) -> Option<i64> {
    match exec.nodes.get(id.index() + 1)?.action {
        Action::ChannelNotifyRecord { index, .. } => Some(index),
        _ => None,
    }
}

/// A copy's accesses are `[src, dst]`.
fn copy(accesses: &[syncguard_analyzer::exec::Access], via: CopyVia) -> Option<Work> {
    let [src, dst] = accesses else { return None };
    Some(Work::Copy {
        dst: dst.clone(),
        src: src.clone(),
        via,
    })
}

fn object_spec(exec: &Execution, live: &LiveObjects, inst: InstId) -> ObjectSpec {
    let instance = exec.instance(inst);
    let rank = instance.rank;
    let lookup = |obj: ObjId| live.get(rank, obj);
    let count = |n: Option<i64>| n.and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
    match &exec.program.object(instance.obj).kind {
        // Never asked for a context (`call_of` leaves them out) or a graph (`cannot_run`
        // refuses them).
        ObjectKind::Stream(_)
        | ObjectKind::Context { .. }
        | ObjectKind::Graph { .. }
        | ObjectKind::GraphExec { .. } => ObjectSpec::Stream,
        ObjectKind::Event(info) => ObjectSpec::Event {
            semantics: info.semantics,
            creator: info.creator,
            flags: info.flags,
        },
        ObjectKind::Notify => ObjectSpec::Notify,
        ObjectKind::Comm => ObjectSpec::Comm { ranks: exec.ranks },
        ObjectKind::Channel(info) => ObjectSpec::Channel {
            comm: lookup(info.comm),
            remote_rank: instance.remote_rank.and_then(|r| u32::try_from(r).ok()).unwrap_or(rank),
            notify_num: count(instance.notify_num),
            protocol: info.protocol.clone(),
            engine: info.engine.clone(),
        },
        ObjectKind::HcclThread {
            comm, engine, stream, ..
        } => ObjectSpec::HcclThread {
            comm: lookup(*comm),
            engine: engine.clone(),
            stream: stream.and_then(lookup),
            notify_num: count(instance.notify_num),
        },
        ObjectKind::Buffer(info) => {
            let space = match &info.space {
                MemorySpace::Device => BufferSpace::Device,
                MemorySpace::Host => BufferSpace::Host,
                MemorySpace::HcclLocal => BufferSpace::HcclLocal,
                // Never run: `cannot_run` refuses objects from before and `malloc` memory.
                MemorySpace::Before | MemorySpace::BeforePeer(_) | MemorySpace::Pageable => BufferSpace::Device,
                MemorySpace::HcclPeer(_) => match instance.channel {
                    Some(channel) => BufferSpace::HcclPeer { channel },
                    None => BufferSpace::HcclLocal,
                },
            };
            let size = match space {
                BufferSpace::HcclLocal | BufferSpace::HcclPeer { .. } => {
                    instance.size.unwrap_or(exec.program.settings.hccl_buffer_size)
                }
                _ => instance.size.unwrap_or(0),
            };
            ObjectSpec::Buffer { space, size }
        }
        ObjectKind::Element { .. } => unreachable!("every instance is of an array's kind, not an element's"),
    }
}

fn is_context(exec: &Execution, inst: InstId) -> bool {
    matches!(
        exec.program.object(exec.instance(inst).obj).kind,
        ObjectKind::Context { .. }
    )
}
