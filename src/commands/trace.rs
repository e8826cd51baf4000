//! `syncguard trace -- CMD ARGS...`: run a program with the capture interposer
//! preloaded, so that each of its processes writes its calls as a JSONL trace.
//!
//! The interposer is the C shared object build.rs compiles from capture/ (why C, and
//! not a Rust cdylib, is explained there); it is embedded in this binary and written
//! once to a private cache file named by its content, so `syncguard` stays a single
//! file and concurrent runs share the same copy.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The interposer, built by build.rs.
static INTERPOSER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libsyncguard_capture.so"));

/// What the program is told through its environment (capture/runtime.c reads these).
const DIR_VARIABLE: &str = "SYNCGUARD_TRACE_DIR";
const RUN_VARIABLE: &str = "SYNCGUARD_TRACE_RUN";

/// Run `command` traced into `out`; the exit code is the program's (128 + the signal
/// that ended it), or 2 when it cannot be started.
pub fn run(out: &Path, command: &[OsString]) -> ExitCode {
    match trace(out, command) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("syncguard: {err}");
            ExitCode::from(crate::Outcome::Failure as u8)
        }
    }
}

fn trace(out: &Path, command: &[OsString]) -> Result<u8, String> {
    let (program, args) = command
        .split_first()
        .ok_or("trace: no program to run (`syncguard trace -- CMD ARGS...`)")?;
    std::fs::create_dir_all(out).map_err(|err| format!("cannot create {}: {err}", out.display()))?;
    let out = std::fs::canonicalize(out).map_err(|err| format!("cannot read {}: {err}", out.display()))?;
    let library = install_interposer()?;
    let run = run_id();
    let status = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", preload_list(&library))
        .env(DIR_VARIABLE, &out)
        .env(RUN_VARIABLE, &run)
        .status()
        .map_err(|err| format!("cannot run {}: {err}", program.to_string_lossy()))?;
    let cwd = std::env::current_dir().unwrap_or_default();
    report_files(&out, &run, &cwd);
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
        (None, None) => 1,
    })
}

/// The interposer first in `LD_PRELOAD`, before what the caller already preloads.
fn preload_list(library: &Path) -> OsString {
    let mut list = library.as_os_str().to_os_string();
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|value| !value.is_empty()) {
        list.push(":");
        list.push(existing);
    }
    list
}

/// A name for this run, shared by the files of all its processes: the time and this
/// process's id.
fn run_id() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|time| time.as_secs())
        .unwrap_or(0);
    format!("{seconds}-{}", std::process::id())
}

/// Write the interposer to `$XDG_CACHE_HOME/syncguard` (or `~/.cache/syncguard`, or the
/// temporary folder), in a folder only this user can enter, under a name that changes
/// with its content. An existing copy of the same content is used as it is.
fn install_interposer() -> Result<PathBuf, String> {
    let dir = cache_dir();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    let path = dir.join(format!("libsyncguard_capture-{:016x}.so", fnv1a(INTERPOSER)));
    if std::fs::read(&path).is_ok_and(|existing| existing == INTERPOSER) {
        return Ok(path);
    }
    let mut file =
        tempfile::NamedTempFile::new_in(&dir).map_err(|err| format!("cannot write in {}: {err}", dir.display()))?;
    file.write_all(INTERPOSER)
        .map_err(|err| format!("cannot write the interposer: {err}"))?;
    file.persist(&path)
        .map_err(|err| format!("cannot write {}: {}", path.display(), err.error))?;
    Ok(path)
}

fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("syncguard")
}

/// FNV-1a: a content name for the cache file, not a security measure (the folder is private).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Give the calls their source lines where debug information has them, merge the rank
/// files into `run-RUN.jsonl` beside them, then name the files this run wrote, and how
/// to check them.
fn report_files(out: &Path, run: &str, cwd: &Path) {
    let files = syncguard_trace::merge::run_files(out, run);
    if files.is_empty() {
        eprintln!(
            "syncguard: the program made no call syncguard intercepts (ACL, HCCL, CUDA runtime or driver, dynamically \
             linked): no trace was written in {}",
            out.display()
        );
        return;
    }
    if let Err(err) = syncguard_trace::locate::add_locations(&files, cwd) {
        eprintln!("syncguard: the calls' source lines were not added: {err}");
    }
    let merged = match write_merged(out, run, &files) {
        Ok(path) => format!(", merged into {}", path.display()),
        Err(err) => {
            eprintln!("syncguard: the merged trace was not written: {err}");
            String::new()
        }
    };
    eprintln!(
        "syncguard: traced {} process{} of run {run} in {}{merged}; check them with `syncguard check {}`",
        files.len(),
        if files.len() == 1 { "" } else { "es" },
        out.display(),
        out.display()
    );
}

/// The run's rank files merged as `check` merges them, written to `run-RUN.jsonl` in
/// `out`: the file `check` then points findings at (it checks the rank files, and uses
/// this one only while it is still exactly their merge).
fn write_merged(out: &Path, run: &str, files: &[PathBuf]) -> std::io::Result<PathBuf> {
    let named: Vec<(String, PathBuf)> = files
        .iter()
        .map(|file| (file.display().to_string(), file.clone()))
        .collect();
    let merged = syncguard_trace::merge::merge_run(run, &named);
    let path = out.join(syncguard_trace::merge::merged_file_name(run));
    let mut file = tempfile::NamedTempFile::new_in(out)?;
    file.write_all(&merged.text)?;
    // As readable as the rank files (a temporary file is the owner's only).
    file.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    file.persist(&path).map_err(|err| err.error)?;
    Ok(path)
}
