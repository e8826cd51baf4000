//! Vector clocks over the simulator's agents: what each agent knows has happened, by the
//! synchronization it actually performed.

use std::sync::Arc;

use syncguard_analyzer::exec::NodeId;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VClock(Vec<u32>);

impl VClock {
    pub fn new(agents: usize) -> Self {
        VClock(vec![0; agents])
    }

    /// Starts the agent's next op; returns its epoch.
    pub fn tick(&mut self, agent: usize) -> u32 {
        self.0[agent] += 1;
        self.0[agent]
    }

    pub fn join(&mut self, other: &VClock) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Whether the op `epoch` of `agent` happened before whatever this clock's owner does next.
    pub fn knows(&self, epoch: Epoch) -> bool {
        self.0[epoch.agent] >= epoch.time
    }
}

/// One op of one agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Epoch {
    pub agent: usize,
    pub time: u32,
    /// The call, for reports (`None`: a GE task).
    pub node: Option<NodeId>,
}

/// A signal as it was set: the setter's clock (what the waiter learns) and the call.
#[derive(Clone, Debug)]
pub struct Signal {
    pub clock: Arc<VClock>,
    pub node: Option<NodeId>,
}
