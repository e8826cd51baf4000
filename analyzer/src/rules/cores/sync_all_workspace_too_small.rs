use std::collections::HashSet;

use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

use super::{cores_of, launch_note};

/// Bytes of GM workspace the soft `SyncAll` needs per core.
const BYTES_PER_CORE: i64 = 32;

declare_rule! {
    /// ## What it detects
    /// The soft `SyncAll(gmWorkspace, ubWorkspace)` given a GM workspace smaller than
    /// 32 bytes per core of the launch, for some launch walked.
    ///
    /// ## Why is this a bug
    /// The soft barrier keeps one 32-byte counter per core in the GM workspace. A smaller
    /// workspace makes cores write past its end (into whatever GM follows) or share a
    /// counter: the barrier lets cores through early or never.
    ///
    /// ## Example
    /// ```text
    /// aicore k(ws, blocks: 8) { AscendC::SyncAll(ws[0..128], UB[0..256]); }   // 8 × 32 = 256
    /// ```
    ///
    /// ## Fix
    /// Give it at least cores × 32 bytes of zero-initialized GM.
    pub struct SyncAllWorkspaceTooSmall;
    code = "SG858",
    name = "sync-all-workspace-too-small",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let mut reported = HashSet::new();
    for launch in &context.kernels().launches {
        let kernel = &context.program.kernels[launch.kernel];
        for (run, syncs, _) in &launch.cores {
            let needed = cores_of(kernel, launch.blocks, run.core).saturating_mul(BYTES_PER_CORE);
            for &(op, len) in &syncs.soft_workspaces {
                if len >= needed || !reported.insert(op.span.clone()) {
                    continue;
                }
                let mut diagnostic = Diagnostic::new(
                    &SyncAllWorkspaceTooSmall::INFO,
                    op.span.clone(),
                    format!(
                        "the soft SyncAll's GM workspace is {len} bytes, but {} cores need {needed}: cores overrun it or share counters",
                        cores_of(kernel, launch.blocks, run.core)
                    ),
                )
                .with_label(format!("{len} bytes"))
                .with_help(format!("give it at least {needed} bytes (32 per core), zero-initialized"));
                if let Some(note) = launch_note(launch) {
                    diagnostic = diagnostic.with_note(format!("found {note}"));
                }
                out.push(diagnostic);
            }
        }
    }
}
