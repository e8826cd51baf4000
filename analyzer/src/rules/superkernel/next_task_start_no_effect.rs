use super::{calls_in, effective};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::model::OpKind;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `AscendC::SetNextTaskStart` (and its partner `WaitPreTaskEnd`) in a SuperKernel
    /// built for a product that ignores it: `target A2;` or `target 310P;`. One finding
    /// per SuperKernel, at its first call. Structural: reads `target` and the kernel code.
    ///
    /// ## Why is this a bug
    /// It is not one at run time, hence info: the documentation supports the call on
    /// Atlas A2 "for compile compatibility only, the function does not take effect"
    /// (likewise 310P); it takes effect on Atlas A3 and Ascend 950. Nothing goes wrong,
    /// but nothing overlaps either: the sub-kernels run strictly one after another, and
    /// the speed-up the call was written for does not happen on this product.
    ///
    /// ## Example
    /// ```text
    /// target A2;
    /// superkernel sk(s1, aiv: 48) {
    ///     subkernel add_custom { AscendC::SetNextTaskStart(); }   // compiled, ignored
    /// }
    /// ```
    ///
    /// ## Fix
    /// Nothing is required. Build for A3 or Ascend 950 to get the overlap, or drop the
    /// calls for this product to keep the kernel honest about what it does.
    pub struct NextTaskStartNoEffect;
    code = "SG404",
    name = "next-task-start-no-effect",
    severity = Info,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let program = context.program;
    let target = program.settings.target;
    if effective(target) {
        return;
    }
    for superkernel in &program.superkernels {
        let mut calls = Vec::new();
        for sub in &superkernel.subkernels {
            calls_in(&sub.body, &mut calls);
        }
        let primary = calls
            .iter()
            .position(|op| matches!(op.kind, OpKind::SetNextTaskStart { .. }))
            .unwrap_or(0);
        let Some(first) = calls.get(primary) else { continue };
        let mut diagnostic = Diagnostic::new(
            &NextTaskStartNoEffect::INFO,
            first.span.clone(),
            format!(
                "{} has no effect on target {}: the product only compiles it, so the sub-kernels of SuperKernel {} still run one after another and nothing overlaps",
                api_name(first),
                target.name(),
                superkernel.name
            ),
        )
        .with_label(format!("ignored on {}", target.name()));
        for (i, op) in calls.iter().enumerate() {
            if i != primary {
                diagnostic = diagnostic.with_related(op.span.clone(), format!("{} is ignored too", api_name(op)));
            }
        }
        out.push(diagnostic.with_help(
            "early start takes effect on Atlas A3 and Ascend 950: build for one of them to get the overlap, or drop the calls for this product",
        ));
    }
}

fn api_name(op: &crate::model::Op) -> &'static str {
    match op.kind {
        OpKind::SetNextTaskStart { .. } => "SetNextTaskStart",
        _ => "WaitPreTaskEnd",
    }
}
