//! The execution window of each finding as Chrome Trace Event JSON, which Perfetto
//! (ui.perfetto.dev) and `chrome://tracing` open: one process per finding, one thread
//! per lane, a slice per op at its happens-before step, and a flow arrow per match, host
//! synchronize or cycle step. A call trace that carries `ts` gives real times: each op
//! starts when its call was made.

use serde_json::{Value, json};

use super::json::position;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;
use crate::timeline::{Role, Timeline};

/// Microseconds per happens-before step, and the length of a slice within one.
const STEP_US: f64 = 1000.0;
const SLICE_US: f64 = 800.0;
/// A slice at a real time lasts until the next op of its lane, at most `MAX_SLICE_US`;
/// `MIN_SLICE_US` when no op of the window has a next one.
const MIN_SLICE_US: f64 = 1.0;
const MAX_SLICE_US: f64 = 1000.0;

/// Where each op's slice starts and how long it lasts, in microseconds.
struct Times {
    starts: Vec<f64>,
    durations: Vec<f64>,
    real: bool,
}

impl Times {
    /// The trace's times where every op of the window has one, else one step each.
    fn of(timeline: &Timeline) -> Self {
        let real: Option<Vec<u64>> = timeline.ops.iter().map(|op| op.time_ns).collect();
        let Some(real) = real.filter(|times| !times.is_empty()) else {
            return Times {
                starts: timeline.ops.iter().map(|op| f64::from(op.step) * STEP_US).collect(),
                durations: vec![SLICE_US; timeline.ops.len()],
                real: false,
            };
        };
        let first = real.iter().copied().min().unwrap_or(0);
        let starts: Vec<f64> = real.iter().map(|&t| (t - first) as f64 / 1000.0).collect();
        // Until the next op of the lane, so that slices of a lane never overlap; the last
        // one of a lane as long as the shortest other slice.
        let until_next: Vec<Option<f64>> = (0..timeline.ops.len())
            .map(|i| {
                (0..timeline.ops.len())
                    .filter(|&j| timeline.ops[j].lane == timeline.ops[i].lane && starts[j] > starts[i])
                    .map(|j| (starts[j] - starts[i]) * 0.8)
                    .reduce(f64::min)
                    .map(|gap| gap.min(MAX_SLICE_US))
            })
            .collect();
        let shortest = until_next
            .iter()
            .flatten()
            .copied()
            .reduce(f64::min)
            .unwrap_or(MIN_SLICE_US);
        let durations = until_next.iter().map(|gap| gap.unwrap_or(shortest)).collect();
        Times {
            starts,
            durations,
            real: true,
        }
    }
}

/// `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}`
pub fn render_chrome_trace(diagnostics: &[Diagnostic], sources: &Sources) -> Value {
    let mut events = Vec::new();
    let mut next_flow = 1u64;
    let mut real_times = false;
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
        let times = Times::of(timeline);
        real_times |= times.real;
        events.extend(slices(timeline, &times, pid, diagnostic, sources));
        events.extend(flows(timeline, &times, pid, &mut next_flow));
    }
    let time = if real_times {
        "the trace's ts where every op of a finding has one (relative to its first op); else one millisecond per happens-before step: the order is real, the durations are not"
    } else {
        "one millisecond per happens-before step: the order is real, the durations are not"
    };
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": concat!("syncguard ", env!("CARGO_PKG_VERSION")),
            "time": time,
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

/// A complete ("X") event per op.
fn slices(timeline: &Timeline, times: &Times, pid: u64, diagnostic: &Diagnostic, sources: &Sources) -> Vec<Value> {
    timeline
        .ops
        .iter()
        .enumerate()
        .map(|(index, op)| {
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
                "ts": times.starts[index],
                "dur": times.durations[index],
                "name": op.label,
                "cat": category,
                "args": args,
            })
        })
        .collect()
}

/// A flow ("s" then "f", same id) per edge: it leaves at the end of the signalling op's
/// slice (what it orders happens when that op is done) and binds to the slice that
/// encloses its end, as late in the waiting op's slice as needed never to end before it
/// starts.
fn flows(timeline: &Timeline, times: &Times, pid: u64, next_flow: &mut u64) -> Vec<Value> {
    let mut events = Vec::new();
    for edge in &timeline.edges {
        let (from, to) = (&timeline.ops[edge.from], &timeline.ops[edge.to]);
        let id = *next_flow;
        *next_flow += 1;
        let category = if edge.on_cycle { "cycle" } else { edge.kind.as_str() };
        let name = format!("{} → {}", from.label, to.label);
        let leaves = near_end(times, edge.from);
        let arrives = leaves.clamp(near_start(times, edge.to), near_end(times, edge.to));
        events.push(json!({
            "ph": "s", "id": id, "pid": pid, "tid": from.lane, "ts": leaves,
            "name": name, "cat": category,
        }));
        events.push(json!({
            "ph": "f", "bp": "e", "id": id, "pid": pid, "tid": to.lane, "ts": arrives,
            "name": name, "cat": category,
        }));
    }
    events
}

/// Flows attach inside a slice, this share of it from its ends: a flow event on the
/// slice's very edge may bind to the neighbouring slice.
const FLOW_INSET: f64 = 0.02;

fn near_end(times: &Times, op: usize) -> f64 {
    times.starts[op] + times.durations[op] * (1.0 - FLOW_INSET)
}

fn near_start(times: &Times, op: usize) -> f64 {
    times.starts[op] + times.durations[op] * FLOW_INSET
}
