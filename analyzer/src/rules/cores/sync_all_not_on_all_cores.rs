use std::collections::HashSet;

use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use syncguard_model::kernel::CoreType;

use super::{launch_note, times};

declare_rule! {
    /// ## What it detects
    /// `SyncAll` reached a different number of times by two cores of the same type in
    /// one launch: under a branch on `GetBlockIdx()`, after an early `return` some cores
    /// take, or in a loop whose trip count depends on the core (every core index of the
    /// launch is walked, up to 64, and beyond that the first, middle and last ones; z3
    /// searches every core index and tiling value for two cores that differ).
    ///
    /// ## Why is this a bug
    /// `SyncAll` is a barrier across every core of the kernel: each core waits until all
    /// of them have arrived. A core that never arrives leaves the others waiting for good;
    /// the kernel hangs until the AI Core timeout.
    ///
    /// ## Example
    /// ```text
    /// if GetBlockIdx() < 4 { AscendC::SyncAll(); }   // cores 4.. never arrive
    /// ```
    ///
    /// ## Fix
    /// Call `SyncAll` on every core the same number of times: move it out of the
    /// core-dependent branch, and let idle cores skip only the work around it.
    pub struct SyncAllNotOnAllCores;
    code = "SG855",
    name = "sync-all-not-on-all-cores",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let mut reported = HashSet::new();
    for launch in &context.kernels().launches {
        let kernel = &context.program.kernels[launch.kernel];
        for core in [CoreType::Aic, CoreType::Aiv] {
            let cores: Vec<_> = launch
                .cores
                .iter()
                .filter(|(run, _, complete)| run.core == core && *complete)
                .collect();
            let Some(most) = cores.iter().max_by_key(|(_, syncs, _)| syncs.sync_alls.len()) else {
                continue;
            };
            let Some(fewest) = cores.iter().min_by_key(|(_, syncs, _)| syncs.sync_alls.len()) else {
                continue;
            };
            let (many, few) = (most.1.sync_alls.len(), fewest.1.sync_alls.len());
            if many == few || !reported.insert(launch.kernel) {
                continue;
            }
            let call = most.1.sync_alls[few];
            let mut diagnostic = Diagnostic::new(
                &SyncAllNotOnAllCores::INFO,
                call.span.clone(),
                format!(
                    "kernel `{}` hangs: {} reaches SyncAll {}, {} only {}, and every core waits for all",
                    kernel.name,
                    most.0.describe(),
                    times(many as u32),
                    fewest.0.describe(),
                    times(few as u32)
                ),
            )
            .with_label(format!("not reached on {}", fewest.0.describe()))
            .with_help("call SyncAll on every core the same number of times: move it out of the branch that depends on the core");
            if let Some(note) = launch_note(launch) {
                diagnostic = diagnostic.with_note(format!("found {note}"));
            }
            out.push(diagnostic);
        }
    }
}
