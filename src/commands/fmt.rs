//! `syncguard fmt`: canonical layout for files that parse; files with syntax errors
//! are reported and left untouched.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Sources, check_sync_bytes, decode_utf8_lossless_offsets};

use super::output;
use crate::Outcome;
use syncguard_project::inputs::{Input, InputKind, collect_inputs, report};

pub fn run(paths: &[PathBuf], check: bool) -> Outcome {
    let (inputs, failures) = collect_inputs(paths);
    let mut outcome = if failures > 0 { Outcome::Failure } else { Outcome::Clean };
    for input in &inputs {
        outcome = outcome.max(format_input(input, check));
    }
    outcome
}

fn format_input(input: &Input, check: bool) -> Outcome {
    if input.kind == InputKind::Trace {
        // Traces are written by programs, not edited; in a folder they are simply not
        // `.sync` files, but a trace named on the command line cannot be what was meant.
        if input.named {
            eprintln!(
                "syncguard: cannot format {}: it is a JSONL trace, not a .sync program \
                 (`syncguard convert {}` prints it as one)",
                input.display, input.display
            );
            return Outcome::Failure;
        }
        return Outcome::Clean;
    }
    let bytes = match std::fs::read(&input.file) {
        Ok(bytes) => bytes,
        Err(err) => {
            report(&input.file, &err);
            return Outcome::Failure;
        }
    };
    let (text, invalid_utf8) = decode_utf8_lossless_offsets(&bytes);
    let parsed = syncguard_grammar::parse(&text);
    if !parsed.errors.is_empty() || !invalid_utf8.is_empty() {
        report_syntax_errors(input, &bytes);
        return Outcome::Findings;
    }
    let formatted = syncguard_grammar::format(&text, &parsed);
    if check {
        if formatted == text {
            return Outcome::Clean;
        }
        output::println(&format!("would reformat {}", input.display));
        return Outcome::Findings;
    }
    if input.is_stdin() {
        // Always the whole program: `fmt - < a.sync > b.sync` must fill `b.sync`.
        output::print(&formatted);
        return Outcome::Clean;
    }
    if formatted == text {
        return Outcome::Clean;
    }
    // The path as given, not its display form, which is lossy for a name that is not UTF-8.
    if let Err(err) = std::fs::write(&input.file, formatted) {
        eprintln!("syncguard: cannot write {}: {err}", input.display);
        return Outcome::Failure;
    }
    Outcome::Clean
}

fn report_syntax_errors(input: &Input, bytes: &[u8]) {
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, input.display.clone(), bytes);
    let syntax: Vec<_> = checked.diagnostics.into_iter().filter(|d| d.code == "SG001").collect();
    eprint!("{}", render_text(&syntax, &sources, TextOptions::default()));
    eprintln!("syncguard: not formatting {}: it does not parse", input.display);
}
