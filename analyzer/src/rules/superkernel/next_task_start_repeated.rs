use super::{Call, check_repeated};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `AscendC::SetNextTaskStart` executed more than once on one core of a SuperKernel
    /// sub-kernel: two calls on one path (say at the end of `CopyOut()` and again at the
    /// end of `Process()`), or one call inside a loop.
    ///
    /// Path-based: every core's path is walked for every TilingKey and every value of the
    /// parameters kernel code reads, with loops unrolled, and the calls on it counted.
    ///
    /// ## Why is this a bug
    /// The documentation requires the call "on every core, and only once on each core".
    /// Each call sends one early-start sync signal; the SuperKernel counts one per core.
    /// Extra signals make the counts mismatch: the SuperKernel hangs, or a later
    /// sub-kernel is released before its predecessor is done (on Atlas A3 and Ascend 950;
    /// A2 and 310P ignore the call, where this is reported as a warning).
    ///
    /// ## Example
    /// ```text
    /// AscendC::DataCopy(y[tile..tile + 1 KiB], UB);
    /// AscendC::SetNextTaskStart();     // end of CopyOut()
    /// AscendC::SetNextTaskStart();     // end of Process(): a second signal
    /// ```
    ///
    /// ## Fix
    /// Keep exactly one call per core, after the sub-kernel's last data move; move a call
    /// out of a loop to after it.
    ///
    /// Method: every core's path is walked for every TilingKey and core of the
    /// sub-kernel (and the sampled parameter values, see the SG4xx module notes); z3
    /// also proves the property `next-task-start-once` for every TilingKey, core and parameter value,
    /// or finds the smallest counterexample (TilingKey, core type and index), which is
    /// named in a note.
    pub struct NextTaskStartRepeated;
    code = "SG402",
    name = "next-task-start-repeated",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    check_repeated(
        context.program,
        &NextTaskStartRepeated::INFO,
        Call::SetNextTaskStart,
        out,
    );
}
