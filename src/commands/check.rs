//! `syncguard check`: read every input, lower it, report.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_json, render_proofs, render_text};
use syncguard_analyzer::{
    CheckedFile, Diagnostic, Overrides, Severity, Sources, check_sync_bytes_with, check_trace_reader,
};

use super::inputs::{Input, InputKind, collect_inputs, report};
use super::output;
use crate::{Format, Outcome};

pub fn run(paths: &[PathBuf], format: Format, color: bool, overrides: &Overrides, deny_warnings: bool) -> Outcome {
    let (inputs, mut failures) = collect_inputs(paths);
    let mut sources = Sources::default();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut proofs = Vec::new();
    let mut unproved = Vec::new();
    let mut files = 0;
    for input in &inputs {
        match check_input(&mut sources, input, overrides) {
            Ok(checked) => {
                diagnostics.extend(checked.diagnostics);
                proofs.extend(checked.proofs);
                unproved.extend(checked.unproved);
                files += 1;
            }
            Err(err) => failures += report(&input.file, &err),
        }
    }
    Diagnostic::sort(&mut diagnostics);
    match format {
        Format::Text => {
            if !diagnostics.is_empty() {
                sources.load_deferred();
            }
            output::print(&render_text(&diagnostics, &sources, TextOptions { color }));
            output::print(&render_proofs(&proofs, &unproved, &sources, overrides.smt.explain));
            output::println(&summary_line(&diagnostics, files));
        }
        Format::Json => {
            let json = render_json(&diagnostics, &proofs, &unproved, &sources, files);
            let json = serde_json::to_string_pretty(&json).expect("JSON values always serialize");
            output::println(&json);
        }
    }
    if failures > 0 {
        Outcome::Failure
    } else if diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning))
    {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

fn summary_line(diagnostics: &[Diagnostic], files: usize) -> String {
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
