use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::FlagFinding;
use crate::kernel::walk::FlagKey;
use crate::model::Program;
use crate::rules::declare_rule;
use syncguard_model::kernel::{HardEvent, KOp, KOpKind};

use super::kernel_of;

declare_rule! {
    /// ## What it detects
    /// A `WaitFlag<SRC_DST>(id)` that nothing sets, while the kernel sets the same id
    /// with another `HardEvent`: `SetFlag<S_MTE3>(1)` and `WaitFlag<MTE3_MTE1>(1)`.
    ///
    /// ## Why is this a bug
    /// A flag is named by its source pipe, its destination pipe and its id together;
    /// a set and a wait pair only when all three match. The wait blocks its pipe for a
    /// flag that is never set (the kernel hangs), and the set is left over for the next
    /// operator.
    ///
    /// ## Example
    /// ```text
    /// AscendC::SetFlag<MTE2_V>(0);
    /// AscendC::WaitFlag<V_MTE2>(0);   // the direction is reversed
    /// ```
    ///
    /// ## Fix
    /// Give the wait the set's `HardEvent` (or the set the wait's).
    pub struct FlagDirectionMismatch;
    code = "SG805",
    name = "flag-direction-mismatch",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

/// The set with the wait's id but another `HardEvent`, when the wait's own is never set.
pub(crate) fn mismatched_set<'p>(program: &'p Program, finding: &FlagFinding) -> Option<(&'p KOp, HardEvent)> {
    let FlagKey::Event { event, id } = finding.key else {
        return None;
    };
    if finding.other.is_some() {
        return None;
    }
    let kernel = kernel_of(program, finding.context.kernel);
    let calls = crate::kernel::calls(kernel);
    let sets = || {
        calls.iter().filter_map(|op| match &op.kind {
            KOpKind::SetFlag { event, id } => Some((*op, *event, id.as_const())),
            _ => None,
        })
    };
    if sets().any(|(_, e, _)| e == event) {
        return None;
    }
    sets()
        .find(|(_, e, i)| *e != event && *i == Some(id))
        .map(|(op, e, _)| (op, e))
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for finding in &context.kernels().hangs {
        let Some((set, set_event)) = mismatched_set(context.program, finding) else {
            continue;
        };
        let FlagKey::Event { event, id } = finding.key else {
            continue;
        };
        let kernel = kernel_of(context.program, finding.context.kernel);
        out.push(
            Diagnostic::new(
                &FlagDirectionMismatch::INFO,
                finding.op.span.clone(),
                format!(
                    "kernel `{}` hangs: WaitFlag<{}>({id}) never pairs with SetFlag<{}>({id}): the HardEvents differ",
                    kernel.name,
                    event.name(),
                    set_event.name()
                ),
            )
            .with_label(format!("waits for {} id {id}, which nothing sets", event.name()))
            .with_related(set.span.clone(), format!("sets {} id {id}", set_event.name()))
            .with_help(format!(
                "use one HardEvent for both: `WaitFlag<HardEvent::{}>({id})` if the set is right",
                set_event.name()
            ))
            .with_note(format!("found on {}", finding.context.describe())),
        );
    }
}
