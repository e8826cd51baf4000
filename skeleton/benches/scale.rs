//! The check in two passes at scale: generated captured runs of 64 to 4,096 ranks
//! (`syncguard_skeleton::generate`: the trace bench's step with its HCCL ring, plus
//! kernel launches without memory, as the rank files a capture writes), each reduced to
//! skeletons (the per-rank pass), then checked from the skeletons (the global pass) and,
//! for comparison, by `check`'s own path (merge the rank files, check the merge). Each
//! step runs in a child process of its own, so that its time and peak memory are its
//! own; the two reports are compared (a hash of the JSON) and must be equal.
//!
//! Run: `cargo bench -p syncguard-skeleton --bench scale`
//! (`SYNCGUARD_BENCH_RANKS=64,1024` for other sizes; `SYNCGUARD_BENCH_STEPS`,
//! `SYNCGUARD_BENCH_LAUNCHES` for another step.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use syncguard_analyzer::render::render_json;
use syncguard_analyzer::{Diagnostic, Overrides, Sources, check_merged_run};
use syncguard_skeleton::{RESERVE_EXTENSION, Skeleton};

#[path = "../../analyzer/benches/peak_memory/mod.rs"]
mod peak_memory;
use peak_memory::peak_rss_mib;

fn rank_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| (p.display().to_string(), p))
        .collect();
    files.sort();
    files
}

/// FNV-1a of the JSON report, and the number of findings.
fn digest(sources: &Sources, mut diagnostics: Vec<Diagnostic>, files: usize) -> (u64, usize) {
    Diagnostic::sort(&mut diagnostics);
    let json = render_json(&diagnostics, &[], &[], sources, files).to_string();
    let hash = json.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    (hash, diagnostics.len())
}

/// In the child: one step; prints `seconds peak_mib [hash findings]`.
fn child(step: &str, dir: &Path, out: &Path) {
    let start = Instant::now();
    match step {
        "skeleton" => {
            let files = rank_files(dir);
            let (skeletons, _) = syncguard_skeleton::skeletons_of_run("gen", &files, &[], 0);
            for skeleton in skeletons {
                let path = out.join(skeleton.file_name());
                if skeleton.dropped > 0 {
                    std::fs::write(path.with_extension(RESERVE_EXTENSION), skeleton.encode_reserve()).unwrap();
                }
                std::fs::write(path, skeleton.encode()).unwrap();
            }
            println!("{} {}", start.elapsed().as_secs_f64(), peak_rss_mib());
        }
        "check" => {
            let mut sources = Sources::default();
            let merged = syncguard_trace::merge::merge_run("gen", &rank_files(dir));
            let checked = check_merged_run(&mut sources, &merged, &Overrides::default());
            let seconds = start.elapsed().as_secs_f64();
            let (hash, findings) = digest(&sources, checked.diagnostics, 1);
            println!("{seconds} {} {hash} {findings}", peak_rss_mib());
        }
        "global" => {
            let mut skeletons = Vec::new();
            for entry in std::fs::read_dir(out).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == syncguard_skeleton::EXTENSION) {
                    skeletons.push(Skeleton::decode(&std::fs::read(&path).unwrap()).unwrap());
                }
            }
            let mut sources = Sources::default();
            let mut no_reserve = |_: &Skeleton| Err("the bench's runs are clean".to_string());
            let checked =
                syncguard_skeleton::check_skeletons(&mut sources, skeletons, &Overrides::default(), &mut no_reserve)
                    .unwrap();
            let seconds = start.elapsed().as_secs_f64();
            let files = checked.len();
            let diagnostics = checked.into_iter().flat_map(|c| c.file.diagnostics).collect();
            let (hash, findings) = digest(&sources, diagnostics, files);
            println!("{seconds} {} {hash} {findings}", peak_rss_mib());
        }
        other => panic!("unknown step {other}"),
    }
}

fn run(step: &str, dir: &Path, out: &Path) -> (Vec<f64>, f64) {
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let output = Command::new(exe)
        .env("SYNCGUARD_BENCH_STEP", step)
        .env("SYNCGUARD_BENCH_DIR", dir)
        .env("SYNCGUARD_BENCH_OUT", out)
        .output()
        .unwrap();
    let wall = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{step}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let numbers = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    (numbers, wall)
}

fn bytes_with(dir: &Path, ext: &str) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    if let Ok(step) = std::env::var("SYNCGUARD_BENCH_STEP") {
        let dir = PathBuf::from(std::env::var("SYNCGUARD_BENCH_DIR").unwrap());
        let out = PathBuf::from(std::env::var("SYNCGUARD_BENCH_OUT").unwrap());
        child(&step, &dir, &out);
        return;
    }
    let ranks: Vec<usize> = std::env::var("SYNCGUARD_BENCH_RANKS")
        .unwrap_or_else(|_| "64,256,1024,4096".into())
        .split(',')
        .map(|r| r.trim().parse().expect("a rank count"))
        .collect();
    let steps = env_number("SYNCGUARD_BENCH_STEPS", 4);
    let launches = env_number("SYNCGUARD_BENCH_LAUNCHES", 48);
    println!(
        "Generated clean runs: {steps} steps a rank, each {launches} kernel launches without memory and the HCCL ring step;"
    );
    println!("each pass a child process (s: its time from start to report; MiB: its peak resident set).\n");
    println!(
        "| ranks | calls     | traces MiB | skeletons MiB | reserves MiB | calls kept | per-rank pass s (per rank ms) | check s | check MiB | global pass s | global MiB | findings |"
    );
    println!(
        "|-------|-----------|------------|---------------|--------------|------------|-------------------------------|---------|-----------|---------------|------------|----------|"
    );
    for ranks in ranks {
        let scratch = tempfile::tempdir().unwrap();
        let (dir, out) = (scratch.path().join("traces"), scratch.path().join("skeletons"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let job = syncguard_skeleton::generate::Job {
            ranks,
            steps,
            launches,
            race_every: 0,
        };
        let calls = syncguard_skeleton::generate::write_run(&dir, job).unwrap();
        let (skeleton, _) = run("skeleton", &dir, &out);
        let (global, _) = run("global", &dir, &out);
        let (check, _) = run("check", &dir, &out);
        assert_eq!(
            (global[2], global[3]),
            (check[2], check[3]),
            "{ranks} ranks: the two passes report differently from check"
        );
        let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
        let traces = mib(bytes_with(&dir, "jsonl"));
        let skeletons = mib(bytes_with(&out, syncguard_skeleton::EXTENSION));
        let reserves = mib(bytes_with(&out, RESERVE_EXTENSION));
        let kept = {
            let mut kept = 0usize;
            for entry in std::fs::read_dir(&out).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == syncguard_skeleton::EXTENSION) {
                    let skeleton = Skeleton::decode(&std::fs::read(&path).unwrap()).unwrap();
                    kept += skeleton.calls - skeleton.dropped;
                }
            }
            kept
        };
        println!(
            "| {ranks:>5} | {calls:>9} | {traces:>10.1} | {skeletons:>13.2} | {reserves:>12.2} | {:>9.1}% | {:>13.2} ({:>5.2}) | {:>7.2} | {:>9.0} | {:>13.2} | {:>10.0} | {:>8} |",
            100.0 * kept as f64 / calls as f64,
            skeleton[0],
            1000.0 * skeleton[0] / ranks as f64,
            check[0],
            check[1],
            global[0],
            global[1],
            check[3],
        );
    }
}
