//! `syncguard verify-then-run`: only verified programs run, what runs is traced, and a
//! missing runtime is a clear usage error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn syncguard(args: &[&str]) -> Output {
    syncguard_with_env(args, &[])
}

fn syncguard_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .args(["--color", "never"])
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("verify-then-run")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every `.sync` and `.jsonl` file under `examples/`, sorted.
fn examples() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "sync" || e == "jsonl") {
                out.push(path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"), &mut out);
    out.sort();
    out
}

#[test]
fn verified_examples_run_and_their_traces_verify_again_while_the_others_never_run() {
    let dir = scratch_dir("examples");
    let (mut ran, mut refused) = (0, 0);
    for example in examples() {
        let path = example.to_str().unwrap();
        let trace = dir.join(format!("{}.jsonl", path.replace(['/', '.'], "_")));
        let verdict = syncguard(&["check", path]).status.code();
        let output = syncguard(&["verify-then-run", path, "--trace-out", trace.to_str().unwrap()]);
        let stdout = text(&output.stdout);
        let source = std::fs::read_to_string(&example).unwrap();
        let uses_state_from_before = source.contains("existing_");
        let kernels = source.lines().any(|line| line.starts_with("aicore "));
        match verdict {
            // Kernels' pipe programs are verified; only their host code could launch them.
            Some(0) if kernels => {
                assert_eq!(output.status.code(), Some(2), "{path}:\n{stdout}");
                assert!(
                    text(&output.stderr).contains("a kernel runs only when its host code launches it"),
                    "{path}: {}",
                    text(&output.stderr)
                );
                assert!(!trace.exists(), "{path} wrote a trace although it did not run");
            }
            // A twin of code that receives buffers and communicators from its caller:
            // verified, but a run cannot recreate that state, and says so.
            Some(0) if uses_state_from_before => {
                assert_eq!(output.status.code(), Some(2), "{path}:\n{stdout}");
                assert!(
                    text(&output.stderr).contains("existed before the code it shows"),
                    "{path}: {}",
                    text(&output.stderr)
                );
                assert!(!trace.exists(), "{path} wrote a trace although it did not run");
            }
            Some(0) => {
                assert_eq!(
                    output.status.code(),
                    Some(0),
                    "{path} should run:\n{stdout}{}",
                    text(&output.stderr)
                );
                assert!(
                    stdout.contains("completed: no hang, no race, no lost signal"),
                    "{path}:\n{stdout}"
                );
                let recheck = syncguard(&["check", trace.to_str().unwrap()]);
                assert_eq!(
                    recheck.status.code(),
                    Some(0),
                    "the trace of {path} does not verify:\n{}",
                    text(&recheck.stdout)
                );
                ran += 1;
            }
            Some(1) => {
                assert_eq!(output.status.code(), Some(1), "{path} must be refused:\n{stdout}");
                assert!(text(&output.stderr).contains("did not verify: nothing was executed"));
                assert!(!stdout.contains("ran on"), "{path} ran:\n{stdout}");
                assert!(!trace.exists(), "{path} wrote a trace although it did not run");
                refused += 1;
            }
            other => panic!("{path}: check exited {other:?}"),
        }
    }
    assert!(ran >= 8 && refused >= 25, "ran {ran}, refused {refused}");
}

#[test]
fn parameters_choose_the_instance_that_runs() {
    let output = syncguard(&[
        "verify-then-run",
        "examples/mesh-all-to-all/correct.sync",
        "--param",
        "N=4",
        "--seed",
        "7",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("ran on sim (seed 7), N = 4: 152 calls"));

    let unknown = syncguard(&[
        "verify-then-run",
        "examples/mesh-all-to-all/correct.sync",
        "--param",
        "M=4",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("has no parameter `M` (it has: N)"));

    let outside = syncguard(&[
        "verify-then-run",
        "examples/mesh-all-to-all/correct.sync",
        "--param",
        "N=1",
    ]);
    assert_eq!(outside.status.code(), Some(2));
    assert!(text(&outside.stderr).contains("N = 1 is outside its declared range 2..=1024"));

    let malformed = syncguard(&[
        "verify-then-run",
        "examples/mesh-all-to-all/correct.sync",
        "--param",
        "N",
    ]);
    assert_eq!(malformed.status.code(), Some(2));
}

#[test]
fn json_output_carries_the_run() {
    let output = syncguard(&[
        "verify-then-run",
        "examples/hccl-three-phase-write/correct.sync",
        "--format",
        "json",
        "--seed",
        "3",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(json["diagnostics"], serde_json::json!([]));
    assert_eq!(json["run"]["backend"], "sim (seed 3)");
    assert_eq!(json["run"]["calls"], 33);
    assert_eq!(json["run"]["findings"], 0);
    assert_eq!(json["run"]["faults"], serde_json::json!([]));

    let refused = syncguard(&[
        "verify-then-run",
        "examples/acl-event-sync/missing-reset.sync",
        "--format",
        "json",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&refused.stdout).expect("one JSON document");
    assert_eq!(json["run"], serde_json::Value::Null);
    assert!(!json["diagnostics"].as_array().unwrap().is_empty());
}

#[test]
fn the_acl_backend_without_cann_is_a_usage_error_naming_the_library() {
    let empty = scratch_dir("no-cann");
    let output = syncguard_with_env(
        &[
            "verify-then-run",
            "examples/acl-event-sync/correct.sync",
            "--backend",
            "acl",
        ],
        &[
            ("ASCEND_HOME_PATH", empty.to_str().unwrap()),
            ("ASCEND_TOOLKIT_HOME", empty.to_str().unwrap()),
            ("LD_LIBRARY_PATH", empty.to_str().unwrap()),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("cannot load libascendcl.so"), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/lib64/libascendcl.so", empty.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("ASCEND_HOME_PATH") && stderr.contains("LD_LIBRARY_PATH"),
        "{stderr}"
    );
    assert!(!text(&output.stdout).contains("ran on"));
}

#[cfg(not(feature = "cuda"))]
#[test]
fn the_cuda_backend_needs_the_cuda_feature() {
    let output = syncguard(&[
        "verify-then-run",
        "examples/acl-event-sync/correct.sync",
        "--backend",
        "cuda",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--features cuda"));
}

/// A program that checks clean but that no backend can run as it was verified: refused
/// with `reason`, before any call runs.
fn assert_verified_but_not_run(program: &str, reason: &str) {
    assert_eq!(syncguard(&["check", program]).status.code(), Some(0));
    let output = syncguard(&["verify-then-run", program]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(reason) && stderr.contains("nothing was executed"),
        "{stderr}"
    );
}

#[test]
fn a_program_ordered_by_the_legacy_default_stream_is_verified_but_not_run() {
    assert_verified_but_not_run(
        "tests/verify-then-run/cuda-legacy-default-stream.sync",
        "legacy default stream",
    );
}

#[test]
fn a_program_ordered_by_pageable_memory_is_verified_but_not_run() {
    assert_verified_but_not_run(
        "tests/verify-then-run/cuda-pageable-copy.sync",
        "host memory the runtime did not allocate (malloc)",
    );
}

#[test]
fn a_program_with_a_cuda_graph_is_verified_but_not_run() {
    assert_verified_but_not_run(
        "tests/verify-then-run/cuda-graph.sync",
        "captures or launches CUDA graphs (cudaStreamBeginCapture)",
    );
}

#[test]
fn a_program_ordered_by_memory_values_is_verified_but_not_run() {
    assert_verified_but_not_run(
        "tests/verify-then-run/value-wait-counter.sync",
        "synchronizes streams through memory values (aclrtValueWrite)",
    );
}

#[test]
fn a_program_with_3d_copies_is_verified_but_not_run() {
    assert_verified_but_not_run(
        "tests/verify-then-run/cuda-3d-copy.sync",
        "makes 3D copies or memsets (cudaMemcpy3DAsync)",
    );
}

#[test]
fn a_program_on_two_devices_is_verified_but_not_run() {
    assert_verified_but_not_run(
        "tests/verify-then-run/cuda-second-device.sync",
        "switches a thread to another device than its rank's (cudaSetDevice)",
    );
}

#[test]
fn a_copy_between_device_buffers_runs_on_the_default_stream() {
    let dir = scratch_dir("device-to-device");
    let trace = dir.join("trace.jsonl");
    let program = "tests/verify-then-run/device-to-device-memcpy.sync";
    let output = syncguard(&["verify-then-run", program, "--trace-out", trace.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("completed: no hang, no race, no lost signal"));
    let written = std::fs::read_to_string(&trace).unwrap();
    let copy = written
        .lines()
        .find(|l| l.contains("cudaMemcpy"))
        .expect("the copy is traced");
    let copy: serde_json::Value = serde_json::from_str(copy).unwrap();
    assert_eq!(copy["args"]["count"], 4096, "{copy}");
    assert_eq!(copy["args"]["kind"], "cudaMemcpyDeviceToDevice", "{copy}");
    let recheck = syncguard(&["check", trace.to_str().unwrap()]);
    assert_eq!(recheck.status.code(), Some(0), "{}\n{written}", text(&recheck.stdout));
}

#[test]
fn one_file_at_a_time() {
    let output = syncguard(&["verify-then-run", "examples"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("takes one file"));
    let missing = syncguard(&["verify-then-run", "examples/no-such.sync"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn values_the_sampled_runs_did_not_cover_are_verified_before_they_run() {
    // A race only with 6 ranks: the sampled runs (N = 2, 3, 4) cannot see it.
    let program = "\
target A3;
ranks N in 2..=8;
let s1 = aclrtCreateStream();
let s2 = aclrtCreateStream();
let x = aclrtMalloc(4096, ACL_MEM_MALLOC_HUGE_FIRST);
if N == 6 {
    kernel(s1, \"a\", writes: [x]);
    kernel(s2, \"b\", writes: [x]);
}
aclrtSynchronizeStream(s1);
aclrtSynchronizeStream(s2);
aclrtFree(x);
aclrtDestroyStream(s1);
aclrtDestroyStream(s2);
";
    let path = scratch_dir("sampled").join("race-at-six.sync");
    std::fs::write(&path, program).unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(syncguard(&["check", path]).status.code(), Some(0));
    assert_eq!(
        syncguard(&["verify-then-run", path, "--param", "N=5"]).status.code(),
        Some(0)
    );
    let six = syncguard(&["verify-then-run", path, "--param", "N=6"]);
    assert_eq!(six.status.code(), Some(1));
    let stdout = text(&six.stdout);
    assert!(
        stdout.contains("SG601") && stdout.contains("found with N = 6"),
        "{stdout}"
    );
    assert!(!stdout.contains("ran on"));
    assert!(text(&six.stderr).contains("did not verify with these values: nothing was executed"));
}

#[test]
fn every_memset_is_traced_with_its_range_and_the_trace_verifies_again() {
    let dir = scratch_dir("memsets");
    for program in ["trace-out-memset.sync", "memsets.sync"] {
        let path = format!("tests/verify-then-run/{program}");
        let trace = dir.join(format!("{program}.jsonl"));
        let output = syncguard(&["verify-then-run", &path, "--trace-out", trace.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(0), "{program}: {}", text(&output.stderr));
        let written = std::fs::read_to_string(&trace).unwrap();
        for line in written.lines().filter(|line| line.contains("Memset")) {
            let line: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(line["args"]["devPtr"]["buf"], "b", "{program}: {line}");
            assert_ne!(line["args"]["count"], 0, "{program}: {line}");
        }
        let recheck = syncguard(&["check", trace.to_str().unwrap()]);
        assert_eq!(
            recheck.status.code(),
            Some(0),
            "the trace of {program} does not verify:\n{}\n{written}",
            text(&recheck.stdout)
        );
    }
}

#[test]
fn two_dimensional_copies_are_traced_as_the_bytes_they_span() {
    let dir = scratch_dir("two-dimensional");
    let trace = dir.join("trace.jsonl");
    let program = "tests/verify-then-run/two-dimensional-copies.sync";
    let output = syncguard(&["verify-then-run", program, "--trace-out", trace.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = std::fs::read_to_string(&trace).unwrap();
    let line = |api: &str| -> serde_json::Value {
        let found = written.lines().find(|l| l.contains(api)).expect("the call is traced");
        serde_json::from_str(found).unwrap()
    };
    // 3 rows of 64 bytes, 512 apart: 1,088 bytes; 4 rows of 256, 1,024 apart: 3,328.
    assert_eq!(line("cudaMemset2DAsync")["args"]["devPtr"]["len"], 1088);
    assert_eq!(line("cudaMemcpy2DAsync")["args"]["dst"]["len"], 3328);
    assert_eq!(line("cudaMemcpy2DAsync")["args"]["height"], 1);
    assert!(written.contains("cudaLaunchHostFunc"));
    let recheck = syncguard(&["check", trace.to_str().unwrap()]);
    assert_eq!(recheck.status.code(), Some(0), "{}\n{written}", text(&recheck.stdout));
}

#[test]
fn a_trace_out_that_is_the_program_itself_is_refused_before_anything_runs() {
    let dir = scratch_dir("trace-out-is-program");
    let program = dir.join("correct.sync");
    std::fs::copy("examples/acl-event-sync/correct.sync", &program).unwrap();
    let original = std::fs::read(&program).unwrap();
    let symlink = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&program, &symlink).unwrap();
    let hard_link = dir.join("hard.jsonl");
    std::fs::hard_link(&program, &hard_link).unwrap();
    let respelled = dir
        .join("..")
        .join("trace-out-is-program")
        .join(".")
        .join("correct.sync");
    for trace in [&program, &respelled, &symlink, &hard_link] {
        let output = syncguard(&[
            "verify-then-run",
            program.to_str().unwrap(),
            "--trace-out",
            trace.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(2), "--trace-out {}", trace.display());
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("is the program") && stderr.contains("nothing was run"),
            "{stderr}"
        );
        assert!(!text(&output.stdout).contains("ran on"));
        assert_eq!(
            std::fs::read(&program).unwrap(),
            original,
            "the program was overwritten"
        );
    }
    let elsewhere = dir.join("run.jsonl");
    let output = syncguard(&[
        "verify-then-run",
        program.to_str().unwrap(),
        "--trace-out",
        elsewhere.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
}

#[test]
fn the_simulator_holds_huge_filled_buffers_in_little_memory_and_stops_at_its_limit() {
    let big = syncguard(&["verify-then-run", "runtime-bridge/tests/programs/big-malloc.sync"]);
    assert_eq!(big.status.code(), Some(0), "{}", text(&big.stderr));

    let pages = "tests/verify-then-run/many-written-pages.sync";
    let within = syncguard(&["verify-then-run", pages, "--sim-memory", "5"]);
    assert_eq!(within.status.code(), Some(0), "{}", text(&within.stderr));
    let over = syncguard(&["verify-then-run", pages, "--sim-memory", "1"]);
    assert_eq!(over.status.code(), Some(2));
    let stderr = text(&over.stderr);
    assert!(
        stderr.contains("the simulator's memory limit of 1 MiB is used up") && stderr.contains("--sim-memory"),
        "{stderr}"
    );
    assert!(
        text(&over.stdout).contains("stopped by 1 failed call"),
        "{}",
        text(&over.stdout)
    );
}
