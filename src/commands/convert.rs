//! `syncguard convert`: a trace as an editable `.sync` program on standard output.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Severity, Sources, convert_trace};

use super::inputs::{collect_inputs, report};
use super::output;
use crate::Outcome;

pub fn run(path: &PathBuf) -> Outcome {
    let (inputs, failures) = collect_inputs(std::slice::from_ref(path));
    let Some(input) = inputs.first().filter(|_| failures == 0) else {
        return Outcome::Failure;
    };
    let file = match std::fs::File::open(&input.file) {
        Ok(file) => file,
        Err(err) => {
            report(&input.file, &err);
            return Outcome::Failure;
        }
    };
    let mut sources = Sources::default();
    let converted = convert_trace(&mut sources, input.display.clone(), file, Some(input.file.clone()));
    if !converted.diagnostics.is_empty() {
        sources.load_deferred();
        eprint!(
            "{}",
            render_text(&converted.diagnostics, &sources, TextOptions::default())
        );
    }
    output::print(&converted.text);
    if converted.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}
