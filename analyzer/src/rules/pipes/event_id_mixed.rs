use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use syncguard_model::kernel::{HardEvent, KOpKind};

declare_rule! {
    /// ## What it detects
    /// A literal event id (`SetFlag<HardEvent::MTE2_V>(0)`) with a `HardEvent` whose ids
    /// TPipe also hands out in the same kernel: to the code (`AllocEventID` /
    /// `FetchEventID`), or to the kernel's own queues, whose `EnQue`/`DeQue` and
    /// `FreeTensor`/`AllocTensor` set and wait flags between their producer and consumer
    /// pipes (a `VECIN` queue: MTE2_V and V_MTE2). Structural: every call, reached or not.
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
    for kernel in &context.program.kernels {
        let calls = crate::kernel::calls(kernel);
        let mut allocated: Vec<(HardEvent, &crate::source::Span, &str)> = calls
            .iter()
            .filter_map(|op| match &op.kind {
                KOpKind::AllocEventId { event, .. } => {
                    Some((*event, &op.span, "TPipe hands out ids of the same HardEvent here"))
                }
                _ => None,
            })
            .collect();
        for buffer in kernel
            .buffers
            .iter()
            .filter(|b| b.queue && b.producer() != b.consumer())
        {
            let (producer, consumer) = (buffer.producer(), buffer.consumer());
            for event in [
                HardEvent {
                    src: producer,
                    dst: consumer,
                },
                HardEvent {
                    src: consumer,
                    dst: producer,
                },
            ] {
                allocated.push((
                    event,
                    &buffer.span,
                    "this queue's EnQue/DeQue and FreeTensor/AllocTensor take ids of it from TPipe",
                ));
            }
        }
        let mut reported = std::collections::HashSet::new();
        for op in &calls {
            let (KOpKind::SetFlag { event, id } | KOpKind::WaitFlag { event, id }) = &op.kind else {
                continue;
            };
            let Some(literal) = id.as_const() else { continue };
            let Some((_, from_tpipe, why)) = allocated.iter().find(|(e, _, _)| e == event) else {
                continue;
            };
            if !reported.insert((*event, literal)) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &EventIdMixed::INFO,
                    op.span.clone(),
                    format!(
                        "literal event id {literal} of {} beside ids TPipe hands out: both may be one hardware flag",
                        event.name()
                    ),
                )
                .with_label(format!("literal id {literal}"))
                .with_related((*from_tpipe).clone(), *why)
                .with_help("take this id from TPipe too (`pipe.FetchEventID(HardEvent::...)`), or use no TPipe ids for this HardEvent"),
            );
        }
    }
}
