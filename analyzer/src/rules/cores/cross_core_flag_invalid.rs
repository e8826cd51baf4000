use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::model::Pipe;
use crate::rules::declare_rule;
use syncguard_model::kernel::{CROSS_CORE_FLAGS, KOpKind};

use super::uses_hard_sync_all;

declare_rule! {
    /// ## What it detects
    /// A cross-core flag call the documentation rules out: a flag id outside 0–15 (it
    /// is truncated to its low 4 bits), an id 11–14 in a kernel that also calls the hard
    /// `SyncAll` (which uses those ids), a mode other than 0, 1 or 2 (4 is Ascend 950
    /// only), or `CrossCoreSetFlag` on `PIPE_S` or `PIPE_ALL`. Structural: every call
    /// with a constant id, mode and pipe.
    ///
    /// ## Why is this a bug
    /// A truncated id lands on another flag, and a flag `SyncAll` uses is counted by
    /// both: sets and waits pair with the wrong partner and the kernel hangs or passes
    /// a barrier early. A set on `PIPE_S`/`PIPE_ALL` is not supported in modes 0–2.
    ///
    /// ## Example
    /// ```text
    /// AscendC::SyncAll();
    /// AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(12);   // SyncAll's flag
    /// ```
    ///
    /// ## Fix
    /// Use ids 0–10 or 15 beside the hard `SyncAll` (and outside the Matmul API's
    /// 0..2N-1), and a data pipe (`PIPE_MTE3`, `PIPE_FIX`, ...) for the set.
    pub struct CrossCoreFlagInvalid;
    code = "SG853",
    name = "cross-core-flag-invalid",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let target = context.program.settings.target;
    for kernel in &context.program.kernels {
        let hard_sync_all = uses_hard_sync_all(kernel);
        for op in crate::kernel::calls(kernel) {
            let (mode, pipe, flag, set) = match &op.kind {
                KOpKind::CrossCoreSetFlag { mode, pipe, flag } => (*mode, *pipe, flag, true),
                KOpKind::CrossCoreWaitFlag { mode, pipe, flag } => (*mode, *pipe, flag, false),
                _ => continue,
            };
            let mut problems = Vec::new();
            if let Some(id) = flag.as_const() {
                if !(0..CROSS_CORE_FLAGS).contains(&id) {
                    problems.push(format!("flag id {id} is outside 0..15 and is truncated to {}", id & 15));
                } else if hard_sync_all && (11..=14).contains(&id) {
                    problems.push(format!(
                        "flag id {id} is one of the ids 11..14 the hard SyncAll of this kernel uses"
                    ));
                }
            }
            let mode_ok = matches!(mode, 0..=2) || (mode == 4 && target == crate::model::Target::Ascend950);
            if !mode_ok {
                problems.push(format!("mode {mode} is not 0, 1 or 2 (4 only on Ascend 950)"));
            }
            if set && matches!(pipe, Pipe::S | Pipe::All) && mode <= 2 {
                problems.push(format!("{} is not supported for the set in modes 0 to 2", pipe.name()));
            }
            if problems.is_empty() {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &CrossCoreFlagInvalid::INFO,
                    op.span.clone(),
                    format!(
                        "`{}` pairs with the wrong partner or is rejected: {}",
                        op.api,
                        problems.join("; ")
                    ),
                )
                .with_label(problems[0].clone())
                .with_help("use flag ids 0..10 or 15 beside the hard SyncAll, modes 0-2, and a data pipe for the set"),
            );
        }
    }
}
