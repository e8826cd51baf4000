//! Turning command-line paths into the files to check.

use std::collections::HashSet;
use std::fmt::Display;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A `.sync` program.
    Sync,
    /// A JSONL call trace.
    Trace,
    /// C or C++ source (host code, CUDA, Ascend C) or Python (pyACL, torch_npu): read
    /// together with the other sources of its language in the run, so that helpers in
    /// one file inline into entry points of another.
    Source,
    /// A PyTorch NCCL Flight Recorder dump (pickle or JSON, by content): checked with
    /// the other dumps of its folder (`syncguard_flight_recorder`).
    FlightRecorder,
    /// A profiler timeline (Kineto `.json`/`.json.gz`, msprof `trace_view.json`, by
    /// content): checked as a call trace (`syncguard_profiles`).
    Profile(syncguard_profiles::Format),
}

/// One input: how to show it, where to read it, what it is.
pub struct Input {
    /// For messages only: lossy for a name that is not UTF-8.
    pub display: String,
    pub file: PathBuf,
    pub kind: InputKind,
    /// Named on the command line (or `-`), rather than found in a folder.
    pub named: bool,
    /// Standard input, saved so that a trace can be streamed and re-read for rendering.
    spool: Option<tempfile::NamedTempFile>,
}

impl Input {
    pub fn is_stdin(&self) -> bool {
        self.spool.is_some()
    }
}

/// Expand folders to the `.sync`, `.jsonl`, C/C++ and Python files below them (see [`folder_files`]);
/// `-` is standard input. A file reached twice (named twice, or through links) is
/// checked once. Unusable paths are reported on stderr and counted as failures.
pub fn collect_inputs(paths: &[PathBuf]) -> (Vec<Input>, usize) {
    let mut inputs = Vec::new();
    let mut failures = 0;
    let mut seen = HashSet::new();
    for path in paths {
        if path.as_os_str() == "-" {
            match spool_stdin() {
                Ok(input) => inputs.push(input),
                Err(err) => failures += report(path, &err),
            }
            continue;
        }
        let named = !path.is_dir();
        let files = if named {
            std::fs::metadata(path).map(|_| vec![path.clone()])
        } else {
            Ok(folder_files(path, &mut failures))
        };
        let files = match files {
            Ok(files) => files,
            Err(err) => {
                failures += report(path, &err);
                continue;
            }
        };
        for file in files {
            match first_visit(&file, &mut seen) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(err) => {
                    failures += report(&file, &err);
                    continue;
                }
            }
            inputs.push(Input {
                display: file.display().to_string(),
                kind: kind_of(&file),
                file,
                named,
                spool: None,
            });
        }
    }
    (inputs, failures)
}

/// Whether `file` is new to `seen`: two paths are the same file when their real paths
/// (links resolved) are the same.
fn first_visit(file: &Path, seen: &mut HashSet<PathBuf>) -> std::io::Result<bool> {
    Ok(seen.insert(std::fs::canonicalize(file)?))
}

pub fn report(path: &Path, err: &dyn Display) -> usize {
    eprintln!("syncguard: cannot read {}: {err}", path.display());
    1
}

fn spool_stdin() -> std::io::Result<Input> {
    let mut spool = tempfile::NamedTempFile::new()?;
    std::io::copy(&mut std::io::stdin().lock(), &mut spool)?;
    let kind = sniff(spool.path())?;
    Ok(Input {
        display: "-".into(),
        file: spool.path().to_path_buf(),
        kind,
        named: true,
        spool: Some(spool),
    })
}

/// By extension; a file with neither extension is a trace if it starts with `{`. A file
/// with no extension, `.json` or `.pkl` that is a Flight Recorder dump by content is one.
fn kind_of(path: &Path) -> InputKind {
    if syncguard_flight_recorder::may_be_dump_name(path) && syncguard_flight_recorder::is_dump_file(path) {
        return InputKind::FlightRecorder;
    }
    if syncguard_profiles::may_be_profile_name(path)
        && let Some(format) = syncguard_profiles::profile_format(path)
    {
        return InputKind::Profile(format);
    }
    match path.extension().and_then(|ext| ext.to_str()) {
        Some("jsonl" | "ndjson") => InputKind::Trace,
        Some("sync") => InputKind::Sync,
        Some(ext) if syncguard_cpp::EXTENSIONS.contains(&ext) || syncguard_python::EXTENSIONS.contains(&ext) => {
            InputKind::Source
        }
        _ => sniff(path).unwrap_or(InputKind::Sync),
    }
}

fn sniff(path: &Path) -> std::io::Result<InputKind> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)?.read(&mut head)?;
    let first = head[..n].iter().find(|b| !b.is_ascii_whitespace());
    Ok(if first == Some(&b'{') {
        InputKind::Trace
    } else {
        InputKind::Sync
    })
}

/// Every `.sync`, `.jsonl`, C/C++ and Python source file below `dir`, sorted, searched as `git` and `rg` see
/// a tree: hidden files and what `.gitignore`, `.ignore` and `.git/info/exclude` name
/// are skipped (a `.gitignore` counts outside a git checkout too). Links are followed;
/// a link back to a folder being searched is skipped, as its files are found anyway.
/// Folders are searched in parallel, as `rg` does; the result is sorted.
/// Entries that cannot be read are reported and counted in `failures`.
/// A `.jsonl` file is taken only if it is a call trace (see [`is_call_trace_text`]): a folder
/// may hold datasets; the others are named on stderr.
fn folder_files(dir: &Path, failures: &mut usize) -> Vec<PathBuf> {
    let found = std::sync::Mutex::new(Vec::new());
    ignore::WalkBuilder::new(dir)
        .follow_links(true)
        .require_git(false)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                if let Some(item) = classify(dir, entry) {
                    found.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(item);
                }
                ignore::WalkState::Continue
            })
        });
    let mut found = found.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    found.sort();
    let mut files = Vec::new();
    let mut not_traces = Vec::new();
    let mut dangling = Vec::new();
    for item in found {
        match item {
            Found::Input(path) => files.push(path),
            Found::NotTrace(path) => not_traces.push(path),
            Found::Dangling(path) => dangling.push(path),
            Found::Unreadable(path, why) => *failures += report(&path, &why),
        }
    }
    if !dangling.is_empty() {
        eprintln!(
            "syncguard: note: skipped {} link{} in {} whose target cannot be reached (missing, as in a submodule not \
             checked out, or a loop of links): {}",
            dangling.len(),
            if dangling.len() == 1 { "" } else { "s" },
            dir.display(),
            first_names(&dangling),
        );
    }
    if !not_traces.is_empty() {
        eprintln!(
            "syncguard: note: skipped {} .jsonl file{} in {} that {} not a call trace (the first line is neither a \
             `syncguard_trace` header nor a call): {}",
            not_traces.len(),
            if not_traces.len() == 1 { "" } else { "s" },
            dir.display(),
            if not_traces.len() == 1 { "is" } else { "are" },
            first_names(&not_traces),
        );
    }
    files
}

/// `a, b, c, ...`: the first three paths, for a note about many.
fn first_names(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().take(3).map(|path| path.display().to_string()).collect();
    format!("{}{}", names.join(", "), if paths.len() > 3 { ", ..." } else { "" })
}

/// What a walk found at one entry.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Found {
    Input(PathBuf),
    /// A `.jsonl` file that is not a call trace.
    NotTrace(PathBuf),
    /// A link whose target cannot be reached: nothing to read, and no fault of the run.
    Dangling(PathBuf),
    Unreadable(PathBuf, String),
}

/// An input, a skipped `.jsonl` file or a failure; `None` for what is not looked at.
fn classify(dir: &Path, entry: Result<ignore::DirEntry, ignore::Error>) -> Option<Found> {
    match entry {
        Ok(entry) if has_input_extension(entry.path()) => match entry.file_type() {
            Some(kind) if kind.is_file() && is_jsonl(entry.path()) && !is_call_trace(entry.path()) => {
                Some(Found::NotTrace(entry.into_path()))
            }
            Some(kind) if kind.is_file() => Some(Found::Input(entry.into_path())),
            Some(kind) if kind.is_dir() => None,
            // A FIFO or a device: reading it could block forever.
            _ => Some(Found::Unreadable(entry.into_path(), "not a regular file".to_string())),
        },
        // A Flight Recorder dump (`nccl_trace_rank_0`, `.json`, `.pkl`), by content.
        Ok(entry)
            if entry.file_type().is_some_and(|kind| kind.is_file())
                && syncguard_flight_recorder::may_be_dump_name(entry.path())
                && syncguard_flight_recorder::is_dump_file(entry.path()) =>
        {
            Some(Found::Input(entry.into_path()))
        }
        // A profiler timeline (`*.pt.trace.json(.gz)`, `trace_view.json`), by content.
        Ok(entry)
            if entry.file_type().is_some_and(|kind| kind.is_file())
                && syncguard_profiles::may_be_profile_name(entry.path())
                && syncguard_profiles::profile_format(entry.path()).is_some() =>
        {
            Some(Found::Input(entry.into_path()))
        }
        Ok(_) => None,
        Err(err) => match unwrap_walk_error(&err) {
            (_, ignore::Error::Loop { .. }) => None,
            (Some(path), _) if is_dangling_link(path) => Some(Found::Dangling(path.to_path_buf())),
            (path, inner) => Some(Found::Unreadable(
                path.unwrap_or(dir).to_path_buf(),
                walk_error_text(inner),
            )),
        },
    }
}

fn is_dangling_link(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|meta| meta.file_type().is_symlink()) && std::fs::metadata(path).is_err()
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "jsonl")
}

/// Whether the file at `path` is a call trace (see [`is_call_trace_text`]), judged on
/// its first [`TRACE_HEAD_BYTES`] bytes.
fn is_call_trace(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        // Unreadable: taken, so that the failure is reported where it is read.
        return true;
    };
    let mut head = Vec::new();
    if file.take(TRACE_HEAD_BYTES as u64).read_to_end(&mut head).is_err() {
        return true;
    }
    is_call_trace_text(&head)
}

/// How much of a `.jsonl` file decides whether it is a call trace: a header or a call
/// is far shorter, and a folder may hold gigabytes of datasets.
const TRACE_HEAD_BYTES: usize = 64 << 10;

/// Whether text starting with `head` is a call trace: its first line is a header
/// (`{"syncguard_trace": 1, ...}`) or a call (`{"api": ...}`); empty text is an empty
/// trace. Only the first 64 KiB count, so that a file on disk (`check DIR`)
/// and the same text open in an editor (the language server) are judged alike: a
/// dataset is skipped by both rather than reported line by line as malformed.
pub fn is_call_trace_text(head: &[u8]) -> bool {
    let head = &head[..head.len().min(TRACE_HEAD_BYTES)];
    let text = String::from_utf8_lossy(head);
    let Some(first) = text.lines().find(|line| !line.trim().is_empty()) else {
        return true;
    };
    match serde_json::from_str::<serde_json::Value>(first) {
        Ok(serde_json::Value::Object(fields)) => {
            fields.contains_key("syncguard_trace") || fields.get("api").is_some_and(|api| api.is_string())
        }
        // A first line longer than what was read, or still being typed: the reader
        // reports what is wrong with it.
        Err(err) if err.is_eof() => true,
        _ => first.contains("\"api\"") || first.contains("syncguard_trace"),
    }
}

fn has_input_extension(path: &Path) -> bool {
    path.extension().and_then(|ext| ext.to_str()).is_some_and(|ext| {
        ext == "sync"
            || ext == "jsonl"
            || syncguard_cpp::EXTENSIONS.contains(&ext)
            || syncguard_python::EXTENSIONS.contains(&ext)
    })
}

/// The path a walk error is about, if it names one, and the error without the path
/// and depth around it.
fn unwrap_walk_error(err: &ignore::Error) -> (Option<&Path>, &ignore::Error) {
    match err {
        ignore::Error::WithDepth { err, .. } => unwrap_walk_error(err),
        ignore::Error::WithPath { path, err } => (Some(path), unwrap_walk_error(err).1),
        other => (None, other),
    }
}

/// What went wrong, without the walker's "IO error for operation on PATH" that repeats
/// the path: the operating system's own error inside it.
fn walk_error_text(err: &ignore::Error) -> String {
    let Some(io) = err.io_error() else {
        return err.to_string();
    };
    let inner = io
        .get_ref()
        .and_then(|wrapper| wrapper.source())
        .and_then(|source| source.downcast_ref::<std::io::Error>());
    inner.unwrap_or(io).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_a_call_or_nothing_is_a_trace() {
        assert!(is_call_trace_text(b"{\"syncguard_trace\": 1, \"world_size\": 2}\n"));
        assert!(is_call_trace_text(b"\n{\"rank\": 0, \"api\": \"aclrtCreateStream\"}\n"));
        assert!(is_call_trace_text(b""));
        // Still being typed: the reader says what is wrong.
        assert!(is_call_trace_text(b"{\"syncguard_tr"));
    }

    #[test]
    fn records_of_other_data_are_not_a_trace() {
        assert!(!is_call_trace_text(
            b"{\"question\": \"why\", \"answer\": \"because\"}\n"
        ));
        assert!(!is_call_trace_text(b"[1, 2, 3]\n"));
        assert!(!is_call_trace_text(b"{\"api\": 7}\n"));
    }

    #[test]
    fn only_the_head_counts() {
        let mut text = vec![b' '; TRACE_HEAD_BYTES];
        text.extend_from_slice(b"{\"label\": 1}\n");
        // All that is looked at is blank: an empty trace, as the file would be judged.
        assert!(is_call_trace_text(&text));
    }
}
