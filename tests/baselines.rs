//! `--write-baseline` / `--baseline`: accepted findings of legacy code are hidden, new
//! ones are reported, edits elsewhere keep the baseline valid, and a file that is not
//! a baseline is an error.

use std::path::Path;
use std::process::Command;

fn check(dir: &Path, args: &[&str]) -> (Vec<String>, Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args([&["check", "--format", "json"], args].concat())
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&output.stdout) else {
        return (Vec::new(), output.status.code(), stderr);
    };
    let codes = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    (codes, output.status.code(), stderr)
}

#[test]
fn a_baseline_hides_accepted_findings_and_reports_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let legacy = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acl-event-sync/missing-reset.sync"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("ops")).unwrap();
    std::fs::write(dir.path().join("ops/legacy.sync"), &legacy).unwrap();
    let (codes, status, _) = check(dir.path(), &["ops", "--write-baseline", "baseline.json"]);
    assert!(codes.len() >= 2 && status == Some(1), "{codes:?}");

    let (codes, status, stderr) = check(dir.path(), &["ops", "--baseline", "baseline.json"]);
    assert_eq!((codes.clone(), status), (vec![], Some(0)), "{stderr}");
    assert!(stderr.contains("in the baseline baseline.json not shown"), "{stderr}");

    // Edits elsewhere (a header comment) keep the baseline; a new file's bug is reported.
    std::fs::write(
        dir.path().join("ops/legacy.sync"),
        format!("// owned by the runtime team\n\n{legacy}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ops/new.sync"),
        "let s = aclrtCreateStream();\nlet ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);\naclrtStreamWaitEvent(s, ev);\naclrtDestroyEvent(ev);\naclrtDestroyStream(s);\n",
    )
    .unwrap();
    let (codes, status, _) = check(dir.path(), &["ops", "--baseline", "baseline.json"]);
    assert_eq!(status, Some(1));
    assert!(
        !codes.is_empty()
            && codes
                .iter()
                .all(|code| code.starts_with("SG1") || code.starts_with("SG5")),
        "{codes:?}"
    );

    // Fixing the legacy file leaves entries no longer found, which stderr says.
    std::fs::remove_file(dir.path().join("ops/legacy.sync")).unwrap();
    let (_, _, stderr) = check(dir.path(), &["ops", "--baseline", "baseline.json"]);
    assert!(stderr.contains("are no longer found"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_baseline_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.sync"),
        "let s = aclrtCreateStream();\naclrtDestroyStream(s);\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("bad.json"), "{\"findings\": []}").unwrap();
    let (_, status, stderr) = check(dir.path(), &["p.sync", "--baseline", "bad.json"]);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("not a syncguard baseline"), "{stderr}");
    let (_, status, _) = check(dir.path(), &["p.sync", "--baseline", "missing.json"]);
    assert_eq!(status, Some(2));
}
