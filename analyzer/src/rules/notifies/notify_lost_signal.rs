use std::collections::{HashMap, HashSet};

use super::{flag_name, timeout_suffix};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::NodeId;
use crate::hb::FlagKey;
use crate::rules::declare_rule;
use crate::smt::schedule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// Two consecutive records into one notify flag where the second can land before
    /// the wait that consumes the first has run: for records R(k) and R(k+1) of a flag
    /// whose k-th wait W(k) exists, W(k) does not happen before R(k+1). Applies to HCCL
    /// channel notifies (a flag is notify `k` of rank B's channel to rank A; two
    /// channels to the same peer, for example a ring's "next" and "prev" at N = 2,
    /// share it), HCCL thread notifies and ACL notifies.
    ///
    /// Waits that never run (stuck behind a hang) are left to the hang rules. One
    /// finding per flag: the first record confirmed; later records of the flag that can
    /// land the same way are counted in it, with the last one pointed at (in a trace, one
    /// missing wait makes every later record of its flag look like this).
    ///
    /// ## Why is this a bug
    /// A notify is a binary flag, not a counter: a record sets it, a wait consumes it.
    /// If the second record arrives while the flag is still set, the two collapse into
    /// one signal. One of the peer's waits then never gets its signal and blocks until
    /// the notify-wait timeout (1836 s by HCCL's default), or, when the signals carry
    /// different meanings, a wait passes on the wrong one (data read before it landed).
    ///
    /// ## Example
    /// ```text
    /// HcommWriteOnThread(t, ch, remote[0..32 KiB], local[0..32 KiB], 32 KiB);
    /// HcommChannelNotifyRecordOnThread(t, ch, NOTIFY_IDX_DATA_SIGNAL);
    /// HcommWriteOnThread(t, ch, remote[32 KiB..64 KiB], local[32 KiB..64 KiB], 32 KiB);
    /// HcommChannelNotifyRecordOnThread(t, ch, NOTIFY_IDX_DATA_SIGNAL);   // may collapse
    /// ```
    ///
    /// ## Fix
    /// Between two records into one flag, wait for the peer to acknowledge the first
    /// (a record back on another index after its wait), or give each signal its own
    /// notify index (and `notifyNum` large enough), or send one signal after both
    /// transfers.
    ///
    /// Method: candidates from happens-before over each concrete execution (vector
    /// clocks; the k-th wait of a flag is matched to its k-th record, and W(k) is not
    /// ordered before R(k+1)); each is then decided by z3 over integer op times (program,
    /// issue, synchronize and match order, plus R(k) < R(k+1) < W(k) with no other wait
    /// of the flag consuming R(k) in between). A candidate no schedule produces is
    /// dropped; a confirmed one carries the witness order; an undecided one is kept, with
    /// SG004.
    pub struct NotifyLostSignal;
    code = "SG303",
    name = "notify-lost-signal",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// A record that can land while the flag is still set, with the hazard to confirm.
struct Candidate {
    key: FlagKey,
    second: NodeId,
    diagnostic: Diagnostic,
    order: [NodeId; 3],
    other_waits: Vec<NodeId>,
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let mut candidates = candidates(analysis);
    candidates.sort_by_key(|candidate| candidate.second);
    let mut by_flag: Vec<Vec<Candidate>> = Vec::new();
    let mut flag_index: HashMap<FlagKey, usize> = HashMap::new();
    for candidate in candidates {
        let index = *flag_index.entry(candidate.key).or_insert_with(|| {
            by_flag.push(Vec::new());
            by_flag.len() - 1
        });
        by_flag[index].push(candidate);
    }
    // One finding per flag, for its first record that z3 confirms (both records land
    // with no wait of the flag consuming the first in between), and at most one per
    // record call (a call in a loop can set several flags).
    let mut reported_calls: HashSet<Span> = HashSet::new();
    let mut budget = schedule::MAX_CONFIRMED;
    for of_flag in by_flag {
        let mut of_flag = of_flag
            .into_iter()
            .filter(|candidate| !reported_calls.contains(&candidate.diagnostic.primary));
        while let Some(candidate) = of_flag.next() {
            let before = out.len();
            confirm(analysis, candidate, &mut budget, out);
            if let Some(reported) = out[before..].iter_mut().find(|d| d.code == NotifyLostSignal::INFO.code) {
                fold_later_records(reported, of_flag);
                reported_calls.insert(reported.primary.clone());
                break;
            }
        }
    }
}

fn confirm(analysis: &Analysis, candidate: Candidate, budget: &mut usize, out: &mut Vec<Diagnostic>) {
    let order = &candidate.order;
    let consumed: Vec<_> = candidate.other_waits.iter().map(|&w| (order[0], w, order[1])).collect();
    let hazard = schedule::Hazard {
        order,
        not_between: &consumed,
    };
    schedule::confirm(analysis, &hazard, candidate.diagnostic, budget, out);
}

/// Counts the flag's later candidate records (calls other than the reported one) into
/// `reported`, pointing at the last.
fn fold_later_records(reported: &mut Diagnostic, later: impl Iterator<Item = Candidate>) {
    let mut calls: HashSet<Span> = HashSet::new();
    let mut last = None;
    for candidate in later {
        let span = candidate.diagnostic.primary;
        if span != reported.primary && calls.insert(span.clone()) {
            last = Some(span);
        }
    }
    let Some(last) = last else {
        return;
    };
    let count = calls.len();
    let records = if count == 1 { "record" } else { "records" };
    reported.related.push(crate::diagnostic::Related {
        span: last,
        message: format!(
            "{count} later {records} into this flag, up to this one, are not ordered after the wait of the record before them either (folded into this finding, not confirmed one by one)"
        ),
    });
}

fn candidates(analysis: &Analysis) -> Vec<Candidate> {
    let hb = analysis.hb;
    let mut found = Vec::new();
    for (key, queue) in &hb.matching.notify_queues {
        for (k, pair) in queue.records.windows(2).enumerate() {
            let (first, second) = (pair[0], pair[1]);
            let Some(&consumer) = queue.waits.get(k) else {
                break;
            };
            if !hb.executes(consumer) || !hb.executes(second) || hb.happens_before(consumer, second) {
                continue;
            }
            let starved = queue.waits.get(k + 1).copied();
            found.push(Candidate {
                key: *key,
                second,
                diagnostic: diagnostic(analysis, *key, first, second, consumer, starved),
                order: [first, second, consumer],
                other_waits: queue.waits.iter().copied().filter(|&w| w != consumer).collect(),
            });
        }
    }
    found
}

fn diagnostic(
    analysis: &Analysis,
    key: FlagKey,
    first: NodeId,
    second: NodeId,
    consumer: NodeId,
    starved: Option<NodeId>,
) -> Diagnostic {
    let exec = analysis.exec;
    let flag = flag_name(analysis, key);
    let recorder = exec.agent_name(exec.node(second).agent);
    let waiter = exec.agent_name(exec.node(consumer).agent);
    let consequence = match starved {
        Some(wait) => format!(
            "one signal is lost, and the next wait on it by {} blocks{}",
            exec.agent_name(exec.node(wait).agent),
            timeout_suffix(analysis, wait)
        ),
        None => "one signal is lost".to_string(),
    };
    let message = format!(
        "{recorder} can record {flag} again before {waiter} has consumed the previous record: the flag is binary, so {consequence}"
    );
    let mut diagnostic = Diagnostic::new(&NotifyLostSignal::INFO, analysis.span(second), message)
        .with_label("can land while the flag is still set")
        .with_related(
            analysis.span(first),
            if analysis.span(first) == analysis.span(second) {
                "the previous record into the flag is this same call, one iteration earlier".to_string()
            } else {
                format!("the previous record into the flag ({})", analysis.describe(first))
            },
        )
        .with_related(
            analysis.span(consumer),
            format!("{waiter} consumes the previous record here; nothing orders this wait before the second record"),
        );
    if let Some(wait) = starved
        && analysis.span(wait) != analysis.span(consumer)
    {
        diagnostic = diagnostic.with_related(
            analysis.span(wait),
            "this wait expects the second signal; if the two collapsed, it never comes",
        );
    }
    diagnostic.with_help(
        "before recording again, wait until the first signal is consumed (the waiter records an acknowledgement on another notify after its wait), or give each signal its own notify index",
    )
}
