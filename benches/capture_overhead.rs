//! What `syncguard trace` costs a program: a loop of ACL calls into a fake
//! `libascendcl.so` (tests/capture/fake_acl.c, whose calls return at once), run directly
//! and under `syncguard trace`, each timed by the program itself (its loop only, not
//! process start), as wall-clock time and as the process's CPU time (which a machine
//! busy with other work disturbs less). With no work between calls the difference is the
//! interposer's cost per call (recording, buffering, writing the lines); with host work
//! between calls it is the slowdown of a program making that many calls per second.
//! Median of 5 runs each.
//!
//! `cargo bench --bench capture_overhead` (numbers in BENCHMARKS.md).

use std::path::Path;
use std::process::Command;

const SYNCGUARD: &str = env!("CARGO_BIN_EXE_syncguard");
const RUNS: usize = 5;
const CALLS: u64 = 400_000;

/// A run's loop time in ns: wall clock and CPU.
#[derive(Clone, Copy)]
struct Time {
    wall: f64,
    cpu: f64,
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    build(dir.path());
    println!("{CALLS} calls per run, median of {RUNS} runs");
    let direct = median(|| run(dir.path(), false, 0));
    let traced = median(|| run(dir.path(), true, 0));
    let per_call = |ns: f64| ns / CALLS as f64;
    println!(
        "calls only: {:.0} ns per intercepted call wall-clock ({:.1} direct, {:.1} traced), {:.0} ns CPU",
        per_call(traced.wall - direct.wall),
        per_call(direct.wall),
        per_call(traced.wall),
        per_call(traced.cpu - direct.cpu)
    );
    // Host work between calls: about 1 µs and 10 µs per call (a million and a hundred
    // thousand calls a second).
    for work in [1_500, 15_000] {
        let direct = median(|| run(dir.path(), false, work));
        let traced = median(|| run(dir.path(), true, work));
        println!(
            "{:.1} µs of host work per call: {:.1} ms direct, {:.1} ms traced: {:+.1}% wall-clock, {:+.1}% CPU",
            direct.wall / CALLS as f64 / 1000.0,
            direct.wall / 1e6,
            traced.wall / 1e6,
            (traced.wall / direct.wall - 1.0) * 100.0,
            (traced.cpu / direct.cpu - 1.0) * 100.0
        );
    }
}

fn build(dir: &Path) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/capture");
    let cc = |args: &[&str]| {
        let status = Command::new("cc")
            .current_dir(dir)
            .arg(format!("-I{}", fixtures.display()))
            .args(args)
            .status()
            .expect("the benchmark needs a C compiler (`cc`)");
        assert!(status.success(), "cc {args:?}");
    };
    let source = |name: &str| fixtures.join(name).display().to_string();
    cc(&["-O2", "-shared", "-fPIC", "-o", "libascendcl.so", &source("fake_acl.c")]);
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    cc(&[
        "-O2",
        "-o",
        "call_loop",
        &source("call_loop.c"),
        "-L.",
        "-lascendcl",
        &rpath,
    ]);
}

/// The loop's time, as the program measured it; `work` rounds of arithmetic per two calls.
fn run(dir: &Path, traced: bool, work: u64) -> Time {
    let program = dir.join("call_loop");
    let (calls, work) = (CALLS.to_string(), work.to_string());
    let out = dir.join("traces");
    let output = if traced {
        Command::new(SYNCGUARD)
            .arg("trace")
            .arg("--out")
            .arg(&out)
            .arg("--")
            .arg(&program)
            .args([&calls, &work])
            .output()
    } else {
        Command::new(&program).args([&calls, &work]).output()
    }
    .expect("the benchmark program runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let _ = std::fs::remove_dir_all(&out);
    let text = String::from_utf8_lossy(&output.stdout);
    let mut numbers = text.split_whitespace().map(|n| n.parse::<f64>().expect("a time in ns"));
    let (wall, cpu) = (numbers.next(), numbers.next());
    Time {
        wall: wall.expect("the wall-clock time"),
        cpu: cpu.expect("the CPU time"),
    }
}

fn median(mut run: impl FnMut() -> Time) -> Time {
    let mut times: Vec<Time> = (0..RUNS).map(|_| run()).collect();
    times.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    let wall = times[RUNS / 2].wall;
    times.sort_by(|a, b| a.cpu.total_cmp(&b.cpu));
    Time {
        wall,
        cpu: times[RUNS / 2].cpu,
    }
}
