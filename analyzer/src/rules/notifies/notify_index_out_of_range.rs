use std::collections::HashSet;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, InstId, NodeId};
use crate::model::{ObjId, OpKind};
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A notify index outside the notifies its channel or thread was acquired with:
    /// - `HcommChannelNotifyRecordOnThread(thread, channel, remoteNotifyIdx)`,
    ///   `HcommChannelNotifyWaitOnThread(thread, channel, localNotifyIdx, timeOut)`
    ///   and `HcommWriteWithNotifyOnThread(..., remoteNotifyIdx)` with an index
    ///   `>= notifyNum` of the channel's `HcclChannelDesc`. `notifyNum` is 0 after
    ///   `HcclChannelDescInit`, so a channel acquired without it has no notifies at all;
    /// - `HcommThreadNotifyRecordOnThread(thread, dstThread, dstNotifyIdx)` with an
    ///   index `>= notifyNumPerThread` (`HcclThreadAcquire`) or `notifyNum`
    ///   (`HcclThreadAcquireWithStream`) of the destination thread, and
    ///   `HcommThreadNotifyWaitOnThread(thread, notifyIdx, timeOut)` with one beyond
    ///   the waiting thread's count;
    /// - any negative index, and any index of an object acquired with a negative count.
    ///
    /// A rejected call has no other effect: no other rule sees it (a record that is
    /// rejected is not an unbalanced signal; its wait is reported as never signalled).
    ///
    /// A channel index is checked against the channel the call names (both ends of a
    /// channel are acquired with their own descriptor).
    ///
    /// ## Why is this a bug
    /// The index names a notify the channel or thread does not have: the call is
    /// rejected (or touches another resource), so that phase's signal never arrives
    /// and the matching wait times out (1836 s by HCCL's default), failing the
    /// collective.
    ///
    /// ## Example
    /// ```text
    /// let ch = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, { remoteRank: 1 - rank, notifyNum: 2 }, 1);
    /// HcommChannelNotifyRecordOnThread(t, ch, NOTIFY_IDX_FIN_ACK);   // FIN_ACK is 2
    /// ```
    ///
    /// ## Fix
    /// Acquire the channel (or thread) with as many notifies as the protocol uses:
    /// `notifyNum: 3` for ACK, DATA_SIGNAL and FIN_ACK; or use an index below the count.
    ///
    /// Method: each call's evaluated index against the count its channel or thread
    /// instance was acquired with, per concrete execution. For a parametric program, z3
    /// also proves `notify-index-in-range` for every parameter value, rank and loop
    /// iteration, or finds the smallest counterexample (run concretely, named in a note).
    pub struct NotifyIndexOutOfRange;
    code = "SG302",
    name = "notify-index-out-of-range",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// One out-of-range use: the node, the instance whose count applies, and the index.
struct Use {
    node: NodeId,
    inst: InstId,
    index: i64,
    count: i64,
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    // The builder leaves these calls out of every other rule: the runtime rejects them.
    let uses: Vec<Use> = exec
        .rejected_notifies
        .iter()
        .filter_map(|&(node, inst, index)| {
            Some(Use {
                node,
                inst,
                index,
                count: exec.instance(inst).notify_num?,
            })
        })
        .collect();
    // One finding per (channel or thread object, index): its first use is primary, the
    // other calls and the acquire are related.
    let mut done: HashSet<(ObjId, i64)> = HashSet::new();
    for first in &uses {
        let obj = exec.instance(first.inst).obj;
        if !done.insert((obj, first.index)) {
            continue;
        }
        let group: Vec<&Use> = uses
            .iter()
            .filter(|u| exec.instance(u.inst).obj == obj && u.index == first.index)
            .collect();
        out.push(diagnostic(analysis, &group));
    }
}

/// `largest index + 1` of `op` as a formula over the parameters ("N"), when the program
/// is parametric and the index is linear in them.
fn parametric_count(program: &crate::model::Program, op: &crate::model::Op) -> Option<String> {
    use crate::model::OpKind;
    let index = match &op.kind {
        OpKind::ChannelNotifyRecord { index, .. }
        | OpKind::ChannelNotifyWait { index, .. }
        | OpKind::ThreadNotifyRecord { index, .. }
        | OpKind::ThreadNotifyWait { index, .. } => index,
        OpKind::RemoteWrite {
            notify: Some(index), ..
        } => &**index,
        _ => return None,
    };
    let needed = crate::smt::bounds::largest(program, op, index)?.offset(1)?;
    needed.is_parametric().then(|| needed.display(program).to_string())
}

fn diagnostic(analysis: &Analysis, group: &[&Use]) -> Diagnostic {
    let exec = analysis.exec;
    let first = group[0];
    let instance = exec.instance(first.inst);
    let object = exec.program.object(instance.obj);
    let noun = object.kind.noun();
    let name = object.shown().to_string();
    let api = &exec.node(first.node).op.api;
    let is_channel = matches!(object.kind, crate::model::ObjectKind::Channel(_));
    let field = if is_channel {
        "notifyNum"
    } else if object.created_by.as_deref() == Some("HcclThreadAcquire") {
        "notifyNumPerThread"
    } else {
        "notifyNum"
    };
    let has = match first.count {
        n if n < 0 => format!("{noun} {name} has no notifies ({field} {n} is negative)"),
        0 if is_channel => format!("{noun} {name} has no notifies ({field} 0, the HcclChannelDescInit default)"),
        0 => format!("{noun} {name} has no notifies ({field} 0)"),
        1 => format!("{noun} {name} has only notify 0 ({field} 1)"),
        n => format!("{noun} {name} has notifies 0..={} ({field} {n})", n - 1),
    };
    let message = if first.index < 0 {
        format!(
            "{api} uses notify index {}, which is negative: the call is rejected and this synchronization step does not happen",
            first.index
        )
    } else {
        format!(
            "{api} uses notify index {}, but {has}: the call is rejected and this synchronization step does not happen",
            first.index
        )
    };
    let label = match first.count {
        _ if first.index < 0 => "notify indices start at 0".to_string(),
        0 => format!("{name} has no notify {}", first.index),
        n => format!("index {} is not below {field} {n}", first.index),
    };
    let mut diagnostic =
        Diagnostic::new(&NotifyIndexOutOfRange::INFO, analysis.span(first.node), message).with_label(label);
    let mut seen: HashSet<Span> = HashSet::from([analysis.span(first.node)]);
    for other in &group[1..] {
        let span = analysis.span(other.node);
        if seen.insert(span.clone()) {
            diagnostic = diagnostic.with_related(
                span,
                format!("{} uses index {} too", analysis.describe(other.node), other.index),
            );
        }
    }
    if let Some(created) = instance.created {
        let span = analysis.span(created);
        if seen.insert(span.clone()) {
            diagnostic = diagnostic.with_related(span, format!("{name} is acquired here with {field} {}", first.count));
        }
    }
    diagnostic.starves = starved_waits(analysis, group);
    let op = exec.node(first.node).op;
    let help = if first.index < 0 {
        format!("use an index from 0 to {field} - 1")
    } else if let Some(needed) = parametric_count(exec.program, op) {
        // Advice for every parameter value, not only the counterexample's.
        let params: Vec<&str> = exec.program.params.iter().map(|p| p.name.as_str()).collect();
        format!(
            "acquire {name} with {field}: {needed} (or more), enough for this call's index for every {}, or keep the index below {field}",
            params.join(" and ")
        )
    } else if first.count <= 0 {
        format!("acquire {name} with {field}: {} (or more)", i128::from(first.index) + 1)
    } else {
        format!(
            "acquire {name} with {field}: {} (or more), or use an index below {}",
            i128::from(first.index) + 1,
            first.count
        )
    };
    diagnostic.with_help(help)
}

/// The waits a rejected record leaves without a signal: the unsatisfied waits at the
/// far end of its channel (the peer's channel back to this rank), or on its target
/// HCCL thread.
fn starved_waits(analysis: &Analysis, group: &[&Use]) -> Vec<Span> {
    let exec = analysis.exec;
    let mut starved = Vec::new();
    for rejected in group {
        let node = exec.node(rejected.node);
        let rank = i64::from(node.rank(exec));
        let receives = |action: &Action, wait_rank: i64| match (&node.op.kind, action) {
            (
                OpKind::ChannelNotifyRecord { .. } | OpKind::RemoteWrite { .. },
                Action::ChannelNotifyWait { channel, .. },
            ) => {
                exec.instance(rejected.inst).remote_rank == Some(wait_rank)
                    && exec.instance(*channel).remote_rank == Some(rank)
            }
            (OpKind::ThreadNotifyRecord { .. }, Action::ThreadNotifyWait { thread, .. }) => *thread == rejected.inst,
            _ => false,
        };
        for &wait in &analysis.hb.matching.unsatisfied {
            let waiting = exec.node(wait);
            let span = analysis.span(wait);
            if receives(&waiting.action, i64::from(waiting.rank(exec))) && !starved.contains(&span) {
                starved.push(span);
            }
        }
    }
    starved
}
