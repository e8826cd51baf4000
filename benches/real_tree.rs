//! `syncguard check` and cppcheck on the same files of a real repository snapshot, in
//! one run: MB/s, files/s, wall time and peak memory of each, and their ratio.
//!
//! ```sh
//! cargo bench --bench real_tree -- /tmp/asc-devkit --first 300            # 3 runs each
//! cargo bench --bench real_tree -- /work/repos/hicann+ops-nn --first 1000 --runs 1
//! cargo bench --bench real_tree -- /tmp/asc-devkit --baseline /tmp/syncguard-before
//! cargo bench --bench real_tree -- /tmp/asc-devkit --no-cppcheck --runs 1  # the whole tree
//! ```
//!
//! The files are those `syncguard check PATH` would read as C/C++ (its folder walk:
//! `.gitignore` honoured, hidden files skipped, links followed; the C/C++ extensions),
//! sorted by path, the first `N` with `--first N`. They are copied into a temporary
//! folder keeping their paths relative to `PATH` (includes between them still resolve),
//! and both tools get exactly those files: syncguard the folder, cppcheck
//! `--file-list` of the same copies (given explicitly, it analyzes headers and `.cu`
//! and `.asc` files too; it reads what they include on its own). Each run times
//! `syncguard check --format json FOLDER` (each binary, with `--baseline`) and then
//! `cppcheck -q -j 2 --file-list=LIST`, end to end, alternately, so that all see the
//! same machine; the table gives the median wall time and the largest peak resident set
//! (the process and its waited children: cppcheck's `-j` workers are forked children),
//! and the median CPU time (user and system: what a run costs on a shared machine).
//! Throughput is the selected files' bytes and count over each tool's own time, so the
//! MB/s ratio is the wall-time ratio. With `--baseline`, the two builds' JSON must be
//! byte-identical (the findings stay the same across a change for speed).
//!
//! The binary is `target/release/syncguard` (built by `cargo bench`);
//! `SYNCGUARD_BENCH_BIN=PATH` measures another one. Peak memory needs GNU time
//! (`/usr/bin/time`, Debian package `time`), cppcheck the Debian package `cppcheck`;
//! without either, that column or comparison is left out.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

// Only the measuring part of the benches' common code: the generators' is unused here.
#[path = "common/measured.rs"]
mod measured;
use measured::{Measured, format_bytes, median, on_path, peak_rss_measurable, run_measured};

const DEFAULT_RUNS: usize = 3;
const CPPCHECK_JOBS: usize = 2;

struct Args {
    root: PathBuf,
    first: Option<usize>,
    runs: usize,
    baseline: Option<PathBuf>,
    cppcheck: bool,
    /// Copy the selected files here (kept) instead of a temporary folder.
    copy_to: Option<PathBuf>,
}

fn parse_args() -> Args {
    let mut root = None;
    let mut args = Args {
        root: PathBuf::new(),
        first: None,
        runs: DEFAULT_RUNS,
        baseline: None,
        cppcheck: true,
        copy_to: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--first" => args.first = Some(value().parse().expect("--first N")),
            "--runs" => args.runs = value().parse().expect("--runs N"),
            "--baseline" => args.baseline = Some(PathBuf::from(value())),
            "--copy-to" => args.copy_to = Some(PathBuf::from(value())),
            "--no-cppcheck" => args.cppcheck = false,
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            other if other.starts_with("--") => panic!("unknown option {other}"),
            path => root = Some(PathBuf::from(path)),
        }
    }
    args.root = root.unwrap_or_else(|| {
        panic!("usage: cargo bench --bench real_tree -- PATH [--first N] [--runs N] [--baseline BIN] [--no-cppcheck]")
    });
    assert!(args.runs > 0, "--runs must be at least 1");
    args
}

/// The C/C++ files `syncguard check root` reads, relative to `root`, sorted by path.
fn select_files(root: &Path, first: Option<usize>) -> Vec<PathBuf> {
    // The same walk as `syncguard check`'s folders (`project/src/inputs.rs`).
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .follow_links(true)
        .require_git(false)
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(|entry| entry.into_path())
        .filter(|path| {
            path.extension()
                .and_then(OsStr::to_str)
                .is_some_and(|ext| syncguard_cpp::EXTENSIONS.contains(&ext))
        })
        .filter_map(|path| path.strip_prefix(root).ok().map(Path::to_path_buf))
        .collect();
    files.sort();
    files.dedup();
    if let Some(first) = first {
        files.truncate(first);
    }
    files
}

/// The selected files copied under `tree`; their total size in bytes.
fn copy_files(root: &Path, files: &[PathBuf], tree: &Path) -> u64 {
    let mut bytes = 0;
    for relative in files {
        let to = tree.join(relative);
        if let Some(folder) = to.parent() {
            std::fs::create_dir_all(folder).expect("a folder of the copy");
        }
        bytes += std::fs::copy(root.join(relative), &to)
            .unwrap_or_else(|err| panic!("cannot copy {}: {err}", relative.display()));
    }
    bytes
}

/// One tool's runs over the tree.
struct Runs {
    label: String,
    samples: Vec<Measured>,
}

impl Runs {
    fn new(label: impl Into<String>) -> Runs {
        Runs {
            label: label.into(),
            samples: Vec::new(),
        }
    }

    fn wall(&self) -> Duration {
        median(self.samples.iter().map(|sample| sample.wall).collect())
    }

    fn cpu(&self) -> Option<Duration> {
        let samples: Option<Vec<Duration>> = self.samples.iter().map(|sample| sample.cpu).collect();
        samples.map(median)
    }

    fn peak_rss(&self) -> Option<u64> {
        self.samples.iter().filter_map(|sample| sample.peak_rss).max()
    }
}

fn syncguard_run(binary: &Path, tree: &Path, scratch: &Path) -> Measured {
    let measured = run_measured(
        binary,
        &[
            OsStr::new("check"),
            OsStr::new("--format"),
            OsStr::new("json"),
            tree.as_os_str(),
        ],
        scratch,
    );
    // 0: clean, 1: findings; anything else is a failure.
    assert!(
        matches!(measured.output.status.code(), Some(0 | 1)),
        "{} check failed ({}): {}",
        binary.display(),
        measured.output.status,
        String::from_utf8_lossy(&measured.output.stderr)
    );
    measured
}

fn cppcheck_run(cppcheck: &Path, list: &Path, scratch: &Path) -> Measured {
    let jobs = format!("-j{CPPCHECK_JOBS}");
    let list = format!("--file-list={}", list.display());
    run_measured(
        cppcheck,
        &[OsStr::new("-q"), OsStr::new(&jobs), OsStr::new(&list)],
        scratch,
    )
}

fn main() {
    let args = parse_args();
    let binary = std::env::var_os("SYNCGUARD_BENCH_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_syncguard")), PathBuf::from);
    let files = select_files(&args.root, args.first);
    assert!(!files.is_empty(), "no C/C++ file under {}", args.root.display());
    let temp = tempfile::tempdir().expect("a temporary folder");
    let tree = args.copy_to.clone().unwrap_or_else(|| temp.path().join("tree"));
    let bytes = copy_files(&args.root, &files, &tree);
    let list = temp.path().join("files.txt");
    let listed: Vec<String> = files.iter().map(|f| tree.join(f).display().to_string()).collect();
    std::fs::write(&list, listed.join("\n") + "\n").expect("the file list");
    let mb = bytes as f64 / 1e6;

    let cppcheck = if args.cppcheck { on_path("cppcheck") } else { None };
    println!(
        "real_tree: {} files ({mb:.2} MB) of {}{}, copied to {}",
        files.len(),
        args.root.display(),
        args.first
            .map_or_else(String::new, |n| format!(", the first {n} by path")),
        tree.display()
    );
    println!("syncguard: {}", binary.display());
    if let Some(baseline) = &args.baseline {
        println!("baseline: {}", baseline.display());
    }
    match &cppcheck {
        Some(path) => println!("cppcheck: {} (-q -j{CPPCHECK_JOBS} --file-list)", version(path)),
        None if args.cppcheck => println!("cppcheck not found (Debian package `cppcheck`): the comparison is skipped"),
        None => {}
    }
    if !peak_rss_measurable() {
        println!("GNU time not found (/usr/bin/time, Debian package `time`): peak memory is not measured");
    }
    println!(
        "machine: {} cores; load average before: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );

    let mut builds: Vec<(Runs, PathBuf)> = Vec::new();
    if let Some(baseline) = &args.baseline {
        builds.push((Runs::new("syncguard (baseline)"), baseline.clone()));
    }
    builds.push((Runs::new("syncguard"), binary));
    let mut cppcheck_runs = Runs::new("cppcheck");
    for run in 1..=args.runs {
        for (runs, binary) in &mut builds {
            let measured = syncguard_run(binary, &tree, temp.path());
            report_run(run, &runs.label, &measured);
            runs.samples.push(measured);
        }
        if let Some(cppcheck) = &cppcheck {
            let measured = cppcheck_run(cppcheck, &list, temp.path());
            report_run(run, &cppcheck_runs.label, &measured);
            cppcheck_runs.samples.push(measured);
        }
    }
    println!("load average after: {}", load_average());

    let cppcheck_wall = cppcheck.as_ref().map(|_| cppcheck_runs.wall());
    println!();
    println!(
        "| tool | files | MB | s (median of {}) | files/s | MB/s | peak RSS | MB/s vs cppcheck | CPU s (median) |",
        args.runs
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let all = builds
        .iter()
        .map(|(runs, _)| runs)
        .chain(cppcheck.as_ref().map(|_| &cppcheck_runs));
    for runs in all {
        let secs = runs.wall().as_secs_f64();
        let ratio = cppcheck_wall.map_or_else(|| "".to_string(), |c| format!("{:.2}x", c.as_secs_f64() / secs));
        println!(
            "| {} | {} | {mb:.2} | {secs:.2} | {:.1} | {:.2} | {} | {ratio} | {} |",
            runs.label,
            files.len(),
            files.len() as f64 / secs,
            mb / secs,
            format_bytes(runs.peak_rss()),
            runs.cpu()
                .map_or_else(|| "?".to_string(), |cpu| format!("{:.2}", cpu.as_secs_f64())),
        );
    }
    println!();
    for (runs, _) in &builds {
        println!("{}: {}", runs.label, summary(&runs.samples[0].output.stdout));
    }
    if let Some(cppcheck) = cppcheck.as_ref().map(|_| &cppcheck_runs) {
        let findings = String::from_utf8_lossy(&cppcheck.samples[0].output.stderr)
            .lines()
            .filter(|line| line.contains(": error: ") || line.contains(": warning: "))
            .count();
        println!("cppcheck: {findings} errors and warnings");
    }
    let run_times = |runs: &Runs| {
        runs.samples
            .iter()
            .map(|s| format!("{:.2}", s.wall.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (runs, _) in &builds {
        println!("runs (s), {}: {}", runs.label, run_times(runs));
    }
    if cppcheck.is_some() {
        println!("runs (s), cppcheck: {}", run_times(&cppcheck_runs));
    }
    if let [(baseline, _), (this, _)] = builds.as_slice() {
        let same = baseline
            .samples
            .iter()
            .chain(&this.samples)
            .all(|sample| sample.output.stdout == baseline.samples[0].output.stdout);
        println!(
            "findings: {}",
            if same {
                "identical (byte-identical JSON, every run of both builds)"
            } else {
                "DIFFERENT between the builds (or between runs)"
            }
        );
        assert!(same, "the builds' findings differ");
    }
}

/// One run's figures as soon as it ends: a run over a whole repository takes minutes.
fn report_run(run: usize, label: &str, measured: &Measured) {
    println!(
        "run {run}, {label}: {:.2} s, CPU {}, peak RSS {}",
        measured.wall.as_secs_f64(),
        measured
            .cpu
            .map_or_else(|| "?".to_string(), |cpu| format!("{:.2} s", cpu.as_secs_f64())),
        format_bytes(measured.peak_rss)
    );
}

/// `N errors, N warnings, N infos` from syncguard's JSON summary.
fn summary(json: &[u8]) -> String {
    let json: serde_json::Value = serde_json::from_slice(json).expect("syncguard prints JSON");
    let summary = &json["summary"];
    format!(
        "{} errors, {} warnings, {} infos over {} files",
        summary["errors"], summary["warnings"], summary["infos"], summary["files"]
    )
}

fn version(program: &Path) -> String {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|_| program.display().to_string())
}

/// `/proc/loadavg`'s three averages, or `?` elsewhere.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
