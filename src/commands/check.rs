//! `syncguard check`: read every input, lower it, report.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_json, render_proofs, render_text};
use syncguard_analyzer::smt::{Proof, Unproved};
use syncguard_analyzer::{
    CheckedFile, Diagnostic, Overrides, Severity, Sources, check_sync_bytes_with, check_trace_reader,
};

use super::inputs::{Input, InputKind, collect_inputs, report as report_io};
use super::output;
use crate::{Format, Outcome};

/// How findings are shown, and which of them fail the run.
#[derive(Clone, Copy, Debug)]
pub struct Report {
    pub format: Format,
    pub color: bool,
    pub explain: bool,
    pub deny_warnings: bool,
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
}

impl Findings {
    pub fn add(&mut self, checked: CheckedFile) {
        self.diagnostics.extend(checked.diagnostics);
        self.proofs.extend(checked.proofs);
        self.unproved.extend(checked.unproved);
        self.files += 1;
    }

    /// Print in the chosen format; `extra` is added to the JSON object (a run's report).
    pub fn print(&mut self, sources: &mut Sources, report: &Report, extra: Option<(&str, serde_json::Value)>) {
        Diagnostic::sort(&mut self.diagnostics);
        match report.format {
            Format::Text => {
                print_diagnostics(&self.diagnostics, sources, report);
                output::print(&render_proofs(&self.proofs, &self.unproved, sources, report.explain));
                output::println(&summary_line(&self.diagnostics, self.files));
            }
            Format::Json => {
                let mut json = render_json(&self.diagnostics, &self.proofs, &self.unproved, sources, self.files);
                if let Some((key, value)) = extra {
                    json[key] = value;
                }
                let json = serde_json::to_string_pretty(&json).expect("JSON values always serialize");
                output::println(&json);
            }
        }
    }
}

/// Render `diagnostics` as text on standard output.
pub fn print_diagnostics(diagnostics: &[Diagnostic], sources: &mut Sources, report: &Report) {
    if !diagnostics.is_empty() {
        sources.load_deferred();
    }
    output::print(&render_text(diagnostics, sources, TextOptions { color: report.color }));
}

pub fn run(paths: &[PathBuf], overrides: &Overrides, report: &Report) -> Outcome {
    let (inputs, mut failures) = collect_inputs(paths);
    let mut sources = Sources::default();
    let mut findings = Findings::default();
    for input in &inputs {
        match check_input(&mut sources, input, overrides) {
            Ok(checked) => findings.add(checked),
            Err(err) => failures += report_io(&input.file, &err),
        }
    }
    findings.print(&mut sources, report, None);
    if failures > 0 {
        Outcome::Failure
    } else if report.fails(&findings.diagnostics) {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
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
