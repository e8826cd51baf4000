//! Profiler timelines users already have, read post mortem as call traces and checked
//! with every rule: PyTorch profiler (Kineto) Chrome traces, plain or gzipped
//! ([`kineto`]), and torch_npu / msprof `ASCEND_PROFILER_OUTPUT/trace_view.json`, one
//! per rank of a cluster ([`ascend`]), or the same tasks from their SQLite `.db` export
//! ([`msprof_db`]).
//!
//! A profile is recognized by its content ([`sniff`] on its first bytes, after gunzip),
//! its events are found without parsing the file whole ([`scan`]: each event's byte
//! range, bounded nesting, a file cut short read up to its last complete event) and
//! parsed on their own, in parallel, borrowing from the text. What they show is written
//! as the JSONL call trace `syncguard trace` would have captured ([`calls`]), checked by
//! the trace reader and the analyzer as any trace, and every finding is moved back onto
//! the profile event its call came from. What a profile cannot show is said in a
//! reading finding (SG002), never guessed; docs/PROFILES.md lists each field read, its
//! source, and what each reader cannot know.

pub mod ascend;
pub mod calls;
pub mod event;
pub mod execution_trace;
pub mod graph_tasks;
pub mod kineto;
pub mod msprof_db;
pub mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, SourceFile, Sources};
use syncguard_model::source::{FileId, Span};

use crate::execution_trace::ExecutionTrace;

/// Bytes looked at to recognize a profile.
pub const SNIFF_BYTES: usize = 64 << 10;
/// Profiles larger than this (after gunzip) are not read: the events of one are held
/// in memory while they are lowered.
pub const MAX_PROFILE_BYTES: u64 = 4 << 30;

/// Which timeline a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A PyTorch profiler (Kineto) trace: an object with `traceEvents` whose events
    /// carry Kineto's categories (`cuda_runtime`, `kernel`, `cpu_op`, ...).
    Kineto,
    /// A torch_npu / msprof timeline (`trace_view.json`): events naming Ascend
    /// hardware, HCCL or CANN rows.
    AscendTimeline,
    /// An msprof / Ascend PyTorch profiler export as an SQLite database
    /// (`msprof_{timestamp}.db`, `ascend_pytorch_profiler_{rank}.db`).
    AscendDb,
    /// A PyTorch execution trace (`ExecutionTraceObserver`): no timeline of its own, the
    /// tensors of the operators of a Kineto trace of the same run ([`execution_trace`]).
    ExecutionTrace,
    /// The tasks of a captured graph (`aclmdlRIDebugJsonPrint`, torch_npu's NPUGraph
    /// `graph_N.json`), one device's streams ([`graph_tasks`]).
    GraphTasks,
}

/// The format of a file starting with `head` (already gunzipped), if it is a profile.
pub fn sniff(head: &[u8]) -> Option<Format> {
    if msprof_db::is_sqlite(head) {
        return Some(Format::AscendDb);
    }
    if execution_trace::sniff(head) {
        return Some(Format::ExecutionTrace);
    }
    let start = head.iter().position(|byte| !byte.is_ascii_whitespace())?;
    let text = String::from_utf8_lossy(&head[start..]);
    let ascend = [
        "\"Ascend Hardware\"",
        "\"HCCL\"",
        "\"AscendCL\"",
        "\"CANN\"",
        "\"Task Type\"",
        "\"notify_id\"",
    ];
    let kineto = [
        "\"cuda_runtime\"",
        "\"cuda_driver\"",
        "\"cpu_op\"",
        "\"kernel\"",
        "\"gpu_memcpy\"",
        "\"python_function\"",
        "\"user_annotation\"",
        "\"deviceProperties\"",
        "\"distributedInfo\"",
        "\"schemaVersion\"",
    ];
    if graph_tasks::sniff(&text) {
        return Some(Format::GraphTasks);
    }
    let names_any = |needles: &[&str]| needles.iter().any(|needle| text.contains(needle));
    match text.as_bytes().first()? {
        b'[' if text.contains("\"ph\"") && names_any(&ascend) => Some(Format::AscendTimeline),
        b'{' if text.contains("\"traceEvents\"") => {
            if names_any(&ascend) && !names_any(&kineto[..2]) {
                Some(Format::AscendTimeline)
            } else if names_any(&kineto) {
                Some(Format::Kineto)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether a profile of this format is one rank's timeline of a cluster, checked with
/// the other ranks' ([`check_ascend_cluster`]).
pub fn is_cluster_timeline(format: Format) -> bool {
    matches!(format, Format::AscendTimeline | Format::AscendDb)
}

/// Whether a file of this name may be a profile: `.json`, `.json.gz` (`.gz`) or `.db`.
pub fn may_be_profile_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".gz") || name.ends_with(".db")
}

/// The format of the profile at `path`, judged on its first [`SNIFF_BYTES`] (gunzipped
/// when the file is gzip); `None` for any other file, or one that cannot be read. An
/// SQLite file is a profile when msprof's name or tables say so
/// ([`msprof_db::looks_like_export`]), not any database.
pub fn profile_format(path: &Path) -> Option<Format> {
    if msprof_db::is_sqlite_file(path) {
        return msprof_db::looks_like_export(path).then_some(Format::AscendDb);
    }
    sniff(&read_head(path)?)
}

fn is_gzip_file(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut magic))
        .is_ok()
        && magic == [0x1f, 0x8b]
}

/// A profile's text, gunzipped when needed; a gzip stream cut short gives what could be
/// decompressed (the scan then says where it stops), with the reason.
pub struct ProfileText {
    pub bytes: Vec<u8>,
    /// The text is the file's own bytes, so findings are rendered by re-reading the
    /// file; otherwise (gunzipped, or an editor's unsaved text) this copy is kept.
    pub is_file_bytes: bool,
    /// Why decompression stopped before the end, if it did.
    pub cut: Option<String>,
}

impl ProfileText {
    /// A profile's text as an editor holds it (saved or not): findings point into it.
    pub fn unsaved(text: &str) -> ProfileText {
        ProfileText {
            bytes: text.as_bytes().to_vec(),
            is_file_bytes: false,
            cut: None,
        }
    }
}

/// Read the profile at `path`, refused past [`MAX_PROFILE_BYTES`].
pub fn read_profile(path: &Path) -> std::io::Result<ProfileText> {
    let too_large = || {
        std::io::Error::other(format!(
            "a profile larger than {} GiB is not read",
            MAX_PROFILE_BYTES >> 30
        ))
    };
    let gzipped = is_gzip_file(path);
    let file = std::fs::File::open(path)?;
    // Sized up front: growing by doubling copies a large profile several times over.
    let size = file.metadata().map_or(0, |meta| meta.len().min(MAX_PROFILE_BYTES));
    let mut bytes = Vec::with_capacity(if gzipped { 0 } else { size as usize + 1 });
    let mut cut = None;
    if gzipped {
        let decoder = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
        if let Err(err) = decoder.take(MAX_PROFILE_BYTES + 1).read_to_end(&mut bytes) {
            cut = Some(format!("the gzip stream is damaged or cut short ({err})"));
        }
    } else {
        file.take(MAX_PROFILE_BYTES + 1).read_to_end(&mut bytes)?;
    }
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(too_large());
    }
    Ok(ProfileText {
        bytes,
        is_file_bytes: !gzipped,
        cut,
    })
}

/// Register a profile as a source: a plain file is re-read for rendering; a gzipped
/// one, or an editor's text, is kept in memory (spans point into the gunzipped text).
fn add_source(sources: &mut Sources, display: &str, path: &Path, text: &ProfileText) -> FileId {
    let mut file = if text.is_file_bytes {
        SourceFile::deferred(display, Some(path.to_path_buf()))
    } else {
        SourceFile::new(display, String::from_utf8_lossy(&text.bytes).into_owned())
    };
    if text.is_file_bytes {
        let line_starts = std::iter::once(0)
            .chain(
                memchr::memchr_iter(b'\n', &text.bytes)
                    .map(|at| at + 1)
                    .filter(|&at| at < text.bytes.len()),
            )
            .collect();
        file.set_layout(line_starts, text.bytes.len());
    }
    sources.add(file)
}

/// A finding for a gzip stream cut short.
fn cut_gzip(file: FileId, end: usize, why: &str) -> Diagnostic {
    Diagnostic::new(
        &syncguard_model::reading_rules::TraceFormatError::INFO,
        Span::new(file, end..end),
        format!("{why}: the {end} bytes before the damage are read"),
    )
    .with_severity(syncguard_analyzer::Severity::Warning)
    .with_label("decompression stopped here")
}

/// Check one Kineto trace (a process's profile) as a CUDA call trace, with the
/// execution trace of the same run where there is one (`execution`).
pub fn check_kineto(
    sources: &mut Sources,
    display: &str,
    path: &Path,
    execution: Option<&Path>,
    overrides: &Overrides,
) -> std::io::Result<CheckedFile> {
    let text = read_profile(path)?;
    let mut reading = Vec::new();
    let execution = execution.and_then(|execution| read_execution_trace(sources, execution, &mut reading));
    let mut checked = check_kineto_text(sources, display, path, &text, execution.as_ref(), overrides);
    checked.diagnostics.extend(reading);
    Ok(checked)
}

/// The execution trace at `path`; one that cannot be read is an SG002 warning on it.
pub fn read_execution_trace(
    sources: &mut Sources,
    path: &Path,
    reading: &mut Vec<Diagnostic>,
) -> Option<ExecutionTrace> {
    let failed = match read_profile(path) {
        Ok(text) => match execution_trace::read(&text.bytes) {
            Ok(execution) => return Some(execution),
            Err(err) => err,
        },
        Err(err) => err.to_string(),
    };
    let file = sources.add(SourceFile::deferred(
        path.display().to_string(),
        Some(path.to_path_buf()),
    ));
    reading.push(
        Diagnostic::new(
            &syncguard_model::reading_rules::TraceFormatError::INFO,
            Span::new(file, 0..0),
            format!("this execution trace cannot be read ({failed}): its profile is checked without its tensors"),
        )
        .with_severity(syncguard_analyzer::Severity::Warning),
    );
    None
}

/// [`check_kineto`] on text already read.
pub fn check_kineto_text(
    sources: &mut Sources,
    display: &str,
    path: &Path,
    text: &ProfileText,
    execution: Option<&ExecutionTrace>,
    overrides: &Overrides,
) -> CheckedFile {
    let file = add_source(sources, display, path, text);
    let read = kineto::read(&text.bytes, file, execution);
    let mut reading = read.reading;
    if let Some(why) = &text.cut {
        reading.push(cut_gzip(file, text.bytes.len(), why));
    }
    if read.trace.is_empty() {
        // A CPU-only profile (or another accelerator's): nothing of CUDA to check,
        // which is no fault of the file.
        return CheckedFile::unanalyzed(syncguard_analyzer::Program::new(Span::new(file, 0..0)), reading);
    }
    let mut checked = read.trace.check(sources, display, reading, overrides);
    for diagnostic in &mut checked.diagnostics {
        if diagnostic.code == syncguard_analyzer::rules::SolverUnknown::INFO.code {
            // A profile cannot be edited to declare memory: what gives it is said instead.
            diagnostic.help = Some(
                "save the PyTorch execution trace of the same run (`torch.profiler.ExecutionTraceObserver`) beside the profile: each launch then gets its operator's tensors (docs/PROFILES.md)"
                    .to_string(),
            );
        }
    }
    checked
}

/// Check one graph task dump (one device's captured graph) as a call trace.
pub fn check_graph_tasks(
    sources: &mut Sources,
    display: &str,
    path: &Path,
    overrides: &Overrides,
) -> std::io::Result<CheckedFile> {
    let text = read_profile(path)?;
    Ok(check_graph_tasks_text(sources, display, path, &text, overrides))
}

/// [`check_graph_tasks`] on text already read.
pub fn check_graph_tasks_text(
    sources: &mut Sources,
    display: &str,
    path: &Path,
    text: &ProfileText,
    overrides: &Overrides,
) -> CheckedFile {
    let file = add_source(sources, display, path, text);
    let (trace, mut reading) = graph_tasks::read(&text.bytes, file);
    if let Some(why) = &text.cut {
        reading.push(cut_gzip(file, text.bytes.len(), why));
    }
    if trace.is_empty() {
        return CheckedFile::unanalyzed(syncguard_analyzer::Program::new(Span::new(file, 0..0)), reading);
    }
    trace.check(sources, display, reading, overrides)
}

/// Which execution trace belongs to which Kineto trace: in the same folder, the one
/// whose `pid` the profile's events name, else the folder's only one when the folder
/// holds one profile. Returns, for each profile, its execution trace, and the execution
/// traces no profile took.
pub fn pair_execution_traces(profiles: &[PathBuf], executions: &[PathBuf]) -> (Vec<Option<PathBuf>>, Vec<PathBuf>) {
    let folder = |path: &Path| path.parent().map(Path::to_path_buf);
    let mut paired: Vec<Option<PathBuf>> = vec![None; profiles.len()];
    let mut unpaired = Vec::new();
    for execution in executions {
        let in_folder: Vec<usize> = (0..profiles.len())
            .filter(|&index| folder(&profiles[index]) == folder(execution) && paired[index].is_none())
            .collect();
        let pid = execution_trace_pid(execution);
        let by_pid: Vec<usize> = in_folder
            .iter()
            .copied()
            .filter(|&index| pid.is_some_and(|pid| names_pid(&profiles[index], pid)))
            .collect();
        let profiles_in_folder = profiles
            .iter()
            .filter(|profile| folder(profile) == folder(execution))
            .count();
        match (by_pid.as_slice(), in_folder.as_slice()) {
            ([index], _) => paired[*index] = Some(execution.clone()),
            ([], [index]) if profiles_in_folder == 1 => paired[*index] = Some(execution.clone()),
            _ => unpaired.push(execution.clone()),
        }
    }
    (paired, unpaired)
}

/// The execution trace in the folder of the Kineto trace at `profile` that
/// [`pair_execution_traces`] pairs with it, judged over the folder's files by content:
/// for a profile named alone or opened in an editor.
pub fn execution_trace_beside(profile: &Path) -> Option<PathBuf> {
    let folder = profile.parent()?;
    let mut profiles = vec![profile.to_path_buf()];
    let mut executions = Vec::new();
    for entry in std::fs::read_dir(folder).ok()?.flatten() {
        let path = entry.path();
        if path == profile || !path.is_file() || !may_be_profile_name(&path) {
            continue;
        }
        match profile_format(&path) {
            Some(Format::Kineto) => profiles.push(path),
            Some(Format::ExecutionTrace) => executions.push(path),
            _ => {}
        }
    }
    executions.sort();
    pair_execution_traces(&profiles, &executions).0.swap_remove(0)
}

/// A note for an execution trace no profile of the folder was paired with: nothing of
/// it is checked.
pub fn execution_trace_without_profile(sources: &mut Sources, path: &Path) -> Diagnostic {
    let file = sources.add(SourceFile::deferred(
        path.display().to_string(),
        Some(path.to_path_buf()),
    ));
    Diagnostic::new(
        &syncguard_model::reading_rules::TraceFormatError::INFO,
        Span::new(file, 0..0),
        "this PyTorch execution trace is not checked: no Kineto trace of its folder names its `pid`, and the folder does not hold exactly one",
    )
    .with_severity(syncguard_analyzer::Severity::Info)
    .with_help("keep each rank's execution trace in a folder with that rank's profiler trace (docs/PROFILES.md)")
}

/// The `pid` an execution trace names at its start.
fn execution_trace_pid(path: &Path) -> Option<i64> {
    let head = read_head(path)?;
    let text = String::from_utf8_lossy(&head);
    let at = text.find("\"pid\"")? + 5;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Whether the profile's first events name process `pid`.
fn names_pid(path: &Path, pid: i64) -> bool {
    let Some(head) = read_head(path) else {
        return false;
    };
    let text = String::from_utf8_lossy(&head);
    [
        format!("\"pid\": {pid},"),
        format!("\"pid\":{pid},"),
        format!("\"pid\": {pid}}}"),
    ]
    .iter()
    .any(|needle| text.contains(needle.as_str()))
}

/// A file's first [`SNIFF_BYTES`], gunzipped when it is gzip.
fn read_head(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let reader = std::io::BufReader::new(file);
    if is_gzip_file(path) {
        let _ = flate2::read::MultiGzDecoder::new(reader)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head);
    } else {
        reader.take(SNIFF_BYTES as u64).read_to_end(&mut head).ok()?;
    }
    Some(head)
}

/// One msprof timeline of a cluster: how to show it and where it is.
#[derive(Clone, Debug)]
pub struct TimelineInput {
    pub display: String,
    pub path: PathBuf,
    /// An editor's text of a `trace_view.json` (saved or not); `None`: read the file.
    pub unsaved: Option<Arc<String>>,
}

/// The cluster a timeline belongs to: the folder holding its `*_ascend_pt` folder
/// (`cluster/node0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json`), else its own folder.
pub fn cluster_of(path: &Path) -> PathBuf {
    match ascend_pt_folder(path).and_then(Path::parent) {
        Some(cluster) => cluster.to_path_buf(),
        None => path.parent().map(Path::to_path_buf).unwrap_or_default(),
    }
}

/// The rank a timeline's `*_ascend_pt` folder names: its `profiler_info_N.json`.
pub fn rank_of_timeline(path: &Path) -> Option<u32> {
    let ascend_pt = ascend_pt_folder(path)?;
    let mut ranks = std::fs::read_dir(ascend_pt).ok()?.filter_map(|entry| {
        let name = entry.ok()?.file_name().into_string().ok()?;
        name.strip_prefix("profiler_info_")?
            .strip_suffix(".json")?
            .parse::<u32>()
            .ok()
    });
    let rank = ranks.next()?;
    // Two ranks' files in one folder: which one wrote the timeline is unknown.
    ranks.next().is_none().then_some(rank)
}

/// Check the timelines of one cluster together as one multi-rank trace: each rank's
/// `trace_view.json` or `.db` export (where a rank folder holds both, the `.db` is read
/// and that is said). A file that cannot be opened is returned with its error.
pub fn check_ascend_cluster(
    sources: &mut Sources,
    inputs: &[TimelineInput],
    overrides: &Overrides,
) -> (CheckedFile, Vec<(PathBuf, std::io::Error)>) {
    let mut failures = Vec::new();
    let mut reading = Vec::new();
    let mut ranks = Vec::new();
    let (chosen, shadowed) = prefer_db_exports(inputs);
    for input in chosen {
        if msprof_db::is_sqlite_file(&input.path) {
            ranks.push(read_db_rank(sources, input, &shadowed, &mut reading));
        } else {
            match read_json_rank(sources, input, &mut reading) {
                Ok(rank) => ranks.push(rank),
                Err(err) => failures.push((input.path.clone(), err)),
            }
        }
    }
    let header = ranks
        .first()
        .map(|rank| Span::new(rank.file, 0..0))
        .unwrap_or_else(|| Span::new(FileId(0), 0..0));
    let trace = ascend::lower_ranks(ranks, header.clone(), &mut reading);
    let display = inputs
        .first()
        .map(|input| cluster_of(&input.path).display().to_string())
        .unwrap_or_default();
    let checked = if trace.is_empty() {
        // No notify task to check: only what reading found.
        CheckedFile::unanalyzed(syncguard_analyzer::Program::new(header), reading)
    } else {
        trace.check(sources, &display, reading, overrides)
    };
    (checked, failures)
}

/// The `trace_view.json` files among `inputs` that [`check_ascend_cluster`] does not
/// read, since the `.db` export of the same rank folder is read instead: they are not
/// checked files.
pub fn timelines_left_for_db_exports(inputs: &[TimelineInput]) -> Vec<PathBuf> {
    prefer_db_exports(inputs).1.into_values().flatten().collect()
}

/// The `*_ascend_pt` folder of a timeline, if it is in one.
fn ascend_pt_folder(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find(|dir| {
        dir.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("_ascend_pt"))
    })
}

/// The inputs to read, and the `trace_view.json` files left for the `.db` export of the
/// same rank folder (keyed by that folder): both hold the same tasks, and the export's
/// typed columns need no guessing of key spellings.
fn prefer_db_exports(inputs: &[TimelineInput]) -> (Vec<&TimelineInput>, BTreeMap<PathBuf, Vec<PathBuf>>) {
    let db_folders: BTreeSet<&Path> = inputs
        .iter()
        .filter(|input| msprof_db::is_sqlite_file(&input.path))
        .filter_map(|input| ascend_pt_folder(&input.path))
        .collect();
    let mut chosen = Vec::new();
    let mut shadowed: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for input in inputs {
        match ascend_pt_folder(&input.path) {
            Some(folder) if db_folders.contains(folder) && !msprof_db::is_sqlite_file(&input.path) => {
                shadowed
                    .entry(folder.to_path_buf())
                    .or_default()
                    .push(input.path.clone());
            }
            _ => chosen.push(input),
        }
    }
    (chosen, shadowed)
}

/// Read one rank's `.db` export: its rows listed as the source findings point into.
fn read_db_rank(
    sources: &mut Sources,
    input: &TimelineInput,
    shadowed: &BTreeMap<PathBuf, Vec<PathBuf>>,
    reading: &mut Vec<Diagnostic>,
) -> ascend::RankTasks {
    let export = msprof_db::read(&input.path, rank_of_timeline(&input.path));
    let file = sources.add(SourceFile::new(&input.display, export.listing.clone()));
    reading.extend(export.findings(file));
    let folder = ascend_pt_folder(&input.path).map(Path::to_path_buf).unwrap_or_default();
    for json in shadowed.get(&folder).into_iter().flatten() {
        reading.push(
            Diagnostic::new(
                &syncguard_model::reading_rules::TraceFormatError::INFO,
                Span::new(file, 0..0),
                format!(
                    "this rank folder also holds {}: the .db export is read and that timeline is not (both hold the same tasks)",
                    json.display()
                ),
            )
            .with_severity(syncguard_analyzer::Severity::Info),
        );
    }
    ascend::RankTasks {
        file,
        rank: export.rank,
        read: export.read,
        rank_source: msprof_db::DB_RANK_SOURCE,
    }
}

/// Read one rank's `trace_view.json`.
fn read_json_rank(
    sources: &mut Sources,
    input: &TimelineInput,
    reading: &mut Vec<Diagnostic>,
) -> std::io::Result<ascend::RankTasks> {
    let text = match &input.unsaved {
        Some(text) => ProfileText::unsaved(text),
        None => read_profile(&input.path)?,
    };
    let file = add_source(sources, &input.display, &input.path, &text);
    if let Some(why) = &text.cut {
        reading.push(cut_gzip(file, text.bytes.len(), why));
    }
    let timeline = ascend::RankTimeline {
        file,
        text: &text.bytes,
        rank: rank_of_timeline(&input.path),
    };
    Ok(ascend::read_timeline(&timeline, reading))
}
