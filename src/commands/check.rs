//! `syncguard check`: read every input, lower it, report.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_json, render_text};
use syncguard_analyzer::{Diagnostic, Overrides, Severity, Sources, check_sync_bytes_with};

use super::inputs::read_inputs;
use super::output;
use crate::{Format, Outcome};

pub fn run(paths: &[PathBuf], format: Format, color: bool, overrides: &Overrides, deny_warnings: bool) -> Outcome {
    let (inputs, failures) = read_inputs(paths);
    let mut sources = Sources::default();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for input in inputs {
        diagnostics.extend(check_sync_bytes_with(&mut sources, input.path, &input.bytes, overrides).diagnostics);
    }
    Diagnostic::sort(&mut diagnostics);
    let files = sources.iter().count();
    match format {
        Format::Text => {
            output::print(&render_text(&diagnostics, &sources, TextOptions { color }));
            output::println(&summary_line(&diagnostics, files));
        }
        Format::Json => {
            let json = render_json(&diagnostics, &sources, files);
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
