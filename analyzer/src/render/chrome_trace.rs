//! The execution window of each finding as Chrome Trace Event JSON, which Perfetto
//! (ui.perfetto.dev) and `chrome://tracing` open: one process per finding, one thread
//! per lane, a slice per op at its happens-before step, and a flow arrow per match, host
//! synchronize or cycle step.

use serde_json::{Value, json};

use super::json::position;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;
use crate::timeline::{Role, Timeline};

/// Microseconds per happens-before step, and the length of a slice within one.
const STEP_US: u64 = 1000;
const SLICE_US: u64 = 800;

/// `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}`
pub fn render_chrome_trace(diagnostics: &[Diagnostic], sources: &Sources) -> Value {
    let mut events = Vec::new();
    let mut next_flow = 1u64;
    for (number, diagnostic) in diagnostics.iter().enumerate() {
        let Some(timeline) = &diagnostic.timeline else {
            continue;
        };
        let pid = number as u64 + 1;
        let (file, line, _) = position(&diagnostic.primary, sources, false);
        events.push(metadata(
            pid,
            None,
            "process_name",
            &format!("{} {} at {file}:{line}", diagnostic.code, diagnostic.name),
        ));
        events.push(json!({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}}));
        for (lane_index, lane) in timeline.lanes.iter().enumerate() {
            events.push(metadata(pid, Some(lane_index as u64), "thread_name", &lane.name));
        }
        events.extend(slices(timeline, pid, diagnostic, sources));
        events.extend(flows(timeline, pid, &mut next_flow));
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": concat!("syncguard ", env!("CARGO_PKG_VERSION")),
            "time": "one millisecond per happens-before step: the order is real, the durations are not",
        },
    })
}

fn metadata(pid: u64, tid: Option<u64>, name: &str, value: &str) -> Value {
    let mut event = json!({"ph": "M", "pid": pid, "name": name, "args": {"name": value}});
    if let Some(tid) = tid {
        event["tid"] = json!(tid);
    }
    event
}

fn start_of(step: u32) -> u64 {
    u64::from(step) * STEP_US
}

/// A complete ("X") event per op.
fn slices(timeline: &Timeline, pid: u64, diagnostic: &Diagnostic, sources: &Sources) -> Vec<Value> {
    timeline
        .ops
        .iter()
        .map(|op| {
            let (file, line, column) = position(&op.span, sources, false);
            let mut args = json!({
                "source": format!("{file}:{line}:{column}"),
                "executed": op.executed,
                "finding": format!("{}: {}", diagnostic.code, diagnostic.message),
            });
            if let Some(object) = &op.object {
                args["object"] = json!(object);
            }
            if let Some(number) = op.number {
                args["order"] = json!(number);
            }
            let category = match (op.role, op.executed) {
                (Role::Cycle, _) => "cycle",
                (Role::Involved, _) => "involved",
                (Role::Context, false) => "never-runs",
                (Role::Context, true) => "op",
            };
            json!({
                "ph": "X",
                "pid": pid,
                "tid": op.lane,
                "ts": start_of(op.step),
                "dur": SLICE_US,
                "name": op.label,
                "cat": category,
                "args": args,
            })
        })
        .collect()
}

/// A flow ("s" then "f", same id) per edge: it starts inside the source op's slice and
/// binds to the slice enclosing its end.
fn flows(timeline: &Timeline, pid: u64, next_flow: &mut u64) -> Vec<Value> {
    let mut events = Vec::new();
    for edge in &timeline.edges {
        let (from, to) = (&timeline.ops[edge.from], &timeline.ops[edge.to]);
        let id = *next_flow;
        *next_flow += 1;
        let category = if edge.on_cycle { "cycle" } else { edge.kind.as_str() };
        let name = format!("{} → {}", from.label, to.label);
        events.push(json!({
            "ph": "s", "id": id, "pid": pid, "tid": from.lane, "ts": start_of(from.step) + SLICE_US / 2,
            "name": name, "cat": category,
        }));
        events.push(json!({
            "ph": "f", "bp": "e", "id": id, "pid": pid, "tid": to.lane, "ts": start_of(to.step) + SLICE_US / 2,
            "name": name, "cat": category,
        }));
    }
    events
}
