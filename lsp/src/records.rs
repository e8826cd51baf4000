//! Records of a run opened in the editor: a profiler timeline (Kineto, msprof
//! `trace_view.json`), a captured graph's task dump, or a Flight Recorder dump (JSON
//! form). Each is checked as `check` checks it: a Kineto trace or a graph dump alone; an msprof timeline with the other ranks' timelines
//! of its cluster; a dump with the other dumps of its folder. The editor's text replaces
//! the file's wherever a record of the run is open. Findings on the other ranks' files
//! are published too: they belong to the run the open file is part of.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use lsp_types::Url;
use syncguard_analyzer::{Diagnostic, FileId, Overrides, Sources};
use syncguard_project::inputs::{InputKind, collect_inputs};

use crate::documents::{Document, Snapshot, display_of, path_of};

/// Which record a document holds, by its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    Kineto,
    GraphTasks,
    AscendTimeline,
    FlightRecorderDump,
}

impl Record {
    /// The record `text` holds, judged on its first bytes as `check` judges a file;
    /// `None` for any other JSON (a config, a dataset).
    pub fn of(text: &str) -> Option<Record> {
        let head = &text.as_bytes()[..text.len().min(syncguard_profiles::SNIFF_BYTES)];
        if syncguard_flight_recorder::sniff(head).is_some() {
            return Some(Record::FlightRecorderDump);
        }
        match syncguard_profiles::sniff(head)? {
            syncguard_profiles::Format::Kineto => Some(Record::Kineto),
            syncguard_profiles::Format::GraphTasks => Some(Record::GraphTasks),
            syncguard_profiles::Format::AscendTimeline => Some(Record::AscendTimeline),
            // A database is not text an editor opens; an execution trace has no timeline
            // of its own (it is checked with its profile).
            syncguard_profiles::Format::AscendDb | syncguard_profiles::Format::ExecutionTrace => None,
        }
    }
}

/// What checking a record found.
pub struct RecordCheck {
    pub diagnostics: Vec<Diagnostic>,
    /// The files of the run, with their URLs.
    pub files: Vec<(FileId, Url)>,
    /// Every file of the run, found from the open one (so its findings are published).
    pub found_from: HashMap<FileId, HashSet<FileId>>,
}

/// Check the record `target` holds (`record`) with the rest of its run.
pub fn check(
    target: &Url,
    record: Record,
    documents: &Snapshot,
    overrides: &Overrides,
    sources: &mut Sources,
) -> RecordCheck {
    let document = &documents[target];
    let path = path_of(target);
    let diagnostics = match record {
        Record::Kineto => {
            let text = syncguard_profiles::ProfileText::unsaved(&document.text);
            let mut reading = Vec::new();
            let execution = path
                .as_deref()
                .and_then(syncguard_profiles::execution_trace_beside)
                .and_then(|execution| syncguard_profiles::read_execution_trace(sources, &execution, &mut reading));
            let path = path.clone().unwrap_or_default();
            let display = display_of(target);
            let checked =
                syncguard_profiles::check_kineto_text(sources, &display, &path, &text, execution.as_ref(), overrides);
            [checked.diagnostics, reading].concat()
        }
        Record::GraphTasks => {
            let text = syncguard_profiles::ProfileText::unsaved(&document.text);
            let path = path.clone().unwrap_or_default();
            let display = display_of(target);
            syncguard_profiles::check_graph_tasks_text(sources, &display, &path, &text, overrides).diagnostics
        }
        Record::AscendTimeline => check_cluster(target, path.as_deref(), documents, overrides, sources),
        Record::FlightRecorderDump => check_dumps(target, path.as_deref(), document, documents, sources),
    };
    let files = files_of_run(target, sources);
    let open = files.iter().find(|(_, url)| url == target).map(|(file, _)| *file);
    let found_from = files
        .iter()
        .map(|(file, _)| (*file, open.into_iter().collect()))
        .collect();
    RecordCheck {
        diagnostics,
        files,
        found_from,
    }
}

/// The timelines of `target`'s cluster (the folder of its `*_ascend_pt` folder), checked
/// together as its ranks.
fn check_cluster(
    target: &Url,
    path: Option<&Path>,
    documents: &Snapshot,
    overrides: &Overrides,
    sources: &mut Sources,
) -> Vec<Diagnostic> {
    let cluster = path.map(syncguard_profiles::cluster_of);
    let in_cluster = |file: &Path| Some(syncguard_profiles::cluster_of(file)) == cluster;
    let mut inputs: Vec<_> = run_files(
        cluster.as_deref(),
        |kind| matches!(kind, InputKind::Profile(format) if syncguard_profiles::is_cluster_timeline(format)),
    )
    .into_iter()
    .filter(|file| in_cluster(file))
    .map(|file| timeline(&file, documents))
    .collect();
    if path.is_none_or(|path| !inputs.iter().any(|input| input.path == path)) {
        // Unsaved, or not on disk yet: the editor's text is the cluster's one rank.
        let mut input = timeline(&path.map(Path::to_path_buf).unwrap_or_default(), documents);
        input.display = display_of(target);
        input.unsaved = Some(documents[target].text.clone());
        inputs.push(input);
    }
    let (checked, unreadable) = syncguard_profiles::check_ascend_cluster(sources, &inputs, overrides);
    for (file, err) in unreadable {
        eprintln!("syncguard lsp: cannot read {}: {err}", file.display());
    }
    checked.diagnostics
}

/// A timeline of the cluster, with the editor's text where it is open.
fn timeline(file: &Path, documents: &Snapshot) -> syncguard_profiles::TimelineInput {
    syncguard_profiles::TimelineInput {
        display: file.display().to_string(),
        path: file.to_path_buf(),
        unsaved: open_text(file, documents).map(|document| document.text.clone()),
    }
}

/// The dumps of `target`'s folder, checked together as one job's ranks.
fn check_dumps(
    target: &Url,
    path: Option<&Path>,
    document: &Document,
    documents: &Snapshot,
    sources: &mut Sources,
) -> Vec<Diagnostic> {
    let folder = path.and_then(Path::parent);
    let mut dumps = Vec::new();
    for file in run_files(folder, |kind| kind == InputKind::FlightRecorder) {
        if file.parent() != folder || Some(file.as_path()) == path {
            continue;
        }
        let bytes = match open_text(&file, documents) {
            Some(open) => Ok(open.text.as_bytes().to_vec()),
            None => syncguard_flight_recorder::read_file(&file),
        };
        match bytes {
            Ok(bytes) => dumps.push(syncguard_flight_recorder::DumpInput {
                display: file.display().to_string(),
                bytes,
            }),
            Err(err) => eprintln!("syncguard lsp: cannot read {}: {err}", file.display()),
        }
    }
    dumps.push(syncguard_flight_recorder::DumpInput {
        display: display_of(target),
        bytes: document.text.as_bytes().to_vec(),
    });
    syncguard_flight_recorder::check_run(sources, dumps)
}

/// The files below `folder` that `check FOLDER` reads as `wanted` inputs.
fn run_files(folder: Option<&Path>, wanted: impl Fn(InputKind) -> bool) -> Vec<PathBuf> {
    let Some(folder) = folder else {
        return Vec::new();
    };
    let (inputs, _) = collect_inputs(&[folder.to_path_buf()]);
    inputs
        .into_iter()
        .filter(|input| wanted(input.kind))
        .map(|input| input.file)
        .collect()
}

/// The open document of the file at `path`, if the editor has it open.
fn open_text<'a>(path: &Path, documents: &'a Snapshot) -> Option<&'a Document> {
    documents
        .iter()
        .find(|(url, _)| path_of(url).as_deref() == Some(path))
        .map(|(_, document)| document)
}

/// Each file the check registered, with its URL: `target` for the open record, the
/// file's own URL for the other ranks'.
fn files_of_run(target: &Url, sources: &Sources) -> Vec<(FileId, Url)> {
    let shown = display_of(target);
    sources
        .iter()
        .filter_map(|(file, source)| {
            let url = if source.path == shown {
                target.clone()
            } else {
                Url::from_file_path(&source.path).ok()?
            };
            Some((file, url))
        })
        .collect()
}
