use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use syncguard_model::kernel::KOpKind;

declare_rule! {
    /// ## What it detects
    /// `CrossCoreSetFlag` or `CrossCoreWaitFlag` in a kernel of type
    /// `KERNEL_TYPE_AIV_ONLY` or `KERNEL_TYPE_AIC_ONLY`. Structural.
    ///
    /// ## Why is this a bug
    /// Only the mixed kernel types (`MIX_AIV_1_0`, `MIX_AIC_1_0`, `MIX_AIC_1_1`,
    /// `MIX_AIC_1_2`) get the scheduler that carries cross-core flags; in a single-type
    /// kernel a wait is never satisfied and the kernel hangs.
    ///
    /// ## Example
    /// ```text
    /// aicore k(x, type: AIV_ONLY) { AscendC::CrossCoreWaitFlag(0); }
    /// ```
    ///
    /// ## Fix
    /// Declare the kernel mixed (`KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0)` for a
    /// vector kernel), or synchronize the cores another way.
    pub struct CrossCoreWithoutScheduler;
    code = "SG854",
    name = "cross-core-in-single-type-kernel",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for kernel in &context.program.kernels {
        if kernel.kind.has_cross_core_scheduler() {
            continue;
        }
        for op in crate::kernel::calls(kernel) {
            if !matches!(
                op.kind,
                KOpKind::CrossCoreSetFlag { .. } | KOpKind::CrossCoreWaitFlag { .. }
            ) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &CrossCoreWithoutScheduler::INFO,
                    op.span.clone(),
                    format!(
                        "kernel `{}` is {}: it has no cross-core scheduler, and `{}` never pairs (a wait hangs)",
                        kernel.name,
                        kernel.kind.name(),
                        op.api
                    ),
                )
                .with_label("cross-core sync in a single-type kernel")
                .with_help("make the kernel a mixed type (e.g. KERNEL_TYPE_MIX_AIV_1_0), or drop the cross-core sync"),
            );
        }
    }
}
