//! "proved" must mean proved: on programs that once made the prover and the concrete
//! runs disagree (`prover_soundness/*.sync`), every property proved for all parameter
//! values holds at every value of the (small) declared range, and every solver
//! counterexample fails when run concretely, in the run at its own values, which reports
//! the very finding that carries it. Each file's header says what went wrong.

use std::path::Path;

use syncguard_analyzer::model::Program;
use syncguard_analyzer::smt::SmtOptions;
use syncguard_analyzer::{CheckedFile, Sources, analyze_assignment, check_sync_bytes};

/// The rule codes that report a violation of each property in a concrete run.
const PROPERTY_CODES: &[(&str, &[&str])] = &[
    ("notify-balance", &["SG301"]),
    ("notify-index-in-range", &["SG302"]),
    ("next-task-start-once", &["SG401", "SG402"]),
    ("wait-pre-task-end-once", &["SG406"]),
];

/// Values of an unbounded range checked concretely: its smallest ones.
const UNBOUNDED_PREFIX: i64 = 8;

/// Every assignment of the parameters' values (each bounded range must be small; an
/// unbounded one contributes its first values).
fn every_assignment(program: &Program) -> Vec<Vec<i64>> {
    let mut all = vec![Vec::new()];
    for param in &program.params {
        let max = param.max.unwrap_or(param.min + UNBOUNDED_PREFIX);
        assert!(max - param.min <= 16, "{} ranges over too many values", param.name);
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<i64>| {
                (param.min..=max).map(move |v| {
                    let mut next = prefix.clone();
                    next.push(v);
                    next
                })
            })
            .collect();
    }
    all
}

/// What disagrees between the parametric verdict and the concrete run of every value.
fn disagreements(name: &str, checked: &CheckedFile) -> Vec<String> {
    let mut found = Vec::new();
    for params in every_assignment(&checked.program) {
        let codes: Vec<&str> = analyze_assignment(&checked.program, params.clone(), &SmtOptions::default())
            .iter()
            .flat_map(|d| d.codes())
            .collect();
        for proof in &checked.proofs {
            let violated = PROPERTY_CODES
                .iter()
                .filter(|(property, _)| *property == proof.property)
                .flat_map(|(_, codes)| codes.iter())
                .find(|code| codes.contains(code));
            if let Some(code) = violated {
                found.push(format!(
                    "{name}: `{}` is proved for {}, yet the run at {params:?} reports {code}",
                    proof.property, proof.scope
                ));
            }
        }
    }
    for diagnostic in &checked.diagnostics {
        for note in diagnostic.notes.iter().filter(|n| n.contains("counterexample (z3")) {
            let Some(params) = values_in(note, &checked.program) else {
                found.push(format!("{name}: no parameter values in {note:?}"));
                continue;
            };
            let its_run = analyze_assignment(&checked.program, params.clone(), &SmtOptions::default());
            if !its_run
                .iter()
                .any(|d| d.code == diagnostic.code && d.primary == diagnostic.primary)
            {
                found.push(format!(
                    "{name}: {} {:?} carries {note:?}, but the run at {params:?} does not report it",
                    diagnostic.code, diagnostic.message
                ));
            }
        }
        let from_solver = diagnostic
            .notes
            .iter()
            .any(|n| n.starts_with("smallest counterexample (z3)") || n.starts_with("counterexample (z3"));
        let confirmed = diagnostic.notes.iter().any(|n| n.starts_with("found with"));
        if from_solver && !confirmed {
            found.push(format!(
                "{name}: {} counterexample no concrete run confirms: {:?}",
                diagnostic.code, diagnostic.notes
            ));
        }
    }
    found
}

/// The parameter values a counterexample note names (`N = 2, rank 0 at k1 = 1: ...`),
/// in the program's order.
fn values_in(note: &str, program: &Program) -> Option<Vec<i64>> {
    program
        .params
        .iter()
        .map(|param| {
            let at = note.find(&format!("{} = ", param.name))? + param.name.len() + 3;
            let digits: String = note[at..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse().ok()
        })
        .collect()
}

fn check_fixture(file: &str) -> CheckedFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/prover_soundness")
        .join(file);
    check_sync_bytes(&mut Sources::default(), file, &std::fs::read(path).unwrap())
}

/// The bug reports' programs, by name.
fn fixture_files() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/prover_soundness");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sync"))
        .collect();
    files.sort();
    files
}

#[test]
fn proofs_and_counterexamples_agree_with_every_concrete_value() {
    let files = fixture_files();
    let mut found = Vec::new();
    for file in &files {
        found.extend(disagreements(file, &check_fixture(file)));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

fn proved(checked: &CheckedFile, property: &str) -> bool {
    checked.proofs.iter().any(|p| p.property == property)
}

fn counterexample_note(checked: &CheckedFile, code: &str) -> Option<String> {
    checked
        .diagnostics
        .iter()
        .filter(|d| d.codes().any(|c| c == code))
        .flat_map(|d| d.notes.iter())
        .find(|n| n.starts_with("smallest counterexample (z3)"))
        .cloned()
}

#[test]
fn a_signal_to_a_rank_that_does_not_exist_is_never_balanced() {
    for (file, smallest) in [
        ("00-proved-but-unbalanced.sync", "N = 3"),
        ("01-peer-rank-n.sync", "N = 2"),
        ("02-peer-rank-minus-one.sync", "N = 2"),
    ] {
        let checked = check_fixture(file);
        assert!(!proved(&checked, "notify-balance"), "{file}: notify-balance proved");
        let note = counterexample_note(&checked, "SG301").unwrap_or_else(|| panic!("{file}: no SG301 counterexample"));
        assert!(note.contains(smallest), "{file}: {note}");
    }
}

/// The smallest counterexample, from z3 or, when its query or its minimization runs out
/// of time (which depends on the machine), from the concrete runs of every value up to
/// the first failing one: never a larger one, never none.
#[test]
fn an_unbounded_range_gets_its_smallest_counterexample() {
    for (file, smallest) in [
        ("11-unbounded-range-cex-zero.sync", "N = 2"),
        ("12-unbounded-range-cex-not-smallest.sync", "N = 3"),
    ] {
        let checked = check_fixture(file);
        let notes: Vec<&String> = checked
            .diagnostics
            .iter()
            .filter(|d| d.codes().any(|c| c == "SG301"))
            .flat_map(|d| d.notes.iter())
            .filter(|n| n.contains("counterexample"))
            .collect();
        let by_z3 = format!("smallest counterexample (z3): {smallest},");
        let by_runs = format!(
            "smallest counterexample (concrete runs): {smallest} (the runs at every smaller value do not show it)"
        );
        assert!(
            notes.len() == 1 && (notes[0].starts_with(&by_z3) || *notes[0] == by_runs),
            "{file}: {notes:?}"
        );
    }
}

#[test]
#[ignore]
fn print_summary() {
    let files = fixture_files();
    for file in &files {
        let c = check_fixture(file);
        eprintln!("== {file}");
        for p in &c.proofs {
            eprintln!("  proved {} {}", p.property, p.scope);
        }
        for u in &c.unproved {
            eprintln!("  unproved {}: {}", u.property, u.reason);
        }
        for d in &c.diagnostics {
            eprintln!("  {} {} {:?}", d.code, d.message, d.notes);
        }
    }
}
