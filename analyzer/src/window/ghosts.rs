//! The matches a finding's waits lack or get wrong ("ghosts"), read off the signal
//! matching before the window is laid out: the record a wait was expected to get its
//! signal from (another reset cycle's, the stale one it reads, the one its peer sent to
//! another rank or notify), or none at all.

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::exec::{Action, AgentId, Execution, InstId, NodeId};
use crate::hb::{self, FlagKey, HappensBefore, NotifyQueue, flag_of};
use crate::timeline::{Elsewhere, Ghost, GhostFrom, GhostKind};

/// Most ghosts one window draws: the finding's first waits; more would bury the picture.
const MAX_GHOSTS: usize = 3;

/// A ghost in terms of nodes, before the window gives them op and lane indices.
pub(super) struct Planned {
    pub wait: NodeId,
    pub from: Source,
    pub kind: GhostKind,
    pub label: String,
    pub title: String,
    /// For a misdirected record: the rank it went to (where it has a lane) and the words.
    pub elsewhere: Option<(Option<u32>, String)>,
}

pub(super) enum Source {
    Node(NodeId),
    /// A lane's margin: a lane of this rank if the window has one, else the wait's own.
    Margin(Option<u32>),
}

impl Planned {
    /// The record the ghost starts from, which the window must hold.
    pub fn source_node(&self) -> Option<NodeId> {
        match self.from {
            Source::Node(node) => Some(node),
            Source::Margin(_) => None,
        }
    }
}

/// The ghosts of the finding's waits (`focus`, the finding's own call first), in focus
/// order. Past the first, a wait stuck behind an earlier stuck op of its lane is not
/// where its lane hangs: its missing record would only add noise.
pub(super) fn plan(exec: &Execution, hb: &HappensBefore, focus: &[NodeId]) -> Vec<Planned> {
    focus
        .iter()
        .enumerate()
        .filter_map(|(at, &wait)| of_wait(exec, hb, wait, at == 0))
        .take(MAX_GHOSTS)
        .collect()
}

fn of_wait(exec: &Execution, hb: &HappensBefore, wait: NodeId, primary: bool) -> Option<Planned> {
    let action = &exec.node(wait).action;
    let blocks_lane = || {
        let lane = &exec.agent(exec.node(wait).agent).nodes;
        lane.iter().find(|&&n| !hb.executes(n)) == Some(&wait)
    };
    let unsatisfied = hb.matching.unsatisfied.contains(&wait) && (primary || blocks_lane());
    match action {
        Action::EventWait(event) if unsatisfied => Some(event_unrecorded(exec, hb, wait, *event)),
        Action::EventWait(event) => stale(exec, hb, wait, *event),
        _ if unsatisfied => notify_unrecorded(exec, hb, wait),
        _ => None,
    }
}

/// A sync-kind event wait no record reaches: from the nearest record of the event in
/// another reset cycle (the last one before, else the first after), else from nowhere.
fn event_unrecorded(exec: &Execution, hb: &HappensBefore, wait: NodeId, event: InstId) -> Planned {
    let event = exec.ipc_shared(event);
    let name = exec.instance_name(event);
    let waiter = exec.describe(wait);
    let cycles = || hb.matching.event_cycles.iter().filter(|c| c.event == Some(event));
    let records: Vec<NodeId> = cycles().flat_map(|c| c.records.iter().copied()).collect();
    let earlier = records.iter().copied().filter(|&r| r < wait).max();
    let later = records.iter().copied().filter(|&r| r > wait).min();
    let Some(record) = earlier.or(later) else {
        return Planned {
            wait,
            from: Source::Margin(None),
            kind: GhostKind::Missing,
            label: "no record".into(),
            title: format!("missing signal: nothing records event {name}, so {waiter} waits forever"),
            elsewhere: None,
        };
    };
    let cleared_by = cycles()
        .find(|c| c.records.contains(&record))
        .and_then(|c| c.reset)
        .map(|reset| format!(", and {} clears it", exec.describe(reset)));
    let (label, title) = if earlier.is_some() {
        (
            "earlier reset cycle",
            format!(
                "missing signal: {waiter} gets no record of {name}; the last record before it ({}) is in an earlier reset cycle{}",
                exec.describe(record),
                cleared_by.unwrap_or_default()
            ),
        )
    } else {
        (
            "later reset cycle",
            format!(
                "missing signal: {waiter} gets no record of {name}; the next record ({}) is in a later reset cycle, after a reset the wait is issued before",
                exec.describe(record)
            ),
        )
    };
    Planned {
        wait,
        from: Source::Node(record),
        kind: GhostKind::OtherCycle,
        label: label.into(),
        title,
        elsewhere: None,
    }
}

/// A sync-kind event wait that reads a record from before: a newer record of the event
/// was issued before the wait with no reset since the one it reads, so the flag is still
/// set and the wait passes without waiting for the newer record.
fn stale(exec: &Execution, hb: &HappensBefore, wait: NodeId, event: InstId) -> Option<Planned> {
    let event = exec.ipc_shared(event);
    let record = hb
        .graph
        .edges_directed(NodeIndex::new(wait.index()), petgraph::Direction::Incoming)
        .filter(|e| matches!(e.weight(), hb::EdgeKind::Match))
        .map(|e| NodeId(e.source().index() as u32))
        .find(|&n| matches!(exec.node(n).action, Action::EventRecord(_)))?;
    let cycle = hb
        .matching
        .event_cycles
        .iter()
        .find(|c| c.event == Some(event) && c.records.contains(&record))?;
    let newer = cycle
        .records
        .iter()
        .copied()
        .filter(|&r| r > record && r < wait)
        .max()?;
    let name = exec.instance_name(event);
    Some(Planned {
        wait,
        from: Source::Node(record),
        kind: GhostKind::Stale,
        label: "stale: still set".into(),
        title: format!(
            "stale signal: {} passes at once, as {name} is still set by this earlier record (nothing reset it), instead of waiting for {}",
            exec.describe(wait),
            exec.describe(newer)
        ),
        elsewhere: None,
    })
}

/// A notify wait with no record left: from the record its peer sent to another rank or
/// notify index instead, if one is never consumed there; else from the peer's margin.
fn notify_unrecorded(exec: &Execution, hb: &HappensBefore, wait: NodeId) -> Option<Planned> {
    let node = exec.node(wait);
    let (key, _) = flag_of(exec, node.rank(exec), &node.action)?;
    let queues = &hb.matching.notify_queues;
    let queue = queues.get(&key)?;
    // The waits past the records: this one is `missing`-th of them.
    let missing = queue
        .waits
        .iter()
        .position(|&w| w == wait)?
        .checked_sub(queue.records.len())?;
    let waiter = exec.describe(wait);
    let (label, expected) = expected_words(exec, key);
    // The n-th wait left without a record pairs with the n-th record gone astray.
    let mut misdirected: Vec<(FlagKey, NodeId)> = queues
        .iter()
        .filter(|(other, _)| near_miss(key, **other))
        .flat_map(|(other, q)| unconsumed(q).iter().map(move |&record| (*other, record)))
        .collect();
    misdirected.sort_by_key(|&(_, record)| record);
    let counted = match queue.records.len() {
        0 => "nothing records it".to_string(),
        n => format!(
            "it is recorded {n} time{} and waited on {} times",
            if n == 1 { "" } else { "s" },
            queue.waits.len()
        ),
    };
    let Some(&(went, record)) = misdirected.get(missing) else {
        let peer = match key {
            FlagKey::Channel { src, .. } => u32::try_from(src).ok(),
            _ => None,
        };
        return Some(Planned {
            wait,
            from: Source::Margin(peer),
            kind: GhostKind::Missing,
            label: match key {
                FlagKey::Channel { .. } => format!("no record: {label}"),
                _ => "no record".into(),
            },
            title: format!("missing signal: {waiter} {expected}, but {counted}"),
            elsewhere: None,
        });
    };
    let (went_rank, went_words) = destination(went);
    Some(Planned {
        wait,
        from: Source::Node(record),
        kind: GhostKind::WrongPeer,
        label,
        title: format!(
            "missing signal: {waiter} {expected}, but {counted}; {} goes {went_words} instead, where no wait consumes it",
            exec.describe(record)
        ),
        elsewhere: Some((went_rank, went_words)),
    })
}

/// A flag a record meant for `key` plausibly went to instead: the same peer's record
/// into another rank with the same index, or into the same rank with another index
/// (channels); another index of the same thread (HCCL threads).
fn near_miss(key: FlagKey, other: FlagKey) -> bool {
    match (key, other) {
        (
            FlagKey::Channel { dst, src, index },
            FlagKey::Channel {
                dst: d,
                src: s,
                index: i,
            },
        ) => s == src && ((d != dst && i == index) || (d == dst && i != index)),
        (FlagKey::Thread { thread, index }, FlagKey::Thread { thread: t, index: i }) => t == thread && i != index,
        _ => false,
    }
}

/// The records of a flag that no wait consumes.
fn unconsumed(queue: &NotifyQueue) -> &[NodeId] {
    queue.records.get(queue.waits.len()..).unwrap_or_default()
}

/// Whom the wait listens to, short ("expects rank 1 · notify 0") and in a sentence.
fn expected_words(exec: &Execution, key: FlagKey) -> (String, String) {
    match key {
        FlagKey::Channel { src, index, .. } => {
            let short = format!("expects rank {src} · notify {index}");
            (short.clone(), short)
        }
        FlagKey::Thread { thread, index } => (
            format!("expects notify {index}"),
            format!("expects notify {index} of {}", exec.instance_name(thread)),
        ),
        FlagKey::Acl(notify) => (
            "expects a record".into(),
            format!("expects a record of notify {}", exec.instance_name(notify)),
        ),
    }
}

/// Where a record went: "to rank 2 · notify 0", with that rank for a channel's.
fn destination(key: FlagKey) -> (Option<u32>, String) {
    match key {
        FlagKey::Channel { dst, index, .. } => (u32::try_from(dst).ok(), format!("to rank {dst} · notify {index}")),
        FlagKey::Thread { index, .. } => (None, format!("to notify {index}")),
        FlagKey::Acl(_) => (None, "elsewhere".into()),
    }
}

/// The ghost with the window's op and lane indices; none when its wait or record is
/// not in the window.
pub(super) fn place(
    exec: &Execution,
    planned: Planned,
    op_of: &dyn Fn(NodeId) -> Option<usize>,
    lanes: &[AgentId],
) -> Option<Ghost> {
    let wait = op_of(planned.wait)?;
    let wait_agent = exec.node(planned.wait).agent;
    let from = match planned.from {
        Source::Node(record) => GhostFrom::Op(op_of(record)?),
        Source::Margin(rank) => {
            let own = lanes.iter().position(|&a| a == wait_agent)?;
            GhostFrom::Lane(
                rank.and_then(|r| lane_of_rank(exec, lanes, r, wait_agent))
                    .unwrap_or(own),
            )
        }
    };
    let like = planned
        .source_node()
        .map_or(wait_agent, |record| exec.node(record).agent);
    let elsewhere = planned.elsewhere.map(|(rank, label)| Elsewhere {
        lane: rank.and_then(|r| lane_of_rank(exec, lanes, r, like)),
        label,
    });
    Some(Ghost {
        wait,
        from,
        kind: planned.kind,
        label: planned.label,
        title: planned.title,
        elsewhere,
    })
}

/// A lane of `rank`: of the same kind as `like`'s if there is one, else any device lane.
fn lane_of_rank(exec: &Execution, lanes: &[AgentId], rank: u32, like: AgentId) -> Option<usize> {
    let kind = std::mem::discriminant(&exec.agent(like).kind);
    let of_rank = |a: &&AgentId| exec.agent(**a).rank == rank && exec.agent(**a).kind.is_device();
    let same_kind = lanes
        .iter()
        .position(|a| of_rank(&a) && std::mem::discriminant(&exec.agent(*a).kind) == kind);
    same_kind.or_else(|| lanes.iter().position(|a| of_rank(&a)))
}
