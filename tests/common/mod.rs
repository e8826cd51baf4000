//! What the source-frontend tests share: running the binary, the codes it reports, and
//! the codes a fixture's expectation line names.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

pub fn syncguard(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// The codes of the errors and warnings `check` reports on `path`.
pub fn codes(path: &Path) -> BTreeSet<String> {
    let output = syncguard(&["check", "--format", "json", path.to_str().unwrap()]);
    assert_ne!(
        output.status.code(),
        Some(2),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| matches!(d["severity"].as_str(), Some("error" | "warning")))
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// The codes an expectation line's text names (`SG102, SG601`), none for `clean`.
pub fn expected_codes(line: &str) -> BTreeSet<String> {
    match line.trim() {
        "clean" => BTreeSet::new(),
        codes => codes.split(',').map(|code| code.trim().to_string()).collect(),
    }
}
