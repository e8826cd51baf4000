use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::Action;
use crate::rules::declare_rule;
use crate::rules::notifies::times;

declare_rule! {
    /// ## What it detects
    /// A notify wait that no record can satisfy: `HcommChannelNotifyWaitOnThread` on a
    /// notify index the peer rank never records into (or records fewer times than it is
    /// waited on), `HcommThreadNotifyWaitOnThread` that no thread records, or
    /// `aclrtWaitAndResetNotify` with no matching `aclrtRecordNotify`. Notifies are
    /// binary flags: the k-th wait consumes the k-th record. Also an `aclrtValueWait`
    /// (`cuStreamWaitValue*`) whose condition no `aclrtValueWrite` of the word makes
    /// true, or whose only satisfying writes another write certainly overwrites before
    /// it. Event waits are SG104, group tasks SG202.
    ///
    /// ## Why is this a bug
    /// The waiting stream or HCCL thread blocks until the wait times out (HCCL's
    /// default is 1836 s), then the collective fails with "notify wait timeout ...
    /// has not received the Notify record from remote rank"; with timeout 0 it hangs.
    ///
    /// ## Example
    /// ```text
    /// if rank == 0 {
    ///     HcommChannelNotifyWaitOnThread(t, ch, 2, 1836);   // rank 1 never records 2
    /// }
    /// ```
    ///
    /// ## Fix
    /// Make every rank issue the same notify sequence: each wait needs a record into the
    /// same index on the peer's channel, on every path (rank-dependent branches included).
    pub struct WaitWithoutSignal;
    code = "SG502",
    name = "wait-without-signal",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    for &wait in &analysis.hb.matching.unsatisfied {
        let node = exec.node(wait);
        let waiter = exec.agent_name(node.agent);
        let value_wait = matches!(node.action, Action::ValueWait { .. });
        let (label, help) = if value_wait {
            (
                "no value write satisfies this wait",
                "write a value that satisfies the condition from another stream, and do not overwrite it before the wait has seen it",
            )
        } else {
            (
                "no record matches this wait",
                "give every wait a matching record on the other side, on every path",
            )
        };
        let what = match &node.action {
            Action::ChannelNotifyWait { channel, index } => {
                let peer = exec
                    .instance(*channel)
                    .remote_rank
                    .map_or("the peer".to_string(), |r| format!("rank {r}"));
                format!(
                    "notify {index} of channel {}: {peer} never records it (or records it fewer times)",
                    exec.instance_name(*channel)
                )
            }
            Action::ThreadNotifyWait { thread, index } => {
                format!(
                    "notify {index} of HCCL thread {}: no thread records it",
                    exec.instance_name(*thread)
                )
            }
            Action::NotifyWait(notify) => {
                let key = crate::hb::FlagKey::Acl(exec.ipc_shared(*notify));
                let queue = analysis.hb.matching.notify_queues.get(&key);
                let (records, waits) = queue.map_or((0, 0), |q| (q.records.len(), q.waits.len()));
                match records {
                    0 => format!("notify {}: nothing records it", exec.instance_name(*notify)),
                    _ => format!(
                        "notify {}: it is recorded {} but waited on {}, and each wait consumes one record",
                        exec.instance_name(*notify),
                        times(records),
                        times(waits)
                    ),
                }
            }
            Action::ValueWait {
                word, value, condition, ..
            } => {
                format!(
                    "{}: no value write makes it true",
                    condition.describe(&exec.word_name(word), *value)
                )
            }
            _ => continue,
        };
        out.push(
            Diagnostic::new(
                &WaitWithoutSignal::INFO,
                analysis.span(wait),
                format!("{waiter} waits forever on {what}"),
            )
            .with_label(label)
            .with_help(help),
        );
    }
}
