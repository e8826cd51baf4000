use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::walk::FlagKey;
use crate::rules::declare_rule;

use super::{flag_call, kernel_of};

declare_rule! {
    /// ## What it detects
    /// `SetFlag<SRC_DST>(id)` issued again while the same flag is still set: no
    /// `WaitFlag<SRC_DST>(id)` was issued since the previous set (msSanitizer synccheck's
    /// "redundant set_flag", found statically, on every path and loop iteration walked).
    ///
    /// ## Why is this a bug
    /// Two consecutive sets of one pipe pair and id are undefined behaviour: the flag
    /// holds one signal, so one set is lost or left over. A later
    /// `PipeBarrier<PIPE_ALL>` may then hang, and a left-over set shifts every pair of
    /// the next operator by one.
    ///
    /// ## Example
    /// ```text
    /// AscendC::SetFlag<MTE3_MTE2>(0);
    /// AscendC::SetFlag<MTE3_MTE2>(0);   // the first is not waited for yet
    /// AscendC::WaitFlag<MTE3_MTE2>(0);
    /// ```
    ///
    /// ## Fix
    /// Wait for each set before setting the flag again, or give the second pair its own
    /// event id.
    pub struct FlagSetWhilePending;
    code = "SG806",
    name = "flag-set-while-pending",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for finding in &context.kernels().double_sets {
        let FlagKey::Event { event, id } = finding.key else {
            continue;
        };
        let kernel = kernel_of(context.program, finding.context.kernel);
        let mut diagnostic = Diagnostic::new(
            &FlagSetWhilePending::INFO,
            finding.op.span.clone(),
            format!(
                "flag {} id {id} is set again while still set in kernel `{}`: one signal is lost (undefined behaviour)",
                event.name(),
                kernel.name
            ),
        )
        .with_label("set again before anything waited")
        .with_help(format!(
            "wait for the first set (`{}`) before setting it again, or use another event id",
            flag_call(false, event, id)
        ))
        .with_note(format!("found on {}", finding.context.describe()));
        if let Some(first) = finding.other {
            diagnostic = diagnostic.with_related(first.span.clone(), "the set still pending");
        }
        out.push(diagnostic);
    }
}
