//! Playing a plan: one OS thread per host thread, each making its calls in issue order.
//! The threads interleave as the OS schedules them, or (`run_in_order`) in an order
//! the verifier names.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use syncguard_analyzer::exec::{AgentId, NodeId};
use syncguard_analyzer::trace::write::TracedCall;

use crate::backend::{Backend, Fault, GroupTasks, Host, ObjectSpec, lock};
use crate::plan::{Call, Plan, Script};
use crate::turns::Turns;

/// What a run did.
#[derive(Debug, Default)]
pub struct RunLog {
    /// Every call made, in the order the host threads made them.
    pub calls: Vec<TracedCall>,
    /// Calls that failed (a host thread stops at its first failure); `None`: a GE task
    /// list or the final drain.
    pub faults: Vec<(Option<NodeId>, Fault)>,
    pub elapsed: Duration,
}

/// Run `plan` on `backend`; returns once every host thread has finished and the
/// backend has drained (or reported a hang).
pub fn run(plan: &Plan, backend: &dyn Backend) -> RunLog {
    play(plan, backend, None)
}

/// [`run`], with the host threads issuing the calls of `order` (nodes of several
/// threads, as `OrderFindings::permuted` lists them) in that order; their other calls
/// go as scheduled (see `Turns`).
pub fn run_in_order(plan: &Plan, backend: &dyn Backend, order: &[NodeId]) -> RunLog {
    play(plan, backend, Some(Turns::new(plan, order)))
}

fn play(plan: &Plan, backend: &dyn Backend, turns: Option<Turns>) -> RunLog {
    let start = Instant::now();
    let shared = Mutex::new(RunLog::default());
    let player = Player {
        plan,
        backend,
        start,
        last_ts: AtomicU64::new(0),
        log: &shared,
        turns,
    };
    // Every main thread counts as running before anything starts: an agent that runs
    // ahead and blocks (a GE task, a rank) must not see the others as not started,
    // which would look like a hang.
    for &main in &plan.mains {
        backend.host_started(main, None);
    }
    std::thread::scope(|scope| {
        for (index, op) in plan.exec.program.ge_ops.iter().enumerate() {
            for rank in 0..plan.exec.ranks {
                if let Err(fault) = backend.group_tasks(GroupTasks { rank, op, index }) {
                    player.fault(None, fault);
                }
            }
        }
        for &main in &plan.mains {
            let player = &player;
            scope.spawn(move || player.play(scope, main, None));
        }
    });
    if let Err(fault) = backend.finish() {
        player.fault(None, fault);
    }
    let mut log = shared.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    log.calls.sort_by_key(|call| (call.ts_ns, call.node));
    log.elapsed = start.elapsed();
    log
}

struct Player<'a, 'e, 'p> {
    plan: &'a Plan<'e, 'p>,
    backend: &'a dyn Backend,
    start: Instant,
    /// The latest `ts` handed out: every call gets a later one.
    last_ts: AtomicU64,
    log: &'a Mutex<RunLog>,
    turns: Option<Turns>,
}

impl<'a> Player<'a, '_, '_> {
    /// Makes `agent`'s calls. `started` (a spawned thread) is told once its first call
    /// has its `ts`.
    fn play<'s>(&'s self, scope: &'s std::thread::Scope<'s, '_>, agent: AgentId, mut started: Option<Sender<()>>)
    where
        'a: 's,
    {
        let Some(Some(script)) = self.plan.scripts.get(agent.index()) else {
            self.backend.host_finished(agent);
            return;
        };
        let mut calls = Vec::with_capacity(script.steps.len());
        if let Err(fault) = self.announce_default_stream(agent, script) {
            self.fault(script.steps.first().map(|s| s.node), fault);
            self.backend.host_finished(agent);
            return;
        }
        for step in &script.steps {
            if let Some(turns) = &self.turns {
                turns.wait(step.node);
            }
            let host = Host {
                rank: script.rank,
                agent,
                node: step.node,
            };
            calls.push(TracedCall {
                node: step.node,
                ts_ns: self.stamp(),
            });
            if let Some(started) = started.take() {
                let _ = started.send(());
            }
            let issued = || {
                if let Some(turns) = &self.turns {
                    turns.issued(step.node);
                }
            };
            let result = match &step.call {
                Call::Create(inst, spec) => self.backend.create(host, *inst, spec),
                Call::Destroy(inst) => self.backend.destroy(host, *inst),
                Call::Enqueue { queue, work } => self.backend.enqueue(host, *queue, work, step.node),
                Call::Host(call) => {
                    self.in_call(agent, true);
                    let result = self.backend.host_call_issued(host, call, &issued);
                    self.in_call(agent, false);
                    result
                }
                Call::Spawn(thread) => {
                    self.spawn(scope, agent, *thread);
                    Ok(())
                }
            };
            issued();
            if let Err(fault) = result {
                self.fault(Some(step.node), fault);
                break;
            }
        }
        lock(self.log).calls.extend(calls);
        if let Some(turns) = &self.turns {
            turns.finished(agent);
        }
        self.backend.host_finished(agent);
    }

    /// Starts host thread `thread` and waits until its first call is stamped (or it
    /// ended without one). A trace has no line for the spawn: the reader starts a thread
    /// where its first line falls among the spawning thread's lines, so no later call
    /// of the spawning thread may be stamped before it.
    fn spawn<'s>(&'s self, scope: &'s std::thread::Scope<'s, '_>, parent: AgentId, thread: AgentId)
    where
        'a: 's,
    {
        self.backend.host_started(thread, Some(parent));
        if self.turns.is_some() {
            // The forced order decides when the thread's calls go.
            scope.spawn(move || self.play(scope, thread, None));
            return;
        }
        let (started, first_call_stamped) = channel();
        scope.spawn(move || self.play(scope, thread, Some(started)));
        // An error only says the thread ended (its sender dropped) without a call.
        let _ = first_call_stamped.recv();
    }

    /// A `ts` later than every one handed out before (ns since the run started).
    fn stamp(&self) -> u64 {
        let now = self.start.elapsed().as_nanos() as u64;
        let previous = self
            .last_ts
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| Some(now.max(last + 1)))
            .expect("the update always succeeds");
        now.max(previous + 1)
    }

    /// A rank's main thread tells the backend about the rank's default stream first.
    fn announce_default_stream(&self, agent: AgentId, script: &Script) -> Result<(), Fault> {
        if !self.plan.mains.contains(&agent) {
            return Ok(());
        }
        let Some(first) = script.steps.first() else {
            return Ok(());
        };
        for &(rank, inst) in &self.plan.default_streams {
            if rank == script.rank {
                let host = Host {
                    rank,
                    agent,
                    node: first.node,
                };
                self.backend.create(host, inst, &ObjectSpec::DefaultStream)?;
            }
        }
        Ok(())
    }

    fn in_call(&self, agent: AgentId, inside: bool) {
        if let Some(turns) = &self.turns {
            turns.in_call(agent, inside);
        }
    }

    fn fault(&self, node: Option<NodeId>, fault: Fault) {
        if fault != Fault::Aborted {
            lock(self.log).faults.push((node, fault));
        }
    }
}

#[cfg(test)]
mod tests {
    use syncguard_analyzer::exec::{InstId, instantiate};
    use syncguard_analyzer::{Sources, check_sync_bytes};

    use super::*;
    use crate::backend::{HostCall, Work};

    /// Records the order of the calls it receives.
    #[derive(Default)]
    struct Recorder {
        events: Mutex<Vec<String>>,
    }

    impl Recorder {
        fn push(&self, event: String) -> Result<(), Fault> {
            lock(&self.events).push(event);
            Ok(())
        }
    }

    impl Backend for Recorder {
        fn create(&self, host: Host, _: InstId, _: &ObjectSpec) -> Result<(), Fault> {
            self.push(format!("call from rank {}", host.rank))
        }
        fn destroy(&self, host: Host, _: InstId) -> Result<(), Fault> {
            self.push(format!("call from rank {}", host.rank))
        }
        fn enqueue(&self, _: Host, _: InstId, _: &Work, node: NodeId) -> Result<(), Fault> {
            self.push(format!("enqueue {}", node.0))
        }
        fn host_call(&self, host: Host, _: &HostCall) -> Result<(), Fault> {
            self.push(format!("call from rank {}", host.rank))
        }
        fn group_tasks(&self, tasks: GroupTasks<'_>) -> Result<(), Fault> {
            self.push(format!("call: GE tasks of rank {}", tasks.rank))
        }
        fn host_started(&self, agent: AgentId, _: Option<AgentId>) {
            lock(&self.events).push(format!("started {}", agent.0));
        }
        fn finish(&self) -> Result<(), Fault> {
            Ok(())
        }
    }

    #[test]
    fn every_rank_counts_as_started_before_any_call_or_ge_task() {
        let text = "ranks 4;
            let s = aclrtCreateStream();
            aclrtSynchronizeStream(s);
            aclrtDestroyStream(s);
            op MatmulAllReduce attrs(group) {
                KernelLaunchInfo::CreateHcomWaitTask(context, \"group\", stream_id: 1);
                KernelLaunchInfo::CreateHcomRecordTask(context, \"group\", stream_id: 0);
            }";
        let checked = check_sync_bytes(&mut Sources::default(), "four.sync", text.as_bytes());
        assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
        let exec = instantiate(&checked.program, Vec::new());
        let plan = Plan::new(&exec);
        for _ in 0..20 {
            let recorder = Recorder::default();
            run(&plan, &recorder);
            let events = lock(&recorder.events).clone();
            let started = events.iter().take_while(|e| e.starts_with("started")).count();
            assert_eq!(started, 4, "every main thread first: {events:?}");
            assert_eq!(events.iter().filter(|e| e.starts_with("call: GE")).count(), 4);
        }
    }

    #[test]
    fn run_in_order_issues_the_listed_calls_in_that_order() {
        let text = "let a = aclrtCreateStream();
            let b = aclrtCreateStream();
            thread w1 { kernel(a, \"k\"); kernel(a, \"k\"); }
            thread w2 { kernel(b, \"k\"); kernel(b, \"k\"); }";
        let checked = check_sync_bytes(&mut Sources::default(), "two.sync", text.as_bytes());
        let exec = instantiate(&checked.program, Vec::new());
        let plan = Plan::new(&exec);
        let kernels = |thread: &str| -> Vec<NodeId> {
            (0..exec.nodes.len() as u32)
                .map(NodeId)
                .filter(|&n| exec.agent_name(exec.node(n).host).ends_with(thread))
                .filter(|&n| matches!(exec.node(n).op.kind, syncguard_analyzer::model::OpKind::Kernel { .. }))
                .collect()
        };
        let (w1, w2) = (kernels("w1"), kernels("w2"));
        // Alternating, second thread first: the opposite of the walk's order.
        let order = [w2[0], w1[0], w2[1], w1[1]];
        for _ in 0..10 {
            let recorder = Recorder::default();
            run_in_order(&plan, &recorder, &order);
            let enqueued: Vec<String> = lock(&recorder.events)
                .iter()
                .filter(|e| e.starts_with("enqueue"))
                .cloned()
                .collect();
            let expected: Vec<String> = order.iter().map(|n| format!("enqueue {}", n.0)).collect();
            assert_eq!(enqueued, expected);
        }
    }
}
