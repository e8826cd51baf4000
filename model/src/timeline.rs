//! A window of one concrete execution around a finding: the lanes (host threads,
//! streams, HCCL threads) and ops a timeline, a trace viewer or a graph draws. The
//! analyzer computes it; renderers only lay it out. Its size is bounded
//! ([`Timeline::MAX_OPS`]): what falls outside the window is counted, not kept.

use crate::source::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// "N = 3, K = 1": the parameter values of the run, where the program has any.
    pub assignment: Option<String>,
    /// Lanes in drawing order: by rank, then host threads before the queues they feed.
    pub lanes: Vec<Lane>,
    /// The ops of the window, by `step` then lane.
    pub ops: Vec<TimelineOp>,
    /// Orderings between ops of different lanes (program order within a lane is implied).
    pub edges: Vec<TimelineEdge>,
    /// Ops of the execution outside the window.
    pub omitted: usize,
    /// What the highlighted ops are.
    pub highlight: Highlight,
    /// Two ops (indices into `ops`) that access the same bytes with nothing ordering
    /// them: the race a finding is about.
    pub race: Option<[usize; 2]>,
    /// Matches a wait of the finding lacks or gets wrong. Kept apart from `edges`:
    /// they order nothing, so a trace viewer or a graph must not draw them as orderings.
    pub ghosts: Vec<Ghost>,
    /// Host synchronizes of the window that never return, and what they wait behind.
    pub hangs: Vec<Hang>,
}

impl Timeline {
    /// Most ops one window keeps: a finding's own ops always, their neighbours as room allows.
    pub const MAX_OPS: usize = 64;

    /// The ops on the deadlock cycle, in cycle order.
    pub fn cycle_ops(&self) -> impl Iterator<Item = &TimelineOp> {
        self.ops.iter().filter(|op| op.role == Role::Cycle)
    }

    /// How many steps (columns) the window spans.
    pub fn steps(&self) -> u32 {
        self.ops.iter().map(|op| op.step + 1).max().unwrap_or(0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Highlight {
    /// A cycle of waits: no op on it ever runs.
    Cycle,
    /// Ops that z3 ordered into an execution where the hazard happens (`witness`).
    Witness,
    /// The calls the finding points at.
    Involved,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// "stream s1 (rank 0)", "host thread main".
    pub name: String,
    pub kind: LaneKind,
    pub rank: u32,
    /// Ops of this lane before and after its part of the window.
    pub omitted_before: usize,
    pub omitted_after: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneKind {
    HostThread,
    Stream,
    HcclThread,
}

impl LaneKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LaneKind::HostThread => "host thread",
            LaneKind::Stream => "stream",
            LaneKind::HcclThread => "HCCL thread",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineOp {
    /// Index into `Timeline::lanes`.
    pub lane: usize,
    /// Column in happens-before order: an op comes after every op of a smaller step it
    /// is ordered after (and, with a witness, in the witness order).
    pub step: u32,
    /// "aclrtStreamWaitEvent", "kernel `matmul`".
    pub label: String,
    /// The event, notify or channel it names, if any: "e1", "to_next[1]".
    pub object: Option<String>,
    pub span: Span,
    /// False for an op that never runs (stuck behind a wait).
    pub executed: bool,
    pub role: Role,
    /// Its position (1-based) in the cycle or in z3's witness order.
    pub number: Option<u32>,
    /// When the call was made (ns), for a call trace that carries `ts`.
    pub time_ns: Option<u64>,
    /// Where the call is in the program's source when the input says so apart from
    /// its span (a call trace's `loc`: "train.cpp:100").
    pub source: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Context,
    /// A call the finding names.
    Involved,
    /// An op of the deadlock cycle.
    Cycle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineEdge {
    /// Indexes into `Timeline::ops`.
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
    /// The edge is a step of the deadlock cycle.
    pub on_cycle: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// A record (event, notify, group record) and the wait it satisfies.
    Match,
    /// Device work and the host synchronize that waits for it.
    HostSync,
    /// A host call and the device op it issued.
    Issue,
    /// Program order on one lane (drawn only where it is a step of a cycle).
    Program,
    /// CUDA's legacy default stream and a blocking stream.
    Legacy,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Match => "match",
            EdgeKind::HostSync => "host-sync",
            EdgeKind::Issue => "issue",
            EdgeKind::Program => "program",
            EdgeKind::Legacy => "legacy-stream",
        }
    }
}

/// A match that is not there, or is not the right one: the record a wait was expected
/// to get its signal from, drawn as a faded "ghost" arrow into the wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ghost {
    /// The wait (index into `Timeline::ops`).
    pub wait: usize,
    pub from: GhostFrom,
    pub kind: GhostKind,
    /// A few words on the arrow: "no record", "expects rank 1 · notify 0".
    pub label: String,
    /// What is missing, as a sentence (the arrow's tooltip, read by screen readers).
    pub title: String,
    /// For a record that went to another rank or notify: where it went.
    pub elsewhere: Option<Elsewhere>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GhostFrom {
    /// A record of the window (index into `Timeline::ops`).
    Op(usize),
    /// The left margin of a lane (index into `Timeline::lanes`): no record of the run
    /// stands for the missing signal.
    Lane(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GhostKind {
    /// Nothing records what the wait waits for (or nothing is left to consume).
    Missing,
    /// A record of the same event in another reset cycle: a reset keeps it from the wait.
    OtherCycle,
    /// The wait reads a record from before: the flag is still set from it, so the wait
    /// passes without waiting for the record issued since.
    Stale,
    /// The peer the wait listens to records, but into another rank or notify index.
    WrongPeer,
}

impl GhostKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GhostKind::Missing => "missing",
            GhostKind::OtherCycle => "other-cycle",
            GhostKind::Stale => "stale",
            GhostKind::WrongPeer => "wrong-peer",
        }
    }
}

/// Where a misdirected record went instead of the wait that expected it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elsewhere {
    /// A lane of the rank it went to, where the window has one.
    pub lane: Option<usize>,
    /// "to rank 2 · notify 0".
    pub label: String,
}

/// A host synchronize that never returns: the queue it waits for is stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hang {
    /// The synchronize (index into `Timeline::ops`), placed after `waits_for`.
    pub sync: usize,
    /// The last op of the queue in the window that the synchronize waits for.
    pub waits_for: usize,
    /// Where that queue is stuck: its first op that never runs.
    pub stuck: usize,
}
