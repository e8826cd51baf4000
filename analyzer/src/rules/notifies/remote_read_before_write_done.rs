use std::collections::HashSet;

use super::{RankAgents, TransferPhase, TransferRace, byte_range, first_after, is_write_transfer};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use crate::smt::schedule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// An access that uses the bytes of a one-sided transfer before the transfer is
    /// known to be complete: the peer reads (or writes) the bytes an
    /// `HcommWriteOnThread` writes into its HCCL buffer with no happens-before from the
    /// write's completion (no DATA_SIGNAL wait between the write and the use); the owner
    /// of a buffer overwrites bytes an `HcommReadOnThread` may still be fetching; or, on
    /// the transfer's own rank, an access issued after the transfer on a queue that
    /// does not wait for it (reusing a write's source, reading a read's destination).
    ///
    /// Remote-transfer races are split between SG304 and this rule by where the other
    /// access sits: on the transfer's own rank by issue order (after the transfer:
    /// here); on another rank by that rank's readiness point, the last node of it that
    /// the transfer is ordered after (issued after that point, when the rank has handed
    /// the bytes over: here; before it: SG304). Each such race is reported by exactly
    /// one of the two rules; SG601/SG602 leave them alone.
    ///
    /// ## Why is this a bug
    /// A transfer is asynchronous on both ends: the writer's thread enqueues it, and the
    /// peer learns nothing until a notify says so. A consumer that runs before then
    /// reads old or partly written data; a producer that overwrites a buffer being read
    /// corrupts what the reader gets. Silently, and only on some runs.
    ///
    /// ## Example
    /// ```text
    /// // rank 1, while rank 0 writes into its buffer
    /// HcommChannelNotifyWaitOnThread(t, ch, NOTIFY_IDX_ACK, CUSTOM_TIMEOUT);
    /// kernel(s, "unpack", reads: [local[0..64 KiB]]);          // before DATA_SIGNAL
    /// HcommChannelNotifyWaitOnThread(t, ch, NOTIFY_IDX_DATA_SIGNAL, CUSTOM_TIMEOUT);
    /// ```
    ///
    /// ## Fix
    /// On the writer, record DATA_SIGNAL (index 1) after the write (or use
    /// `HcommWriteWithNotifyOnThread`); on the peer, wait on it before using the bytes,
    /// on the queue that uses them. For reads, have the reader record a notify after
    /// the read and the owner wait on it before reusing the buffer.
    ///
    /// Method: happens-before over each concrete execution (vector clocks;
    /// candidates from the shared race detector); each is then decided by z3 over integer
    /// op times (program, issue, synchronize and match order, plus the hazard's order),
    /// which yields the witness order printed with the finding; a candidate no schedule
    /// produces is dropped, an undecided one is kept, with SG004. Hazard: the access runs before
    /// the transfer.
    pub struct RemoteReadBeforeWriteDone;
    code = "SG305",
    name = "remote-read-before-write-done",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let races = super::transfer_races(analysis, analysis.hb.races());
    let agents = RankAgents::new(analysis.exec);
    let mut late: Vec<&TransferRace> = races.iter().filter(|r| r.phase == TransferPhase::BeforeDone).collect();
    late.sort_by_key(|r| (r.other, r.transfer));
    // One diagnostic per early access (span), for its first node.
    let mut done: HashSet<Span> = HashSet::new();
    let mut budget = schedule::MAX_CONFIRMED;
    for race in &late {
        let span = analysis.span(race.other);
        if !done.insert(span.clone()) {
            continue;
        }
        let group: Vec<&TransferRace> = late
            .iter()
            .copied()
            .filter(|r| analysis.span(r.other) == span)
            .collect();
        let order = [race.other, race.transfer];
        let hazard = schedule::Hazard {
            order: &order,
            not_between: &[],
        };
        schedule::confirm(
            analysis,
            &hazard,
            diagnostic(analysis, &agents, &group),
            &mut budget,
            out,
        );
    }
}

fn diagnostic(analysis: &Analysis, agents: &RankAgents, group: &[&TransferRace]) -> Diagnostic {
    let exec = analysis.exec;
    let first = group[0];
    let (access, transfer) = (first.other, first.transfer);
    let (a, t) = (exec.node(access), exec.node(transfer));
    let (access_rank, transfer_rank) = (a.rank(exec), t.rank(exec));
    let same_rank = access_rank == transfer_rank;
    let memory = analysis.memory_name(first.race.memory);
    let range = byte_range(first.race.start, first.race.end);
    let doing = if first.transfer_writes() { "writing" } else { "reading" };
    let verb = match (first.other_writes(), first.transfer_writes()) {
        (false, _) => "reads",
        (true, false) => "overwrites",
        (true, true) => "writes",
    };
    let transfer_name = analysis.describe(transfer);
    let why = if same_rank {
        "it is issued after the transfer, but on a queue that does not wait for it".to_string()
    } else if is_write_transfer(analysis, transfer) {
        "nothing orders this access after the write's completion".to_string()
    } else {
        "nothing orders this access after the read's completion".to_string()
    };
    let message = format!(
        "{} {verb} {range} of {memory} that {transfer_name} may still be {doing}: {why}",
        analysis.describe(access)
    );
    let mut diagnostic = Diagnostic::new(&RemoteReadBeforeWriteDone::INFO, analysis.span(access), message)
        .with_label(format!("can run before {} completes", t.op.api));
    let mut seen: HashSet<Span> = HashSet::from([analysis.span(access)]);
    for race in group {
        let span = analysis.span(race.transfer);
        if seen.insert(span.clone()) {
            let what = if race.transfer_writes() { "writes" } else { "reads" };
            diagnostic = diagnostic.with_related(
                span,
                format!(
                    "{} {what} {} here; its completion is not ordered before the access",
                    analysis.describe(race.transfer),
                    byte_range(race.race.start, race.race.end)
                ),
            );
        }
    }
    match first_after(analysis, agents, transfer, access_rank) {
        Some(done) if !same_rank => {
            let span = analysis.span(done);
            if seen.insert(span.clone()) {
                let text = if exec.node(done).issue > a.issue {
                    format!(
                        "rank {access_rank} learns that the transfer is done only here, after the access was issued"
                    )
                } else {
                    format!(
                        "rank {access_rank} learns that the transfer is done here, but {} does not wait for it",
                        exec.agent_name(a.agent)
                    )
                };
                diagnostic = diagnostic.with_related(span, text);
            }
        }
        None if !same_rank => {
            diagnostic = diagnostic.with_note(format!(
                "nothing on rank {access_rank} is ordered after the transfer: no notify record follows it that rank {access_rank} waits on"
            ));
        }
        _ => {}
    }
    let help = if same_rank {
        format!(
            "issue the access on {} after the transfer, or synchronize the HCCL thread (HcommThreadSynchronize) before it",
            exec.agent_name(t.agent)
        )
    } else if is_write_transfer(analysis, transfer) {
        format!(
            "record DATA_SIGNAL after the write on rank {transfer_rank} (or use HcommWriteWithNotifyOnThread) and, on rank {access_rank}, wait on it on {} before this access",
            exec.agent_name(a.agent)
        )
    } else {
        format!(
            "record a notify after the read on rank {transfer_rank} and, on rank {access_rank}, wait on it on {} before reusing the bytes",
            exec.agent_name(a.agent)
        )
    };
    diagnostic.with_help(help)
}
