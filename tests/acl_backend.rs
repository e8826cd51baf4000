//! `syncguard verify-then-run --backend acl` without an NPU: stand-in `libascendcl.so`,
//! `libhccl.so` and `libhcomm.so` (tests/acl_standin/*.c, which run the work for real:
//! a worker thread per stream and HCCL thread, blocking waits, consumed notifies) are
//! built with `cc` and found through `ASCEND_HOME_PATH`, as a CANN install is. Every
//! example that verifies clean runs to completion on them, or is refused for what the ACL
//! backend cannot express (GE task lists, SuperKernel launches); its trace verifies again.
//! A runtime error (the stand-in's `ACL_STANDIN_FAIL=api`) stops the run with the call
//! and its `.sync` line. `runtime-bridge/tests/acl_standin.rs` compares what the stand-in
//! executed with the verified calls.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

#[path = "acl_standin/build.rs"]
mod standin_build;

const SYNCGUARD: &str = env!("CARGO_BIN_EXE_syncguard");

/// The stand-in CANN install: `<root>/lib64/lib{ascendcl,hccl,hcomm}.so`.
fn ascend_home() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acl-standin");
        standin_build::build_stand_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"), &root);
        root
    })
}

/// `syncguard ARGS` against the stand-in, with `env` added.
fn on_standin(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(SYNCGUARD)
        .args(args)
        .args(["--color", "never"])
        .env("ASCEND_HOME_PATH", ascend_home())
        .env_remove("ASCEND_TOOLKIT_HOME")
        .env_remove("ACL_STANDIN_FAIL")
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every `.sync` and `.jsonl` file under `examples/`, relative to the crate, sorted.
fn examples() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "sync" || e == "jsonl") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("examples"), &mut out);
    let mut out: Vec<String> = out
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

#[test]
fn every_clean_example_runs_to_completion_on_the_acl_standin() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acl-standin-traces");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut ran, mut unsupported) = (Vec::new(), Vec::new());
    for path in examples() {
        if on_standin(&["check", &path], &[]).status.code() != Some(0) {
            continue;
        }
        let trace = dir.join(format!("{}.jsonl", path.replace(['/', '.'], "_")));
        let _ = std::fs::remove_file(&trace);
        let output = on_standin(
            &[
                "verify-then-run",
                &path,
                "--backend",
                "acl",
                "--trace-out",
                trace.to_str().unwrap(),
            ],
            &[],
        );
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        assert!(!stderr.contains("panicked"), "{path}:\n{stderr}");
        if stderr.contains("nothing was executed") {
            // Kernels, or state from before the code shown: refused before any backend
            // runs, as on the simulator (tests/verify_then_run.rs).
            assert_eq!(output.status.code(), Some(2), "{path}:\n{stderr}");
            continue;
        }
        if stderr.contains("is not supported by this backend") {
            // GE task lists and SuperKernel launches have no host API to issue them.
            assert_eq!(output.status.code(), Some(2), "{path}:\n{stdout}{stderr}");
            assert!(
                stderr.contains("GE op") || stderr.contains("SuperKernel"),
                "{path}: refused for another reason:\n{stderr}"
            );
            unsupported.push(path);
            continue;
        }
        assert_eq!(
            output.status.code(),
            Some(0),
            "{path} should run on the stand-in:\n{stdout}{stderr}"
        );
        assert!(
            stdout.contains("ran on acl") && stdout.contains("completed: no hang, no race, no lost signal"),
            "{path}:\n{stdout}"
        );
        let recheck = on_standin(&["check", trace.to_str().unwrap()], &[]);
        assert_eq!(
            recheck.status.code(),
            Some(0),
            "the trace of {path} does not verify:\n{}",
            text(&recheck.stdout)
        );
        ran.push(path);
    }
    assert!(
        ran.len() >= 14 && unsupported.len() >= 4,
        "ran {ran:?}, refused as unsupported {unsupported:?}"
    );
}

/// `file:line:col` of the first call of `api` in `path`.
fn first_call(path: &str, api: &str) -> String {
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    let (index, line) = source
        .lines()
        .enumerate()
        .find(|(_, line)| !line.trim_start().starts_with("//") && line.contains(&format!("{api}(")))
        .unwrap_or_else(|| panic!("{path} calls {api}"));
    let col = line.find(&format!("{api}(")).unwrap() + 1;
    format!("{path}:{}:{col}", index + 1)
}

#[test]
fn a_runtime_error_stops_the_run_with_the_call_and_its_line() {
    for (path, api, code) in [
        ("examples/acl-event-sync/correct.sync", "aclrtRecordEvent", "507899"),
        ("examples/acl-event-sync/correct.sync", "aclrtStreamWaitEvent", "507899"),
        ("examples/acl-event-sync/correct.sync", "aclrtMalloc", "507899"),
        (
            "examples/hccl-three-phase-write/correct.sync",
            "HcommWriteOnThread",
            "4",
        ),
        ("examples/mesh-all-gather/correct.sync", "HcclChannelAcquire", "4"),
    ] {
        // A rank that stops leaves its peers waiting for its signals: the stand-in lets
        // such a wait fail after a second instead of hanging.
        let output = on_standin(
            &["verify-then-run", path, "--backend", "acl"],
            &[("ACL_STANDIN_FAIL", api), ("ACL_STANDIN_HANG_MS", "1000")],
        );
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        assert!(!stderr.contains("panicked"), "{path}, {api}:\n{stderr}");
        assert_eq!(output.status.code(), Some(2), "{path}, {api}:\n{stdout}{stderr}");
        let expected = format!("syncguard: {}: {api} returned {code}: ", first_call(path, api));
        assert!(
            stderr.lines().any(|line| line.starts_with(&expected)),
            "{path}: no line starting {expected:?}:\n{stderr}"
        );
        assert!(
            stdout.contains("ran on acl") && stdout.contains("stopped by"),
            "{path}:\n{stdout}"
        );
    }
}

#[test]
fn a_runtime_error_is_listed_in_the_json_report() {
    let path = "examples/acl-event-sync/correct.sync";
    let output = on_standin(
        &["verify-then-run", path, "--backend", "acl", "--format", "json"],
        &[("ACL_STANDIN_FAIL", "aclrtResetEvent")],
    );
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    let faults = report["run"]["faults"].as_array().expect("run.faults");
    let expected = format!(
        "{}: aclrtResetEvent returned 507899",
        first_call(path, "aclrtResetEvent")
    );
    assert!(
        faults
            .iter()
            .any(|f| f.as_str().is_some_and(|f| f.starts_with(&expected))),
        "{faults:?}"
    );
    assert_eq!(report["run"]["backend"], "acl");
}
