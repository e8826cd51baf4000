use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// A collective a rank entered but never finished, in PyTorch NCCL Flight Recorder
    /// dumps: with the dumps of the whole group, a rank whose entry is `started` or
    /// `scheduled` at a sequence number the other ranks `completed` (an error); when
    /// every rank is still in it, or when one dump is checked alone, the oldest entry
    /// of each group that is not completed (a warning: one rank's dump cannot say
    /// which peer it waits for). `retired` while not completed means the watchdog
    /// timed it out, and is said.
    ///
    /// ## Why is this a bug
    /// A collective that never completes holds every later operation on its stream:
    /// the job hangs until the watchdog timeout. A rank still in a collective the
    /// others finished points at that rank (its GPU, its link, or work queued before
    /// the collective on its stream).
    ///
    /// ## Example
    /// ```text
    /// rank 2: nccl:all_reduce #7 started (ranks 0, 1, 3 completed it)
    /// ```
    ///
    /// ## Fix
    /// Look at the stuck rank: the kernels queued before the collective on its stream,
    /// its NCCL log (`NCCL_DEBUG=INFO`), its device health. When every rank is stuck,
    /// check the dumps of the other groups: a desync or a missing rank there is the
    /// usual cause.
    pub struct CollectiveStuck;
    code = "SG905",
    name = "collective-stuck",
    severity = Error,
}
