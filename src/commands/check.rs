//! `syncguard check`: read every input, lower it, report.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_json, render_text};
use syncguard_analyzer::{Diagnostic, Severity, Sources, check_sync_bytes};

use super::inputs::read_inputs;
use crate::{Format, Outcome};

pub fn run(paths: &[PathBuf], format: Format, color: bool) -> Outcome {
    let (inputs, failures) = read_inputs(paths);
    let mut sources = Sources::default();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for input in inputs {
        diagnostics.extend(check_sync_bytes(&mut sources, input.path, &input.bytes).diagnostics);
    }
    Diagnostic::sort(&mut diagnostics);
    let files = sources.iter().count();
    match format {
        Format::Text => {
            print!("{}", render_text(&diagnostics, &sources, TextOptions { color }));
            println!("{}", summary_line(&diagnostics, files));
        }
        Format::Json => {
            let json = render_json(&diagnostics, &sources, files);
            println!(
                "{}",
                serde_json::to_string_pretty(&json).expect("JSON values always serialize")
            );
        }
    }
    if failures > 0 {
        Outcome::Failure
    } else if diagnostics.iter().any(|d| d.severity == Severity::Error) {
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
