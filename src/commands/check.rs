//! `syncguard check`: read every input, lower it, report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syncguard_analyzer::render::{
    FindingGraph, HtmlReport, RunSection, SarifTool, TextOptions, render_chrome_trace, render_concise, render_dot,
    render_dot_graphs, render_github, render_html, render_json, render_proofs, render_sarif, render_text,
};
use syncguard_analyzer::smt::{Proof, Unproved};
use syncguard_analyzer::timeline::Timeline;
use syncguard_analyzer::{
    CheckedFile, Diagnostic, Overrides, Severity, Sources, check_merged_run, check_sync_bytes_with, check_trace_reader,
};

use super::baseline::BaselineArgs;
use super::output;
use super::progress::Progress;
use crate::{Format, Outcome};
use syncguard_project::Progress as _;
use syncguard_project::inputs::{Input, InputKind, collect_inputs, report as report_io};
use syncguard_project::selection::Selection;
use syncguard_project::sources::{ReadSources, SourceOptions};

/// How findings are shown, and which of them fail the run.
#[derive(Clone, Debug)]
pub struct Report {
    pub format: Format,
    pub color: bool,
    pub explain: bool,
    pub deny_warnings: bool,
    /// Findings only: no proof lines, no summary.
    pub quiet: bool,
    /// Every proof line, also for files with findings.
    pub show_proofs: bool,
    /// A count of findings per rule after them.
    pub statistics: bool,
    /// Where a document format is written (standard output when `None`); for `dot`, a
    /// directory (existing, or named with a trailing `/`) takes a file per finding.
    pub output: Option<PathBuf>,
    /// Open the written HTML report in the browser (written to a temporary file when
    /// there is no `output`).
    pub open: bool,
    /// What a document is of: "syncguard check examples/".
    pub title: String,
}

/// What `check` reports of what it found (`verify-then-run` reports everything).
#[derive(Clone, Debug, Default)]
pub struct Lint {
    pub selection: Selection,
    /// The configuration file's exclusions, per-file ignores and severities.
    pub config: std::sync::Arc<syncguard_project::config::Config>,
    pub baseline: BaselineArgs,
    /// Exit 0 whatever is found (still 2 when an input cannot be read).
    pub exit_zero: bool,
}

impl Report {
    /// Whether `diagnostics` hold a finding that fails the run.
    pub fn fails(&self, diagnostics: &[Diagnostic]) -> bool {
        diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error || (self.deny_warnings && d.severity == Severity::Warning))
    }
}

/// What checking found, over every file.
#[derive(Default)]
pub struct Findings {
    pub diagnostics: Vec<Diagnostic>,
    pub proofs: Vec<Proof>,
    pub unproved: Vec<Unproved>,
    pub files: usize,
    /// `verify-then-run --format html`: the run's window (what ran, where it stopped).
    pub run_timeline: Option<Timeline>,
}

impl Findings {
    pub fn add(&mut self, checked: CheckedFile) {
        let CheckedFile {
            program,
            diagnostics,
            proofs,
            unproved,
        } = checked;
        // Freeing a large program (one statement per call of a trace): beside the next
        // file and the report, not before.
        syncguard_analyzer::pool::drop_in_background(program);
        self.diagnostics.extend(diagnostics);
        self.proofs.extend(proofs);
        self.unproved.extend(unproved);
        self.files += 1;
    }

    /// Print in the chosen format; `extra` is added to the JSON object (a run's report).
    pub fn print(&mut self, sources: &mut Sources, report: &Report, extra: Option<(&str, serde_json::Value)>) {
        Diagnostic::sort(&mut self.diagnostics);
        match report.format {
            Format::Text => {
                print_diagnostics(&self.diagnostics, sources, report);
                if report.statistics {
                    output::print(&statistics(&self.diagnostics));
                }
                if report.quiet {
                    return;
                }
                // A file's findings come first: its proofs only when asked for.
                let shown: Vec<Proof> = self
                    .proofs
                    .iter()
                    .filter(|proof| {
                        report.show_proofs || !self.diagnostics.iter().any(|d| d.primary.file == proof.span.file)
                    })
                    .cloned()
                    .collect();
                output::print(&render_proofs(&shown, &self.unproved, sources, report.explain));
                output::println(&summary_line(&self.diagnostics, self.files));
            }
            Format::Json => {
                let mut json = render_json(&self.diagnostics, &self.proofs, &self.unproved, sources, self.files);
                if let Some((key, value)) = extra {
                    json[key] = value;
                }
                let json = serde_json::to_string_pretty(&json).expect("JSON values always serialize");
                write_document(&json, report);
            }
            Format::Html => {
                sources.load_deferred();
                let html = HtmlReport {
                    title: report.title.clone(),
                    files_checked: self.files,
                    proofs: self.proofs.clone(),
                    unproved: self.unproved.clone(),
                    run: extra
                        .and_then(|(key, value)| (key == "run").then(|| run_section(&value)))
                        .map(|section| RunSection {
                            timeline: self.run_timeline.take(),
                            ..section
                        }),
                };
                let page = render_html(&self.diagnostics, sources, &html);
                match (&report.output, report.open) {
                    (_, false) => write_document(&page, report),
                    (Some(path), true) => {
                        write_file(path, &page);
                        open_in_browser(path);
                    }
                    (None, true) => {
                        let path = write_temporary_report(&page);
                        output::println(&path.display().to_string());
                        open_in_browser(&path);
                    }
                }
            }
            Format::ChromeTrace => {
                sources.load_deferred();
                let trace = render_chrome_trace(&self.diagnostics, sources);
                write_document(
                    &serde_json::to_string(&trace).expect("JSON values always serialize"),
                    report,
                );
            }
            Format::Dot => {
                sources.load_deferred();
                match report.output.as_deref().filter(|path| names_directory(path)) {
                    Some(dir) => write_graphs(dir, &render_dot_graphs(&self.diagnostics, sources)),
                    None => write_document(&render_dot(&self.diagnostics, sources), report),
                }
            }
            Format::Concise => {
                output::print(&render_concise(&self.diagnostics, sources));
                if report.statistics {
                    output::print(&statistics(&self.diagnostics));
                }
            }
            Format::Github => output::print(&render_github(&self.diagnostics, sources)),
            Format::Sarif => {
                // Fingerprints read the primary lines of traces, which are streamed.
                sources.load_deferred();
                let root = std::env::current_dir().unwrap_or_default();
                let tool = SarifTool {
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: Some(env!("CARGO_PKG_HOMEPAGE")).filter(|uri| !uri.is_empty()),
                };
                let sarif = render_sarif(&self.diagnostics, sources, &root, &tool);
                write_document(
                    &serde_json::to_string_pretty(&sarif).expect("JSON values always serialize"),
                    report,
                );
            }
        }
    }
}

/// A whole document, to `--output` or standard output. A file that cannot be written
/// ends the command with exit 2, as standard output does.
fn write_document(document: &str, report: &Report) {
    match &report.output {
        Some(path) => write_file(path, document),
        None => output::println(document),
    }
}

/// `document` as the whole of `path`; exit 2 when it cannot be written.
fn write_file(path: &Path, document: &str) {
    if let Err(err) = std::fs::write(path, format!("{document}\n")) {
        cannot_write(path, &err);
    }
}

/// Say what could not be written and end the command with exit 2, as a failed write to
/// standard output does.
fn cannot_write(path: &Path, err: &std::io::Error) -> ! {
    eprintln!("syncguard: cannot write {}: {err}", path.display());
    std::process::exit(crate::Outcome::Failure as i32);
}

/// Whether `--output` names a directory to write a file per finding in: one that
/// exists, or a path ending in a separator (`-o graphs/`), which is created.
fn names_directory(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    path.is_dir() || text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR)
}

/// Each finding's graph as `dir/001-SG501.dot`: numbered in report order, padded so
/// that the names sort in it. Other files in `dir` are left as they are.
fn write_graphs(dir: &Path, graphs: &[FindingGraph]) {
    if let Err(err) = std::fs::create_dir_all(dir) {
        cannot_write(dir, &err);
    }
    let width = graphs.len().to_string().len().max(3);
    for graph in graphs {
        let path = dir.join(format!("{:0width$}-{}.dot", graph.number, graph.code));
        if let Err(err) = std::fs::write(&path, &graph.dot) {
            cannot_write(&path, &err);
        }
    }
}

/// `--open` without `--output`: the page goes to a new file in the temporary
/// directory, `syncguard-report-XXXXXX.html`, created exclusively (never an existing
/// file or link) and kept after exit, since the browser reads it after syncguard ends.
fn write_temporary_report(page: &str) -> PathBuf {
    use std::io::Write as _;
    let created = tempfile::Builder::new()
        .prefix("syncguard-report-")
        .suffix(".html")
        .tempfile()
        .and_then(|file| file.keep().map_err(|err| err.error));
    let (mut file, path) = match created {
        Ok(kept) => kept,
        Err(err) => cannot_write(&std::env::temp_dir(), &err),
    };
    if let Err(err) = file.write_all(page.as_bytes()).and_then(|()| file.write_all(b"\n")) {
        cannot_write(&path, &err);
    }
    path
}

/// Launch the browser on `path` without waiting for it: `$BROWSER`, else the desktop's
/// opener. A browser that cannot be started is said, and the report stays written.
fn open_in_browser(path: &Path) {
    let opener = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty());
    let opener = opener.unwrap_or_else(|| {
        if cfg!(target_os = "macos") {
            "open".into()
        } else if cfg!(windows) {
            "explorer".into()
        } else {
            "xdg-open".into()
        }
    });
    let started = std::process::Command::new(&opener)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(err) = started {
        eprintln!(
            "syncguard: cannot start `{opener}` to open {}: {err} (set $BROWSER)",
            path.display()
        );
    }
}

/// The run section of an HTML report, from the run's JSON summary (`verify-then-run`):
/// `null` when verification refused to run, `{"error": ...}` when it could not.
fn run_section(run: &serde_json::Value) -> RunSection {
    let text = |key: &str| run[key].as_str().map(str::to_string);
    if run.is_null() {
        return RunSection {
            summary: "not run: the program did not verify, so nothing was executed".into(),
            ..RunSection::default()
        };
    }
    if let Some(error) = text("error") {
        return RunSection {
            summary: format!("not run: {error}"),
            ..RunSection::default()
        };
    }
    let mut context = text("backend").unwrap_or_default();
    if let Some(params) = text("params") {
        context = format!("{context}, {params}");
    }
    let faults: Vec<String> = run["faults"]
        .as_array()
        .map(|faults| faults.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let outcome = match (run["findings"].as_u64().unwrap_or(0), faults.len()) {
        (0, 0) => "completed: no hang, no race, no lost signal".to_string(),
        (0, n) => format!(
            "stopped by {n} failed call{} (below: where it hung)",
            if n == 1 { "" } else { "s" }
        ),
        (n, _) => format!("{n} run-time finding{}", if n == 1 { "" } else { "s" }),
    };
    RunSection {
        summary: format!(
            "ran on {context}: {} calls in {:.1} ms, {outcome}",
            run["calls"].as_u64().unwrap_or(0),
            run["elapsed_ms"].as_f64().unwrap_or(0.0)
        ),
        faults,
        timeline: None,
    }
}

/// Render `diagnostics` as text on standard output.
pub fn print_diagnostics(diagnostics: &[Diagnostic], sources: &mut Sources, report: &Report) {
    if !diagnostics.is_empty() {
        sources.load_deferred();
    }
    output::print(&render_text(diagnostics, sources, TextOptions { color: report.color }));
}

pub fn run(paths: &[PathBuf], overrides: &Overrides, report: &Report, options: &SourceOptions, lint: &Lint) -> Outcome {
    let (mut inputs, mut failures) = collect_inputs(paths);
    // A file named on the command line is checked even if the configuration excludes it.
    inputs.retain(|input| input.named || !lint.config.excludes(&input.file));
    let mut sources = Sources::default();
    let mut findings = Findings::default();
    let (source_inputs, inputs): (Vec<&Input>, Vec<&Input>) =
        inputs.iter().partition(|input| input.kind == InputKind::Source);
    let (dump_inputs, inputs): (Vec<&Input>, Vec<&Input>) = inputs
        .into_iter()
        .partition(|input| input.kind == InputKind::FlightRecorder);
    let (profile_inputs, inputs): (Vec<&Input>, Vec<&Input>) = inputs
        .into_iter()
        .partition(|input| matches!(input.kind, InputKind::Profile(_)));
    let progress = Progress::for_terminal(report.quiet);
    let (runs, inputs) = capture_runs(inputs);
    progress.add_work(runs.len() + inputs.len());
    for (run, files) in &runs {
        progress.start(run);
        let mut merged = syncguard_trace::merge::merge_run(run, &files.ranks);
        for stale in merged.find_on_disk(&files.merged) {
            progress.suspend(|| {
                eprintln!(
                    "syncguard: {stale} is not the merge of run {run}'s rank files (they changed after `syncguard \
                     trace` wrote it): it is skipped, and the rank files are checked"
                )
            });
        }
        findings.add(check_merged_run(&mut sources, &merged, overrides));
        progress.finish_one();
    }
    for input in inputs {
        progress.start(&input.display);
        match check_input(&mut sources, input, overrides) {
            Ok(checked) => findings.add(checked),
            Err(err) => failures += progress.suspend(|| report_io(&input.file, &err)),
        }
        progress.finish_one();
    }
    if !dump_inputs.is_empty() {
        failures += check_flight_recorder_dumps(&mut sources, &dump_inputs, &mut findings);
    }
    if !profile_inputs.is_empty() {
        failures += check_profiles(&mut sources, &profile_inputs, overrides, &mut findings);
    }
    if !source_inputs.is_empty() {
        let checking = SourceRun {
            overrides,
            report,
            options,
            progress: &progress,
        };
        failures += check_source_inputs(&mut sources, &source_inputs, &checking, &mut findings);
    }
    progress.clear();
    report_findings(findings, &mut sources, report, lint, failures)
}

/// Select, suppress and baseline the findings of a run, print them, and say how it
/// ended: `failures` inputs could not be read.
pub fn report_findings(
    mut findings: Findings,
    sources: &mut Sources,
    report: &Report,
    lint: &Lint,
    failures: usize,
) -> Outcome {
    syncguard_project::reported(&mut findings.diagnostics, sources, &lint.selection, &lint.config);
    if let Err(err) = super::baseline::apply(&lint.baseline, &mut findings.diagnostics, sources) {
        eprintln!("syncguard: {err}");
        return Outcome::Failure;
    }
    findings.print(sources, report, None);
    if failures > 0 {
        Outcome::Failure
    } else if !lint.exit_zero && report.fails(&findings.diagnostics) {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// How sources are checked in one run.
struct SourceRun<'a> {
    overrides: &'a Overrides,
    report: &'a Report,
    options: &'a SourceOptions,
    progress: &'a Progress,
}

/// The files of one captured run, `(display, path)` each.
#[derive(Default)]
pub(crate) struct CaptureRun {
    /// The rank files `syncguard trace` wrote, one per process.
    pub(crate) ranks: Vec<(String, PathBuf)>,
    /// Their merge (`run-RUN.jsonl`), which `syncguard trace` writes next to them.
    pub(crate) merged: Vec<(String, PathBuf)>,
}

/// Each captured run, by run.
pub(crate) type CaptureRuns = BTreeMap<String, CaptureRun>;

/// The rank files `syncguard trace` wrote, by run (each run is checked as one trace),
/// and the other inputs. A merged file of a run whose rank files are inputs too is
/// checked with them, never again on its own; one whose rank files are not (copied
/// alone) is an ordinary trace.
pub(crate) fn capture_runs(inputs: Vec<&Input>) -> (CaptureRuns, Vec<&Input>) {
    use syncguard_trace::merge::TraceFile;
    let kinds: Vec<(TraceFile, &Input)> = inputs
        .into_iter()
        .map(|input| {
            let kind = if input.kind == InputKind::Trace && !input.is_stdin() {
                TraceFile::read(&input.file)
            } else {
                TraceFile::Other
            };
            (kind, input)
        })
        .collect();
    let mut runs = CaptureRuns::new();
    for (kind, input) in &kinds {
        if let TraceFile::Capture(header) = kind {
            let files = runs.entry(header.run.clone()).or_default();
            files.ranks.push((input.display.clone(), input.file.clone()));
        }
    }
    let mut others = Vec::new();
    for (kind, input) in kinds {
        match kind {
            TraceFile::Capture(_) => {}
            TraceFile::Merged(run) => match runs.get_mut(&run) {
                Some(files) => files.merged.push((input.display.clone(), input.file.clone())),
                None => others.push(input),
            },
            TraceFile::Other => others.push(input),
        }
    }
    (runs, others)
}

/// Check the sources (C/C++, Python) together; returns the number of files that could not be read.
fn check_source_inputs(sources: &mut Sources, inputs: &[&Input], run: &SourceRun, findings: &mut Findings) -> usize {
    let report = run.report;
    let read = run
        .progress
        .suspend(|| syncguard_project::sources::read_sources(sources, inputs, run.options));
    let checked = syncguard_project::sources::check_sources(&read, run.overrides, report.explain, run.progress);
    let count = read.file_count();
    run.progress.clear();
    if checked.entries_with_calls == 0 && count > 0 {
        // Never a silent "checked N files" over code with nothing to check, and never
        // "nothing to check" over code that does synchronize where no walk reached it.
        let (files, them) = (
            format!("{count} {} file{}", languages(&read), if count == 1 { "" } else { "s" }),
            if count == 1 { "it" } else { "them" },
        );
        match syncguard_project::sources::first_sync_call_written(sources, &read) {
            Some((file, offset, name)) => {
                let file = sources.get(file);
                let line = file.line_col(offset).0;
                eprintln!(
                    "syncguard: warning: {}:{line} calls `{name}`, but no entry point of the {files} reaches a \
                     synchronization call the reader follows: nothing in {them} was checked (code reached only \
                     through what the reader cannot follow, such as a kernel dispatched by a framework's macros \
                     or templates; `syncguard convert` shows what it read)",
                    file.path
                );
            }
            None => eprintln!(
                "syncguard: none of the {files} calls a synchronization API that syncguard knows: nothing in {them} \
                 was checked"
            ),
        }
    }
    if checked.unresolved > 0 && !report.explain {
        let undecided = match checked.undecided {
            0 => String::new(),
            1 => " (1 finding rests on them and is undecided)".to_string(),
            n => format!(" ({n} findings rest on them and are undecided)"),
        };
        eprintln!(
            "syncguard: note: {} call{} or handle{} in the {} sources could not be followed{undecided}; `--explain` \
             lists them",
            checked.unresolved,
            if checked.unresolved == 1 { "" } else { "s" },
            if checked.unresolved == 1 { "" } else { "s" },
            languages(&read),
        );
    }
    for result in checked.checked {
        findings.diagnostics.extend(result.diagnostics);
        findings.proofs.extend(result.proofs);
        findings.unproved.extend(result.unproved);
    }
    findings.files += count;
    read.failures
}

/// Check PyTorch NCCL Flight Recorder dumps, the dumps of one folder together as one
/// job's ranks (a dump alone shows only its own rank); returns the number of files that
/// could not be read.
fn check_flight_recorder_dumps(sources: &mut Sources, inputs: &[&Input], findings: &mut Findings) -> usize {
    let mut failures = 0;
    let mut runs: BTreeMap<PathBuf, Vec<syncguard_flight_recorder::DumpInput>> = BTreeMap::new();
    for input in inputs {
        match syncguard_flight_recorder::read_file(&input.file) {
            Ok(bytes) => runs
                .entry(input.file.parent().map(Path::to_path_buf).unwrap_or_default())
                .or_default()
                .push(syncguard_flight_recorder::DumpInput {
                    display: input.display.clone(),
                    bytes,
                }),
            Err(err) => failures += report_io(&input.file, &err),
        }
    }
    for dumps in runs.into_values() {
        findings.files += dumps.len();
        findings
            .diagnostics
            .extend(syncguard_flight_recorder::check_run(sources, dumps));
    }
    failures
}

/// Check profiler timelines: a Kineto trace alone (one process), the msprof timelines
/// of one cluster folder together as its ranks; returns the number of files that could
/// not be read.
fn check_profiles(sources: &mut Sources, inputs: &[&Input], overrides: &Overrides, findings: &mut Findings) -> usize {
    use syncguard_profiles::{Format, TimelineInput};
    let mut failures = 0;
    let mut clusters: BTreeMap<PathBuf, Vec<TimelineInput>> = BTreeMap::new();
    let of_format = |format| -> Vec<&Input> {
        inputs
            .iter()
            .copied()
            .filter(|input| input.kind == InputKind::Profile(format))
            .collect()
    };
    let (kineto, executions) = (of_format(Format::Kineto), of_format(Format::ExecutionTrace));
    let paths = |inputs: &[&Input]| inputs.iter().map(|input| input.file.clone()).collect::<Vec<_>>();
    let (mut paired, unpaired) = syncguard_profiles::pair_execution_traces(&paths(&kineto), &paths(&executions));
    findings.files += paired.iter().flatten().count();
    for (input, execution) in kineto.iter().zip(&mut paired) {
        // A profile named alone takes the execution trace beside it.
        if input.named && execution.is_none() && executions.is_empty() {
            *execution = syncguard_profiles::execution_trace_beside(&input.file);
        }
        match syncguard_profiles::check_kineto(sources, &input.display, &input.file, execution.as_deref(), overrides) {
            Ok(checked) => findings.add(checked),
            Err(err) => failures += report_io(&input.file, &err),
        }
    }
    for execution in unpaired {
        findings.files += 1;
        findings
            .diagnostics
            .push(syncguard_profiles::execution_trace_without_profile(sources, &execution));
    }
    for input in inputs {
        match input.kind {
            InputKind::Profile(Format::GraphTasks) => {
                match syncguard_profiles::check_graph_tasks(sources, &input.display, &input.file, overrides) {
                    Ok(checked) => findings.add(checked),
                    Err(err) => failures += report_io(&input.file, &err),
                }
            }
            InputKind::Profile(format) if !syncguard_profiles::is_cluster_timeline(format) => {}
            _ => clusters
                .entry(syncguard_profiles::cluster_of(&input.file))
                .or_default()
                .push(TimelineInput {
                    display: input.display.clone(),
                    path: input.file.clone(),
                    unsaved: None,
                }),
        }
    }
    for timelines in clusters.into_values() {
        let (checked, unreadable) = syncguard_profiles::check_ascend_cluster(sources, &timelines, overrides);
        for (path, err) in &unreadable {
            failures += report_io(path, err);
        }
        // The files read: not those that could not be, nor a `trace_view.json` left for
        // the `.db` export of its rank folder (read instead, and said in a note).
        let skipped = syncguard_profiles::timelines_left_for_db_exports(&timelines).len();
        let read = timelines.len().saturating_sub(unreadable.len() + skipped);
        findings.add(checked);
        findings.files = (findings.files + read).saturating_sub(1);
    }
    failures
}

/// `C/C++`, `Python` or `C/C++ and Python`: the languages of the sources read.
fn languages(read: &ReadSources) -> String {
    let nouns: Vec<&str> = read.groups.iter().map(|group| group.language.noun()).collect();
    match nouns.as_slice() {
        [] => "source".to_string(),
        _ => nouns.join(" and "),
    }
}

/// `   3  SG601  data-race`, most frequent first.
fn statistics(diagnostics: &[Diagnostic]) -> String {
    let mut counts: Vec<(usize, &str, &str)> = Vec::new();
    for diagnostic in diagnostics {
        match counts.iter_mut().find(|(_, code, _)| *code == diagnostic.code) {
            Some(entry) => entry.0 += 1,
            None => counts.push((1, diagnostic.code, diagnostic.name)),
        }
    }
    counts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    counts
        .iter()
        .map(|(count, code, name)| format!("{count:>5}  {code}  {name}\n"))
        .collect()
}

pub fn summary_line(diagnostics: &[Diagnostic], files: usize) -> String {
    let count = |severity| diagnostics.iter().filter(|d| d.severity == severity).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "checked {}: {}, {}",
        plural(files, "file"),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
    )
}

/// Check one input; a file is read here, so only one is in memory at a time.
pub fn check_input(sources: &mut Sources, input: &Input, overrides: &Overrides) -> std::io::Result<CheckedFile> {
    Ok(match input.kind {
        InputKind::Sync => {
            check_sync_bytes_with(sources, input.display.clone(), &std::fs::read(&input.file)?, overrides)
        }
        // `check` reads sources together (`check_source_inputs`); a run needs one program.
        InputKind::Source => {
            return Err(std::io::Error::other(
                "a C/C++ or Python source is checked with `syncguard check`; `verify-then-run` runs a `.sync` program \
                 (`syncguard convert` prints the one extracted from the source)",
            ));
        }
        InputKind::FlightRecorder => {
            return Err(std::io::Error::other(
                "a Flight Recorder dump is checked with `syncguard check` (with the other ranks' dumps of its folder)",
            ));
        }
        InputKind::Profile(syncguard_profiles::Format::Kineto) => {
            syncguard_profiles::check_kineto(sources, &input.display, &input.file, None, overrides)?
        }
        InputKind::Profile(syncguard_profiles::Format::GraphTasks) => {
            syncguard_profiles::check_graph_tasks(sources, &input.display, &input.file, overrides)?
        }
        InputKind::Profile(syncguard_profiles::Format::ExecutionTrace) => {
            return Err(std::io::Error::other(
                "a PyTorch execution trace is checked with `syncguard check`, with the Kineto trace of its run beside it",
            ));
        }
        InputKind::Profile(_) => {
            return Err(std::io::Error::other(
                "an msprof timeline is checked with `syncguard check` (with the other ranks' timelines of its cluster)",
            ));
        }
        InputKind::Trace => {
            let file = std::fs::File::open(&input.file)?;
            check_trace_reader(
                sources,
                input.display.clone(),
                file,
                Some(input.file.clone()),
                overrides,
            )
        }
    })
}
