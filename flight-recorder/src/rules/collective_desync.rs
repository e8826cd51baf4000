use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// In PyTorch NCCL Flight Recorder dumps of one job (one file per rank), the first
    /// collective sequence number (`collective_seq_id`) of a process group at which
    /// its ranks ran different operations (`profiling_name`): most ranks ran
    /// `nccl:all_reduce` as collective #42 while rank 3 ran `nccl:broadcast`. The
    /// ranks that differ from the most common operation are named as the culprits,
    /// with what each ran instead and the Python line that called it. In a group of
    /// two ranks, point-to-point operations are matched by `p2p_seq_id` too: a send
    /// must meet a receive.
    ///
    /// ## Why is this a bug
    /// NCCL matches collectives by their order in the communicator, not by their name:
    /// ranks that issue different collectives at the same position exchange buffers of
    /// the wrong operation, which hangs until the watchdog timeout or silently
    /// corrupts data. Everything the group does after the first desync is off by one,
    /// so only the first is reported.
    ///
    /// ## Example
    /// ```text
    /// # rank 0..2, train.py:40            # rank 3, train.py:44
    /// dist.all_reduce(grad)               if loss_is_nan: dist.broadcast(flag, 0)
    /// ```
    ///
    /// ## Fix
    /// Make every rank of the group issue the same collectives in the same order:
    /// look for a rank-dependent branch (`if rank == 0`, a data-dependent early exit,
    /// a different number of micro-batches) around the culprit's call site.
    pub struct CollectiveDesync;
    code = "SG901",
    name = "collective-desync",
    severity = Error,
}
