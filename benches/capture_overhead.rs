//! What `syncguard trace` costs a program: a loop of ACL calls into a fake
//! `libascendcl.so` (tests/capture/fake_acl.c, whose calls return at once), run directly
//! and under `syncguard trace`, each timed by the program itself (its loop only, not
//! process start). With no work between calls the difference is the interposer's cost per
//! call (recording, buffering, writing the lines); with host work between calls it is the
//! slowdown of a call-heavy program. Median of 5 runs each.
//!
//! `cargo bench --bench capture_overhead` (numbers in BENCHMARKS.md).

use std::path::Path;
use std::process::Command;

const SYNCGUARD: &str = env!("CARGO_BIN_EXE_syncguard");
const RUNS: usize = 5;
const CALLS: u64 = 400_000;

fn main() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    build(dir.path());
    println!("{CALLS} calls per run, median of {RUNS} runs");
    let direct = median(|| run(dir.path(), false, CALLS, 0));
    let traced = median(|| run(dir.path(), true, CALLS, 0));
    let per_call = |ns: f64| ns / CALLS as f64;
    println!(
        "calls only: {:.1} ns/call direct, {:.1} ns/call traced: {:.1} ns per intercepted call",
        per_call(direct),
        per_call(traced),
        per_call(traced - direct)
    );
    // About 2 µs of host work per record-and-wait pair: a program that calls the runtime
    // a million times a second.
    let work = 1_000;
    let direct = median(|| run(dir.path(), false, CALLS, work));
    let traced = median(|| run(dir.path(), true, CALLS, work));
    println!(
        "with host work ({:.2} µs per call): {:.1} ms direct, {:.1} ms traced: {:+.2}% slowdown",
        direct / CALLS as f64 / 1000.0,
        direct / 1e6,
        traced / 1e6,
        (traced / direct - 1.0) * 100.0
    );
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
    cc(&["-O2", "-o", "call_loop", &source("call_loop.c"), "-L.", "-lascendcl", &rpath]);
}

/// The loop's time in ns, as the program measured it.
fn run(dir: &Path, traced: bool, calls: u64, work: u64) -> f64 {
    let program = dir.join("call_loop");
    let (calls, work) = (calls.to_string(), work.to_string());
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
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("the program prints its loop's time")
}

fn median(mut run: impl FnMut() -> f64) -> f64 {
    let mut times: Vec<f64> = (0..RUNS).map(|_| run()).collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2]
}
