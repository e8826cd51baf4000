//! Proving a parametric ring for every rank count against checking each rank count
//! concretely, measured in one run.
//!
//! - Prover: `analyze_with` on `examples/parametric-ring/correct.sync` (`ranks N in
//!   2..=1024`): z3 proves `notify-balance` and `notify-index-in-range` for every N in
//!   the range; the analysis also runs happens-before at N = 2, 3, 4 as always.
//! - Sweep: the same program instantiated at N = 2, 3, 4, ... and analyzed by
//!   happens-before (`exec::instantiate` + `HappensBefore::build`, which includes race
//!   detection; the rules on top are not counted, so the sweep's time is a lower bound).
//!   The ring has about 5 N^2 ops over 3 N agents, so each N costs O(N^3) in vector
//!   clocks: the sweep stops at its time budget (`SYNCGUARD_SWEEP_BUDGET_S`, default
//!   120 s) or where the execution exceeds the analysis's size limit.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench prove`

use std::path::Path;
use std::time::Instant;

use syncguard_analyzer::smt::SmtOptions;
use syncguard_analyzer::{Sources, analyze_with, check_sync_bytes, exec, hb};

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/parametric-ring/correct.sync");
    let bytes = std::fs::read(&path).expect("the ring example exists");
    let program = check_sync_bytes(&mut Sources::default(), "correct.sync", &bytes).program;
    let budget: f64 = std::env::var("SYNCGUARD_SWEEP_BUDGET_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120.0);

    let start = Instant::now();
    let analyzed = analyze_with(&program, &SmtOptions::default());
    let prove = start.elapsed().as_secs_f64();
    let proved: Vec<String> = analyzed
        .proofs
        .iter()
        .map(|p| format!("{} for {}", p.property, p.scope))
        .collect();
    assert_eq!(proved.len(), 2, "the ring must be proved: {proved:?}");
    assert!(analyzed.diagnostics.is_empty(), "the ring is correct");

    let start = Instant::now();
    let mut reached = 1;
    let mut stopped = "the time budget";
    for n in 2..=1024i64 {
        let execution = exec::instantiate(&program, vec![n]);
        let graph = match hb::HappensBefore::build(&execution) {
            Ok(graph) if !execution.truncated() => graph,
            _ => {
                stopped = "the analysis's size limit (too large to analyze)";
                break;
            }
        };
        assert!(graph.cycles.is_empty() && graph.races().is_empty(), "N = {n} is clean");
        reached = n;
        if start.elapsed().as_secs_f64() > budget {
            break;
        }
        if n == 1024 {
            stopped = "the end of the range";
        }
    }
    let sweep = start.elapsed().as_secs_f64();

    println!("| method | rank counts covered | seconds |");
    println!("|---|---|---:|");
    println!("| z3 proof (`analyze_with`, incl. HB at N = 2, 3, 4) | 2..=1024 (all 1023) | {prove:.3} |");
    println!(
        "| happens-before per N (instantiate + build) | 2..={reached} ({} values; stopped by {stopped}) | {sweep:.1} |",
        reached - 1
    );
    println!();
    println!(
        "ratio, sweep / proof: {:.0}x, with the sweep covering {:.0}% of the range",
        sweep / prove,
        100.0 * (reached - 1) as f64 / 1023.0
    );
    for line in proved {
        println!("proved {line}");
    }
}
