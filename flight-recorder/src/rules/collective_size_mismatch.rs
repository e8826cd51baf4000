use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// In PyTorch NCCL Flight Recorder dumps of one job, a collective that every rank
    /// of a process group ran at the same sequence number with the same operation but
    /// with different tensor shapes (`input_sizes`, `output_sizes`): rank 1
    /// all-reduced a `[1024]` tensor while the others all-reduced `[1000]`. Operations
    /// whose shapes legitimately differ per rank are not compared (`all_to_all*`,
    /// `gather` outputs, `scatter` inputs, the `_v` variants, `coalesced`). In a group
    /// of two ranks, a send is compared with its receive.
    ///
    /// ## Why is this a bug
    /// NCCL trusts every rank's count: different element counts make the collective
    /// read or write past the smaller buffer, or wait for bytes that never come (a
    /// hang at the watchdog timeout).
    ///
    /// ## Example
    /// ```text
    /// dist.all_reduce(torch.zeros(1000 if rank else 1024))
    /// ```
    ///
    /// ## Fix
    /// Give every rank the same shape (pad the last batch, agree on the size first).
    pub struct CollectiveSizeMismatch;
    code = "SG902",
    name = "collective-size-mismatch",
    severity = Error,
}
