//! `syncguard-kernel-mutants`: recall of the kernel rules on mutants of real kernels.
//! Each correct kernel (C/C++ with `__aicore__`, or a `.sync` file with an `aicore`
//! block) is checked as is, then once per mutant (one synchronization call deleted or
//! altered, `syncguard_fuzz::kernel_mutants`); a mutant is found when the check reports
//! an SG8xx error or warning the original did not have. Recall is printed per class,
//! with every missed mutant for triage.
//!
//! ```sh
//! cargo build --release
//! cargo run --release -p syncguard-fuzz --bin syncguard-kernel-mutants -- PATHS... [--json OUT]
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use clap::Parser;
use syncguard_fuzz::kernel_mutants::{Class, mutants};

#[derive(Parser)]
#[command(about = "Mutate the synchronization of correct kernels and count what the kernel rules find")]
struct Args {
    /// Kernel files or folders (C/C++ kernels and `.sync` files).
    paths: Vec<PathBuf>,
    /// The syncguard binary to run.
    #[arg(long, default_value = "target/release/syncguard")]
    syncguard: PathBuf,
    /// Checks at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Most mutants per file (the first ones, in line order).
    #[arg(long, default_value_t = 200)]
    per_file: usize,
    /// Write every mutant's outcome here as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// What the checks of one file and its mutants gave.
struct FileOutcome {
    path: PathBuf,
    skipped: Option<String>,
    mutants: Vec<(Class, usize, bool)>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let files = kernel_files(&args.paths);
    let queue = Mutex::new(files.iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let Some((index, path)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let outcome = check_file(&args, path);
                    results.lock().unwrap().push((index, outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(index, _)| *index);
    let outcomes: Vec<FileOutcome> = results.into_iter().map(|(_, outcome)| outcome).collect();
    report(&outcomes);
    if let Some(out) = &args.json {
        let json: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| {
                serde_json::json!({
                    "file": o.path.display().to_string(),
                    "skipped": o.skipped,
                    "mutants": o.mutants.iter().map(|(class, line, found)| serde_json::json!({
                        "class": class.name(), "line": line, "found": found,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        if let Err(error) = std::fs::write(out, serde_json::to_string_pretty(&json).unwrap_or_default()) {
            eprintln!("cannot write {}: {error}", out.display());
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}

fn kernel_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for root in paths {
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            let path = entry.path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !matches!(ext, "sync" | "cpp" | "cc" | "h" | "hpp" | "cce" | "asc") || !path.is_file() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let kernel = if ext == "sync" {
                text.contains("aicore ")
            } else {
                text.contains("__aicore__") && text.contains("__global__")
            };
            if kernel {
                files.push(path.to_path_buf());
            }
        }
    }
    files.sort();
    files
}

fn check_file(args: &Args, path: &Path) -> FileOutcome {
    let mut outcome = FileOutcome {
        path: path.to_path_buf(),
        skipped: None,
        mutants: Vec::new(),
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        outcome.skipped = Some("unreadable".into());
        return outcome;
    };
    let sync = path.extension().is_some_and(|e| e == "sync");
    let Some(original) = findings(args, path) else {
        outcome.skipped = Some("the check did not finish".into());
        return outcome;
    };
    if original.kernel_errors {
        outcome.skipped = Some("the original has an SG8xx error".into());
        return outcome;
    }
    if !original.has_kernel {
        outcome.skipped = Some("no kernel read".into());
        return outcome;
    }
    let Ok(dir) = tempfile::tempdir() else {
        outcome.skipped = Some("no temporary folder".into());
        return outcome;
    };
    copy_siblings(path, dir.path());
    let target = dir.path().join(path.file_name().unwrap_or_default());
    for mutant in mutants(&text, sync).into_iter().take(args.per_file) {
        if std::fs::write(&target, &mutant.text).is_err() {
            continue;
        }
        let found = findings(args, &target).is_some_and(|mutated| !mutated.kernel.is_subset(&original.kernel));
        outcome.mutants.push((mutant.class, mutant.line, found));
    }
    outcome
}

struct Findings {
    /// SG8xx errors and warnings: (code, message).
    kernel: BTreeSet<(String, String)>,
    kernel_errors: bool,
    has_kernel: bool,
}

fn findings(args: &Args, path: &Path) -> Option<Findings> {
    let output = Command::new(&args.syncguard)
        .args(["check", "--format", "json"])
        .arg(path)
        .output()
        .ok()?;
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let mut kernel = BTreeSet::new();
    let mut kernel_errors = false;
    for diagnostic in json["diagnostics"].as_array()? {
        let code = diagnostic["code"].as_str().unwrap_or("");
        let severity = diagnostic["severity"].as_str().unwrap_or("");
        if code.starts_with("SG8") && matches!(severity, "error" | "warning") {
            kernel_errors |= severity == "error";
            kernel.insert((
                code.to_string(),
                diagnostic["message"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    let has_kernel = if path.extension().is_some_and(|e| e == "sync") {
        true
    } else {
        Command::new(&args.syncguard)
            .arg("convert")
            .arg(path)
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("aicore "))
    };
    Some(Findings {
        kernel,
        kernel_errors,
        has_kernel,
    })
}

/// The files beside `path` (its headers), so that the mutant's includes resolve.
fn copy_siblings(path: &Path, into: &Path) {
    let Some(dir) = path.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten().take(400) {
        let from = entry.path();
        if from.is_file() && entry.metadata().is_ok_and(|m| m.len() < 4 << 20) {
            let _ = std::fs::copy(&from, into.join(entry.file_name()));
        }
    }
}

fn report(outcomes: &[FileOutcome]) {
    let mut per_class: BTreeMap<Class, (usize, usize)> = BTreeMap::new();
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    for outcome in outcomes {
        if let Some(why) = &outcome.skipped {
            *skipped.entry(why.as_str()).or_default() += 1;
        }
        for (class, _, found) in &outcome.mutants {
            let entry = per_class.entry(*class).or_default();
            entry.0 += 1;
            entry.1 += usize::from(*found);
        }
    }
    println!(
        "kernel files: {}, mutated: {}",
        outcomes.len(),
        outcomes.iter().filter(|o| o.skipped.is_none()).count()
    );
    for (why, count) in &skipped {
        println!("  skipped ({why}): {count}");
    }
    println!("{:<40} {:>8} {:>8} {:>8}", "class", "mutants", "found", "recall");
    let (mut all, mut found) = (0, 0);
    for class in Class::ALL {
        let (n, f) = per_class.get(&class).copied().unwrap_or_default();
        all += n;
        found += f;
        if n > 0 {
            println!(
                "{:<40} {n:>8} {f:>8} {:>7.1}%",
                class.name(),
                100.0 * f as f64 / n as f64
            );
        }
    }
    if all > 0 {
        println!(
            "{:<40} {all:>8} {found:>8} {:>7.1}%",
            "total",
            100.0 * found as f64 / all as f64
        );
    }
    println!("missed:");
    for outcome in outcomes {
        for (class, line, found) in &outcome.mutants {
            if !found {
                println!("  {}:{line}  {}", outcome.path.display(), class.name());
            }
        }
    }
}
