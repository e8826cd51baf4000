//! `syncguard-fuzz`: long fuzz runs. The supervisor splits each target's inputs into
//! chunks and runs every chunk in a child process (`--worker`), so that an abort (stack
//! overflow), a hang or a memory blow-up is caught and its input kept: the worker saves
//! each input before running it, the supervisor watches the child's exit status, its
//! resident memory and how long one input has been running.
//!
//! ```sh
//! cargo run --release -p syncguard-fuzz -- --inputs 1000000            # every target
//! cargo run --release -p syncguard-fuzz -- sync trace --inputs 100000 --seed 7
//! cargo run --release -p syncguard-fuzz -- plan --inputs 1000000 --seed 7 --first-chunk 29  # resume
//! ```
//! Failing inputs are written to `--out` (default `target/fuzz-failures`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant, SystemTime};

use clap::Parser;
use syncguard_fuzz::corpus::Corpus;
use syncguard_fuzz::{Target, fuzz};

#[derive(Parser)]
#[command(about = "Fuzz syncguard's readers: .sync, fmt, traces, convert, verify-then-run planning")]
struct Args {
    /// Targets to run (sync, fmt, trace, convert, plan); all when none is named.
    targets: Vec<String>,
    /// Inputs per target.
    #[arg(long, default_value_t = 100_000)]
    inputs: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Inputs per child process.
    #[arg(long, default_value_t = 20_000)]
    chunk: u64,
    /// Skip the first chunks of each target: resumes a stopped run of the same seed
    /// (chunk `k` of seed `S` always holds the same inputs).
    #[arg(long, default_value_t = 0)]
    first_chunk: u64,
    /// Child processes at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Time one input may take before it counts as a hang. The analysis accepts runs
    /// of up to 20M calls (`exec::MAX_NODES`): a four-line loop of 10M kernel launches
    /// is checked, planned and run through in about 25 s, so the limit is above that.
    #[arg(long, default_value_t = 60_000)]
    per_input_ms: u64,
    /// Resident memory a child may reach before it counts as a blow-up: above the
    /// 20M-call envelope (about 280 bytes a call, 3.7 GiB for the 10M-launch loop
    /// planned), so that only memory out of proportion to the calls fails.
    #[arg(long, default_value_t = 6144)]
    max_rss_mib: u64,
    #[arg(long, default_value = "target/fuzz-failures")]
    out: PathBuf,
    /// Run the one target named first on this file's bytes and say what happens.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Internal: run one chunk in this process.
    #[arg(long, hide = true)]
    worker: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(target) = &args.worker {
        return worker(&args, target);
    }
    if let Some(file) = &args.replay {
        return replay(&args, file);
    }
    supervise(&args)
}

fn parse_targets(names: &[String]) -> Result<Vec<Target>, String> {
    if names.is_empty() {
        return Ok(Target::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| Target::from_name(n).ok_or_else(|| format!("unknown target `{n}`")))
        .collect()
}

/// Run one chunk (`--seed` is the chunk's own seed) and print its failures.
fn worker(args: &Args, target: &str) -> ExitCode {
    let Some(target) = Target::from_name(target) else {
        return ExitCode::from(2);
    };
    let corpus = Corpus::load(&Corpus::workspace_root());
    let current = current_input(&args.out, target, args.seed);
    let summary = fuzz(
        target,
        &corpus,
        args.seed,
        args.inputs,
        Duration::from_millis(args.per_input_ms),
        |input| {
            let _ = std::fs::write(&current, input);
        },
    );
    // The report goes to a file: a child blocked on a full stdout pipe would look hung.
    let mut report = String::new();
    let mut kinds = std::collections::HashSet::new();
    for (i, failure) in summary.failures.iter().enumerate() {
        let path = args.out.join(format!("{}-{}-{i}.input", target.name(), args.seed));
        let kind: String = failure.what.chars().take(48).collect();
        if kinds.insert(kind) || i < KEPT_PER_CHUNK {
            let _ = std::fs::write(&path, &failure.input);
        }
        report.push_str(&format!("FAIL {} {}\n", path.display(), failure.what));
    }
    report.push_str(&format!("DONE {} {}\n", summary.inputs, summary.slowest.as_millis()));
    let _ = std::fs::write(report_file(&args.out, target, args.seed), report);
    let _ = std::fs::remove_file(&current);
    ExitCode::SUCCESS
}

fn replay(args: &Args, file: &Path) -> ExitCode {
    let target = match parse_targets(&args.targets) {
        Ok(targets) if targets.len() == 1 => targets[0],
        _ => {
            eprintln!("syncguard-fuzz: --replay takes exactly one target");
            return ExitCode::from(2);
        }
    };
    let input = match std::fs::read(file) {
        Ok(input) => input,
        Err(err) => {
            eprintln!("syncguard-fuzz: cannot read {}: {err}", file.display());
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let outcome = syncguard_fuzz::targets::run(target, &input);
    println!("{}: {outcome:?} in {:?}", target.name(), started.elapsed());
    if outcome.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Failing inputs one chunk keeps as files besides the first of each kind (all are
/// counted and listed).
const KEPT_PER_CHUNK: usize = 20;

fn current_input(out: &Path, target: Target, seed: u64) -> PathBuf {
    out.join(format!("{}-{seed}.current", target.name()))
}

fn report_file(out: &Path, target: Target, seed: u64) -> PathBuf {
    out.join(format!("{}-{seed}.report", target.name()))
}

struct Running {
    target: Target,
    /// The chunk's index in its target's run, and its own seed.
    chunk: u64,
    seed: u64,
    child: Child,
    started: Instant,
}

fn supervise(args: &Args) -> ExitCode {
    let targets = match parse_targets(&args.targets) {
        Ok(targets) => targets,
        Err(message) => {
            eprintln!("syncguard-fuzz: {message}");
            return ExitCode::from(2);
        }
    };
    if let Err(err) = std::fs::create_dir_all(&args.out) {
        eprintln!("syncguard-fuzz: cannot create {}: {err}", args.out.display());
        return ExitCode::from(2);
    }
    let exe = std::env::current_exe().expect("the running executable has a path");
    let mut queue: Vec<(Target, u64, u64, u64)> = Vec::new();
    for &target in &targets {
        let mut left = args.inputs;
        let mut chunk = 0;
        while left > 0 {
            let count = left.min(args.chunk);
            if chunk >= args.first_chunk {
                queue.push((
                    target,
                    chunk,
                    args.seed.wrapping_mul(1_000_003).wrapping_add(chunk),
                    count,
                ));
            }
            left -= count;
            chunk += 1;
        }
    }
    queue.reverse();
    let started = Instant::now();
    let mut running: Vec<Running> = Vec::new();
    let mut failures = 0usize;
    let mut done = std::collections::BTreeMap::<Target, u64>::new();
    while !queue.is_empty() || !running.is_empty() {
        while running.len() < args.jobs
            && let Some((target, chunk, seed, count)) = queue.pop()
        {
            let child = Command::new(&exe)
                .args([
                    "--worker",
                    target.name(),
                    "--seed",
                    &seed.to_string(),
                    "--inputs",
                    &count.to_string(),
                ])
                .args(["--per-input-ms", &args.per_input_ms.to_string(), "--out"])
                .arg(&args.out)
                .spawn()
                .expect("the fuzzer can start itself");
            running.push(Running {
                target,
                chunk,
                seed,
                child,
                started: Instant::now(),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
        let mut index = 0;
        while index < running.len() {
            match watch(args, &mut running[index]) {
                None => index += 1,
                Some((inputs, found)) => {
                    let finished = running.remove(index);
                    // Per chunk, so that a stopped run can be resumed (`--first-chunk`)
                    // and counted.
                    println!(
                        "{} chunk {}: {inputs} inputs, {found} failures, {:.0} s",
                        finished.target.name(),
                        finished.chunk,
                        finished.started.elapsed().as_secs_f64()
                    );
                    *done.entry(finished.target).or_default() += inputs;
                    failures += found;
                }
            }
        }
    }
    for (target, inputs) in &done {
        println!("{}: {inputs} inputs", target.name());
    }
    println!(
        "{failures} failures in {:.0} s (seed {}); failing inputs are in {}",
        started.elapsed().as_secs_f64(),
        args.seed,
        args.out.display()
    );
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Whether the child has finished (with its input count and failures), killing it on a
/// hang or a blow-up.
fn watch(args: &Args, running: &mut Running) -> Option<(u64, usize)> {
    let current = current_input(&args.out, running.target, running.seed);
    let stuck = std::fs::metadata(&current)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| SystemTime::now().duration_since(at).ok())
        .is_some_and(|idle| idle > Duration::from_millis(args.per_input_ms * 3));
    let rss = resident_mib(running.child.id());
    let killed = if stuck {
        Some("hangs".to_string())
    } else if rss > args.max_rss_mib {
        Some(format!("reaches {rss} MiB"))
    } else {
        None
    };
    if let Some(why) = killed {
        let _ = running.child.kill();
        let _ = running.child.wait();
        return Some((0, keep_current(running, &current, &why)));
    }
    let status = running.child.try_wait().ok()??;
    let report = report_file(&args.out, running.target, running.seed);
    let output = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    let mut found = 0;
    let mut inputs = 0;
    for line in output.lines() {
        if let Some(failure) = line.strip_prefix("FAIL ") {
            println!("{}: {failure}", running.target.name());
            found += 1;
        } else if let Some(done) = line.strip_prefix("DONE ") {
            inputs = done.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        }
    }
    if !status.success() {
        found += keep_current(running, &current, &format!("the process died ({status})"));
    }
    Some((inputs, found))
}

fn keep_current(running: &Running, current: &Path, why: &str) -> usize {
    let kept = current.with_extension("input");
    let _ = std::fs::rename(current, &kept);
    println!("{}: {} {why}", running.target.name(), kept.display());
    1
}

fn resident_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}
