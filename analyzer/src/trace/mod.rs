//! Checking call traces: the trace frontend (`syncguard_trace`) reads one into the
//! Program model, and this module analyzes it and places its findings (with the `loc` of
//! the calls). The trace writer (`write`) turns an execution back into a trace.

pub mod write;

use std::io::Read;
use std::path::{Path, PathBuf};

use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::Span;
use syncguard_trace::locations::SourceFiles;
use syncguard_trace::merge::{MergeProblem, MergedRun, ProblemSeverity};
use syncguard_trace::{ReadTrace, read_trace};

use crate::diagnostic::{Diagnostic, Severity};
use crate::frontend::{CheckedFile, Overrides};
use crate::rules::event_use_before_create::before_creation;
use crate::source::Sources;

pub use syncguard_trace::convert::Converted;

/// Check the trace at `path`, streaming it from disk.
pub fn check_trace_file(sources: &mut Sources, path: &Path, overrides: &Overrides) -> std::io::Result<CheckedFile> {
    let file = std::fs::File::open(path)?;
    let display = path.display().to_string();
    Ok(check_trace_reader(
        sources,
        display,
        file,
        Some(path.to_path_buf()),
        overrides,
    ))
}

/// Check a trace read from `reader`, shown as `display`; `reread` is where its text
/// can be read again to render diagnostics (`None`: lines are shown blank). Analysis
/// runs even when lines were malformed: the rest of the trace is still checked.
pub fn check_trace_reader(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
    overrides: &Overrides,
) -> CheckedFile {
    let read = read_trace(sources, display, reader, reread, false, overrides.smt.timelines);
    analyze(
        sources,
        read.into_read(overrides.target, overrides.cann),
        Vec::new(),
        overrides,
    )
}

/// Check the rank files of one `syncguard trace` run as one multi-rank trace
/// ([`syncguard_trace::merge`]). What merging found is reported on the merged trace's
/// header line (SG002); a run with a rank missing or claimed twice is not analyzed, as
/// its findings would be about a program that did not run. Findings are placed on the
/// merged trace when it is on disk ([`MergedRun::on_disk`]), else on the rank files.
pub fn check_merged_run(sources: &mut Sources, merged: &MergedRun, overrides: &Overrides) -> CheckedFile {
    let read = read_trace(
        sources,
        merged.display.clone(),
        merged.text.as_slice(),
        merged.on_disk.clone(),
        false,
        overrides.smt.timelines,
    );
    let read = read.into_read(overrides.target, overrides.cann);
    let file = read.file;
    if merged.on_disk.is_none()
        && let Ok(text) = std::str::from_utf8(&merged.text)
    {
        // Kept for rendering: the merged trace exists only in memory.
        sources.get_mut(file).text = text.to_string();
    }
    let header = merged
        .text
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(merged.text.len());
    let span = Span::new(file, 0..header);
    let problems: Vec<Diagnostic> = merged
        .problems
        .iter()
        .map(|problem| merge_problem(problem, &span))
        .collect();
    let mut checked = if merged.checkable() {
        analyze(sources, read, problems, overrides)
    } else {
        let mut diagnostics = problems;
        diagnostics.extend(read.diagnostics);
        CheckedFile::unanalyzed(read.program, diagnostics)
    };
    merged.place_on_rank_files(sources, file, &mut checked.diagnostics);
    Diagnostic::sort(&mut checked.diagnostics);
    checked
}

fn merge_problem(problem: &MergeProblem, span: &Span) -> Diagnostic {
    let severity = match problem.severity {
        ProblemSeverity::Error => Severity::Error,
        ProblemSeverity::Warning => Severity::Warning,
    };
    Diagnostic::new(&TraceFormatError::INFO, span.clone(), problem.message.clone())
        .with_severity(severity)
        .with_label("the run's rank files, merged")
}

/// Analyze a trace read into the model, and place its findings at the calls' `loc`.
fn analyze(
    sources: &mut Sources,
    read: ReadTrace,
    mut diagnostics: Vec<Diagnostic>,
    overrides: &Overrides,
) -> CheckedFile {
    let ReadTrace {
        file,
        program,
        diagnostics: read_diagnostics,
        used_before_creation,
        locs,
        ..
    } = read;
    diagnostics.extend(read_diagnostics);
    diagnostics.extend(used_before_creation.iter().map(before_creation));
    diagnostics.extend(crate::analysis::analyze_with(&program, &overrides.smt).diagnostics);
    if !locs.is_empty() {
        let mut files = SourceFiles::new(sources, file);
        for diagnostic in &mut diagnostics {
            files.annotate(diagnostic, &locs);
        }
    }
    Diagnostic::sort(&mut diagnostics);
    CheckedFile {
        diagnostics,
        ..CheckedFile::unanalyzed(program, Vec::new())
    }
}

/// Convert the trace read from `reader` (shown as `display`) to a `.sync` program, with
/// what reading it found.
pub fn convert_trace(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
) -> Converted {
    let mut converted = syncguard_trace::convert::convert_trace(sources, display, reader, reread);
    let used = std::mem::take(&mut converted.used_before_creation);
    converted.diagnostics.extend(used.iter().map(before_creation));
    Diagnostic::sort(&mut converted.diagnostics);
    converted
}
