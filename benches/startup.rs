//! A small file's fixed cost: `syncguard check FILE` end to end (process start to exit)
//! on an empty file, the repository's `examples/cpp/fail_add_relu_tail_tile.asc` and any
//! `--file` given, many runs each: median and p95 wall time, and the mean user and
//! system CPU time of the process and its threads (the waited children's times).
//!
//! ```sh
//! cargo bench --bench startup                                   # 50 runs, this machine's cores
//! cargo bench --bench startup -- --runs 100 --threads 2,16 \
//!     --baseline /tmp/syncguard-before --file path/to/matmul_custom.cpp
//! ```
//!
//! `--threads` sets `RAYON_NUM_THREADS` (the analysis pool's size, one thread per core by
//! default), so a 2-core machine shows what a run costs on a bigger one. `--baseline`
//! times a second binary in the same run, alternating run by run with the first, and
//! checks that both print the same report. The binary is `target/release/syncguard`
//! (built by `cargo bench`); `SYNCGUARD_BENCH_BIN=PATH` times another one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DEFAULT_RUNS: usize = 50;
const WARMUP: usize = 3;

/// One run's times, in ms.
#[derive(Clone, Copy)]
struct Sample {
    wall: f64,
    user: f64,
    system: f64,
}

fn main() {
    let mut runs = DEFAULT_RUNS;
    let mut threads: Vec<Option<usize>> = vec![None];
    let mut baseline: Option<PathBuf> = None;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => runs = value().parse().expect("--runs N"),
            "--threads" => {
                threads = value()
                    .split(',')
                    .map(|n| Some(n.parse().expect("--threads N,M")))
                    .collect()
            }
            "--baseline" => baseline = Some(PathBuf::from(value())),
            "--file" => files.push(PathBuf::from(value())),
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let binary = std::env::var_os("SYNCGUARD_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_syncguard")));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let empty = dir.path().join("empty.asc");
    std::fs::write(&empty, "").expect("the empty file");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cpp/fail_add_relu_tail_tile.asc");
    let mut inputs = vec![empty, example];
    inputs.extend(files);

    let mut binaries = vec![("this build", binary)];
    if let Some(baseline) = baseline {
        binaries.insert(0, ("baseline", baseline));
    }
    println!(
        "{runs} runs per binary, file and pool size (after {WARMUP} warm-up runs), binaries alternating; times in ms"
    );
    println!("| pool threads | file | lines | binary | wall median | wall p95 | user mean | system mean |");
    println!("|---|---|---:|---|---:|---:|---:|---:|");
    for &pool in &threads {
        for input in &inputs {
            let reports: Vec<Vec<u8>> = binaries.iter().map(|(_, bin)| run(bin, input, pool).1).collect();
            if reports.windows(2).any(|pair| pair[0] != pair[1]) {
                println!("warning: the binaries' reports on {} differ", input.display());
            }
            for _ in 0..WARMUP {
                for (_, bin) in &binaries {
                    run(bin, input, pool);
                }
            }
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); binaries.len()];
            for _ in 0..runs {
                for (index, (_, bin)) in binaries.iter().enumerate() {
                    samples[index].push(run(bin, input, pool).0);
                }
            }
            let lines = std::fs::read_to_string(input).map_or(0, |text| text.lines().count());
            let name = input
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            for ((label, _), samples) in binaries.iter().zip(&samples) {
                let wall: Vec<f64> = samples.iter().map(|s| s.wall).collect();
                let mean = |time: fn(&Sample) -> f64| samples.iter().map(time).sum::<f64>() / samples.len() as f64;
                println!(
                    "| {} | `{name}` | {lines} | {label} | {:.1} | {:.1} | {:.1} | {:.1} |",
                    pool.map_or_else(|| "all cores".to_string(), |n| n.to_string()),
                    quantile(&wall, 0.5),
                    quantile(&wall, 0.95),
                    mean(|s| s.user),
                    mean(|s| s.system),
                );
            }
        }
    }
}

/// `binary check input`, timed, and its standard output.
fn run(binary: &Path, input: &Path, pool: Option<usize>) -> (Sample, Vec<u8>) {
    let mut command = Command::new(binary);
    command
        .arg("check")
        .arg(input)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    if let Some(threads) = pool {
        command.env("RAYON_NUM_THREADS", threads.to_string());
    }
    let before = children_usage();
    let start = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
    let wall = start.elapsed();
    let after = children_usage();
    let sample = Sample {
        wall: ms(wall),
        user: ms(after.0.saturating_sub(before.0)),
        system: ms(after.1.saturating_sub(before.1)),
    };
    (sample, output.stdout)
}

/// The user and system time of every waited child so far: `cutime` and `cstime` of
/// `/proc/self/stat`, in clock ticks (10 ms: Linux's `USER_HZ` is 100), so one run's
/// times are known to a tick and only their mean over many runs is reported.
fn children_usage() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command name's closing parenthesis start at the third.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a command name") + 1..]
        .split_whitespace()
        .collect();
    let ticks = |field: usize| Duration::from_millis(10 * fields[field - 3].parse::<u64>().expect("clock ticks"));
    (ticks(16), ticks(17))
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The `q` quantile (nearest rank) of `values`.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
