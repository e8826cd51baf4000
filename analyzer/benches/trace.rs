//! Call-trace throughput: `check_trace_file` (read, parse, lower and analyze a JSONL
//! trace) on generated, correct traces (`trace_gen`: HCCL ring transfers with the
//! three-phase protocol, kernels and sync-kind events on three streams per rank) over 8
//! ranks from 10k to 1M calls and over 64 ranks at 1M calls (10M calls at both with
//! `SYNCGUARD_BENCH_10M=1`), against a Python process that reads the same file and
//! `json.loads` every line (`json_loads_baseline.py`). Both are timed as whole processes
//! (start, read, exit) in the same run, one right after the other, five times over (once
//! at 10M): this machine's speed moves by a quarter within minutes, so the ratio is the
//! median of the five back-to-back pairs, with their range. Each size is checked in a
//! child process, so that its peak memory is its own.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench trace`

mod peak_memory;
mod trace_gen;

use std::io::BufWriter;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use syncguard_analyzer::{Overrides, Sources, check_trace_file};

/// (ranks, calls) of the workloads run by default.
const WORKLOADS: [(usize, usize); 4] = [(8, 10_000), (8, 100_000), (8, 1_000_000), (64, 1_000_000)];
const HUGE: usize = 10_000_000;
/// Back-to-back pairs of syncguard and Python runs per size below [`HUGE`].
const PAIRS: usize = 5;

/// In the child: check the trace (and stop there with `SYNCGUARD_BENCH_CHECK_ONLY`),
/// then analyze its Program again to see the analysis's share; print `seconds analysis_seconds peak_mib diagnostics`, and the first
/// diagnostic on stderr. The peak is taken before the second analysis (which holds no
/// more than the first).
fn measure(path: &Path) {
    let start = Instant::now();
    let checked =
        check_trace_file(&mut Sources::default(), path, &Overrides::default()).expect("the trace is readable");
    let seconds = start.elapsed().as_secs_f64();
    if std::env::var_os("SYNCGUARD_BENCH_CHECK_ONLY").is_some() {
        // Timed by the parent as a whole process, as `syncguard check` runs, which frees
        // the Program on a thread of its own while it reports and exits.
        std::thread::spawn(move || drop(checked));
        return;
    }
    let peak = peak_memory::peak_rss_mib();
    let start = Instant::now();
    syncguard_analyzer::analyze(&checked.program);
    let analysis = start.elapsed().as_secs_f64();
    if let Some(first) = checked.diagnostics.first() {
        eprintln!("{}: {}", first.code, first.message);
    }
    println!("{seconds} {analysis} {peak} {}", checked.diagnostics.len());
}

/// The numbers a command printed on stdout, its stderr, and its wall time in seconds
/// (the whole process), after checking that it succeeded.
fn run(command: &mut Command) -> (Vec<f64>, String, f64) {
    let start = Instant::now();
    let output = command.output().expect("the command runs");
    let wall = start.elapsed().as_secs_f64();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{command:?} failed: {stdout}{stderr}");
    let numbers = stdout
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    (numbers, stderr.trim().to_string(), wall)
}

fn main() {
    if let Ok(path) = std::env::var("SYNCGUARD_BENCH_TRACE") {
        measure(Path::new(&path));
        return;
    }
    let exe = std::env::current_exe().expect("the bench binary");
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/json_loads_baseline.py");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut workloads = WORKLOADS.to_vec();
    if std::env::var("SYNCGUARD_BENCH_10M").as_deref() == Ok("1") {
        workloads.extend([(8, HUGE), (64, HUGE)]);
    }
    println!(
        "Generated correct traces, each checked by a child process (process s: its whole run; check s: `check_trace_file`;"
    );
    println!("analysis s: its `analyze` part); Python: a process that reads the file and `json.loads` every line;");
    println!("process s and Python s are medians of runs in back-to-back pairs; ratio: the median of the pairs'");
    println!("process s / Python s, with their range:\n");
    println!(
        "| ranks | calls      | file MiB | process s | check s | analysis s | calls/s    | peak MiB | diagnostics | Python s | ratio (range)      |"
    );
    println!(
        "|-------|------------|----------|-----------|---------|------------|------------|----------|-------------|----------|--------------------|"
    );
    let mut notes = Vec::new();
    for (ranks, size) in workloads {
        let path = dir.path().join(format!("trace-{ranks}-{size}.jsonl"));
        let file = std::fs::File::create(&path).expect("the trace file");
        let calls = trace_gen::write_trace(BufWriter::new(file), size, ranks).expect("the trace is written");
        let mib = std::fs::metadata(&path).expect("the trace file").len() as f64 / (1 << 20) as f64;
        let (ours, first, _) = run(Command::new(&exe).env("SYNCGUARD_BENCH_TRACE", &path));
        let pairs = if size >= HUGE { 1 } else { PAIRS };
        let (mut processes, mut pythons, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..pairs {
            let process = run(Command::new(&exe)
                .env("SYNCGUARD_BENCH_TRACE", &path)
                .env("SYNCGUARD_BENCH_CHECK_ONLY", "1"))
            .2;
            let python = run(Command::new("python3").arg(&baseline).arg(&path)).2;
            processes.push(process);
            pythons.push(python);
            ratios.push(process / python);
        }
        let (process, python) = (median(&mut processes), median(&mut pythons));
        let ratio = median(&mut ratios);
        let range = format!("{:.2}–{:.2}", ratios[0], ratios[ratios.len() - 1]);
        let [seconds, analysis, peak, diagnostics] = ours[..] else {
            panic!("the child prints four numbers")
        };
        // The trace is correct: any finding is a bug.
        assert!(
            diagnostics == 0.0,
            "{ranks} ranks, {calls} calls: {diagnostics} findings; {first}"
        );
        println!(
            "| {ranks:>5} | {calls:>10} | {mib:>8.1} | {process:>9.3} | {seconds:>7.3} | {analysis:>10.3} | {:>10.0} | {peak:>8.0} | {diagnostics:>11} | {python:>8.3} | {:<18} |",
            calls as f64 / process,
            format!("{ratio:.2} ({range})")
        );
        std::fs::remove_file(&path).expect("the trace file is removed");
        notes.extend((!first.is_empty()).then(|| format!("- {ranks} ranks, {calls} calls: {first}")));
    }
    if !notes.is_empty() {
        println!("\nFindings (the first of each size):\n\n{}", notes.join("\n"));
    }
}

/// The median of `values`, which are left sorted.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
