use std::collections::HashSet;

use super::{agent_list, flag_name, times};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::hb::{FlagKey, NotifyQueue};
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A notify flag that is recorded a different number of times than it is waited on:
    /// - HCCL channel notifies: rank A's `HcommChannelNotifyRecordOnThread(t, ch, k)`
    ///   through its channel to rank B, against rank B's
    ///   `HcommChannelNotifyWaitOnThread(t, ch, k, ...)` on its channel to rank A
    ///   (`HcommWriteWithNotifyOnThread` counts as a record);
    /// - HCCL thread notifies: `HcommThreadNotifyRecordOnThread(t, dst, k)` against
    ///   `HcommThreadNotifyWaitOnThread(dst, k, ...)`;
    /// - ACL notifies: `aclrtRecordNotify` against `aclrtWaitAndResetNotify`.
    ///
    /// The counts are those of one concrete execution: every rank's path, loops
    /// unrolled, for each parameter assignment checked. An ACL notify shared by IPC key
    /// with a process outside the run (exported and opened by no process of the run,
    /// or opened and exported by none: two `main`s checked apart) balances with that
    /// process, which the run does not show: it is not counted, and a wait no record
    /// of the run covers is taken to be satisfied there.
    ///
    /// ## Why is this a bug
    /// Each wait consumes one record. A wait with no record left blocks its thread
    /// until the notify-wait timeout (HCCL's default is 1836 s), then the collective
    /// fails; with timeout 0 it hangs. A record with no wait leaves the flag set: the
    /// next wait on that notify (the next step, the next collective) passes at once,
    /// before its real signal, and the protocol silently goes out of step.
    ///
    /// ## Example
    /// ```text
    /// if rank == 0 {
    ///     HcommChannelNotifyRecordOnThread(t, ch, NOTIFY_IDX_FIN_ACK);
    ///     HcommChannelNotifyWaitOnThread(t, ch, NOTIFY_IDX_FIN_ACK, CUSTOM_TIMEOUT);
    /// } else {
    ///     // missing: HcommChannelNotifyRecordOnThread(t, ch, NOTIFY_IDX_FIN_ACK);
    ///     HcommChannelNotifyWaitOnThread(t, ch, NOTIFY_IDX_FIN_ACK, CUSTOM_TIMEOUT);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Give every wait exactly one record on the other side, on every path: both ranks
    /// of a handshake record and wait on every phase. Remove records nobody waits for.
    ///
    /// Method: counts over the notify queues of each concrete execution (records and
    /// waits of one flag, matched in issue order). For a parametric program, z3 also
    /// proves the property `notify-balance` for every parameter value (each call's
    /// execution count as a term over `N`, the ranks and the index), or finds the
    /// smallest counterexample, which is then run concretely and named in a note.
    pub struct NotifyUnbalanced;
    code = "SG301",
    name = "notify-unbalanced",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// Most calls listed as related locations of one finding.
const MAX_RELATED: usize = 8;

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let mut found: Vec<Diagnostic> = Vec::new();
    for (key, queue) in &analysis.hb.matching.notify_queues {
        // A notify shared with a process outside the run balances with that process.
        if queue.records.len() != queue.waits.len() && !queue.shared_outside {
            found.push(diagnostic(analysis, *key, queue));
        }
    }
    // Several flags can be unbalanced at one call (a loop, every rank of a ring): one
    // finding per call, saying how many flags share it.
    let mut seen: HashSet<Span> = HashSet::new();
    let mut kept: Vec<Diagnostic> = Vec::new();
    let mut more: Vec<usize> = Vec::new();
    for diagnostic in found {
        if seen.insert(diagnostic.primary.clone()) {
            kept.push(diagnostic);
            more.push(0);
        } else if let Some(index) = kept.iter().position(|d| d.primary == diagnostic.primary) {
            if kept[index].notes.len() < MAX_RELATED {
                kept[index].notes.push(format!("also: {}", diagnostic.message));
            } else {
                more[index] += 1;
            }
        }
    }
    for (diagnostic, more) in kept.iter_mut().zip(more) {
        if more > 0 {
            diagnostic
                .notes
                .push(format!("and {more} more unbalanced flags at this call"));
        }
    }
    out.extend(kept);
}

/// "the only unmatched wait", "the first of 3 unmatched waits".
fn count_label(count: usize, what: &str) -> String {
    if count == 1 {
        format!("the only {what}")
    } else {
        format!("the first of {count} {what}s")
    }
}

/// Who records and who waits, as a phrase: "rank 1", "HCCL thread t0".
fn side(analysis: &Analysis, key: FlagKey, recording: bool, queue: &NotifyQueue) -> String {
    match key {
        FlagKey::Channel { dst, src, .. } => format!("rank {}", if recording { src } else { dst }),
        FlagKey::Acl(_) | FlagKey::Thread { .. } => {
            let nodes = if recording { &queue.records } else { &queue.waits };
            agent_list(analysis, nodes)
        }
    }
}

fn diagnostic(analysis: &Analysis, key: FlagKey, queue: &NotifyQueue) -> Diagnostic {
    let exec = analysis.exec;
    let flag = flag_name(analysis, key);
    let (records, waits) = (queue.records.len(), queue.waits.len());
    let recorder = side(analysis, key, true, queue);
    let waiter = side(analysis, key, false, queue);
    let missing_rank = match key {
        FlagKey::Channel { dst, src, .. } => [dst, src].into_iter().find(|&r| r < 0 || r >= i64::from(exec.ranks)),
        _ => None,
    };
    let mut diagnostic = if waits > records {
        let extra = queue.waits[records];
        let who = exec.agent_name(exec.node(extra).agent);
        let message = match (records, missing_rank) {
            (_, Some(rank)) => format!(
                "{who} waits on {flag}, but rank {rank} does not exist (the program runs {} ranks): the wait never returns",
                exec.ranks
            ),
            (0, None) if matches!(key, FlagKey::Channel { .. }) => format!(
                "{flag} is waited on {} by {waiter} but never recorded by {recorder}: {who} blocks here{}",
                times(waits),
                super::timeout_suffix(analysis, extra)
            ),
            (0, None) => format!(
                "{flag} is waited on {} by {waiter} but nothing records it: {who} blocks here{}",
                times(waits),
                super::timeout_suffix(analysis, extra)
            ),
            _ => format!(
                "{flag} is waited on {} by {waiter} but recorded only {} by {recorder}: wait {} of {waits} never gets a signal, and {who} blocks here{}",
                times(waits),
                times(records),
                records + 1,
                super::timeout_suffix(analysis, extra)
            ),
        };
        Diagnostic::new(&NotifyUnbalanced::INFO, analysis.span(extra), message)
            .with_label(count_label(waits - records, "unmatched wait"))
            .with_help(match key {
                FlagKey::Channel { src, dst, index } => format!(
                    "on rank {src}, record notify {index} through the channel to rank {dst} (HcommChannelNotifyRecordOnThread) once for every wait of rank {dst}, on every path; or remove the extra wait"
                ),
                FlagKey::Thread { .. } if records == 0 => format!(
                    "record {flag} (HcommThreadNotifyRecordOnThread from the thread that produces what the wait protects) once for every wait, on every path; or remove the wait"
                ),
                FlagKey::Acl(_) if records == 0 => format!(
                    "record {flag} (aclrtRecordNotify on the stream that produces what the wait protects) once for every wait, on every path; or remove the wait"
                ),
                _ => format!("make {recorder} record {flag} once for every wait, on every path; or remove the extra wait"),
            })
    } else {
        let extra = queue.records[waits];
        let message = match (waits, missing_rank) {
            (_, Some(rank)) => format!(
                "{} records into {flag}, but rank {rank} does not exist (the program runs {} ranks): the signal goes nowhere",
                exec.agent_name(exec.node(extra).agent),
                exec.ranks
            ),
            (0, None) if matches!(key, FlagKey::Channel { .. }) => format!(
                "{flag} is recorded {} by {recorder} but never waited on by {waiter}: the flag stays set, and the next wait on it passes before its own signal",
                times(records)
            ),
            (0, None) => format!(
                "{flag} is recorded {} by {recorder} but nothing waits on it: the flag stays set, and the next wait on it passes before its own signal",
                times(records)
            ),
            _ => format!(
                "{flag} is recorded {} by {recorder} but waited on only {} by {waiter}: record {} of {records} is never consumed, so the flag stays set and the next wait on it passes early",
                times(records),
                times(waits),
                waits + 1
            ),
        };
        Diagnostic::new(&NotifyUnbalanced::INFO, analysis.span(extra), message)
            .with_label(count_label(records - waits, "unconsumed record"))
            .with_help(match key {
                FlagKey::Channel { src, dst, index } => format!(
                    "on rank {dst}, wait on notify {index} of the channel to rank {src} (HcommChannelNotifyWaitOnThread) once for every record of rank {src}, on every path; or remove the extra record"
                ),
                _ if waits == 0 => format!(
                    "wait on {flag} where its signal is needed, once for every record, on every path; or remove the record"
                ),
                _ => format!("make {waiter} wait on {flag} once for every record, on every path; or remove the extra record"),
            })
    };
    let mut seen: HashSet<Span> = HashSet::from([diagnostic.primary.clone()]);
    let mut listed = 0;
    let calls = queue
        .records
        .iter()
        .map(|&n| (n, true))
        .chain(queue.waits.iter().map(|&n| (n, false)));
    for (node, is_record) in calls {
        let span = analysis.span(node);
        if listed == MAX_RELATED || !seen.insert(span.clone()) {
            continue;
        }
        listed += 1;
        let what = if is_record { "records" } else { "waits on" };
        diagnostic = diagnostic.with_related(span, format!("{} {what} the flag", analysis.describe(node)));
    }
    diagnostic
}
