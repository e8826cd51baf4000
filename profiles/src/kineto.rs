//! PyTorch profiler (Kineto) Chrome traces as the CUDA calls a capture would have shown.
//!
//! A Kineto trace holds host calls (`cuda_runtime`, `cuda_driver`: name, thread, time,
//! `correlation`) and, apart, what each did on the device, joined by `correlation`:
//! `kernel`, `gpu_memcpy`, `gpu_memset` (their `stream`), `cuda_sync` (the stream
//! waited, and for event waits the event and the record call it waited for), and
//! `cuda_event` (an event record and its stream). Each host call is written with the
//! handles its device side names; a call whose handles the trace does not carry is
//! left out and counted in one note. docs/PROFILES.md lists the fields and what the
//! trace cannot tell (no pointers: no buffer identity, so data races are not checked).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use rayon::prelude::*;
use smallvec::SmallVec;
// Correlation ids are small integers the profiler assigned: no attacker picks them, and
// the default hasher was a tenth of reading a large trace.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use syncguard_model::diagnostic::{Diagnostic, Severity};
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::{FileId, Span};

use crate::calls::{Arg, CallTrace};
use crate::event::{self, Event};
use crate::execution_trace::{ExecutionTrace, Footprint};
use crate::scan;

/// A Kineto trace read: its calls as a trace, and what reading found.
pub struct KinetoCalls {
    pub trace: CallTrace,
    pub reading: Vec<Diagnostic>,
}

/// A kernel, copy or set: (stream, device, name, start).
type Task<'a> = (i64, i64, Cow<'a, str>, f64);

/// What the device did for one correlation id.
#[derive(Default)]
struct DeviceSide<'a> {
    /// Kernels, copies and sets, in start order: (stream, device, name).
    /// Nearly always one: inline, not an allocation per launch.
    tasks: SmallVec<[Task<'a>; 1]>,
    sync: Option<Sync<'a>>,
    /// A `cuda_event` record: (event id, stream, device).
    record: Option<(i64, i64, i64)>,
}

/// A `cuda_sync` event.
struct Sync<'a> {
    kind: Cow<'a, str>,
    stream: i64,
    device: i64,
    /// For event syncs and waits: the event, the stream and correlation of its record.
    event: Option<i64>,
    record_stream: Option<i64>,
    record_correlation: Option<i64>,
}

/// A host call.
struct HostCall<'a> {
    name: Cow<'a, str>,
    thread: i64,
    ts: f64,
    /// `None` when the event has none: then no device side is joined to it.
    correlation: Option<i64>,
    range: Range<usize>,
}

/// What was left out, counted for one note.
#[derive(Default)]
struct LeftOut {
    records_without_stream: usize,
    waits_without_sync: usize,
    syncs_without_sync: usize,
    queries: usize,
    /// Launches, copies and sets with no device task of their correlation.
    launches_without_task: usize,
    /// Calls with a `cuda_sync` or `cuda_event` of their own whose name this reader
    /// does not lower, by name.
    unknown_with_device: BTreeMap<String, usize>,
    /// Device events that cannot be used, by category and why.
    unusable_device: BTreeMap<(String, &'static str), usize>,
    /// Device events whose correlation no host call in the trace has.
    unjoined_device: usize,
    unparsable: usize,
    first_unparsable: Option<(Range<usize>, String)>,
}

impl LeftOut {
    /// Waits, synchronizes and records that could not be lowered: orderings the
    /// checked program lacks. (Queries count too: a host loop polling one until the
    /// work is done orders what follows.)
    fn orderings_left_out(&self) -> usize {
        self.records_without_stream + self.waits_without_sync + self.syncs_without_sync + self.queries
    }

    /// Add what lowering another run of calls left out.
    fn add(&mut self, other: LeftOut) {
        self.records_without_stream += other.records_without_stream;
        self.waits_without_sync += other.waits_without_sync;
        self.syncs_without_sync += other.syncs_without_sync;
        self.queries += other.queries;
        self.launches_without_task += other.launches_without_task;
        for (name, count) in other.unknown_with_device {
            *self.unknown_with_device.entry(name).or_default() += count;
        }
    }

    /// What lowering counts, cleared for lowering again (what reading counted stays).
    fn reset_counts(self) -> LeftOut {
        LeftOut {
            unusable_device: self.unusable_device,
            unjoined_device: self.unjoined_device,
            unparsable: self.unparsable,
            first_unparsable: self.first_unparsable,
            ..LeftOut::default()
        }
    }
}

/// Read the Kineto trace `text` (the file `file`); with the execution trace of the same
/// run, each kernel launch gets the tensors of the operator that launched it.
pub fn read(text: &[u8], file: FileId, execution: Option<&ExecutionTrace>) -> KinetoCalls {
    let scan = scan::event_array(text);
    let mut reading = Vec::new();
    if let Some(stopped) = &scan.stopped {
        reading.push(stopped_early(file, stopped, scan.events.len()));
    }
    // Each event parsed and sorted in parallel into what it is, borrowing from the
    // text; the parsed event is dropped on the thread that made it.
    let items: Vec<Item> = scan
        .events
        .par_iter()
        .map(|range| match event::parse(&text[range.clone()]) {
            Ok(event) => classify(event, range, execution.is_some()),
            Err(err) => Item::Unparsable(err.to_string()),
        })
        .collect();
    let mut left_out = LeftOut::default();
    let mut device = DeviceSides::for_items(&items);
    let mut host = Vec::new();
    let mut ops = Vec::new();
    let mut has_sync_events = false;
    for (range, item) in scan.events.iter().zip(items) {
        match item {
            Item::Skip => {}
            Item::Unparsable(err) => {
                left_out.unparsable += 1;
                left_out.first_unparsable.get_or_insert((range.clone(), err));
            }
            Item::Host(call) => host.push(call),
            Item::Op(op) => ops.push(op),
            Item::Task(correlation, task) => device.entry(correlation).tasks.push(task),
            Item::Sync(correlation, sync) => {
                has_sync_events = true;
                device.entry(correlation).sync = Some(sync);
            }
            Item::Record(correlation, record) => device.entry(correlation).record = Some(record),
            Item::Unusable(cat, why) => {
                has_sync_events |= cat == "cuda_sync";
                *left_out.unusable_device.entry((cat.into_owned(), why)).or_default() += 1;
            }
        }
    }
    // Issue order: each thread's calls by time, then by correlation (assigned in order).
    host.sort_by(|a: &HostCall, b: &HostCall| a.ts.total_cmp(&b.ts).then(a.correlation.cmp(&b.correlation)));
    left_out.unjoined_device = device.unjoined_events(&host);
    let names = Names::new(&device);
    let rank = rank_of(text, &scan.members);
    let footprints = execution.map(|execution| footprints(&host, ops, execution));
    let mut lowering = Lowering {
        device: &device,
        names: &names,
        file,
        footprints: footprints.as_ref().map(|joined| &joined.by_call),
    };
    let (mut trace, mut left_out) = lowering.all(&host, left_out);
    let mut joined = footprints.as_ref().map(|joined| joined.summary());
    if let Some(joined) = &mut joined
        && left_out.orderings_left_out() > 0
    {
        // An ordering the trace could not show would make ordered accesses look like
        // races: the footprints are not used, and that is said.
        joined.withheld = left_out.orderings_left_out();
        lowering.footprints = None;
        (trace, left_out) = lowering.all(&host, left_out.reset_counts());
    }
    if let Some(note) = left_out_note(file, &left_out, has_sync_events, rank, trace.len(), joined.as_ref()) {
        reading.push(note);
    }
    KinetoCalls { trace, reading }
}

/// How a trace's calls are written, and with which footprints.
struct Lowering<'a, 'b> {
    device: &'b DeviceSides<'a>,
    names: &'b Names,
    file: FileId,
    /// Each launch's footprint, by its index among the host calls.
    footprints: Option<&'b HashMap<usize, &'b Footprint>>,
}

/// Host calls written per task of the pool: each call's lines depend only on the call.
const CALLS_PER_TASK: usize = 16 << 10;

impl Lowering<'_, '_> {
    /// Every host call written in order, in parallel by runs of calls; `left_out`
    /// gains what they left out.
    fn all(&self, host: &[HostCall], left_out: LeftOut) -> (CallTrace, LeftOut) {
        let header = Span::new(self.file, 0..0);
        let parts: Vec<(CallTrace, LeftOut)> = host
            .par_chunks(CALLS_PER_TASK)
            .enumerate()
            .map(|(chunk, calls)| {
                let mut part = (CallTrace::part(header.clone()), LeftOut::default());
                for (offset, call) in calls.iter().enumerate() {
                    let index = chunk * CALLS_PER_TASK + offset;
                    let footprint = self.footprints.and_then(|by_call| by_call.get(&index).copied());
                    lower(call, footprint, self, &mut part.0, &mut part.1);
                }
                part
            })
            .collect();
        let mut trace = CallTrace::new(1, header);
        let mut left_out = left_out;
        for (part, left) in parts {
            trace.append(part);
            left_out.add(left);
        }
        (trace, left_out)
    }
}

/// A `cpu_op` event: the operator a host call ran inside.
struct CpuOp {
    thread: i64,
    start: f64,
    end: f64,
    /// Its record-function id (`Record function id`, else, in traces before that
    /// argument, its `External id`, which was the same number): what the execution
    /// trace names it by.
    rf_id: i64,
}

/// The launches joined to execution-trace operators.
struct Joined<'a> {
    by_call: HashMap<usize, &'a Footprint>,
    launches: usize,
    nodes_without_rf_id: usize,
}

/// What joining found, for the reading note.
struct JoinSummary {
    joined: usize,
    launches: usize,
    nodes_without_rf_id: usize,
    /// Ordering calls left out, for which the footprints were not used.
    withheld: usize,
}

impl Joined<'_> {
    fn summary(&self) -> JoinSummary {
        JoinSummary {
            joined: self.by_call.len(),
            launches: self.launches,
            nodes_without_rf_id: self.nodes_without_rf_id,
            withheld: 0,
        }
    }
}

/// Each launch's footprint: the innermost `cpu_op` around the launch call on its
/// thread (in time) whose record-function id the execution trace has a device
/// footprint for.
fn footprints<'a>(host: &[HostCall], mut ops: Vec<CpuOp>, execution: &'a ExecutionTrace) -> Joined<'a> {
    ops.sort_by(|a, b| {
        a.thread
            .cmp(&b.thread)
            .then(a.start.total_cmp(&b.start))
            .then(b.end.total_cmp(&a.end))
    });
    let mut launches: Vec<(usize, &HostCall)> = host
        .iter()
        .enumerate()
        .filter(|(_, call)| makes_device_task(&call.name))
        .collect();
    launches.sort_by(|a, b| a.1.thread.cmp(&b.1.thread).then(a.1.ts.total_cmp(&b.1.ts)));
    let mut by_call = HashMap::default();
    let mut next_op = 0;
    // The operators open at the current launch, outermost first.
    let mut open: Vec<&CpuOp> = Vec::new();
    for &(index, call) in &launches {
        if open.last().is_some_and(|op| op.thread != call.thread) {
            open.clear();
        }
        while let Some(op) = ops
            .get(next_op)
            .filter(|op| (op.thread, op.start) <= (call.thread, call.ts))
        {
            next_op += 1;
            if op.thread == call.thread {
                open.retain(|outer| outer.end >= op.start);
                open.push(op);
            }
        }
        open.retain(|op| op.end >= call.ts);
        let footprint = open.iter().rev().find_map(|op| execution.footprints.get(&op.rf_id));
        if let Some(footprint) = footprint {
            by_call.insert(index, footprint);
        }
    }
    Joined {
        by_call,
        launches: launches.len(),
        nodes_without_rf_id: execution.nodes_without_rf_id,
    }
}

/// What one event is to this reader.
enum Item<'a> {
    /// Not of a kind the reader models (`cpu_op`, flow events, ...).
    Skip,
    /// Not a readable JSON object: why.
    Unparsable(String),
    Host(HostCall<'a>),
    Op(CpuOp),
    /// A kernel, copy or set of a correlation: (stream, device, name, start).
    Task(i64, Task<'a>),
    Sync(i64, Sync<'a>),
    /// A `cuda_event` record of a correlation: (event id, stream, device).
    Record(i64, (i64, i64, i64)),
    /// A device event that cannot be used: its category, and why.
    Unusable(Cow<'a, str>, &'static str),
}

/// What one event is: a host call, an operator (`with_operators`: there is an execution
/// trace to join), a device event of a correlation, or one counted as unusable.
fn classify<'a>(event: Event<'a>, range: &Range<usize>, with_operators: bool) -> Item<'a> {
    let Event {
        cat,
        name,
        tid,
        ts,
        dur: event_dur,
        args,
        ..
    } = event;
    let Some(cat) = cat else {
        return Item::Skip;
    };
    let correlation = args.as_ref().and_then(|args| args.int("correlation"));
    let name = name.unwrap_or(Cow::Borrowed(""));
    let ts = ts.as_ref().and_then(|ts| ts.as_micros()).unwrap_or(0.0);
    let is_device = matches!(
        &*cat,
        "kernel" | "gpu_memcpy" | "gpu_memset" | "cuda_sync" | "cuda_event"
    );
    if matches!(&*cat, "cuda_runtime" | "cuda_driver") {
        // Without a correlation no device side joins it: it is lowered as what its name
        // alone says, or counted as such a call with nothing joined.
        return Item::Host(HostCall {
            name,
            thread: tid.as_ref().and_then(|tid| tid.as_int()).unwrap_or(0),
            ts,
            correlation,
            range: range.clone(),
        });
    }
    // Operators matter only to join an execution trace's tensors.
    if &*cat == "cpu_op" && with_operators {
        let rf_id = args
            .as_ref()
            .and_then(|args| args.int("Record function id").or_else(|| args.int("External id")));
        let dur = event_dur.and_then(|dur| dur.as_micros()).unwrap_or(0.0);
        return match rf_id {
            Some(rf_id) => Item::Op(CpuOp {
                thread: tid.as_ref().and_then(|tid| tid.as_int()).unwrap_or(0),
                start: ts,
                end: ts + dur,
                rf_id,
            }),
            None => Item::Skip,
        };
    }
    if !is_device {
        return Item::Skip;
    }
    let (Some(args), Some(correlation)) = (args, correlation) else {
        return Item::Unusable(cat, "have no `args.correlation`: no call can be joined to them");
    };
    let stream = args.int("stream");
    let device_id = args.int("device").unwrap_or(0);
    match &*cat {
        "kernel" | "gpu_memcpy" | "gpu_memset" => match stream {
            Some(stream) => Item::Task(correlation, (stream, device_id, name, ts)),
            None => Item::Unusable(cat, "have no `args.stream`: where they ran is unknown"),
        },
        "cuda_sync" => {
            let kind = args
                .get("cuda_sync_kind")
                .map(|kind| match kind {
                    event::Scalar::Str(text) => text.clone(),
                    other => Cow::Owned(other.text()),
                })
                .unwrap_or(name);
            let known = |value: Option<i64>| value.filter(|&v| v >= 0);
            Item::Sync(
                correlation,
                Sync {
                    kind,
                    stream: stream.unwrap_or(-1),
                    device: device_id,
                    event: args.int("wait_on_cuda_event_id").or_else(|| args.int("event_id")),
                    record_stream: known(args.int("wait_on_stream")),
                    record_correlation: known(args.int("wait_on_cuda_event_record_corr_id")),
                },
            )
        }
        _ => match (args.int("event_id"), stream) {
            (Some(event_id), Some(stream)) => Item::Record(correlation, (event_id, stream, device_id)),
            _ => Item::Unusable(
                cat,
                "have no `args.event_id` or `args.stream`: which event and stream they record is unknown",
            ),
        },
    }
}

/// The device side of each correlation id. Kineto numbers correlations from 1 in
/// order, so they index a vector directly; ids spread too far apart for that are hashed.
enum DeviceSides<'a> {
    /// By id; a side with nothing in it is no side.
    Dense(Vec<DeviceSide<'a>>),
    Sparse(HashMap<i64, DeviceSide<'a>>),
}

impl<'a> DeviceSides<'a> {
    fn for_items(items: &[Item]) -> Self {
        let ids = items.iter().filter_map(Item::correlation);
        let (count, lowest, highest) = ids.fold((0usize, i64::MAX, i64::MIN), |(count, low, high), id| {
            (count + 1, low.min(id), high.max(id))
        });
        match usize::try_from(highest) {
            Ok(highest) if lowest >= 0 && highest <= 4 * count + 1024 => {
                DeviceSides::Dense(std::iter::repeat_with(DeviceSide::default).take(highest + 1).collect())
            }
            _ if count == 0 => DeviceSides::Dense(Vec::new()),
            _ => DeviceSides::Sparse(HashMap::with_capacity_and_hasher(count, Default::default())),
        }
    }

    fn entry(&mut self, id: i64) -> &mut DeviceSide<'a> {
        match self {
            DeviceSides::Dense(sides) => &mut sides[usize::try_from(id).expect("dense ids are in range")],
            DeviceSides::Sparse(sides) => sides.entry(id).or_default(),
        }
    }

    fn get(&self, id: i64) -> Option<&DeviceSide<'a>> {
        match self {
            DeviceSides::Dense(sides) => usize::try_from(id)
                .ok()
                .and_then(|id| sides.get(id))
                .filter(|side| !side.is_empty()),
            DeviceSides::Sparse(sides) => sides.get(&id),
        }
    }

    /// Every side with something in it.
    fn values(&self) -> Box<dyn Iterator<Item = &DeviceSide<'a>> + '_> {
        match self {
            DeviceSides::Dense(sides) => Box::new(sides.iter().filter(|side| !side.is_empty())),
            DeviceSides::Sparse(sides) => Box::new(sides.values()),
        }
    }

    /// The device events whose correlation no host call of the trace has (their call
    /// was made before the profiling window, or its event was lost): nothing lowers them.
    fn unjoined_events(&self, host: &[HostCall]) -> usize {
        let ids = host.iter().filter_map(|call| call.correlation);
        let all: usize = self.values().map(DeviceSide::events).sum();
        let joined: usize = match self {
            DeviceSides::Dense(sides) => {
                let mut seen = vec![false; sides.len()];
                ids.filter_map(|id| usize::try_from(id).ok())
                    .filter(|&id| id < seen.len() && !std::mem::replace(&mut seen[id], true))
                    .map(|id| sides[id].events())
                    .sum()
            }
            DeviceSides::Sparse(sides) => {
                let joined: HashSet<i64> = ids.filter(|id| sides.contains_key(id)).collect();
                joined.iter().map(|id| sides[id].events()).sum()
            }
        };
        all - joined
    }
}

impl DeviceSide<'_> {
    fn events(&self) -> usize {
        self.tasks.len() + usize::from(self.sync.is_some()) + usize::from(self.record.is_some())
    }

    fn is_empty(&self) -> bool {
        self.events() == 0
    }
}

impl Item<'_> {
    /// The correlation of a device event.
    fn correlation(&self) -> Option<i64> {
        match self {
            Item::Task(id, _) | Item::Sync(id, _) | Item::Record(id, _) => Some(*id),
            _ => None,
        }
    }
}

/// How handles are named: with the device only when the trace has several.
struct Names {
    several_devices: bool,
    /// A record call's event and stream, learned from the waits that name it.
    records_by_waits: HashMap<i64, (i64, i64, i64)>,
}

impl Names {
    fn new(device: &DeviceSides) -> Self {
        let mut devices = BTreeSet::new();
        let mut records_by_waits = HashMap::default();
        for side in device.values() {
            devices.extend(side.tasks.iter().map(|task| task.1));
            if let Some(sync) = &side.sync {
                devices.insert(sync.device);
                if let (Some(event), Some(stream), Some(record)) =
                    (sync.event, sync.record_stream, sync.record_correlation)
                {
                    records_by_waits.insert(record, (event, stream, sync.device));
                }
            }
        }
        Names {
            several_devices: devices.len() > 1,
            records_by_waits,
        }
    }

    fn stream(&self, device: i64, stream: i64) -> String {
        match self.several_devices {
            true => format!("cuda{device}_stream{stream}"),
            false => format!("stream{stream}"),
        }
    }

    fn event(&self, device: i64, event: i64) -> String {
        match self.several_devices {
            true => format!("cuda{device}_event{event}"),
            false => format!("event{event}"),
        }
    }
}

/// Write one host call as the trace line(s) a capture would have shown.
fn lower(
    call: &HostCall,
    footprint: Option<&Footprint>,
    lowering: &Lowering,
    trace: &mut CallTrace,
    left_out: &mut LeftOut,
) {
    let (device, names) = (lowering.device, lowering.names);
    let origin = Span::new(lowering.file, call.range.clone());
    let ts = micros_to_nanos(call.ts);
    let side = call.correlation.and_then(|correlation| device.get(correlation));
    let mut emit = |api: &str, args: &[(&str, Arg)]| trace.call(origin.clone(), 0, call.thread, ts, api, args);
    let name: &str = &call.name;
    if let Some(side) = side.filter(|side| !side.tasks.is_empty()) {
        // A launch, copy or set (or a graph launch: each kernel it ran): a task on its
        // stream. Its memory is its operator's tensors where the execution trace gives
        // them, else unknown (the profile has no pointers).
        let mut tasks: Vec<&Task> = side.tasks.iter().collect();
        tasks.sort_by(|a, b| a.3.total_cmp(&b.3));
        let memory = footprint.map(|footprint| {
            [
                ("reads", Arg::Accesses(&footprint.reads)),
                ("writes", Arg::Accesses(&footprint.writes)),
            ]
        });
        let memory: &[(&str, Arg)] = memory.as_ref().map_or(&[], |memory| memory.as_slice());
        for (stream, device_id, task, _) in tasks {
            let stream = names.stream(*device_id, *stream);
            // Named with its operator, which the user's code called.
            let task: Cow<str> = match footprint {
                Some(footprint) => Cow::Owned(format!("{task} ({})", footprint.operator)),
                None => Cow::Borrowed(task),
            };
            let task = &*task;
            let mut emit = |api: &str, args: &[(&str, Arg)]| match memory {
                [] => emit(api, args),
                _ => emit(api, &[args, memory].concat()),
            };
            if is_copy_or_set(name, task) {
                let label = format!("{name}: {task}");
                emit("kernel", &[("stream", Arg::Str(&stream)), ("name", Arg::Str(&label))]);
            } else {
                let args = [
                    ("func", Arg::Str(task)),
                    ("gridDim", Arg::Null),
                    ("blockDim", Arg::Null),
                    ("args", Arg::Null),
                    ("stream", Arg::Str(&stream)),
                ];
                emit("cudaLaunchKernel", &args);
            }
        }
        return;
    }
    match name {
        "cudaEventRecord" | "cudaEventRecordWithFlags" | "cuEventRecord" | "cuEventRecordWithFlags" => {
            let record = side.and_then(|side| side.record).or_else(|| {
                call.correlation
                    .and_then(|correlation| names.records_by_waits.get(&correlation).copied())
            });
            match record {
                Some((event, stream, device_id)) => {
                    let (event, stream) = (names.event(device_id, event), names.stream(device_id, stream));
                    emit(
                        "cudaEventRecord",
                        &[("event", Arg::Str(&event)), ("stream", Arg::Str(&stream))],
                    );
                }
                None => left_out.records_without_stream += 1,
            }
        }
        "cudaStreamWaitEvent" | "cuStreamWaitEvent" => match side.and_then(|side| side.sync.as_ref()) {
            Some(sync) if sync.event.is_some() && sync.stream >= 0 => {
                let event = names.event(sync.device, sync.event.unwrap_or_default());
                let stream = names.stream(sync.device, sync.stream);
                emit(
                    "cudaStreamWaitEvent",
                    &[("stream", Arg::Str(&stream)), ("event", Arg::Str(&event))],
                );
            }
            _ => left_out.waits_without_sync += 1,
        },
        "cudaEventSynchronize" | "cuEventSynchronize" => match side.and_then(|side| side.sync.as_ref()) {
            Some(Sync {
                event: Some(event),
                device: device_id,
                ..
            }) => {
                let event = names.event(*device_id, *event);
                emit("cudaEventSynchronize", &[("event", Arg::Str(&event))]);
            }
            _ => left_out.syncs_without_sync += 1,
        },
        "cudaStreamSynchronize" | "cuStreamSynchronize" => match side.and_then(|side| side.sync.as_ref()) {
            Some(sync) if sync.stream >= 0 && sync.kind.contains("Stream") => {
                let stream = names.stream(sync.device, sync.stream);
                emit("cudaStreamSynchronize", &[("stream", Arg::Str(&stream))]);
            }
            _ => left_out.syncs_without_sync += 1,
        },
        "cudaDeviceSynchronize" | "cuCtxSynchronize" => emit("cudaDeviceSynchronize", &[]),
        // Whether a query saw the work done is its return value, which the trace omits.
        "cudaEventQuery" | "cudaStreamQuery" | "cuEventQuery" | "cuStreamQuery" => left_out.queries += 1,
        // A launch, copy or set whose device task the trace lacks: which stream it used
        // is unknown.
        _ if makes_device_task(name) => left_out.launches_without_task += 1,
        // A call with a sync or record of its own that is not lowered: said by name.
        _ if side.is_some_and(|side| side.sync.is_some() || side.record.is_some()) => {
            *left_out.unknown_with_device.entry(name.to_string()).or_default() += 1;
        }
        _ => {}
    }
}

/// Whether a runtime or driver call named `name` puts a kernel, copy or set on a stream.
fn makes_device_task(name: &str) -> bool {
    name.contains("Launch") || name.contains("Memcpy") || name.contains("Memset")
}

/// Whether a device task is a copy or a set rather than a kernel.
fn is_copy_or_set(host_name: &str, task: &str) -> bool {
    host_name.contains("Memcpy")
        || host_name.contains("Memset")
        || task.starts_with("Memcpy")
        || task.starts_with("Memset")
}

fn micros_to_nanos(micros: f64) -> Option<u64> {
    (micros.is_finite() && micros >= 0.0).then(|| (micros * 1000.0).round() as u64)
}

/// `distributedInfo.rank`, for messages.
fn rank_of(text: &[u8], members: &[(String, Range<usize>)]) -> Option<i64> {
    let (_, range) = members.iter().find(|(key, _)| key == "distributedInfo")?;
    let info: serde_json::Value = serde_json::from_slice(&text[range.clone()]).ok()?;
    info.get("rank")?.as_i64()
}

/// The file stops before its end: where, and how much was read.
pub fn stopped_early(file: FileId, stopped: &scan::Stopped, events: usize) -> Diagnostic {
    let end = stopped.at;
    Diagnostic::new(
        &TraceFormatError::INFO,
        Span::new(file, end..end),
        format!(
            "the profile stops being readable at byte {end}: {}; the {events} complete event{} before it {} checked",
            stopped.why,
            if events == 1 { "" } else { "s" },
            if events == 1 { "is" } else { "are" },
        ),
    )
    .with_severity(Severity::Warning)
    .with_label("reading stopped here")
    .with_help("a profile written while the job was killed is cut short: what follows this byte is not checked")
}

/// One note for what the trace could not carry; `None` when nothing was left out.
fn left_out_note(
    file: FileId,
    left: &LeftOut,
    has_sync_events: bool,
    rank: Option<i64>,
    calls: usize,
    joined: Option<&JoinSummary>,
) -> Option<Diagnostic> {
    let mut lines = Vec::new();
    if left.records_without_stream > 0 {
        lines.push(format!(
            "{} `cudaEventRecord` call(s) name neither a `cuda_event` record nor a wait that binds to them: their event and stream are unknown",
            left.records_without_stream
        ));
    }
    if left.waits_without_sync > 0 {
        lines.push(format!(
            "{} `cudaStreamWaitEvent` call(s) have no `cuda_sync` event (Kineto drops waits on streams with no GPU work in the window)",
            left.waits_without_sync
        ));
    }
    if left.syncs_without_sync > 0 {
        lines.push(format!(
            "{} stream or event synchronize call(s) have no `cuda_sync` event naming what they waited for",
            left.syncs_without_sync
        ));
    }
    if left.queries > 0 {
        lines.push(format!(
            "{} query call(s): the trace omits their return value, so whether they saw the work done is unknown",
            left.queries
        ));
    }
    if left.launches_without_task > 0 {
        lines.push(format!(
            "{} launch, copy or set call(s) have no `kernel`, `gpu_memcpy` or `gpu_memset` event with their correlation: which stream each used is unknown",
            left.launches_without_task
        ));
    }
    if !left.unknown_with_device.is_empty() {
        let total: usize = left.unknown_with_device.values().sum();
        let named: Vec<String> = left
            .unknown_with_device
            .iter()
            .take(4)
            .map(|(name, count)| format!("`{name}` ×{count}"))
            .collect();
        let more = if left.unknown_with_device.len() > 4 {
            ", ..."
        } else {
            ""
        };
        lines.push(format!(
            "{total} call(s) with a `cuda_sync` or `cuda_event` event are of a kind this reader does not lower ({}{more})",
            named.join(", ")
        ));
    }
    for ((cat, why), count) in &left.unusable_device {
        lines.push(format!("{count} `{cat}` event(s) {why}"));
    }
    if left.unjoined_device > 0 {
        lines.push(format!(
            "{} device event(s) have a correlation no runtime or driver call of the trace has (made before the profiling window, or lost): nothing joins them to a call",
            left.unjoined_device
        ));
    }
    if left.unparsable > 0 {
        lines.push(format!("{} event(s) are not readable JSON objects", left.unparsable));
    }
    if calls == 0 {
        lines.push("the trace shows no CUDA runtime or driver call with its device side: nothing of CUDA to check (a CPU-only profile?)".to_string());
    }
    if lines.is_empty() && has_sync_events && joined.is_none() {
        return None;
    }
    let span = match &left.first_unparsable {
        Some((range, _)) => Span::new(file, range.clone()),
        None => Span::new(file, 0..0),
    };
    let who = rank.map(|rank| format!(" (rank {rank})")).unwrap_or_default();
    let mut diagnostic = Diagnostic::new(
        &TraceFormatError::INFO,
        span,
        format!("this Kineto trace{who} was read as {calls} CUDA calls; what it does not show is listed here"),
    )
    .with_severity(Severity::Info)
    .with_label("the profile");
    for line in lines {
        diagnostic = diagnostic.with_note(line);
    }
    if let Some((_, err)) = &left.first_unparsable {
        diagnostic = diagnostic.with_note(format!("the first unreadable event: {err}"));
    }
    if !has_sync_events {
        diagnostic = diagnostic.with_note(
            "the trace has no `cuda_sync` events: record it with `torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)` to have event waits and synchronizes checked",
        );
    }
    Some(diagnostic.with_note(memory_note(joined)))
}

/// What the check knows of the memory kernels and copies touch.
fn memory_note(joined: Option<&JoinSummary>) -> String {
    let Some(joined) = joined else {
        return "a Kineto trace carries no pointers: which memory kernels and copies touch is unknown, so data races are not checked; the PyTorch execution trace of the same run, beside the profile, gives each launch its operator's tensors (docs/PROFILES.md)".to_string();
    };
    if joined.withheld > 0 {
        return format!(
            "the execution trace's tensors are not used: {} wait, synchronize, record or query call(s) above could not be lowered, and accesses they order would read as races (docs/PROFILES.md)",
            joined.withheld
        );
    }
    let mut note = format!(
        "with the execution trace, {} of {} launch, copy or set call(s) have their operator's device tensors as their memory; races between those are checked, the rest declare none",
        joined.joined, joined.launches
    );
    if joined.nodes_without_rf_id > 0 {
        let _ = std::fmt::Write::write_fmt(
            &mut note,
            format_args!(
                " ({} execution-trace node(s) have no `rf_id` and cannot be joined)",
                joined.nodes_without_rf_id
            ),
        );
    }
    note
}
