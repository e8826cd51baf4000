//! `syncguard convert`: a trace as an editable `.sync` program on standard output.

use std::path::PathBuf;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Converted, Severity, Sources, convert_trace};

use super::output;
use crate::Outcome;
use syncguard_project::inputs::{Input, InputKind, collect_inputs, report};

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
    if input.kind == InputKind::Source {
        return convert_source(input);
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

/// A C/C++ or Python file: the program each entry point runs, as syncguard understood it, each
/// statement with a comment naming its line.
fn convert_source(input: &Input) -> Outcome {
    let mut sources = Sources::default();
    let read = syncguard_project::sources::read_sources(
        &mut sources,
        &[input],
        &syncguard_project::sources::SourceOptions::default(),
    );
    if read.failures > 0 {
        return Outcome::Failure;
    }
    let Some(group) = read.groups.first() else {
        return Outcome::Failure;
    };
    let entries: Vec<_> = group
        .project
        .entries()
        .into_iter()
        // An entry point whose calls were all left out has no program to print.
        .filter(|e| e.api_calls > 0 && !e.syntax.stmts.is_empty())
        .collect();
    if entries.is_empty() {
        eprintln!(
            "syncguard: {} calls no synchronization API that syncguard knows: there is no program to print",
            input.display
        );
    }
    for (position, entry) in entries.iter().enumerate() {
        if position > 0 {
            output::print("\n");
        }
        let line = sources.get(group.files[entry.source]).line_col(entry.range.start).0;
        output::print(&format!(
            "// entry point `{}` ({}:{line})\n",
            entry.entry, input.display
        ));
        output::print(&group.project.space().to_sync(entry));
        for item in &entry.unresolved {
            let line = sources.get(group.files[item.source]).line_col(item.range.start).0;
            eprintln!("syncguard: note: {}:{line}: {}", input.display, item.message);
        }
    }
    Outcome::Clean
}
