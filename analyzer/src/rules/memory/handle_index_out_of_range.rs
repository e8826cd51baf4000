use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, BadIndex, InstId, MissedSignal};
use crate::model::{ObjId, Object, ObjectKind, Op, Program};
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A handle array indexed outside its handles: `workers[i]` with `i` below 0 or at
    /// least the `threadNum` of `let workers = HcclThreadAcquire(...)`, `peers[i]` at
    /// least the `channelNum` of `let peers = HcclChannelAcquire(...)`. In a parametric
    /// program z3 proves `handle-index-in-range` for every parameter value, rank and
    /// loop iteration, or finds the smallest counterexample.
    ///
    /// ## Why is this a bug
    /// In C the call reads past the end of the handle array (`threads[threadNum]`):
    /// undefined behaviour, usually a garbage handle that the runtime rejects, so the
    /// call's work or signal never happens and its peer waits until the notify-wait
    /// timeout. The call is left out of the analysis; the waits its missing record
    /// starves (SG502, with the host hang behind them) are reported as this finding's
    /// consequences.
    ///
    /// ## Example
    /// ```text
    /// let workers = HcclThreadAcquire(comm, COMM_ENGINE_AICPU_TS, N - 1, 1);
    /// for i in 0..N - 1 {
    ///     HcommThreadNotifyRecordOnThread(main, workers[i + 1], 0);   // i = N - 2: past the end
    /// }
    /// ```
    ///
    /// ## Fix
    /// Keep the index below the count the array was acquired with (`workers[i]`), or
    /// acquire as many handles as the code uses.
    ///
    /// Method: each call's evaluated index against its array's length, per concrete
    /// execution, and the `handle-index-in-range` proof for parametric programs.
    pub struct HandleIndexOutOfRange;
    code = "SG605",
    name = "handle-index-out-of-range",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    // One finding per call and index, with the ranks it happens on.
    type Key = (u32, usize, i64, u32);
    let mut found: BTreeMap<Key, (&Op, ObjId, Vec<&BadIndex>)> = BTreeMap::new();
    for bad in &exec.bad_indices {
        let span = &bad.op.span;
        found
            .entry((span.file.0, span.range.start, bad.index, bad.len))
            .or_insert((bad.op, bad.element, Vec::new()))
            .2
            .push(bad);
    }
    for ((_, _, index, len), (op, element, uses)) in found {
        let mut ranks: Vec<u32> = uses.iter().map(|bad| bad.rank).collect();
        ranks.dedup(); // in walk order: one rank after another
        let array = &exec.program.object(exec.program.base(element)).shown();
        let on_ranks = on_ranks(&ranks, exec.ranks);
        let mut diagnostic = finding(exec.program, op, element, index, i64::from(len), &on_ranks)
            .with_label(format!("index {index} is outside {array}"));
        diagnostic.starves = starved_waits(analysis, &uses);
        out.push(diagnostic);
    }
}

/// The waits left without a signal because the rejected calls never made their notify
/// record: unsatisfied waits on the notify the record would have set (any handle of the
/// array it names, since the index names none).
fn starved_waits(analysis: &Analysis, uses: &[&BadIndex]) -> Vec<Span> {
    let exec = analysis.exec;
    let of = |inst: InstId, obj: ObjId| exec.instance(inst).obj == obj;
    let mut starved = Vec::new();
    for &wait in &analysis.hb.matching.unsatisfied {
        let node = exec.node(wait);
        let wait_rank = node.rank(exec);
        let starves = uses
            .iter()
            .filter_map(|bad| Some((bad.rank, bad.missed?)))
            .any(|(rank, missed)| match (missed, &node.action) {
                (MissedSignal::Thread { target, index }, Action::ThreadNotifyWait { thread, index: waited }) => {
                    wait_rank == rank && of(*thread, target) && *waited == index
                }
                (
                    MissedSignal::Channel { channel, index },
                    Action::ChannelNotifyWait {
                        channel: peer,
                        index: waited,
                    },
                ) => {
                    wait_rank != rank
                        && of(*peer, channel)
                        && exec.instance(*peer).remote_rank == Some(i64::from(rank))
                        && *waited == index
                }
                _ => false,
            });
        let span = analysis.span(wait);
        if starves && !starved.contains(&span) {
            starved.push(span);
        }
    }
    starved
}

/// The finding for `op` naming `element` = `array[index]` of an array of `len`
/// handles, without its primary label; shared with the `handle-index-in-range` proof.
pub(crate) fn finding(program: &Program, op: &Op, element: ObjId, index: i64, len: i64, on_ranks: &str) -> Diagnostic {
    let array = program.object(program.base(element));
    let written = program.object(element).shown();
    let array_name = array.shown();
    let which = if *written == format!("{array_name}[{index}]") {
        format!("{written}{on_ranks},")
    } else {
        format!("{written}, which is {array_name}[{index}]{on_ranks},")
    };
    let valid = match len {
        ..=0 => String::new(),
        1 => " (index 0)".to_string(),
        n => format!(" (indices 0 to {})", n - 1),
    };
    let noun = noun(array, len);
    let message = format!(
        "{} names {which} but {array_name} has {len} {noun}{valid}: the call gets no valid handle, and its work or signal never happens",
        op.api
    );
    Diagnostic::new(&HandleIndexOutOfRange::INFO, op.span.clone(), message)
        .with_related(
            array.span.clone(),
            format!("{array_name} is acquired with {len} {noun} here"),
        )
        .with_help(format!(
            "keep the index below the number of handles `{array_name}` is acquired with, or acquire more"
        ))
}

/// "HCCL thread", "channels", ... for `len` handles of `array`.
fn noun(array: &Object, len: i64) -> &'static str {
    match (&array.kind, len) {
        (ObjectKind::Channel(_), 1) => "channel",
        (ObjectKind::Channel(_), _) => "channels",
        (_, 1) => "HCCL thread",
        _ => "HCCL threads",
    }
}

/// " on rank 2", " on ranks 0, 1", " on every rank"; nothing for one rank.
fn on_ranks(ranks: &[u32], of: u32) -> String {
    match ranks {
        _ if of <= 1 => String::new(),
        _ if ranks.len() == of as usize => " on every rank".into(),
        [rank] => format!(" on rank {rank}"),
        _ => {
            let shown: Vec<String> = ranks.iter().take(4).map(u32::to_string).collect();
            let more = if ranks.len() > 4 { ", ..." } else { "" };
            format!(" on ranks {}{more}", shown.join(", "))
        }
    }
}
