use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::FlagFinding;
use crate::kernel::walk::FlagKey;
use crate::rules::declare_rule;

use super::{describe_flag, kernel_of};

declare_rule! {
    /// ## What it detects
    /// A wait on one core that nothing satisfies: a `WaitFlag<SRC_DST>(id)` with no
    /// matching `SetFlag` left to consume (including a loop whose first iteration waits
    /// for a flag that is only set at the end of the iteration), a wait whose only set
    /// comes after something the wait itself blocks (a cycle across pipes), a `DeQue`
    /// with nothing enqueued, or an `AllocTensor` of a slot that was never freed.
    ///
    /// ## Why is this a bug
    /// A wait blocks its pipe (a wait on `PIPE_S`, the issue of everything after it)
    /// until the flag is set. With no set to come the core never finishes: the operator
    /// hangs until the runtime's AI Core timeout kills it, and with it the stream.
    ///
    /// ## Example
    /// ```text
    /// for i in 0..n {
    ///     AscendC::WaitFlag<M_MTE1>(3);   // first iteration: nothing set yet
    ///     ...
    ///     AscendC::SetFlag<M_MTE1>(3);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Set the flag once before the loop (and wait for the last set after it), pair
    /// every `DeQue` with an `EnQue` and every `AllocTensor` beyond the queue's depth with
    /// a `FreeTensor`.
    pub struct WaitNeverSet;
    code = "SG804",
    name = "wait-never-set",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for finding in &context.kernels().hangs {
        if super::flag_direction_mismatch::mismatched_set(context.program, finding).is_some() {
            continue;
        }
        out.push(report(context, finding));
    }
}

fn report(context: &ProgramContext, finding: &FlagFinding) -> Diagnostic {
    let kernel = kernel_of(context.program, finding.context.kernel);
    let flag = describe_flag(kernel, finding.key);
    let (message, help) = match (finding.other, finding.key) {
        (Some(_), _) => (
            format!("kernel `{}` hangs: `{}` waits for {flag}, which is only set after the wait returns", kernel.name, finding.op.api),
            "set the flag before the wait can block (before the loop, for a wait at the top of one), and wait for the last set after it".to_string(),
        ),
        (None, FlagKey::Queue { freed: false, .. }) => (
            format!("kernel `{}` hangs: `{}` waits for a tensor nobody enqueued", kernel.name, finding.op.api),
            "EnQue the tensor on the producer side before this DeQue".to_string(),
        ),
        (None, FlagKey::Queue { freed: true, .. }) => (
            format!("kernel `{}` hangs: `{}` waits for a slot nobody freed", kernel.name, finding.op.api),
            "FreeTensor every tensor of the queue once it is consumed".to_string(),
        ),
        (None, FlagKey::Event { event, id }) => (
            format!("kernel `{}` hangs: `{}` waits for {flag}, which is never set", kernel.name, finding.op.api),
            format!(
                "set it first: `{}` on the {} side before this wait",
                super::flag_call(true, event, id),
                event.src.name()
            ),
        ),
    };
    let mut diagnostic = Diagnostic::new(&WaitNeverSet::INFO, finding.op.span.clone(), message)
        .with_label("waits forever")
        .with_help(help)
        .with_note(format!("found on {}", finding.context.describe()));
    if let Some(set) = finding.other {
        diagnostic = diagnostic.with_related(set.span.clone(), "the set it waits for, issued only after the wait");
    }
    for later in finding.also.iter().filter(|op| op.span != finding.op.span) {
        diagnostic = diagnostic.with_related(later.span.clone(), "also waits forever, because of the first");
    }
    diagnostic
}
