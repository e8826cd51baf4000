//! `syncguard-kernel-mutants`: recall of the kernel rules (SG8xx) on mutants of correct
//! kernels. A documented measurement (BENCHMARKS.md, "Kernel mutants"), not a CI step.
//!
//! Each kernel source (C/C++ with `__aicore__` code: `.cpp`, `.cc`, `.h`, `.hpp`, `.cce`,
//! `.asc`; or a `.sync` file with an `aicore` block), given as a file or found under a
//! folder (`.gitignore` honoured), is copied with the files it includes (and, for a
//! header, the sources beside it that include it) into a temporary tree, and checked as
//! is with `syncguard check --format json`. A kernel whose original has an error
//! finding, from which no `aicore` block is read (`syncguard convert`), or whose own
//! reading has a limit (a call left out, a walk stopped, code no launch reached, a race undecided for bytes it
//! could not compute: `--explain` information whose
//! entry point is one of the kernels read, or that names none) is counted and skipped;
//! a limit of host code beside it (`main` reading its input files) is not the kernel's. Otherwise every mutant of the file (one synchronization call deleted or
//! altered, `syncguard_fuzz::kernel_mutants`, in 15 bug classes) is written over the copy
//! and checked the same way. A mutant is
//!
//! - **found** when it has an SG8xx error or warning that the original does not have,
//!   compared by file, code and primary line (the mutant's lines mapped back to the
//!   original's, so that a deleted line does not make old findings look new);
//! - **equivalent** when it certainly means the same as the original (a set/wait pair or
//!   a `PIPE_ALL` barrier deleted beside another `PIPE_ALL` barrier; in `.sync` kernels
//!   also the last-statement barrier, a top-level `FreeTensor` never followed by an
//!   `AllocTensor` of its queue, `SyncAll` on block 0 of a one-block launch; in C/C++
//!   kernels a `FreeTensor` that the pipe program `convert` reads shows to be final in the
//!   same way, or of a queue never allocated past its depth, or of a `TBuf`; a
//!   `PipeBarrier<PIPE_ALL>` read as the kernel's last statement; a `PIPE_ALL` barrier
//!   or a set/wait pair whose every order two instructions touching one memory from two
//!   pipes need, along every path of the kernel's `if`s and loops, something else gives
//!   too (other flags, the queues' syncs, barriers, `SyncAll`, the automatic sync of
//!   scalar accesses: `kernel_mutants/order.rs`); an edit of one line
//!   from which the pipe program has no statement, in no kernel the build makes): reported
//!   apart, never counted as found, and listed if syncguard flags it anyway;
//! - **unchecked** when its check did not finish (timeout, crash, no JSON);
//! - **missed** otherwise.
//!
//! Recall per class is found / (found + missed). Missed mutants are listed as
//! `file:line  class` for triage. The inputs are never written to.
//!
//! ```sh
//! cargo build --release --bin syncguard
//! cargo run --release -p syncguard-fuzz --bin syncguard-kernel-mutants -- \
//!     --syncguard target/release/syncguard [--jobs 2] [--timeout-ms 60000] [--json] [--json-out FILE] PATHS...
//! ```
//!
//! `--json` prints the JSON report instead of the table; `--json-out FILE` also writes it
//! to FILE. Order and output are deterministic for any `--jobs`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use syncguard_fuzz::kernel_mutants::{
    Class, Mutant, barrier_is_last, barrier_orders_nothing, free_is_final, in_no_statement, mutants,
    pair_orders_nothing,
};

#[derive(Parser)]
#[command(about = "Mutate the synchronization of correct kernels and count what the kernel rules find")]
struct Args {
    /// Kernel files or folders (C/C++ kernels and `.sync` files with `aicore` blocks).
    paths: Vec<PathBuf>,
    /// The syncguard binary to run.
    #[arg(long, default_value = "target/release/syncguard")]
    syncguard: PathBuf,
    /// Checks at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Most mutants per file (the first ones, in line order).
    #[arg(long, default_value_t = 400)]
    per_file: usize,
    /// Time one syncguard run may take, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    timeout_ms: u64,
    /// Print the report as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
}

const CPP: [&str; 7] = ["cpp", "cc", "h", "hpp", "cce", "asc", "cxx"];
/// Most files copied with one kernel (it and what it includes).
const MAX_UNIT_FILES: usize = 64;
const MAX_FILE_BYTES: u64 = 4 << 20;

/// A kernel file and the files checked with it, by path relative to their common folder.
struct Unit {
    path: PathBuf,
    sync: bool,
    /// Index in `files` of the kernel file.
    kernel: usize,
    files: Vec<(PathBuf, String)>,
}

/// An SG8xx error or warning, or another finding, keyed the way mutants are compared.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    file: String,
    code: String,
    line: usize,
    kernel_rule: bool,
}

struct Checked {
    findings: BTreeSet<Finding>,
    errors: Vec<String>,
    /// What the reader left out, or where a walk stopped (`--explain` information).
    limits: Vec<Limit>,
}

/// A reading limit the check reported: where, and the entry point whose walk it cut.
struct Limit {
    at: String,
    /// `None` for a limit no entry point names (a kernel's walk stopped, a syntax error).
    entry: Option<String>,
}

impl Checked {
    /// The first limit inside a kernel's own reading (its entry point one of `kernels`,
    /// or no entry point named): the kernel's findings are undecided then, and so would
    /// a mutant's be. A limit of host code (`main` reading its input files) leaves the
    /// kernel's pipe program whole.
    fn undecided(&self, kernels: &BTreeSet<String>) -> Option<&str> {
        self.limits
            .iter()
            .find(|limit| limit.entry.as_ref().is_none_or(|entry| kernels.contains(entry)))
            .map(|limit| limit.at.as_str())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Found,
    Missed,
    Equivalent,
    Unchecked,
}

impl Verdict {
    fn name(self) -> &'static str {
        match self {
            Verdict::Found => "found",
            Verdict::Missed => "missed",
            Verdict::Equivalent => "equivalent",
            Verdict::Unchecked => "unchecked",
        }
    }
}

struct Outcome {
    verdict: Verdict,
    /// New SG8xx findings (`SG801@12`), or why the check did not finish.
    new_kernel: Vec<String>,
    /// New findings of other codes, for triage.
    new_other: Vec<String>,
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    match std::fs::canonicalize(&args.syncguard) {
        Ok(path) => args.syncguard = path,
        Err(error) => {
            eprintln!("cannot run {}: {error}", args.syncguard.display());
            return ExitCode::FAILURE;
        }
    }
    let units: Vec<Unit> = kernel_files(&args.paths).into_iter().filter_map(|p| unit(&p)).collect();

    // The originals.
    let read: Vec<Result<(Checked, String), String>> = pool(&units, args.jobs, |unit| {
        let checked = check(&args, &unit.files, None)?;
        if !checked.errors.is_empty() {
            return Err(format!("the original has errors ({})", checked.errors.join(", ")));
        }
        let (kernels, converted) = kernels_read(&args, unit)?;
        if kernels.is_empty() {
            return Err("no kernel read".into());
        }
        if let Some(limit) = checked.undecided(&kernels) {
            return Err(format!("not followed to the end: its findings are undecided ({limit})"));
        }
        Ok((checked, converted))
    });
    let (originals, programs): (Vec<Result<Checked, String>>, Vec<String>) = read
        .into_iter()
        .map(|result| match result {
            Ok((checked, converted)) => (Ok(checked), converted),
            Err(why) => (Err(why), String::new()),
        })
        .unzip();

    // The mutants, one job each, over every kernel.
    let mut jobs: Vec<(usize, Mutant)> = Vec::new();
    let mut truncated = 0usize;
    for (index, (unit, original)) in units.iter().zip(&originals).enumerate() {
        if original.is_err() {
            continue;
        }
        let mut all = mutants(&unit.files[unit.kernel].1, unit.sync);
        if !unit.sync {
            let file = unit.files[unit.kernel].0.to_string_lossy();
            for mutant in all.iter_mut().filter(|m| m.equivalent.is_none()) {
                let program = &programs[index];
                mutant.equivalent = match mutant.class {
                    class if class.edits_one_line() && in_no_statement(program, &file, mutant.line) => {
                        Some("the line is in no kernel the build makes (no statement of the pipe program read)")
                    }
                    Class::DeleteFreeTensor if free_is_final(program, &file, mutant.line) => {
                        Some("nothing allocates from the queue after it (the pipe program read)")
                    }
                    Class::DeleteBarrierAll if barrier_is_last(program, &file, mutant.line) => {
                        Some("the kernel ends right after the barrier (the pipe program read)")
                    }
                    Class::DeleteBarrierAll if barrier_orders_nothing(program, &file, mutant.line) => Some(
                        "every two instructions it orders that touch one memory from two pipes are ordered without \
                         it too, by flags, queues or barriers (the pipe program read)",
                    ),
                    Class::DeleteSetWaitPair if pair_orders_nothing(program, &file, mutant.line) => Some(
                        "every two instructions it orders that touch one memory from two pipes are ordered without \
                         it too, by flags, queues or barriers (the pipe program read)",
                    ),
                    _ => None,
                };
            }
        }
        truncated += all.len().saturating_sub(args.per_file);
        jobs.extend(all.into_iter().take(args.per_file).map(|m| (index, m)));
    }
    let outcomes: Vec<Outcome> = pool(&jobs, args.jobs, |(index, mutant)| {
        let Ok(original) = &originals[*index] else {
            unreachable!("only checked kernels are mutated")
        };
        judge(&args, &units[*index], mutant, original)
    });

    let report = Report {
        units: &units,
        originals: &originals,
        jobs: &jobs,
        outcomes: &outcomes,
        truncated,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json()).unwrap_or_default());
    } else {
        report.print();
    }
    if let Some(path) = &args.json_out
        && let Err(error) = std::fs::write(path, serde_json::to_string_pretty(&report.json()).unwrap_or_default())
    {
        eprintln!("cannot write {}: {error}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Runs `work` on every item with `jobs` threads; the results in the items' order.
fn pool<T: Sync, R: Send>(items: &[T], jobs: usize, work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    let result = work(item);
                    results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item is run"))
        .collect()
}

fn judge(args: &Args, unit: &Unit, mutant: &Mutant, original: &Checked) -> Outcome {
    let kernel_file = unit.files[unit.kernel].0.display().to_string();
    let checked = match check(args, &unit.files, Some((unit.kernel, &mutant.text))) {
        Ok(checked) => checked,
        Err(why) => {
            return Outcome {
                verdict: Verdict::Unchecked,
                new_kernel: vec![why],
                new_other: Vec::new(),
            };
        }
    };
    let (mut new_kernel, mut new_other) = (Vec::new(), Vec::new());
    for finding in checked.findings {
        let mut finding = finding;
        if finding.file == kernel_file {
            finding.line = mutant.original_line(finding.line);
        }
        if !original.findings.contains(&finding) {
            let label = format!("{}@{}", finding.code, finding.line);
            if finding.kernel_rule {
                new_kernel.push(label);
            } else {
                new_other.push(label);
            }
        }
    }
    let verdict = match (mutant.equivalent.is_some(), new_kernel.is_empty()) {
        (true, _) => Verdict::Equivalent,
        (false, false) => Verdict::Found,
        (false, true) => Verdict::Missed,
    };
    Outcome {
        verdict,
        new_kernel,
        new_other,
    }
}

fn kernel_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = BTreeSet::new();
    for root in paths {
        for entry in ignore::WalkBuilder::new(root).build().flatten() {
            let path = entry.path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !(ext == "sync" || CPP.contains(&ext)) || !path.is_file() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let kernel = if ext == "sync" {
                text.lines().any(|l| l.trim_start().starts_with("aicore "))
            } else {
                text.contains("__aicore__")
            };
            if kernel {
                files.insert(path.to_path_buf());
            }
        }
    }
    files.into_iter().collect()
}

/// The kernel file, what it includes (transitively, where the include names an existing
/// file relative to the including one) and, for a file without a `__global__` entry,
/// the C/C++ files beside it that include it.
fn unit(path: &Path) -> Option<Unit> {
    let path = std::fs::canonicalize(path).ok()?;
    let sync = path.extension().is_some_and(|e| e == "sync");
    let mut paths = vec![path.clone()];
    if !sync {
        let text = std::fs::read_to_string(&path).ok()?;
        if !text.contains("__global__") {
            let name = path.file_name()?.to_str()?.to_string();
            let mut includers: Vec<PathBuf> = std::fs::read_dir(path.parent()?)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p != &path && p.extension().and_then(|e| e.to_str()).is_some_and(|e| CPP.contains(&e)))
                .filter(|p| {
                    std::fs::read_to_string(p).is_ok_and(|t| {
                        includes(&t).any(|i| Path::new(i).file_name().is_some_and(|n| n == name.as_str()))
                    })
                })
                .collect();
            includers.sort();
            paths.extend(includers);
        }
        let mut at = 0;
        while at < paths.len() && paths.len() < MAX_UNIT_FILES {
            let from = paths[at].clone();
            at += 1;
            let Ok(text) = std::fs::read_to_string(&from) else {
                continue;
            };
            for include in includes(&text) {
                let Some(found) = from
                    .parent()
                    .map(|d| d.join(include))
                    .and_then(|p| std::fs::canonicalize(p).ok())
                else {
                    continue;
                };
                if found.is_file()
                    && std::fs::metadata(&found).is_ok_and(|m| m.len() < MAX_FILE_BYTES)
                    && !paths.contains(&found)
                {
                    paths.push(found);
                }
            }
        }
        paths.truncate(MAX_UNIT_FILES);
    }
    let mut base = path.parent()?.to_path_buf();
    while !paths.iter().all(|p| p.starts_with(&base)) {
        base = base.parent()?.to_path_buf();
    }
    let files = paths
        .iter()
        .map(|p| {
            Some((
                p.strip_prefix(&base).ok()?.to_path_buf(),
                std::fs::read_to_string(p).ok()?,
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Unit {
        path,
        sync,
        kernel: 0,
        files,
    })
}

/// The paths of a file's `#include "..."` and `#include <...>` lines.
fn includes(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let rest = line
            .trim_start()
            .strip_prefix('#')?
            .trim_start()
            .strip_prefix("include")?
            .trim_start();
        let close = match rest.chars().next()? {
            '"' => '"',
            '<' => '>',
            _ => return None,
        };
        let inner = &rest[1..];
        inner.find(close).map(|end| &inner[..end])
    })
}

/// Writes the unit into a fresh temporary folder (file `replace.0` holding `replace.1`
/// instead of its own text) and checks it there.
fn check(args: &Args, files: &[(PathBuf, String)], replace: Option<(usize, &str)>) -> Result<Checked, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    for (index, (rel, text)) in files.iter().enumerate() {
        let target = dir.path().join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let text = match replace {
            Some((at, mutated)) if at == index => mutated,
            _ => text.as_str(),
        };
        std::fs::write(&target, text).map_err(|e| e.to_string())?;
    }
    let mut command = Command::new(&args.syncguard);
    command
        .current_dir(dir.path())
        .args(["check", "--format", "json", "--explain"]);
    command.args(files.iter().map(|(rel, _)| rel));
    let stdout = run(args, command)?;
    let json: serde_json::Value =
        serde_json::from_slice(&stdout).map_err(|_| "the check printed no JSON (a crash?)".to_string())?;
    let mut findings = BTreeSet::new();
    let mut errors = Vec::new();
    let mut limits = Vec::new();
    for diagnostic in json["diagnostics"].as_array().ok_or("no diagnostics in the JSON")? {
        let code = diagnostic["code"].as_str().unwrap_or("").to_string();
        let severity = diagnostic["severity"].as_str().unwrap_or("");
        let message = diagnostic["message"].as_str().unwrap_or("");
        if severity == "info" && is_limit(&code, message) {
            let line = diagnostic["line"].as_u64().unwrap_or(0);
            limits.push(Limit {
                at: format!("{code}@{line}"),
                entry: entry_point(diagnostic),
            });
        }
        if !matches!(severity, "error" | "warning") {
            continue;
        }
        let line = diagnostic["line"].as_u64().unwrap_or(0) as usize;
        if severity == "error" {
            errors.push(format!("{code}@{line}"));
        }
        findings.insert(Finding {
            file: diagnostic["file"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("./")
                .to_string(),
            kernel_rule: code.starts_with("SG8"),
            code,
            line,
        });
    }
    Ok(Checked {
        findings,
        errors,
        limits,
    })
}

/// A call left out (SG001, SG003), a walk stopped at its budget of undecided conditions
/// (SG004), a kernel's walk stopped or code no launch reached (SG006), a race undecided because the reader could
/// not compute which bytes an access touches (SG801 or SG802 as information). The values
/// a kernel is checked for (its case fields and divisors, SG004 notes) are assumptions
/// said, not limits; so are the builds an undecided `#if` leaves, as every one of them
/// is walked.
fn is_limit(code: &str, message: &str) -> bool {
    let assumption = (message.starts_with("kernel `") && message.contains("it is checked for values"))
        || message.starts_with("a preprocessor condition the analyzed files and flags do not decide");
    (matches!(code, "SG001" | "SG003" | "SG004" | "SG801" | "SG802") && !assumption)
        || (code == "SG006"
            && (message.contains("kernel's walk stopped") || message.starts_with("no launch of the kernel")))
}

/// The entry point a finding's related labels name (`entry point `main``).
fn entry_point(diagnostic: &serde_json::Value) -> Option<String> {
    diagnostic["related"].as_array()?.iter().find_map(|related| {
        let label = related["message"].as_str()?;
        let name = label.strip_prefix("entry point `")?.strip_suffix('`')?;
        Some(name.to_string())
    })
}

/// Whether syncguard reads a kernel: an `aicore` block in the `.sync` file, or in what
/// `syncguard convert` prints for the unit's C/C++ files read together.
/// The kernels (`aicore NAME(...)` blocks) read from the unit, by name, and the pipe
/// program `convert` read (empty for a `.sync` kernel, which is its own).
fn kernels_read(args: &Args, unit: &Unit) -> Result<(BTreeSet<String>, String), String> {
    if unit.sync {
        return Ok((aicore_names(&unit.files[unit.kernel].1), String::new()));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    for (rel, text) in &unit.files {
        let target = dir.path().join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&target, text).map_err(|e| e.to_string())?;
    }
    // The files together, as the check reads them: a kernel's class is in its headers.
    let mut command = Command::new(&args.syncguard);
    command.current_dir(dir.path()).arg("convert").arg(".");
    let converted = String::from_utf8_lossy(&run(args, command)?).into_owned();
    Ok((aicore_names(&converted), converted))
}

fn aicore_names(program: &str) -> BTreeSet<String> {
    program
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("aicore "))
        .filter_map(|rest| rest.split(['(', ' ', '{']).next())
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect()
}

/// Runs a syncguard command with the time limit; its standard output.
fn run(args: &Args, mut command: Command) -> Result<Vec<u8>, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run syncguard: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no standard output")?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + Duration::from_millis(args.timeout_ms);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                return Err(format!("timed out after {} ms", args.timeout_ms));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.to_string()),
        }
    }
    reader.join().map_err(|_| "the output reader failed".to_string())
}

struct Report<'a> {
    units: &'a [Unit],
    originals: &'a [Result<Checked, String>],
    jobs: &'a [(usize, Mutant)],
    outcomes: &'a [Outcome],
    truncated: usize,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    mutants: usize,
    found: usize,
    missed: usize,
    equivalent: usize,
    unchecked: usize,
}

impl Counts {
    fn add(&mut self, verdict: Verdict) {
        self.mutants += 1;
        match verdict {
            Verdict::Found => self.found += 1,
            Verdict::Missed => self.missed += 1,
            Verdict::Equivalent => self.equivalent += 1,
            Verdict::Unchecked => self.unchecked += 1,
        }
    }

    fn recall(self) -> Option<f64> {
        let judged = self.found + self.missed;
        (judged > 0).then(|| self.found as f64 / judged as f64)
    }

    fn json(self) -> serde_json::Value {
        json!({
            "mutants": self.mutants, "found": self.found, "missed": self.missed,
            "equivalent": self.equivalent, "unchecked": self.unchecked, "recall": self.recall(),
        })
    }
}

impl Report<'_> {
    fn per_class(&self) -> (BTreeMap<Class, Counts>, Counts) {
        let mut per_class = BTreeMap::new();
        let mut total = Counts::default();
        for ((_, mutant), outcome) in self.jobs.iter().zip(self.outcomes) {
            per_class
                .entry(mutant.class)
                .or_insert_with(Counts::default)
                .add(outcome.verdict);
            total.add(outcome.verdict);
        }
        (per_class, total)
    }

    fn skipped(&self) -> BTreeMap<String, usize> {
        let mut skipped = BTreeMap::new();
        for original in self.originals {
            if let Err(why) = original {
                // The error codes vary per file: count by the reason's kind.
                let kind = why.split(" (").next().unwrap_or(why).to_string();
                *skipped.entry(kind).or_default() += 1;
            }
        }
        skipped
    }

    fn location(&self, index: usize, mutant: &Mutant) -> String {
        format!("{}:{}", self.units[index].path.display(), mutant.line)
    }

    fn print(&self) {
        let (per_class, total) = self.per_class();
        println!(
            "kernel files: {}, mutated: {}, mutants: {}{}",
            self.units.len(),
            self.originals.iter().filter(|o| o.is_ok()).count(),
            self.jobs.len(),
            if self.truncated > 0 {
                format!(" ({} more left out by --per-file)", self.truncated)
            } else {
                String::new()
            }
        );
        for (why, count) in self.skipped() {
            println!("  skipped ({why}): {count}");
        }
        for (unit, original) in self.units.iter().zip(self.originals) {
            if let Err(why) = original {
                println!("    {}: {why}", unit.path.display());
            }
        }
        println!(
            "{:<36} {:>7} {:>6} {:>6} {:>6} {:>9} {:>7}",
            "class", "mutants", "found", "missed", "equiv", "unchecked", "recall"
        );
        let row = |name: &str, c: Counts| {
            let recall = c.recall().map_or("-".to_string(), |r| format!("{:.1}%", 100.0 * r));
            println!(
                "{name:<36} {:>7} {:>6} {:>6} {:>6} {:>9} {recall:>7}",
                c.mutants, c.found, c.missed, c.equivalent, c.unchecked
            );
        };
        for class in Class::ALL {
            row(class.name(), per_class.get(&class).copied().unwrap_or_default());
        }
        row("total", total);
        for (title, verdict) in [
            ("missed", Verdict::Missed),
            ("equivalent", Verdict::Equivalent),
            ("unchecked", Verdict::Unchecked),
        ] {
            let listed: Vec<String> = self
                .jobs
                .iter()
                .zip(self.outcomes)
                .filter(|(_, o)| o.verdict == verdict)
                .map(|((index, mutant), outcome)| {
                    let mut line = format!("  {}  {}", self.location(*index, mutant), mutant.class.name());
                    if let Some(why) = mutant.equivalent {
                        line.push_str(&format!(" ({why})"));
                    }
                    if !outcome.new_kernel.is_empty() {
                        let label = if verdict == Verdict::Equivalent {
                            "flagged anyway"
                        } else {
                            ""
                        };
                        line.push_str(&format!("  {label} {}", outcome.new_kernel.join(" ")));
                    }
                    if !outcome.new_other.is_empty() {
                        line.push_str(&format!("  other new findings: {}", outcome.new_other.join(" ")));
                    }
                    line
                })
                .collect();
            if !listed.is_empty() {
                println!("{title} ({}):", listed.len());
                for line in listed {
                    println!("{line}");
                }
            }
        }
    }

    fn json(&self) -> serde_json::Value {
        let (per_class, total) = self.per_class();
        json!({
            "files": self.units.iter().zip(self.originals).map(|(unit, original)| json!({
                "file": unit.path.display().to_string(),
                "checked_with": unit.files.iter().map(|(rel, _)| rel.display().to_string()).collect::<Vec<_>>(),
                "skipped": original.as_ref().err(),
            })).collect::<Vec<_>>(),
            "classes": Class::ALL.iter().map(|class| {
                let mut counts = per_class.get(class).copied().unwrap_or_default().json();
                counts["class"] = json!(class.name());
                counts
            }).collect::<Vec<_>>(),
            "total": total.json(),
            "left_out_by_per_file": self.truncated,
            "mutants": self.jobs.iter().zip(self.outcomes).map(|((index, mutant), outcome)| json!({
                "file": self.units[*index].path.display().to_string(),
                "line": mutant.line,
                "class": mutant.class.name(),
                "verdict": outcome.verdict.name(),
                "equivalent_because": mutant.equivalent,
                "new_kernel_findings": outcome.new_kernel,
                "new_other_findings": outcome.new_other,
            })).collect::<Vec<_>>(),
        })
    }
}
