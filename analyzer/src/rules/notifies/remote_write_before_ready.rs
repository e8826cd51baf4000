use std::collections::HashSet;

use super::{
    RankAgents, TransferPhase, TransferRace, byte_range, is_transfer, is_write_transfer, last_before, transfer_peer,
};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::rules::declare_rule;
use crate::smt::schedule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A one-sided transfer that is not ordered after the readiness of the memory it
    /// touches:
    /// - `HcommWriteOnThread` / `HcommWriteWithNotifyOnThread` into a peer's HCCL
    ///   buffer (or `HcommReadOnThread` from it) that is ordered after no signal at all
    ///   from that peer: the writer never waited for the peer's ACK (pre-sync);
    /// - a transfer that races with an access that belongs before it: an access of the
    ///   peer to those bytes issued before the peer's readiness signal (the last point
    ///   of the peer the transfer is ordered after) but not covered by it, or, on the
    ///   transfer's own rank, an access issued before the transfer on another queue
    ///   (the producer of the bytes a write sends).
    ///
    /// Remote-transfer races are split between this rule and SG305 by where the other
    /// access sits: on the transfer's own rank by issue order (before the transfer:
    /// here; after: SG305); on another rank by that rank's readiness point (issued
    /// before it: here; after it, i.e. while the peer has handed the bytes over:
    /// SG305). When the peer never signals anything the transfer waits for, every race
    /// with that peer is reported here, with the missing pre-sync. Each such race is
    /// reported by exactly one of the two rules; SG601/SG602 leave them alone.
    /// Remote reads are covered the same way: a read is "before ready" when it can
    /// fetch bytes before the owner's producer wrote them.
    ///
    /// ## Why is this a bug
    /// The transfer lands while the peer is still using its HCCL buffer (for instance
    /// still reading the previous step's data): that data is overwritten under it, or
    /// the transfer sends or fetches bytes that are not written yet. Nothing fails; the
    /// results are silently wrong, and only sometimes.
    ///
    /// ## Example
    /// ```text
    /// HcommChannelNotifyRecordOnThread(t, ch, NOTIFY_IDX_ACK);
    /// HcommWriteOnThread(t, ch, remote, local, 64 KiB);       // the peer may not be ready
    /// HcommChannelNotifyWaitOnThread(t, ch, NOTIFY_IDX_ACK, CUSTOM_TIMEOUT);
    /// ```
    ///
    /// ## Fix
    /// Follow the three-phase protocol: record ACK (index 0), wait for the peer's ACK,
    /// then write. On the peer, finish every use of the bytes before recording its
    /// ACK (on the HCCL thread's stream, or behind an event the thread waits on). On
    /// the writer, order the producer of the source bytes before the transfer.
    ///
    /// Method: happens-before over each concrete execution (vector clocks;
    /// candidates from the shared race detector); each is then decided by z3 over integer
    /// op times (program, issue, synchronize and match order, plus the hazard's order),
    /// which yields the witness order printed with the finding; a candidate no schedule
    /// produces is dropped, an undecided one is kept, with SG004. Hazard: the transfer runs before
    /// the peer's racing access. A transfer with no signal of the peer before it at all
    /// is reported from happens-before alone.
    pub struct RemoteWriteBeforeReady;
    code = "SG304",
    name = "remote-write-before-ready",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let races = super::transfer_races(analysis, analysis.hb.races());
    let agents = RankAgents::new(exec);
    // One diagnostic per transfer call (span), for its first node in node order.
    let mut spans: Vec<Span> = Vec::new();
    let mut firsts: Vec<NodeId> = Vec::new();
    let mut consider = |node: NodeId| {
        let span = analysis.span(node);
        if !spans.contains(&span) {
            spans.push(span);
            firsts.push(node);
        }
    };
    for (index, _) in exec.nodes.iter().enumerate() {
        let node = NodeId(index as u32);
        if is_transfer(analysis, node) && analysis.hb.executes(node) && unready_peer(analysis, &agents, node).is_some()
        {
            consider(node);
        }
    }
    let mut racing: Vec<&TransferRace> = races.iter().filter(|r| r.phase == TransferPhase::BeforeReady).collect();
    racing.sort_by_key(|r| (r.transfer, r.other));
    for race in &racing {
        consider(race.transfer);
    }
    let mut order: Vec<(NodeId, Span)> = firsts.into_iter().zip(spans).collect();
    order.sort_by_key(|(node, _)| *node);
    let mut budget = schedule::MAX_CONFIRMED;
    for (transfer, span) in order {
        let mine: Vec<&TransferRace> = racing
            .iter()
            .copied()
            .filter(|r| analysis.span(r.transfer) == span)
            .collect();
        let Some(found) = diagnostic(analysis, &agents, transfer, &mine) else {
            continue;
        };
        match mine.first() {
            Some(race) => {
                let order = [race.transfer, race.other];
                let hazard = schedule::Hazard {
                    order: &order,
                    not_between: &[],
                };
                schedule::confirm(analysis, &hazard, found, &mut budget, out);
            }
            None => out.push(found),
        }
    }
}

/// The peer a transfer touches when nothing of that peer is ordered before it.
fn unready_peer(analysis: &Analysis, agents: &RankAgents, transfer: NodeId) -> Option<u32> {
    let peer = transfer_peer(analysis, transfer)?;
    if peer >= analysis.exec.ranks {
        return None;
    }
    last_before(analysis, agents, transfer, peer).is_none().then_some(peer)
}

fn diagnostic(
    analysis: &Analysis,
    agents: &RankAgents,
    transfer: NodeId,
    races: &[&TransferRace],
) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let node = exec.node(transfer);
    let api = &node.op.api;
    let writes = is_write_transfer(analysis, transfer);
    let own_rank = node.rank(exec);
    let unready = unready_peer(analysis, agents, transfer);
    let mut diagnostic = match (unready, races.first()) {
        (Some(peer), _) => {
            let message = if writes {
                format!(
                    "{api} on rank {own_rank} writes into rank {peer}'s HCCL buffer without waiting for any signal from rank {peer}: the data can land while rank {peer} is still using those bytes"
                )
            } else {
                format!(
                    "{api} on rank {own_rank} reads rank {peer}'s HCCL buffer without waiting for any signal from rank {peer}: it can fetch the bytes before rank {peer} has written them"
                )
            };
            let signal = if writes { "ACK" } else { "data-ready signal" };
            let mut d = Diagnostic::new(&RemoteWriteBeforeReady::INFO, analysis.span(transfer), message).with_label(
                format!("not ordered after any signal of rank {peer} (no wait for its {signal} before it)"),
            );
            if let Some(late) = late_ack_wait(analysis, transfer, peer) {
                d = d.with_related(
                    analysis.span(late),
                    format!("the wait for rank {peer}'s signal comes only after the transfer"),
                );
            }
            d.with_help(if writes {
                format!(
                    "wait for rank {peer}'s ACK before the write: HcommChannelNotifyWaitOnThread(thread, channel, NOTIFY_IDX_ACK, timeout) after recording your own ACK, as in the three-phase protocol"
                )
            } else {
                format!(
                    "wait for rank {peer}'s data-ready signal (HcommChannelNotifyWaitOnThread on the channel to rank {peer}) before the read, and have rank {peer} record it after producing the bytes"
                )
            })
        }
        (None, Some(first)) => {
            let other = exec.node(first.other);
            let other_rank = other.rank(exec);
            let memory = analysis.memory_name(first.race.memory);
            let range = byte_range(first.race.start, first.race.end);
            let theirs = if first.other_writes() { "writing" } else { "reading" };
            let verb = if first.transfer_writes() { "overwrite" } else { "read" };
            let message = format!(
                "{api} on rank {own_rank} can {verb} {range} of {memory} before {} has finished {theirs} them: the transfer is not ordered after that access",
                analysis.describe(first.other)
            );
            let help = if super::is_transfer(analysis, first.other) && other_rank != own_rank {
                format!(
                    "two transfers touch the same bytes of {memory}: give each one its own region of the buffer, or make the owner hand the bytes to rank {own_rank} only after rank {other_rank}'s transfer is done"
                )
            } else if other_rank == own_rank {
                format!(
                    "order the earlier access before the transfer: issue it on the HCCL thread's stream, or record an event after it and make {} wait on it",
                    exec.agent_name(node.agent)
                )
            } else {
                format!(
                    "on rank {other_rank}, finish the access before signalling readiness: issue it on the HCCL thread's stream before the ACK record, or make that stream wait for it (event) first"
                )
            };
            Diagnostic::new(&RemoteWriteBeforeReady::INFO, analysis.span(transfer), message)
                .with_label(format!(
                    "can start before the access on {} is done",
                    exec.agent_name(other.agent)
                ))
                .with_help(help)
        }
        (None, None) => return None,
    };
    let mut related_spans: HashSet<Span> = HashSet::new();
    for race in races {
        let other = exec.node(race.other);
        let span = analysis.span(race.other);
        if !related_spans.insert(span.clone()) {
            continue;
        }
        let verb = if race.other_writes() { "writes" } else { "reads" };
        let range = byte_range(race.race.start, race.race.end);
        let memory = analysis.memory_name(race.race.memory);
        let why = if other.rank(exec) == own_rank {
            "issued before the transfer, on another queue that the transfer does not wait for".to_string()
        } else {
            match race.ready {
                Some(_) => format!(
                    "issued before rank {}'s readiness signal, but that signal does not wait for it",
                    other.rank(exec)
                ),
                None => format!(
                    "nothing orders it before the transfer (rank {} sends no signal the transfer waits for)",
                    other.rank(exec)
                ),
            }
        };
        diagnostic = diagnostic.with_related(
            span,
            format!("{} {verb} {range} of {memory}; {why}", analysis.describe(race.other)),
        );
        if let Some(ready) = race.ready
            && other.rank(exec) != own_rank
            && related_spans.insert(analysis.span(ready))
        {
            diagnostic = diagnostic.with_related(
                analysis.span(ready),
                format!(
                    "rank {}'s last signal that the transfer is ordered after",
                    other.rank(exec)
                ),
            );
        }
    }
    Some(diagnostic)
}

/// A notify wait on the transfer's own rank, issued after it, that a record of `peer`
/// satisfies: the ACK wait that should have come before the transfer.
fn late_ack_wait(analysis: &Analysis, transfer: NodeId, peer: u32) -> Option<NodeId> {
    let exec = analysis.exec;
    let node = exec.node(transfer);
    let rank = node.rank(exec);
    analysis
        .hb
        .matching
        .edges
        .iter()
        .filter(|&&(signal, wait)| {
            let w = exec.node(wait);
            exec.node(signal).rank(exec) == peer
                && w.rank(exec) == rank
                && w.issue > node.issue
                && matches!(w.action, Action::ChannelNotifyWait { .. })
        })
        .map(|&(_, wait)| wait)
        .min_by_key(|&wait| exec.node(wait).issue)
}
