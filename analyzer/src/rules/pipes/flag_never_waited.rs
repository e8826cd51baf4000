use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::walk::FlagKey;
use crate::rules::declare_rule;

use super::{flag_call, kernel_of};

declare_rule! {
    /// ## What it detects
    /// A `SetFlag<SRC_DST>(id)` that no `WaitFlag<SRC_DST>(id)` of the same core ever
    /// consumes: the flag is still set when the kernel ends (counted per core run, loop
    /// iterations unrolled, so a set in a loop whose last iteration's flag nobody waits
    /// for is reported).
    ///
    /// ## Why is this a bug
    /// Hardware flags outlive the kernel. The next operator on the core starts with the
    /// flag already set: its first `WaitFlag` on that id returns at once, before the data
    /// it guards is ready, and every later pair is shifted by one. This is the corruption
    /// msSanitizer's synccheck was written for.
    ///
    /// ## Example
    /// ```text
    /// AscendC::SetFlag<V_MTE2>(0);
    /// for i in 0..n {
    ///     AscendC::WaitFlag<V_MTE2>(0);
    ///     ...
    ///     AscendC::SetFlag<V_MTE2>(0);
    /// }
    /// // no WaitFlag<V_MTE2>(0) after the loop
    /// ```
    ///
    /// ## Fix
    /// Wait for the last set before the kernel ends (`WaitFlag<V_MTE2>(0)` after the
    /// loop), or remove the set nothing needs.
    pub struct FlagNeverWaited;
    code = "SG803",
    name = "flag-never-waited",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let facts = context.kernels();
    // A set whose wait names another HardEvent is SG805's: it leads with the mismatch.
    let mismatched: Vec<_> = facts
        .hangs
        .iter()
        .filter_map(|hang| super::flag_direction_mismatch::mismatched_set(context.program, hang))
        .map(|(set, _)| set.span.clone())
        .collect();
    for finding in &facts.pending_sets {
        let FlagKey::Event { event, id } = finding.key else {
            continue;
        };
        // A set while set leaves one over: SG806 leads with that.
        let set_twice = facts
            .double_sets
            .iter()
            .any(|d| d.key == finding.key && d.context.kernel == finding.context.kernel);
        if mismatched.contains(&finding.op.span) || set_twice {
            continue;
        }
        let kernel = kernel_of(context.program, finding.context.kernel);
        let wait = flag_call(false, event, id);
        out.push(
            Diagnostic::new(
                &FlagNeverWaited::INFO,
                finding.op.span.clone(),
                format!(
                    "flag {} id {id} is still set when kernel `{}` ends: the next operator's first WaitFlag on it returns early",
                    event.name(),
                    kernel.name
                ),
            )
            .with_label("set here, never waited for")
            .with_help(format!("wait for it before the kernel ends (`{wait}`), or remove the set"))
            .with_note(format!("found on {}", finding.context.describe())),
        );
    }
}
