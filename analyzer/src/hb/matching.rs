//! Which signal satisfies which wait, per the semantics of each sync object
//! (README, "How the analysis works"):
//! - sync-kind events: one record per reset cycle; a wait blocks until the record of
//!   its cycle executes, even when that record is issued after the wait (see
//!   `SyncEventState` for how execution order refines issue order);
//! - capture-kind events: a wait binds at issue time to the latest issued record, and
//!   is a no-op when there is none;
//! - notifies (ACL, channel, thread): binary flags; the k-th wait consumes the k-th record.
//!
//! Issue order is node order: within a rank, nodes are created in host issue order.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::exec::{Action, Execution, InstId, NodeId};
use crate::model::{EventSemantics, ObjectKind};

/// One reset cycle of a sync-kind event.
#[derive(Clone, Debug, Default)]
pub struct EventCycle {
    pub event: Option<InstId>,
    pub records: Vec<NodeId>,
    pub waits: Vec<NodeId>,
    /// The reset that ends the cycle; `None` for the cycle still open at exit.
    pub reset: Option<NodeId>,
}

/// The flag a notify record sets and a wait consumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FlagKey {
    /// `aclrtRecordNotify` / `aclrtWaitAndResetNotify` on one notify.
    Acl(InstId),
    /// Notify `index` of rank `dst` that rank `src` records through its channel.
    Channel { dst: i64, src: i64, index: i64 },
    /// Notify `index` of an HCCL thread.
    Thread { thread: InstId, index: i64 },
}

/// Records and waits of one flag, each in issue order.
#[derive(Clone, Debug, Default)]
pub struct NotifyQueue {
    pub records: Vec<NodeId>,
    pub waits: Vec<NodeId>,
    /// A wait's object existed before the code or trace begins (`existing_*`).
    pub existed_before: bool,
    /// A process outside the run shares the notify by IPC key: it may record any
    /// number of times, and consume records, so the flag's balance is not this run's.
    pub shared_outside: bool,
}

#[derive(Debug, Default)]
pub struct Matching {
    /// Signal → wait (and record → host event synchronize).
    pub edges: Vec<(NodeId, NodeId)>,
    /// Waits nothing satisfies: they block forever.
    pub unsatisfied: Vec<NodeId>,
    /// Capture-kind waits, and host synchronizes of either kind, issued before any
    /// record: silent no-ops.
    pub noop_waits: Vec<NodeId>,
    /// Waits on an object from before that a record from before satisfies, and waits on
    /// a notify shared with a process outside the run that no record of the run covers.
    pub satisfied_before: Vec<NodeId>,
    pub event_cycles: Vec<EventCycle>,
    pub notify_queues: BTreeMap<FlagKey, NotifyQueue>,
    /// Memory-value waits (`values`), matched once the graph has its other edges.
    pub values: super::ValueMatching,
}

pub fn match_signals(exec: &Execution) -> Matching {
    let mut matching = Matching::default();
    match_events(exec, &mut matching);
    match_notifies(exec, &mut matching);
    matching
}

fn semantics(exec: &Execution, event: InstId) -> EventSemantics {
    match &exec.program.object(exec.instance(event).obj).kind {
        ObjectKind::Event(info) => info.semantics,
        _ => EventSemantics::Sync,
    }
}

fn match_events(exec: &Execution, matching: &mut Matching) {
    let mut sync_events: HashMap<InstId, SyncEventState> = HashMap::default();
    let mut latest_record: HashMap<InstId, NodeId> = HashMap::default();
    let mut host_view = HostView::default();
    let shared: HashSet<InstId> = exec.ipc_opened.values().copied().collect();
    let mut across_processes: Vec<(NodeId, InstId, EventOp)> = Vec::new();
    let mut records: HashMap<InstId, Vec<NodeId>> = HashMap::default();
    let mut host_syncs: Vec<(NodeId, InstId, Option<NodeId>)> = Vec::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        host_view.observe(exec, id);
        let (event, kind) = match &node.action {
            Action::EventRecord(e) => (*e, EventOp::Record),
            Action::EventWait(e) => (*e, EventOp::Wait),
            Action::EventReset(e) => (*e, EventOp::Reset),
            Action::EventSync(e) => (*e, EventOp::HostSync),
            _ => continue,
        };
        let event = exec.ipc_shared(event);
        if shared.contains(&event) && semantics(exec, event) == EventSemantics::Capture {
            across_processes.push((id, event, kind));
            continue;
        }
        if kind == EventOp::Record {
            latest_record.insert(event, id);
            records.entry(event).or_default().push(id);
        }
        if kind == EventOp::HostSync {
            host_syncs.push((id, event, latest_record.get(&event).copied()));
            continue;
        }
        match semantics(exec, event) {
            EventSemantics::Capture => match kind {
                EventOp::Wait => match latest_record.get(&event) {
                    Some(&record) => matching.edges.push((record, id)),
                    // An event from before may have been recorded before: taken so.
                    None if exec.existed_before(event) => matching.satisfied_before.push(id),
                    None => matching.noop_waits.push(id),
                },
                EventOp::Record | EventOp::HostSync | EventOp::Reset => {}
            },
            EventSemantics::Sync => {
                let state = sync_events.entry(event).or_insert_with(|| SyncEventState::new(event));
                match kind {
                    EventOp::Record => state.record(id, exec, matching),
                    EventOp::Wait => state.wait(id, exec, &host_view, matching),
                    EventOp::Reset => state.reset(id, matching),
                    EventOp::HostSync => {}
                }
            }
        }
    }
    match_host_syncs(exec, &host_syncs, &records, matching);
    match_ipc_events(exec, &across_processes, matching);
    let mut remaining: Vec<SyncEventState> = sync_events.into_values().collect();
    remaining.sort_by_key(|state| state.current.event);
    for state in remaining {
        state.finish(matching);
    }
}

/// A host synchronize waits for the latest record issued before it, of either kind: the
/// runtime keeps that record's task and waits for it, and a reset does not clear it
/// (`Event::Synchronize` in hicann/runtime). With no record issued it returns at once.
/// In a trace, "before" is the observed order of the lines: the threads were ordered so
/// by synchronization the trace does not show.
fn match_host_syncs(
    exec: &Execution,
    syncs: &[(NodeId, InstId, Option<NodeId>)],
    records: &HashMap<InstId, Vec<NodeId>>,
    matching: &mut Matching,
) {
    let span = |node: NodeId| &exec.node(node).op.span;
    for &(sync, event, latest_issued) in syncs {
        let bound = if exec.program.settings.observed_run {
            let observed_before = |record: &&NodeId| {
                let (r, s) = (span(**record), span(sync));
                r.file == s.file && r.range.start < s.range.start
            };
            let of_event = records.get(&event).map(Vec::as_slice).unwrap_or_default();
            of_event
                .iter()
                .filter(observed_before)
                .max_by_key(|&&r| span(r).range.start)
                .copied()
        } else {
            latest_issued
        };
        match bound {
            Some(record) => matching.edges.push((record, sync)),
            None if exec.existed_before(event) => {}
            None => matching.noop_waits.push(sync),
        }
    }
}

/// Capture-kind events shared between processes (IPC): which record a wait binds to
/// depends on when the processes issue them, which node order (one rank after another)
/// does not tell. A wait binds to the latest record issued before it:
/// - in a trace (an observed run), by the order of the trace's lines in one file;
/// - otherwise, its own process's latest earlier record, or else the first record of
///   another process: the hand-over CANN documents (record, then pass the handle on).
fn match_ipc_events(exec: &Execution, ops: &[(NodeId, InstId, EventOp)], matching: &mut Matching) {
    let span = |node: NodeId| &exec.node(node).op.span;
    for &(wait, event, kind) in ops {
        if !matches!(kind, EventOp::Wait | EventOp::HostSync) {
            continue;
        }
        let records = ops
            .iter()
            .filter(|&&(node, e, k)| e == event && matches!(k, EventOp::Record) && node != wait)
            .map(|&(node, ..)| node);
        let observed_before = |record: &NodeId| {
            let (r, w) = (span(*record), span(wait));
            r.file == w.file && r.range.start < w.range.start
        };
        let rank = exec.node(wait).rank(exec);
        let bound = if exec.program.settings.observed_run {
            records.filter(observed_before).max_by_key(|&r| span(r).range.start)
        } else {
            let own = records
                .clone()
                .filter(|&r| exec.node(r).rank(exec) == rank && r < wait)
                .max();
            own.or_else(|| records.clone().find(|&r| exec.node(r).rank(exec) != rank))
        };
        match (bound, kind) {
            (Some(record), _) => matching.edges.push((record, wait)),
            (None, EventOp::Wait) if exec.existed_before(event) => matching.satisfied_before.push(wait),
            (None, EventOp::Wait) => matching.noop_waits.push(wait),
            (None, _) => {}
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EventOp {
    Record,
    Wait,
    Reset,
    HostSync,
}

/// A sync-kind event is a hardware flag: a record sets it when it executes, a reset
/// clears it when it executes, a wait blocks until it is set. Matching follows issue
/// order, corrected for what execution order allows:
/// - a wait with no record yet is satisfied by the next record, even one issued later
///   and even past a reset that cannot run before the wait (the wait's own stream);
/// - a wait issued after a reset that need not have executed yet can still see the
///   previous record: it binds to that record, and SG103 reports the hazard;
/// - a record queued behind a wait on the wait's own stream cannot set the flag before
///   that wait runs: the wait binds to the next record issued elsewhere, and only if
///   there is none, to that record (a self-deadlock).
struct SyncEventState {
    current: EventCycle,
    /// Index in `Matching::event_cycles` of the last closed cycle.
    previous: Option<usize>,
    /// Waits not yet satisfied by any record.
    pending: Vec<NodeId>,
    /// For a pending wait, the first record issued behind it on its own stream.
    behind: HashMap<NodeId, NodeId>,
}

impl SyncEventState {
    fn new(event: InstId) -> Self {
        SyncEventState {
            current: EventCycle {
                event: Some(event),
                ..EventCycle::default()
            },
            previous: None,
            pending: Vec::new(),
            behind: HashMap::default(),
        }
    }

    fn record(&mut self, id: NodeId, exec: &Execution, matching: &mut Matching) {
        let agent = exec.node(id).agent;
        let (queued_behind, satisfied): (Vec<NodeId>, Vec<NodeId>) =
            self.pending.drain(..).partition(|&wait| exec.node(wait).agent == agent);
        for &wait in &queued_behind {
            self.behind.entry(wait).or_insert(id);
        }
        self.pending = queued_behind;
        matching.edges.extend(satisfied.iter().map(|&wait| (id, wait)));
        self.current.waits.extend(satisfied);
        self.current.records.push(id);
    }

    fn wait(&mut self, id: NodeId, exec: &Execution, host_view: &HostView, matching: &mut Matching) {
        if let Some(&record) = self.current.records.first() {
            matching.edges.push((record, id));
            self.current.waits.push(id);
            return;
        }
        let earlier = self.previous.and_then(|index| {
            let cycle = &matching.event_cycles[index];
            let reset = cycle.reset?;
            let record = *cycle.records.first()?;
            (!host_view.certainly_before(exec, reset, id)).then_some((index, record))
        });
        match earlier {
            Some((index, record)) => {
                matching.edges.push((record, id));
                matching.event_cycles[index].waits.push(id);
            }
            None => self.pending.push(id),
        }
    }

    fn reset(&mut self, id: NodeId, matching: &mut Matching) {
        self.current.reset = Some(id);
        let event = self.current.event;
        let closed = std::mem::replace(
            &mut self.current,
            EventCycle {
                event,
                ..EventCycle::default()
            },
        );
        matching.event_cycles.push(closed);
        self.previous = Some(matching.event_cycles.len() - 1);
    }

    fn finish(mut self, matching: &mut Matching) {
        for wait in self.pending.drain(..) {
            match self.behind.get(&wait) {
                Some(&record) => matching.edges.push((record, wait)),
                None => matching.unsatisfied.push(wait),
            }
        }
        if !self.current.records.is_empty() || !self.current.waits.is_empty() {
            matching.event_cycles.push(self.current);
        }
    }
}

/// What each host thread knows has finished, as of the node being matched: for each
/// device agent, the last node of its own that a synchronize on that thread waited
/// for. (Another thread's synchronize says nothing about when this thread runs, and
/// work another thread issued is covered only as happens-before decides, see
/// `host_sync`; neither is known while matching, so neither counts here.)
#[derive(Default)]
struct HostView {
    synced: HashMap<(crate::exec::AgentId, crate::exec::AgentId), NodeId>,
}

impl HostView {
    fn observe(&mut self, exec: &Execution, sync: NodeId) {
        let upto: &[NodeId] = match &exec.node(sync).action {
            Action::AgentSync { upto: Some(last), .. } => std::slice::from_ref(last),
            Action::DeviceSync { upto } | Action::WaitsSync { upto, .. } => upto,
            _ => return,
        };
        let host = exec.node(sync).agent;
        for &node in upto.iter().filter(|&&node| exec.node(node).host == host) {
            let entry = self.synced.entry((host, exec.node(node).agent)).or_insert(node);
            *entry = (*entry).max(node);
        }
    }

    /// `first` has certainly executed before `then` starts: FIFO on one agent, or the
    /// host thread that issues `then` synchronized past `first` before issuing it.
    fn certainly_before(&self, exec: &Execution, first: NodeId, then: NodeId) -> bool {
        let agent = exec.node(first).agent;
        agent == exec.node(then).agent
            || self
                .synced
                .get(&(exec.node(then).host, agent))
                .is_some_and(|&upto| upto >= first)
    }
}

fn match_notifies(exec: &Execution, matching: &mut Matching) {
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        let rank = node.rank(exec);
        let Some((key, is_record)) = flag_of(exec, rank, &node.action) else {
            continue;
        };
        let queue = matching.notify_queues.entry(key).or_default();
        queue.shared_outside |= matches!(key, FlagKey::Acl(notify) if exec.shared_outside(notify));
        if is_record {
            queue.records.push(id);
        } else {
            queue.waits.push(id);
            queue.existed_before |= waits_on_existing(exec, &node.action);
        }
    }
    for queue in matching.notify_queues.values_mut() {
        // A flag of an object from before may already be set by a record from before:
        // with one wait more than records, the first wait consumes that one.
        if queue.existed_before && queue.waits.len() > queue.records.len() {
            matching.satisfied_before.push(queue.waits.remove(0));
        }
        // The process outside records what no record here covers.
        if queue.shared_outside && queue.waits.len() > queue.records.len() {
            let outside = queue.waits.split_off(queue.records.len());
            matching.satisfied_before.extend(outside);
        }
    }
    for queue in matching.notify_queues.values() {
        for (k, &wait) in queue.waits.iter().enumerate() {
            match queue.records.get(k) {
                Some(&record) => matching.edges.push((record, wait)),
                None => matching.unsatisfied.push(wait),
            }
        }
    }
}

/// The flag a notify call's action sets (`true`) or consumes (`false`), on `rank`.
pub fn flag_of(exec: &Execution, rank: u32, action: &Action) -> Option<(FlagKey, bool)> {
    Some(match action {
        Action::NotifyRecord(notify) => (FlagKey::Acl(exec.ipc_shared(*notify)), true),
        Action::NotifyWait(notify) => (FlagKey::Acl(exec.ipc_shared(*notify)), false),
        Action::ChannelNotifyRecord { channel, index } => {
            let dst = exec.instance(*channel).remote_rank?;
            (
                FlagKey::Channel {
                    dst,
                    src: i64::from(rank),
                    index: *index,
                },
                true,
            )
        }
        Action::ChannelNotifyWait { channel, index } => {
            let src = exec.instance(*channel).remote_rank?;
            (
                FlagKey::Channel {
                    dst: i64::from(rank),
                    src,
                    index: *index,
                },
                false,
            )
        }
        Action::ThreadNotifyRecord { target, index } => (
            FlagKey::Thread {
                thread: *target,
                index: *index,
            },
            true,
        ),
        Action::ThreadNotifyWait { thread, index } => (
            FlagKey::Thread {
                thread: *thread,
                index: *index,
            },
            false,
        ),
        _ => return None,
    })
}

/// Whether a notify wait waits on an object from before the code or trace begins.
fn waits_on_existing(exec: &Execution, action: &Action) -> bool {
    match action {
        Action::NotifyWait(object) | Action::ChannelNotifyWait { channel: object, .. } => exec.existed_before(*object),
        Action::ThreadNotifyWait { thread, .. } => exec.existed_before(*thread),
        _ => false,
    }
}
