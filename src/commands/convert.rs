//! `syncguard convert`: a trace as an editable `.sync` program on standard output.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Converted, Severity, Sources, convert_trace};

use super::output;
use crate::Outcome;
use syncguard_project::inputs::{Input, InputKind, collect_inputs, report};

pub fn run(path: &PathBuf) -> Outcome {
    let (inputs, failures) = collect_inputs(std::slice::from_ref(path));
    if path.is_dir() {
        // The sources of a folder are one program, as `check` reads them (a kernel's class
        // is in its headers); its traces would run together.
        let sources: Vec<&Input> = inputs.iter().filter(|i| i.kind == InputKind::Source).collect();
        if sources.is_empty() || failures > 0 {
            eprintln!(
                "syncguard: cannot convert {}: a folder is converted only for its C/C++ and Python \
                 sources; convert takes one trace file and prints one program (`syncguard convert run.jsonl > run.sync`)",
                path.display()
            );
            return Outcome::Failure;
        }
        return convert_sources(&sources, &path.display().to_string());
    }
    let Some(input) = inputs.first().filter(|_| failures == 0) else {
        return Outcome::Failure;
    };
    if input.kind == InputKind::Source {
        return convert_sources(&[input], &input.display);
    }
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

/// C/C++ or Python files, read together: the program each entry point runs, as syncguard
/// understood it, each statement with a comment naming its line.
fn convert_sources(inputs: &[&Input], what: &str) -> Outcome {
    let mut sources = Sources::default();
    let read = syncguard_project::sources::read_sources(
        &mut sources,
        inputs,
        &syncguard_project::sources::SourceOptions::default(),
    );
    if read.failures > 0 {
        return Outcome::Failure;
    }
    let mut printed = 0;
    for group in &read.groups {
        let entries: Vec<_> = group
            .project
            .entries()
            .into_iter()
            // An entry point whose calls were all left out has no program to print.
            .filter(|e| e.api_calls > 0 && !e.syntax.stmts.is_empty())
            .collect();
        for entry in entries {
            if printed > 0 {
                output::print("\n");
            }
            printed += 1;
            let file = sources.get(group.files[entry.source]);
            let line = file.line_col(entry.range.start).0;
            output::print(&format!("// entry point `{}` ({}:{line})\n", entry.entry, file.path));
            output::print(&group.project.space().to_sync(&entry));
            for item in &entry.unresolved {
                let file = sources.get(group.files[item.source]);
                let line = file.line_col(item.range.start).0;
                eprintln!("syncguard: note: {}:{line}: {}", file.path, item.message);
            }
        }
    }
    if printed == 0 {
        eprintln!("syncguard: {what} calls no synchronization API that syncguard knows: there is no program to print");
    }
    Outcome::Clean
}
