use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// A file that looks like a PyTorch NCCL Flight Recorder dump (a pickle or JSON
    /// object naming `version`, `pg_config` or `entries`) but cannot be read: it is
    /// truncated (the job was killed while it was written), an entry lacks a field the
    /// analysis needs (`record_id`, `collective_seq_id`, `profiling_name`, `state`,
    /// `process_group`), it uses a pickle opcode no dump uses, it nests too deep, no
    /// rank can be told (no `rank` field and no number at the end of the file name),
    /// or two files claim the same rank.
    ///
    /// ## Why is this a bug
    /// That rank's history is left out of the comparison: a desync or a hang that
    /// rank would show is not found, and the other ranks are compared without it.
    ///
    /// ## Example
    /// ```text
    /// nccl_trace_rank_3: the pickle ends at byte 81920 without its STOP opcode (truncated)
    /// ```
    ///
    /// ## Fix
    /// Dump again (`TORCH_NCCL_DUMP_ON_TIMEOUT=1`, and give the watchdog time to write
    /// it: `TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC`), and keep the file name's rank suffix
    /// (`TORCH_NCCL_DEBUG_INFO_TEMP_FILE` prefix + rank).
    pub struct FlightRecorderUnreadable;
    code = "SG900",
    name = "flight-recorder-unreadable",
    severity = Error,
}
