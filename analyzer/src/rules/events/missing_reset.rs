use std::collections::HashMap;

use super::{observers, spelled, stream_arg};
use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, Fix, FixEdit, Severity};
use crate::exec::{Action, InstId, NodeId};
use crate::hb::EventCycle;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A sync-kind event (`aclrtCreateEvent`, `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)`)
    /// that is recorded and waited on, then recorded again with no `aclrtResetEvent`
    /// between. Three forms:
    /// - re-recorded in the same reset cycle after a stream wait or a host
    ///   `aclrtSynchronizeEvent` observed the previous record, with stream waits on it
    ///   following (typically a loop whose body records and waits but never resets);
    /// - reset, but the reset (an asynchronous op on the waiting stream) is not ordered
    ///   before the next record, while a stream wait for that next record can run after
    ///   the reset: in execution order there is no reset between the two records;
    /// - reset, but the reset is not ordered before a wait for the next record: that
    ///   wait can run while the flag is still set by the previous record and pass at
    ///   once (seen by running such programs on the simulator);
    /// - left set at exit: the last record is waited on (both run) and never reset,
    ///   and the event is never destroyed, so it outlives this code (a persistent
    ///   event that the next call records and waits on again). This form is a
    ///   warning. Destroying a set event is fine, so a destroyed event is not
    ///   reported; SG107 reports the missing destroy as a leak as well.
    ///
    /// A host `aclrtSynchronizeEvent` does not read the flag: the runtime keeps the
    /// event's latest record and waits for that record's task (a reset does not clear
    /// it; with no record it returns at once). So it is never misled by a stale or
    /// cleared flag, and an event only synchronized on by the host needs no reset.
    ///
    /// ## Why is this a bug
    /// A sync-kind event is a hardware flag: a record sets it, a wait blocks until it is
    /// set, and only a reset clears it. The CANN docs require a reset promptly after the
    /// wait ("the record allocates the event resource"). Without one the flag is still
    /// set when the event is recorded again, so the next wait passes at once instead of
    /// waiting for the new record: the consumer runs while the producer is still
    /// writing. When the reset runs after the new record instead, it clears that record
    /// and the next wait blocks forever.
    ///
    /// ## Example
    /// ```text
    /// for step in 0..2 {
    ///     kernel(s1, "matmul", writes: [c]);
    ///     aclrtRecordEvent(ev, s1);
    ///     aclrtStreamWaitEvent(s2, ev);
    ///     // missing: aclrtResetEvent(ev, s2);
    ///     kernel(s2, "relu", reads: [c]);   // step 1: runs before matmul is done
    /// }
    /// ```
    ///
    /// ## Fix
    /// Reset the event on the waiting stream right after its wait
    /// (`aclrtResetEvent(ev, s2)`), and make sure the reset has run before the event is
    /// recorded again (`aclrtSynchronizeStream(s2)` before the next step's record), or
    /// give each step its own event.
    ///
    /// Method: reset cycles from the signal matching (issue order) for the first and
    /// last forms; happens-before over the concrete execution for the second and third.
    pub struct MissingReset;
    code = "SG102",
    name = "event-missing-reset",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let cycles = &analysis.hb.matching.event_cycles;
    let mut last_cycle: HashMap<InstId, usize> = HashMap::new();
    for (index, cycle) in cycles.iter().enumerate() {
        let Some(event) = cycle.event else {
            continue;
        };
        let mut rerecorded = false;
        for i in 1..cycle.records.len() {
            // A set flag misleads only the stream waits that follow: a host synchronize
            // waits for the latest record whatever the flag says.
            let waits_follow = cycle.waits.iter().any(|&wait| wait > cycle.records[i]);
            if let Some(&observer) = observers(analysis.exec, cycle, i).last().filter(|_| waits_follow) {
                out.push(recorded_while_set(analysis, event, cycle, i, observer));
                rerecorded = true;
            }
        }
        if let Some(previous) = last_cycle.insert(event, index) {
            out.extend(reset_after_next_record(analysis, event, &cycles[previous], cycle));
            out.extend(wait_before_previous_reset(analysis, event, &cycles[previous], cycle));
        }
        if !rerecorded && let Some(diagnostic) = left_set(analysis, event, cycle) {
            out.push(diagnostic);
        }
    }
}

/// `cycle.records[i]` is issued after `observer` saw `cycle.records[i - 1]`, with no reset.
fn recorded_while_set(
    analysis: &Analysis,
    event: InstId,
    cycle: &EventCycle,
    i: usize,
    observer: NodeId,
) -> Diagnostic {
    let exec = analysis.exec;
    let obj = exec.instance(event).obj;
    let name = exec.instance_name(event);
    let record = cycle.records[i];
    let waiting = match exec.node(observer).action {
        Action::EventWait(_) => exec.node(observer).agent,
        _ => exec.node(record).agent,
    };
    let reset = spelled(exec.program, obj, "aclrtResetEvent");
    let stream = stream_arg(exec, waiting, obj);
    let what = match exec.node(observer).action {
        Action::EventWait(_) => "waited on it",
        _ => "synchronized on it",
    };
    let seen = match exec.node(observer).action {
        Action::EventWait(_) => "waited on",
        _ => "synchronized on",
    };
    let consequence = "so the waits that follow pass at once instead of waiting for this record";
    let mut diagnostic = Diagnostic::new(
        &MissingReset::INFO,
        analysis.span(record),
        format!(
            "event {name} is recorded again while still set: nothing reset it after the previous record was {seen}, {consequence}"
        ),
    );
    let previous = analysis.span(cycle.records[i - 1]);
    diagnostic = if previous == analysis.span(record) {
        diagnostic.with_label(format!(
            "the next loop iteration records it again, with no reset since it was {seen}"
        ))
    } else {
        diagnostic
            .with_label("recorded again in the same reset cycle")
            .with_related(previous, format!("the previous record of {name}"))
    };
    diagnostic = diagnostic
        .with_related(
            analysis.span(observer),
            format!(
                "{} {what}; the event is never reset after it",
                analysis.describe(observer)
            ),
        )
        .with_help(format!(
            "call {reset}({name}, {stream}) right after the {}, and let it run before {name} is recorded again",
            if seen == "waited on" { "wait" } else { "synchronize" }
        ));
    // A reset on the waiting stream is the mechanical part; where a host synchronize
    // observed the record, which stream should reset is the author's choice.
    if matches!(exec.node(observer).action, Action::EventWait(_)) {
        diagnostic = diagnostic.with_fix(Fix {
            title: format!("Insert {reset}({name}, {stream}) after the wait"),
            edits: vec![FixEdit::InsertCall {
                after: analysis.span(observer),
                call: format!("{reset}({name}, {stream})"),
            }],
        });
    }
    diagnostic
}

/// The reset closing `previous` can run after the first record of `cycle`, and a wait
/// of `cycle` can run after the reset: the reset clears the new record and that wait hangs.
fn reset_after_next_record(
    analysis: &Analysis,
    event: InstId,
    previous: &EventCycle,
    cycle: &EventCycle,
) -> Option<Diagnostic> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let reset = previous.reset?;
    let record = *cycle.records.first()?;
    if !hb.executes(reset) || !hb.executes(record) || hb.happens_before(reset, record) {
        return None;
    }
    let wait = cycle
        .waits
        .iter()
        .copied()
        .find(|&wait| hb.executes(wait) && !hb.happens_before(wait, reset))?;
    let obj = exec.instance(event).obj;
    let name = exec.instance_name(event);
    let resetter = exec.agent_name(exec.node(reset).agent);
    let waiter = exec.agent_name(exec.node(wait).agent);
    let reset_stream = stream_arg(exec, exec.node(reset).agent, obj);
    let sync = spelled(exec.program, obj, "aclrtSynchronizeStream");
    Some(
        Diagnostic::new(
            &MissingReset::INFO,
            analysis.span(record),
            format!(
                "{waiter} can wait forever: this record of {name} can run before the earlier reset on {resetter}, which then clears it"
            ),
        )
        .with_label(format!("nothing orders this record after the reset on {resetter}"))
        .with_related(
            analysis.span(reset),
            "the reset of the previous reset cycle; it can run after the new record",
        )
        .with_related(
            analysis.span(wait),
            format!("{waiter} waits for the new record; if the reset cleared it, this wait never returns"),
        )
        .with_help(format!(
            "make the reset run before {name} is recorded again: {sync}({reset_stream}) before the record, or use a separate event for each step"
        )),
    )
}

/// A wait of `cycle` is not ordered after the reset that closed `previous`: it can run
/// while the flag is still set by the previous record, and pass at once.
fn wait_before_previous_reset(
    analysis: &Analysis,
    event: InstId,
    previous: &EventCycle,
    cycle: &EventCycle,
) -> Option<Diagnostic> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let reset = previous.reset?;
    let old_record = previous.records.iter().copied().find(|&r| hb.executes(r))?;
    if !hb.executes(reset) {
        return None;
    }
    // Stream waits block on the flag; a host synchronize waits for the latest record
    // whatever the flag says.
    let wait = cycle.waits.iter().copied().find(|&wait| {
        matches!(exec.node(wait).action, Action::EventWait(_))
            && hb.executes(wait)
            && !ordered_before_wait(analysis, reset, wait)
            && !hb.happens_before(wait, old_record)
    })?;
    let obj = exec.instance(event).obj;
    let name = exec.instance_name(event);
    let resetter = exec.agent_name(exec.node(reset).agent);
    let waiter = exec.agent_name(exec.node(wait).agent);
    let reset_stream = stream_arg(exec, exec.node(reset).agent, obj);
    let sync = spelled(exec.program, obj, "aclrtSynchronizeStream");
    let new_record = cycle.records.first().map(|&r| analysis.describe(r));
    Some(
        Diagnostic::new(
            &MissingReset::INFO,
            analysis.span(wait),
            format!(
                "this wait on {waiter} can pass at once: it can run before the reset on {resetter}, while {name} is still set by its previous record"
            ),
        )
        .with_label(format!("nothing orders this wait after the reset on {resetter}"))
        .with_related(analysis.span(old_record), format!("the previous record of {name}, which this wait can see"))
        .with_related(analysis.span(reset), "the reset that ends that cycle; it can run after the wait")
        .with_help(format!(
            "order the wait after the reset: {sync}({reset_stream}) before issuing it, or use a separate event for each hand-off{}",
            new_record.map_or(String::new(), |r| format!(" (the wait is meant for {r})"))
        )),
    )
}

/// Whether `op` is ordered before `wait` by something other than the record the wait is
/// matched to (that match is what is in question): its stream's earlier ops, or the
/// host calls made before it was issued.
fn ordered_before_wait(analysis: &Analysis, op: NodeId, wait: NodeId) -> bool {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let node = exec.node(wait);
    let queue = &exec.agent(node.agent).nodes;
    // A queue's nodes are in creation order, so in NodeId order.
    let earlier_on_queue = queue
        .binary_search(&wait)
        .ok()
        .and_then(|i| i.checked_sub(1))
        .map(|i| queue[i]);
    [earlier_on_queue, node.issued_after()]
        .into_iter()
        .flatten()
        .any(|before| before == op || hb.happens_before(op, before))
}

/// The cycle still open at exit was waited on, and the event is never reset or destroyed.
fn left_set(analysis: &Analysis, event: InstId, cycle: &EventCycle) -> Option<Diagnostic> {
    let exec = analysis.exec;
    if cycle.reset.is_some() || exec.truncated() || exec.instance(event).destroyed.is_some() {
        return None;
    }
    let record = *cycle.records.last()?;
    let wait = *cycle.waits.iter().max()?;
    if !analysis.hb.executes(record) || !analysis.hb.executes(wait) {
        return None; // a hang is reported instead
    }
    let obj = exec.instance(event).obj;
    let name = exec.instance_name(event);
    let reset = spelled(exec.program, obj, "aclrtResetEvent");
    let stream = stream_arg(exec, exec.node(wait).agent, obj);
    Some(
        Diagnostic::new(
            &MissingReset::INFO,
            analysis.span(record),
            format!(
                "event {name} is left set at exit: recorded and waited on, but never reset or destroyed, so the next code that records and waits on it passes the wait at once"
            ),
        )
        .with_severity(Severity::Warning)
        .with_label("the last record; no reset follows it")
        .with_related(analysis.span(wait), format!("{} waited on it here", analysis.describe(wait)))
        .with_help(format!(
            "call {reset}({name}, {stream}) after the wait, or destroy {name} when it is no longer needed"
        )),
    )
}
