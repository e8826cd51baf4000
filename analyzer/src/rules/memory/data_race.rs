use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, Fix, FixEdit};
use crate::exec::AgentKind;
use crate::hb::Race;
use crate::model::{Program, byte_range};
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
            let mut diagnostic = race_diagnostic(analysis, race);
            if let Some(fix) = later_stream_waits(analysis, race) {
                diagnostic = diagnostic.with_fix(fix);
            }
            let diagnostic = super::with_cuda_notes(analysis, race, diagnostic);
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

/// "Make the later access's stream wait for the earlier one's before it": where one
/// host thread issues both accesses, on two streams.
fn later_stream_waits(analysis: &Analysis, race: &Race) -> Option<Fix> {
    let exec = analysis.exec;
    let (mut earlier, mut later) = (race.first, race.second);
    if exec.node(earlier).issue > exec.node(later).issue {
        std::mem::swap(&mut earlier, &mut later);
    }
    let (first, second) = (exec.node(earlier), exec.node(later));
    if first.host != second.host || first.issue == second.issue || first.agent == second.agent {
        return None;
    }
    let stream = |agent| match exec.agent(agent).kind {
        AgentKind::Stream(inst) if exec.instance(inst).element.is_none() => {
            let obj = exec.instance(inst).obj;
            Some((obj != Program::DEFAULT_STREAM).then(|| exec.program.object(obj).shown().to_string()))
        }
        _ => None,
    };
    let (on, waiting) = (stream(first.agent)?, stream(second.agent)?);
    let name = |stream: &Option<String>| stream.clone().unwrap_or_else(|| "the default stream".into());
    Some(Fix {
        title: format!("Make {} wait for {} before this", name(&waiting), name(&on)),
        edits: vec![FixEdit::StreamWaitsForStream {
            before: analysis.span(later),
            waiting,
            on,
        }],
    })
}

fn on_host(analysis: &Analysis, node: crate::exec::NodeId) -> bool {
    !analysis.exec.agent(analysis.exec.node(node).agent).kind.is_device()
}
