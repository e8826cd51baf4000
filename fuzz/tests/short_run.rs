//! The CI-sized fuzz run: a fixed number of inputs per target, in process, with a fixed
//! seed (so a failure reproduces). The long run is `cargo run --release -p
//! syncguard-fuzz -- --inputs 1000000` (see BENCHMARKS.md), which also catches aborts,
//! hangs and memory blow-ups in a child process.

use std::time::Duration;

use syncguard_fuzz::corpus::Corpus;
use syncguard_fuzz::{Target, fuzz};

/// Time one input may take. Generous, since CI runs the unoptimized build on a loaded
/// machine (a 47 KB input with 3,500 syntax errors takes 0.5 s optimized, 7 s here
/// alone and 20 s beside the other tests); a hang takes far longer. The release-built
/// long run allows 10 s.
const PER_INPUT: Duration = Duration::from_secs(60);

/// Inputs per target in CI; `SYNCGUARD_FUZZ_INPUTS` overrides it.
const CI_INPUTS: u64 = 300;

fn run(target: Target) {
    run_inputs(target, CI_INPUTS);
}

/// [`run`] with another number of inputs by default.
fn run_inputs(target: Target, default: u64) {
    let corpus = Corpus::load(&Corpus::workspace_root());
    assert!(
        !corpus.programs.is_empty() && !corpus.traces.is_empty(),
        "the corpus is empty"
    );
    let inputs = std::env::var("SYNCGUARD_FUZZ_INPUTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default);
    let summary = fuzz(target, &corpus, 20261124, inputs, PER_INPUT, |_| {});
    let report: Vec<String> = summary
        .failures
        .iter()
        .map(|f| format!("{}\n--- input ---\n{}", f.what, String::from_utf8_lossy(&f.input)))
        .collect();
    assert!(report.is_empty(), "{} failures:\n{}", report.len(), report.join("\n\n"));
    assert_eq!(summary.inputs, inputs);
}

#[test]
fn sync_programs() {
    run(Target::Sync);
}

#[test]
fn formatter() {
    run(Target::Fmt);
}

#[test]
fn traces() {
    run(Target::Trace);
}

#[test]
fn convert() {
    run(Target::Convert);
}

#[test]
fn verify_then_run_planning() {
    run(Target::Plan);
}

#[test]
fn cpp_sources() {
    run(Target::Cpp);
}

#[test]
fn python_sources() {
    run(Target::Python);
}

/// Inputs the long runs found, one folder per target (`fuzz/found/<target>/`): each
/// must keep every invariant, within the long run's time limit.
#[test]
fn inputs_found_by_long_runs_stay_fixed() {
    let root = Corpus::workspace_root().join("fuzz/found");
    let mut checked = 0;
    for target in Target::ALL {
        let Ok(entries) = std::fs::read_dir(root.join(target.name())) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("readable folder").path();
            let input = std::fs::read(&path).expect("readable input");
            let started = std::time::Instant::now();
            let outcome = syncguard_fuzz::targets::run(target, &input);
            assert_eq!(outcome, Ok(()), "{}", path.display());
            assert!(
                started.elapsed() < PER_INPUT,
                "{}: {:?}",
                path.display(),
                started.elapsed()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no inputs under {}", root.display());
}

/// Each input is checked twice over and with launches added: fewer inputs.
#[test]
fn skeletons() {
    run_inputs(Target::Skeleton, 100);
}
