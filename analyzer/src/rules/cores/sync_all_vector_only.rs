use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use syncguard_model::kernel::{KOpKind, KernelKind};

declare_rule! {
    /// ## What it detects
    /// The hard `SyncAll<false>()` (`isAIVOnly = false`: AIC and AIV cores together) in
    /// a kernel with no cube cores (`AIV_ONLY` or `MIX_AIV_1_0`). Structural.
    ///
    /// ## Why is this a bug
    /// With `isAIVOnly = false` the barrier waits for the cube cores too; a pure-vector
    /// kernel has none, so it never completes. The documentation asks pure-vector
    /// kernels for `isAIVOnly = true` (the default).
    ///
    /// ## Example
    /// ```text
    /// aicore k(x, type: AIV_ONLY) { AscendC::SyncAll<false>(); }
    /// ```
    ///
    /// ## Fix
    /// `AscendC::SyncAll()` (or `SyncAll<true>()`) in a vector-only kernel.
    pub struct SyncAllVectorOnly;
    code = "SG856",
    name = "sync-all-cube-in-vector-kernel",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for kernel in &context.program.kernels {
        let vector_only = matches!(kernel.kind, KernelKind::AivOnly | KernelKind::Mix { aic: 0, .. });
        if !vector_only {
            continue;
        }
        for op in crate::kernel::calls(kernel) {
            if !matches!(
                op.kind,
                KOpKind::SyncAll {
                    aiv_only: false,
                    workspace: None
                }
            ) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &SyncAllVectorOnly::INFO,
                    op.span.clone(),
                    format!(
                        "kernel `{}` hangs: SyncAll<false> waits for cube cores, and the kernel (type {}) has none",
                        kernel.name,
                        kernel.kind.name()
                    ),
                )
                .with_label("isAIVOnly = false")
                .with_help("use `AscendC::SyncAll()` (isAIVOnly = true) in a vector-only kernel"),
            );
        }
    }
}
