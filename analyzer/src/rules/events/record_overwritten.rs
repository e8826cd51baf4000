use super::{observers, spelled};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A sync-kind event (`aclrtCreateEvent`, `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)`)
    /// recorded twice in one reset cycle with nothing in between that observed the
    /// first record (no stream wait and no host `aclrtSynchronizeEvent` on it was
    /// issued between the two records), while a stream wait on the event follows. An
    /// event no stream waits for (a timing event read with `aclrtEventElapsedTime`, one
    /// only synchronized on by the host) can be recorded again freely.
    ///
    /// ## Why is this a bug
    /// A sync-kind event holds one record per reset cycle. The second record lands on
    /// an event that is already recorded, so one of the two is lost: a wait issued
    /// afterwards passes as soon as the earlier record has run, without waiting for the
    /// work the later record captured, and nothing ever waits for the earlier record on
    /// its own. The consumer then races the producer of the later work.
    ///
    /// ## Example
    /// ```text
    /// kernel(s1, "embedding", writes: [x]);
    /// aclrtRecordEvent(ev, s1);
    /// kernel(s3, "rope", writes: [y]);
    /// aclrtRecordEvent(ev, s3);          // overwrites: no wait saw the first record
    /// aclrtStreamWaitEvent(s2, ev);      // may pass once the first record has run
    /// kernel(s2, "attention", reads: [x, y]);
    /// ```
    ///
    /// ## Fix
    /// Use one event per record (here one for s1 and one for s3, with a wait on each),
    /// or wait on the event and reset it (`aclrtResetEvent`) before recording it again.
    ///
    /// Method: reset cycles from the signal matching, in host issue order.
    pub struct RecordOverwritten;
    code = "SG105",
    name = "event-record-overwritten",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    for cycle in &analysis.hb.matching.event_cycles {
        let Some(event) = cycle.event else {
            continue;
        };
        for i in 1..cycle.records.len() {
            // Nothing is lost unless a stream wait of the cycle follows: timing events
            // are recorded again once their timestamps were read, and a host synchronize
            // waits for the latest record.
            let waits_follow = cycle.waits.iter().any(|&wait| wait > cycle.records[i]);
            if !waits_follow || !observers(exec, cycle, i).is_empty() {
                continue;
            }
            let (earlier, record) = (cycle.records[i - 1], cycle.records[i]);
            let name = exec.instance_name(event);
            let obj = exec.instance(event).obj;
            let mut diagnostic = Diagnostic::new(
                &RecordOverwritten::INFO,
                analysis.span(record),
                format!(
                    "event {name} is recorded again before anything waited on its previous record: the event holds one record per reset cycle, so one of the two is lost"
                ),
            );
            diagnostic = if analysis.span(earlier) == analysis.span(record) {
                diagnostic.with_label(format!(
                    "the next loop iteration records {name} again; nothing waited on it in between"
                ))
            } else {
                diagnostic
                    .with_label("second record in the same reset cycle")
                    .with_related(
                        analysis.span(earlier),
                        format!("the previous record; nothing waits on {name} before it is recorded again"),
                    )
            };
            if let Some(&wait) = cycle.waits.iter().find(|&&wait| wait > record) {
                diagnostic = diagnostic.with_related(
                    analysis.span(wait),
                    "this wait can pass as soon as the earlier record has run, without the work the later one captured",
                );
            }
            let wait_api = spelled(exec.program, obj, "aclrtStreamWaitEvent");
            out.push(diagnostic.with_help(format!(
                "use a separate event for each record, or {wait_api} on {name} and reset it before recording it again"
            )));
        }
    }
}
