//! C/C++ sources: every source file of a run read together (a helper in one file is
//! inlined into the entry points of another), each entry point's extracted program
//! checked by the analyzer like a `.sync` file.

use std::collections::HashSet;

use syncguard_analyzer::rules::{SolverUnknown, UnknownName};
use syncguard_analyzer::source::{FileId, Span, decode_utf8_lossless_offsets};
use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Severity, SourceFile, Sources, check_lowered};
use syncguard_cpp::{EntryProgram, Project, SourceText, read_project};
use syncguard_model::reading_rules::unchecked_return;

use super::inputs::{Input, report};

/// The sources of one run, read and registered.
pub struct ReadSources {
    pub project: Project,
    pub files: Vec<FileId>,
    pub failures: usize,
}

pub fn read_sources(sources: &mut Sources, inputs: &[&Input]) -> ReadSources {
    let mut texts = Vec::new();
    let mut files = Vec::new();
    let mut failures = 0;
    for input in inputs {
        let bytes = match std::fs::read(&input.file) {
            Ok(bytes) => bytes,
            Err(err) => {
                failures += report(&input.file, &err);
                continue;
            }
        };
        let bytes = bytes.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(&bytes);
        let (text, _) = decode_utf8_lossless_offsets(bytes);
        files.push(sources.add(SourceFile::new(input.display.clone(), text.clone())));
        texts.push(SourceText {
            path: input.display.clone(),
            text,
        });
    }
    ReadSources {
        project: read_project(texts),
        files,
        failures,
    }
}

/// What checking the sources found.
pub struct SourceFindings {
    pub checked: Vec<CheckedFile>,
    /// Entry points that call at least one synchronization API.
    pub entries_with_calls: usize,
    /// What the frontend could not follow in them (listed with `--explain`).
    pub unresolved: usize,
}

/// Check every entry point that does some synchronization. With `explain`, what the
/// frontend could not follow is listed as information (SG003); otherwise it is counted.
pub fn check_sources(read: &ReadSources, overrides: &Overrides, explain: bool) -> SourceFindings {
    let mut checked = Vec::new();
    let mut seen = HashSet::new();
    let mut entries_with_calls = 0;
    let mut unresolved = 0;
    for entry in read.project.entries() {
        if entry.api_calls == 0 {
            continue;
        }
        entries_with_calls += 1;
        unresolved += entry.unresolved.len();
        let reading = reading_diagnostics(&entry, &read.files, explain);
        let lowered = read.project.lower(&entry, &read.files);
        let mut result = check_lowered(lowered, reading, overrides);
        // A helper reached from two entry points reports its problem once.
        result
            .diagnostics
            .retain(|d| seen.insert((d.code, d.primary.clone(), d.message.clone())));
        checked.push(result);
    }
    SourceFindings {
        checked,
        entries_with_calls,
        unresolved,
    }
}

fn reading_diagnostics(entry: &EntryProgram, files: &[FileId], explain: bool) -> Vec<Diagnostic> {
    let span = |source: usize, range: &std::ops::Range<usize>| Span::new(files[source], range.clone());
    let mut diagnostics: Vec<Diagnostic> = entry
        .unchecked_returns
        .iter()
        .map(|(source, range, api)| unchecked_return(span(*source, range), api))
        .collect();
    if let Some(stop) = &entry.incomplete {
        diagnostics.push(
            Diagnostic::new(
                &SolverUnknown::INFO,
                span(stop.source, &stop.range),
                stop.message.clone(),
            )
            .with_label("the extraction stopped here")
            .with_related(
                span(entry.source, &entry.range),
                format!("entry point `{}`", entry.entry),
            )
            .with_help("split the entry point, or lower the loop bounds the code uses"),
        );
    }
    if explain {
        diagnostics.extend(entry.unresolved.iter().map(|item| {
            Diagnostic::new(&UnknownName::INFO, span(item.source, &item.range), item.message.clone())
                .with_severity(Severity::Info)
                .with_label("not followed")
                .with_related(
                    span(entry.source, &entry.range),
                    format!("entry point `{}`", entry.entry),
                )
        }));
    }
    diagnostics
}
