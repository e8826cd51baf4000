//! The msprof / Ascend PyTorch profiler `.db` export (SQLite): `msprof_{timestamp}.db`
//! and `ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db`, one per rank, read as
//! the same notify tasks as `trace_view.json` ([`crate::ascend`]) and lowered by the
//! same code.
//!
//! The tables read (docs/PROFILES.md gives each column and its source):
//! `COMMUNICATION_TASK_INFO` (each HCCL task: its `name` and `taskType` as STRING_IDS
//! ids, `notifyId`, `srcRank`, `dstRank`), joined on `globalTaskId` to `TASK` (its
//! `startNs` and `streamId`); `TASK` rows whose `taskType` names `EVENT_RECORD` /
//! `EVENT_WAIT`, counted and never paired (they carry no event id); `STRING_IDS` for the
//! names; `RANK_DEVICE_MAP` for the rank. The file is opened read only and never written.
//!
//! A database has no text to point a finding at, so the rows read are written as a
//! listing, one line per row, and findings point at those lines. A file SQLite cannot
//! read, a missing table or column, a string id that STRING_IDS lacks, a row of a kind
//! not modeled: each is said in a reading finding (SG002), never a panic, never dropped
//! unsaid.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Read as _;
use std::ops::Range;
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use syncguard_model::diagnostic::{Diagnostic, Severity};
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::{FileId, Span};

use crate::ascend::{self, NotifyTask, RankRead};

/// The first 16 bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Where a `.db` export gets its rank, for the finding when none says it.
pub(crate) const DB_RANK_SOURCE: &str = "its RANK_DEVICE_MAP holds no rank, its name is not `ascend_pytorch_profiler_N.db` and its `*_ascend_pt` folder has no `profiler_info_N.json`";

/// The notify id and rank columns of a communication task, for messages.
const DB_LINK_FIELDS: &str = "`notifyId`, `srcRank` or `dstRank`";

/// The tables and columns the reader needs.
const STRING_IDS: (&str, &[&str]) = ("STRING_IDS", &["id", "value"]);
const TASK: (&str, &[&str]) = ("TASK", &["globalTaskId", "startNs", "streamId", "taskType"]);
const COMMUNICATION_TASK_INFO: (&str, &[&str]) = (
    "COMMUNICATION_TASK_INFO",
    &["globalTaskId", "name", "taskType", "notifyId", "srcRank", "dstRank"],
);

/// Whether `head` starts as an SQLite database does.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(SQLITE_HEADER)
}

/// Whether the file at `path` is an SQLite database, by its first 16 bytes.
pub fn is_sqlite_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok()
        && is_sqlite(&head)
}

/// Whether an SQLite file is an msprof export: named as msprof names them, or holding
/// one of the tables read. Another program's database is not taken for a profile.
pub fn looks_like_export(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    if name.starts_with("msprof_") || name.starts_with("ascend_pytorch_profiler") {
        return true;
    }
    open_read_only(path)
        .and_then(|connection| table_names(&connection))
        .is_ok_and(|tables| {
            [STRING_IDS.0, TASK.0, COMMUNICATION_TASK_INFO.0]
                .iter()
                .any(|table| tables.contains(*table))
        })
}

/// The rank an `ascend_pytorch_profiler_{rank}.db` name gives.
pub fn rank_of_file_name(path: &Path) -> Option<u32> {
    path.file_name()?
        .to_str()?
        .strip_prefix("ascend_pytorch_profiler_")?
        .strip_suffix(".db")?
        .parse()
        .ok()
}

/// A finding about the export, placed once its listing is a source.
struct Note {
    severity: Severity,
    range: Range<usize>,
    message: String,
    label: Option<&'static str>,
}

/// One rank's `.db` export, read.
pub struct DbExport {
    /// The rows read, one line each: the text findings point into.
    pub listing: String,
    /// The rank, from RANK_DEVICE_MAP, else the file name, else the folder.
    pub rank: Option<u32>,
    pub(crate) read: RankRead,
    notes: Vec<Note>,
}

impl DbExport {
    /// The notify tasks read.
    pub fn notify_tasks(&self) -> usize {
        self.read.notifies.len()
    }

    /// What reading found, placed in the listing registered as `file`.
    pub fn findings(&self, file: FileId) -> Vec<Diagnostic> {
        let mut findings: Vec<Diagnostic> = self
            .notes
            .iter()
            .map(|note| {
                let finding = Diagnostic::new(
                    &TraceFormatError::INFO,
                    Span::new(file, note.range.clone()),
                    note.message.clone(),
                )
                .with_severity(note.severity);
                match note.label {
                    Some(label) => finding.with_label(label),
                    None => finding,
                }
            })
            .collect();
        findings.extend(self.read.left_out_notes(file, DB_LINK_FIELDS));
        findings
    }
}

/// The listing being written, and the notes about it.
struct Reader {
    listing: String,
    read: RankRead,
    notes: Vec<Note>,
}

impl Reader {
    /// Append one line; its range, without the newline.
    fn line(&mut self, text: &str) -> Range<usize> {
        push_line(&mut self.listing, text)
    }

    fn note(&mut self, severity: Severity, range: Range<usize>, message: String, label: Option<&'static str>) {
        self.notes.push(Note {
            severity,
            range,
            message,
            label,
        });
    }
}

/// Append one line to `listing`; its range, without the newline.
fn push_line(listing: &mut String, text: &str) -> Range<usize> {
    let start = listing.len();
    listing.push_str(text);
    let end = listing.len();
    listing.push('\n');
    start..end
}

/// Read the export at `path`; `folder_rank` is the rank its `*_ascend_pt` folder names.
/// Never fails: what cannot be read is said in the export's findings.
pub fn read(path: &Path, folder_rank: Option<u32>) -> DbExport {
    let mut reader = Reader {
        listing: String::new(),
        read: RankRead::default(),
        notes: Vec::new(),
    };
    reader.line("-- the rows syncguard read from this SQLite export, one per line (line numbers count these lines, not the file's bytes)");
    let mut rank = None;
    if let Err(err) = read_export(path, &mut reader, &mut rank) {
        let at = reader.listing.len().saturating_sub(1);
        reader.note(
            Severity::Error,
            at..at,
            format!("this .db cannot be read as an SQLite database ({err}): the rows before this line are all that is checked"),
            Some("reading stopped here"),
        );
    }
    DbExport {
        listing: reader.listing,
        rank: rank.or_else(|| rank_of_file_name(path)).or(folder_rank),
        read: reader.read,
        notes: reader.notes,
    }
}

/// Read what the export holds; an SQLite error ends reading.
fn read_export(path: &Path, reader: &mut Reader, rank: &mut Option<u32>) -> rusqlite::Result<()> {
    let connection = open_read_only(path)?;
    let tables = table_names(&connection)?;
    *rank = rank_of_export(&connection, &tables);
    let mut missing = Vec::new();
    for (table, needed) in [STRING_IDS, TASK] {
        missing.extend(missing_columns(&connection, &tables, table, needed)?);
    }
    if !missing.is_empty() {
        reader.note(
            Severity::Error,
            0..0,
            format!(
                "this .db lacks {}: it is not an msprof export, or one made without task data (`--task-time`), so none of it is checked",
                missing.join(", ")
            ),
            Some("what the export lacks"),
        );
        return Ok(());
    }
    let strings = string_ids(&connection)?;
    let communication = missing_columns(
        &connection,
        &tables,
        COMMUNICATION_TASK_INFO.0,
        COMMUNICATION_TASK_INFO.1,
    )?;
    let mut joined_rows = 0;
    if communication.is_empty() {
        joined_rows = read_communication_tasks(&connection, &strings, reader)?;
    } else {
        say_no_communication_tasks(&tables, &communication, reader);
    }
    read_event_tasks(&connection, reader)?;
    say_other_tasks(&connection, joined_rows, reader)
}

/// Without COMMUNICATION_TASK_INFO no notify task is read: a note when the table is
/// absent (msprof writes it only when HCCL tasks were recorded), a warning when it lacks
/// a column.
fn say_no_communication_tasks(tables: &BTreeSet<String>, missing: &[String], reader: &mut Reader) {
    let (severity, why) = if tables.contains(COMMUNICATION_TASK_INFO.0) {
        (Severity::Warning, "not an export this reader knows")
    } else {
        (
            Severity::Info,
            "it records no HCCL task: none ran, or the profile was taken without them",
        )
    };
    reader.note(
        severity,
        0..0,
        format!(
            "this .db lacks {} ({why}), so no notify task of it is checked",
            missing.join(", ")
        ),
        None,
    );
}

fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
}

fn table_names(connection: &Connection) -> rusqlite::Result<BTreeSet<String>> {
    let mut statement = connection.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")?;
    let names = statement.query_map([], |row| row.get::<_, String>(0))?;
    names.collect()
}

/// `TABLE` or `TABLE.column` for each of `needed` the export lacks.
fn missing_columns(
    connection: &Connection,
    tables: &BTreeSet<String>,
    table: &str,
    needed: &[&str],
) -> rusqlite::Result<Vec<String>> {
    if !tables.contains(table) {
        return Ok(vec![format!("the table {table}")]);
    }
    // `table` is one of this module's constants, never the file's text.
    let mut statement = connection.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let present: BTreeSet<String> = statement
        .query_map([], |row| row.get::<_, String>(1))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(needed
        .iter()
        .filter(|column| !present.contains(**column))
        .map(|column| format!("the column {table}.{column}"))
        .collect())
}

/// The rank RANK_DEVICE_MAP names, when it names exactly one (msprof writes -1 there:
/// no rank).
fn rank_of_export(connection: &Connection, tables: &BTreeSet<String>) -> Option<u32> {
    if !tables.contains("RANK_DEVICE_MAP") {
        return None;
    }
    let mut statement = connection.prepare("SELECT DISTINCT rankId FROM RANK_DEVICE_MAP").ok()?;
    let mut rows = statement.query([]).ok()?;
    let mut ranks = BTreeSet::new();
    while let Ok(Some(row)) = rows.next() {
        if let Some(rank) = row
            .get_ref(0)
            .ok()
            .and_then(integer)
            .and_then(|r| u32::try_from(r).ok())
        {
            ranks.insert(rank);
        }
    }
    match ranks.len() {
        1 => ranks.pop_first(),
        _ => None,
    }
}

/// STRING_IDS as a map; a row whose id is not an integer is skipped (no column refers to it).
fn string_ids(connection: &Connection) -> rusqlite::Result<HashMap<i64, String>> {
    let mut statement = connection.prepare("SELECT id, value FROM STRING_IDS")?;
    let mut rows = statement.query([])?;
    let mut strings = HashMap::new();
    while let Some(row) = rows.next()? {
        if let (Some(id), Some(value)) = (integer(row.get_ref(0)?), text(row.get_ref(1)?)) {
            strings.insert(id, value);
        }
    }
    Ok(strings)
}

/// An integer column: an integer, a whole real, or text holding one.
fn integer(value: ValueRef) -> Option<i64> {
    match value {
        ValueRef::Integer(value) => Some(value),
        ValueRef::Real(value) if value.fract() == 0.0 && value.abs() < 9e15 => Some(value as i64),
        ValueRef::Text(text) => std::str::from_utf8(text).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A text column, or a number written as text.
fn text(value: ValueRef) -> Option<String> {
    match value {
        ValueRef::Text(text) => Some(String::from_utf8_lossy(text).into_owned()),
        ValueRef::Integer(value) => Some(value.to_string()),
        ValueRef::Real(value) => Some(value.to_string()),
        _ => None,
    }
}

/// A STRING_IDS reference resolved: `Err` holds the id STRING_IDS lacks.
fn resolve<'a>(strings: &'a HashMap<i64, String>, value: ValueRef) -> Result<Option<&'a str>, String> {
    match value {
        ValueRef::Null => Ok(None),
        value => match integer(value) {
            Some(id) => strings
                .get(&id)
                .map(|name| Some(name.as_str()))
                .ok_or_else(|| id.to_string()),
            None => Err(text(value).unwrap_or_else(|| "a blob".to_string())),
        },
    }
}

/// Why a communication row is not lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Skipped {
    /// Its `name` or `taskType` id is not in STRING_IDS.
    UnknownString,
    /// No TASK row has its `globalTaskId`: no time, no stream.
    NoTaskRow,
}

/// What the communication rows not lowered were.
#[derive(Default)]
struct CommunicationLeftOut {
    skipped: BTreeMap<Skipped, (usize, Range<usize>)>,
    /// Other HCCL tasks (Memcpy, Reduce_Inline, RDMASend, ...) by name.
    other_kinds: BTreeMap<String, usize>,
}

/// The communication rows joined to their TASK row (the earliest, when several share a
/// `globalTaskId`), in device-time order.
const COMMUNICATION_QUERY: &str = "
SELECT c.globalTaskId, c.name, c.taskType, c.notifyId, c.srcRank, c.dstRank, t.startNs, t.streamId
FROM COMMUNICATION_TASK_INFO AS c
LEFT JOIN (SELECT globalTaskId, MIN(startNs) AS startNs, streamId FROM TASK GROUP BY globalTaskId) AS t
  ON t.globalTaskId = c.globalTaskId
ORDER BY t.startNs IS NULL, t.startNs";

/// Keep the notify tasks of COMMUNICATION_TASK_INFO; returns how many rows had a TASK row.
fn read_communication_tasks(
    connection: &Connection,
    strings: &HashMap<i64, String>,
    reader: &mut Reader,
) -> rusqlite::Result<usize> {
    let mut statement = connection.prepare(COMMUNICATION_QUERY)?;
    let mut rows = statement.query([])?;
    let mut left_out = CommunicationLeftOut::default();
    let mut with_task_row = 0;
    let result = loop {
        let values = match rows.next() {
            Ok(Some(row)) => (0..8)
                .map(|index| row.get_ref(index))
                .collect::<rusqlite::Result<Vec<ValueRef>>>(),
            Ok(None) => break Ok(()),
            Err(err) => Err(err),
        };
        let values = match values {
            Ok(values) => values,
            Err(err) => break Err(err),
        };
        if !matches!(values[6], ValueRef::Null) {
            with_task_row += 1;
        }
        keep_communication_row(&values, strings, reader, &mut left_out);
    };
    say_communication_left_out(&left_out, reader);
    result.map(|()| with_task_row)
}

/// Lower one COMMUNICATION_TASK_INFO row, or count why not.
fn keep_communication_row(
    values: &[ValueRef],
    strings: &HashMap<i64, String>,
    reader: &mut Reader,
    left_out: &mut CommunicationLeftOut,
) {
    let [_, name, task_type, notify, src, dst, start, stream] = values else {
        return;
    };
    let described = describe_row(values, strings);
    let (name, task_type) = match (resolve(strings, *name), resolve(strings, *task_type)) {
        (Ok(name), Ok(task_type)) => (name.unwrap_or(""), task_type.unwrap_or("")),
        _ => return skip(reader, left_out, Skipped::UnknownString, &described),
    };
    let Some(side) = ascend::notify_side(name).or_else(|| ascend::notify_side(task_type)) else {
        let kind = if name.is_empty() { task_type } else { name };
        *left_out.other_kinds.entry(kind.to_string()).or_default() += 1;
        return;
    };
    let (Some(notify), Some(src), Some(dst)) = (integer(*notify), integer(*src), integer(*dst)) else {
        // Counted and said as the JSON timeline's are (`RankRead::left_out_notes`).
        return reader
            .read
            .left_out_unlinked(|| push_line(&mut reader.listing, &described));
    };
    let (Some(start_ns), Some(stream)) = (integer(*start), integer(*stream)) else {
        return skip(reader, left_out, Skipped::NoTaskRow, &described);
    };
    let range = reader.line(&described);
    reader.read.notifies.push(NotifyTask {
        side,
        notify,
        src,
        dst,
        queue: format!("stream{stream}"),
        start_ns: Some(start_ns),
        range,
    });
}

/// Count a row left out; the first of each kind gets a line to point at.
fn skip(reader: &mut Reader, left_out: &mut CommunicationLeftOut, why: Skipped, described: &str) {
    match left_out.skipped.get_mut(&why) {
        Some((count, _)) => *count += 1,
        None => {
            let range = reader.line(described);
            left_out.skipped.insert(why, (1, range));
        }
    }
}

/// One line for a joined communication row: its columns as read, names resolved.
fn describe_row(values: &[ValueRef], strings: &HashMap<i64, String>) -> String {
    let columns = [
        "COMMUNICATION_TASK_INFO globalTaskId",
        "name",
        "taskType",
        "notifyId",
        "srcRank",
        "dstRank",
        "| TASK startNs",
        "streamId",
    ];
    let mut line = String::new();
    for (index, (column, value)) in columns.iter().zip(values).enumerate() {
        if index > 0 {
            line.push(' ');
        }
        let shown = match (index, value) {
            (1 | 2, value) => match resolve(strings, *value) {
                Ok(Some(name)) => format!("{name:?}"),
                Ok(None) => "null".to_string(),
                Err(id) => format!("{id} (not in STRING_IDS)"),
            },
            (_, value) => shown_value(*value),
        };
        let _ = write!(line, "{column}={shown}");
    }
    line
}

fn shown_value(value: ValueRef) -> String {
    match value {
        ValueRef::Null => "null".to_string(),
        ValueRef::Integer(value) => value.to_string(),
        ValueRef::Real(value) => value.to_string(),
        ValueRef::Text(text) => format!("{:?}", String::from_utf8_lossy(text)),
        ValueRef::Blob(blob) => format!("<{} byte blob>", blob.len()),
    }
}

/// One finding per kind of communication row left out.
fn say_communication_left_out(left_out: &CommunicationLeftOut, reader: &mut Reader) {
    for (why, (count, range)) in &left_out.skipped {
        let message = match why {
            Skipped::UnknownString => format!(
                "{count} COMMUNICATION_TASK_INFO row(s) name a `name` or `taskType` id that STRING_IDS does not hold: what task each is is unknown, so they are not checked"
            ),
            Skipped::NoTaskRow => format!(
                "{count} communication task(s) have no TASK row with their `globalTaskId`: their time and stream are unknown, so they are not checked"
            ),
        };
        reader.note(Severity::Warning, range.clone(), message, Some("the first of them"));
    }
    if !left_out.other_kinds.is_empty() {
        let total: usize = left_out.other_kinds.values().sum();
        let mut kinds: Vec<(&String, &usize)> = left_out.other_kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let named: Vec<String> = kinds
            .iter()
            .take(4)
            .map(|(name, count)| format!("{name} ×{count}"))
            .collect();
        let more = if kinds.len() > 4 { ", ..." } else { "" };
        reader.note(
            Severity::Info,
            0..0,
            format!(
                "{total} other HCCL task(s) ({}{more}) are read and not checked: only Notify Record / Notify Wait are lowered (copies carry no memory identity, RDMASend no notify id)",
                named.join(", ")
            ),
            None,
        );
    }
}

/// TASK rows that are event tasks, in device-time order.
const EVENT_TASK_QUERY: &str = "
SELECT t.globalTaskId, t.startNs, t.streamId, s.value
FROM TASK AS t JOIN STRING_IDS AS s ON s.id = t.taskType
WHERE s.value IN ('EVENT_RECORD', 'EVENT_WAIT')
ORDER BY t.startNs";

/// Count the EVENT_RECORD / EVENT_WAIT tasks; the first gets a line.
fn read_event_tasks(connection: &Connection, reader: &mut Reader) -> rusqlite::Result<()> {
    let mut statement = connection.prepare(EVENT_TASK_QUERY)?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        reader.read.event_tasks += 1;
        if reader.read.first_event_task.is_none() {
            let line = format!(
                "TASK globalTaskId={} startNs={} streamId={} taskType={}",
                shown_value(row.get_ref(0)?),
                shown_value(row.get_ref(1)?),
                shown_value(row.get_ref(2)?),
                shown_value(row.get_ref(3)?),
            );
            let range = reader.line(&line);
            reader.read.first_event_task = Some(range);
        }
    }
    Ok(())
}

/// Say how many TASK rows are neither notify nor event tasks, and how many have a
/// `taskType` STRING_IDS lacks or repeat another row's `globalTaskId`.
fn say_other_tasks(connection: &Connection, communication_rows: usize, reader: &mut Reader) -> rusqlite::Result<()> {
    let count = |sql: &str| -> rusqlite::Result<usize> {
        let value: i64 = connection.query_row(sql, [], |row| row.get(0))?;
        Ok(usize::try_from(value).unwrap_or(0))
    };
    let total = count("SELECT COUNT(*) FROM TASK")?;
    let repeated = count("SELECT COUNT(*) - COUNT(DISTINCT globalTaskId) FROM TASK")?;
    let unknown_type =
        count("SELECT COUNT(*) FROM TASK AS t LEFT JOIN STRING_IDS AS s ON s.id = t.taskType WHERE s.id IS NULL")?;
    if repeated > 0 {
        reader.note(
            Severity::Warning,
            0..0,
            format!("{repeated} TASK row(s) repeat the `globalTaskId` of another: a communication task is joined to the earliest of them only"),
            None,
        );
    }
    if unknown_type > 0 {
        reader.note(
            Severity::Warning,
            0..0,
            format!("{unknown_type} TASK row(s) have a `taskType` id that STRING_IDS does not hold: whether they are EVENT_RECORD / EVENT_WAIT tasks is unknown"),
            None,
        );
    }
    let others = total.saturating_sub(communication_rows + reader.read.event_tasks + unknown_type);
    if others > 0 {
        reader.note(
            Severity::Info,
            0..0,
            format!("{others} other device task(s) of TASK (kernels, copies, ...) are read and not checked: the export has no memory identity for them"),
            None,
        );
    }
    Ok(())
}
