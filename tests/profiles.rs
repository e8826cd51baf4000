//! `syncguard check` on profiler timelines (`tests/fixtures/profiles/`): a Kineto trace
//! named alone, an msprof cluster folder checked as its ranks (the rendered finding
//! snapshotted), and profiles found in a folder walk.

use std::process::{Command, Output};

fn syncguard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

#[test]
fn a_cross_rank_notify_mismatch_names_the_waiting_task() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "tests/fixtures/profiles/ascend/fail_wait_without_record",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    insta::assert_snapshot!("msprof_wait_without_record", text);
}

#[test]
fn a_kineto_trace_named_alone_reports_its_wait() {
    let output = syncguard(&[
        "check",
        "--format",
        "concise",
        "tests/fixtures/profiles/kineto/fail_wait_on_recording_stream.json",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("fail_wait_on_recording_stream.json:9:3: SG109"), "{text}");
}

#[test]
fn a_folder_of_profiles_checks_each_kineto_trace_and_each_cluster() {
    let output = syncguard(&["check", "--color", "never", "tests/fixtures/profiles"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("[SG502 "), "{text}");
    assert!(text.contains("[SG109 "), "{text}");
    // 3 Kineto traces and 4 timelines (two clusters of two ranks).
    assert!(text.contains("checked 7 files: 1 error, 1 warning"), "{text}");
}
