//! `syncguard fmt`: canonical layout for files that parse; files with syntax errors
//! are reported and left untouched.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Sources, check_sync_bytes, decode_utf8_lossless_offsets};

use super::inputs::{InputKind, collect_inputs, report};
use super::output;
use crate::Outcome;

pub fn run(paths: &[PathBuf], check: bool) -> Outcome {
    let (inputs, failures) = collect_inputs(paths);
    let mut outcome = if failures > 0 { Outcome::Failure } else { Outcome::Clean };
    // Traces are formatted by the program that writes them (`syncguard convert` turns
    // one into `.sync`).
    for input in inputs.into_iter().filter(|input| input.kind == InputKind::Sync) {
        let bytes = match std::fs::read(&input.file) {
            Ok(bytes) => bytes,
            Err(err) => {
                report(&input.file, &err);
                outcome = Outcome::Failure;
                continue;
            }
        };
        let path = input.display;
        let (text, invalid_utf8) = decode_utf8_lossless_offsets(&bytes);
        let parsed = syncguard_grammar::parse(&text);
        if !parsed.errors.is_empty() || !invalid_utf8.is_empty() {
            let mut sources = Sources::default();
            let checked = check_sync_bytes(&mut sources, path.clone(), &bytes);
            let syntax: Vec<_> = checked.diagnostics.into_iter().filter(|d| d.code == "SG001").collect();
            eprint!("{}", render_text(&syntax, &sources, TextOptions::default()));
            eprintln!("syncguard: not formatting {}: it does not parse", path);
            outcome = outcome.max(Outcome::Findings);
            continue;
        }
        let formatted = syncguard_grammar::format(&text, &parsed);
        if formatted == text {
            continue;
        }
        if check || path == "-" {
            if check {
                output::println(&format!("would reformat {}", path));
                outcome = outcome.max(Outcome::Findings);
            } else {
                output::print(&formatted);
            }
        } else if let Err(err) = std::fs::write(&path, formatted) {
            eprintln!("syncguard: cannot write {}: {err}", path);
            outcome = Outcome::Failure;
        }
    }
    outcome
}
