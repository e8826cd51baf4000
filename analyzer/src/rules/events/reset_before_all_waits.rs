use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{InstId, NodeId};
use crate::hb::EventCycle;
use crate::rules::declare_rule;
use crate::smt::schedule;

declare_rule! {
    /// ## What it detects
    /// `aclrtResetEvent(ev, s)` that can execute before another stream's
    /// `aclrtStreamWaitEvent` on the same record of `ev` has executed: nothing orders
    /// that wait before the reset (the reset is an asynchronous op on its own stream).
    /// Also the reset of a later record's cycle that can run before a wait for an
    /// earlier record: the event is one hardware flag, so the later reset clears what
    /// the earlier record set.
    ///
    /// ## Why is this a bug
    /// The reset clears the event. A wait that runs after it sees an unrecorded event
    /// and blocks its stream forever. This is the documented hazard of resetting an
    /// event that several streams wait on: the CANN docs discourage it, and when it is
    /// done the reset must follow every wait.
    ///
    /// ## Example
    /// ```text
    /// aclrtRecordEvent(ev, s1);
    /// aclrtStreamWaitEvent(s2, ev);
    /// aclrtResetEvent(ev, s2);        // s3's wait may not have run yet
    /// aclrtStreamWaitEvent(s3, ev);   // s3 can wait forever
    /// ```
    ///
    /// ## Fix
    /// Reset only after every waiting stream has passed its wait: synchronize those
    /// streams (or check `aclrtQueryEventWaitStatus`) first, reset on the last waiting
    /// stream after a wait that follows the others, or give each waiting stream its own
    /// event.
    ///
    /// Method: candidates from happens-before over each concrete execution (vector
    /// clocks: the wait is not ordered before the reset); each is then decided by z3 over
    /// integer op times (program, issue, synchronize and match order, plus record <
    /// reset < wait with no other record of the cycle landing between the reset and the
    /// wait). A candidate no schedule produces is dropped; a confirmed one carries the
    /// witness order; an undecided one is kept, with SG004. Of a later cycle's resets,
    /// the first on each stream is asked about (the ones after it run after it).
    pub struct ResetBeforeAllWaits;
    code = "SG103",
    name = "event-reset-before-all-waits",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let hb = analysis.hb;
    let mut budget = schedule::MAX_CONFIRMED;
    let cycles = &hb.matching.event_cycles;
    let mut by_event: Vec<(InstId, Vec<&EventCycle>)> = Vec::new();
    for cycle in cycles {
        let Some(event) = cycle.event else { continue };
        match by_event.iter_mut().find(|(known, _)| *known == event) {
            Some((_, list)) => list.push(cycle),
            None => by_event.push((event, vec![cycle])),
        }
    }
    for (event, cycles) in by_event {
        let records: Vec<NodeId> = cycles.iter().flat_map(|cycle| cycle.records.iter().copied()).collect();
        let later = later_resets(analysis, &cycles);
        for (cycle, later) in cycles.iter().zip(&later) {
            check_cycle(analysis, event, cycle, later, &records, &mut budget, out);
        }
    }
}

/// For each cycle of one event, the resets of the cycles after it: the first on each
/// agent. A later reset on that agent runs after it, so if the first is ordered after a
/// wait, every later one is too.
fn later_resets(analysis: &Analysis, cycles: &[&EventCycle]) -> Vec<Vec<NodeId>> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let mut later: Vec<Vec<NodeId>> = vec![Vec::new(); cycles.len()];
    let mut first_on_agent: Vec<NodeId> = Vec::new();
    for (position, cycle) in cycles.iter().enumerate().rev() {
        later[position] = first_on_agent.clone();
        if let Some(reset) = cycle.reset.filter(|&reset| hb.executes(reset)) {
            let agent = exec.node(reset).agent;
            first_on_agent.retain(|&other| exec.node(other).agent != agent);
            first_on_agent.push(reset);
        }
    }
    later
}

/// Every reset that can clear the flag before a wait of `cycle` runs: the cycle's own
/// reset, and a later cycle's (whose record sets the flag, and whose reset clears it,
/// while this cycle's wait has not run yet).
fn check_cycle(
    analysis: &Analysis,
    event: InstId,
    cycle: &EventCycle,
    later: &[NodeId],
    records: &[NodeId],
    budget: &mut usize,
    out: &mut Vec<Diagnostic>,
) {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let Some(&record) = cycle.records.first() else {
        return;
    };
    let own = cycle.reset.filter(|&reset| hb.executes(reset));
    for &wait in &cycle.waits {
        if !hb.executes(wait) {
            continue;
        }
        let mut agents_reported = Vec::new();
        for reset in own.into_iter().chain(later.iter().copied()) {
            let agent = exec.node(reset).agent;
            if hb.happens_before(wait, reset) || agents_reported.contains(&agent) {
                continue;
            }
            agents_reported.push(agent);
            let diagnostic = diagnose(analysis, event, record, wait, reset, Some(reset) != own);
            // The wait hangs when the reset clears the flag after the record it waits for
            // and no record of the event sets it again before the wait runs.
            let order = [record, reset, wait];
            let again: Vec<_> = records
                .iter()
                .filter(|&&other| other != record)
                .map(|&other| (reset, other, wait))
                .collect();
            let hazard = schedule::Hazard {
                order: &order,
                not_between: &again,
            };
            schedule::confirm(analysis, &hazard, diagnostic, budget, out);
        }
    }
}

fn diagnose(
    analysis: &Analysis,
    event: InstId,
    record: NodeId,
    wait: NodeId,
    reset: NodeId,
    later: bool,
) -> Diagnostic {
    let exec = analysis.exec;
    let waiter = exec.agent_name(exec.node(wait).agent);
    let resetter = exec.agent_name(exec.node(reset).agent);
    let name = exec.instance_name(event);
    let (message, help) = if later {
        (
            format!(
                "{waiter} can wait forever: this reset of {name} on {resetter}, which ends a later record's cycle, can run before {waiter}'s wait for an earlier record"
            ),
            format!(
                "order {waiter}'s wait before this reset (record an event after the wait and wait on it before the reset, or synchronize {waiter}), or use another event for the later cycle"
            ),
        )
    } else {
        (
            format!("{waiter} can wait forever: this reset of {name} on {resetter} can run before its wait"),
            format!(
                "reset {name} only after every waiting stream has passed its wait (synchronize {waiter} first), or give each waiting stream its own event"
            ),
        )
    };
    let diagnostic = Diagnostic::new(&ResetBeforeAllWaits::INFO, analysis.span(reset), message)
        .with_label(format!("nothing orders {waiter}'s wait before this reset"))
        .with_related(
            analysis.span(wait),
            format!("{waiter} waits here; if the reset ran first, it never returns"),
        );
    let diagnostic = if later {
        diagnostic.with_related(
            analysis.span(record),
            "the record the wait is for; the flag it sets is cleared by the later cycle's reset",
        )
    } else {
        diagnostic.with_related(analysis.span(record), "the record both waits are for")
    };
    diagnostic.with_help(help)
}
