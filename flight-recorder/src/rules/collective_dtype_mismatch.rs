use super::declare_dump_rule;

declare_dump_rule! {
    /// ## What it detects
    /// In PyTorch NCCL Flight Recorder dumps of one job, a collective that the ranks of
    /// a process group ran at the same sequence number with the same operation but on
    /// tensors of different dtypes (`input_dtypes`, `output_dtypes`): `Float` on rank 0,
    /// `BFloat16` on rank 1. Empty sides (the non-root ranks of a `gather`) and
    /// `broadcast`/`scatter` inputs are not compared, as `fr_trace` does.
    ///
    /// ## Why is this a bug
    /// NCCL reduces and copies raw bytes by the dtype each rank passes: mixed dtypes
    /// give garbage values, or a size mismatch in bytes that hangs.
    ///
    /// ## Example
    /// ```text
    /// dist.all_reduce(grad.bfloat16() if use_bf16 else grad)   # use_bf16 differs per rank
    /// ```
    ///
    /// ## Fix
    /// Cast to one dtype before the collective on every rank.
    pub struct CollectiveDtypeMismatch;
    code = "SG903",
    name = "collective-dtype-mismatch",
    severity = Error,
}
