//! One device agent (stream, HCCL thread, GE stream): executes its queue in FIFO order.

use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;
use rand::rngs::StdRng;
use syncguard_analyzer::exec::NodeId;
use syncguard_analyzer::hb::FlagKey;

use super::clock::{Epoch, Signal, VClock};
use super::state::{Status, Task, TaskWork, WaitOn};
use super::{Shared, agent_rng, is_slow, pause};
use crate::backend::{CopyVia, Fault, Timeout, Work, fill_byte};
use syncguard_analyzer::model::EventSemantics;

/// The agent's thread: take a task, run it, publish the clock; until the run stops.
pub(super) fn run(shared: &Shared, agent: usize) {
    let mut clock = VClock::new(shared.tables.agents);
    // Device agents draw from a stream of their own, apart from any host's.
    let mut rng = agent_rng(shared.options.seed.rotate_left(17), agent);
    let slow = is_slow(shared.options.seed, agent, shared.tables.agents);
    while let Some(task) = next_task(shared, agent) {
        pause(&mut rng, shared.options.jitter, slow).apply();
        clock.join(&task.issued);
        let time = clock.tick(agent);
        let epoch = Epoch {
            agent,
            time,
            node: task.node,
        };
        let mut worker = Worker {
            shared,
            agent,
            clock: &mut clock,
            epoch,
            rng: &mut rng,
        };
        if worker.execute(&task).is_err() {
            return;
        }
        complete(shared, agent, task.node, &clock);
    }
}

fn next_task(shared: &Shared, agent: usize) -> Option<Task> {
    let mut state = shared.lock();
    loop {
        if state.aborted {
            return None;
        }
        if let Some(task) = state.queues[agent].tasks.pop_front() {
            state.status[agent] = Status::Running;
            return Some(task);
        }
        if state.status[agent] != Status::Idle {
            state.status[agent] = Status::Idle;
            if state.stuck() {
                state.declare_hang();
                shared.abort(&mut state);
                return None;
            }
        }
        state = shared.wakers[agent].wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

/// The task is done: its clock is what a host synchronize on this queue learns.
fn complete(shared: &Shared, agent: usize, node: Option<NodeId>, clock: &VClock) {
    let mut state = shared.lock();
    state.executed += 1;
    let queue = &mut state.queues[agent];
    queue.completed += 1;
    queue.executed_nodes.extend(node);
    let published = Arc::new(clock.clone());
    if let Some(wanted) = queue.snapshots.get_mut(&queue.completed) {
        *wanted = Some(published.clone());
    }
    queue.clock = published;
    shared.changed(&mut state);
    shared.progress.notify_all();
}

struct Worker<'a> {
    shared: &'a Shared,
    agent: usize,
    clock: &'a mut VClock,
    epoch: Epoch,
    rng: &'a mut StdRng,
}

impl Worker<'_> {
    fn signal(&self) -> Signal {
        Signal {
            clock: Arc::new(self.clock.clone()),
            node: self.epoch.node,
        }
    }

    fn execute(&mut self, task: &Task) -> Result<(), Fault> {
        let tables = &self.shared.tables;
        match &task.work {
            TaskWork::Api(work) => match work {
                Work::RecordEvent(event) => self.record_event(*event, task.generation),
                Work::WaitEvent { event, timeout } => {
                    let timeout = timeout.or_else(|| self.default_timeout());
                    self.wait_event(*event, task.generation, timeout)?;
                }
                Work::ResetEvent(event) => {
                    let mut state = self.shared.lock();
                    state.events.entry(*event).or_default().flag = None;
                }
                Work::RecordNotify(notify) => self.shared.set_flag(FlagKey::Acl(*notify), self.signal()),
                Work::WaitNotify { notify, timeout } => self.take_flag(FlagKey::Acl(*notify), *timeout)?,
                Work::ChannelRecord { channel, index } => {
                    self.shared
                        .set_flag(tables.channel_flag(*channel, *index, true), self.signal());
                }
                Work::ChannelWait {
                    channel,
                    index,
                    timeout,
                } => {
                    self.take_flag(tables.channel_flag(*channel, *index, false), *timeout)?;
                }
                Work::ThreadRecord { target, index } => {
                    let key = FlagKey::Thread {
                        thread: *target,
                        index: *index as i64,
                    };
                    self.shared.set_flag(key, self.signal());
                }
                Work::ThreadWait { index, timeout } => {
                    let key = FlagKey::Thread {
                        thread: task.queue,
                        index: *index as i64,
                    };
                    self.take_flag(key, *timeout)?;
                }
                Work::Kernel { accesses, .. } | Work::SuperKernel { accesses, .. } => {
                    for access in accesses {
                        self.shared.access(access, self.epoch, self.clock, self.fill())?;
                    }
                    self.occupy();
                }
                Work::Copy { dst, src, via } => {
                    self.shared.access(src, self.epoch, self.clock, 0)?;
                    self.shared.access(dst, self.epoch, self.clock, 0)?;
                    self.shared.copy_bytes(dst, src)?;
                    self.occupy();
                    if let CopyVia::Write {
                        channel,
                        notify: Some(index),
                    } = via
                    {
                        self.shared
                            .set_flag(tables.channel_flag(*channel, *index, true), self.signal());
                    }
                }
                Work::Fence { .. } => {}
            },
            TaskWork::GroupRecord(group) => {
                let rank = tables.agent_rank[self.agent];
                let mut state = self.shared.lock();
                let signal = self.signal();
                let records = state.groups.entry((rank, group.clone())).or_default();
                records.push((self.agent, signal));
                self.shared.changed(&mut state);
            }
            TaskWork::GroupWait(group) => {
                let rank = tables.agent_rank[self.agent];
                let key = (rank, group.clone());
                let on = WaitOn::Group {
                    rank,
                    group: group.clone(),
                };
                // Any Record of the group that has run on another stream wakes it, and
                // stays seen: Records wake Waits, they are not consumed (as SG202 models).
                let agent = self.agent;
                let signal = self.shared.block(self.agent, None, on, None, |state| {
                    let records = state.groups.get(&key)?;
                    records
                        .iter()
                        .find(|(by, _)| *by != agent)
                        .map(|(_, signal)| signal.clone())
                })?;
                self.clock.join(&signal.clock);
            }
            TaskWork::GroupKernel => self.occupy(),
        }
        Ok(())
    }

    fn record_event(&self, event: syncguard_analyzer::exec::InstId, generation: u64) {
        let signal = self.signal();
        let mut state = self.shared.lock();
        let entry = state.events.entry(event).or_default();
        if self.shared.tables.event_semantics[event.index()] != Some(EventSemantics::Capture) {
            entry.flag = Some(signal.clone());
        }
        entry.completed.insert(generation, signal);
        self.shared.changed(&mut state);
    }

    /// A sync-kind wait blocks until the flag is set; a capture-kind wait until the
    /// record it bound to at issue has executed (no record issued: a no-op).
    fn wait_event(
        &mut self,
        event: syncguard_analyzer::exec::InstId,
        generation: u64,
        timeout: Option<Timeout>,
    ) -> Result<(), Fault> {
        let capture = self.shared.tables.event_semantics[event.index()] == Some(EventSemantics::Capture);
        if capture && generation == 0 {
            return Ok(());
        }
        let on = WaitOn::Event {
            event,
            generation: capture.then_some(generation),
        };
        let signal = self.shared.block(self.agent, self.epoch.node, on, timeout, |state| {
            let entry = state.events.entry(event).or_default();
            if capture {
                entry.completed.get(&generation).cloned()
            } else {
                entry.flag.clone()
            }
        })?;
        self.clock.join(&signal.clock);
        Ok(())
    }

    fn take_flag(&mut self, key: FlagKey, timeout: Option<Timeout>) -> Result<(), Fault> {
        let timeout = timeout.or_else(|| self.default_timeout());
        let signal = self
            .shared
            .block(self.agent, self.epoch.node, WaitOn::Flag(key), timeout, |state| {
                state.flags.remove(&key)
            })?;
        self.clock.join(&signal.clock);
        Ok(())
    }

    /// The rank's process-wide wait timeout, for waits without one of their own.
    fn default_timeout(&self) -> Option<Timeout> {
        let rank = self.shared.tables.agent_rank[self.agent];
        self.shared.lock().wait_timeout.get(&rank).copied()
    }

    /// The byte a kernel writes: its call, so that copies visibly move data.
    fn fill(&self) -> u8 {
        self.epoch.node.map_or(0xff, fill_byte)
    }

    /// Kernels and copies take time.
    fn occupy(&mut self) {
        let max = self.shared.options.kernel_time;
        if !max.is_zero() {
            std::thread::sleep(Duration::from_nanos(self.rng.random_range(0..=max.as_nanos() as u64)));
        }
    }
}
