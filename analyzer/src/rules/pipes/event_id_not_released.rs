use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `pipe.AllocEventID<e>()` whose id is never given back with
    /// `pipe.ReleaseEventID<e>(id)` before the core's run ends (an allocation in a loop
    /// without its release is reported at the allocation).
    ///
    /// ## Why is this a bug
    /// TPipe hands out each `HardEvent`'s ids from a small pool (eight flags per pipe
    /// pair, some used by its own queues). An id never released is gone for the rest of
    /// the kernel: an allocation in a loop runs the pool dry, and what TPipe's queues
    /// need next is not there.
    ///
    /// ## Example
    /// ```text
    /// let id = TPipe::AllocEventID<V_MTE3>();
    /// AscendC::SetFlag<V_MTE3>(id);
    /// AscendC::WaitFlag<V_MTE3>(id);
    /// // no TPipe::ReleaseEventID<V_MTE3>(id)
    /// ```
    ///
    /// ## Fix
    /// Release it after its last wait, or use `FetchEventID`, which needs no release.
    pub struct EventIdNotReleased;
    code = "SG809",
    name = "event-id-not-released",
    severity = Warning,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for (op, event, run) in &context.kernels().unreleased_ids {
        out.push(
            Diagnostic::new(
                &EventIdNotReleased::INFO,
                op.span.clone(),
                format!(
                    "the {} event id allocated here is never released: TPipe's pool of ids shrinks",
                    event.name()
                ),
            )
            .with_label("allocated, never released")
            .with_help(format!(
                "release it after its last wait: `pipe.ReleaseEventID<HardEvent::{}>(id)`",
                event.name()
            ))
            .with_note(format!("found on {}", run.describe())),
        );
    }
}
