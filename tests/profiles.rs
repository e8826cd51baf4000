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
fn a_notify_task_without_its_peer_rank_is_said_not_dropped() {
    // Rank 0's second record lacks its `dst rank`: left out, the cluster would pass (the
    // wait it fed is taken as consuming a record from before the window). Left out and
    // said in a warning, the verdict is not clean.
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "tests/fixtures/profiles/ascend/warn_notify_without_rank",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("checked 2 files: 0 errors, 1 warning"), "{text}");
    insta::assert_snapshot!("msprof_notify_without_rank", text);
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
    assert!(text.contains("[SG505 "), "{text}");
    // 5 Kineto traces with the 2 execution traces of two of them, 6 timelines (three
    // clusters of two ranks) and 3 graph task dumps; the errors: the wait without a
    // record, the race between streams, the collectives ready together and the waits in
    // a cycle; the warnings: the wait on its recording stream, and the notify task
    // without its peer rank.
    assert!(text.contains("checked 16 files: 4 errors, 2 warnings"), "{text}");
}

#[test]
fn graph_collectives_that_may_be_ready_together_name_both_tasks() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "tests/fixtures/profiles/graph/fail_collectives_ready_together.json",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    insta::assert_snapshot!("graph_collectives_ready_together", text);
}

#[test]
fn graph_waits_in_a_cycle_are_a_deadlock() {
    let output = syncguard(&[
        "check",
        "--format",
        "concise",
        "tests/fixtures/profiles/graph/fail_waits_in_a_cycle.json",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("fail_waits_in_a_cycle.json:2:1: SG501 [error]"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn graph_collectives_ordered_through_a_coordinator_pass() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "tests/fixtures/profiles/graph/pass_collectives_ordered.json",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    insta::assert_snapshot!("graph_collectives_ordered", text);
}

#[test]
fn a_kineto_trace_with_its_execution_trace_shows_the_race_between_streams() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "tests/fixtures/profiles/kineto_et/fail_race_across_streams",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    insta::assert_snapshot!("kineto_execution_trace_race", text);
    let output = syncguard(&[
        "check",
        "--format",
        "concise",
        "tests/fixtures/profiles/kineto_et/pass_ordered_by_event",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(!text.contains("SG601"), "{text}");
    // Named alone, the profile takes the execution trace beside it.
    let output = syncguard(&[
        "check",
        "--format",
        "concise",
        "tests/fixtures/profiles/kineto_et/fail_race_across_streams/rank0.pt.trace.json",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("rank0.pt.trace.json:9:3: SG601"), "{text}");
}

/// The msprof `.db` exports of a two-rank cluster, made from the SQL fixtures of
/// `tests/fixtures/profiles/ascend_db/` under `root`.
fn db_cluster(root: &std::path::Path, case: &str) {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiles/ascend_db");
    for rank in 0..2 {
        let folder = root.join(format!("node{rank}_{rank}_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        std::fs::create_dir_all(&folder).unwrap();
        let connection = rusqlite::Connection::open(folder.join(format!("ascend_pytorch_profiler_{rank}.db"))).unwrap();
        for sql in ["schema.sql".to_string(), format!("{case}_rank{rank}.sql")] {
            connection
                .execute_batch(&std::fs::read_to_string(fixtures.join(sql)).unwrap())
                .unwrap();
        }
    }
}

#[test]
fn a_cross_rank_notify_mismatch_in_db_exports_names_the_waiting_row() {
    let dir = tempfile::tempdir().unwrap();
    db_cluster(dir.path(), "fail_wait_without_record");
    let output = syncguard(&["check", "--color", "never", dir.path().to_str().unwrap()]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{text}");
    let root = regex_escape(&dir.path().display().to_string());
    insta::with_settings!({filters => vec![(root.as_str(), "[CLUSTER]")]}, {
        insta::assert_snapshot!("msprof_db_wait_without_record", text);
    });
}

#[test]
fn matched_notifies_in_db_exports_pass() {
    let dir = tempfile::tempdir().unwrap();
    db_cluster(dir.path(), "pass_matched_notifies");
    let output = syncguard(&["check", "--color", "never", dir.path().to_str().unwrap()]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("checked 2 files: 0 errors, 0 warnings"), "{text}");
}

#[test]
fn a_timeline_left_for_the_db_export_of_its_rank_is_not_counted_as_checked() {
    // Rank 1's folder holds its `.db` export and its `trace_view.json`: the export is
    // read, the timeline is not (a note says so), so two files are checked, not three.
    let dir = tempfile::tempdir().unwrap();
    db_cluster(dir.path(), "pass_matched_notifies");
    let json = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/fixtures/profiles/ascend/pass_matched_notifies/node1_1_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    );
    std::fs::copy(
        json,
        dir.path()
            .join("node1_1_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
    )
    .unwrap();
    let output = syncguard(&["check", "--color", "never", dir.path().to_str().unwrap()]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("the .db export is read and that timeline is not"),
        "{text}"
    );
    assert!(text.contains("checked 2 files: 0 errors, 0 warnings"), "{text}");
}

/// `text` as a regular expression matching itself.
fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' => format!("\\{c}"),
            c => c.to_string(),
        })
        .collect()
}
