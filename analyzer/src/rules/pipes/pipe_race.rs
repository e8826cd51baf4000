use crate::analysis::ProgramContext;
use crate::diagnostic::{Diagnostic, Fix, FixEdit};
use crate::kernel::Race;
use crate::rules::declare_rule;
use syncguard_model::kernel::HardEvent;

use super::{flag_call, free_event_id, kernel_of};

declare_rule! {
    /// ## What it detects
    /// Two instructions of one AI core on different pipes (`PIPE_MTE2`, `PIPE_V`,
    /// `PIPE_MTE3`, `PIPE_M`, `PIPE_MTE1`, `PIPE_FIX`, `PIPE_S`) touch overlapping memory
    /// (UB, L1, L0A/L0B/L0C or GM), at least one writes, and nothing orders them: no
    /// `SetFlag`/`WaitFlag` pair, no `PipeBarrier<PIPE_ALL>`, no queue (`EnQue`/`DeQue`,
    /// `FreeTensor`/`AllocTensor`) between them. Read-after-write, write-after-read and
    /// write-after-write are all reported, for every core type, block index, TilingKey
    /// and sampled tiling value the kernel is walked with. Where the reader of the source
    /// could not compute which bytes an access touches (a length, or an element size:
    /// `x[a.._]`, `x[_.._]`) and the two overlap only in what is not known, the race is
    /// information marked undecided, not an error.
    ///
    /// ## Why is this a bug
    /// The scalar unit only issues instructions; each pipe runs its own in order, at its
    /// own pace. Without a flag the vector unit may read a tile before MTE2 has finished
    /// copying it in, or MTE2 may overwrite a buffer the vector unit is still reading:
    /// wrong results that change from run to run. The compiler's automatic sync
    /// (`--cce-auto-sync`) only orders `PIPE_S` with `PIPE_V`, `PIPE_MTE2` and `PIPE_MTE3`.
    ///
    /// ## Example
    /// ```text
    /// AscendC::DataCopy(UB[0..1 KiB], x[0..1 KiB]);   // MTE2 writes UB
    /// AscendC::Abs(UB[1 KiB..2 KiB], UB[0..1 KiB]);   // V reads it: unordered
    /// ```
    ///
    /// ## Fix
    /// Between the two, set a flag on the first pipe and wait for it on the second:
    /// `SetFlag<HardEvent::MTE2_V>(id)` after the copy and `WaitFlag<HardEvent::MTE2_V>(id)`
    /// before the read (with a queue: `EnQue` after writing, `DeQue` before reading).
    pub struct PipeRace;
    code = "SG801",
    name = "pipe-race",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for race in context.kernels().races.iter().filter(|r| r.without_dequeue.is_none()) {
        out.push(report(context, race, &PipeRace::INFO));
    }
}

/// Shared with SG802, which words the same race as a queue misuse.
pub(crate) fn report(context: &ProgramContext, race: &Race, rule: &crate::rules::RuleInfo) -> Diagnostic {
    let kernel = kernel_of(context.program, race.context.kernel);
    let (a, b) = (race.first_pipe.name(), race.second_pipe.name());
    let message = format!(
        "{} race on {} between {a} and {b}: `{}` may run before `{}` is done",
        race.kind(),
        race.memory,
        race.second.api,
        race.first.api
    );
    let event = HardEvent {
        src: race.first_pipe,
        dst: race.second_pipe,
    };
    let id = free_event_id(kernel, event);
    let (set, wait) = (flag_call(true, event, id), flag_call(false, event, id));
    // Both right after the first access: the second pipe waits there for the first,
    // which orders every later instruction of the second pipe, the racing one included.
    let mut diagnostic = Diagnostic::new(rule, race.second.span.clone(), message)
        .with_label(format!(
            "{} on {b}, unordered with the {} on {a}",
            access(race.second_write),
            access(race.first_write)
        ))
        .with_related(race.first.span.clone(), format!("{} on {a}", access(race.first_write)))
        .with_help(format!(
            "order {b} after {a}: `{set}` after `{}` and `{wait}` before `{}`",
            race.first.api, race.second.api
        ))
        .with_note(where_found(race))
        .with_fix(Fix {
            title: format!("Insert SetFlag/WaitFlag<{}> after `{}`", event.name(), race.first.api),
            // Inserts at one place appear in the order of the edits: the set, then the wait.
            edits: vec![
                FixEdit::InsertCall {
                    after: race.first.span.clone(),
                    call: set,
                },
                FixEdit::InsertCall {
                    after: race.first.span.clone(),
                    call: wait,
                },
            ],
        });
    if let Some(why) = &race.beyond_queue {
        diagnostic = diagnostic.with_note(why.clone());
    }
    if let Some(why) = &race.undecided {
        diagnostic = diagnostic.with_severity(crate::Severity::Info);
        diagnostic.notes.insert(0, why.clone());
    }
    if let Some(tensor) = &race.without_dequeue {
        diagnostic = diagnostic.with_help(format!(
            "`{tensor}` is used on {b} without `DeQue`: EnQue it after {a} writes it and use the tensor `DeQue` returns"
        ));
    }
    diagnostic
}

fn access(write: bool) -> &'static str {
    if write { "write" } else { "read" }
}

fn where_found(race: &Race) -> String {
    let mut text = format!("found on {}", race.context.describe());
    if !race.iterations.is_empty() {
        text.push_str(", ");
        text.push_str(&race.iterations);
    }
    text
}
