//! The simulator's shared state: queues, sync objects, who is doing what. One lock
//! guards it all, so that "is every agent stuck" is decided on a consistent snapshot.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use syncguard_analyzer::exec::{InstId, NodeId};
use syncguard_analyzer::hb::FlagKey;

use super::clock::{Signal, VClock};
use super::shadow::ObservedRace;
use crate::backend::{Fault, Timeout, Work};

/// What an agent is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// A host thread not spawned yet, a stream not created yet.
    NotStarted,
    Running,
    /// Blocked, but something changed since: it is re-checking its condition.
    Woken,
    /// A device queue with nothing to do.
    Idle,
    Blocked {
        node: Option<NodeId>,
        on: WaitOn,
    },
    Finished,
}

/// What a blocked agent waits for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WaitOn {
    /// A sync-kind event's record (or the capture-kind record `generation`).
    Event {
        event: InstId,
        generation: Option<u64>,
    },
    Flag(FlagKey),
    /// A GE group Record task.
    Group {
        rank: u32,
        group: String,
    },
    /// A stream or HCCL thread finishing what was issued to it (host synchronize).
    Queue(usize),
}

/// Work queued on a device agent.
pub struct Task {
    pub node: Option<NodeId>,
    /// The instance the work was issued to (the HCCL thread for its notifies).
    pub queue: InstId,
    pub work: TaskWork,
    /// The issuing host's clock when it issued the work.
    pub issued: Arc<VClock>,
    /// Capture-kind events: the record generation a record creates or a wait binds to.
    pub generation: u64,
}

pub enum TaskWork {
    Api(Work),
    GroupRecord(String),
    GroupWait(String),
    /// A GE task that only occupies its stream (AI Core, AICPU, CCU).
    GroupKernel,
}

#[derive(Default)]
pub struct Queue {
    pub tasks: VecDeque<Task>,
    pub enqueued: u64,
    pub completed: u64,
    /// Clocks wanted by host synchronizes, by task sequence number, once completed.
    pub snapshots: HashMap<u64, Option<Arc<VClock>>>,
    /// The agent's clock after its last completed task.
    pub clock: Arc<VClock>,
    /// The calls' nodes this queue executed, in order (GE tasks have none).
    pub executed_nodes: Vec<NodeId>,
}

#[derive(Default)]
pub struct EventState {
    /// Sync kind: the flag, set by a record, cleared by a reset.
    pub flag: Option<Signal>,
    /// Records issued so far, and the completed ones by generation (what a capture-kind
    /// wait and any host synchronize bind to).
    pub issued: u64,
    pub completed: HashMap<u64, Signal>,
}

/// What the simulator saw go wrong.
#[derive(Clone, Debug)]
pub enum Observed {
    /// Every agent that could still run is blocked: the run would hang.
    Hang(Vec<Blocked>),
    /// A wait's own timeout expired.
    Timeout {
        blocked: Blocked,
        timeout: Timeout,
    },
    Race(ObservedRace),
    /// A notify was recorded while still set: the first signal is lost.
    LostSignal {
        key: FlagKey,
        first: Option<NodeId>,
        second: Option<NodeId>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Blocked {
    pub agent: usize,
    pub node: Option<NodeId>,
    pub on: WaitOn,
}

pub struct State {
    pub status: Vec<Status>,
    pub queues: Vec<Queue>,
    pub events: HashMap<InstId, EventState>,
    pub flags: HashMap<FlagKey, Signal>,
    pub groups: HashMap<(u32, String), Vec<(usize, Signal)>>,
    /// The process-wide wait timeout, per rank (`aclrtSetOpWaitTimeout`).
    pub wait_timeout: HashMap<u32, Timeout>,
    pub observed: Vec<Observed>,
    pub aborted: bool,
    /// What stopped the run, when the simulator itself could not go on.
    pub fault: Option<Fault>,
    pub executed: u64,
    /// Agents whose status is `Blocked`.
    blocked: Vec<usize>,
}

impl State {
    pub fn new(agents: usize) -> Self {
        State {
            status: vec![Status::NotStarted; agents],
            queues: (0..agents)
                .map(|_| Queue {
                    clock: Arc::new(VClock::new(agents)),
                    ..Queue::default()
                })
                .collect(),
            events: HashMap::new(),
            flags: HashMap::new(),
            groups: HashMap::new(),
            wait_timeout: HashMap::new(),
            observed: Vec::new(),
            aborted: false,
            fault: None,
            executed: 0,
            blocked: Vec::new(),
        }
    }

    pub fn set_blocked(&mut self, agent: usize, node: Option<NodeId>, on: WaitOn) {
        self.status[agent] = Status::Blocked { node, on };
        self.blocked.push(agent);
    }

    /// Something changed: every blocked agent must look again. Returns them.
    pub fn wake_blocked(&mut self) -> Vec<usize> {
        let woken = std::mem::take(&mut self.blocked);
        for &agent in &woken {
            if matches!(self.status[agent], Status::Blocked { .. }) {
                self.status[agent] = Status::Woken;
            }
        }
        woken
    }

    /// No agent can make progress and at least one is blocked.
    pub fn stuck(&self) -> bool {
        let mut blocked = false;
        for (agent, status) in self.status.iter().enumerate() {
            match status {
                Status::Blocked { .. } => blocked = true,
                Status::Running | Status::Woken => return false,
                Status::Idle if !self.queues[agent].tasks.is_empty() => return false,
                Status::Idle | Status::NotStarted | Status::Finished => {}
            }
        }
        blocked
    }

    /// Records the hang (every blocked agent) and stops the run.
    pub fn declare_hang(&mut self) {
        let mut blocked: Vec<Blocked> = self
            .status
            .iter()
            .enumerate()
            .filter_map(|(agent, status)| match status {
                Status::Blocked { node, on } => Some(Blocked {
                    agent,
                    node: *node,
                    on: on.clone(),
                }),
                _ => None,
            })
            .collect();
        blocked.sort();
        self.observed.push(Observed::Hang(blocked));
        self.aborted = true;
    }
}
