//! torch_npu / msprof timelines (`ASCEND_PROFILER_OUTPUT/trace_view.json`, one per
//! rank) as the notify calls of one multi-rank trace.
//!
//! HCCL's device tasks `Notify Record` and `Notify Wait` carry the notify's id and the
//! two ranks of the link (`src rank`, `dst rank`): a record on rank R toward P sets a
//! notify of P, which P's wait with the same id consumes. Each notify becomes one object
//! of its owner (the waiting rank), shared with the recording rank as `syncguard trace`
//! shows an IPC notify (`aclrtNotifyGetExportKey` / `aclrtNotifyImportByKey`), so the
//! notify rules (SG3xx) and the deadlock rules compare the ranks. The notifies existed
//! before the profile (HCCL makes them when the communicator starts), so each may hold
//! one record from before the window, as the trace reader allows for objects from before.
//! `EVENT_RECORD` / `EVENT_WAIT` tasks carry no event id: they are counted, never paired.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use rayon::prelude::*;
use syncguard_model::diagnostic::{Diagnostic, Severity};
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::{FileId, Span};

use crate::calls::{Arg, CallTrace};
use crate::event::{self, Event};
use crate::kineto::stopped_early;
use crate::scan;

/// One rank's timeline, to be checked with the others of its cluster.
pub struct RankTimeline<'a> {
    pub file: FileId,
    pub text: &'a [u8],
    /// The rank, when the profile folder says it (`profiler_info_N.json`).
    pub rank: Option<u32>,
}

/// Whether a task records or waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    Record,
    Wait,
}

/// A notify task of one rank.
struct NotifyTask {
    side: Side,
    notify: i64,
    /// The two ranks of the link, as written.
    src: i64,
    dst: i64,
    /// Which queue runs it: the `stream id` argument, else the timeline row.
    queue: String,
    ts: f64,
    range: Range<usize>,
}

/// What one rank's file holds.
#[derive(Default)]
struct RankRead {
    notifies: Vec<NotifyTask>,
    event_tasks: usize,
    first_event_task: Option<Range<usize>>,
    unparsable: usize,
}

/// A notify: owned by the waiting rank, set by the recording rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct NotifyKey {
    owner: u32,
    recorder: u32,
    id: i64,
}

/// Read the timelines of one cluster (one per rank) as one trace, with what reading found.
pub fn read(timelines: &[RankTimeline], header: Span) -> (CallTrace, Vec<Diagnostic>) {
    let mut reading = Vec::new();
    let mut ranks: BTreeMap<u32, (FileId, RankRead)> = BTreeMap::new();
    let lone = timelines.len() == 1;
    for timeline in timelines {
        let read = read_rank(timeline, &mut reading);
        let rank = match (timeline.rank, lone) {
            (Some(rank), _) => rank,
            (None, true) => 0,
            (None, false) => {
                reading.push(
                    Diagnostic::new(
                        &TraceFormatError::INFO,
                        Span::new(timeline.file, 0..0),
                        "the rank of this timeline is unknown (its `*_ascend_pt` folder has no `profiler_info_N.json`): it is left out of the cluster",
                    )
                    .with_label("which rank wrote this?"),
                );
                continue;
            }
        };
        if ranks.insert(rank, (timeline.file, read)).is_some() {
            reading.push(
                Diagnostic::new(
                    &TraceFormatError::INFO,
                    Span::new(timeline.file, 0..0),
                    format!("a second timeline of rank {rank} in one cluster: only one is checked"),
                )
                .with_label("the same rank again"),
            );
        }
    }
    let known_rank = timelines.len() > 1 || timelines.iter().any(|t| t.rank.is_some());
    let world = ranks.keys().next_back().map_or(1, |last| last + 1);
    let mut trace = CallTrace::new(world, header);
    lower_cluster(&ranks, known_rank, &mut trace, &mut reading);
    (trace, reading)
}

/// Parse one rank's events and keep its notify and event tasks.
fn read_rank(timeline: &RankTimeline, reading: &mut Vec<Diagnostic>) -> RankRead {
    let scan = scan::event_array(timeline.text);
    if let Some(stopped) = &scan.stopped {
        reading.push(stopped_early(timeline.file, stopped, scan.events.len()));
    }
    let parsed: Vec<Result<Event, serde_json::Error>> = scan
        .events
        .par_iter()
        .map(|range| event::parse(&timeline.text[range.clone()]))
        .collect();
    let mut read = RankRead::default();
    for (range, parsed) in scan.events.iter().zip(parsed) {
        match parsed {
            Ok(event) => keep(event, range, &mut read),
            Err(_) => read.unparsable += 1,
        }
    }
    if read.event_tasks > 0 {
        let span = Span::new(timeline.file, read.first_event_task.clone().unwrap_or(0..0));
        reading.push(
            Diagnostic::new(
                &TraceFormatError::INFO,
                span,
                format!(
                    "{} EVENT_RECORD / EVENT_WAIT task(s) are not checked: the timeline does not say which event each records or waits on, and pairing them by time would be a guess",
                    read.event_tasks
                ),
            )
            .with_severity(Severity::Info)
            .with_label("the first of them"),
        );
    }
    if read.unparsable > 0 {
        reading.push(
            Diagnostic::new(
                &TraceFormatError::INFO,
                Span::new(timeline.file, 0..0),
                format!(
                    "{} event(s) of this timeline are not readable JSON objects and are skipped",
                    read.unparsable
                ),
            )
            .with_severity(Severity::Warning),
        );
    }
    read
}

/// Keep a notify task or count an event task.
fn keep(event: Event, range: &Range<usize>, read: &mut RankRead) {
    let Some(args) = &event.args else { return };
    let name = event.name.as_deref().unwrap_or("");
    let task_type = args
        .get("Task Type")
        .or_else(|| args.get("task type"))
        .map(|kind| kind.text())
        .unwrap_or_default();
    if matches!(task_type.as_str(), "EVENT_RECORD" | "EVENT_WAIT") {
        read.event_tasks += 1;
        read.first_event_task.get_or_insert(range.clone());
        return;
    }
    let side = match normalized(name).as_str() {
        "notifyrecord" => Side::Record,
        "notifywait" => Side::Wait,
        _ => return,
    };
    let notify = args.int("notify_id").or_else(|| args.int("notify id"));
    let (Some(notify), Some(src), Some(dst)) = (notify, args.int("src rank"), args.int("dst rank")) else {
        return;
    };
    let queue = match args.int("stream id").or_else(|| args.int("Stream Id")) {
        Some(stream) => format!("stream{stream}"),
        None => {
            let row = |value: &Option<event::Scalar>| value.as_ref().map(|v| v.text()).unwrap_or_default();
            format!("row_{}_{}", row(&event.pid), row(&event.tid))
        }
    };
    read.notifies.push(NotifyTask {
        side,
        notify,
        src,
        dst,
        queue,
        ts: event.ts.as_ref().and_then(|ts| ts.as_micros()).unwrap_or(0.0),
        range: range.clone(),
    });
}

/// `Notify_Wait`, `Notify Wait`, `notify wait` alike.
fn normalized(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// A task's notify, from the rank that ran it; `None` when neither rank of its link is
/// this rank.
fn key_of(task: &NotifyTask, rank: u32) -> Option<NotifyKey> {
    let this = i64::from(rank);
    let peer = if task.src == this {
        task.dst
    } else if task.dst == this {
        task.src
    } else {
        return None;
    };
    let peer = u32::try_from(peer).ok()?;
    Some(match task.side {
        Side::Record => NotifyKey {
            owner: peer,
            recorder: rank,
            id: task.notify,
        },
        Side::Wait => NotifyKey {
            owner: rank,
            recorder: peer,
            id: task.notify,
        },
    })
}

/// Write the cluster's notify tasks: each shared notify exported by its owner and
/// imported by its recorder first, then every rank's tasks in device-time order.
fn lower_cluster(
    ranks: &BTreeMap<u32, (FileId, RankRead)>,
    known_rank: bool,
    trace: &mut CallTrace,
    reading: &mut Vec<Diagnostic>,
) {
    // Every task with its key, by rank.
    let mut keyed: Vec<(u32, FileId, &NotifyTask, NotifyKey)> = Vec::new();
    let mut foreign = 0;
    let mut peer_missing: BTreeMap<u32, Span> = BTreeMap::new();
    for (&rank, (file, read)) in ranks {
        for task in &read.notifies {
            let Some(key) = key_of(task, rank) else {
                foreign += 1;
                continue;
            };
            let peer = if key.owner == rank { key.recorder } else { key.owner };
            if !ranks.contains_key(&peer) || (!known_rank && peer != rank) {
                peer_missing
                    .entry(peer)
                    .or_insert_with(|| Span::new(*file, task.range.clone()));
                continue;
            }
            keyed.push((rank, *file, task, key));
        }
    }
    let incomparable = incomparable_links(&keyed);
    keyed.retain(|(_, _, _, key)| !incomparable.contains_key(&(key.recorder, key.owner)));
    report_left_out(reading, foreign, &peer_missing, &incomparable, known_rank, ranks);
    share_notifies(&keyed, trace);
    keyed.sort_by(|a, b| {
        (a.0, a.2.ts)
            .partial_cmp(&(b.0, b.2.ts))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (rank, file, task, key) in keyed {
        let origin = Span::new(file, task.range.clone());
        let ts = (task.ts.is_finite() && task.ts >= 0.0).then(|| (task.ts * 1000.0).round() as u64);
        let handle = handle(key, rank);
        let queue = task.queue.as_str();
        match task.side {
            Side::Record => trace.call(
                origin,
                rank,
                0,
                ts,
                "aclrtRecordNotify",
                &[("notify", Arg::Str(&handle)), ("stream", Arg::Str(queue))],
            ),
            Side::Wait => trace.call(
                origin,
                rank,
                0,
                ts,
                "aclrtWaitAndResetNotify",
                &[
                    ("notify", Arg::Str(&handle)),
                    ("stream", Arg::Str(queue)),
                    ("timeout", Arg::Int(0)),
                ],
            ),
        }
    }
}

/// The handle of `key` on `rank`: the owner's own notify, or the recorder's import.
fn handle(key: NotifyKey, rank: u32) -> String {
    match rank == key.owner {
        true => format!("notify{}_from_rank{}", key.id, key.recorder),
        false => format!("notify{}_of_rank{}", key.id, key.owner),
    }
}

/// Links (recorder, owner) with records and waits but no notify id in common: the two
/// sides name their notifies differently (a CANN version that reports local ids), so
/// matching them by id would report every wait as unmatched. Each with its first task.
fn incomparable_links(keyed: &[(u32, FileId, &NotifyTask, NotifyKey)]) -> BTreeMap<(u32, u32), Span> {
    let mut sides: BTreeMap<(u32, u32), LinkIds> = BTreeMap::new();
    for (_, file, task, key) in keyed {
        if key.owner == key.recorder {
            continue;
        }
        let entry = sides
            .entry((key.recorder, key.owner))
            .or_insert_with(|| (BTreeSet::new(), BTreeSet::new(), Span::new(*file, task.range.clone())));
        match task.side {
            Side::Record => entry.0.insert(key.id),
            Side::Wait => entry.1.insert(key.id),
        };
    }
    sides
        .into_iter()
        .filter(|(_, (records, waits, _))| !records.is_empty() && !waits.is_empty() && records.is_disjoint(waits))
        .map(|(link, (_, _, span))| (link, span))
        .collect()
}

/// The ids one link's records and waits name, and its first task.
type LinkIds = (BTreeSet<i64>, BTreeSet<i64>, Span);

/// Export each cross-rank notify from its owner and import it on its recorder, at the
/// first task that uses it.
fn share_notifies(keyed: &[(u32, FileId, &NotifyTask, NotifyKey)], trace: &mut CallTrace) {
    let mut first_use: HashMap<NotifyKey, Span> = HashMap::new();
    for (_, file, task, key) in keyed {
        first_use
            .entry(*key)
            .or_insert_with(|| Span::new(*file, task.range.clone()));
    }
    let mut shared: Vec<(&NotifyKey, &Span)> = first_use.iter().filter(|(key, _)| key.owner != key.recorder).collect();
    shared.sort_by_key(|(key, _)| **key);
    for (key, origin) in &shared {
        let name = export_key(**key);
        let notify = handle(**key, key.owner);
        trace.call(
            (*origin).clone(),
            key.owner,
            0,
            None,
            "aclrtNotifyGetExportKey",
            &[("notify", Arg::Str(&notify)), ("key", Arg::Str(&name))],
        );
    }
    for (key, origin) in &shared {
        let name = export_key(**key);
        let notify = handle(**key, key.recorder);
        trace.call(
            (*origin).clone(),
            key.recorder,
            0,
            None,
            "aclrtNotifyImportByKey",
            &[("key", Arg::Str(&name)), ("notify", Arg::Str(&notify))],
        );
    }
}

fn export_key(key: NotifyKey) -> String {
    format!("hccl-notify-{}-rank{}-from-rank{}", key.id, key.owner, key.recorder)
}

/// One finding per kind of task left out.
fn report_left_out(
    reading: &mut Vec<Diagnostic>,
    foreign: usize,
    peer_missing: &BTreeMap<u32, Span>,
    incomparable: &BTreeMap<(u32, u32), Span>,
    known_rank: bool,
    ranks: &BTreeMap<u32, (FileId, RankRead)>,
) {
    let first_file = ranks.values().next().map(|(file, _)| *file);
    if foreign > 0
        && let Some(file) = first_file
    {
        reading.push(
            Diagnostic::new(
                &TraceFormatError::INFO,
                Span::new(file, 0..0),
                format!("{foreign} notify task(s) name a link that does not include the rank of their timeline: they are left out"),
            )
            .with_severity(Severity::Warning),
        );
    }
    for (peer, span) in peer_missing {
        let message = if known_rank {
            format!("rank {peer} has no timeline in this cluster: the notify tasks toward it are not checked")
        } else {
            "the rank of this timeline is unknown (no `profiler_info_N.json` beside it), so its cross-rank notify tasks cannot be matched: they are not checked".to_string()
        };
        reading.push(
            Diagnostic::new(&TraceFormatError::INFO, span.clone(), message)
                .with_severity(Severity::Info)
                .with_label("the first of them")
                .with_help("check the whole cluster folder (one `*_ascend_pt` folder per rank) at once"),
        );
    }
    for ((recorder, owner), span) in incomparable {
        reading.push(
            Diagnostic::new(
                &TraceFormatError::INFO,
                span.clone(),
                format!(
                    "rank {recorder} records notifies of rank {owner} and rank {owner} waits on notifies from rank {recorder}, but no notify id appears on both sides: the two timelines name notifies differently, so this link is not checked"
                ),
            )
            .with_severity(Severity::Warning)
            .with_label("the first task of the link"),
        );
    }
}
