//! Reader throughput: `read_trace` alone (read, parse and lower a JSONL trace, no
//! analysis) on generated correct traces of 1M calls over 8 and 64 ranks (the workload
//! of the analyzer's `trace` bench), reading in parallel blocks against reading one line
//! at a time (the reader before blocks), on the same file in the same run. Every run is
//! a child process, so that its peak memory is its own; each figure is the median of
//! the runs, which alternate between the two readers.
//!
//! Run: `cargo bench -p syncguard-trace --bench read`. Knobs:
//! - `SYNCGUARD_BENCH_RUNS=N`: runs of each reader (5);
//! - `SYNCGUARD_BENCH_CALLS=N`: calls in each trace (1M);
//! - `SYNCGUARD_READ_BENCH_TRACES=DIR`: keep the traces in DIR and reuse them;
//! - `SYNCGUARD_READ_BENCH_FILE=FILE SYNCGUARD_READ_BENCH_MODE=blocks` (or `lines`): read
//!   FILE once, as a run does (for profiling);
//! - `SYNCGUARD_READ_BENCH_BLOCK_KIB=N`: blocks of N KiB instead of the reader's own.

#[path = "../../analyzer/benches/peak_memory/mod.rs"]
mod peak_memory;
#[path = "../../analyzer/benches/trace_gen/mod.rs"]
mod trace_gen;

use std::io::BufWriter;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use syncguard_model::source::Sources;
use syncguard_trace::{ReadOptions, read_trace_with};

const CALLS: usize = 1_000_000;
const RANKS: [usize; 2] = [8, 64];
const RUNS: usize = 5;
/// In a child: the trace to read and how (`blocks` or `lines`).
const FILE_VAR: &str = "SYNCGUARD_READ_BENCH_FILE";
const MODE_VAR: &str = "SYNCGUARD_READ_BENCH_MODE";
/// The block size in KiB, instead of the reader's own.
const BLOCK_VAR: &str = "SYNCGUARD_READ_BENCH_BLOCK_KIB";
/// A folder to keep the generated traces in (and reuse them from), for profiling.
const TRACES_VAR: &str = "SYNCGUARD_READ_BENCH_TRACES";

/// In the child: read the trace; print `seconds peak_mib lines findings`.
fn measure(path: &Path, mode: &str) {
    let block_size = match mode {
        "lines" => None,
        _ => match std::env::var(BLOCK_VAR).ok().and_then(|kib| kib.parse::<usize>().ok()) {
            Some(kib) => Some(kib << 10),
            None => ReadOptions::default().block_size,
        },
    };
    let options = ReadOptions {
        block_size,
        ..ReadOptions::default()
    };
    let file = std::fs::File::open(path).expect("the trace opens");
    let start = Instant::now();
    let mut sources = Sources::default();
    // As `check` reads a file: from where it can be read again, which sizes the op lists.
    let reread = Some(path.to_path_buf());
    let lowerer = read_trace_with(&mut sources, "bench.jsonl", file, reread, false, false, options);
    let seconds = start.elapsed().as_secs_f64();
    let read = lowerer.into_read(None, None);
    let lines = sources.get(read.file).line_of(usize::MAX) + 1;
    println!(
        "{seconds} {} {lines} {}",
        peak_memory::peak_rss_mib(),
        read.diagnostics.len()
    );
}

/// One child run: seconds, peak MiB, lines, findings.
fn run_child(path: &Path, mode: &str) -> [f64; 4] {
    let exe = std::env::current_exe().expect("the bench binary");
    let output = Command::new(exe)
        .env(FILE_VAR, path)
        .env(MODE_VAR, mode)
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the {mode} run failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let numbers: Vec<f64> = stdout
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    numbers.try_into().expect("four numbers")
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if let (Ok(path), Ok(mode)) = (std::env::var(FILE_VAR), std::env::var(MODE_VAR)) {
        measure(Path::new(&path), &mode);
        return;
    }
    let number = |var: &str, default: usize| std::env::var(var).ok().and_then(|n| n.parse().ok()).unwrap_or(default);
    let runs = number("SYNCGUARD_BENCH_RUNS", RUNS);
    let calls = number("SYNCGUARD_BENCH_CALLS", CALLS);
    let temporary = tempfile::tempdir().expect("a temporary directory");
    let dir = std::env::var_os(TRACES_VAR).map_or_else(|| temporary.path().to_path_buf(), Into::into);
    println!(
        "`read_trace` on a generated correct trace of {calls} calls, median of {runs} runs, {} threads:\n",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| ranks | file MB | reader        | seconds | MB/s  | peak MiB |");
    println!("|-------|---------|---------------|---------|-------|----------|");
    for ranks in RANKS {
        let path = dir.join(format!("trace-{calls}-{ranks}.jsonl"));
        if !path.exists() {
            let out = BufWriter::new(std::fs::File::create(&path).expect("the trace file"));
            trace_gen::write_trace(out, calls, ranks).expect("the trace is written");
        }
        let megabytes = std::fs::metadata(&path).expect("the trace file").len() as f64 / 1e6;
        let modes = [("lines", "line by line"), ("blocks", "blocks")];
        let mut results: Vec<Vec<[f64; 4]>> = vec![Vec::new(); modes.len()];
        for _ in 0..runs {
            for (results, (mode, _)) in results.iter_mut().zip(modes) {
                results.push(run_child(&path, mode));
            }
        }
        let first = results[0][0];
        for (results, (_, name)) in results.iter().zip(modes) {
            // Both readers must read the same lines and find the same.
            assert_eq!((results[0][2], results[0][3]), (first[2], first[3]), "{name} differs");
            let seconds = median(results.iter().map(|r| r[0]).collect());
            let peak = median(results.iter().map(|r| r[1]).collect());
            println!(
                "| {ranks:>5} | {megabytes:>7.1} | {name:<13} | {seconds:>7.3} | {:>5.0} | {peak:>8.0} |",
                megabytes / seconds
            );
        }
    }
}
