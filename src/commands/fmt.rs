//! `syncguard fmt`: canonical layout for files that parse; files with syntax errors
//! are reported and left untouched.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Sources, check_sync_bytes, decode_utf8_lossless_offsets};

use super::inputs::read_inputs;
use super::output;
use crate::Outcome;

pub fn run(paths: &[PathBuf], check: bool) -> Outcome {
    let (inputs, failures) = read_inputs(paths);
    let mut outcome = if failures > 0 { Outcome::Failure } else { Outcome::Clean };
    for input in inputs {
        let (text, invalid_utf8) = decode_utf8_lossless_offsets(&input.bytes);
        let parsed = syncguard_grammar::parse(&text);
        if !parsed.errors.is_empty() || !invalid_utf8.is_empty() {
            let mut sources = Sources::default();
            let checked = check_sync_bytes(&mut sources, input.path.clone(), &input.bytes);
            let syntax: Vec<_> = checked.diagnostics.into_iter().filter(|d| d.code == "SG001").collect();
            eprint!("{}", render_text(&syntax, &sources, TextOptions::default()));
            eprintln!("syncguard: not formatting {}: it does not parse", input.path);
            outcome = outcome.max(Outcome::Findings);
            continue;
        }
        let formatted = syncguard_grammar::format(&text, &parsed);
        if formatted == text {
            continue;
        }
        if check || input.path == "-" {
            if check {
                output::println(&format!("would reformat {}", input.path));
                outcome = outcome.max(Outcome::Findings);
            } else {
                output::print(&formatted);
            }
        } else if let Err(err) = std::fs::write(&input.path, formatted) {
            eprintln!("syncguard: cannot write {}: {err}", input.path);
            outcome = Outcome::Failure;
        }
    }
    outcome
}
