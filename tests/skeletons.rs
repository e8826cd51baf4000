//! The check in two passes (`syncguard skeleton`, then `syncguard check-skeletons`)
//! reports exactly what `syncguard check` reports: on every trace of the tests, file by
//! file and folder by folder, and on generated captured runs (clean, racy, with their
//! merge on disk, cut short, missing a rank), compared byte for byte in JSON and in the
//! other formats that do not name the command.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn syncguard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.jsonl` below `dir` (relative to the repository), sorted.
fn traces_below(dir: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let relative = path.strip_prefix(root()).unwrap().display().to_string();
        if path.is_dir() {
            traces_below(&relative, out);
        } else if relative.ends_with(".jsonl") {
            out.push(relative);
        }
    }
}

fn all_traces() -> Vec<String> {
    let mut traces = Vec::new();
    for dir in ["tests", "analyzer/tests", "examples", "fuzz/corpus", "fuzz/found"] {
        traces_below(dir, &mut traces);
    }
    traces
}

/// Check `paths` both ways in `format` and compare the reports and exit codes.
fn same_both_ways(paths: &[&str], format: &str, scratch: &Path) {
    let skeletons = scratch.join("skeletons");
    let _ = std::fs::remove_dir_all(&skeletons);
    let skeletons = skeletons.display().to_string();
    let mut args = vec!["skeleton", "--isolated", "-o", &skeletons];
    args.extend(paths);
    let made = syncguard(&args);
    assert_eq!(
        made.status.code(),
        Some(0),
        "skeleton {paths:?}: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let report = ["--format", format, "--isolated", "--color", "never"];
    let mut check = vec!["check"];
    check.extend(report);
    check.extend(paths);
    let one = syncguard(&check);
    let mut global = vec!["check-skeletons"];
    global.extend(report);
    global.push(&skeletons);
    let two = syncguard(&global);
    let (one_out, two_out) = (
        String::from_utf8_lossy(&one.stdout),
        String::from_utf8_lossy(&two.stdout),
    );
    assert_eq!(
        one_out, two_out,
        "{paths:?} ({format}): the two passes differ from `check`"
    );
    assert_eq!(one.status.code(), two.status.code(), "{paths:?}: exit codes differ");
}

#[test]
fn every_trace_of_the_tests_gives_the_same_report() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skeletons-fixtures");
    std::fs::create_dir_all(&scratch).unwrap();
    let traces = all_traces();
    assert!(traces.len() > 90, "found only {} traces", traces.len());
    for trace in &traces {
        same_both_ways(&[trace], "json", &scratch);
    }
    // Each folder's traces together: the order of files and runs.
    let mut folders: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for trace in &traces {
        let folder = Path::new(trace).parent().unwrap().display().to_string();
        folders.entry(folder).or_default().push(trace);
    }
    for traces in folders.values().filter(|traces| traces.len() > 1) {
        same_both_ways(traces, "json", &scratch);
    }
    for format in ["text", "concise", "github", "sarif"] {
        same_both_ways(
            &["examples/traces/cuda-stream-race.jsonl", "tests/fixtures/traces"],
            format,
            &scratch,
        );
    }
}

/// A generated run's rank files in a fresh folder under the target's scratch space.
fn generated(name: &str, race_every: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skeletons-runs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let job = syncguard_skeleton_job(race_every);
    syncguard_skeleton::generate::write_run(&dir, job).unwrap();
    dir
}

fn syncguard_skeleton_job(race_every: usize) -> syncguard_skeleton::generate::Job {
    syncguard_skeleton::generate::Job {
        ranks: 4,
        steps: 3,
        launches: 24,
        race_every,
    }
}

fn rank_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("node"))
        .map(|p| (p.display().to_string(), p))
        .collect();
    files.sort();
    files
}

#[test]
fn generated_runs_give_the_same_report() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skeletons-generated");
    std::fs::create_dir_all(&scratch).unwrap();
    let clean = generated("clean", 0);
    let racy = generated("racy", 2);
    for dir in [&clean, &racy] {
        let dir = dir.display().to_string();
        for format in ["json", "text", "concise", "github", "sarif", "chrome-trace", "dot"] {
            same_both_ways(&[&dir], format, &scratch);
        }
    }
    // The skeletons of the clean run suffice: no reserve is read.
    let skeletons = scratch.join("clean-only");
    let _ = std::fs::remove_dir_all(&skeletons);
    let (clean_dir, skeletons_dir) = (clean.display().to_string(), skeletons.display().to_string());
    assert!(
        syncguard(&["skeleton", "--isolated", "-o", &skeletons_dir, &clean_dir])
            .status
            .success()
    );
    let mut reserves = 0;
    for entry in std::fs::read_dir(&skeletons).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sgreserve") {
            std::fs::remove_file(path).unwrap();
            reserves += 1;
        }
    }
    assert!(reserves > 0, "the generated run has launches to leave out");
    let one = syncguard(&["check", "--format", "json", "--isolated", &clean_dir]);
    let two = syncguard(&["check-skeletons", "--format", "json", "--isolated", &skeletons_dir]);
    assert_eq!(
        String::from_utf8_lossy(&one.stdout),
        String::from_utf8_lossy(&two.stdout)
    );
    // The racy run needs its reserves, and says so when they are gone.
    let racy_dir = racy.display().to_string();
    assert!(
        syncguard(&["skeleton", "--isolated", "-o", &skeletons_dir, &racy_dir])
            .status
            .success()
    );
    for entry in std::fs::read_dir(&skeletons).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sgreserve") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let two = syncguard(&["check-skeletons", "--format", "json", "--isolated", &skeletons_dir]);
    assert_eq!(two.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&two.stderr).contains("sgreserve"));
}

#[test]
fn runs_with_their_merge_cut_short_or_missing_a_rank_give_the_same_report() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skeletons-variants");
    std::fs::create_dir_all(&scratch).unwrap();
    // The merge `syncguard trace` writes, on disk next to the rank files.
    let merged = generated("merged", 2);
    let run = syncguard_trace::merge::merge_run("gen", &rank_files(&merged));
    std::fs::write(merged.join("run-gen.jsonl"), &run.text).unwrap();
    same_both_ways(&[&merged.display().to_string()], "json", &scratch);
    // A stale merge: the rank files changed since.
    let stale = generated("stale", 0);
    std::fs::write(stale.join("run-gen.jsonl"), &run.text).unwrap();
    same_both_ways(&[&stale.display().to_string()], "json", &scratch);
    // A rank file without its closing line, one with a line cut short.
    let cut = generated("cut", 0);
    let files = rank_files(&cut);
    let text = std::fs::read_to_string(&files[1].1).unwrap();
    let without_end: Vec<&str> = text.lines().filter(|l| !l.contains("syncguard_capture_end")).collect();
    std::fs::write(&files[1].1, without_end.join("\n") + "\n").unwrap();
    let text = std::fs::read_to_string(&files[2].1).unwrap();
    std::fs::write(&files[2].1, &text[..text.len() / 2]).unwrap();
    same_both_ways(&[&cut.display().to_string()], "json", &scratch);
    // A rank missing: the run is not analyzed.
    let missing = generated("missing", 0);
    std::fs::remove_file(&rank_files(&missing)[3].1).unwrap();
    same_both_ways(&[&missing.display().to_string()], "json", &scratch);
    // The merge alone, an ordinary multi-rank trace of long runs of launches.
    let alone = generated("alone", 0);
    let run = syncguard_trace::merge::merge_run("gen", &rank_files(&alone));
    for (_, path) in rank_files(&alone) {
        std::fs::remove_file(path).unwrap();
    }
    std::fs::write(alone.join("run-gen.jsonl"), &run.text).unwrap();
    same_both_ways(&[&alone.display().to_string()], "json", &scratch);
}

#[test]
fn damaged_skeletons_are_named_not_crashed_on() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skeletons-damaged");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let dir = scratch.display().to_string();
    assert!(
        syncguard(&[
            "skeleton",
            "--isolated",
            "-o",
            &dir,
            "examples/traces/acl-missing-reset.jsonl"
        ])
        .status
        .success()
    );
    let skeleton = std::fs::read_dir(&scratch).unwrap().next().unwrap().unwrap().path();
    let bytes = std::fs::read(&skeleton).unwrap();
    std::fs::write(&skeleton, &bytes[..bytes.len() / 2]).unwrap();
    let output = syncguard(&["check-skeletons", "--isolated", &dir]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a readable skeleton"));
    // Not a trace: no skeleton, and the command says so.
    let output = syncguard(&[
        "skeleton",
        "--isolated",
        "-o",
        &dir,
        "examples/mesh-all-to-all/correct.sync",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a call trace file"));
}

#[test]
fn a_run_split_over_nodes_gives_the_same_report() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skeletons-nodes");
    for race_every in [0, 2] {
        let _ = std::fs::remove_dir_all(&scratch);
        let nodes = [scratch.join("node0"), scratch.join("node1")];
        let whole = generated(&format!("split-{race_every}"), race_every);
        let files = rank_files(&whole);
        for (index, (_, path)) in files.iter().enumerate() {
            let node = &nodes[index / 2];
            std::fs::create_dir_all(node).unwrap();
            std::fs::copy(path, node.join(path.file_name().unwrap())).unwrap();
        }
        // Each node's `syncguard trace` merges its own ranks next to them.
        for node in &nodes {
            let local = syncguard_trace::merge::merge_run("gen", &rank_files(node));
            std::fs::write(node.join("run-gen.jsonl"), &local.text).unwrap();
        }
        let skeletons = scratch.join("shared").display().to_string();
        let nodes: Vec<String> = nodes.iter().map(|n| n.display().to_string()).collect();
        for node in &nodes {
            let made = syncguard(&["skeleton", "--isolated", "-o", &skeletons, node]);
            assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        }
        let one = syncguard(&["check", "--format", "json", "--isolated", &nodes[0], &nodes[1]]);
        let two = syncguard(&["check-skeletons", "--format", "json", "--isolated", &skeletons]);
        assert_eq!(
            String::from_utf8_lossy(&one.stdout),
            String::from_utf8_lossy(&two.stdout),
            "race_every {race_every}"
        );
        assert_eq!(one.status.code(), two.status.code());
    }
}
