use super::{Call, check_all_paths};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A SuperKernel sub-kernel in which some cores or some TilingKeys call
    /// `AscendC::SetNextTaskStart` and others do not: a call inside a branch on
    /// `TILING_KEY_IS(k)`, `GetBlockIdx()` or the core type, or after an early `return`
    /// that only some cores take. The message names a TilingKey and core that skip the
    /// call and one that makes it.
    ///
    /// Path-based: every core's path is walked for every TilingKey of the sub-kernel and
    /// every value of the parameters kernel code reads (small domains enumerated). A
    /// branch on a parameter (a kernel argument such as `EMPTY_GROUP_LIST`) is taken by
    /// every core alike, so when no core calls it for some parameter value, that is
    /// uniform and not reported.
    ///
    /// ## Why is this a bug
    /// The SetNextTaskStart documentation requires the call on every core, exactly once
    /// per core, and "if one TilingKey branch of a sub-kernel calls it, every TilingKey
    /// the operator may run must call it, otherwise the kernel hangs because the numbers
    /// of sync instructions do not match". The early-start signal is a cross-core sync:
    /// the SuperKernel waits for one signal per core, and a core that never sends it
    /// leaves the next sub-kernel waiting forever (on Atlas A3 and Ascend 950; A2 and
    /// 310P ignore the call, where this is reported as a warning).
    ///
    /// ## Example
    /// ```text
    /// subkernel add_custom(tiling_keys: [1, 2]) {
    ///     if TILING_KEY_IS(1) {
    ///         AscendC::DataCopy(y[0..1 KiB], UB);
    ///         AscendC::SetNextTaskStart();      // tiling key 2 never calls it
    ///     }
    /// }
    /// ```
    ///
    /// ## Fix
    /// Call `SetNextTaskStart` once, after the last data move, on a path every core and
    /// every TilingKey reaches: after the branches, not inside them.
    ///
    /// Method: every core's path is walked for every TilingKey and core of the
    /// sub-kernel (and the sampled parameter values, see the SG4xx module notes); z3
    /// also proves the property `next-task-start-once` for every TilingKey, core and parameter value,
    /// or finds the smallest counterexample (TilingKey, core type and index), which is
    /// named in a note.
    pub struct NextTaskStartNotOnAllPaths;
    code = "SG401",
    name = "next-task-start-not-on-all-paths",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    check_all_paths(
        context.program,
        &NextTaskStartNotOnAllPaths::INFO,
        Call::SetNextTaskStart,
        out,
    );
}
