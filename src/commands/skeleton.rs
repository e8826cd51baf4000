//! `syncguard skeleton` (the per-rank pass: each trace file reduced to its skeleton,
//! where it was captured) and `syncguard check-skeletons` (the global pass: the
//! skeletons checked together, with `check`'s findings on the original lines). The work
//! is in `syncguard_skeleton`; docs/SCALE.md says why the two passes find exactly what
//! `check` finds.

use std::path::{Path, PathBuf};

use syncguard_analyzer::{Overrides, Sources};
use syncguard_project::inputs::{InputKind, collect_inputs};
use syncguard_skeleton::{EXTENSION, RESERVE_EXTENSION, Skeleton};

use super::check::{Findings, Lint, Report, capture_runs};
use crate::Outcome;

/// Write the skeleton of every call trace under `paths` into `out` (created if
/// missing). Inputs that are not traces are named on stderr and fail the command
/// (exit 2): the global pass would not see them.
pub fn run(paths: &[PathBuf], out: &Path, config: &syncguard_project::config::Config) -> Outcome {
    let (mut inputs, mut failures) = collect_inputs(paths);
    inputs.retain(|input| input.named || !config.excludes(&input.file));
    let (traces, others): (Vec<_>, Vec<_>) = inputs
        .iter()
        .partition(|input| input.kind == InputKind::Trace && !input.is_stdin());
    for input in others {
        if input.is_stdin() {
            eprintln!("syncguard: standard input has no skeleton: name the trace file");
        } else {
            eprintln!(
                "syncguard: {}: not a call trace file: it has no skeleton (check it with `syncguard check`)",
                input.display
            );
        }
        failures += 1;
    }
    if let Err(err) = std::fs::create_dir_all(out) {
        eprintln!("syncguard: cannot create {}: {err}", out.display());
        return Outcome::Failure;
    }
    let (runs, traces) = capture_runs(traces);
    let mut totals = Totals::default();
    for (order, (run, files)) in runs.iter().enumerate() {
        let (skeletons, stale) = syncguard_skeleton::skeletons_of_run(run, &files.ranks, &files.merged, order);
        for stale in stale {
            eprintln!(
                "syncguard: {stale} is not the merge of run {run}'s rank files (they changed after `syncguard trace` \
                 wrote it): the skeletons are of the rank files"
            );
        }
        for skeleton in skeletons {
            failures += write(&skeleton, out, &mut totals);
        }
    }
    for (order, input) in traces.iter().enumerate() {
        match syncguard_skeleton::skeleton_of_trace(&input.display, &input.file, order) {
            Ok(skeleton) => failures += write(&skeleton, out, &mut totals),
            Err(err) => failures += syncguard_project::inputs::report(&input.file, &err),
        }
    }
    let kept = totals.calls - totals.dropped;
    eprintln!(
        "syncguard: {} skeleton{} in {}: {kept} of {} calls kept ({:.1}%), {} of {} bytes ({:.1}%)",
        totals.files,
        if totals.files == 1 { "" } else { "s" },
        out.display(),
        totals.calls,
        percent(kept, totals.calls),
        totals.skeleton_bytes,
        totals.trace_bytes,
        percent(totals.skeleton_bytes, totals.trace_bytes),
    );
    if failures > 0 { Outcome::Failure } else { Outcome::Clean }
}

#[derive(Default)]
struct Totals {
    files: usize,
    calls: usize,
    dropped: usize,
    trace_bytes: usize,
    skeleton_bytes: usize,
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Write one skeleton; 1 when it could not be written.
fn write(skeleton: &Skeleton, out: &Path, totals: &mut Totals) -> usize {
    let bytes = skeleton.encode();
    let path = out.join(skeleton.file_name());
    // Written whole, then renamed: a global pass never reads half a skeleton. The
    // reserve first: a skeleton on disk always has its reserve.
    let write_whole = |path: &Path, bytes: &[u8]| {
        let partial = path.with_extension("partial");
        std::fs::write(&partial, bytes).and_then(|()| std::fs::rename(&partial, path))
    };
    let reserve = path.with_extension(RESERVE_EXTENSION);
    let written = if skeleton.dropped > 0 {
        write_whole(&reserve, &skeleton.encode_reserve())
    } else {
        match std::fs::remove_file(&reserve) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    };
    match written.and_then(|()| write_whole(&path, &bytes)) {
        Ok(()) => {
            totals.files += 1;
            totals.calls += skeleton.calls;
            totals.dropped += skeleton.dropped;
            totals.trace_bytes += trace_len(skeleton);
            totals.skeleton_bytes += bytes.len();
            0
        }
        Err(err) => {
            eprintln!("syncguard: cannot write {}: {err}", path.display());
            1
        }
    }
}

fn trace_len(skeleton: &Skeleton) -> usize {
    use syncguard_skeleton::SkeletonBody;
    use syncguard_trace::merge::RankFileRead;
    match &skeleton.body {
        SkeletonBody::Rank {
            file: RankFileRead::Read(parts),
            ..
        } => parts.len,
        SkeletonBody::Rank { .. } => 0,
        SkeletonBody::Trace(trace) => trace.len,
    }
}

/// The skeleton files under `paths` (folders are searched), sorted.
fn skeleton_files(paths: &[PathBuf]) -> (Vec<PathBuf>, usize) {
    let mut files = Vec::new();
    let mut failures = 0;
    let mut pending: Vec<PathBuf> = paths.to_vec();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            match std::fs::read_dir(&path) {
                Ok(entries) => pending.extend(entries.filter_map(Result::ok).map(|entry| entry.path())),
                Err(err) => failures += syncguard_project::inputs::report(&path, &err),
            }
        } else if path.extension().is_some_and(|ext| ext == EXTENSION) {
            files.push(path);
        } else if paths.contains(&path) {
            eprintln!(
                "syncguard: {}: not a skeleton (`syncguard skeleton` writes `.{EXTENSION}` files)",
                path.display()
            );
            failures += 1;
        }
    }
    files.sort();
    files.dedup();
    (files, failures)
}

/// The global pass: check the skeletons under `paths` and report as `check` does.
pub fn check(paths: &[PathBuf], overrides: &Overrides, report: &Report, lint: &Lint) -> Outcome {
    let (files, mut failures) = skeleton_files(paths);
    let mut skeletons = Vec::with_capacity(files.len());
    let mut read_from = std::collections::HashMap::new();
    for path in &files {
        match std::fs::read(path) {
            Ok(bytes) => match Skeleton::decode(&bytes) {
                Ok(skeleton) => {
                    read_from.insert(skeleton.display().to_string(), path.clone());
                    skeletons.push(skeleton);
                }
                Err(err) => {
                    eprintln!("syncguard: {}: not a readable skeleton: {err}", path.display());
                    failures += 1;
                }
            },
            Err(err) => failures += syncguard_project::inputs::report(path, &err),
        }
    }
    if files.is_empty() && failures == 0 {
        eprintln!("syncguard: no skeletons (`.{EXTENSION}` files) under the paths given");
        return Outcome::Failure;
    }
    let mut sources = Sources::default();
    let mut findings = Findings::default();
    // A run with findings is checked whole: the lines its skeletons left out are read
    // from the reserves beside them.
    let mut reserve_of = |skeleton: &Skeleton| {
        let path = read_from[skeleton.display()].with_extension(RESERVE_EXTENSION);
        let bytes = std::fs::read(&path).map_err(|err| {
            format!(
                "{}: cannot be read ({err}): the run of {} has findings, and is checked with the calls its \
                 skeleton left out",
                path.display(),
                skeleton.display()
            )
        })?;
        skeleton
            .decode_reserve(&bytes)
            .map_err(|err| format!("{}: not a readable reserve: {err}", path.display()))
    };
    match syncguard_skeleton::check_skeletons(&mut sources, skeletons, overrides, &mut reserve_of) {
        Ok(checked) => {
            for checked in checked {
                findings.add(checked.file);
            }
        }
        Err(err) => {
            eprintln!("syncguard: {err}");
            return Outcome::Failure;
        }
    }
    super::check::report_findings(findings, &mut sources, report, lint, failures)
}
