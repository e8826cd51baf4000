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
//! The same tasks read from the `.db` export ([`crate::msprof_db`]) are lowered by
//! `lower_ranks` too, so both exports give the same findings.

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
pub(crate) enum Side {
    Record,
    Wait,
}

/// A notify task of one rank, from whichever export it was read (`trace_view.json`
/// here, the `.db` export in [`crate::msprof_db`]).
pub(crate) struct NotifyTask {
    pub(crate) side: Side,
    pub(crate) notify: i64,
    /// The two ranks of the link, as written.
    pub(crate) src: i64,
    pub(crate) dst: i64,
    /// Which queue runs it: `stream<N>` from its stream id, else the timeline row.
    pub(crate) queue: String,
    /// Device start time in nanoseconds; `None` when it is not a finite number.
    pub(crate) start_ns: Option<i64>,
    /// Where the task is in its rank's source text.
    pub(crate) range: Range<usize>,
}

/// What one rank's file holds.
#[derive(Default)]
pub(crate) struct RankRead {
    pub(crate) notifies: Vec<NotifyTask>,
    pub(crate) event_tasks: usize,
    pub(crate) first_event_task: Option<Range<usize>>,
    /// Notify tasks that lack their notify id or a rank of their link: counted, never
    /// lowered, with the first of them.
    pub(crate) unlinked: usize,
    pub(crate) first_unlinked: Option<Range<usize>>,
    unparsable: usize,
}

impl RankRead {
    /// Count a notify task left out for want of its notify id or a rank; `first` gives
    /// where it is, asked only for the first of them.
    pub(crate) fn left_out_unlinked(&mut self, first: impl FnOnce() -> Range<usize>) {
        self.unlinked += 1;
        if self.first_unlinked.is_none() {
            self.first_unlinked = Some(first());
        }
    }

    /// What this rank's export holds that is read and not checked, placed in `file`:
    /// its event tasks and its notify tasks without a link (`fields` names the notify id
    /// and rank fields as that export spells them). Both readers say these alike.
    pub(crate) fn left_out_notes(&self, file: FileId, fields: &str) -> Vec<Diagnostic> {
        let mut notes = Vec::new();
        if self.unlinked > 0 {
            notes.push(
                Diagnostic::new(
                    &TraceFormatError::INFO,
                    Span::new(file, self.first_unlinked.clone().unwrap_or(0..0)),
                    format!(
                        "{} notify task(s) lack a {fields}: which notify and which ranks they link is unknown, so they are not checked",
                        self.unlinked
                    ),
                )
                .with_severity(Severity::Warning)
                .with_label("the first of them"),
            );
        }
        if self.event_tasks > 0 {
            notes.push(event_tasks_note(file, self.event_tasks, self.first_event_task.clone()));
        }
        notes
    }
}

/// The notify id and rank fields of a `trace_view.json` task, for messages.
const JSON_LINK_FIELDS: &str = "`notify_id`, `src rank` or `dst rank`";

/// One rank's notify tasks, read from either export, before the cluster is lowered.
pub(crate) struct RankTasks {
    pub(crate) file: FileId,
    /// The rank, when its export or its folder says it.
    pub(crate) rank: Option<u32>,
    pub(crate) read: RankRead,
    /// Where the rank would have been said, for the finding when it is not.
    pub(crate) rank_source: &'static str,
}

/// Where a `trace_view.json` gets its rank.
const JSON_RANK_SOURCE: &str = "its `*_ascend_pt` folder has no `profiler_info_N.json`";

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
    let ranks: Vec<RankTasks> = timelines
        .iter()
        .map(|timeline| read_timeline(timeline, &mut reading))
        .collect();
    let trace = lower_ranks(ranks, header, &mut reading);
    (trace, reading)
}

/// One rank's `trace_view.json`, read; what reading found is added to `reading`.
pub(crate) fn read_timeline(timeline: &RankTimeline, reading: &mut Vec<Diagnostic>) -> RankTasks {
    RankTasks {
        file: timeline.file,
        rank: timeline.rank,
        read: read_rank(timeline, reading),
        rank_source: JSON_RANK_SOURCE,
    }
}

/// Lower the notify tasks of one cluster's ranks (each read from its `trace_view.json`
/// or its `.db` export) as one trace; what cannot be checked is added to `reading`.
pub(crate) fn lower_ranks(inputs: Vec<RankTasks>, header: Span, reading: &mut Vec<Diagnostic>) -> CallTrace {
    let mut ranks: BTreeMap<u32, (FileId, RankRead)> = BTreeMap::new();
    let lone = inputs.len() == 1;
    let known_rank = inputs.len() > 1 || inputs.iter().any(|input| input.rank.is_some());
    for input in inputs {
        let rank = match (input.rank, lone) {
            (Some(rank), _) => rank,
            (None, true) => 0,
            (None, false) => {
                reading.push(
                    Diagnostic::new(
                        &TraceFormatError::INFO,
                        Span::new(input.file, 0..0),
                        format!(
                            "the rank of this timeline is unknown ({}): it is left out of the cluster",
                            input.rank_source
                        ),
                    )
                    .with_label("which rank wrote this?"),
                );
                continue;
            }
        };
        if ranks.insert(rank, (input.file, input.read)).is_some() {
            reading.push(
                Diagnostic::new(
                    &TraceFormatError::INFO,
                    Span::new(input.file, 0..0),
                    format!("a second timeline of rank {rank} in one cluster: only one is checked"),
                )
                .with_label("the same rank again"),
            );
        }
    }
    let world = ranks.keys().next_back().map_or(1, |last| last + 1);
    let mut trace = CallTrace::new(world, header);
    lower_cluster(&ranks, known_rank, &mut trace, reading);
    trace
}

/// The note for EVENT_RECORD / EVENT_WAIT tasks, which no export pairs.
pub(crate) fn event_tasks_note(file: FileId, count: usize, first: Option<Range<usize>>) -> Diagnostic {
    Diagnostic::new(
        &TraceFormatError::INFO,
        Span::new(file, first.unwrap_or(0..0)),
        format!(
            "{count} EVENT_RECORD / EVENT_WAIT task(s) are not checked: the timeline does not say which event each records or waits on, and pairing them by time would be a guess"
        ),
    )
    .with_severity(Severity::Info)
    .with_label("the first of them")
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
    reading.extend(read.left_out_notes(timeline.file, JSON_LINK_FIELDS));
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

/// Keep a notify task, or count an event task or a notify task without its link.
fn keep(event: Event, range: &Range<usize>, read: &mut RankRead) {
    let name = event.name.as_deref().unwrap_or("");
    let task_type = event
        .args
        .as_ref()
        .and_then(|args| args.get("Task Type").or_else(|| args.get("task type")))
        .map(|kind| kind.text())
        .unwrap_or_default();
    if matches!(task_type.as_str(), "EVENT_RECORD" | "EVENT_WAIT") {
        read.event_tasks += 1;
        read.first_event_task.get_or_insert(range.clone());
        return;
    }
    let Some(side) = notify_side(name) else {
        return;
    };
    let link = event.args.as_ref().and_then(|args| {
        let notify = args.int("notify_id").or_else(|| args.int("notify id"))?;
        Some((args, notify, args.int("src rank")?, args.int("dst rank")?))
    });
    let Some((args, notify, src, dst)) = link else {
        return read.left_out_unlinked(|| range.clone());
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
        start_ns: micros_to_ns(event.ts.as_ref().and_then(|ts| ts.as_micros()).unwrap_or(0.0)),
        range: range.clone(),
    });
}

/// A timeline's microseconds as whole nanoseconds; `None` when not finite.
fn micros_to_ns(micros: f64) -> Option<i64> {
    micros.is_finite().then(|| (micros * 1000.0).round() as i64)
}

/// Which side a task named `name` is on: `Notify_Record`, `Notify Wait`, `notify wait`
/// alike; `None` for any other task.
pub(crate) fn notify_side(name: &str) -> Option<Side> {
    match normalized(name).as_str() {
        "notifyrecord" => Some(Side::Record),
        "notifywait" => Some(Side::Wait),
        _ => None,
    }
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
    // Stable: tasks at one time keep the order their export lists them in.
    keyed.sort_by_key(|(rank, _, task, _)| (*rank, task.start_ns.unwrap_or(i64::MIN)));
    for (rank, file, task, key) in keyed {
        let origin = Span::new(file, task.range.clone());
        let ts = task.start_ns.and_then(|ns| u64::try_from(ns).ok());
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
