//! One run's rank files as one multi-rank trace.
//!
//! `syncguard trace` makes every process write its own file (`<host>-<pid>.jsonl`,
//! docs/TRACE.md "Capturing a trace"): a header naming the run and, when known then, the
//! process's rank; call lines without `rank`; and, when the process exits, a closing line
//! (`syncguard_capture_end`) with the rank learned meanwhile (from
//! `HcclCommInitRootInfo`). Merging gives each file's lines its rank and orders all lines
//! by `ts` (each host thread keeps its own order), under one header: the multi-rank trace
//! format every other trace uses. What cannot be known is reported, never guessed: a
//! rank with no file, two files of one rank, a file with no rank, a process that never
//! closed its file.
//!
//! `syncguard trace` writes the merge next to the rank files (`run-RUN.jsonl`, its header
//! naming the run and its rank files under `merged`), and `check` finds the findings'
//! lines there when that file is still exactly the merge of the rank files; otherwise
//! (rank files copied without it, or changed since) each finding is placed on the line
//! of the rank file its call came from. Either way every place a finding names is a
//! file on disk, and a folder holding both is checked once, from its rank files.
//!
//! The check in two passes (docs/SCALE.md) merges what each rank file's skeleton kept
//! ([`merge_run_parts`]): every line's merge key ([`line_keys`]) is computed on its whole
//! file, so the kept lines merge in the order the whole files would give them.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use syncguard_model::diagnostic::Diagnostic;
use syncguard_model::source::{FileId, SourceFile, Sources, Span};

/// The fields of a capture's header and closing lines.
#[derive(Debug, Default, Deserialize)]
struct CaptureLine {
    syncguard_trace: Option<serde_json::Value>,
    capture: Option<String>,
    run: Option<String>,
    host: Option<String>,
    pid: Option<u64>,
    forked_from: Option<u64>,
    parent_rank: Option<u32>,
    rank: Option<u32>,
    world_size: Option<u32>,
    syncguard_capture_end: Option<serde_json::Value>,
    dropped: Option<u64>,
    merged: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The header of a file `syncguard trace` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureHeader {
    pub run: String,
    pub host: String,
    pub pid: u64,
    /// A process forked from another of the run (not exec'd): the parent's pid and rank.
    pub forked_from: Option<(u64, Option<u32>)>,
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
}

impl CaptureHeader {
    /// The header of a capture's first line; `None` for any other line (a hand-written
    /// or simulator trace, which is checked on its own).
    pub fn parse(line: &[u8]) -> Option<CaptureHeader> {
        let line: CaptureLine = serde_json::from_slice(line).ok()?;
        line.syncguard_trace.as_ref()?;
        line.capture.as_ref()?;
        Some(CaptureHeader {
            run: line.run?,
            host: line.host.unwrap_or_default(),
            pid: line.pid.unwrap_or(0),
            forked_from: line.forked_from.map(|pid| (pid, line.parent_rank)),
            rank: line.rank,
            world_size: line.world_size,
        })
    }

    /// The header of the file at `path`, if it is a capture (only its first line, up to
    /// 64 KiB, is read).
    pub fn read(path: &Path) -> Option<CaptureHeader> {
        CaptureHeader::parse(&first_line(path)?)
    }
}

/// What the first line of a `.jsonl` file says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceFile {
    /// A rank file `syncguard trace` wrote (one process's calls).
    Capture(CaptureHeader),
    /// The merge of a run's rank files (`run-RUN.jsonl`): the run it merges.
    Merged(String),
    /// Any other trace, or not a trace.
    Other,
}

impl TraceFile {
    /// Read the first line (up to 64 KiB) of the file at `path`.
    pub fn read(path: &Path) -> TraceFile {
        let Some(first) = first_line(path) else {
            return TraceFile::Other;
        };
        if let Some(header) = CaptureHeader::parse(&first) {
            return TraceFile::Capture(header);
        }
        match serde_json::from_slice::<CaptureLine>(&first) {
            Ok(CaptureLine {
                syncguard_trace: Some(_),
                capture: None,
                run: Some(run),
                merged: Some(_),
                ..
            }) => TraceFile::Merged(run),
            _ => TraceFile::Other,
        }
    }
}

fn first_line(path: &Path) -> Option<Vec<u8>> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let mut first = Vec::new();
    std::io::BufReader::new(file)
        .take(64 << 10)
        .read_until(b'\n', &mut first)
        .ok()?;
    Some(first)
}

/// The file name `syncguard trace` gives the merge of run `run`: `run-RUN.jsonl`.
pub fn merged_file_name(run: &str) -> String {
    let run: String = run
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    format!("run-{run}.jsonl")
}

/// The capture files of run `run` in `dir`, sorted.
pub fn run_files(dir: &Path, run: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .filter(|path| CaptureHeader::read(path).is_some_and(|header| header.run == run))
        .collect();
    files.sort();
    files
}

/// How serious a merge problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemSeverity {
    /// The run is not checked: its findings would be about a program that did not run.
    Error,
    /// The run is checked; some calls may be missing.
    Warning,
}

/// Something merging found about the files of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeProblem {
    pub severity: ProblemSeverity,
    pub message: String,
    /// The rank file it is about (an index into the files read), if one.
    file: Option<usize>,
}

/// One run's files as one trace.
#[derive(Debug)]
pub struct MergedRun {
    pub run: String,
    /// How to name the merged trace in messages.
    pub display: String,
    /// The merged trace: a header, then every call line with its rank.
    pub text: Vec<u8>,
    /// Each rank's file, by rank.
    pub ranks: BTreeMap<u32, String>,
    pub problems: Vec<MergeProblem>,
    /// The merged trace on disk: a file holding exactly `text` ([`MergedRun::find_on_disk`]),
    /// named by `display`. `None`: it exists only in memory, and findings are placed on
    /// the rank files' lines ([`MergedRun::place_on_rank_files`]).
    pub on_disk: Option<PathBuf>,
    /// The rank files read, in order.
    files: Vec<RankLayout>,
    /// Where each line of `text` after the header came from: (file, line in that file).
    origins: Vec<(u32, u32)>,
}

/// Where a rank file's lines are, to point findings at them.
#[derive(Debug)]
struct RankLayout {
    display: String,
    path: PathBuf,
    line_starts: Vec<usize>,
    len: usize,
    /// Whether the last line ends with a newline.
    newline_at_end: bool,
}

impl MergedRun {
    /// Whether the run can be checked: no rank is missing or claimed twice.
    pub fn checkable(&self) -> bool {
        !self.problems.iter().any(|p| p.severity == ProblemSeverity::Error)
    }

    /// Use the merged trace on disk, if one is exactly this merge: one of `named`
    /// (`(display, path)`, merged files given to `check`), or `run-RUN.jsonl` next to the
    /// first rank file, where `syncguard trace` writes it. Returns the displays of the
    /// merged files of this run that differ from it (their rank files changed since):
    /// they are not used.
    pub fn find_on_disk(&mut self, named: &[(String, PathBuf)]) -> Vec<String> {
        let mut candidates = named.to_vec();
        if let Some(first) = self.files.first() {
            let name = merged_file_name(&self.run);
            let path = first.path.with_file_name(&name);
            if !candidates.iter().any(|(_, named)| same_file(named, &path)) && path.is_file() {
                candidates.push((sibling_display(&first.display, &name), path));
            }
        }
        let mut stale = Vec::new();
        for (display, path) in candidates {
            if self.on_disk.is_none() && holds(&path, &self.text) {
                self.display = display;
                self.on_disk = Some(path);
            } else if self.on_disk.as_ref().is_none_or(|found| !same_file(found, &path)) {
                stale.push(display);
            }
        }
        if self.on_disk.is_some() {
            stale.clear();
        }
        stale
    }

    /// Move the spans `diagnostics` have on the merged trace (the file `merged`, read
    /// from memory) onto the lines of the rank files the calls came from; what merging
    /// found (on the merged header) goes to the header of the file it is about, or of the
    /// first file. Nothing is moved when the merged trace is on disk.
    pub fn place_on_rank_files(&self, sources: &mut Sources, merged: FileId, diagnostics: &mut [Diagnostic]) {
        if self.on_disk.is_some() || self.files.is_empty() {
            return;
        }
        let mut placer = Placer {
            run: self,
            merged,
            line_starts: std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', &self.text).map(|at| at + 1))
                .collect(),
            ids: vec![None; self.files.len()],
        };
        for diagnostic in diagnostics.iter_mut() {
            let about = self
                .problems
                .iter()
                .find(|problem| problem.message == diagnostic.message)
                .and_then(|problem| problem.file)
                .unwrap_or(0);
            for span in diagnostic.spans_mut() {
                placer.place(sources, span, about);
            }
            if let Some(timeline) = &mut diagnostic.timeline {
                for op in &mut timeline.ops {
                    placer.place(sources, &mut op.span, 0);
                }
            }
        }
    }
}

/// Places spans of a merged trace on its rank files, adding each file to the sources
/// when first needed.
struct Placer<'m> {
    run: &'m MergedRun,
    merged: FileId,
    /// Where each line of the merged text starts.
    line_starts: Vec<usize>,
    ids: Vec<Option<FileId>>,
}

impl Placer<'_> {
    fn file(&mut self, sources: &mut Sources, index: usize) -> FileId {
        *self.ids[index].get_or_insert_with(|| {
            let layout = &self.run.files[index];
            let mut file = SourceFile::deferred(layout.display.clone(), Some(layout.path.clone()));
            file.set_layout(layout.line_starts.clone(), layout.len);
            sources.add(file)
        })
    }

    /// `header_of`: the file whose header stands for the merged header.
    fn place(&mut self, sources: &mut Sources, span: &mut Span, header_of: usize) {
        if span.file != self.merged {
            return;
        }
        let line = self.line_starts.partition_point(|&start| start <= span.range.start) - 1;
        let merged_line =
            self.line_starts[line]..self.line_starts.get(line + 1).copied().unwrap_or(self.run.text.len());
        let Some(&(index, rank_line)) = line.checked_sub(1).and_then(|call| self.run.origins.get(call)) else {
            // The header: the rank file's own header line, whole.
            let index = header_of.min(self.run.files.len() - 1);
            let layout = &self.run.files[index];
            let end = layout.content_end(0);
            *span = Span::new(self.file(sources, index), 0..end);
            return;
        };
        let (index, rank_line) = (index as usize, rank_line as usize);
        let text = &self.run.text[merged_line.start..merged_line.end.min(self.run.text.len())];
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let layout = &self.run.files[index];
        let rank_start = layout.line_starts[rank_line];
        let rank_len = layout.content_end(rank_line) - rank_start;
        // `{"rank": R, ` replaced the line's `{` (and any blank before it); the rest is
        // the rank file's bytes.
        let added = rank_prefix(text);
        let rest = rank_len.saturating_sub(text.len() - added);
        let map = |offset: usize| {
            let within = offset.saturating_sub(merged_line.start).min(text.len());
            // Inside the added prefix: the line's `{`.
            let at = match within.checked_sub(added) {
                Some(after) => rest + after,
                None => rest.saturating_sub(1),
            };
            rank_start + at.min(rank_len)
        };
        let start = map(span.range.start);
        let end = if span.range.end > merged_line.start + text.len() {
            rank_start + rank_len
        } else {
            map(span.range.end)
        };
        *span = Span::new(self.file(sources, index), start..end.max(start));
    }
}

impl RankLayout {
    /// Where line `line`'s text ends (before its newline).
    fn content_end(&self, line: usize) -> usize {
        match self.line_starts.get(line + 1) {
            Some(&next) => next - 1,
            None => self.len - usize::from(self.newline_at_end && self.len > 0),
        }
    }
}

/// The bytes `with_rank` put before the rest of the line: `{"rank": R, ` (or `{"rank": R`
/// before `}`); none when it copied the line as it was.
fn rank_prefix(line: &[u8]) -> usize {
    let Some(rest) = line.strip_prefix(b"{\"rank\": ") else {
        return 0;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let prefix = b"{\"rank\": ".len() + digits;
    if line[prefix..].starts_with(b", ") {
        prefix + 2
    } else {
        prefix
    }
}

/// Whether the file at `path` holds exactly `text` (read in pieces, never whole).
fn holds(path: &Path, text: &[u8]) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file.metadata().map(|m| m.len()).ok() != Some(text.len() as u64) {
        return false;
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut buffer = vec![0u8; 1 << 20];
    let mut at = 0;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return at == text.len(),
            Ok(n) => {
                if text.get(at..at + n) != Some(&buffer[..n]) {
                    return false;
                }
                at += n;
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(b).ok())
            .is_some_and(|(a, b)| a == b)
}

/// `name` in the folder of the file shown as `display`, shown the same way.
fn sibling_display(display: &str, name: &str) -> String {
    let dir = Path::new(display)
        .parent()
        .map(|dir| dir.display().to_string())
        .filter(|dir| !dir.is_empty())
        .unwrap_or_else(|| ".".to_string());
    format!("{dir}/{name}")
}

/// One rank file, read.
struct RankFile {
    display: String,
    header: CaptureHeader,
    /// The closing line's rank and world size, when the process closed the file.
    closed: Option<CaptureLine>,
    /// How many call lines (and anything malformed) the file holds, without header and
    /// closing line.
    calls: usize,
    /// The call lines merged: all of them, or those a skeleton kept ([`RankFileParts`]).
    lines: Vec<KeptLine>,
    layout: RankLayout,
}

/// A call line of a rank file: its place among the file's call lines (line `position`
/// is the file's line `position + 1`), its merge key ([`line_keys`]) and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptLine {
    pub position: u32,
    pub key: u64,
    pub text: Vec<u8>,
}

/// A rank file as merging needs it: its first and closing lines, the layout of its
/// lines (to place findings on them), and its call lines with their merge keys. Read
/// whole from a file ([`RankFileRead::read`]), every call line is there; the per-rank
/// pass of a two-pass check (docs/SCALE.md) keeps only some, and merging the parts it
/// kept orders them exactly as merging the whole files would, since each line's key is
/// computed on its whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankFileParts {
    pub display: String,
    pub path: PathBuf,
    /// The first line (the capture's header), without its newline.
    pub header: Vec<u8>,
    /// The last line, when it is the closing line of a capture.
    pub closing: Option<Vec<u8>>,
    /// How many call lines the file holds (between header and closing line).
    pub calls: usize,
    /// The call lines kept, in file order.
    pub lines: Vec<KeptLine>,
    /// Where each line of the file starts, its length, and whether it ends with a newline.
    pub line_starts: Vec<usize>,
    pub len: usize,
    pub newline_at_end: bool,
}

/// A rank file of a run, read or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankFileRead {
    Read(RankFileParts),
    /// It could not be read: `error` says why (an error of the run).
    Unreadable {
        display: String,
        path: PathBuf,
        error: String,
    },
}

impl RankFileRead {
    /// Read the rank file at `path`, every call line kept.
    pub fn read(display: &str, path: &Path) -> RankFileRead {
        match std::fs::read(path).and_then(|bytes| RankFileParts::parse(display, path, &bytes)) {
            Ok(parts) => RankFileRead::Read(parts),
            Err(err) => RankFileRead::Unreadable {
                display: display.to_string(),
                path: path.to_path_buf(),
                error: err.to_string(),
            },
        }
    }

    fn display_and_path(&self) -> (&str, &Path) {
        match self {
            RankFileRead::Read(parts) => (&parts.display, &parts.path),
            RankFileRead::Unreadable { display, path, .. } => (display, path),
        }
    }
}

impl RankFileParts {
    /// The parts of the rank file `bytes` (read from `path`, shown as `display`), every
    /// call line kept; an error when its first line is not a capture's header.
    pub fn parse(display: &str, path: &Path, bytes: &[u8]) -> std::io::Result<RankFileParts> {
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        if lines.last().is_some_and(|line| line.is_empty()) {
            lines.pop();
        }
        let line_starts = std::iter::once(0)
            .chain(
                memchr::memchr_iter(b'\n', bytes)
                    .map(|at| at + 1)
                    .filter(|&at| at < bytes.len()),
            )
            .collect();
        let first = if lines.is_empty() { &[][..] } else { lines.remove(0) };
        CaptureHeader::parse(first)
            .ok_or_else(|| std::io::Error::other("its first line is not the header `syncguard trace` writes"))?;
        let closing = lines
            .last()
            .filter(|line| closing_line(line).is_some())
            .map(|line| line.to_vec());
        if closing.is_some() {
            lines.pop();
        }
        let keys = line_keys(&lines);
        Ok(RankFileParts {
            display: display.to_string(),
            path: path.to_path_buf(),
            header: first.to_vec(),
            closing,
            calls: lines.len(),
            lines: lines
                .iter()
                .zip(keys)
                .enumerate()
                .map(|(position, (line, key))| KeptLine {
                    position: position as u32,
                    key,
                    text: line.to_vec(),
                })
                .collect(),
            line_starts,
            len: bytes.len(),
            newline_at_end: bytes.ends_with(b"\n"),
        })
    }
}

fn closing_line(line: &[u8]) -> Option<CaptureLine> {
    serde_json::from_slice::<CaptureLine>(line)
        .ok()
        .filter(|line| line.syncguard_capture_end.is_some())
}

impl RankFile {
    fn from_parts(parts: RankFileParts) -> std::io::Result<RankFile> {
        let header = CaptureHeader::parse(&parts.header)
            .ok_or_else(|| std::io::Error::other("its first line is not the header `syncguard trace` writes"))?;
        let closed = parts.closing.as_deref().and_then(closing_line);
        Ok(RankFile {
            display: parts.display.clone(),
            header,
            closed,
            calls: parts.calls,
            lines: parts.lines,
            layout: RankLayout {
                display: parts.display,
                path: parts.path,
                line_starts: parts.line_starts,
                len: parts.len,
                newline_at_end: parts.newline_at_end,
            },
        })
    }

    fn rank(&self) -> Option<u32> {
        self.closed.as_ref().and_then(|c| c.rank).or(self.header.rank)
    }

    fn world_size(&self) -> Option<u32> {
        self.closed
            .as_ref()
            .and_then(|c| c.world_size)
            .or(self.header.world_size)
    }
}

/// Merge the files of one run (`(display, path)` each, all with the same run in their
/// header), taken in the order of their file names. A file that cannot be read is an
/// error of the run. The merge is shown as `run-RUN.jsonl` in the first file's folder,
/// where `syncguard trace` writes it; it is [`MergedRun::on_disk`] only once
/// [`MergedRun::find_on_disk`] found it there.
pub fn merge_run(run: &str, files: &[(String, PathBuf)]) -> MergedRun {
    let read = files
        .iter()
        .map(|(display, path)| RankFileRead::read(display, path))
        .collect();
    merge_run_parts(run, read)
}

/// [`merge_run`] of files already read, whole or as a skeleton kept them
/// ([`RankFileParts`]).
pub fn merge_run_parts(run: &str, mut files: Vec<RankFileRead>) -> MergedRun {
    files.sort_by(|a, b| {
        let ((a_display, a), (b_display, b)) = (a.display_and_path(), b.display_and_path());
        (a.file_name(), a_display).cmp(&(b.file_name(), b_display))
    });
    let mut problems = Vec::new();
    let mut read = Vec::new();
    let first_display = files.first().map(|file| file.display_and_path().0.to_string());
    for file in files {
        let parts = match file {
            RankFileRead::Read(parts) => parts,
            RankFileRead::Unreadable { display, error, .. } => {
                problems.push(self::error(format!("{display}: cannot be read: {error}"), None));
                continue;
            }
        };
        let display = parts.display.clone();
        match RankFile::from_parts(parts) {
            Ok(file) => read.push(file),
            Err(err) => problems.push(self::error(format!("{display}: cannot be read: {err}"), None)),
        }
    }
    let ranks = assign_ranks(&read, &mut problems);
    let world_size = world_size(&read, &ranks, &mut problems);
    for (index, file) in read.iter().enumerate() {
        closing_problems(index, file, &mut problems);
    }
    let display = sibling_display(first_display.as_deref().unwrap_or(""), &merged_file_name(run));
    let mut text = header_line(run, world_size, &ranks, &read);
    let mut origins = Vec::new();
    for (rank, index, position, line) in ordered_lines(&read, &ranks) {
        with_rank(&mut text, rank, line);
        // The file's line: after its header.
        origins.push((index as u32, position as u32 + 1));
    }
    MergedRun {
        run: run.to_string(),
        display,
        text,
        ranks: ranks
            .iter()
            .map(|(&rank, &index)| (rank, read[index].display.clone()))
            .collect(),
        problems,
        on_disk: None,
        files: read.into_iter().map(|file| file.layout).collect(),
        origins,
    }
}

fn error(message: String, file: Option<usize>) -> MergeProblem {
    MergeProblem {
        severity: ProblemSeverity::Error,
        message,
        file,
    }
}

fn warning(message: String, file: Option<usize>) -> MergeProblem {
    MergeProblem {
        severity: ProblemSeverity::Warning,
        message,
        file,
    }
}

/// Each file's rank: a lone file without one is rank 0; otherwise a file without a rank
/// or a second file of a rank is reported and left out. A child forked from a rank's
/// process that never told a rank of its own is left out with a warning: it is not its
/// parent (its calls run in a process of their own), and it is no other rank.
fn assign_ranks(files: &[RankFile], problems: &mut Vec<MergeProblem>) -> BTreeMap<u32, usize> {
    let mut ranks = BTreeMap::new();
    for (index, file) in files.iter().enumerate() {
        let rank = match (file.rank(), file.header.forked_from) {
            (Some(rank), _) => rank,
            (None, Some((parent, parent_rank))) => {
                let of_rank = parent_rank.map_or(String::new(), |rank| format!(" (rank {rank})"));
                problems.push(warning(
                    format!(
                        "{}: {} call{} of a process forked from pid {parent}{of_rank} that never told a rank of \
                     its own are left out of the check",
                        file.display,
                        file.calls,
                        if file.calls == 1 { "" } else { "s" }
                    ),
                    Some(index),
                ));
                continue;
            }
            (None, None) if files.len() == 1 => 0,
            (None, None) => {
                problems.push(error(
                    format!(
                        "{}: the process (pid {} on {}) never told its rank (no `HcclCommInitRootInfo` or \
                     `HcclGetRankId`, no RANK_ID or RANK variable): its calls cannot be placed",
                        file.display, file.header.pid, file.header.host
                    ),
                    Some(index),
                ));
                continue;
            }
        };
        if let Some(&first) = ranks.get(&rank) {
            let first: &RankFile = &files[first];
            problems.push(error(
                format!(
                    "{} and {} are both rank {rank}: two processes of one run claim the same rank",
                    first.display, file.display
                ),
                Some(index),
            ));
            continue;
        }
        ranks.insert(rank, index);
    }
    ranks
}

/// The world size the files agree on (else the ranks seen); every rank below it must
/// have a file.
fn world_size(files: &[RankFile], ranks: &BTreeMap<u32, usize>, problems: &mut Vec<MergeProblem>) -> u32 {
    let mut told: Vec<u32> = files.iter().filter_map(RankFile::world_size).collect();
    told.sort_unstable();
    told.dedup();
    if told.len() > 1 {
        problems.push(error(
            format!(
                "the files do not agree on the world size ({}): they are not one run",
                told.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            ),
            None,
        ));
    }
    let seen = ranks.keys().next_back().map_or(1, |&rank| rank + 1);
    let world = told.last().copied().unwrap_or(seen).max(seen);
    let missing: Vec<String> = (0..world)
        .filter(|rank| !ranks.contains_key(rank))
        .map(|rank| rank.to_string())
        .collect();
    if !missing.is_empty() {
        problems.push(error(format!(
            "rank{} {} of {world} ha{} no trace file: the run is not checked, as every wait on a missing rank would \
             look like a deadlock (copy the missing ranks' files next to the others)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "s" } else { "ve" },
        ), None));
    }
    world
}

fn closing_problems(index: usize, file: &RankFile, problems: &mut Vec<MergeProblem>) {
    match &file.closed {
        None => problems.push(warning(
            format!(
                "{}: the process (pid {}) did not close its trace: it was killed (SIGKILL, a crash) or is still \
                 running, so its last calls may be missing",
                file.display, file.header.pid
            ),
            Some(index),
        )),
        Some(closing) if closing.dropped.unwrap_or(0) > 0 => problems.push(warning(
            format!(
                "{}: {} line{} could not be written (a failed write or an oversized line): calls are missing",
                file.display,
                closing.dropped.unwrap_or(0),
                if closing.dropped == Some(1) { "" } else { "s" }
            ),
            Some(index),
        )),
        Some(_) => {}
    }
}

/// The merged trace's header; `merged` names each rank's file, by its file name when
/// all are in one folder (next to the merged file `syncguard trace` writes), so that the
/// merge made by `trace` and the one `check` makes again are the same bytes.
fn header_line(run: &str, world_size: u32, ranks: &BTreeMap<u32, usize>, files: &[RankFile]) -> Vec<u8> {
    let one_folder = files
        .windows(2)
        .all(|pair| pair[0].layout.path.parent() == pair[1].layout.path.parent());
    let name = |file: &RankFile| match file.layout.path.file_name() {
        Some(name) if one_folder => name.to_string_lossy().into_owned(),
        _ => file.display.clone(),
    };
    let files: serde_json::Map<String, serde_json::Value> = ranks
        .iter()
        .map(|(rank, &index)| (rank.to_string(), name(&files[index]).into()))
        .collect();
    let header = serde_json::json!({
        "syncguard_trace": 1,
        "world_size": world_size,
        "run": run,
        "merged": files,
    });
    let mut line = header.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Every call line of the ranked files, ordered by their keys ([`line_keys`]), with its
/// rank, file and place among the file's call lines.
fn ordered_lines<'f>(files: &'f [RankFile], ranks: &BTreeMap<u32, usize>) -> Vec<(u32, usize, usize, &'f [u8])> {
    let mut keyed: Vec<(u64, usize, usize, u32, &[u8])> = Vec::new();
    for (&rank, &index) in ranks {
        for line in &files[index].lines {
            keyed.push((line.key, index, line.position as usize, rank, &line.text));
        }
    }
    keyed.sort_by_key(|&(key, index, position, ..)| (key, index, position));
    keyed
        .into_iter()
        .map(|(_, index, position, rank, line)| (rank, index, position, line))
        .collect()
}

/// The merge key of each call line of one rank file: its `ts`, but never below the
/// previous key of its host thread, so each thread keeps its file order even if the
/// clock stepped back; a line without `ts` takes the key of the line before it. Lines
/// are merged by (key, file, place in the file). A key depends on the lines before it in
/// its file, so a skeleton computes it on the whole file.
pub fn line_keys(lines: &[&[u8]]) -> Vec<u64> {
    let mut keys = Vec::with_capacity(lines.len());
    let mut last_of_thread: BTreeMap<&[u8], u64> = BTreeMap::new();
    let mut last = 0u64;
    for line in lines {
        let thread = field(line, b"\"thread\":").unwrap_or(b"");
        let floor = last_of_thread.get(thread).copied().unwrap_or(0);
        let key = field(line, b"\"ts\":")
            .and_then(|ts| std::str::from_utf8(ts).ok()?.parse::<u64>().ok())
            .unwrap_or(last)
            .max(floor);
        last_of_thread.insert(thread, key);
        last = key;
        keys.push(key);
    }
    keys
}

/// The raw value after `name` in a line the capture wrote (a number, up to the next
/// `,` or `}`); `None` when absent.
fn field<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let at = memchr::memmem::find(line, name)? + name.len();
    let rest = &line[at..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}').unwrap_or(rest.len());
    Some(rest[..end].trim_ascii())
}

/// `{"rank": R, ...the line's fields}`; a line that is not an object is copied as it is,
/// so that reading it reports what is wrong.
fn with_rank(text: &mut Vec<u8>, rank: u32, line: &[u8]) {
    let trimmed = line.trim_ascii_start();
    match trimmed.strip_prefix(b"{") {
        Some(rest) => {
            text.extend_from_slice(format!("{{\"rank\": {rank}").as_bytes());
            if !rest.trim_ascii_start().starts_with(b"}") {
                text.extend_from_slice(b", ");
            }
            text.extend_from_slice(rest);
        }
        None => text.extend_from_slice(line),
    }
    text.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> (String, PathBuf) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        (name.to_string(), path)
    }

    const HEADER: &str = r#"{"syncguard_trace": 1, "capture": "syncguard trace", "run": "r1", "host": "h", "pid": 7"#;

    #[test]
    fn lines_take_their_file_rank_and_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.jsonl",
            &format!(
                "{HEADER}, \"rank\": 1}}\n{{\"api\": \"x\", \"thread\": 5, \"ts\": 30, \"args\": {{}}}}\n{{\"syncguard_capture_end\": 1, \"rank\": 1, \"world_size\": 2}}\n"
            ),
        );
        let b = write(
            dir.path(),
            "b.jsonl",
            &format!(
                "{HEADER}}}\n{{\"api\": \"y\", \"thread\": 9, \"ts\": 20, \"args\": {{}}}}\n{{\"api\": \"z\", \"thread\": 9, \"ts\": 10, \"args\": {{}}}}\n{{\"syncguard_capture_end\": 1, \"rank\": 0, \"world_size\": 2}}\n"
            ),
        );
        let merged = merge_run("r1", &[a, b]);
        assert!(merged.problems.is_empty(), "{:?}", merged.problems);
        let text = String::from_utf8(merged.text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("\"world_size\":2"), "{}", lines[0]);
        // z's clock went back: it stays after y, its thread's earlier call.
        assert!(lines[1].starts_with("{\"rank\": 0, \"api\": \"y\""), "{}", lines[1]);
        assert!(lines[2].starts_with("{\"rank\": 0, \"api\": \"z\""), "{}", lines[2]);
        assert!(lines[3].starts_with("{\"rank\": 1, \"api\": \"x\""), "{}", lines[3]);
        assert_eq!(merged.ranks.len(), 2);
    }

    #[test]
    fn missing_and_duplicate_ranks_and_unclosed_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.jsonl",
            &format!("{HEADER}, \"rank\": 0, \"world_size\": 3}}\n"),
        );
        let b = write(
            dir.path(),
            "b.jsonl",
            &format!("{HEADER}, \"rank\": 0}}\n{{\"api\": \"x\"\n"),
        );
        let merged = merge_run("r1", &[a, b]);
        let messages: Vec<&str> = merged.problems.iter().map(|p| p.message.as_str()).collect();
        assert!(messages.iter().any(|m| m.contains("both rank 0")), "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.contains("ranks 1, 2 of 3 have no trace file")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("did not close its trace")),
            "{messages:?}"
        );
        assert!(!merged.checkable());
    }

    #[test]
    fn a_truncated_line_is_kept_for_the_reader_to_report() {
        let mut text = Vec::new();
        with_rank(&mut text, 3, br#"{"api": "aclrtRecordEv"#);
        with_rank(&mut text, 3, b"{}");
        with_rank(&mut text, 3, b"[1]");
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "{\"rank\": 3, \"api\": \"aclrtRecordEv\n{\"rank\": 3}\n[1]\n"
        );
    }

    /// Two closed rank files of run r1 in `dir`; rank 0's second call is indented, and
    /// rank 1's call follows a blank line.
    fn two_ranks(dir: &Path) -> Vec<(String, PathBuf)> {
        let b = write(
            dir,
            "b.jsonl",
            &format!(
                "{HEADER}, \"rank\": 1}}\n\n{{\"api\": \"x\", \"thread\": 5, \"ts\": 15, \"args\": {{}}}}\n{{\"syncguard_capture_end\": 1, \"rank\": 1, \"world_size\": 2}}\n"
            ),
        );
        let a = write(
            dir,
            "a.jsonl",
            &format!(
                "{HEADER}, \"rank\": 0}}\n{{\"api\": \"y\", \"thread\": 9, \"ts\": 10, \"args\": {{}}}}\n  {{\"api\": \"z\", \"thread\": 9, \"ts\": 20, \"args\": {{}}}}\n{{\"syncguard_capture_end\": 1, \"rank\": 0, \"world_size\": 2}}\n"
            ),
        );
        vec![b, a]
    }

    #[test]
    fn a_merge_on_disk_is_used_only_while_it_holds_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<(String, PathBuf)> = two_ranks(dir.path())
            .into_iter()
            .map(|(name, path)| (format!("traces/{name}"), path))
            .collect();
        let mut merged = merge_run("r1", &files);
        assert_eq!(merged.display, "traces/run-r1.jsonl");
        assert!(merged.find_on_disk(&[]).is_empty());
        assert_eq!(merged.on_disk, None, "no merged file yet");
        // What `syncguard trace` writes: the rank files by their file names.
        let text = String::from_utf8(merged.text.clone()).unwrap();
        assert!(
            text.starts_with(r#"{"merged":{"0":"a.jsonl","1":"b.jsonl"},"run":"r1""#),
            "{text}"
        );
        let path = dir.path().join("run-r1.jsonl");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(TraceFile::read(&path), TraceFile::Merged("r1".into()));
        assert!(matches!(TraceFile::read(&files[0].1), TraceFile::Capture(_)));
        assert!(merged.find_on_disk(&[]).is_empty());
        assert_eq!(merged.on_disk.as_deref(), Some(path.as_path()));
        assert_eq!(merged.display, "traces/run-r1.jsonl");
        // Changed since: not used, and named.
        std::fs::write(&path, text.replace("\"ts\": 15", "\"ts\": 16")).unwrap();
        let mut merged = merge_run("r1", &files);
        let named = [("x/run-r1.jsonl".to_string(), path.clone())];
        assert_eq!(merged.find_on_disk(&named), ["x/run-r1.jsonl"]);
        assert_eq!(merged.on_disk, None);
    }

    use crate::test_rule::Rule;

    #[test]
    fn findings_on_a_merge_in_memory_go_to_the_rank_files_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut merged = merge_run("r1", &two_ranks(dir.path()));
        assert!(merged.problems.is_empty(), "{:?}", merged.problems);
        let text = String::from_utf8(merged.text.clone()).unwrap();
        let mut sources = Sources::default();
        let file = sources.add(SourceFile::new(merged.display.clone(), text.clone()));
        let line = |n: usize| sources.get(file).line_bytes(n);
        // z is rank 0's second call: a span on its `"api"` key, one on the whole line, one
        // on the header.
        let z = (1..6)
            .map(line)
            .find(|range| text[range.clone()].contains("\"z\""))
            .unwrap();
        assert!(text[z.clone()].starts_with("{\"rank\": 0, \"api\": \"z\""));
        let key = z.start + "{\"rank\": 0, ".len();
        let mut diagnostic = Diagnostic::new(&Rule, Span::new(file, key..key + 5), "m");
        diagnostic.related.push(syncguard_model::diagnostic::Related {
            span: Span::new(file, z.start..z.end - 1),
            message: "whole".into(),
        });
        diagnostic.related.push(syncguard_model::diagnostic::Related {
            span: Span::new(file, line(0).start..line(0).end - 1),
            message: "header".into(),
        });
        // x, rank 1's call, is line 3 of b.jsonl: after the header and a blank line.
        let x = (1..5)
            .map(line)
            .find(|range| text[range.clone()].contains("\"x\""))
            .unwrap();
        diagnostic.related.push(syncguard_model::diagnostic::Related {
            span: Span::new(file, x.start..x.end - 1),
            message: "x".into(),
        });
        let mut diagnostics = [diagnostic];
        merged.place_on_rank_files(&mut sources, file, &mut diagnostics);
        sources.load_deferred();
        let [diagnostic] = diagnostics;
        let shown = |span: &Span| {
            let source = sources.get(span.file);
            (source.path.clone(), source.text[span.range.clone()].to_string())
        };
        assert_eq!(shown(&diagnostic.primary), ("a.jsonl".into(), "\"api\"".into()));
        assert_eq!(
            shown(&diagnostic.related[0].span),
            (
                "a.jsonl".into(),
                r#"{"api": "z", "thread": 9, "ts": 20, "args": {}}"#.into()
            )
        );
        assert_eq!(
            sources
                .get(diagnostic.primary.file)
                .line_col(diagnostic.primary.range.start),
            (3, 4)
        );
        let (path, header) = shown(&diagnostic.related[1].span);
        assert_eq!(path, "a.jsonl");
        assert!(header.starts_with(HEADER) && !header.ends_with('\n'), "{header}");
        let x = &diagnostic.related[2].span;
        assert_eq!(shown(x).0, "b.jsonl");
        assert_eq!(sources.get(x.file).line_col(x.range.start), (3, 1));
        assert!(shown(x).1.starts_with("{\"api\": \"x\"") && shown(x).1.ends_with("{}}"));
        // Nothing moves once the merge is on disk.
        merged.on_disk = Some(dir.path().join("run-r1.jsonl"));
        let mut unmoved = [Diagnostic::new(&Rule, Span::new(file, z.clone()), "m")];
        merged.place_on_rank_files(&mut sources, file, &mut unmoved);
        assert_eq!(unmoved[0].primary.file, file);
    }

    #[test]
    fn only_capture_headers_are_captures() {
        assert!(CaptureHeader::parse(format!("{HEADER}}}").as_bytes()).is_some());
        assert!(CaptureHeader::parse(br#"{"syncguard_trace": 1, "world_size": 2}"#).is_none());
        assert!(CaptureHeader::parse(b"not json").is_none());
    }
}
