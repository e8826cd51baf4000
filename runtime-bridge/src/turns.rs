//! A forced issue order: host threads take turns at the calls an order lists, so that a
//! run makes an interleaving the OS would rarely schedule (the one a verifier finding
//! names). A thread waits for its turn a bounded time, after which the order is given
//! up and the threads go as scheduled.

use std::collections::{HashMap, HashSet};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use syncguard_analyzer::exec::{AgentId, NodeId};

use crate::backend::lock;
use crate::plan::Plan;

/// How long a host thread waits for the next turn to be taken before the order is
/// given up, while the thread whose turn it is runs: it can be slow (a loaded machine),
/// never stuck.
const TURN_PATIENCE: Duration = Duration::from_secs(5);

/// The same while the thread whose turn it is sits in a call that blocks (a
/// synchronize): the run waits for what the order put later, so the runtime has made
/// the synchronize wait for more than the verifier's order does (work another thread
/// queued just before it). The order cannot be kept; waiting longer only delays the run.
const BLOCKED_PATIENCE: Duration = Duration::from_millis(500);

/// The order in which host threads take their turns at the calls it lists, per rank:
/// ranks run side by side, and only threads of one rank share objects, so the order
/// between two ranks' calls is no part of it (forcing one could make a thread wait for
/// a turn behind a call that waits for its own signal).
pub(crate) struct Turns {
    /// Per rank, the calls in turn order.
    orders: Vec<Vec<NodeId>>,
    /// The rank and host thread that issue each call of `orders`.
    owner: HashMap<NodeId, (usize, AgentId)>,
    state: Mutex<TurnState>,
    changed: Condvar,
}

#[derive(Default)]
struct TurnState {
    /// Per rank, the position of the call whose turn it is.
    next: Vec<usize>,
    finished: Vec<AgentId>,
    /// Threads inside a host call (which may block).
    in_call: Vec<AgentId>,
    given_up: bool,
}

impl Turns {
    pub(crate) fn new(plan: &Plan, order: &[NodeId]) -> Self {
        // Calls that are not steps of a script (a write's notify) take no turn.
        let steps: HashSet<NodeId> = plan
            .scripts
            .iter()
            .flatten()
            .flat_map(|script| script.steps.iter().map(|step| step.node))
            .collect();
        let ranks = plan.exec.ranks as usize;
        let mut orders = vec![Vec::new(); ranks];
        let mut owner = HashMap::new();
        for &node in order.iter().filter(|n| steps.contains(n)) {
            let host = plan.exec.node(node).host;
            let rank = plan.exec.agent(host).rank as usize;
            orders[rank].push(node);
            owner.insert(node, (rank, host));
        }
        Turns {
            orders,
            owner,
            state: Mutex::new(TurnState {
                next: vec![0; ranks],
                ..TurnState::default()
            }),
            changed: Condvar::new(),
        }
    }

    /// Blocks until it is `node`'s turn (at once for a call that takes none).
    pub(crate) fn wait(&self, node: NodeId) {
        let Some(&(rank, _)) = self.owner.get(&node) else {
            return;
        };
        let order = &self.orders[rank];
        let mut state = lock(&self.state);
        let mut since = (state.next[rank], Instant::now());
        loop {
            while state.next[rank] < order.len() && state.finished.contains(&self.owner[&order[state.next[rank]]].1) {
                state.next[rank] += 1;
            }
            if state.given_up || order.get(state.next[rank]) == Some(&node) {
                return;
            }
            if since.0 != state.next[rank] {
                since = (state.next[rank], Instant::now());
            }
            let owner_blocked = order
                .get(state.next[rank])
                .is_some_and(|next| state.in_call.contains(&self.owner[next].1));
            let patience = if owner_blocked { BLOCKED_PATIENCE } else { TURN_PATIENCE };
            let Some(left) = patience.checked_sub(since.1.elapsed()) else {
                state.given_up = true;
                self.changed.notify_all();
                return;
            };
            state = self
                .changed
                .wait_timeout(state, left.min(BLOCKED_PATIENCE))
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// `agent` enters or leaves a host call.
    pub(crate) fn in_call(&self, agent: AgentId, inside: bool) {
        let mut state = lock(&self.state);
        if inside {
            state.in_call.push(agent);
        } else {
            state.in_call.retain(|&a| a != agent);
        }
    }

    /// `node` is issued: the next call's thread of its rank may go.
    pub(crate) fn issued(&self, node: NodeId) {
        let Some(&(rank, _)) = self.owner.get(&node) else {
            return;
        };
        let mut state = lock(&self.state);
        if self.orders[rank].get(state.next[rank]) == Some(&node) {
            state.next[rank] += 1;
            self.changed.notify_all();
        }
    }

    /// `agent` makes no more calls (it finished, or failed).
    pub(crate) fn finished(&self, agent: AgentId) {
        lock(&self.state).finished.push(agent);
        self.changed.notify_all();
    }
}
