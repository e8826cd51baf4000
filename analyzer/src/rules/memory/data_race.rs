use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::hb::Race;
use crate::model::byte_range;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// Two device operations (kernels, async copies, HCCL transfers) that touch
    /// overlapping bytes of one buffer, at least one of them writing, with nothing that
    /// orders them: no FIFO order on one stream, no record/wait, notify or synchronize
    /// between them. Also two host threads touching the same host memory, when nothing
    /// orders one thread's access after the other's (a synchronize orders only the work
    /// issued before it: another thread's later work is not covered).
    ///
    /// ## Why is this a bug
    /// The two can run in either order or at the same time, so the reader sees old,
    /// new or torn data depending on timing: results that differ from run to run and
    /// only on some devices. It is also what a missing or no-op wait leaves behind.
    ///
    /// ## Example
    /// ```text
    /// kernel(s1, "producer", writes: [x]);
    /// kernel(s2, "consumer", reads: [x]);      // nothing orders s2 after s1
    /// ```
    ///
    /// ## Fix
    /// Order the second access after the first: record an event on the first stream
    /// after it and wait on it from the second (or use one stream, or a notify pair for
    /// HCCL threads).
    ///
    /// Method: vector clocks over the happens-before graph; cost near-linear in the
    /// number of ops.
    pub struct DataRace;
    code = "SG601",
    name = "data-race",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    for race in analysis.hb.races() {
        if super::classify(analysis, race) == super::RaceClass::Device {
            let diagnostic = super::with_cuda_notes(analysis, race, race_diagnostic(analysis, race));
            out.push(super::with_race_timeline(analysis, race, diagnostic));
        }
    }
}

fn race_diagnostic(analysis: &Analysis, race: &Race) -> Diagnostic {
    let verb = |write: bool| if write { "writes" } else { "reads" };
    let memory = analysis.memory_name(race.memory);
    let (first, second) = (analysis.describe(race.first), analysis.describe(race.second));
    Diagnostic::new(
        &DataRace::INFO,
        analysis.span(race.second),
        format!(
            "data race on {memory} {}: {second} {} them while {first} {} them, and nothing orders the two",
            byte_range(race.start, race.end),
            verb(race.second_writes),
            verb(race.first_writes)
        ),
    )
    .with_label(format!(
        "{} {}",
        verb(race.second_writes),
        byte_range(race.start, race.end)
    ))
    .with_related(
        analysis.span(race.first),
        format!(
            "{} the same bytes, unordered with the access above",
            verb(race.first_writes)
        ),
    )
    .with_help(if on_host(analysis, race.first) && on_host(analysis, race.second) {
        "order the two host threads: give each its own buffer, or make one wait (a synchronize, event or notify) for work the other issues after its access"
    } else {
        "order the two: record an event after the first access and wait on it before the second"
    })
}

fn on_host(analysis: &Analysis, node: crate::exec::NodeId) -> bool {
    !analysis.exec.agent(analysis.exec.node(node).agent).kind.is_device()
}
