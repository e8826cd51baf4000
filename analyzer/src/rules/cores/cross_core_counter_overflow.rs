use std::collections::HashSet;

use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

use super::launch_note;

/// A flag's counter holds 0 to 15.
const MAX_COUNT: u32 = 15;

declare_rule! {
    /// ## What it detects
    /// One core sets a cross-core flag more than 15 times in a row without waiting for
    /// any cross-core flag or `SyncAll` in between (counted on every core run walked):
    /// nothing stops it from running that far ahead of the core that waits.
    ///
    /// ## Why is this a bug
    /// Each flag id's counter holds 0 to 15. A producer that can run 16 sets ahead of
    /// its consumer overflows it, which the hardware treats as an error and aborts the
    /// kernel; it goes wrong only when the consumer is slow, so tests pass.
    ///
    /// ## Example
    /// ```text
    /// for i in 0..32 { AscendC::CrossCoreSetFlag<2, PIPE_FIX>(0); }   // AIC
    /// for i in 0..32 { AscendC::CrossCoreWaitFlag(0); }               // AIV
    /// ```
    ///
    /// ## Fix
    /// Throttle the producer: have it wait for a flag the consumer sets back every few
    /// iterations (ping-pong), so it is never more than 15 sets ahead.
    pub struct CrossCoreCounterOverflow;
    code = "SG852",
    name = "cross-core-counter-overflow",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let mut reported = HashSet::new();
    for launch in &context.kernels().launches {
        for (run, syncs, _) in &launch.cores {
            let Some((count, flag, op)) = syncs.longest_burst else {
                continue;
            };
            if count <= MAX_COUNT || !reported.insert(op.span.clone()) {
                continue;
            }
            let mut diagnostic = Diagnostic::new(
                &CrossCoreCounterOverflow::INFO,
                op.span.clone(),
                format!(
                    "cross-core flag {flag} may overflow: {} sets it {count} times without waiting for any other core, and its counter holds 15",
                    run.describe()
                ),
            )
            .with_label(format!("{count} sets in a row"))
            .with_help("have the producer wait for a flag the consumer sets back, so it never runs more than 15 sets ahead");
            if let Some(note) = launch_note(launch) {
                diagnostic = diagnostic.with_note(format!("found {note}"));
            }
            out.push(diagnostic);
        }
    }
}
