//! What runs is what was verified: for every program that verifies clean (the examples,
//! the analyzer's fixtures, programs kept here), each host thread makes exactly the
//! calls of the verified Execution in its issue order, and each stream and HCCL thread
//! executes exactly its nodes, in order. The random programs of `differential.rs` are
//! compared the same way.

mod common;

use std::path::Path;

use syncguard_analyzer::exec::instantiate;
use syncguard_analyzer::{Severity, Sources, check_sync_bytes};
use syncguard_runtime_bridge::sim::{Sim, SimOptions};
use syncguard_runtime_bridge::{Plan, cannot_run, run};

/// Runs `text` under `seed` if it verifies clean; `Err` names the first difference
/// between what ran and what was verified. `Ok(false)`: it does not verify.
fn runs_as_verified(name: &str, text: &str, seed: u64) -> Result<bool, String> {
    let checked = check_sync_bytes(&mut Sources::default(), name, text.as_bytes());
    if checked.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        return Ok(false);
    }
    let smallest = checked.program.params.iter().map(|p| p.min).collect();
    let exec = instantiate(&checked.program, smallest);
    if cannot_run(&exec).is_some() {
        return Ok(false); // refused by `verify-then-run`, as tested there
    }
    let sim = Sim::new(
        &exec,
        SimOptions {
            seed,
            ..SimOptions::default()
        },
    );
    let log = run(&Plan::new(&exec), &sim);
    if !log.faults.is_empty() || !sim.observed().is_empty() {
        return Err(format!("{:?} {:?}", log.faults, sim.observed()));
    }
    match common::executed_differs(&exec, &log, &sim) {
        Some(difference) => Err(difference),
        None => Ok(true),
    }
}

#[test]
fn every_clean_program_runs_exactly_its_verified_calls() {
    let files = common::clean_program_corpus();
    let mut ran = 0;
    let mut differences = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable program");
        for seed in 0..2 {
            match runs_as_verified(&file.display().to_string(), &text, seed) {
                Ok(true) => ran += 1,
                Ok(false) => break,
                Err(why) => differences.push(format!("{} (seed {seed}): {why}", file.display())),
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(
        ran >= 2 * 40,
        "only {ran} runs: the programs that verify clean went missing"
    );
}

#[test]
fn a_loop_whose_body_is_one_call_runs_every_iteration() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/single-statement-loop.sync");
    let text = std::fs::read_to_string(path).expect("readable program");
    for seed in 0..4 {
        assert_eq!(runs_as_verified("single-statement-loop.sync", &text, seed), Ok(true));
    }
    let kernels = "let s = aclrtCreateStream();\nlet b = aclrtMalloc(64);\nfor i in 0..3 {\n    kernel(s, \"k\", writes: [b]);\n}\naclrtSynchronizeStream(s);\naclrtFree(b);\naclrtDestroyStream(s);\n";
    assert_eq!(runs_as_verified("kernels.sync", kernels, 0), Ok(true));
}

#[test]
fn a_group_record_wakes_the_waits_of_every_other_stream() {
    // Stream 0 records, stream 1 waits and records, stream 2 waits: SG202 lets stream
    // 2 pass on either Record, so the simulator must not let it take stream 1's.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../analyzer/tests/fixtures/SG204/pass_relay_through_middle_stream.sync");
    let text = std::fs::read_to_string(&path).expect("readable program");
    for seed in 0..24 {
        assert_eq!(runs_as_verified("relay.sync", &text, seed), Ok(true), "seed {seed}");
    }
}
