use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{NodeId, UnsubmittedBatch};
use crate::model::OpKind;
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// `HcommBatchModeStart(tag)` on a host thread with no `HcommBatchModeEnd(tag)` after
    /// it on that thread: every data-plane call the thread issues in between
    /// (`HcommWriteOnThread`, `HcommChannelNotifyRecordOnThread`, ...) is cached and
    /// never submitted. An `HcommBatchModeEnd` that names another tag does not end the
    /// batch.
    ///
    /// ## Why is this a bug
    /// In batch mode the HCCL runtime only caches the calls; they run when the batch
    /// ends. A batch that never ends never moves its data, and its notify records never
    /// reach the peers, whose waits block until the notify-wait timeout (1836 s by
    /// HCCL's default). Those hangs are the consequence; this is their cause. The cached
    /// calls are left out of the analysis (they never run).
    ///
    /// A synchronize inside an open batch (`HcommThreadJoin`, `HcommThreadSynchronize`)
    /// does not wait for the cached calls either: they are not submitted yet. The races
    /// that follow are reported by the memory rules.
    ///
    /// ## Example
    /// ```text
    /// HcommBatchModeStart("allgather");
    /// HcommWriteOnThread(t, ch, remote[0..64 KiB], local[0..64 KiB], 64 KiB);
    /// HcommChannelNotifyRecordOnThread(t, ch, 1);
    /// // missing: HcommBatchModeEnd("allgather");
    /// ```
    ///
    /// ## Fix
    /// End every batch on the thread that started it, with the same tag, on every path
    /// (also before an early return).
    ///
    /// Method: each host thread's batch state, per concrete execution.
    pub struct BatchNeverSubmitted;
    code = "SG307",
    name = "batch-never-submitted",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    // One finding per start call, with the ranks it happens on.
    let mut found: BTreeMap<(u32, usize), (&UnsubmittedBatch, Vec<u32>)> = BTreeMap::new();
    for batch in &exec.unsubmitted_batches {
        let span = analysis.span(batch.start);
        found
            .entry((span.file.0, span.range.start))
            .or_insert((batch, Vec::new()))
            .1
            .push(exec.node(batch.start).rank(exec));
    }
    for (batch, ranks) in found.into_values() {
        out.push(diagnostic(analysis, batch, &ranks));
    }
}

fn diagnostic(analysis: &Analysis, batch: &UnsubmittedBatch, ranks: &[u32]) -> Diagnostic {
    let exec = analysis.exec;
    let start = exec.node(batch.start);
    let tag = tag_of(analysis, batch.start);
    let on_ranks = crate::rules::ranks_in_parentheses(ranks, exec.ranks);
    // A call can be several nodes (a write and its notify): count the calls.
    let mut calls: Vec<Span> = Vec::new();
    for &(node, _) in &batch.calls {
        let span = analysis.span(node);
        if !calls.contains(&span) {
            calls.push(span);
        }
    }
    let what = match calls.len() {
        1 => "the data-plane call after it is cached and never submitted, so its transfer or signal never happens"
            .to_string(),
        n => format!(
            "the {n} data-plane calls after it are cached and never submitted, so their transfers and signals never happen"
        ),
    };
    let message = format!("batch \"{tag}\" is never ended{on_ranks}: {what}");
    let mut diagnostic = Diagnostic::new(&BatchNeverSubmitted::INFO, start.op.span.clone(), message)
        .with_label(format!("batch \"{tag}\" starts here and is not ended on this thread"));
    for span in calls.into_iter().take(MAX_SHOWN) {
        diagnostic = diagnostic.with_related(span, "cached by the batch, never submitted");
    }
    for &end in &batch.other_tags {
        let other = tag_of(analysis, end);
        diagnostic = diagnostic.with_related(
            analysis.span(end),
            format!("ends batch \"{other}\", not \"{tag}\": the batch stays open"),
        );
    }
    diagnostic.starves = starved_waits(analysis, batch);
    diagnostic.with_help(format!(
        "call `HcommBatchModeEnd(\"{tag}\")` on this thread once its data-plane calls are issued, on every path"
    ))
}

/// Related locations shown for the cached calls.
const MAX_SHOWN: usize = 4;

fn tag_of<'p>(analysis: &Analysis<'_, 'p>, node: NodeId) -> &'p str {
    match &analysis.exec.node(node).op.kind {
        OpKind::BatchMode { tag, .. } => tag,
        _ => "",
    }
}

/// The waits that never get a signal because a record of the batch was never sent.
fn starved_waits(analysis: &Analysis, batch: &UnsubmittedBatch) -> Vec<Span> {
    let exec = analysis.exec;
    let matching = &analysis.hb.matching;
    let mut starved = Vec::new();
    for (node, action) in &batch.calls {
        let rank = exec.node(*node).rank(exec);
        let Some((key, true)) = crate::hb::flag_of(exec, rank, action) else {
            continue;
        };
        let waits = matching.notify_queues.get(&key).map_or(&[][..], |queue| &queue.waits);
        for &wait in waits {
            let span = analysis.span(wait);
            if matching.unsatisfied.contains(&wait) && !starved.contains(&span) {
                starved.push(span);
            }
        }
    }
    starved
}
