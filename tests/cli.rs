//! The command line as users and CI see it: exit codes, JSON shape, `rules`, `fmt`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn syncguard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str, content: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn clean_file_exits_zero_with_a_summary() {
    let output = syncguard(&["check", "tests/cli/clean.sync"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "checked 1 file: 0 errors, 0 warnings\n");
}

#[test]
fn findings_exit_one() {
    let output = syncguard(&["check", "tests/cli/clean.sync", "tests/cli/two-errors.sync"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).ends_with("checked 2 files: 2 errors, 0 warnings\n"));
}

#[test]
fn unreadable_path_exits_two_but_checks_the_rest() {
    let output = syncguard(&["check", "tests/cli/no-such-file.sync", "tests/cli/two-errors.sync"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read tests/cli/no-such-file.sync"));
    assert!(
        stdout(&output).contains("unknown event `ev`"),
        "the readable file is still checked"
    );
}

#[test]
fn usage_errors_exit_two() {
    assert_eq!(syncguard(&["check"]).status.code(), Some(2));
    assert_eq!(
        syncguard(&["check", "--format", "xml", "x.sync"]).status.code(),
        Some(2)
    );
    assert_eq!(syncguard(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(syncguard(&["--help"]).status.code(), Some(0));
}

#[test]
fn json_output_has_the_documented_shape() {
    let output = syncguard(&["check", "--format", "json", "tests/cli/two-errors.sync"]);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 2);
    let first = &diagnostics[0];
    for key in [
        "code",
        "name",
        "severity",
        "message",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "related",
    ] {
        assert!(first.get(key).is_some(), "missing `{key}` in {first}");
    }
    assert_eq!(first["code"], "SG003");
    assert_eq!(first["name"], "unknown-name");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["file"], "tests/cli/two-errors.sync");
    assert_eq!((first["line"].as_u64(), first["column"].as_u64()), (Some(2), Some(18)));
    assert_eq!(
        (first["end_line"].as_u64(), first["end_column"].as_u64()),
        (Some(2), Some(20))
    );
    assert_eq!(json["summary"]["errors"], 2);
    assert_eq!(json["summary"]["files"], 1);
}

#[test]
fn json_related_locations_point_at_other_calls() {
    let path = scratch(
        "swapped.sync",
        "let s1 = aclrtCreateStream();\nlet ev = aclrtCreateEvent();\naclrtRecordEvent(s1, ev);\n",
    );
    let output = syncguard(&["check", "--format", "json", path.to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let related = &json["diagnostics"][0]["related"][0];
    assert_eq!(related["line"], 1);
    assert_eq!(related["column"], 5);
    assert_eq!(related["message"], "`s1` is created here");
}

#[test]
fn directories_are_searched_for_sync_files_in_order() {
    let output = syncguard(&["check", "--format", "json", "tests/cli"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        json["summary"]["files"], 5,
        "three .sync files, one .jsonl trace and the C++ source it was recorded from"
    );
}

#[test]
fn traces_report_the_line_and_the_source_location() {
    let output = syncguard(&["check", "--format", "json", "tests/cli/missing-reset.jsonl"]);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let diagnostic = &json["diagnostics"][0];
    assert_eq!(diagnostic["code"], "SG102");
    // The source file can be read: the finding is on the call's line there...
    assert_eq!(diagnostic["file"], "tests/cli/train.cpp");
    assert_eq!((&diagnostic["line"], &diagnostic["column"]), (&4.into(), &5.into()));
    assert_eq!(diagnostic["related"][0]["line"], 5);
    assert_eq!(
        diagnostic["related"][0]["message"],
        "the previous record of event_0x7f10 (source: train.cpp:4:5)"
    );
    // ...and the trace line it was found on goes with it.
    let trace = &diagnostic["related"][2];
    assert_eq!(trace["file"], "tests/cli/missing-reset.jsonl");
    assert_eq!(trace["line"], 7);
    assert_eq!(trace["message"], "the call, in the trace");
    assert_eq!(json["summary"]["files"], 1, "the source file is shown, not checked");
}

#[test]
fn a_trace_on_standard_input_is_checked_and_shown() {
    let trace = std::fs::read("tests/cli/missing-reset.jsonl").unwrap();
    let output = pipe(&["check", "-"], &trace);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("─[ -:7:1 ]"), "{text}");
    // Relative to the working directory the source file is not found: it is named instead.
    assert!(
        text.contains("Note: this call is at train.cpp:4:5 in the source"),
        "{text}"
    );
    assert!(
        text.contains(r#""api": "aclrtRecordEvent""#),
        "the trace line is shown: {text}"
    );
}

#[test]
fn convert_prints_an_equivalent_program() {
    let output = syncguard(&["convert", "tests/cli/missing-reset.jsonl"]);
    assert_eq!(output.status.code(), Some(0));
    let program = stdout(&output);
    assert!(
        program.contains("let event_0x7f10 = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);"),
        "{program}"
    );
    let converted = scratch("converted.sync", &program);
    let check = syncguard(&["check", converted.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains("SG102"));
}

#[test]
fn convert_reports_malformed_lines_and_keeps_the_rest() {
    let output = pipe(
        &["convert", "-"],
        b"{\"api\": \"aclrtCreateStream\", \"args\": {\"stream\": \"s1\"}}\n{oops\n",
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "target A3;\nlet s1 = aclrtCreateStream();\n");
    assert!(String::from_utf8_lossy(&output.stderr).contains("SG002"));
}

/// One trace line per `(thread, api, args)`, with `ts` in order.
fn trace_lines(calls: &[(&str, &str, &str)]) -> String {
    calls
        .iter()
        .enumerate()
        .map(|(ts, (thread, api, args))| {
            format!("{{\"thread\": \"{thread}\", \"api\": \"{api}\", \"args\": {args}, \"ts\": {ts}}}\n")
        })
        .collect()
}

#[test]
fn convert_moves_a_creation_above_the_thread_that_uses_it() {
    // Thread `b` starts before thread `a` (the first seen, the main one) creates the
    // event `b` destroys.
    let trace = trace_lines(&[
        ("a", "aclrtSetDevice", r#"{"deviceId": 0}"#),
        ("b", "aclrtSetDevice", r#"{"deviceId": 0}"#),
        (
            "a",
            "aclrtCreateEventWithFlag",
            r#"{"event": "e", "flag": "ACL_EVENT_SYNC"}"#,
        ),
        ("b", "aclrtDestroyEvent", r#"{"event": "e"}"#),
    ]);
    let output = pipe(&["convert", "-"], trace.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let created = text.find("let e = aclrtCreateEventWithFlag").expect(&text);
    assert!(created < text.find("thread rank_0_thread_b {").expect(&text), "{text}");
    let checked = pipe(&["check", "-"], text.as_bytes());
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
}

#[test]
fn convert_warns_when_scoping_cannot_express_the_trace() {
    // The handle `e` names two events: thread `b` destroys the second, created after
    // `b` started, so no place for its `let` keeps the first one's uses right.
    let trace = trace_lines(&[
        (
            "a",
            "aclrtCreateEventWithFlag",
            r#"{"event": "e", "flag": "ACL_EVENT_SYNC"}"#,
        ),
        ("a", "aclrtDestroyEvent", r#"{"event": "e"}"#),
        ("b", "aclrtSetDevice", r#"{"deviceId": 0}"#),
        (
            "a",
            "aclrtCreateEventWithFlag",
            r#"{"event": "e", "flag": "ACL_EVENT_SYNC"}"#,
        ),
        ("b", "aclrtDestroyEvent", r#"{"event": "e"}"#),
    ]);
    let output = pipe(&["convert", "-"], trace.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains("lexically scoped"));
    let clean = pipe(&["convert", "tests/cli/missing-reset.jsonl"], b"");
    assert!(clean.stderr.is_empty(), "{}", String::from_utf8_lossy(&clean.stderr));
}

fn pipe(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn standard_input_is_read_for_dash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"aclrtSynchronizeStream(s9);\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("─[ -:1:24 ]"));
}

#[test]
fn rules_lists_and_documents_each_rule() {
    let list = stdout(&syncguard(&["rules"]));
    assert!(list.contains("SG001  error    syntax-error"));
    assert!(list.contains("SG003  error    unknown-name"));
    let doc = syncguard(&["rules", "SG003"]);
    assert_eq!(doc.status.code(), Some(0));
    let doc = stdout(&doc);
    assert!(doc.starts_with("# SG003 unknown-name (error)"));
    assert!(doc.contains("## What it detects") && doc.contains("## Fix"));
    assert_eq!(stdout(&syncguard(&["rules", "unknown-name"])), doc);
    assert_eq!(syncguard(&["rules", "SG999"]).status.code(), Some(2));
}

#[test]
fn fmt_rewrites_and_check_reports() {
    let path = scratch(
        "messy.sync",
        "let s1=aclrtCreateStream( ) ; // keep me\nif rank==0{aclrtSynchronizeStream(s1);}\n",
    );
    let path = path.to_str().unwrap();
    let check = syncguard(&["fmt", "--check", path]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains("would reformat"));
    assert_eq!(syncguard(&["fmt", path]).status.code(), Some(0));
    let formatted = std::fs::read_to_string(path).unwrap();
    assert_eq!(
        formatted,
        "let s1 = aclrtCreateStream(); // keep me\nif rank == 0 {\n    aclrtSynchronizeStream(s1);\n}\n"
    );
    assert_eq!(syncguard(&["fmt", "--check", path]).status.code(), Some(0));
}

#[test]
fn fmt_leaves_files_that_do_not_parse_untouched() {
    let broken = "let s1 = aclrtCreateStream(\n";
    let path = scratch("broken.sync", broken);
    let output = syncguard(&["fmt", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
}

#[test]
fn warnings_pass_unless_denied() {
    let plain = syncguard(&["check", "tests/cli/warning-only.sync"]);
    assert_eq!(plain.status.code(), Some(0));
    assert!(stdout(&plain).contains("SG104"));
    let denied = syncguard(&["check", "--deny", "warnings", "tests/cli/warning-only.sync"]);
    assert_eq!(denied.status.code(), Some(1));
}

#[test]
fn policy_flags_are_validated() {
    assert_eq!(
        syncguard(&["check", "--target", "910", "tests/cli/clean.sync"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        syncguard(&["check", "--cann", "ancient", "tests/cli/clean.sync"])
            .status
            .code(),
        Some(2)
    );
    let ok = syncguard(&[
        "check",
        "--target",
        "Ascend310P",
        "--cann",
        "legacy",
        "tests/cli/clean.sync",
    ]);
    assert_eq!(ok.status.code(), Some(0));
}

#[test]
fn a_closed_pipe_is_not_a_crash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "examples/"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "the findings still decide the status");
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn proved_properties_are_listed_in_text_and_json() {
    let ring = "examples/parametric-ring/correct.sync";
    let text = stdout(&syncguard(&["check", ring]));
    assert_eq!(
        text,
        "proved notify-index-in-range for N in 2..=1024 (examples/parametric-ring/correct.sync:10:7)\n\
         proved notify-balance for N in 2..=1024 (examples/parametric-ring/correct.sync:10:7)\n\
         checked 1 file: 0 errors, 0 warnings\n"
    );
    let explained = stdout(&syncguard(&["check", "--explain", ring]));
    assert!(explained.contains(
        "    because examples/parametric-ring/correct.sync:38:5: how often HcommChannelNotifyWaitOnThread runs"
    ));
    let output = syncguard(&["check", "--format", "json", ring]);
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        json["proved"][1],
        serde_json::json!({
            "property": "notify-balance",
            "for": "N in 2..=1024",
            "location": "examples/parametric-ring/correct.sync:10:7",
            "because": [],
        })
    );
    assert_eq!(json["unproved"], serde_json::json!([]));
}

#[test]
fn an_unanswered_query_is_information_and_the_timeout_is_validated() {
    let hard = "analyzer/tests/fixtures/SG004/fail_nonlinear_index.sync";
    let output = syncguard(&["check", "--smt-timeout", "50ms", hard]);
    assert_eq!(output.status.code(), Some(0), "SG004 is information");
    let text = stdout(&output);
    assert!(text.contains("[SG004 solver-unknown] Advice: `notify-index-in-range` is not proved"));
    assert!(text.contains("not proved notify-index-in-range"));
    // A limit of the tool never fails the run, not even under `--deny warnings`.
    let denied = syncguard(&["check", "--smt-timeout", "50ms", "--deny", "warnings", hard]);
    assert_eq!(denied.status.code(), Some(0));
    assert!(stdout(&denied).contains("[SG004 solver-unknown] Advice"));
    for bad in ["0", "-1s", "soon"] {
        assert_eq!(
            syncguard(&["check", "--smt-timeout", bad, hard]).status.code(),
            Some(2),
            "{bad}"
        );
    }
}

#[test]
fn a_folder_checks_jsonl_files_only_when_they_are_call_traces() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    // An ML dataset next to the code: not a trace, skipped and named.
    std::fs::write(
        dir.path().join("data/train.jsonl"),
        "{\"prompt\": \"hi\", \"completion\": \"there\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("run.jsonl"),
        "{\"syncguard_trace\": 1, \"world_size\": 1}\n{\"rank\": 0, \"thread\": 0, \"api\": \"aclrtCreateStream\", \"args\": {\"stream\": \"0x1\"}}\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains("checked 1 file"), "{stdout}");
    assert!(
        stderr.contains("skipped 1 .jsonl file") && stderr.contains("train.jsonl"),
        "{stderr}"
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    // Named on the command line, it is checked (and is no trace: SG002).
    let named = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "data/train.jsonl"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&named.stdout).contains("SG002"));
}

#[test]
fn select_and_ignore_choose_the_rules_reported() {
    let dir = "examples/parametric-ring/";
    let codes = |args: &[&str]| -> (std::collections::BTreeSet<String>, Option<i32>) {
        let output = syncguard(&[&["check", "--format", "json", dir], args].concat());
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        let codes = json["diagnostics"]
            .as_array()
            .map(|list| list.iter().map(|d| d["code"].as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        (codes, output.status.code())
    };
    let (all, status) = codes(&[]);
    assert!(
        all.contains("SG302") && all.contains("SG502") && all.contains("SG305"),
        "{all:?}"
    );
    assert_eq!(status, Some(1));
    let (selected, _) = codes(&["--select", "SG30", "--ignore", "SG305"]);
    assert!(
        !selected.is_empty() && selected.iter().all(|c| c.starts_with("SG30") && c != "SG305"),
        "{selected:?}"
    );
    let (extended, _) = codes(&["--select", "SG302", "--extend-select", "sg502"]);
    assert_eq!(extended, ["SG302", "SG502"].map(String::from).into());
    let (none, status) = codes(&["--ignore", "SG"]);
    assert!(none.is_empty() && status == Some(0));
    let (_, status) = codes(&["--exit-zero"]);
    assert_eq!(status, Some(0));
    let bad = syncguard(&["check", dir, "--select", "SG99"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("`SG99` matches no rule"), "{}", stderr(&bad));
}

#[test]
fn proofs_statistics_and_quiet_shape_the_text_output() {
    let dir = "examples/parametric-ring/";
    let proved = |output: &Output| stdout(output).lines().filter(|l| l.starts_with("proved")).count();
    let default = syncguard(&["check", dir]);
    let all = syncguard(&["check", "--show-proofs", dir]);
    assert!(proved(&default) >= 1, "files without findings keep their proofs");
    assert!(
        proved(&all) > proved(&default),
        "a file's findings come before its proofs"
    );
    let statistics = syncguard(&["check", "--quiet", "--statistics", dir]);
    let text = stdout(&statistics);
    assert!(
        text.lines().any(|l| l.split_whitespace().nth(1) == Some("SG502")),
        "{text}"
    );
    assert!(!text.contains("proved") && !text.contains("checked 5 files"), "{text}");
}

#[test]
fn version_completions_and_manual() {
    let version = stdout(&syncguard(&["--version"]));
    assert!(
        version.starts_with("syncguard ") && version.contains("(z3 4."),
        "{version}"
    );
    for shell in ["bash", "zsh", "fish"] {
        let script = syncguard(&["completions", shell]);
        assert_eq!(script.status.code(), Some(0));
        let text = stdout(&script);
        assert!(text.contains("check") && text.contains("format"), "{shell}: {text}");
    }
    // The bash script is valid bash.
    let script = scratch("completions.bash", &stdout(&syncguard(&["completions", "bash"])));
    let parsed = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(parsed.status.success(), "{}", stderr(&parsed));
    let manual = stdout(&syncguard(&["man"]));
    assert!(
        manual.contains(".TH syncguard 1") && manual.contains("check"),
        "{manual}"
    );
}

#[test]
fn help_documents_the_exit_status() {
    let help = stdout(&syncguard(&["--help"]));
    assert!(
        help.contains("Exit status: 0") && help.contains("1 when one is") && help.contains("2 for a usage error"),
        "{help}"
    );
}
