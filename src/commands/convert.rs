//! `syncguard convert`: a trace as an editable `.sync` program on standard output.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Converted, Severity, Sources, convert_trace};

use super::inputs::{collect_inputs, report};
use super::output;
use crate::Outcome;

pub fn run(path: &PathBuf) -> Outcome {
    if path.is_dir() {
        // One program on standard output: the traces of a folder would run together.
        eprintln!(
            "syncguard: cannot convert {}: it is a folder; convert takes one trace file and prints \
             one program (`syncguard convert run.jsonl > run.sync`)",
            path.display()
        );
        return Outcome::Failure;
    }
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
    warn_if_not_expressible(&converted);
    if converted.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// `.sync` names are lexically scoped: say so rather than print a program that
/// silently means something else.
fn warn_if_not_expressible(converted: &Converted) {
    if converted.inexpressible {
        eprintln!(
            "syncguard: warning: a host thread uses an object created after the thread started, under a \
             handle the trace creates more than once; `.sync` names are lexically scoped, so the \
             converted program cannot say which object the thread uses, and checking it reports \
             uses before creation that the trace does not have"
        );
    }
}
