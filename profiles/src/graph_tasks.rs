//! Graph task dumps: the tasks of a captured graph (torch_npu's NPUGraph / aclGraph,
//! torchair), as `aclmdlRIDebugJsonPrint` writes them (`graph_N.json`): a JSON array of
//! Chrome-trace `"ph": "X"` events, one per task, each on its stream's row
//! (`"tid": "stream311"`) and ordered on it by `args["Task Id"]`.
//!
//! What the tasks mean, as torch_npu's own NPUGraph tools (`deadlock_check.py`,
//! `align_trace`) read them:
//! - `EVENT_RECORD_<h>` and `MEM_WRITE_VALUE_<h>` signal handle `h`; `EVENT_WAIT_<h>` and
//!   `MEM_WAIT_VALUE_<h>` block their stream until it is signalled; `EVENT_RESET_<h>`
//!   clears an event. The `ts` of a task is for display only: the order between streams
//!   is what the waits give.
//! - `STREAM_ACTIVE` (its `Active Stream Id`) starts another stream of the graph.
//! - Kernel tasks (`KERNEL_AIVEC`, `KERNEL_MIX_AIV`, `KERNEL_MIX_AIC`, `KERNEL_AICORE`)
//!   carry `numBlocks`, `schemMode` (1: batch scheduling) and `Task Ration`, from which
//!   the vector cores they hold follow.
//!
//! Each handle becomes a sync-kind event (`ACL_EVENT_SYNC`: a hardware flag, so a wait
//! passes once the record of its cycle has run, whatever order the lines are written in,
//! which the dump does not give; matched in linear time), each signal its record and
//! each wait a stream wait on it; the events are made before the graph's tasks and
//! destroyed after them. Only the first signal of a handle on its stream is lowered: a
//! wait is after it whichever signal released it; a handle signalled on several streams
//! is not lowered, and that is said.
//! Kernels become `kernel` lines with the cores they claim, so SG505 can find
//! collectives that cannot get their cores together. What the dump does not say (which
//! record cycle a reset ends, the memory a task touches) is said in a note, never guessed.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use rayon::prelude::*;
use syncguard_model::diagnostic::{Diagnostic, Severity};
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::{FileId, Span};

use crate::calls::{Arg, CallTrace};
use crate::event::{self, Event};
use crate::kineto::stopped_early;
use crate::scan;

/// Whether `text` (a file's first bytes) is a graph task dump: an array of task
/// events on `stream<N>` rows numbered by `Task Id`.
pub fn sniff(text: &str) -> bool {
    let on_stream_rows = text.contains("\"tid\": \"stream") || text.contains("\"tid\":\"stream");
    text.starts_with('[') && text.contains("\"Task Id\"") && on_stream_rows
}

/// What a task does.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Task {
    Signal(Handle),
    Wait(Handle),
    Reset,
    /// Starts the stream `stream<N>`.
    Activate(String),
    Kernel(Option<Cores>),
    Other(String),
}

/// The handle of a signal or wait, in its own namespace: an event's and a memory
/// word's numbers are unrelated.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Handle {
    Event(String),
    Word(String),
}

impl Handle {
    /// The event the lowering names after it.
    fn event(&self) -> String {
        match self {
            Handle::Event(handle) => format!("event_{handle}"),
            Handle::Word(handle) => format!("mem_value_{handle}"),
        }
    }
}

/// The cores a kernel task claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cores {
    vector: i64,
    batch: bool,
    collective: bool,
}

/// One task, placed.
struct Placed {
    task: Task,
    name: String,
    stream: String,
    /// `Task Id` (`i64::MIN` where it is missing: `order_streams` then orders the
    /// stream by time), then the place in the file.
    order: (i64, usize),
    ts_ns: Option<u64>,
    range: Range<usize>,
}

/// What reading found besides the tasks.
#[derive(Default)]
struct LeftOut {
    unparsable: usize,
    /// Events that are not tasks on a `stream<N>` row (metadata, flow arrows).
    not_tasks: usize,
    resets: Vec<Range<usize>>,
    waits_without_signal: Vec<Range<usize>>,
    signalled_on_several_streams: Vec<Range<usize>>,
    other_tasks: BTreeMap<String, usize>,
    streams_without_task_id: Vec<String>,
    kernels: usize,
}

/// Read a graph task dump (the file `file`) as a call trace of one device.
pub fn read(text: &[u8], file: FileId) -> (CallTrace, Vec<Diagnostic>) {
    let scan = scan::event_array(text);
    let mut reading = Vec::new();
    if let Some(stopped) = &scan.stopped {
        reading.push(stopped_early(file, stopped, scan.events.len()));
    }
    let parsed: Vec<Option<Result<Placed, ()>>> = scan
        .events
        .par_iter()
        .enumerate()
        .map(|(index, range)| match event::parse(&text[range.clone()]) {
            Ok(event) => place(&event, index, range).map(Ok),
            Err(_) => Some(Err(())),
        })
        .collect();
    let mut left_out = LeftOut::default();
    let mut tasks = Vec::new();
    for placed in parsed {
        match placed {
            Some(Ok(placed)) => tasks.push(placed),
            Some(Err(())) => left_out.unparsable += 1,
            None => left_out.not_tasks += 1,
        }
    }
    let streams = order_streams(tasks, &mut left_out);
    let trace = lower(&streams, file, &mut left_out);
    reading.extend(notes(file, &left_out));
    (trace, reading)
}

/// A task event, with its stream and order; `None` for any other event.
fn place(event: &Event, index: usize, range: &Range<usize>) -> Option<Placed> {
    let stream = event.tid.as_ref()?.text();
    if event.ph.as_deref() != Some("X") || !stream.starts_with("stream") {
        return None;
    }
    let args = event.args.as_ref()?;
    let name = event.name.as_deref().unwrap_or("").to_string();
    let task_type = args.get("Task Type").map(event::Scalar::text).unwrap_or_default();
    let task = classify(&name, &task_type, args);
    Some(Placed {
        task,
        name,
        stream,
        order: (args.int("Task Id").unwrap_or(i64::MIN), index),
        ts_ns: event
            .ts
            .as_ref()
            .and_then(event::Scalar::as_micros)
            .filter(|ts| ts.is_finite() && *ts >= 0.0)
            .map(|ts| (ts * 1000.0).round() as u64),
        range: range.clone(),
    })
}

/// What a task named `name` of type `task_type` does.
fn classify(name: &str, task_type: &str, args: &event::Args) -> Task {
    let handle = |prefix: &str| {
        name.strip_prefix(prefix)
            .filter(|tail| !tail.is_empty())
            .map(str::to_string)
    };
    if let Some(handle) = handle("EVENT_RECORD_") {
        return Task::Signal(Handle::Event(handle));
    }
    if let Some(handle) = handle("EVENT_WAIT_") {
        return Task::Wait(Handle::Event(handle));
    }
    if let Some(handle) = handle("MEM_WRITE_VALUE_") {
        return Task::Signal(Handle::Word(handle));
    }
    if let Some(handle) = handle("MEM_WAIT_VALUE_") {
        return Task::Wait(Handle::Word(handle));
    }
    if name.starts_with("EVENT_RESET_") || task_type == "EVENT_RESET" {
        return Task::Reset;
    }
    if task_type == "STREAM_ACTIVE" || name == "STREAM_ACTIVE" {
        return match args.int("Active Stream Id") {
            Some(stream) => Task::Activate(format!("stream{stream}")),
            None => Task::Other("STREAM_ACTIVE without `Active Stream Id`".to_string()),
        };
    }
    if task_type.starts_with("KERNEL_") {
        return Task::Kernel(cores(name, task_type, args));
    }
    Task::Other(if task_type.is_empty() {
        "untyped".to_string()
    } else {
        task_type.to_string()
    })
}

/// The vector cores a kernel task holds, as torch_npu's `deadlock_check.py` counts
/// them: `numBlocks` for `KERNEL_AIVEC` and `KERNEL_MIX_AIV`, twice `numBlocks` for
/// `KERNEL_MIX_AIC` unless its `Task Ration` is 0 (no vector part), none for
/// `KERNEL_AICORE`. A collective is told by its name (`aiv_`, `dispatch`, `combine`).
fn cores(name: &str, task_type: &str, args: &event::Args) -> Option<Cores> {
    let blocks = args.int("numBlocks")?;
    let vector = match task_type {
        "KERNEL_AIVEC" | "KERNEL_MIX_AIV" => blocks,
        "KERNEL_MIX_AIC" if args.int("Task Ration") == Some(0) => 0,
        "KERNEL_MIX_AIC" => blocks.saturating_mul(2),
        _ => 0,
    };
    let lower = name.to_ascii_lowercase();
    Some(Cores {
        vector,
        batch: args.int("schemMode") == Some(1),
        collective: ["aiv_", "dispatch", "combine"].iter().any(|part| lower.contains(part)),
    })
}

/// Each stream's tasks in their order: by `Task Id`, or by time (and that is said)
/// where a task of the stream has none.
fn order_streams(tasks: Vec<Placed>, left_out: &mut LeftOut) -> BTreeMap<String, Vec<Placed>> {
    let mut streams: BTreeMap<String, Vec<Placed>> = BTreeMap::new();
    for task in tasks {
        streams.entry(task.stream.clone()).or_default().push(task);
    }
    for (stream, tasks) in &mut streams {
        if tasks.iter().any(|task| task.order.0 == i64::MIN) {
            left_out.streams_without_task_id.push(stream.clone());
            tasks.sort_by_key(|task| (task.ts_ns.unwrap_or(0), task.order.1));
        } else {
            tasks.sort_by_key(|task| task.order);
        }
    }
    streams
}

/// Write the streams' tasks as calls of one host thread.
fn lower(streams: &BTreeMap<String, Vec<Placed>>, file: FileId, left_out: &mut LeftOut) -> CallTrace {
    let signals = lowered_signals(streams, left_out);
    let activations = activations(streams);
    let mut trace = CallTrace::new(1, Span::new(file, 0..0));
    let events = events_of(file, &signals, &activations);
    for (event, origin) in &events {
        let args = [("event", Arg::Str(event)), ("flag", Arg::Str("ACL_EVENT_SYNC"))];
        trace.call(origin.clone(), 0, 0, None, "aclrtCreateEventWithFlag", &args);
    }
    for (stream, tasks) in streams {
        if let Some(activation) = activations.get(stream.as_str()) {
            let origin = Span::new(file, activation.range.clone());
            wait(&mut trace, origin, &activation_event(stream), stream, activation.ts_ns);
        }
        for task in tasks {
            let origin = Span::new(file, task.range.clone());
            lower_task(&mut trace, task, origin, &signals, left_out);
        }
    }
    for (event, origin) in &events {
        trace.call(
            origin.clone(),
            0,
            0,
            None,
            "aclrtDestroyEvent",
            &[("event", Arg::Str(event))],
        );
    }
    trace
}

/// The signal of each handle that is lowered: its first on its stream; none for a
/// handle signalled on several streams.
fn lowered_signals<'a>(
    streams: &'a BTreeMap<String, Vec<Placed>>,
    left_out: &mut LeftOut,
) -> HashMap<&'a Handle, Option<&'a Placed>> {
    let mut signals: HashMap<&Handle, Option<&Placed>> = HashMap::new();
    for task in streams.values().flatten() {
        let Task::Signal(handle) = &task.task else { continue };
        match signals.get(handle) {
            None => {
                signals.insert(handle, Some(task));
            }
            Some(Some(first)) if first.stream != task.stream => {
                left_out.signalled_on_several_streams.push(task.range.clone());
                signals.insert(handle, None);
            }
            Some(_) => {}
        }
    }
    signals
}

/// The `STREAM_ACTIVE` task that starts each stream (the first, in its stream's order).
fn activations(streams: &BTreeMap<String, Vec<Placed>>) -> HashMap<&str, &Placed> {
    let mut activations = HashMap::new();
    for task in streams.values().flatten() {
        if let Task::Activate(target) = &task.task
            && streams.contains_key(target)
            && *target != task.stream
        {
            activations.entry(target.as_str()).or_insert(task);
        }
    }
    activations
}

/// The events the lowering records and waits on, each with the task that records it,
/// in name order.
fn events_of(
    file: FileId,
    signals: &HashMap<&Handle, Option<&Placed>>,
    activations: &HashMap<&str, &Placed>,
) -> Vec<(String, Span)> {
    let mut events: Vec<(String, Span)> = signals
        .iter()
        .filter_map(|(handle, first)| Some((handle.event(), Span::new(file, (*first)?.range.clone()))))
        .chain(
            activations
                .iter()
                .map(|(stream, task)| (activation_event(stream), Span::new(file, task.range.clone()))),
        )
        .collect();
    events.sort_by(|a, b| a.0.cmp(&b.0));
    events
}

fn activation_event(stream: &str) -> String {
    format!("activate_{stream}")
}

fn lower_task(
    trace: &mut CallTrace,
    task: &Placed,
    origin: Span,
    signals: &HashMap<&Handle, Option<&Placed>>,
    left_out: &mut LeftOut,
) {
    let stream = task.stream.as_str();
    match &task.task {
        Task::Signal(handle) => {
            if let Some(Some(first)) = signals.get(handle)
                && std::ptr::eq(*first, task)
            {
                record(trace, origin, &handle.event(), stream, task.ts_ns);
            }
        }
        Task::Wait(handle) => match signals.get(handle) {
            Some(Some(_)) => wait(trace, origin, &handle.event(), stream, task.ts_ns),
            Some(None) => {}
            None => left_out.waits_without_signal.push(task.range.clone()),
        },
        Task::Reset => left_out.resets.push(task.range.clone()),
        Task::Activate(target) => record(trace, origin, &activation_event(target), stream, task.ts_ns),
        Task::Kernel(cores) => {
            let mut args = vec![("stream", Arg::Str(stream)), ("name", Arg::Str(&task.name))];
            if let Some(cores) = cores {
                args.push(("vectorCores", Arg::Int(cores.vector)));
                args.push(("schemMode", Arg::Int(i64::from(cores.batch))));
                args.push(("collective", Arg::Int(i64::from(cores.collective))));
            }
            trace.call(origin, 0, 0, task.ts_ns, "kernel", &args);
            left_out.kernels += 1;
        }
        Task::Other(kind) => *left_out.other_tasks.entry(kind.clone()).or_default() += 1,
    }
}

fn record(trace: &mut CallTrace, origin: Span, event: &str, stream: &str, ts: Option<u64>) {
    let args = [("event", Arg::Str(event)), ("stream", Arg::Str(stream))];
    trace.call(origin, 0, 0, ts, "aclrtRecordEvent", &args);
}

fn wait(trace: &mut CallTrace, origin: Span, event: &str, stream: &str, ts: Option<u64>) {
    let args = [("stream", Arg::Str(stream)), ("event", Arg::Str(event))];
    trace.call(origin, 0, 0, ts, "aclrtStreamWaitEvent", &args);
}

/// The notes for what the dump holds and the check does not use.
fn notes(file: FileId, left_out: &LeftOut) -> Vec<Diagnostic> {
    let mut notes = Vec::new();
    let mut note = |severity, first: Option<&Range<usize>>, message: String, label: &str| {
        let note = Diagnostic::new(
            &TraceFormatError::INFO,
            Span::new(file, first.cloned().unwrap_or(0..0)),
            message,
        )
        .with_severity(severity);
        notes.push(match label {
            "" => note,
            label => note.with_label(label.to_string()),
        });
    };
    if left_out.unparsable > 0 {
        note(
            Severity::Warning,
            None,
            format!(
                "{} event(s) of this graph dump are not readable JSON objects and are skipped",
                left_out.unparsable
            ),
            "",
        );
    }
    if !left_out.waits_without_signal.is_empty() {
        note(
            Severity::Info,
            left_out.waits_without_signal.first(),
            format!(
                "{} wait task(s) wait on a handle no task of this graph signals: they wait for work outside the graph (recorded before it is launched), so they are not checked",
                left_out.waits_without_signal.len()
            ),
            "the first of them",
        );
    }
    if !left_out.signalled_on_several_streams.is_empty() {
        note(
            Severity::Warning,
            left_out.signalled_on_several_streams.first(),
            format!(
                "{} handle(s) are signalled on more than one stream: which signal releases each wait on them is not in the dump, so those waits order nothing here (collectives they order may be reported as ready together)",
                left_out.signalled_on_several_streams.len()
            ),
            "signalled again on another stream",
        );
    }
    if !left_out.resets.is_empty() {
        note(
            Severity::Info,
            left_out.resets.first(),
            format!(
                "{} EVENT_RESET task(s) are not checked: the dump does not say which record each reset ends, so each wait is taken as released by the first record of its handle",
                left_out.resets.len()
            ),
            "the first of them",
        );
    }
    for stream in &left_out.streams_without_task_id {
        note(
            Severity::Warning,
            None,
            format!("a task of {stream} has no `Task Id`: the stream's tasks are taken in the order of their `ts`"),
            "",
        );
    }
    if left_out.kernels > 0 {
        note(
            Severity::Info,
            None,
            format!(
                "the dump does not say what memory its {} kernel task(s) touch: races between its streams are not checked, only their order and the cores they claim",
                left_out.kernels
            ),
            "",
        );
    }
    if !left_out.other_tasks.is_empty() {
        let kinds: Vec<String> = left_out
            .other_tasks
            .iter()
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect();
        note(
            Severity::Info,
            None,
            format!(
                "tasks that neither synchronize nor claim cores are not checked: {}",
                kinds.join(", ")
            ),
            "",
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(tasks: &[&str]) -> String {
        format!("[\n{}\n]\n", tasks.join(",\n"))
    }

    fn task(name: &str, stream: u32, id: u32, args: &str) -> String {
        format!(
            r#"{{"name": "{name}", "ph": "X", "pid": 0, "tid": "stream{stream}", "ts": {id}, "dur": 1, "args": {{"Task Id": {id}, "Stream Id": {stream}{args}}}}}"#
        )
    }

    #[test]
    fn a_dump_is_told_from_an_msprof_timeline() {
        let text = dump(&[&task("EVENT_RECORD_7", 1, 0, r#", "Task Type": "EVENT_RECORD""#)]);
        assert!(sniff(&text));
        assert!(!sniff(
            r#"[{"name": "Notify_Record", "ph": "X", "pid": 3, "tid": 10, "args": {"Task Id": 1}}]"#
        ));
    }

    #[test]
    fn a_wait_follows_the_first_signal_of_its_stream() {
        let text = dump(&[
            &task("EVENT_RECORD_7", 1, 0, ""),
            &task("EVENT_RECORD_7", 1, 1, ""),
            &task("EVENT_WAIT_7", 2, 0, ""),
        ]);
        let (trace, reading) = read(text.as_bytes(), FileId(0));
        let lines = trace.text();
        assert_eq!(lines.matches("aclrtRecordEvent").count(), 1, "{lines}");
        assert_eq!(lines.matches("aclrtStreamWaitEvent").count(), 1, "{lines}");
        assert!(reading.is_empty());
    }

    #[test]
    fn what_is_not_lowered_is_said() {
        let text = dump(&[
            &task("EVENT_RECORD_7", 1, 0, ""),
            &task("EVENT_RECORD_7", 2, 0, ""),
            &task("EVENT_WAIT_7", 3, 0, ""),
            &task("EVENT_WAIT_9", 3, 1, ""),
            &task("EVENT_RESET_7", 3, 2, r#", "Task Type": "EVENT_RESET""#),
            &task("memcpy", 3, 3, r#", "Task Type": "MEMCPY_ASYNC""#),
        ]);
        let (trace, reading) = read(text.as_bytes(), FileId(0));
        assert!(!trace.text().contains("aclrtStreamWaitEvent"));
        let messages: Vec<&str> = reading.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[0].starts_with("1 wait task(s) wait on a handle no task"));
        assert!(messages[1].starts_with("1 handle(s) are signalled on more than one stream"));
        assert!(messages[2].starts_with("1 EVENT_RESET task(s)"));
        assert!(messages[3].ends_with("1 MEMCPY_ASYNC"));
    }

    #[test]
    fn kernels_claim_cores_as_their_type_says() {
        let text = dump(&[
            &task(
                "aiv_all_gather",
                1,
                0,
                r#", "Task Type": "KERNEL_AIVEC", "numBlocks": 48, "schemMode": 1"#,
            ),
            &task(
                "MoeDistributeCombine",
                2,
                0,
                r#", "Task Type": "KERNEL_MIX_AIC", "numBlocks": 8, "schemMode": 1, "Task Ration": 2"#,
            ),
            &task(
                "matmul",
                2,
                1,
                r#", "Task Type": "KERNEL_MIX_AIC", "numBlocks": 8, "Task Ration": 0"#,
            ),
        ]);
        let (trace, _) = read(text.as_bytes(), FileId(0));
        let lines = trace.text();
        assert!(
            lines.contains(r#""name": "aiv_all_gather", "vectorCores": 48, "schemMode": 1, "collective": 1"#),
            "{lines}"
        );
        assert!(
            lines.contains(r#""vectorCores": 16, "schemMode": 1, "collective": 1"#),
            "{lines}"
        );
        assert!(
            lines.contains(r#""name": "matmul", "vectorCores": 0, "schemMode": 0, "collective": 0"#),
            "{lines}"
        );
    }

    #[test]
    fn an_activated_stream_waits_for_its_activation() {
        let text = dump(&[
            &task(
                "STREAM_ACTIVE",
                1,
                0,
                r#", "Task Type": "STREAM_ACTIVE", "Active Stream Id": 5"#,
            ),
            &task("k", 5, 0, r#", "Task Type": "KERNEL_AIVEC", "numBlocks": 4"#),
        ]);
        let (trace, _) = read(text.as_bytes(), FileId(0));
        let lines = trace.text();
        let record =
            lines.find(r#""api": "aclrtRecordEvent", "args": {"event": "activate_stream5", "stream": "stream1"}"#);
        let wait =
            lines.find(r#""api": "aclrtStreamWaitEvent", "args": {"stream": "stream5", "event": "activate_stream5"}"#);
        assert!(record.is_some() && wait.is_some(), "{lines}");
    }
}
