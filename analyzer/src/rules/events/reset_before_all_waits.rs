use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use crate::smt::schedule;

declare_rule! {
    /// ## What it detects
    /// `aclrtResetEvent(ev, s)` that can execute before another stream's
    /// `aclrtStreamWaitEvent` on the same record of `ev` has executed: nothing orders
    /// that wait before the reset (the reset is an asynchronous op on its own stream).
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
    /// witness order; an undecided one is kept, with SG004.
    pub struct ResetBeforeAllWaits;
    code = "SG103",
    name = "event-reset-before-all-waits",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let mut budget = schedule::MAX_CONFIRMED;
    for cycle in &hb.matching.event_cycles {
        let (Some(reset), Some(event)) = (cycle.reset, cycle.event) else {
            continue;
        };
        if cycle.records.is_empty() || !hb.executes(reset) {
            continue;
        }
        for &wait in &cycle.waits {
            if !hb.executes(wait) || hb.happens_before(wait, reset) {
                continue;
            }
            let waiter = exec.agent_name(exec.node(wait).agent);
            let resetter = exec.agent_name(exec.node(reset).agent);
            let name = exec.instance_name(event);
            let diagnostic = Diagnostic::new(
                    &ResetBeforeAllWaits::INFO,
                    analysis.span(reset),
                    format!("{waiter} can wait forever: this reset of {name} on {resetter} can run before its wait"),
                )
                .with_label(format!("nothing orders {waiter}'s wait before this reset"))
                .with_related(analysis.span(wait), format!("{waiter} waits here; if the reset ran first, it never returns"))
                .with_related(analysis.span(cycle.records[0]), "the record both waits are for")
                .with_help(format!(
                    "reset {name} only after every waiting stream has passed its wait (synchronize {waiter} first), or give each waiting stream its own event"
                ));
            // The wait hangs when the reset clears the record first and no other record
            // of the cycle sets the event again before the wait runs.
            let order = [cycle.records[0], reset, wait];
            let again: Vec<_> = cycle.records[1..].iter().map(|&r| (reset, r, wait)).collect();
            let hazard = schedule::Hazard {
                order: &order,
                not_between: &again,
            };
            schedule::confirm(analysis, &hazard, diagnostic, &mut budget, out);
        }
    }
}
