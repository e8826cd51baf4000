use crate::analysis::ProgramContext;
use crate::diagnostic::{Diagnostic, Fix, FixEdit};
use crate::model::Pipe;
use crate::rules::declare_rule;
use syncguard_model::kernel::KOpKind;

declare_rule! {
    /// ## What it detects
    /// `PipeBarrier<PIPE_S>()`. Structural: every call in a kernel, reached or not.
    ///
    /// ## Why is this a bug
    /// The Ascend C documentation lists `PIPE_S` as not supported by `PipeBarrier`: the
    /// scalar unit already runs its instructions in order, and the barrier does not order
    /// the scalar unit with any other pipe, which is what such a call is usually meant to do.
    ///
    /// ## Example
    /// ```text
    /// AscendC::PipeBarrier<PIPE_S>();
    /// ```
    ///
    /// ## Fix
    /// Remove it; to order the scalar unit with another pipe use a flag
    /// (`SetFlag<HardEvent::V_S>(id)` / `WaitFlag<HardEvent::V_S>(id)`), or
    /// `PipeBarrier<PIPE_ALL>()`.
    pub struct PipeBarrierScalar;
    code = "SG810",
    name = "pipe-barrier-scalar",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for kernel in &context.program.kernels {
        for op in crate::kernel::calls(kernel) {
            if !matches!(op.kind, KOpKind::Barrier(Pipe::S)) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &PipeBarrierScalar::INFO,
                    op.span.clone(),
                    "PipeBarrier<PIPE_S> is not supported: it orders nothing the scalar unit does with the other pipes",
                )
                .with_label("PIPE_S barrier")
                .with_help(
                    "remove it; order the scalar unit with a SetFlag/WaitFlag pair (e.g. V_S) or PipeBarrier<PIPE_ALL>",
                )
                .with_fix(Fix {
                    title: "Remove PipeBarrier<PIPE_S>".into(),
                    edits: vec![FixEdit::Remove { span: op.span.clone() }],
                }),
            );
        }
    }
}
