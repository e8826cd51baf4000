use std::collections::HashSet;

use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use syncguard_model::kernel::{CoreType, KOpKind};

use super::{cores_of, launch_note};

declare_rule! {
    /// ## What it detects
    /// A kernel that synchronizes all its cores (`SyncAll`, or a mode-0 cross-core
    /// flag) launched with more blocks than the target has physical cores of that type
    /// (`target`: A2 and A3 have 24 cube and 48 vector cores per die), for some launch
    /// walked.
    ///
    /// ## Why is this a bug
    /// Blocks beyond the physical cores only start when earlier blocks finish; the
    /// earlier blocks wait at the barrier for the later ones, which cannot start. The
    /// kernel deadlocks.
    ///
    /// ## Example
    /// ```text
    /// target A2;
    /// aicore k(x, blocks: 64, type: AIV_ONLY) { AscendC::SyncAll(); }   // 48 AIVs
    /// ```
    ///
    /// ## Fix
    /// Launch at most as many blocks as the target has cores (`GetCoreNumAiv()` on the
    /// host) and loop over the remaining tiles inside the kernel.
    pub struct SyncAllTooManyBlocks;
    code = "SG857",
    name = "sync-all-too-many-blocks",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let target = context.program.settings.target;
    let Some(physical) = target.cores() else { return };
    let mut reported = HashSet::new();
    for launch in &context.kernels().launches {
        let kernel = &context.program.kernels[launch.kernel];
        let barrier = crate::kernel::calls(kernel).into_iter().find(|op| {
            matches!(
                op.kind,
                KOpKind::SyncAll { .. } | KOpKind::CrossCoreSetFlag { mode: 0, .. }
            )
        });
        let Some(barrier) = barrier else { continue };
        for core in kernel.kind.cores() {
            let limit = i64::from(if core == CoreType::Aiv {
                physical.aiv
            } else {
                physical.aic
            });
            let launched = cores_of(kernel, launch.blocks, core);
            if launched <= limit || !reported.insert(launch.kernel) {
                continue;
            }
            let mut diagnostic = Diagnostic::new(
                &SyncAllTooManyBlocks::INFO,
                barrier.span.clone(),
                format!(
                    "kernel `{}` deadlocks: it runs on {launched} {} cores but {} has {limit}, and `{}` waits for all of them",
                    kernel.name,
                    core.name(),
                    target.name(),
                    barrier.api
                ),
            )
            .with_label("waits for cores that cannot start")
            .with_related(kernel.span.clone(), format!("launched with {} blocks", launch.blocks))
            .with_help(format!("launch at most {limit} blocks and loop over the remaining tiles inside the kernel"));
            if let Some(note) = launch_note(launch) {
                diagnostic = diagnostic.with_note(format!("found {note}"));
            }
            out.push(diagnostic);
        }
    }
}
