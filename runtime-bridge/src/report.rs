//! Turning what a run observed into diagnostics, pointing at the calls involved, so
//! that a run-time hang or race renders like any static finding.
//!
//! A verified program should never produce one: each is a disagreement between the
//! verifier and the runtime, and says so.

use syncguard_analyzer::exec::{Execution, NodeId};
use syncguard_analyzer::hb::FlagKey;
use syncguard_analyzer::rules::{self, RuleInfo};
use syncguard_analyzer::source::Span;
use syncguard_analyzer::{Diagnostic, Severity};

use syncguard_analyzer::model::OpKind;

use crate::backend::{Fault, Timeout};
use crate::sim::{Blocked, Observed, ObservedRace, Sim, WaitOn};

/// Diagnostics for everything the simulator observed, in a deterministic order.
pub fn sim_findings(exec: &Execution, sim: &Sim) -> Vec<Diagnostic> {
    let reporter = Reporter { exec, sim };
    let mut diagnostics: Vec<Diagnostic> = sim
        .observed()
        .iter()
        .filter_map(|observed| reporter.diagnostic(observed))
        .collect();
    Diagnostic::sort(&mut diagnostics);
    diagnostics.dedup();
    diagnostics
}

/// `file:line:col: aclrtCreateStream returned 107000: …` for a backend's failure.
pub fn fault_line(
    exec: &Execution,
    sources: &syncguard_analyzer::Sources,
    node: Option<NodeId>,
    fault: &Fault,
) -> String {
    match node {
        Some(node) => {
            let span = &exec.node(node).op.span;
            let file = sources.get(span.file);
            let (line, col) = file.line_col(span.range.start);
            format!("{}:{line}:{col}: {fault}", file.path)
        }
        None => fault.to_string(),
    }
}

struct Reporter<'a, 'p> {
    exec: &'a Execution<'p>,
    sim: &'a Sim,
}

fn rule(code: &str) -> &'static RuleInfo {
    rules::find(code).expect("the run-time findings use registered rule codes")
}

impl Reporter<'_, '_> {
    fn diagnostic(&self, observed: &Observed) -> Option<Diagnostic> {
        let diagnostic = match observed {
            Observed::Hang(blocked) => self.hang(blocked)?,
            Observed::Timeout { blocked, timeout } => {
                let first = self.blocked_span(blocked)?;
                Diagnostic::new(
                    rule("SG501"),
                    first,
                    format!(
                        "{} timed out after {timeout}: {}",
                        self.agent(blocked.agent),
                        self.waits_on(&blocked.on)
                    ),
                )
                .with_label(format!("waited here for {}", self.waits_on(&blocked.on)))
            }
            Observed::Race(race) => self.race(race)?,
            Observed::LostSignal { key, first, second } => {
                let (first, second) = ((*first)?, (*second)?);
                Diagnostic::new(
                    rule("SG303"),
                    self.span(second),
                    format!(
                        "{} was set again before a wait consumed it: one signal is lost, and a later wait for it blocks",
                        self.flag(key)
                    ),
                )
                .with_label(format!("{} sets it again", self.exec.describe(second)))
                .with_related(self.span(first), format!("{} set it first", self.exec.describe(first)))
                .with_help("wait for the first signal (or use another notify index) before recording again")
            }
        };
        Some(self.observed_at_run_time(diagnostic))
    }

    fn observed_at_run_time(&self, diagnostic: Diagnostic) -> Diagnostic {
        diagnostic
            .with_severity(Severity::Error)
            .with_note("observed at run time by the simulator")
    }

    fn hang(&self, blocked: &[Blocked]) -> Option<Diagnostic> {
        // A stuck device wait is the cause; a host synchronize on its queue only shows it.
        let mut blocked: Vec<&Blocked> = blocked.iter().collect();
        blocked.sort_by_key(|b| matches!(b.on, WaitOn::Queue(_)));
        let (first, rest) = blocked.split_first()?;
        let mut diagnostic = Diagnostic::new(
            rule("SG501"),
            self.blocked_span(first)?,
            format!(
                "the run hung: {} waits forever on {}",
                self.agent(first.agent),
                self.waits_on(&first.on)
            ),
        )
        .with_label(format!("{} is stuck here", self.agent(first.agent)));
        if let Some(timeout) = first.node.and_then(|node| self.timeout(node)) {
            diagnostic = diagnostic.with_note(format!(
                "on the device this wait fails after its {timeout} timeout (a wait timeout error) instead of hanging"
            ));
        }
        for other in rest {
            if let Some(span) = self.blocked_span(other) {
                diagnostic = diagnostic.with_related(
                    span,
                    format!("{} waits here on {}", self.agent(other.agent), self.waits_on(&other.on)),
                );
            }
        }
        Some(
            diagnostic
                .with_help("every agent that could still run was blocked; the calls above are where each one waited"),
        )
    }

    fn race(&self, race: &ObservedRace) -> Option<Diagnostic> {
        // Shown in program order, whichever ran first, so that reports are reproducible.
        let mut accesses = [
            (race.first.node?, race.first_write),
            (race.second.node?, race.second_write),
        ];
        accesses.sort();
        let [(first, first_write), (second, second_write)] = accesses;
        let kind = |write: bool| if write { "writes" } else { "reads" };
        Some(
            Diagnostic::new(
                rule("SG601"),
                self.span(second),
                format!(
                    "bytes {}..{} of {} are accessed by two agents with no synchronization between them",
                    race.start,
                    race.end,
                    self.exec.memory_name(race.memory)
                ),
            )
            .with_label(format!("{} {} them", self.exec.describe(second), kind(second_write)))
            .with_related(
                self.span(first),
                format!("{} {} them, unordered", self.exec.describe(first), kind(first_write)),
            )
            .with_help("order the two accesses with an event, a notify or a host synchronize"),
        )
    }

    /// The timeout a blocking call was given, if it has a finite one.
    fn timeout(&self, node: NodeId) -> Option<Timeout> {
        let node = self.exec.node(node);
        let timeout = match &node.op.kind {
            OpKind::EventWait { timeout, .. }
            | OpKind::NotifyWait { timeout, .. }
            | OpKind::ChannelNotifyWait { timeout, .. }
            | OpKind::ThreadNotifyWait { timeout, .. }
            | OpKind::EventSynchronize { timeout, .. }
            | OpKind::StreamSynchronize { timeout, .. } => timeout.as_ref()?,
            _ => return None,
        };
        let value = self.exec.host_env(node.rank(self.exec)).eval(&timeout.value).ok()?;
        let timeout = Timeout {
            value,
            unit: timeout.unit,
        };
        timeout.duration().map(|_| timeout)
    }

    fn span(&self, node: NodeId) -> Span {
        self.exec.node(node).op.span.clone()
    }

    /// Where a blocked agent waits: its call, or its GE op's declaration for a GE task.
    fn blocked_span(&self, blocked: &Blocked) -> Option<Span> {
        match blocked.node {
            Some(node) => Some(self.span(node)),
            None => {
                let (_, op, _) = self.sim.ge_agent(blocked.agent)?;
                Some(self.exec.program.ge_ops.get(op)?.span.clone())
            }
        }
    }

    fn agent(&self, agent: usize) -> String {
        self.sim.agent_name(self.exec, agent)
    }

    fn waits_on(&self, on: &WaitOn) -> String {
        match on {
            WaitOn::Event { event, .. } => format!("a record of event {}", self.exec.instance_name(*event)),
            WaitOn::Flag(key) => self.flag(key),
            WaitOn::Group { rank, group } if self.exec.ranks > 1 => {
                format!("a Record task of group `{group}` (rank {rank})")
            }
            WaitOn::Group { group, .. } => format!("a Record task of group `{group}`"),
            WaitOn::Queue(agent) => format!("everything issued to {} to finish", self.agent(*agent)),
        }
    }

    fn flag(&self, key: &FlagKey) -> String {
        match key {
            FlagKey::Acl(notify) => format!("notify {}", self.exec.instance_name(*notify)),
            FlagKey::Channel { dst, src, index } => {
                format!("notify {index} of rank {dst} (set by rank {src})")
            }
            FlagKey::Thread { thread, index } => {
                format!("notify {index} of HCCL thread {}", self.exec.instance_name(*thread))
            }
        }
    }
}
