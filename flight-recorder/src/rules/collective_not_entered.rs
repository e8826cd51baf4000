use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// In PyTorch NCCL Flight Recorder dumps of one job, the first collective of a
    /// process group that some of its ranks entered and others never did: ranks 0–2
    /// recorded `nccl:all_reduce` as collective #42, rank 3's dump ends at #41. The
    /// ranks that never entered are the hang's culprits; the last operation each of
    /// them did record is shown. A rank whose ring buffer wrapped is only judged on
    /// the sequence numbers its dump still covers. In a group of two ranks,
    /// point-to-point operations are matched by `p2p_seq_id` the same way.
    ///
    /// ## Why is this a bug
    /// A collective completes only when every rank of the group has entered it: the
    /// ranks that did enter wait until the watchdog timeout kills the job, and the
    /// timeout is reported on them, not on the rank that is really at fault.
    ///
    /// ## Example
    /// ```text
    /// if rank != 3:             # rank 3 skips the step (an exception, an early return,
    ///     dist.all_reduce(t)    # a data loader that ran dry)
    /// ```
    ///
    /// ## Fix
    /// Find why the culprit rank stopped before the collective (its own log, its last
    /// recorded operation, a CPU-side hang or exception), and make every rank of the
    /// group call it.
    pub struct CollectiveNotEntered;
    code = "SG904",
    name = "collective-not-entered",
    severity = Error,
}
