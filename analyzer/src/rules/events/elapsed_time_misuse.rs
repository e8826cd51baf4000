use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, InstId, NodeId};
use crate::model::{EventCreator, ObjectKind};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `cudaEventElapsedTime(ms, start, end)` or `aclrtEventElapsedTime(ms, start, end)`
    /// that cannot return a time: an event nothing records before the call, an event
    /// whose record the host does not know to be complete (no synchronize, no
    /// successful query ordered after it), or a CUDA event created with
    /// `cudaEventDisableTiming`.
    ///
    /// ## Why is this a bug
    /// The call fails and leaves `ms` unwritten: `cudaErrorNotReady` while a record is
    /// pending, `cudaErrorInvalidResourceHandle` for an unrecorded or timing-free event
    /// (ACL returns an error the same way). Code that ignores the return value reports
    /// whatever `ms` held: a profile that silently lies.
    ///
    /// ## Example
    /// ```text
    /// let start = cudaEventCreate();
    /// let end = cudaEventCreate();
    /// cudaEventRecord(start, s);
    /// kernel(s, "work");
    /// cudaEventRecord(end, s);
    /// cudaEventElapsedTime(start, end);   // end may not have completed yet
    /// ```
    ///
    /// ## Fix
    /// Record both events around the timed work, then wait for the end event on the
    /// host (`cudaEventSynchronize(end)`, `aclrtSynchronizeEvent(end)`, or a
    /// synchronize of its stream) before reading the time; create timed CUDA events
    /// without `cudaEventDisableTiming`.
    pub struct ElapsedTimeMisuse;
    code = "SG111",
    name = "event-elapsed-time-misuse",
    severity = Warning,
    check = crate::rules::Check::Execution(check),
}

/// `cudaEventDisableTiming`.
const CUDA_DISABLE_TIMING: u32 = 0x2;

/// Why one event of the call has no time to give.
enum Problem {
    NeverRecorded,
    Pending(NodeId),
    TimingDisabled,
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    // The record each call reads: the last one issued before it (an instance belongs
    // to one rank).
    let mut last_record: HashMap<InstId, NodeId> = HashMap::new();
    for (index, node) in analysis.exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        let (start, end) = match node.action {
            Action::EventRecord(event) => {
                last_record.insert(event, id);
                continue;
            }
            Action::EventElapsedTime { start, end } => (start, end),
            _ => continue,
        };
        let events = if start == end { vec![end] } else { vec![end, start] };
        let problems = events
            .into_iter()
            .filter_map(|event| Some((event, problem(analysis, id, event, last_record.get(&event).copied())?)))
            .collect();
        out.extend(diagnostic(analysis, id, problems));
    }
}

fn problem(analysis: &Analysis, call: NodeId, event: InstId, record: Option<NodeId>) -> Option<Problem> {
    let exec = analysis.exec;
    let ObjectKind::Event(info) = &exec.program.object(exec.instance(event).obj).kind else {
        return None;
    };
    if info.creator == EventCreator::Existing {
        return None; // recorded and timed by code the program does not show
    }
    if info.creator == EventCreator::Cuda && info.flags & CUDA_DISABLE_TIMING != 0 {
        return Some(Problem::TimingDisabled);
    }
    match record {
        None => Some(Problem::NeverRecorded),
        Some(record) if !analysis.hb.happens_before(record, call) => Some(Problem::Pending(record)),
        Some(_) => None,
    }
}

fn diagnostic(analysis: &Analysis, call: NodeId, problems: Vec<(InstId, Problem)>) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let api = exec.node(call).op.api;
    let mut problems = problems.into_iter();
    let (event, first) = problems.next()?;
    let (message, label, help) = describe(analysis, api, event, &first);
    let mut diagnostic = Diagnostic::new(&ElapsedTimeMisuse::INFO, analysis.span(call), message)
        .with_label(label)
        .with_help(help);
    for (event, problem) in std::iter::once((event, first)).chain(problems) {
        let name = exec.instance_name(event);
        diagnostic = match problem {
            Problem::Pending(record) => diagnostic.with_related(
                analysis.span(record),
                format!("{name} is recorded here; nothing on the host waits for it"),
            ),
            Problem::TimingDisabled => {
                let created = exec.program.object(exec.instance(event).obj).span.clone();
                diagnostic.with_related(created, format!("{name} is created without timing here"))
            }
            Problem::NeverRecorded => diagnostic,
        };
    }
    Some(diagnostic)
}

/// The headline, the label and the fix for the first problem.
fn describe(analysis: &Analysis, api: &str, event: InstId, problem: &Problem) -> (String, String, String) {
    let name = analysis.exec.instance_name(event);
    let cuda = api.starts_with("cuda");
    let (not_ready, invalid, synchronize) = if cuda {
        (
            "cudaErrorNotReady",
            "cudaErrorInvalidResourceHandle",
            "cudaEventSynchronize",
        )
    } else {
        ("an error", "an error", "aclrtSynchronizeEvent")
    };
    match problem {
        Problem::Pending(_) => (
            format!(
                "{api} can read event {name} before its record has completed: it returns {not_ready} and leaves the time unwritten"
            ),
            format!("{name} may still be pending here"),
            format!(
                "wait for the end event on the host first: {synchronize}({name}), or synchronize the stream that records it"
            ),
        ),
        Problem::NeverRecorded => (
            format!(
                "{api} reads event {name}, which nothing records before this call: it returns {invalid} and leaves the time unwritten"
            ),
            format!("{name} has no record yet"),
            format!(
                "record {name} around the timed work, and wait for the end event on the host, before reading the time"
            ),
        ),
        Problem::TimingDisabled => (
            format!(
                "{api} cannot time event {name}: it was created with cudaEventDisableTiming, so the call returns cudaErrorInvalidResourceHandle"
            ),
            format!("{name} keeps no timestamp"),
            "create the timed events with cudaEventCreate (without cudaEventDisableTiming)".to_string(),
        ),
    }
}
