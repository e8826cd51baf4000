use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// A rank that a process group of the job has as a member (`pg_config` ranks in
    /// the PyTorch NCCL Flight Recorder dumps) but that has no dump among the files
    /// checked together (one folder, or the files named together).
    ///
    /// ## Why is this a bug
    /// Often the missing rank is the culprit itself: it crashed, was killed, or hung
    /// on the CPU before its watchdog could dump. Its history cannot be compared, so
    /// a desync or hang that involves it can only be seen from the other ranks.
    ///
    /// ## Example
    /// ```text
    /// dumps/nccl_trace_rank_0, _1, _3: group `0` has ranks [0, 1, 2, 3]; no dump of rank 2
    /// ```
    ///
    /// ## Fix
    /// Collect the missing rank's file (`TORCH_NCCL_DEBUG_INFO_TEMP_FILE` on its node),
    /// or look at that rank's own log for why it did not write one.
    pub struct RankDumpMissing;
    code = "SG906",
    name = "rank-dump-missing",
    severity = Warning,
}
