//! A run's ranks walked in parts, side by side. Ranks are separate processes: a rank's
//! walk reads nothing another rank made, and the only thing that looks across ranks, IPC
//! opens, is resolved once every rank is walked. Each part numbers its nodes, agents and
//! instances from zero; a part joined after others has its numbers shifted past theirs.
//! Since the sequential walk also goes rank by rank, the joined run is exactly the one it
//! makes, provided no budget was reached: a run any part cuts off, or that the parts
//! together take past a budget, is left to the sequential walk, which cuts it where it
//! would.
//!
//! Each thread walks a range of ranks from its front into one part; a thread done with
//! its own takes ranks one at a time from the back of the longest range left, each into
//! a part of its own, so that no thread waits long for another (ranks differ in size,
//! and the Program's rules run beside the walk).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::build::Builder;
use super::*;

/// Fewer calls than this are walked in one part: a thread costs more than it saves.
pub(super) const MIN_OPS_TO_SPLIT: usize = 20_000;

/// `program`'s run with `params` (every query taken "not done"), its `ranks` walked on
/// `threads` threads, the calling thread among them; `None` when one thread would do,
/// or when a budget was reached (see the module doc). The threads are plain threads,
/// not the rayon pool's: a pool thread may be the one waiting for this walk.
pub(super) fn walk_in_parts<'p>(
    program: &'p Program,
    params: &[i64],
    ranks: u32,
    threads: usize,
    legacy_default_stream: bool,
) -> Option<Execution<'p>> {
    let threads = threads.min(ranks as usize);
    if threads < 2 {
        return None;
    }
    let walk = PartWalk {
        program,
        params,
        ranks,
        legacy_default_stream,
        queue: RankQueue::new(ranks, threads),
        cut_off: AtomicBool::new(false),
    };
    let mut parts = walk.on_threads(threads);
    if walk.cut_off.load(Ordering::Relaxed) || !within_budgets(&parts) {
        return None;
    }
    parts.sort_by_key(|part| part.first_rank);
    Some(join_parts(parts, threads)?.finish())
}

/// Whether the parts together stay within the budgets the walk in one part keeps (and
/// so their numbers, shifted, within `u32`).
fn within_budgets(parts: &[WalkedPart]) -> bool {
    let total = |count: fn(&Builder) -> usize| {
        parts
            .iter()
            .fold(0usize, |sum, part| sum.saturating_add(count(&part.builder)))
    };
    let steps = parts
        .iter()
        .fold(0u64, |sum, part| sum.saturating_add(part.builder.steps));
    steps <= MAX_STEPS
        && total(|builder| builder.exec.nodes.len()) <= MAX_NODES
        && total(|builder| builder.exec.agents.len()) <= MAX_AGENTS
        && total(|builder| builder.exec.instances.len()) <= u32::MAX as usize
}

/// The ranks still to walk: one range per thread.
struct RankQueue {
    ranges: Vec<Mutex<Range<u32>>>,
}

impl RankQueue {
    fn new(ranks: u32, threads: usize) -> Self {
        let bound = |thread: usize| (u64::from(ranks) * thread as u64 / threads as u64) as u32;
        RankQueue {
            ranges: (0..threads)
                .map(|thread| Mutex::new(bound(thread)..bound(thread + 1)))
                .collect(),
        }
    }

    fn range(&self, thread: usize) -> std::sync::MutexGuard<'_, Range<u32>> {
        self.ranges[thread].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next rank of `thread`'s own range.
    fn own(&self, thread: usize) -> Option<u32> {
        self.range(thread).next()
    }

    /// The last rank of the longest range left.
    fn steal(&self) -> Option<u32> {
        let mut longest: Vec<(usize, usize)> = (0..self.ranges.len())
            .map(|thread| (self.range(thread).len(), thread))
            .collect();
        longest.sort_unstable_by(|a, b| b.cmp(a));
        longest
            .into_iter()
            .find_map(|(_, thread)| self.range(thread).next_back())
    }
}

/// Ranks `first_rank..` of the run, walked into one builder.
struct WalkedPart<'p> {
    first_rank: u32,
    builder: Builder<'p, 'static>,
}

/// What every thread of one walk shares.
struct PartWalk<'a, 'p> {
    program: &'p Program,
    params: &'a [i64],
    ranks: u32,
    legacy_default_stream: bool,
    queue: RankQueue,
    /// A part was cut off: the others stop, as the run is walked again in one part.
    cut_off: AtomicBool,
}

impl<'p> PartWalk<'_, 'p> {
    /// Every rank walked, on `threads` threads; a thread that cannot be started leaves
    /// its ranks to the others.
    fn on_threads(&self, threads: usize) -> Vec<WalkedPart<'p>> {
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..threads)
                .filter_map(|thread| {
                    let walker = std::thread::Builder::new().stack_size(WALK_STACK);
                    walker.spawn_scoped(scope, move || self.walk(thread)).ok()
                })
                .collect();
            let mut parts = self.walk(0);
            for other in others {
                parts.extend(other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            }
            parts
        })
    }

    /// `thread`'s own ranks into one part, then ranks taken from the others, each a part.
    fn walk(&self, thread: usize) -> Vec<WalkedPart<'p>> {
        let mut parts = Vec::new();
        let mut own: Option<WalkedPart<'p>> = None;
        while let Some(rank) = self.next(|| self.queue.own(thread)) {
            let part = own.get_or_insert_with(|| WalkedPart {
                first_rank: rank,
                builder: self.builder(),
            });
            self.walk_rank(&mut part.builder, rank);
        }
        parts.extend(own);
        while let Some(rank) = self.next(|| self.queue.steal()) {
            let mut builder = self.builder();
            self.walk_rank(&mut builder, rank);
            parts.push(WalkedPart {
                first_rank: rank,
                builder,
            });
        }
        parts
    }

    fn next(&self, take: impl FnOnce() -> Option<u32>) -> Option<u32> {
        if self.cut_off.load(Ordering::Relaxed) {
            return None;
        }
        take()
    }

    fn builder(&self) -> Builder<'p, 'static> {
        Builder::new(
            self.program,
            self.params.to_vec(),
            self.ranks,
            &[],
            self.legacy_default_stream,
        )
    }

    fn walk_rank(&self, builder: &mut Builder<'p, 'static>, rank: u32) {
        builder.walk_ranks(rank..rank + 1);
        if builder.exec.truncated() {
            self.cut_off.store(true, Ordering::Relaxed);
        }
    }
}

/// The parts, in rank order, joined into the first: the later parts' nodes are shifted
/// on `threads` threads, the rest of them on this one.
fn join_parts<'p>(parts: Vec<WalkedPart<'p>>, threads: usize) -> Option<Builder<'p, 'static>> {
    let mut parts = parts.into_iter().map(|part| part.builder);
    let mut joined = parts.next()?;
    let mut later: Vec<Builder<'p, 'static>> = parts.collect();
    let mut shift = Shift::past(&joined.exec, Shift::default());
    let shifts: Vec<Shift> = later
        .iter()
        .map(|part| {
            let this = shift;
            shift = Shift::past(&part.exec, shift);
            this
        })
        .collect();
    shift_nodes(&mut later, &shifts, threads);
    for (part, shift) in later.into_iter().zip(shifts) {
        join_builders(&mut joined, part, shift);
    }
    Some(joined)
}

/// Shift the nodes of `parts` in place, each part by its shift, on `threads` threads (a
/// thread that cannot be started leaves its share to the others).
fn shift_nodes(parts: &mut [Builder<'_, '_>], shifts: &[Shift], threads: usize) {
    let total: usize = parts.iter().map(|part| part.exec.nodes.len()).sum();
    let piece = total.div_ceil(threads).max(1);
    let pieces: Vec<(Shift, &mut [Node])> = parts
        .iter_mut()
        .zip(shifts)
        .flat_map(|(part, &shift)| part.exec.nodes.chunks_mut(piece).map(move |nodes| (shift, nodes)))
        .collect();
    let pieces = Mutex::new(pieces);
    let shift_pieces = || {
        while let Some((shift, nodes)) = pieces.lock().unwrap_or_else(PoisonError::into_inner).pop() {
            nodes.iter_mut().for_each(|node| shift.node(node));
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let _ = std::thread::Builder::new().spawn_scoped(scope, shift_pieces);
        }
        shift_pieces();
    });
}

/// Append the ranks `high` walked after those `low` walked, `high`'s nodes already
/// shifted.
fn join_builders<'p>(low: &mut Builder<'p, '_>, high: Builder<'p, '_>, shift: Shift) {
    low.steps = low.steps.saturating_add(high.steps);
    // Later exports of a handle replace earlier ones, as in the sequential walk.
    for (key, (inst, offset)) in high.ipc.exported {
        low.ipc.exported.insert(key, (shift.instance(inst), offset));
    }
    let opened = high
        .ipc
        .opened
        .into_iter()
        .map(|(inst, key)| (shift.instance(inst), key));
    low.ipc.opened.extend(opened);
    join_executions(&mut low.exec, high.exec, shift);
}

/// Append `high`'s run after `low`'s, its numbers shifted. Every field is named, so that
/// a field added to the run cannot be left out here.
fn join_executions<'p>(low: &mut Execution<'p>, high: Execution<'p>, shift: Shift) {
    let Execution {
        program: _,
        ranks: _,
        params: _,
        mut agents,
        mut nodes,
        mut instances,
        mut bad_uses,
        mut bad_indices,
        elements,
        query_outcomes,
        query_syncs,
        eval_errors,
        invalid_ranges,
        rejected_notifies,
        mut unsubmitted_batches,
        context_streams,
        cutoff: _,
        legacy_default_stream: _,
        synchronous_work,
        uncaptured,
        graph_launches,
        other_devices,
        mut capture_misuses,
        ipc_opened,
        ipc_unexported,
        ipc_unopened,
    } = high;
    // Shifted already, on every core (`shift_nodes`).
    low.nodes.append(&mut nodes);
    agents.iter_mut().for_each(|agent| shift.agent(agent));
    low.agents.append(&mut agents);
    instances
        .iter_mut()
        .for_each(|instance| shift.instance_fields(instance));
    low.instances.append(&mut instances);
    bad_uses.iter_mut().for_each(|bad| shift.bad_use(bad));
    low.bad_uses.append(&mut bad_uses);
    bad_indices.iter_mut().for_each(|bad| shift.bad_index(bad));
    low.bad_indices.append(&mut bad_indices);
    let elements = elements
        .into_iter()
        .map(|((node, obj), inst)| ((shift.node_id(node), obj), shift.instance(inst)));
    low.elements.extend(elements);
    low.query_outcomes.extend(query_outcomes);
    low.query_syncs
        .extend(query_syncs.into_iter().map(|node| shift.node_id(node)));
    low.eval_errors.extend(eval_errors);
    low.invalid_ranges.extend(invalid_ranges);
    let rejected = rejected_notifies
        .into_iter()
        .map(|(node, inst, index)| (shift.node_id(node), shift.instance(inst), index));
    low.rejected_notifies.extend(rejected);
    unsubmitted_batches.iter_mut().for_each(|batch| shift.batch(batch));
    low.unsubmitted_batches.append(&mut unsubmitted_batches);
    let context_streams = context_streams
        .into_iter()
        .map(|(context, stream)| (shift.instance(context), shift.instance(stream)));
    low.context_streams.extend(context_streams);
    let synchronous = synchronous_work
        .into_iter()
        .map(|(node, agent)| (shift.node_id(node), shift.agent_id(agent)));
    low.synchronous_work.extend(synchronous);
    low.uncaptured.extend(uncaptured);
    low.graph_launches
        .extend(graph_launches.into_iter().map(|(node, op)| (shift.node_id(node), op)));
    low.other_devices.extend(other_devices);
    capture_misuses
        .iter_mut()
        .for_each(|misuse| shift.capture_misuse(misuse));
    low.capture_misuses.append(&mut capture_misuses);
    low.ipc_opened.extend(
        ipc_opened
            .into_iter()
            .map(|(opened, shared)| (shift.instance(opened), shift.instance(shared))),
    );
    low.ipc_unexported
        .extend(ipc_unexported.into_iter().map(|inst| shift.instance(inst)));
    low.ipc_unopened
        .extend(ipc_unopened.into_iter().map(|(inst, key)| (shift.instance(inst), key)));
}

/// How far a later part's numbers move: past the nodes, agents and instances of the
/// parts before it.
#[derive(Clone, Copy, Default)]
struct Shift {
    nodes: u32,
    agents: u32,
    instances: u32,
}

impl Shift {
    /// The shift of a part after `exec`, whose own shift is `base`.
    fn past(exec: &Execution, base: Shift) -> Shift {
        Shift {
            nodes: base.nodes + exec.nodes.len() as u32,
            agents: base.agents + exec.agents.len() as u32,
            instances: base.instances + exec.instances.len() as u32,
        }
    }

    fn node_id(self, node: NodeId) -> NodeId {
        NodeId(node.0 + self.nodes)
    }

    fn agent_id(self, agent: AgentId) -> AgentId {
        AgentId(agent.0 + self.agents)
    }

    fn instance(self, inst: InstId) -> InstId {
        InstId(inst.0 + self.instances)
    }

    fn node(self, node: &mut Node<'_>) {
        let Node {
            agent,
            op: _,
            action,
            host,
            // Issue positions count within a rank.
            issue: _,
            issued_after,
        } = node;
        *agent = self.agent_id(*agent);
        self.action(action);
        *host = self.agent_id(*host);
        if *issued_after != NO_NODE {
            *issued_after += self.nodes;
        }
    }

    fn action(self, action: &mut Action) {
        match action {
            Action::Create(inst)
            | Action::Destroy(inst)
            | Action::EventRecord(inst)
            | Action::EventWait(inst)
            | Action::EventReset(inst)
            | Action::EventQuery(inst)
            | Action::EventSync(inst)
            | Action::NotifyRecord(inst)
            | Action::NotifyWait(inst) => *inst = self.instance(*inst),
            Action::EventElapsedTime { start, end } => {
                *start = self.instance(*start);
                *end = self.instance(*end);
            }
            Action::AgentSync { agent, upto } => {
                *agent = self.agent_id(*agent);
                *upto = upto.map(|node| self.node_id(node));
            }
            Action::DeviceSync { upto } => upto.iter_mut().for_each(|node| *node = self.node_id(*node)),
            Action::WaitsSync { event, upto } => {
                *event = self.instance(*event);
                upto.iter_mut().for_each(|node| *node = self.node_id(*node));
            }
            Action::ChannelNotifyRecord { channel, index: _ } | Action::ChannelNotifyWait { channel, index: _ } => {
                *channel = self.instance(*channel);
            }
            Action::ThreadNotifyRecord { target: inst, index: _ }
            | Action::ThreadNotifyWait { thread: inst, index: _ } => {
                *inst = self.instance(*inst);
            }
            Action::ValueWrite { word, value: _ } => self.access(word),
            Action::ValueWait {
                word,
                value: _,
                condition: _,
                bits: _,
            } => self.access(word),
            Action::Access(accesses) => accesses.iter_mut().for_each(|access| self.access(access)),
            Action::Spawn(agent) => *agent = self.agent_id(*agent),
            Action::Other => {}
        }
    }

    fn access(self, access: &mut Access) {
        let Access {
            memory,
            buffer,
            start: _,
            end: _,
            write: _,
        } = access;
        *memory = match *memory {
            Memory::Buffer(inst) => Memory::Buffer(self.instance(inst)),
            // Named by rank, not by instance.
            Memory::HcclBuffer { rank } => Memory::HcclBuffer { rank },
        };
        *buffer = self.instance(*buffer);
    }

    fn agent(self, agent: &mut Agent) {
        let Agent {
            rank: _,
            kind,
            device: _,
            nodes,
        } = agent;
        *kind = match *kind {
            AgentKind::Host(thread) => AgentKind::Host(thread),
            AgentKind::Stream(inst) => AgentKind::Stream(self.instance(inst)),
            AgentKind::HcclThread(inst) => AgentKind::HcclThread(self.instance(inst)),
        };
        nodes.iter_mut().for_each(|node| *node = self.node_id(*node));
    }

    fn instance_fields(self, instance: &mut Instance) {
        let Instance {
            rank: _,
            obj: _,
            created,
            destroyed,
            agent,
            remote_rank: _,
            notify_num: _,
            size: _,
            element: _,
            channel,
        } = instance;
        *created = created.map(|node| self.node_id(node));
        *destroyed = destroyed.map(|node| self.node_id(node));
        *agent = agent.map(|agent| self.agent_id(agent));
        *channel = channel.map(|inst| self.instance(inst));
    }

    fn bad_use(self, bad: &mut BadUse<'_>) {
        let BadUse {
            op: _,
            rank: _,
            obj: _,
            destroyed_by,
        } = bad;
        *destroyed_by = destroyed_by.map(|node| self.node_id(node));
    }

    /// Named by objects, not instances: nothing to shift (every field is named so that
    /// one added with a number is not missed).
    fn bad_index(self, bad: &mut BadIndex<'_>) {
        let BadIndex {
            op: _,
            rank: _,
            element: _,
            index: _,
            len: _,
            missed: _,
        } = bad;
    }

    fn batch(self, batch: &mut UnsubmittedBatch) {
        let UnsubmittedBatch {
            start,
            calls,
            other_tags,
        } = batch;
        *start = self.node_id(*start);
        for (node, action) in calls {
            *node = self.node_id(*node);
            self.action(action);
        }
        other_tags.iter_mut().for_each(|node| *node = self.node_id(*node));
    }

    /// The problem names calls, not nodes.
    fn capture_misuse(self, misuse: &mut CaptureMisuse<'_>) {
        let CaptureMisuse {
            begin: _,
            rank: _,
            stream,
            problem: _,
        } = misuse;
        *stream = self.agent_id(*stream);
    }
}
