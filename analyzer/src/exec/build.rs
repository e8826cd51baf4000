//! Building an Execution: walking each rank's host threads in issue order.

use rustc_hash::FxHashMap as HashMap;

use super::core_walk::{CoreEnd, CoreStop, MAX_CORE_STEPS, StopReason, walk_core};
use super::cuda_copy::{self, CopyTiming, Side};
use super::eval::{CoreEnv, Env, EvalError, iterations};
use super::*;
use crate::model::{
    Block, BufferInfo, CopyDirection, Expr, MemRange, MemorySpace, ObjectKind, OpKind, Program, Stmt, SuperKernelId,
};
use crate::source::Span;

/// Instantiate `program` with the given parameter values (by `ParamId`).
pub fn instantiate(program: &Program, params: Vec<i64>) -> Execution<'_> {
    instantiate_with_outcomes(program, params, &[])
}

/// [`instantiate`], with the result of each query a branch looks at, in walk order:
/// `true` where the query sees the work done; every later one is "not done".
pub fn instantiate_with_outcomes<'p>(program: &'p Program, params: Vec<i64>, outcomes: &[bool]) -> Execution<'p> {
    let ranks = rank_count(program, &params);
    let legacy_default_stream = program.calls_cuda();
    // Ranks are walked apart (`split`) only in a run that takes every query "not done":
    // queries take their outcomes in walk order across ranks. As many threads as the
    // analysis's pool (`RAYON_NUM_THREADS` limits both).
    let threads = rayon::current_num_threads();
    if outcomes.is_empty()
        && ranks > 1
        && threads > 1
        && program.op_count() >= super::split::MIN_OPS_TO_SPLIT
        && let Some(exec) = super::split::walk_in_parts(program, &params, ranks, threads, legacy_default_stream)
    {
        return exec;
    }
    walk_in_one_part(program, params, ranks, outcomes, legacy_default_stream)
}

/// [`instantiate`] with the ranks walked on `threads` threads, whatever the program's
/// size (for tests); `None` where the walk in parts leaves the run to the walk in one
/// part: one rank, or a budget reached.
pub fn instantiate_in_parts(program: &Program, params: Vec<i64>, threads: usize) -> Option<Execution<'_>> {
    let ranks = rank_count(program, &params);
    super::split::walk_in_parts(program, &params, ranks, threads, program.calls_cuda())
}

/// [`instantiate`] walking every rank on one thread, one after another: the run the
/// walk in parts must equal (for tests).
pub fn instantiate_in_one_part(program: &Program, params: Vec<i64>) -> Execution<'_> {
    let ranks = rank_count(program, &params);
    walk_in_one_part(program, params, ranks, &[], program.calls_cuda())
}

fn walk_in_one_part<'p>(
    program: &'p Program,
    params: Vec<i64>,
    ranks: u32,
    outcomes: &[bool],
    legacy_default_stream: bool,
) -> Execution<'p> {
    let mut builder = Builder::new(program, params, ranks, outcomes, legacy_default_stream);
    builder.walk_ranks(0..ranks);
    builder.finish()
}

/// The run's rank count: fixed, or a parameter's value.
fn rank_count(program: &Program, params: &[i64]) -> u32 {
    match program.settings.ranks {
        crate::model::RankCount::Fixed(n) => n,
        crate::model::RankCount::Param(id) => params.get(id.index()).copied().unwrap_or(1).clamp(1, 1 << 16) as u32,
    }
}

/// IPC exports and opens of the whole run, resolved once every rank is walked: a
/// process may open a handle that a process walked after it exports.
#[derive(Default)]
pub(super) struct IpcShares {
    /// The instance each handle or key names, as last exported, with the offset of
    /// exported memory in its buffer.
    pub(super) exported: HashMap<String, (InstId, u64)>,
    pub(super) opened: Vec<(InstId, String)>,
}

/// Per-rank bookkeeping while walking.
#[derive(Default)]
struct RankState<'p> {
    /// The live instance of each object, as the walk creates and destroys them; the
    /// first handle of an array.
    current: HashMap<ObjId, InstId>,
    /// Arrays last created with no handle at all.
    empty_arrays: rustc_hash::FxHashSet<ObjId>,
    /// The handles the current call's `array[i]` named so far, for its nodes.
    named_elements: Vec<(ObjId, InstId)>,
    /// Each event's last wait on each queue so far.
    last_waits: HashMap<InstId, Vec<(AgentId, NodeId)>>,
    /// The rank's first agent: its agents are made while it is walked, after every
    /// agent of the ranks before it.
    first_agent: u32,
    /// The host thread being walked and its last host-side node.
    host: Option<AgentId>,
    last_host_node: Option<NodeId>,
    issue: u32,
    /// Threads spawned but not yet walked.
    pending: Vec<PendingThread>,
    /// The batch the host thread being walked has open (`HcommBatchModeStart`).
    batch: Option<OpenBatch<'p>>,
    /// The current context of the host thread being walked (`None`: the device's own).
    current_context: Option<InstId>,
    /// The device's own default stream, and its context once a handle names it.
    device_stream: Option<InstId>,
    device_context: Option<InstId>,
    /// Host memory page-locked by `cudaHostRegister`: `(memory, start, end)`.
    page_locked: Vec<(Memory, u64, u64)>,
    /// Streams being captured (`cudaStreamBeginCapture`), with the work captured so far.
    capturing: HashMap<AgentId, Capture<'p>>,
    /// Each graph and executable graph instance's captured work.
    graphs: HashMap<InstId, CapturedWork<'p>>,
    /// The device the rank's first `cudaSetDevice` / `aclrtSetDevice` named: its own.
    home_device: Option<u32>,
    /// The current device of the thread being walked: `None` for the rank's own.
    current_device: Option<u32>,
    /// Each other device's default stream, made at first use.
    device_streams: HashMap<u32, InstId>,
}

/// Work a stream capture took, in issue order: what each launch of its graph runs.
type CapturedWork<'p> = Vec<(&'p Op, Action)>;

/// A stream capture under way.
struct Capture<'p> {
    begin: &'p Op,
    relaxed: bool,
    work: CapturedWork<'p>,
    /// Calls left out of the graph (`Execution::uncaptured`), for a capture never ended.
    left_out: Vec<&'p Op>,
}

/// Calls cached by batch mode, submitted when the batch ends.
struct OpenBatch<'p> {
    start: NodeId,
    tag: &'p str,
    /// The cached HCCL-thread calls, in issue order.
    cached: Vec<NodeId>,
    /// `HcommBatchModeEnd` calls naming another tag, which leave this batch open.
    other_tags: Vec<NodeId>,
}

/// What an undefined condition or loop bound leaves out.
const STOPS_HERE: &str = "the thread's code from here on is left out of the analysis";

/// A thread spawned but not yet walked: what it sees is fixed at the spawn.
struct PendingThread {
    thread: ThreadId,
    agent: AgentId,
    spawned_at: NodeId,
    /// The objects visible at the spawn.
    visible: HashMap<ObjId, InstId>,
    /// The loop variables' values at the spawn: a thread started in iteration `i` of a
    /// loop sees that `i`.
    vars: Vec<Option<i64>>,
}

/// Whether the walk of a thread goes on after a statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Return,
}

pub(super) struct Builder<'p, 'o> {
    pub(super) exec: Execution<'p>,
    env: Env,
    rank: RankState<'p>,
    /// Statements and loop iterations walked so far, against `MAX_STEPS`.
    pub(super) steps: u64,
    /// What the queries that branches look at see, in walk order.
    outcomes: &'o [bool],
    pub(super) ipc: IpcShares,
}

impl<'p, 'o> Builder<'p, 'o> {
    pub(super) fn new(
        program: &'p Program,
        params: Vec<i64>,
        ranks: u32,
        outcomes: &'o [bool],
        legacy_default_stream: bool,
    ) -> Self {
        Builder {
            exec: Execution {
                program,
                ranks,
                params: params.clone(),
                agents: Vec::new(),
                nodes: Vec::new(),
                instances: Vec::new(),
                bad_uses: Vec::new(),
                bad_indices: Vec::new(),
                elements: HashMap::default(),
                query_outcomes: Vec::new(),
                query_syncs: Vec::new(),
                eval_errors: Vec::new(),
                invalid_ranges: Vec::new(),
                rejected_notifies: Vec::new(),
                unsubmitted_batches: Vec::new(),
                context_streams: Vec::new(),
                cutoff: None,
                legacy_default_stream,
                synchronous_work: Vec::new(),
                uncaptured: Vec::new(),
                graph_launches: Vec::new(),
                other_devices: Vec::new(),
                capture_misuses: Vec::new(),
                ipc_opened: HashMap::default(),
                ipc_unexported: Vec::new(),
                ipc_unopened: Vec::new(),
            },
            env: Env {
                params,
                rank: 0,
                vars: Vec::new(),
                core: None,
            },
            rank: RankState::default(),
            steps: 0,
            outcomes,
            ipc: IpcShares::default(),
        }
    }
}

impl<'p> Builder<'p, '_> {
    /// Walk `ranks` in order, until the run is cut off.
    pub(super) fn walk_ranks(&mut self, ranks: std::ops::Range<u32>) {
        for rank in ranks {
            if self.exec.truncated() {
                break;
            }
            self.run_rank(rank);
            self.check_rank_estimate(rank + 1, self.exec.ranks);
        }
    }

    /// The run, once its ranks are walked: IPC opens are resolved across all of them.
    pub(super) fn finish(mut self) -> Execution<'p> {
        self.resolve_ipc_opens();
        self.exec
    }

    fn program(&self) -> &'p Program {
        self.exec.program
    }

    fn run_rank(&mut self, rank: u32) {
        self.env.rank = rank as i64;
        // Each rank is its own process: nothing another rank assigned is visible.
        self.env.vars = vec![None; self.program().vars.len()];
        self.rank = RankState {
            first_agent: self.exec.agents.len() as u32,
            ..RankState::default()
        };
        let default_stream = self.new_instance(Program::DEFAULT_STREAM, rank);
        self.attach_agent(default_stream, AgentKind::Stream(default_stream));
        self.rank.current.insert(Program::DEFAULT_STREAM, default_stream);
        self.rank.device_stream = Some(default_stream);
        let main = self.new_agent(rank, AgentKind::Host(Program::MAIN_THREAD));
        self.walk_thread(main, None, &self.program().threads[Program::MAIN_THREAD.index()].body);
        // A thread sees what existed when it was spawned and, for anything created only
        // later (a trace's worker using a stream the main thread made after starting it),
        // the instance the threads walked so far ended with.
        let mut latest = self.rank.current.clone();
        while let Some(pending) = self.rank.pending.pop() {
            let mut visible = pending.visible;
            for (obj, inst) in &latest {
                visible.entry(*obj).or_insert(*inst);
            }
            self.rank.current = visible;
            self.env.vars = pending.vars;
            let body = &self.program().threads[pending.thread.index()].body;
            self.walk_thread(pending.agent, Some(pending.spawned_at), body);
            latest.extend(self.rank.current.iter().map(|(obj, inst)| (*obj, *inst)));
        }
        self.name_own_device(rank);
        self.unended_captures(rank);
    }

    /// Captures still open when the rank's code ends: what they took never runs.
    fn unended_captures(&mut self, rank: u32) {
        let mut open: Vec<(AgentId, Capture<'p>)> = self.rank.capturing.drain().collect();
        open.sort_by_key(|(stream, _)| *stream);
        for (stream, capture) in open {
            let mut captured: Vec<&'p Op> = capture.work.iter().map(|&(op, _)| op).chain(capture.left_out).collect();
            captured.sort_by_key(|op| (op.span.file.0, op.span.range.start));
            captured.dedup_by(|a, b| std::ptr::eq(*a, *b));
            self.exec.capture_misuses.push(CaptureMisuse {
                begin: capture.begin,
                rank,
                stream,
                problem: CaptureProblem::NeverEnded { captured },
            });
        }
    }

    /// A synchronize during a capture that `forbids` it: the call fails and the capture
    /// is invalidated (CUDA's "stream capture" rules).
    fn forbidden_in_capture(&mut self, op: &'p Op, forbids: impl Fn(AgentId, &Capture) -> bool) {
        let rank = self.env.rank as u32;
        let mut broken: Vec<(AgentId, &'p Op)> = self
            .rank
            .capturing
            .iter()
            .filter(|&(&stream, capture)| forbids(stream, capture))
            .map(|(&stream, capture)| (stream, capture.begin))
            .collect();
        broken.sort_by_key(|&(stream, _)| stream);
        for (stream, begin) in broken {
            self.exec.capture_misuses.push(CaptureMisuse {
                begin,
                rank,
                stream,
                problem: CaptureProblem::Forbidden(op),
            });
        }
    }

    /// Once a rank used another device, its own device's queues are named by number too,
    /// so that messages tell the devices apart.
    fn name_own_device(&mut self, rank: u32) {
        let Some(home) = self.rank.home_device else { return };
        let on_rank = |a: &Agent| a.rank == rank && a.kind.is_device();
        if !self.exec.agents.iter().any(|a| on_rank(a) && a.device.is_some()) {
            return;
        }
        for agent in self.exec.agents.iter_mut().filter(|a| on_rank(a)) {
            agent.device.get_or_insert(home);
        }
    }

    /// After `done` of `ranks` ranks: refuse the run early when the ranks still to walk
    /// would certainly exceed the budget of agents (each has at least a default stream
    /// and a main thread).
    fn check_rank_estimate(&mut self, done: u32, ranks: u32) {
        let remaining = u64::from(ranks - done);
        let agents = self.exec.agents.len() as u64 + 2 * remaining;
        if agents > MAX_AGENTS as u64 {
            self.cut_off(Cutoff::Ranks { ranks, agents });
        }
    }

    fn cut_off(&mut self, cutoff: Cutoff) {
        if self.exec.cutoff.is_none() {
            self.exec.cutoff = Some(cutoff);
        }
    }

    /// Count `n` steps of the walk; false (and the run cut off) past `MAX_STEPS`.
    fn step(&mut self, n: u64) -> bool {
        self.steps = self.steps.saturating_add(n);
        if self.steps > MAX_STEPS {
            self.cut_off(Cutoff::Steps);
        }
        !self.exec.truncated()
    }

    /// Record that `what` at `span` has no value on this rank.
    fn eval_failed(&mut self, span: &Span, what: String, error: EvalError, left_out: &'static str) {
        self.exec.eval_errors.push(EvalFailure {
            span: span.clone(),
            what,
            left_out,
            rank: self.env.rank as u32,
            error,
        });
    }

    fn walk_thread(&mut self, agent: AgentId, spawned_at: Option<NodeId>, body: &'p Block) {
        self.rank.host = Some(agent);
        self.rank.last_host_node = spawned_at;
        // A new thread starts in the device's own context, on device 0.
        self.rank.current_context = None;
        self.rank.current_device = self.rank.home_device.is_some_and(|home| home != 0).then_some(0);
        // Each host thread has a per-thread default stream of its own, made at first use.
        self.rank.current.remove(&Program::PER_THREAD_STREAM);
        self.walk_block(body);
        self.drop_open_batch();
    }

    /// A batch still open when its host thread ends is never submitted: its calls
    /// never run.
    fn drop_open_batch(&mut self) {
        let Some(batch) = self.rank.batch.take() else {
            return;
        };
        let calls = batch
            .cached
            .iter()
            .map(|&node| {
                (
                    node,
                    std::mem::replace(&mut self.exec.nodes[node.index()].action, Action::Other),
                )
            })
            .collect();
        self.exec.unsubmitted_batches.push(UnsubmittedBatch {
            start: batch.start,
            calls,
            other_tags: batch.other_tags,
        });
    }

    /// `HcommBatchModeStart` / `HcommBatchModeEnd`.
    fn batch_mode(&mut self, op: &'p Op, start: bool, tag: &'p str) {
        let node = self.host_node(op, Action::Other);
        match (start, &mut self.rank.batch) {
            (true, None) => {
                self.rank.batch = Some(OpenBatch {
                    start: node,
                    tag,
                    cached: Vec::new(),
                    other_tags: Vec::new(),
                })
            }
            // A second start of an open batch changes nothing.
            (true, Some(_)) | (false, None) => {}
            (false, Some(batch)) if batch.tag != tag => batch.other_tags.push(node),
            (false, Some(_)) => {
                let batch = self.rank.batch.take().expect("matched an open batch");
                for cached in batch.cached {
                    self.exec.nodes[cached.index()].set_issued_after(Some(node));
                }
            }
        }
    }

    /// `aclrtGetCurrentContext`: a handle of the thread's current context, or of the
    /// device's own context (whose default stream is the rank's) if none was set.
    fn current_context_handle(&mut self, op: &'p Op, obj: ObjId) {
        let context = match self.rank.current_context {
            Some(context) => context,
            None => {
                let rank = self.env.rank as u32;
                let context = self.new_instance(obj, rank);
                let stream = self.rank.device_stream.expect("set when the rank starts");
                self.exec.context_streams.push((context, stream));
                let node = self.host_node(op, Action::Create(context));
                self.exec.instances[context.index()].created = Some(node);
                self.rank.device_context = Some(context);
                context
            }
        };
        if self.rank.current_context.is_some() {
            self.host_node(op, Action::Other);
        }
        self.rank.current.insert(obj, context);
    }

    /// `cudaSetDevice` / `aclrtSetDevice`: the first one a rank makes names its own
    /// device; a thread on another device has that device's default stream as `NULL`.
    fn set_device(&mut self, op: &'p Op, device: &Expr) -> Option<()> {
        let device = self.eval(op, device)?;
        let Ok(device) = u32::try_from(device) else {
            let what = format!("the device of {} ({device})", op.api);
            self.eval_failed(
                &op.span,
                what,
                EvalError::BadDevice,
                "the call is left out of the analysis",
            );
            return None;
        };
        let home = *self.rank.home_device.get_or_insert(device);
        self.rank.current_device = (device != home).then_some(device);
        // A device's own context becomes current (ACL); CUDA has one context a device.
        self.rank.current_context = None;
        if device != home {
            self.exec.other_devices.push(op);
        }
        Some(())
    }

    /// Another device's default stream: one per device and rank.
    fn device_stream(&mut self, device: u32) -> InstId {
        if let Some(&stream) = self.rank.device_streams.get(&device) {
            return stream;
        }
        let stream = self.new_instance(Program::DEFAULT_STREAM, self.env.rank as u32);
        self.attach_agent(stream, AgentKind::Stream(stream));
        self.rank.device_streams.insert(device, stream);
        stream
    }

    /// `aclrtSetCurrentContext`.
    fn set_current_context(&mut self, op: &'p Op, obj: ObjId) -> Option<()> {
        let context = self.live(op, obj)?;
        self.host_node(op, Action::Other);
        self.rank.current_context = Some(context);
        Some(())
    }

    /// The default stream `NULL` names on the thread being walked: its current context's.
    fn context_stream(&mut self, op: &'p Op) -> Option<Option<InstId>> {
        let context = self.rank.current_context?;
        if let Some(destroyed_by) = self.exec.instance(context).destroyed {
            self.exec.bad_uses.push(BadUse {
                op,
                rank: self.env.rank as u32,
                obj: self.exec.instance(context).obj,
                destroyed_by: Some(destroyed_by),
            });
            return Some(None);
        }
        let stream = self
            .exec
            .context_streams
            .iter()
            .find(|(c, _)| *c == context)
            .map(|(_, s)| *s);
        Some(stream)
    }

    /// The last node of `agent` submitted so far: what a synchronize waits for. Calls an
    /// open batch caches are not submitted yet.
    fn last_submitted(&self, agent: AgentId) -> Option<NodeId> {
        let nodes = &self.exec.agent(agent).nodes;
        let cached = |node: &NodeId| self.rank.batch.as_ref().is_some_and(|b| b.cached.contains(node));
        nodes.iter().rev().find(|node| !cached(node)).copied()
    }

    fn walk_block(&mut self, block: &'p Block) -> Flow {
        for stmt in block {
            if self.exec.truncated() || self.walk_stmt(stmt) == Flow::Return {
                return Flow::Return;
            }
        }
        Flow::Continue
    }

    fn walk_stmt(&mut self, stmt: &'p Stmt) -> Flow {
        if !self.step(1) {
            return Flow::Return;
        }
        match stmt {
            Stmt::Op(op) => {
                self.rank.named_elements.clear();
                let _ = self.host_op(op);
                Flow::Continue
            }
            Stmt::If {
                cond,
                then,
                otherwise,
                span,
            } => match self.env.truthy(cond) {
                Ok(true) => self.walk_block(then),
                Ok(false) => self.walk_block(otherwise),
                Err(error) => {
                    // The thread's behaviour is undefined from here: its walk stops, as
                    // the prover's path condition does.
                    self.eval_failed(span, "the condition of this `if`".into(), error, STOPS_HERE);
                    Flow::Return
                }
            },
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
                span,
            } => {
                let range = match self.env.loop_range(start, end, *inclusive) {
                    Ok(range) => range,
                    Err(error) => {
                        self.eval_failed(span, "the bounds of this loop".into(), error, STOPS_HERE);
                        return Flow::Return;
                    }
                };
                if !self.loop_fits(span, &range, body) {
                    return Flow::Return;
                }
                let flow = self.walk_loop(*var, range, body);
                self.env.vars[var.index()] = None;
                flow
            }
            Stmt::Return(_) => Flow::Return,
            Stmt::Assign { var, value, span } => {
                let name = &self.program().vars[var.index()].name;
                self.env.vars[var.index()] = match self.env.eval(value) {
                    Ok(value) => Some(value),
                    Err(error) => {
                        let what = format!("the value assigned to `{name}`");
                        self.eval_failed(span, what, error, "uses of the variable after it are left out");
                        None
                    }
                };
                Flow::Continue
            }
            Stmt::While { cond, body, span } => self.walk_while(cond, body, span),
            Stmt::QueryBranch {
                sync, done, pending, ..
            } => {
                let point = self.exec.query_outcomes.len();
                let seen_done = self.outcomes.get(point).copied().unwrap_or(false);
                self.exec.query_outcomes.push((sync, seen_done));
                if !seen_done {
                    return self.walk_block(pending);
                }
                let before = self.exec.nodes.len();
                self.rank.named_elements.clear();
                let _ = self.host_op(sync);
                self.exec
                    .query_syncs
                    .extend((before..self.exec.nodes.len()).map(|n| NodeId(n as u32)));
                self.walk_block(done)
            }
        }
    }

    /// A `while` loop: its condition before every iteration; the step budget cuts off
    /// one that never ends.
    fn walk_while(&mut self, cond: &'p Expr, body: &'p Block, span: &Span) -> Flow {
        let mut iterations: u128 = 0;
        loop {
            match self.env.truthy(cond) {
                Ok(true) => {}
                Ok(false) => return Flow::Continue,
                Err(error) => {
                    self.eval_failed(span, "the condition of this `while`".into(), error, STOPS_HERE);
                    return Flow::Return;
                }
            }
            iterations += 1;
            if !self.step(1) || self.walk_block(body) == Flow::Return {
                // The budget ran out inside this loop: it is the one to blame.
                if matches!(self.exec.cutoff, Some(Cutoff::Steps | Cutoff::Calls)) {
                    self.exec.cutoff = Some(Cutoff::While {
                        span: span.clone(),
                        iterations,
                    });
                }
                return Flow::Return;
            }
        }
    }

    fn walk_loop(&mut self, var: crate::model::VarId, range: std::ops::RangeInclusive<i64>, body: &'p Block) -> Flow {
        for i in range {
            self.env.vars[var.index()] = Some(i);
            if !self.step(1) || self.walk_block(body) == Flow::Return {
                return Flow::Return;
            }
        }
        Flow::Continue
    }

    /// Whether a loop can run within the budgets, estimated before it runs: its
    /// iterations against `MAX_STEPS`, and the calls its body issues at least on every
    /// iteration against `MAX_NODES`. Past either, the run is cut off with the estimate.
    fn loop_fits(&mut self, span: &Span, range: &std::ops::RangeInclusive<i64>, body: &Block) -> bool {
        let iterations = iterations(range);
        let calls_per_iteration = least_calls(body);
        let calls = iterations.saturating_mul(u128::from(calls_per_iteration));
        let steps = u128::from(self.steps).saturating_add(iterations);
        if steps > u128::from(MAX_STEPS) || calls.saturating_add(self.exec.nodes.len() as u128) > MAX_NODES as u128 {
            self.cut_off(Cutoff::Loop {
                span: span.clone(),
                iterations,
                calls_per_iteration,
            });
            return false;
        }
        true
    }

    fn spawn(&mut self, op: &'p Op, thread: ThreadId) {
        let rank = self.env.rank as u32;
        let agent = self.new_agent(rank, AgentKind::Host(thread));
        let spawned_at = self.host_node(op, Action::Spawn(agent));
        self.rank.pending.push(PendingThread {
            thread,
            agent,
            spawned_at,
            visible: self.rank.current.clone(),
            vars: self.env.vars.clone(),
        });
    }

    // ----- nodes, agents, instances -----

    fn new_agent(&mut self, rank: u32, kind: AgentKind) -> AgentId {
        self.exec.agents.push(Agent {
            rank,
            kind,
            device: if kind.is_device() {
                self.rank.current_device
            } else {
                None
            },
            nodes: Vec::new(),
        });
        AgentId(self.exec.agents.len() as u32 - 1)
    }

    fn attach_agent(&mut self, inst: InstId, kind: AgentKind) -> AgentId {
        let agent = self.new_agent(self.exec.instance(inst).rank, kind);
        self.exec.instances[inst.index()].agent = Some(agent);
        agent
    }

    fn resolve_ipc_opens(&mut self) {
        let mut memory: HashMap<InstId, (Memory, u64)> = HashMap::default();
        let opened_keys: std::collections::HashSet<&String> = self.ipc.opened.iter().map(|(_, key)| key).collect();
        let mut unopened: Vec<(InstId, Box<str>)> = self
            .ipc
            .exported
            .iter()
            .filter(|(key, _)| !opened_keys.contains(key))
            .map(|(key, &(inst, _))| (inst, key.as_str().into()))
            .collect();
        unopened.sort();
        self.exec.ipc_unopened = unopened;
        for (opened, key) in std::mem::take(&mut self.ipc.opened) {
            match self.ipc.exported.get(&key) {
                Some(&(shared, offset)) => {
                    self.exec.ipc_opened.insert(opened, shared);
                    if let Memory::Buffer(_) = self.memory_of(opened) {
                        memory.insert(opened, (self.memory_of(shared), offset));
                    }
                }
                None => self.exec.ipc_unexported.push(opened),
            }
        }
        if !memory.is_empty() {
            self.share_imported_memory(&memory);
        }
    }

    /// Accesses through imported memory touch the exporter's buffer, at the exported
    /// offset: a race between the processes is a race on one buffer.
    fn share_imported_memory(&mut self, memory: &HashMap<InstId, (Memory, u64)>) {
        let share = |access: &mut Access| {
            if let Some(&(shared, offset)) = memory.get(&access.buffer) {
                access.memory = shared;
                access.start = access.start.saturating_add(offset);
                access.end = access.end.saturating_add(offset);
            }
        };
        for node in &mut self.exec.nodes {
            match &mut node.action {
                Action::Access(accesses) => accesses.iter_mut().for_each(share),
                Action::ValueWrite { word, .. } | Action::ValueWait { word, .. } => share(word),
                _ => {}
            }
        }
    }

    fn new_instance(&mut self, obj: ObjId, rank: u32) -> InstId {
        self.exec.instances.push(Instance {
            rank,
            obj,
            created: None,
            destroyed: None,
            agent: None,
            remote_rank: None,
            notify_num: None,
            size: None,
            element: None,
            channel: None,
        });
        InstId(self.exec.instances.len() as u32 - 1)
    }

    fn push_node(&mut self, agent: AgentId, op: &'p Op, action: Action, issued_after: Option<NodeId>) -> NodeId {
        if self.exec.nodes.len() >= MAX_NODES {
            self.cut_off(Cutoff::Calls);
        }
        let id = NodeId(self.exec.nodes.len() as u32);
        let host = self.rank.host.unwrap_or(agent);
        let mut node = Node {
            agent,
            op,
            action,
            host,
            issue: self.rank.issue,
            issued_after: super::NO_NODE,
        };
        node.set_issued_after(issued_after);
        self.exec.nodes.push(node);
        self.rank.issue += 1;
        self.exec.agents[agent.index()].nodes.push(id);
        for &(element, inst) in &self.rank.named_elements {
            self.exec.elements.insert((id, element), inst);
        }
        if let Action::EventWait(event) = self.exec.node(id).action {
            let waits = self.rank.last_waits.entry(event).or_default();
            waits.retain(|&(queue, _)| queue != agent);
            waits.push((agent, id));
        }
        id
    }

    fn host_node(&mut self, op: &'p Op, action: Action) -> NodeId {
        let host = self.rank.host.expect("host ops are walked inside a thread");
        let previous = self.rank.last_host_node;
        let node = self.push_node(host, op, action, previous);
        self.rank.last_host_node = Some(node);
        node
    }

    fn device_node(&mut self, agent: AgentId, op: &'p Op, action: Action) -> NodeId {
        if let Some(capture) = self.rank.capturing.get_mut(&agent) {
            // Captured work runs at each launch of its graph, not now. An event record,
            // wait or reset issued to the capturing stream is a node of the graph, as
            // external events are (ACL's `EXTERNAL` flags, `torch.npu.ExternalEvent`,
            // CUDA's `cudaEventRecordExternal`): issued again at each launch.
            match action {
                Action::Access(_) | Action::EventRecord(_) | Action::EventWait(_) | Action::EventReset(_) => {
                    capture.work.push((op, action))
                }
                _ => {
                    capture.left_out.push(op);
                    self.exec.uncaptured.push(op);
                }
            }
            return self.host_node(op, Action::Other);
        }
        let issued_after = self.rank.last_host_node;
        let node = self.push_node(agent, op, action, issued_after);
        if let Some(batch) = &mut self.rank.batch
            && matches!(self.exec.agent(agent).kind, AgentKind::HcclThread(_))
        {
            batch.cached.push(node);
        }
        node
    }

    /// Whether the runtime rejects notify `index` of a channel or HCCL thread: outside
    /// the notifies it was acquired with.
    fn rejects_index(&self, inst: InstId, index: i64) -> bool {
        self.exec
            .instance(inst)
            .notify_num
            .is_some_and(|count| !(0..count).contains(&index))
    }

    /// A notify call's node: `action`, or, for an index the runtime rejects, a node that
    /// orders nothing (the call fails at issue), kept for SG302.
    fn notify_node(&mut self, agent: AgentId, op: &'p Op, inst: InstId, index: i64, action: Action) -> Option<()> {
        if self.rejects_index(inst, index) {
            let node = self.device_node(agent, op, Action::Other);
            self.exec.rejected_notifies.push((node, inst, index));
        } else {
            self.device_node(agent, op, action);
        }
        Some(())
    }

    /// The live instance of `obj`, or a recorded bad use. An instance another host
    /// thread destroyed is still live here: threads are walked one after another, not
    /// in run order, so whether the use comes after the destroy is for happens-before
    /// to decide (`HappensBefore::uses_around_destroys`).
    fn live(&mut self, op: &'p Op, obj: ObjId) -> Option<InstId> {
        if let ObjectKind::Element { array, index } = &self.program().object(obj).kind {
            return self.live_element(op, obj, *array, index);
        }
        let rank = self.env.rank as u32;
        if obj == Program::DEFAULT_STREAM
            && let Some(stream) = self.context_stream(op)
        {
            return stream;
        }
        if obj == Program::DEFAULT_STREAM
            && let Some(device) = self.rank.current_device
        {
            return Some(self.device_stream(device));
        }
        if obj == Program::PER_THREAD_STREAM && !self.rank.current.contains_key(&obj) {
            let stream = self.new_instance(obj, rank);
            self.attach_agent(stream, AgentKind::Stream(stream));
            self.rank.current.insert(obj, stream);
        }
        let current = self.rank.current.get(&obj).copied();
        let destroyed = current.and_then(|inst| {
            self.exec
                .instance(inst)
                .destroyed
                .or_else(|| self.communicator_destroyed(obj))
        });
        match current {
            Some(inst) => match destroyed {
                None => Some(inst),
                Some(destroyed_by) if Some(self.exec.node(destroyed_by).agent) != self.rank.host => Some(inst),
                Some(destroyed_by) => {
                    self.exec.bad_uses.push(BadUse {
                        op,
                        rank,
                        obj,
                        destroyed_by: Some(destroyed_by),
                    });
                    None
                }
            },
            None => {
                self.exec.bad_uses.push(BadUse {
                    op,
                    rank,
                    obj,
                    destroyed_by: None,
                });
                None
            }
        }
    }

    /// The handle `array[index]` names: the array's instances are made one after
    /// another by one creation, element `k` at `first + k`.
    fn live_element(&mut self, op: &'p Op, element: ObjId, array: ObjId, index: &Expr) -> Option<InstId> {
        let empty = self.rank.empty_arrays.contains(&array);
        let first = if empty { None } else { Some(self.live(op, array)?) };
        let k = self.eval(op, index)?;
        let Some(first) = first else {
            self.exec.bad_indices.push(BadIndex {
                op,
                rank: self.env.rank as u32,
                element,
                index: k,
                len: 0,
                missed: self.missed_signal(op),
            });
            return None;
        };
        let is_element = |inst: usize, k: i64| {
            self.exec
                .instances
                .get(inst)
                .is_some_and(|i| i.obj == array && i.element.is_some_and(|e| i64::from(e) == k))
        };
        let at = usize::try_from(k).ok().and_then(|k| first.index().checked_add(k));
        if let Some(at) = at
            && is_element(at, k)
        {
            self.rank.named_elements.push((element, InstId(at as u32)));
            return Some(InstId(at as u32));
        }
        let len = (first.index()..)
            .zip(0..)
            .take_while(|&(inst, k)| is_element(inst, k))
            .count();
        self.exec.bad_indices.push(BadIndex {
            op,
            rank: self.env.rank as u32,
            element,
            index: k,
            len: len as u32,
            missed: self.missed_signal(op),
        });
        None
    }

    /// The notify record `op` makes, if it is a record whose index has a value here.
    fn missed_signal(&self, op: &Op) -> Option<MissedSignal> {
        let base = |obj| self.program().base(obj);
        match &op.kind {
            OpKind::ThreadNotifyRecord { target, index, .. } => Some(MissedSignal::Thread {
                target: base(*target),
                index: self.env.eval(index).ok()?,
            }),
            kind => kind.channel_notify_record().and_then(|(channel, index)| {
                Some(MissedSignal::Channel {
                    channel: base(channel),
                    index: self.env.eval(index).ok()?,
                })
            }),
        }
    }

    /// The agent that executes ops issued to a stream or HCCL thread.
    /// A channel or HCCL thread ends with its communicator: the destroy of the
    /// communicator it was acquired from, if any.
    fn communicator_destroyed(&self, obj: ObjId) -> Option<NodeId> {
        let comm = match &self.program().object(obj).kind {
            ObjectKind::Channel(info) => info.comm,
            ObjectKind::HcclThread { comm, .. } => *comm,
            _ => return None,
        };
        let inst = *self.rank.current.get(&comm)?;
        self.exec.instance(inst).destroyed
    }

    fn queue(&mut self, op: &'p Op, obj: ObjId) -> Option<AgentId> {
        let inst = self.live(op, obj)?;
        self.exec.instance(inst).agent
    }

    fn eval(&mut self, op: &'p Op, expr: &Expr) -> Option<i64> {
        match self.env.eval(expr) {
            Ok(value) => Some(value),
            Err(error) => {
                self.eval_failed(
                    &op.span,
                    format!("an argument of {}", op.api),
                    error,
                    "this call is left out of the analysis",
                );
                None
            }
        }
    }

    // ----- ops -----

    /// Turn one host-issued call into its node(s). `None` when an operand has no live
    /// instance or value (already recorded in `bad_uses` / `eval_errors`).
    fn host_op(&mut self, op: &'p Op) -> Option<()> {
        match &op.kind {
            OpKind::Spawn(thread) => self.spawn(op, *thread),
            OpKind::Create(obj) => self.create(op, *obj),
            OpKind::Destroy(obj) => {
                let inst = self.live(op, *obj)?;
                let node = self.host_node(op, Action::Destroy(inst));
                // Another thread's second destroy is a use of the first one's result.
                self.exec.instances[inst.index()].destroyed.get_or_insert(node);
            }
            OpKind::EventRecord { event, stream } => self.on_queue(op, *stream, *event, Action::EventRecord)?,
            OpKind::EventWait { stream, event, .. } => self.on_queue(op, *stream, *event, Action::EventWait)?,
            OpKind::EventReset { event, stream } => self.on_queue(op, *stream, *event, Action::EventReset)?,
            OpKind::NotifyRecord { notify, stream } => self.on_queue(op, *stream, *notify, Action::NotifyRecord)?,
            OpKind::NotifyWait { notify, stream, .. } => self.on_queue(op, *stream, *notify, Action::NotifyWait)?,
            OpKind::EventQuery { event, .. } => {
                let inst = self.live(op, *event)?;
                self.host_node(op, Action::EventQuery(inst));
            }
            OpKind::EventSynchronize { event, .. } => {
                let inst = self.live(op, *event)?;
                self.host_node(op, Action::EventSync(inst));
            }
            OpKind::EventWaitsSynchronize { event } => {
                let inst = self.live(op, *event)?;
                let upto = self.rank.last_waits.get(&inst).cloned().unwrap_or_default();
                let upto = upto.into_iter().map(|(_, node)| node).collect();
                self.host_node(op, Action::WaitsSync { event: inst, upto });
            }
            OpKind::EventElapsedTime { start, end } => {
                let (start, end) = (self.live(op, *start)?, self.live(op, *end)?);
                self.host_node(op, Action::EventElapsedTime { start, end });
            }
            OpKind::StreamSynchronize { stream: obj, .. } | OpKind::ThreadSynchronize { thread: obj } => {
                let agent = self.queue(op, *obj)?;
                self.forbidden_in_capture(op, |capturing, _| capturing == agent);
                let upto = self.last_submitted(agent);
                self.host_node(op, Action::AgentSync { agent, upto });
            }
            OpKind::DeviceSynchronize => {
                self.forbidden_in_capture(op, |_, capture| !capture.relaxed);
                let rank = self.env.rank as u32;
                let on_this_device = |agent: &Agent| {
                    agent.rank == rank && agent.kind.is_device() && agent.device == self.rank.current_device
                };
                let upto = (self.rank.first_agent..self.exec.agents.len() as u32)
                    .map(AgentId)
                    .filter(|&a| on_this_device(self.exec.agent(a)))
                    .filter_map(|a| self.last_submitted(a))
                    .collect();
                self.host_node(op, Action::DeviceSync { upto });
            }
            OpKind::ChannelNotifyRecord { thread, channel, index } => {
                let agent = self.queue(op, *thread)?;
                let channel = self.live(op, *channel)?;
                let index = self.eval(op, index)?;
                self.notify_node(
                    agent,
                    op,
                    channel,
                    index,
                    Action::ChannelNotifyRecord { channel, index },
                );
            }
            OpKind::ChannelNotifyWait {
                thread, channel, index, ..
            } => {
                let agent = self.queue(op, *thread)?;
                let channel = self.live(op, *channel)?;
                let index = self.eval(op, index)?;
                self.notify_node(agent, op, channel, index, Action::ChannelNotifyWait { channel, index });
            }
            OpKind::ThreadNotifyRecord { thread, target, index } => {
                let agent = self.queue(op, *thread)?;
                let target = self.live(op, *target)?;
                let index = self.eval(op, index)?;
                self.notify_node(agent, op, target, index, Action::ThreadNotifyRecord { target, index });
            }
            OpKind::ThreadNotifyWait { thread, index, .. } => {
                let agent = self.queue(op, *thread)?;
                let inst = self.live(op, *thread)?;
                let index = self.eval(op, index)?;
                self.notify_node(agent, op, inst, index, Action::ThreadNotifyWait { thread: inst, index });
            }
            OpKind::RemoteWrite {
                thread,
                channel,
                dst,
                src,
                notify,
            } => {
                let agent = self.queue(op, *thread)?;
                let channel_inst = self.live(op, *channel)?;
                let accesses = vec![self.access(op, src, false)?, self.access(op, dst, true)?];
                let index = match notify {
                    Some(index) => Some(self.eval(op, index)?),
                    None => None,
                };
                if let Some(index) = index
                    && self.rejects_index(channel_inst, index)
                {
                    // The whole call is rejected: neither the write nor its notify happens.
                    return self.notify_node(agent, op, channel_inst, index, Action::Other);
                }
                self.device_node(agent, op, Action::Access(accesses.into()));
                if let Some(index) = index {
                    let action = Action::ChannelNotifyRecord {
                        channel: channel_inst,
                        index,
                    };
                    self.device_node(agent, op, action);
                }
            }
            OpKind::RemoteRead { thread, dst, src, .. } | OpKind::LocalCopy { thread, dst, src } => {
                let agent = self.queue(op, *thread)?;
                let accesses = vec![self.access(op, src, false)?, self.access(op, dst, true)?];
                self.device_node(agent, op, Action::Access(accesses.into()));
            }
            OpKind::Fence { thread, channel } => {
                let agent = self.queue(op, *thread)?;
                if let Some(channel) = channel {
                    self.live(op, *channel)?;
                }
                self.device_node(agent, op, Action::Other);
            }
            OpKind::Kernel { stream, launch } => {
                let agent = self.queue(op, *stream)?;
                let accesses = self.accesses(op, &launch.reads, &launch.writes)?;
                self.device_node(agent, op, Action::Access(accesses.into()));
            }
            OpKind::Memcpy { stream, copy } => {
                let (src, dst) = (self.access(op, &copy.src, false)?, self.access(op, &copy.dst, true)?);
                let timing = match (copy.staged_by_cuda, stream.or(copy.synchronous_on)) {
                    (true, Some(_)) => {
                        let (src_host, dst_host) = copy.kind.host_sides();
                        let (src_side, dst_side) = (self.side(&src, src_host), self.side(&dst, dst_host));
                        cuda_copy::timing(stream.is_some(), src_side, dst_side)
                    }
                    _ if stream.is_some() => CopyTiming::OnStream,
                    _ => CopyTiming::UntilDone,
                };
                self.copy(op, stream.or(copy.synchronous_on), timing, src, dst)?;
            }
            OpKind::ValueWrite {
                stream, word, value, ..
            } => {
                let agent = self.queue(op, *stream)?;
                let word = Box::new(self.access(op, word, true)?);
                let value = self.eval(op, value)? as u64;
                self.device_node(agent, op, Action::ValueWrite { word, value });
            }
            OpKind::ValueWait {
                stream,
                word,
                value,
                condition,
                bits,
            } => {
                let agent = self.queue(op, *stream)?;
                let word = Box::new(self.access(op, word, false)?);
                let value = self.eval(op, value)? as u64;
                let (condition, bits) = (*condition, *bits);
                self.device_node(
                    agent,
                    op,
                    Action::ValueWait {
                        word,
                        value,
                        condition,
                        bits,
                    },
                );
            }
            OpKind::IpcExport { obj, offset, key } => {
                let inst = self.live(op, *obj)?;
                let offset = u64::try_from(self.eval(op, offset)?).unwrap_or(0);
                self.ipc.exported.insert(key.to_string(), (inst, offset));
                self.host_node(op, Action::Other);
            }
            OpKind::SetDevice(device) => self.set_device(op, device)?,
            OpKind::BeginCapture { stream, relaxed } => {
                let agent = self.queue(op, *stream)?;
                let capture = Capture {
                    begin: op,
                    relaxed: *relaxed,
                    work: Vec::new(),
                    left_out: Vec::new(),
                };
                self.rank.capturing.insert(agent, capture);
                self.host_node(op, Action::Other);
            }
            OpKind::GraphLaunch { graph, stream } => {
                let agent = self.queue(op, *stream)?;
                let graph = self.live(op, *graph)?;
                self.host_node(op, Action::Other);
                for (captured, action) in self.rank.graphs.get(&graph).cloned().unwrap_or_default() {
                    let node = self.device_node(agent, captured, action);
                    if self.exec.agent(self.exec.node(node).agent).kind.is_device() {
                        self.exec.graph_launches.push((node, op));
                    }
                }
            }
            OpKind::HostRegister(range) => {
                let pinned = self.access(op, range, false)?;
                self.rank.page_locked.push((pinned.memory, pinned.start, pinned.end));
                self.host_node(op, Action::Other);
            }
            OpKind::HostUnregister(ptr) => {
                let ptr = self.access(op, ptr, false)?;
                let registered = |&(memory, start, _): &(Memory, u64, u64)| memory == ptr.memory && start == ptr.start;
                self.rank.page_locked.retain(|range| !registered(range));
                self.host_node(op, Action::Other);
            }
            OpKind::HostAccess { write, range } => {
                let access = self.access(op, range, *write)?;
                self.host_node(op, Action::Access(vec![access].into()));
            }
            OpKind::SetWaitTimeout(_) => {
                self.host_node(op, Action::Other);
            }
            OpKind::BatchMode { start, tag } => self.batch_mode(op, *start, tag),
            OpKind::SetCurrentContext(context) => self.set_current_context(op, *context)?,
            OpKind::LaunchSuperKernel(id) => {
                let stream = self.program().superkernels[id.index()].stream;
                let agent = self.queue(op, stream)?;
                let accesses = self.superkernel_footprint(op, *id);
                self.device_node(agent, op, Action::Access(accesses.into()));
            }
            OpKind::DataCopy { .. } | OpKind::SetNextTaskStart { .. } | OpKind::WaitPreTaskEnd { .. } => {}
        }
        Some(())
    }

    /// A copy's nodes, as `timing` runs it on `queue` (none: a copy the host makes).
    fn copy(&mut self, op: &'p Op, queue: Option<ObjId>, timing: CopyTiming, src: Access, dst: Access) -> Option<()> {
        let agent = match queue {
            Some(queue) => Some(self.queue(op, queue)?),
            None => None,
        };
        match (timing, agent) {
            (CopyTiming::OnStream, Some(agent)) => {
                self.device_node(agent, op, Action::Access(vec![src, dst].into()));
            }
            (CopyTiming::StagedSource { synchronize_first }, Some(agent)) => {
                let staging = self.host_node(op, Action::Access(vec![src].into()));
                if synchronize_first {
                    self.exec.synchronous_work.push((staging, agent));
                }
                self.device_node(agent, op, Action::Access(vec![dst].into()));
            }
            _ => {
                let node = self.host_node(op, Action::Access(vec![src, dst].into()));
                self.exec.synchronous_work.extend(agent.map(|agent| (node, agent)));
            }
        }
        Some(())
    }

    /// Where one side of a CUDA copy lives; `declared_host`: what the copy's `kind` says
    /// of memory that no call of the code allocated.
    fn side(&self, access: &Access, declared_host: Option<bool>) -> Side {
        let ObjectKind::Buffer(info) = &self.program().object(self.exec.instance(access.buffer).obj).kind else {
            return Side::Unknown;
        };
        let page_locked = self
            .rank
            .page_locked
            .iter()
            .any(|&(memory, start, end)| memory == access.memory && start <= access.start && access.end <= end);
        let host = if page_locked { Side::PageLocked } else { Side::Pageable };
        match (&info.space, declared_host) {
            (MemorySpace::Host, _) => Side::PageLocked,
            (MemorySpace::Pageable, _) | (MemorySpace::Before, Some(true)) => host,
            (MemorySpace::Before, None) => Side::Unknown,
            _ => Side::Device,
        }
    }

    fn on_queue(&mut self, op: &'p Op, queue: ObjId, obj: ObjId, action: fn(InstId) -> Action) -> Option<()> {
        let agent = self.queue(op, queue)?;
        let inst = self.live(op, obj)?;
        self.device_node(agent, op, action(inst));
        Some(())
    }

    fn create(&mut self, op: &'p Op, obj: ObjId) {
        let rank = self.env.rank as u32;
        if matches!(self.program().object(obj).kind, ObjectKind::Context { current: true }) {
            return self.current_context_handle(op, obj);
        }
        let Some(shape) = &self.program().object(obj).array else {
            let inst = self.new_instance(obj, rank);
            self.configure(op, inst);
            self.rank.current.insert(obj, inst);
            if let Some(key) = &self.program().object(obj).ipc_key {
                self.ipc.opened.push((inst, key.clone()));
            }
            return;
        };
        let Some(len) = self.eval(op, &shape.len) else {
            return;
        };
        let Some(len) = u32::try_from(len).ok().filter(|&len| len <= MAX_ARRAY_LEN) else {
            let what = format!("the handle count of {} ({len})", op.api);
            self.eval_failed(&op.span, what, EvalError::BadCount, "no handle is created");
            return;
        };
        // All instances first, so that they are consecutive (`live_element`).
        let instances: Vec<InstId> = (0..len)
            .map(|k| {
                let inst = self.new_instance(obj, rank);
                self.exec.instances[inst.index()].element = Some(k);
                inst
            })
            .collect();
        let outer = self.env.vars[shape.element.index()];
        for (k, &inst) in instances.iter().enumerate() {
            self.env.vars[shape.element.index()] = Some(k as i64);
            self.configure(op, inst);
        }
        self.env.vars[shape.element.index()] = outer;
        match instances.first() {
            Some(&first) => {
                self.rank.empty_arrays.remove(&obj);
                self.rank.current.insert(obj, first);
            }
            None => {
                self.rank.empty_arrays.insert(obj);
                self.rank.current.remove(&obj);
            }
        }
    }

    /// A new instance's attributes, evaluated where it is created, and its creation node.
    fn configure(&mut self, op: &'p Op, inst: InstId) {
        let obj = self.exec.instance(inst).obj;
        match &self.program().object(obj).kind {
            ObjectKind::Stream(_) => {
                self.attach_agent(inst, AgentKind::Stream(inst));
            }
            ObjectKind::HcclThread { stream, notify_num, .. } => {
                self.exec.instances[inst.index()].notify_num = self.env.eval(notify_num).ok();
                match stream {
                    Some(stream) => {
                        let agent = self.queue(op, *stream);
                        self.exec.instances[inst.index()].agent = agent;
                    }
                    None => {
                        self.attach_agent(inst, AgentKind::HcclThread(inst));
                    }
                }
            }
            ObjectKind::Channel(info) => {
                let remote = info.remote_rank.as_ref().and_then(|rank| self.env.eval(rank).ok());
                self.exec.instances[inst.index()].remote_rank = remote;
                self.exec.instances[inst.index()].notify_num = self.env.eval(&info.notify_num).ok();
            }
            ObjectKind::Buffer(BufferInfo { size, space }) => {
                self.exec.instances[inst.index()].size = self.env.eval(size).ok().and_then(|s| u64::try_from(s).ok());
                if let MemorySpace::HcclPeer(channel) = space {
                    self.exec.instances[inst.index()].channel = self.live(op, *channel);
                }
            }
            ObjectKind::Context { .. } => {
                // A context of its own has a default stream of its own, and is current
                // for the thread that creates it.
                let stream = self.new_instance(Program::DEFAULT_STREAM, self.env.rank as u32);
                self.attach_agent(stream, AgentKind::Stream(stream));
                self.exec.context_streams.push((inst, stream));
                self.rank.current_context = Some(inst);
            }
            ObjectKind::Graph { stream } => {
                // `cudaStreamEndCapture`: the capture ends, and its work is the graph's.
                let captured = self
                    .queue(op, *stream)
                    .and_then(|agent| self.rank.capturing.remove(&agent));
                self.rank
                    .graphs
                    .insert(inst, captured.map(|c| c.work).unwrap_or_default());
            }
            ObjectKind::GraphExec { graph } => {
                let work = self
                    .live(op, *graph)
                    .and_then(|graph| self.rank.graphs.get(&graph).cloned());
                self.rank.graphs.insert(inst, work.unwrap_or_default());
            }
            ObjectKind::Event(_) | ObjectKind::Notify | ObjectKind::Comm | ObjectKind::Element { .. } => {}
        }
        let node = self.host_node(op, Action::Create(inst));
        self.exec.instances[inst.index()].created = Some(node);
    }

    // ----- memory -----

    fn accesses(&mut self, op: &'p Op, reads: &'p [MemRange], writes: &'p [MemRange]) -> Option<Vec<Access>> {
        // Exactly as long as needed: the node keeps them as a boxed slice, which a longer
        // vector would be copied into.
        let mut accesses = Vec::with_capacity(reads.len() + writes.len());
        let reads = reads.iter().map(|r| (r, false));
        let writes = writes.iter().map(|r| (r, true));
        for (range, write) in reads.chain(writes) {
            accesses.push(self.access(op, range, write)?);
        }
        Some(accesses)
    }

    /// The access a range describes. A range with a negative or uncomputable offset or
    /// length is recorded in `invalid_ranges` and becomes empty: the op still runs (its
    /// ordering matters), it just touches no bytes syncguard can name.
    fn access(&mut self, op: &'p Op, range: &MemRange, write: bool) -> Option<Access> {
        let inst = self.live(op, range.buffer)?;
        let offset = self.env.eval(&range.offset).ok().and_then(|v| u64::try_from(v).ok());
        let len = self.env.eval(&range.len).ok().and_then(|v| u64::try_from(v).ok());
        let (start, end) = match (offset, len) {
            (Some(start), Some(len)) => (start, start.saturating_add(len)),
            _ => {
                self.exec.invalid_ranges.push(op);
                (0, 0)
            }
        };
        Some(Access {
            memory: self.memory_of(inst),
            buffer: inst,
            start,
            end,
            write,
        })
    }

    fn memory_of(&self, inst: InstId) -> Memory {
        let instance = self.exec.instance(inst);
        match &self.program().object(instance.obj).kind {
            ObjectKind::Buffer(BufferInfo {
                space: MemorySpace::HcclLocal,
                ..
            }) => Memory::HcclBuffer { rank: instance.rank },
            ObjectKind::Buffer(BufferInfo {
                space: MemorySpace::HcclPeer(_),
                ..
            }) => {
                let channel = instance.channel.map(|c| self.exec.instance(c));
                match channel.map(|c| c.remote_rank) {
                    // A channel from before with an unknown peer: memory of its own.
                    Some(None) => Memory::Buffer(inst),
                    remote => {
                        let peer = remote.flatten().and_then(|r| u32::try_from(r).ok());
                        Memory::HcclBuffer {
                            rank: peer.unwrap_or(instance.rank),
                        }
                    }
                }
            }
            _ => Memory::Buffer(inst),
        }
    }

    /// Everything a SuperKernel's cores may copy, over all sub-kernels, tiling keys and
    /// cores: the tiling key is chosen at run time, so each one counts.
    fn superkernel_footprint(&mut self, op: &'p Op, id: SuperKernelId) -> Vec<Access> {
        let superkernel = &self.program().superkernels[id.index()];
        let mut accesses: Vec<Access> = Vec::new();
        let mut budget = MAX_CORE_STEPS;
        for sub in &superkernel.subkernels {
            for core in core_envs(sub.tiling_keys.iter().copied(), sub.aiv_cores, sub.aic_cores) {
                let mut env = Env {
                    core: Some(core),
                    ..self.env.clone()
                };
                let end = walk_core(&sub.body, &mut env, &mut budget, &mut |copy_op, env| {
                    if let OpKind::DataCopy { direction, range } = &copy_op.kind
                        && let Some(access) = self.core_access(op, range, *direction == CopyDirection::Out, env)
                    {
                        accesses.push(access);
                    }
                });
                if let CoreEnd::Stopped(stop) = end {
                    self.core_stopped(&core, stop);
                }
            }
        }
        merge_accesses(accesses)
    }

    /// A core whose walk stopped: a condition with no value is reported (the core's
    /// behaviour past it is undefined); a walk out of steps cuts the run off.
    fn core_stopped(&mut self, core: &CoreEnv, stop: CoreStop) {
        match stop.reason {
            StopReason::Undefined { what, error } => {
                let what = format!("{what} (on {})", core.describe());
                self.eval_failed(
                    &stop.span,
                    what,
                    error,
                    "the core's code from here on is left out of the analysis",
                );
            }
            StopReason::TooLong { .. } | StopReason::OutOfSteps => self.cut_off(Cutoff::Kernel(stop)),
        }
    }

    fn core_access(&mut self, op: &'p Op, range: &MemRange, write: bool, env: &Env) -> Option<Access> {
        let inst = self.live(op, range.buffer)?;
        let start = u64::try_from(env.eval(&range.offset).ok()?).ok()?;
        let end = start.checked_add(u64::try_from(env.eval(&range.len).ok()?).ok()?)?;
        Some(Access {
            memory: self.memory_of(inst),
            buffer: inst,
            start,
            end,
            write,
        })
    }
}

/// The calls a block issues at least each time it runs: a lower bound on what a loop
/// of it costs (a call with an unusable operand still costs a recorded bad use).
fn least_calls(block: &Block) -> u64 {
    let mut calls = 0u64;
    for stmt in block {
        match stmt {
            Stmt::Op(op)
                if !matches!(
                    op.kind,
                    OpKind::DataCopy { .. } | OpKind::SetNextTaskStart { .. } | OpKind::WaitPreTaskEnd { .. }
                ) =>
            {
                calls += 1
            }
            // A `while` may run no iteration.
            Stmt::Op(_) | Stmt::For { .. } | Stmt::While { .. } | Stmt::Assign { .. } => {}
            Stmt::QueryBranch { done, pending, .. } => calls += (1 + least_calls(done)).min(least_calls(pending)),
            Stmt::If { then, otherwise, .. } => calls += least_calls(then).min(least_calls(otherwise)),
            Stmt::Return(_) => break,
        }
    }
    calls
}

/// Every core a sub-kernel runs on, for every tiling key.
pub fn core_envs(keys: impl Iterator<Item = i64> + Clone, aiv: u32, aic: u32) -> impl Iterator<Item = CoreEnv> {
    keys.flat_map(move |tiling_key| {
        let vector = (0..aiv).map(move |i| CoreEnv {
            block_idx: i as i64,
            tiling_key,
            is_aiv: true,
        });
        let cube = (0..aic).map(move |i| CoreEnv {
            block_idx: i as i64,
            tiling_key,
            is_aiv: false,
        });
        vector.chain(cube)
    })
}

/// Merge touching or overlapping ranges of the same memory and direction.
fn merge_accesses(mut accesses: Vec<Access>) -> Vec<Access> {
    accesses.sort_by_key(|a| (a.memory, a.write, a.start, a.end));
    let mut merged: Vec<Access> = Vec::with_capacity(accesses.len());
    for access in accesses {
        match merged.last_mut() {
            Some(last) if last.memory == access.memory && last.write == access.write && access.start <= last.end => {
                last.end = last.end.max(access.end);
            }
            _ => merged.push(access),
        }
    }
    merged
}
