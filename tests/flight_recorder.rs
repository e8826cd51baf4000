//! `syncguard check` on PyTorch NCCL Flight Recorder dumps: each rule's fixture folders
//! (`analyzer/tests/fixtures/SG90x/{fail,pass}_*/`, one dump per rank) checked as one
//! job, the rendered text snapshotted; a dump named alone; dumps among other files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn syncguard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn fixture_folders() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("analyzer/tests/fixtures");
    let mut folders = Vec::new();
    for rule in std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()) {
        if !rule.file_name().unwrap().to_string_lossy().starts_with("SG9") {
            continue;
        }
        folders.extend(
            std::fs::read_dir(&rule)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_dir()),
        );
    }
    folders.sort();
    folders
}

#[test]
fn every_flight_recorder_rule_fixture_reports_its_code_or_not() {
    let folders = fixture_folders();
    assert!(folders.len() >= 14, "{folders:?}");
    for folder in folders {
        let relative = folder
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap()
            .to_str()
            .unwrap();
        let code = folder.parent().unwrap().file_name().unwrap().to_str().unwrap();
        let case = folder.file_name().unwrap().to_str().unwrap();
        let output = syncguard(&["check", "--color", "never", relative]);
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            output.status.code() != Some(2),
            "{relative}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let reported = text.contains(&format!("[{code} "));
        if case.starts_with("fail") {
            assert!(reported, "{relative} must report {code}:\n{text}");
        } else {
            assert!(case.starts_with("pass"), "{case}");
            assert!(!reported, "{relative} must not report {code}:\n{text}");
            assert!(
                text.contains("0 errors, 0 warnings"),
                "{relative} has findings:\n{text}"
            );
        }
        insta::assert_snapshot!(format!("{code}__{case}"), text);
    }
}

#[test]
fn a_dump_alone_reports_only_what_one_rank_shows() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "analyzer/tests/fixtures/SG904/fail_never_entered/nccl_trace_rank_0.json",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(
            "rank 0 was still in collective #3 (nccl:all_reduce) of process group `0` when it dumped: started"
        ),
        "{text}"
    );
    assert!(text.contains("0 errors, 1 warning"), "{text}");
    // The rank that never entered shows nothing wrong on its own.
    let output = syncguard(&[
        "check",
        "analyzer/tests/fixtures/SG904/fail_never_entered/nccl_trace_rank_3.json",
    ]);
    assert!(output.status.success());
}

#[test]
fn dumps_are_found_by_content_beside_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("analyzer/tests/fixtures/SG901/fail_desync");
    for rank in 0..4 {
        let from = source.join(format!("nccl_trace_rank_{rank}.json"));
        // No extension, as PyTorch names them.
        std::fs::copy(&from, dir.path().join(format!("nccl_trace_rank_{rank}"))).unwrap();
    }
    std::fs::write(dir.path().join("package.json"), "{\"name\": \"x\", \"version\": \"1\"}").unwrap();
    std::fs::write(dir.path().join("README"), "not a dump").unwrap();
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "--format",
        "json",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let codes: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["SG901"], "{json:#}");
    assert_eq!(json["summary"]["files"], 4, "{json:#}");
}

#[test]
fn the_rules_are_documented() {
    for code in ["SG900", "SG901", "SG902", "SG903", "SG904", "SG905", "SG906"] {
        let output = syncguard(&["rules", code]);
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            output.status.success() && text.contains("## What it detects"),
            "{code}: {text}"
        );
    }
}
