use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, Severity};
use crate::exec::{Action, NodeId};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `aclrtStreamWaitEvent` (or `cudaStreamWaitEvent`, `acl.rt.stream_wait_event`) on
    /// an event that no record reaches. For a sync-kind event (`aclrtCreateEvent`,
    /// `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)`) that means no record in the wait's
    /// reset cycle; for a capture-kind event (`aclrtCreateEventExWithFlag`, CUDA) no
    /// record issued before the wait. A host `aclrtSynchronizeEvent` (either kind)
    /// with no record issued before it returns at once (a warning, as a capture-kind
    /// wait's no-op is).
    ///
    /// ## Why is this a bug
    /// A sync-kind wait blocks its stream until the event is recorded: with no record
    /// the stream never runs again, and the host hangs at its next synchronize (the
    /// runtime reports "event wait timeout ... task_type=EVENT_WAIT"). A capture-kind
    /// wait binds when it is issued to the latest record; with none it is a silent
    /// no-op, so the stream does not wait for anything and races the producer; a host
    /// synchronize with no record to wait for returns at once the same way.
    ///
    /// ## Example
    /// ```text
    /// let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
    /// aclrtStreamWaitEvent(s2, ev);      // nothing ever records ev: s2 hangs
    /// ```
    ///
    /// ## Fix
    /// Record the event on the producing stream (`aclrtRecordEvent(ev, s1)`) on every
    /// path that reaches the wait; for capture-kind events, issue the record before the
    /// wait.
    pub struct WaitNeverRecorded;
    code = "SG104",
    name = "event-wait-never-recorded",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let matching = &analysis.hb.matching;
    for &wait in &matching.unsatisfied {
        if let Action::EventWait(event) = analysis.exec.node(wait).action {
            out.push(hang(analysis, wait, event));
        }
    }
    for &wait in &matching.noop_waits {
        if let Action::EventWait(event) | Action::EventSync(event) = analysis.exec.node(wait).action {
            out.push(no_op(analysis, wait, event));
        }
    }
}

fn hang(analysis: &Analysis, wait: NodeId, event: crate::exec::InstId) -> Diagnostic {
    let exec = analysis.exec;
    let waiter = exec.agent_name(exec.node(wait).agent);
    let name = exec.instance_name(event);
    Diagnostic::new(
        &WaitNeverRecorded::INFO,
        analysis.span(wait),
        format!("{waiter} waits forever: nothing records event {name} for this wait"),
    )
    .with_label(format!("no record of {name} in this reset cycle"))
    .with_help(format!(
        "record {name} on the producing stream before the consumer needs it, on every path"
    ))
}

/// The record call of the API family the wait belongs to.
fn record_api(wait_api: &str) -> &'static str {
    if wait_api.starts_with("cuda") {
        "cudaEventRecord"
    } else if wait_api.starts_with("acl.rt.") {
        "acl.rt.record_event"
    } else {
        "aclrtRecordEvent"
    }
}

fn no_op(analysis: &Analysis, wait: NodeId, event: crate::exec::InstId) -> Diagnostic {
    let exec = analysis.exec;
    let stream = exec.agent_name(exec.node(wait).agent);
    let name = exec.instance_name(event);
    let host_sync = matches!(exec.node(wait).action, Action::EventSync(_));
    let (what, label) = if host_sync {
        (
            "this synchronize returns at once",
            "waits for the latest record issued before it, and there is none",
        )
    } else {
        (
            "this wait does nothing",
            "binds to no record (capture-kind events bind at issue time)",
        )
    };
    let mut diagnostic = Diagnostic::new(
        &WaitNeverRecorded::INFO,
        analysis.span(wait),
        format!("{what}: {name} has not been recorded when it is issued, so {stream} does not wait"),
    )
    .with_severity(Severity::Warning)
    .with_label(label)
    .with_help(format!(
        "issue {}({name}, ...) before this wait",
        record_api(exec.node(wait).op.api)
    ));
    let later = exec
        .nodes
        .iter()
        .enumerate()
        .skip(wait.index() + 1)
        .find(|(_, n)| n.action == Action::EventRecord(event));
    if let Some((record, _)) = later {
        diagnostic = diagnostic.with_related(
            analysis.span(NodeId(record as u32)),
            "recorded only here, after the wait was issued",
        );
    }
    diagnostic
}
