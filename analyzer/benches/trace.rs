//! Call-trace throughput: `check_trace_file` (read, parse, lower and analyze a JSONL
//! trace) on a generated, correct trace over 8 ranks (`trace_gen`: HCCL ring transfers
//! with the three-phase protocol, kernels and sync-kind events on three streams per
//! rank), from 10k to 1M calls (10M with `SYNCGUARD_BENCH_10M=1`), against the time
//! Python's `json.loads` alone takes on the same lines (`json_loads_baseline.py`). Each
//! size is checked in a child process, so that its peak memory is its own.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench trace`

mod peak_memory;
mod trace_gen;

use std::io::BufWriter;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use syncguard_analyzer::{Overrides, Sources, check_trace_file};

const RANKS: usize = 8;
const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
const HUGE: usize = 10_000_000;

/// In the child: check the trace, then analyze its Program again to see the analysis's
/// share; print `seconds analysis_seconds peak_mib diagnostics`, and the first
/// diagnostic on stderr. The peak is taken before the second analysis (which holds no
/// more than the first).
fn measure(path: &Path) {
    let start = Instant::now();
    let checked =
        check_trace_file(&mut Sources::default(), path, &Overrides::default()).expect("the trace is readable");
    let seconds = start.elapsed().as_secs_f64();
    let peak = peak_memory::peak_rss_mib();
    let start = Instant::now();
    syncguard_analyzer::analyze(&checked.program);
    let analysis = start.elapsed().as_secs_f64();
    if let Some(first) = checked.diagnostics.first() {
        eprintln!("{}: {}", first.code, first.message);
    }
    println!("{seconds} {analysis} {peak} {}", checked.diagnostics.len());
}

/// The numbers a command printed on stdout, and its stderr, after checking that it
/// succeeded.
fn run(command: &mut Command) -> (Vec<f64>, String) {
    let output = command.output().expect("the command runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{command:?} failed: {stdout}{stderr}");
    let numbers = stdout
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    (numbers, stderr.trim().to_string())
}

fn main() {
    if let Ok(path) = std::env::var("SYNCGUARD_BENCH_TRACE") {
        measure(Path::new(&path));
        return;
    }
    let exe = std::env::current_exe().expect("the bench binary");
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/json_loads_baseline.py");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut sizes = SIZES.to_vec();
    if std::env::var("SYNCGUARD_BENCH_10M").as_deref() == Ok("1") {
        sizes.push(HUGE);
    }
    println!("`check_trace_file` on a generated correct trace over {RANKS} ranks (analysis s: its `analyze` part;");
    println!("ratio: syncguard s / json.loads s, Python's `json.loads` on every line):\n");
    println!(
        "| calls      | file MiB | syncguard s | analysis s | calls/s    | peak MiB | diagnostics | json.loads s | ratio |"
    );
    println!(
        "|------------|----------|-------------|------------|------------|----------|-------------|--------------|-------|"
    );
    let mut notes = Vec::new();
    for size in sizes {
        let path = dir.path().join(format!("trace-{size}.jsonl"));
        let file = std::fs::File::create(&path).expect("the trace file");
        let calls = trace_gen::write_trace(BufWriter::new(file), size, RANKS).expect("the trace is written");
        let mib = std::fs::metadata(&path).expect("the trace file").len() as f64 / (1 << 20) as f64;
        let (ours, first) = run(Command::new(&exe).env("SYNCGUARD_BENCH_TRACE", &path));
        let [seconds, analysis, peak, diagnostics] = ours[..] else {
            panic!("the child prints four numbers")
        };
        // The trace is correct: any finding is a bug, except that 10M calls may be
        // refused as too large to analyze, which the table then shows.
        assert!(
            diagnostics == 0.0 || size == HUGE,
            "{calls} calls: {diagnostics} findings; {first}"
        );
        let python = run(Command::new("python3").arg(&baseline).arg(&path)).0[0];
        println!(
            "| {calls:>10} | {mib:>8.1} | {seconds:>11.3} | {analysis:>10.3} | {:>10.0} | {peak:>8.0} | {diagnostics:>11} | {python:>12.3} | {:>5.2} |",
            calls as f64 / seconds,
            seconds / python
        );
        std::fs::remove_file(&path).expect("the trace file is removed");
        notes.extend((!first.is_empty()).then(|| format!("- {calls} calls: {first}")));
    }
    if !notes.is_empty() {
        println!("\nFindings (the first of each size):\n\n{}", notes.join("\n"));
    }
}
