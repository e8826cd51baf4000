//! The simulator backend: runs a program with no device.
//!
//! Every stream, HCCL thread and GE stream is an OS thread executing its queue in FIFO
//! order; host threads are the driver's threads. Sync objects block for real: sync-kind
//! events are flags that a record sets and a reset clears, capture-kind events bind a
//! wait to the latest record issued before it, notifies are binary flags a wait
//! consumes, a GE group Wait passes once a Record of its group has run on another stream
//! (Records wake Waits and are not consumed). Buffers are real memory: kernels write
//! their declared ranges, transfers copy bytes.
//!
//! A seeded RNG perturbs every agent (yields, short sleeps, kernel durations), so that
//! seeds exercise different interleavings. Vector clocks follow the synchronization
//! actually performed, and shadow memory flags any access not ordered after a
//! conflicting one. When every agent that could still run is blocked, the run is
//! stopped and reported as a hang with who waits on what, instead of hanging.

mod clock;
mod memory;
mod shadow;
mod state;
mod worker;

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use syncguard_analyzer::exec::{AgentId, Execution, InstId, Memory, NodeId};
use syncguard_analyzer::hb::FlagKey;
use syncguard_analyzer::model::{EventSemantics, GeTaskKind, ObjectKind};

pub use shadow::ObservedRace;
pub use state::{Blocked, Observed, WaitOn};

use crate::backend::{Backend, Fault, GroupTasks, Host, HostCall, ObjectSpec, Timeout, Work, lock};
use clock::{Epoch, Signal, VClock};
use memory::Memories;
use shadow::Shadow;
use state::{State, Status, Task, TaskWork};

/// The real bytes the simulator holds for buffers at most, by default.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

/// How the simulator perturbs timing, and the memory it may use.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    pub seed: u64,
    /// Longest random pause before an op (most ops only yield or run at once).
    pub jitter: Duration,
    /// Longest time a kernel or copy occupies its queue.
    pub kernel_time: Duration,
    /// Most bytes held for buffer contents; a run that needs more stops with
    /// `Fault::MemoryLimit`. Ranges of one value and unwritten ones cost nothing.
    pub memory_limit: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 0,
            jitter: Duration::from_micros(50),
            kernel_time: Duration::from_micros(20),
            memory_limit: DEFAULT_MEMORY_LIMIT,
        }
    }
}

/// Facts about the execution the simulator needs while running.
struct Tables {
    agents: usize,
    agent_rank: Vec<u32>,
    /// Streams, HCCL threads and GE streams: the agents with a queue.
    is_device: Vec<bool>,
    /// GE streams, after the Execution's agents: (rank, op index, stream id) → agent.
    ge_agents: HashMap<(u32, usize, u32), usize>,
    inst_agent: Vec<Option<usize>>,
    inst_rank: Vec<u32>,
    inst_remote: Vec<Option<i64>>,
    event_semantics: Vec<Option<EventSemantics>>,
}

impl Tables {
    fn new(exec: &Execution) -> Self {
        let mut agent_rank: Vec<u32> = exec.agents.iter().map(|a| a.rank).collect();
        let mut is_device: Vec<bool> = exec.agents.iter().map(|a| a.kind.is_device()).collect();
        let mut ge_agents = HashMap::new();
        for rank in 0..exec.ranks {
            for (index, op) in exec.program.ge_ops.iter().enumerate() {
                for task in &op.tasks {
                    ge_agents.entry((rank, index, task.stream_id)).or_insert_with(|| {
                        agent_rank.push(rank);
                        is_device.push(true);
                        agent_rank.len() - 1
                    });
                }
            }
        }
        let event_semantics = exec
            .instances
            .iter()
            .map(|i| match &exec.program.object(i.obj).kind {
                ObjectKind::Event(info) => Some(info.semantics),
                _ => None,
            })
            .collect();
        Tables {
            agents: agent_rank.len(),
            agent_rank,
            is_device,
            ge_agents,
            inst_agent: exec.instances.iter().map(|i| i.agent.map(|a| a.index())).collect(),
            inst_rank: exec.instances.iter().map(|i| i.rank).collect(),
            inst_remote: exec.instances.iter().map(|i| i.remote_rank).collect(),
            event_semantics,
        }
    }

    fn queue_agent(&self, queue: InstId) -> Result<usize, Fault> {
        self.inst_agent
            .get(queue.index())
            .copied()
            .flatten()
            .ok_or_else(|| Fault::Unsupported {
                what: "work on an object that is not a stream or HCCL thread".into(),
            })
    }

    /// The flag a channel record sets on the peer, or a channel wait consumes here.
    fn channel_flag(&self, channel: InstId, index: u32, record: bool) -> FlagKey {
        let local = i64::from(self.inst_rank[channel.index()]);
        let remote = self.inst_remote[channel.index()].unwrap_or(local);
        let (dst, src) = if record { (remote, local) } else { (local, remote) };
        FlagKey::Channel {
            dst,
            src,
            index: index as i64,
        }
    }
}

struct Shared {
    options: SimOptions,
    tables: Tables,
    state: Mutex<State>,
    /// One per agent: an agent sleeps on its own, so a signal wakes only the waiters.
    wakers: Vec<Condvar>,
    /// Notified when a queue completes a task or the run stops.
    progress: Condvar,
    shadow: Mutex<Shadow>,
    memory: Memories,
    /// Host threads' clocks (indexed by agent; device entries unused), with the
    /// snapshot shared by the work they issue until the clock changes.
    hosts: Vec<Mutex<HostClock>>,
}

struct HostClock {
    clock: VClock,
    issued: Option<Arc<VClock>>,
    rng: StdRng,
    slow: bool,
}

impl HostClock {
    fn snapshot(&mut self) -> Arc<VClock> {
        self.issued.get_or_insert_with(|| Arc::new(self.clock.clone())).clone()
    }

    fn changed(&mut self) {
        self.issued = None;
    }
}

/// The simulator. Create one per run.
pub struct Sim {
    shared: Arc<Shared>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Sim {
    pub fn new(exec: &Execution, options: SimOptions) -> Self {
        let tables = Tables::new(exec);
        let agents = tables.agents;
        let hosts = (0..agents)
            .map(|agent| {
                Mutex::new(HostClock {
                    clock: VClock::new(agents),
                    issued: None,
                    rng: agent_rng(options.seed, agent),
                    slow: is_slow(options.seed, agent, agents),
                })
            })
            .collect();
        let shared = Arc::new(Shared {
            options,
            memory: Memories::new(options.memory_limit),
            tables,
            state: Mutex::new(State::new(agents)),
            wakers: (0..agents).map(|_| Condvar::new()).collect(),
            progress: Condvar::new(),
            shadow: Mutex::new(Shadow::default()),
            hosts,
        });
        Sim {
            shared,
            workers: Mutex::new(Vec::new()),
        }
    }

    /// What went wrong, in a deterministic order.
    pub fn observed(&self) -> Vec<Observed> {
        let mut observed = self.shared.lock().observed.clone();
        observed.sort_by_key(|o| format!("{o:?}"));
        observed.dedup_by_key(|o| format!("{o:?}"));
        observed
    }

    /// Bytes `start..end` of `memory` as the run left them.
    pub fn bytes(&self, memory: Memory, start: u64, end: u64) -> Vec<u8> {
        self.shared.memory.read(memory, start, end)
    }

    /// Bytes held for buffer contents now.
    pub fn memory_held(&self) -> u64 {
        self.shared.memory.resident()
    }

    /// Device ops executed.
    pub fn executed(&self) -> u64 {
        self.shared.lock().executed
    }

    /// The nodes each agent's queue executed, in order, by agent (host threads' and
    /// GE streams' lists are empty): what actually ran, to compare with the Execution.
    pub fn executed_by_agent(&self) -> Vec<Vec<NodeId>> {
        self.shared
            .lock()
            .queues
            .iter()
            .map(|queue| queue.executed_nodes.clone())
            .collect()
    }

    /// "GE stream 1 (rank 0)" for GE agents, the Execution's names otherwise.
    pub fn agent_name(&self, exec: &Execution, agent: usize) -> String {
        match self.ge_agent(agent) {
            None => exec.agent_name(AgentId(agent as u32)),
            Some((rank, _, stream)) if exec.ranks > 1 => format!("GE stream {stream} (rank {rank})"),
            Some((_, _, stream)) => format!("GE stream {stream}"),
        }
    }

    /// For an agent that runs a GE op's tasks: its rank, the op's index in
    /// `Program::ge_ops` and the task's `stream_id`.
    pub fn ge_agent(&self, agent: usize) -> Option<(u32, usize, u32)> {
        self.shared
            .tables
            .ge_agents
            .iter()
            .find(|(_, a)| **a == agent)
            .map(|(key, _)| *key)
    }

    fn start_worker(&self, agent: usize) {
        let mut state = self.shared.lock();
        if state.status[agent] != Status::NotStarted {
            return;
        }
        state.status[agent] = Status::Idle;
        drop(state);
        let shared = Arc::clone(&self.shared);
        let handle = std::thread::Builder::new()
            .name(format!("sim-agent-{agent}"))
            .spawn(move || worker::run(&shared, agent));
        match handle {
            Ok(handle) => lock(&self.workers).push(handle),
            Err(_) => {
                let mut state = self.shared.lock();
                self.shared.abort(&mut state);
            }
        }
    }

    fn push(&self, agent: usize, task: Task) -> Result<(), Fault> {
        let mut state = self.shared.lock();
        if state.aborted {
            return Err(Fault::Aborted);
        }
        let queue = &mut state.queues[agent];
        queue.tasks.push_back(task);
        queue.enqueued += 1;
        if state.status[agent] == Status::Idle {
            state.status[agent] = Status::Woken;
            self.shared.wakers[agent].notify_one();
        }
        Ok(())
    }

    fn host(&self, agent: AgentId) -> MutexGuard<'_, HostClock> {
        lock(&self.shared.hosts[agent.index()])
    }

    /// A random pause on the calling host thread.
    fn perturb_host(&self, agent: AgentId) {
        let pause = {
            let mut host = self.host(agent);
            let slow = host.slow;
            pause(&mut host.rng, self.shared.options.jitter, slow)
        };
        pause.apply();
    }

    /// Blocks the host thread until `queue` has executed everything issued to it so far;
    /// returns the queue's clock at that point.
    /// A host synchronize of `queues`: what it waits for is fixed at once (everything
    /// enqueued on them so far), then `issued` is told, then the host blocks.
    fn synchronize_queues(
        &self,
        host: Host,
        queues: Vec<usize>,
        timeout: Option<Timeout>,
        issued: &dyn Fn(),
    ) -> Result<(), Fault> {
        let targets: Vec<(usize, u64)> = queues
            .into_iter()
            .map(|queue| (queue, self.drain_target(queue)))
            .collect();
        issued();
        for (queue, target) in targets {
            let clock = self.drained(host, queue, target, timeout)?;
            self.join_host(host.agent, &clock);
        }
        Ok(())
    }

    /// What a synchronize of `queue` made now waits for: everything enqueued so far.
    fn drain_target(&self, queue: usize) -> u64 {
        let mut state = self.shared.lock();
        let q = &mut state.queues[queue];
        let target = q.enqueued;
        if q.completed < target {
            q.snapshots.entry(target).or_insert(None);
        }
        target
    }

    /// Blocks until `queue` has completed `target` tasks; the clock it had then.
    fn drained(&self, host: Host, queue: usize, target: u64, timeout: Option<Timeout>) -> Result<Arc<VClock>, Fault> {
        self.shared.block(
            host.agent.index(),
            Some(host.node),
            WaitOn::Queue(queue),
            timeout,
            |state| {
                let q = &mut state.queues[queue];
                if q.completed < target {
                    return None;
                }
                Some(match q.snapshots.get(&target) {
                    Some(Some(clock)) => clock.clone(),
                    _ => q.clock.clone(),
                })
            },
        )
    }

    fn join_host(&self, agent: AgentId, clock: &VClock) {
        let mut host = self.host(agent);
        host.clock.join(clock);
        host.changed();
    }

    fn host_access(&self, host: Host, access: &syncguard_analyzer::exec::Access) -> Result<(), Fault> {
        let (epoch, clock) = {
            let mut h = self.host(host.agent);
            let time = h.clock.tick(host.agent.index());
            h.changed();
            let epoch = Epoch {
                agent: host.agent.index(),
                time,
                node: Some(host.node),
            };
            (epoch, h.clock.clone())
        };
        self.shared.access(access, epoch, &clock, 0)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Blocks `agent` until `ready` yields a value, the run is stopped, or `timeout`
    /// expires. Becoming blocked is when a hang is detected: if no other agent can run,
    /// nothing will ever wake this one.
    fn block<T>(
        &self,
        agent: usize,
        node: Option<NodeId>,
        on: WaitOn,
        timeout: Option<Timeout>,
        mut ready: impl FnMut(&mut State) -> Option<T>,
    ) -> Result<T, Fault> {
        let deadline = timeout.and_then(|t| t.duration()).map(|d| Instant::now() + d);
        let mut state = self.lock();
        loop {
            if state.aborted {
                return Err(Fault::Aborted);
            }
            if let Some(value) = ready(&mut state) {
                state.status[agent] = Status::Running;
                return Ok(value);
            }
            if !matches!(state.status[agent], Status::Blocked { .. }) {
                state.set_blocked(agent, node, on.clone());
                if state.stuck() {
                    state.declare_hang();
                    self.abort(&mut state);
                    return Err(Fault::Aborted);
                }
            }
            let waker = &self.wakers[agent];
            state = match deadline {
                None => waker.wait(state).unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        let blocked = Blocked { agent, node, on };
                        let timeout = timeout.expect("a deadline comes from a timeout");
                        state.observed.push(Observed::Timeout { blocked, timeout });
                        self.abort(&mut state);
                        return Err(Fault::Timeout {
                            what: format!("a wait with a {timeout} timeout"),
                        });
                    }
                    waker
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    /// Sets a binary notify; a notify still set loses its earlier signal.
    fn set_flag(&self, key: FlagKey, signal: Signal) {
        let mut state = self.lock();
        if let Some(previous) = state.flags.insert(key, signal.clone()) {
            state.observed.push(Observed::LostSignal {
                key,
                first: previous.node,
                second: signal.node,
            });
        }
        self.changed(&mut state);
    }

    /// Something that waits may look for changed: wake the blocked agents.
    fn changed(&self, state: &mut State) {
        for agent in state.wake_blocked() {
            self.wakers[agent].notify_one();
        }
    }

    /// Stops the run: every agent and `finish` return.
    fn abort(&self, state: &mut State) {
        state.aborted = true;
        for waker in &self.wakers {
            waker.notify_all();
        }
        self.progress.notify_all();
    }

    /// Stops the run for `fault`, which `finish` reports; returns what the caller
    /// returns (`Aborted`, like every other agent stopped by it).
    fn fail(&self, fault: Fault) -> Fault {
        let mut state = self.lock();
        state.fault.get_or_insert(fault);
        self.abort(&mut state);
        Fault::Aborted
    }

    /// Checks and records one access in shadow memory, then touches the real bytes.
    fn access(
        &self,
        access: &syncguard_analyzer::exec::Access,
        epoch: Epoch,
        clock: &VClock,
        fill: u8,
    ) -> Result<(), Fault> {
        let races = lock(&self.shadow).access(access, epoch, clock);
        if !races.is_empty() {
            let mut state = self.lock();
            state.observed.extend(races.into_iter().map(Observed::Race));
        }
        // Writes change the bytes (so that copies visibly move data); a read changes
        // nothing, and shadow memory has already checked it.
        if access.write {
            let filled = self.memory.fill(access.memory, access.start, access.end, fill);
            filled.map_err(|fault| self.fail(fault))?;
        }
        Ok(())
    }

    /// Copies the bytes of `src` into `dst` (shadow memory is updated by the caller).
    fn copy_bytes(
        &self,
        dst: &syncguard_analyzer::exec::Access,
        src: &syncguard_analyzer::exec::Access,
    ) -> Result<(), Fault> {
        let len = (dst.end - dst.start).min(src.end - src.start);
        let copied = self.memory.copy(dst.memory, dst.start, src.memory, src.start, len);
        copied.map_err(|fault| self.fail(fault))
    }
}

impl Backend for Sim {
    fn create(&self, host: Host, inst: InstId, object: &ObjectSpec) -> Result<(), Fault> {
        self.perturb_host(host.agent);
        match object {
            ObjectSpec::Stream | ObjectSpec::DefaultStream | ObjectSpec::HcclThread { stream: None, .. } => {
                if let Some(agent) = self.shared.tables.inst_agent.get(inst.index()).copied().flatten() {
                    self.start_worker(agent);
                }
            }
            ObjectSpec::Event { .. } => {
                self.shared.lock().events.insert(inst, Default::default());
            }
            _ => {}
        }
        Ok(())
    }

    fn destroy(&self, host: Host, _inst: InstId) -> Result<(), Fault> {
        // A destroyed queue finishes what was issued to it; its thread ends with the run.
        self.perturb_host(host.agent);
        Ok(())
    }

    fn enqueue(&self, host: Host, queue: InstId, work: &Work, node: NodeId) -> Result<(), Fault> {
        self.perturb_host(host.agent);
        let agent = self.shared.tables.queue_agent(queue)?;
        // Every record is numbered (a host synchronize waits for the latest one, of
        // either kind); a capture-kind wait binds to the latest record issued.
        let capture =
            |event: &InstId| self.shared.tables.event_semantics[event.index()] == Some(EventSemantics::Capture);
        let generation = match work {
            Work::RecordEvent(event) => {
                let mut state = self.shared.lock();
                let entry = state.events.entry(*event).or_default();
                entry.issued += 1;
                entry.issued
            }
            Work::WaitEvent { event, .. } if capture(event) => {
                self.shared.lock().events.entry(*event).or_default().issued
            }
            _ => 0,
        };
        let issued = self.host(host.agent).snapshot();
        self.push(
            agent,
            Task {
                node: Some(node),
                queue,
                work: TaskWork::Api(work.clone()),
                issued,
                generation,
            },
        )
    }

    fn host_call(&self, host: Host, call: &HostCall) -> Result<(), Fault> {
        self.host_call_issued(host, call, &|| {})
    }

    fn host_call_issued(&self, host: Host, call: &HostCall, issued: &dyn Fn()) -> Result<(), Fault> {
        self.perturb_host(host.agent);
        let tables = &self.shared.tables;
        match call {
            HostCall::SynchronizeStream { queue, timeout } => {
                return self.synchronize_queues(host, vec![tables.queue_agent(*queue)?], *timeout, issued);
            }
            HostCall::SynchronizeThread { thread } => {
                return self.synchronize_queues(host, vec![tables.queue_agent(*thread)?], None, issued);
            }
            HostCall::SynchronizeDevice => {
                let queues = (0..tables.agents)
                    .filter(|&a| tables.agent_rank[a] == host.rank && tables.is_device[a])
                    .collect();
                return self.synchronize_queues(host, queues, None, issued);
            }
            HostCall::SynchronizeEvent { event, timeout } => {
                let signal = self.wait_event_on_host(host, *event, *timeout, issued)?;
                if let Some(signal) = signal {
                    self.join_host(host.agent, &signal.clock);
                }
                return Ok(());
            }
            HostCall::QueryEvent { .. } | HostCall::EventElapsedTime { .. } => {}
            HostCall::Copy { dst, src } => {
                self.host_access(host, src)?;
                self.host_access(host, dst)?;
                self.shared.copy_bytes(dst, src)?;
            }
            HostCall::Access(access) => self.host_access(host, access)?,
            HostCall::SetWaitTimeout { timeout, .. } => {
                let mut state = self.shared.lock();
                if timeout.duration().is_some() {
                    state.wait_timeout.insert(host.rank, *timeout);
                } else {
                    state.wait_timeout.remove(&host.rank);
                }
            }
        }
        issued();
        Ok(())
    }

    fn group_tasks(&self, tasks: GroupTasks<'_>) -> Result<(), Fault> {
        let issued = Arc::new(VClock::new(self.shared.tables.agents));
        for task in &tasks.op.tasks {
            let key = (tasks.rank, tasks.index, task.stream_id);
            let Some(&agent) = self.shared.tables.ge_agents.get(&key) else {
                continue;
            };
            self.start_worker(agent);
            let work = match &task.kind {
                GeTaskKind::HcomRecord { group, .. } => TaskWork::GroupRecord(group.clone()),
                GeTaskKind::HcomWait { group, .. } => TaskWork::GroupWait(group.clone()),
                _ => TaskWork::GroupKernel,
            };
            self.push(
                agent,
                Task {
                    node: None,
                    queue: InstId(u32::MAX),
                    work,
                    issued: issued.clone(),
                    generation: 0,
                },
            )?;
        }
        Ok(())
    }

    fn host_started(&self, agent: AgentId, parent: Option<AgentId>) {
        if let Some(parent) = parent {
            let clock = self.host(parent).clock.clone();
            self.join_host(agent, &clock);
        }
        let mut state = self.shared.lock();
        state.status[agent.index()] = Status::Running;
    }

    fn host_finished(&self, agent: AgentId) {
        let mut state = self.shared.lock();
        state.status[agent.index()] = Status::Finished;
        if state.stuck() && !state.aborted {
            state.declare_hang();
            self.shared.abort(&mut state);
        }
    }

    fn finish(&self) -> Result<(), Fault> {
        {
            let mut state = self.shared.lock();
            while !state.aborted && !state.queues.iter().all(|q| q.completed == q.enqueued) {
                state = self.shared.progress.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            // Every host has finished and nothing is queued: the idle workers can exit.
            self.shared.abort(&mut state);
        }
        for worker in lock(&self.workers).drain(..) {
            let _ = worker.join();
        }
        match self.shared.lock().fault.take() {
            Some(fault) => Err(fault),
            None => Ok(()),
        }
    }
}

impl Sim {
    /// `aclrtSynchronizeEvent`: the latest record issued, of either kind (the runtime
    /// keeps the latest record and waits for its task; a reset does not clear it);
    /// `None` when the event was never recorded, which returns at once.
    fn wait_event_on_host(
        &self,
        host: Host,
        event: InstId,
        timeout: Option<Timeout>,
        issued: &dyn Fn(),
    ) -> Result<Option<Signal>, Fault> {
        let generation = self.shared.lock().events.entry(event).or_default().issued;
        issued();
        if generation == 0 {
            return Ok(None);
        }
        self.shared
            .block(
                host.agent.index(),
                Some(host.node),
                WaitOn::Event {
                    event,
                    generation: Some(generation),
                },
                timeout,
                |state| {
                    state
                        .events
                        .entry(event)
                        .or_default()
                        .completed
                        .get(&generation)
                        .cloned()
                },
            )
            .map(Some)
    }
}

fn agent_rng(seed: u64, agent: usize) -> StdRng {
    StdRng::seed_from_u64(seed ^ (agent as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// A random pause: most ops run at once, some yield, a few sleep up to `jitter`.
enum Pause {
    None,
    Yield,
    Sleep(Duration),
}

impl Pause {
    fn apply(self) {
        match self {
            Pause::None => {}
            Pause::Yield => std::thread::yield_now(),
            Pause::Sleep(d) => std::thread::sleep(d),
        }
    }
}

/// Whether `agent` is one of the run's slow agents, which pause before every op. Races
/// between agents mostly resolve one way when all run at the same pace; a slow one lets
/// the others overtake it. Seed `s` always slows agent `s mod agents` (so that a few
/// consecutive seeds slow each agent in turn), and about one in four of the others.
fn is_slow(seed: u64, agent: usize, agents: usize) -> bool {
    seed % agents.max(1) as u64 == agent as u64
        || agent_rng(seed.rotate_left(31) ^ 0x5157, agent).random_range(0..4u32) == 0
}

fn pause(rng: &mut StdRng, jitter: Duration, slow: bool) -> Pause {
    if slow && !jitter.is_zero() {
        let nanos = jitter.as_nanos() as u64;
        return Pause::Sleep(Duration::from_nanos(rng.random_range(2 * nanos..=10 * nanos)));
    }
    match rng.random_range(0..8u32) {
        0..=3 => Pause::None,
        4..=6 => Pause::Yield,
        _ if jitter.is_zero() => Pause::Yield,
        _ => Pause::Sleep(Duration::from_nanos(rng.random_range(0..=jitter.as_nanos() as u64))),
    }
}
