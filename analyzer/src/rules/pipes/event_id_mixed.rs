use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A literal event id (`SetFlag<HardEvent::MTE2_V>(0)`) with a `HardEvent` whose ids
    /// TPipe also hands out in the same kernel: to the code (`AllocEventID` /
    /// `FetchEventID`), or to the kernel's own queues, whose `EnQue`/`DeQue` and
    /// `FreeTensor`/`AllocTensor` set and wait flags between their producer and consumer
    /// pipes (a `VECIN` queue: MTE2_V and V_MTE2), each when it runs. Both in one run of a
    /// core: the arms of an `if constexpr` on the element type are two builds.
    ///
    /// ## Why is this a bug
    /// TPipe hands out ids without knowing which ones the code uses by number: the id it
    /// returns may be the literal one, and two pairs then share one hardware flag (a set
    /// while set, a wait satisfied by the other pair's set). The documentation asks for
    /// one style per kernel: static ids 0–5 (6 and 7 are TPipe's), or ids from TPipe.
    ///
    /// ## Example
    /// ```text
    /// let id = TPipe::FetchEventID<MTE2_V>();
    /// AscendC::SetFlag<MTE2_V>(id);
    /// AscendC::SetFlag<MTE2_V>(0);        // may be the same flag
    /// ```
    ///
    /// ## Fix
    /// Take every id of that `HardEvent` from TPipe, or none.
    pub struct EventIdMixed;
    code = "SG808",
    name = "event-id-mixed-with-tpipe",
    severity = Warning,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for mixed in &context.kernels().mixed_ids {
        let (literal, event) = (mixed.literal, mixed.event);
        out.push(
            Diagnostic::new(
                &EventIdMixed::INFO,
                mixed.literal_op.span.clone(),
                format!(
                    "literal event id {literal} of {} beside ids TPipe hands out: both may be one hardware flag",
                    event.name()
                ),
            )
            .with_label(format!("literal id {literal}"))
            .with_related(mixed.from_tpipe.span.clone(), mixed.why)
            .with_help("take this id from TPipe too (`pipe.FetchEventID(HardEvent::...)`), or use no TPipe ids for this HardEvent"),
        );
    }
}
