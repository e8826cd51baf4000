use super::{Call, check_all_paths, check_repeated};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `AscendC::WaitPreTaskEnd` not executed exactly once on every core of a SuperKernel
    /// sub-kernel: some cores or TilingKeys call it and others do not (a call inside a
    /// branch on `GetBlockIdx()`, `TILING_KEY_IS(k)` or the core type, or after an early
    /// return only some cores take), or one core calls it more than once.
    ///
    /// Path-based, like SG401 and SG402: every core's path is walked for every TilingKey
    /// and every value of the parameters kernel code reads. A branch on a parameter is
    /// taken by every core alike, so no core calling it for some parameter value is
    /// uniform and fine.
    ///
    /// ## Why is this a bug
    /// `WaitPreTaskEnd` is the partner of `SetNextTaskStart` and carries the same
    /// constraints: called on every core, exactly once per core, on every TilingKey the
    /// operator may run. It is a cross-core sync: when cores disagree on how many they
    /// execute, the inter-task sync counts differ and the SuperKernel hangs (on Atlas A3
    /// and Ascend 950; A2 and 310P ignore the call, where this is reported as a warning).
    ///
    /// ## Example
    /// ```text
    /// subkernel relu_custom(tiling_keys: [1]) {
    ///     if GetBlockIdx() < 40 {
    ///         AscendC::WaitPreTaskEnd();    // cores 40..47 never call it
    ///         AscendC::DataCopy(UB, y[GetBlockIdx() * 1 KiB..(GetBlockIdx() + 1) * 1 KiB]);
    ///     }
    ///     AscendC::SetNextTaskStart();
    /// }
    /// ```
    ///
    /// ## Fix
    /// Call `WaitPreTaskEnd` once at the start of the sub-kernel, before its first data
    /// move and outside any per-core or per-TilingKey branch.
    ///
    /// Method: every core's path is walked for every TilingKey and core of the
    /// sub-kernel (and the sampled parameter values, see the SG4xx module notes); z3
    /// also proves the property `wait-pre-task-end-once` for every TilingKey, core and parameter value,
    /// or finds the smallest counterexample (TilingKey, core type and index), which is
    /// named in a note.
    pub struct WaitPreTaskEndMismatch;
    code = "SG406",
    name = "wait-pre-task-end-mismatch",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    check_all_paths(
        context.program,
        &WaitPreTaskEndMismatch::INFO,
        Call::WaitPreTaskEnd,
        out,
    );
    check_repeated(
        context.program,
        &WaitPreTaskEndMismatch::INFO,
        Call::WaitPreTaskEnd,
        out,
    );
}
