//! One command run to its end, with its wall time, its CPU time and its peak memory: the
//! largest resident set of the process or of any child it waited for (`ru_maxrss` of
//! `wait4`, what GNU time reports as `%M`).
//!
//! The workspace forbids `unsafe`, so the benches cannot call `wait4` themselves: the
//! command runs under `/usr/bin/time -f '%U %S %M' -o FILE` (Debian package `time`),
//! which does, and writes the figures to a file of its own (the command's standard error
//! stays its own). Without GNU time they are not known (`None`); the wall time is
//! measured either way. CPU time (user and system, the process and its waited children)
//! says what a run costs when other work shares the machine and stretches wall times.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// GNU time, which reports `ru_maxrss` of the command it waits for.
const GNU_TIME: &str = "/usr/bin/time";

/// What one run of a command took.
pub struct Measured {
    pub wall: Duration,
    /// User and system time together (`None` without GNU time).
    pub cpu: Option<Duration>,
    /// The peak resident set, in bytes (`None` without GNU time).
    pub peak_rss: Option<u64>,
    pub output: Output,
}

/// Whether peaks can be measured here (GNU time runs), asked once.
pub fn peak_rss_measurable() -> bool {
    static MEASURABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MEASURABLE.get_or_init(|| {
        Command::new(GNU_TIME)
            .args(["-f", "%U %S %M", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// Run `program args` (standard input empty, outputs captured) and measure it. The wall
/// time includes GNU time's own start, a `fork` and an `exec` (about a millisecond).
pub fn run_measured(program: &Path, args: &[&std::ffi::OsStr], scratch: &Path) -> Measured {
    let report = scratch.join("peak_rss.txt");
    let _ = std::fs::remove_file(&report);
    let measurable = peak_rss_measurable();
    let mut command = if measurable {
        let mut command = Command::new(GNU_TIME);
        command.arg("-f").arg("%U %S %M").arg("-o").arg(&report).arg(program);
        command
    } else {
        Command::new(program)
    };
    command.args(args).stdin(Stdio::null());
    let start = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", program.display()));
    let wall = start.elapsed();
    let figures = measurable
        .then(|| std::fs::read_to_string(&report).ok())
        .flatten()
        .and_then(|text| figures(&text));
    Measured {
        wall,
        cpu: figures.map(|(user, system, _)| Duration::from_secs_f64(user + system)),
        peak_rss: figures.map(|(_, _, kib)| kib * 1024),
        output,
    }
}

/// `USER SYSTEM PEAK_KIB`: GNU time writes `Command exited with non-zero status N` before
/// them when the command fails, so they are the last line.
fn figures(text: &str) -> Option<(f64, f64, u64)> {
    let mut fields = text.lines().last()?.split_whitespace();
    let user = fields.next()?.parse().ok()?;
    let system = fields.next()?.parse().ok()?;
    let peak = fields.next()?.parse().ok()?;
    Some((user, system, peak))
}

/// `1.23 GiB`, `456 MiB`, or `?` when not measured.
pub fn format_bytes(bytes: Option<u64>) -> String {
    match bytes {
        None => "?".to_string(),
        Some(bytes) if bytes >= 1 << 30 => format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64),
        Some(bytes) => format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64),
    }
}

/// The middle sample (the upper one of an even count).
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A program found on `PATH`, as a path.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(name))
        .find(|candidate| candidate.is_file())
}
