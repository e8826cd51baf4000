use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::walk::FlagKey;
use crate::rules::declare_rule;
use syncguard_model::kernel::EVENT_IDS;

declare_rule! {
    /// ## What it detects
    /// `SetFlag`/`WaitFlag` with an event id outside 0–7, the range of the hardware
    /// flags per pipe pair (decided per core run, for computed ids too).
    ///
    /// ## Why is this a bug
    /// The id selects a hardware flag; an id out of range names none of them, or wraps
    /// onto a flag another pair uses (static-tensor programs use 0–5; 6 is reserved and 7
    /// is taken by TPipe's own sync).
    ///
    /// ## Example
    /// ```text
    /// AscendC::SetFlag<MTE2_V>(8);
    /// ```
    ///
    /// ## Fix
    /// Use an id from 0 to 7 (0–5 beside TPipe), or take one from
    /// `pipe.AllocEventID<HardEvent::MTE2_V>()`.
    pub struct EventIdOutOfRange;
    code = "SG807",
    name = "event-id-out-of-range",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for finding in &context.kernels().ids_out_of_range {
        let FlagKey::Event { event, id } = finding.key else {
            continue;
        };
        out.push(
            Diagnostic::new(
                &EventIdOutOfRange::INFO,
                finding.op.span.clone(),
                format!(
                    "event id {id} of flag {} is outside the hardware's 0..{}",
                    event.name(),
                    EVENT_IDS - 1
                ),
            )
            .with_label(format!("id {id}"))
            .with_help("use an id from 0 to 7, or one `AllocEventID` returns")
            .with_note(format!("found on {}", finding.context.describe())),
        );
    }
}
