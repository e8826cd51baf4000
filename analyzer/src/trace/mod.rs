//! Checking call traces: the trace frontend (`syncguard_trace`) reads one into the
//! Program model, and this module analyzes it and places its findings (with the `loc` of
//! the calls). The trace writer (`write`) turns an execution back into a trace.

pub mod write;

use std::io::Read;
use std::path::{Path, PathBuf};

use syncguard_trace::locations::SourceFiles;
use syncguard_trace::{ReadTrace, read_trace};

use crate::diagnostic::Diagnostic;
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
    let ReadTrace {
        file,
        program,
        mut diagnostics,
        used_before_creation,
        locs,
        ..
    } = read.into_read(overrides.target, overrides.cann);
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
