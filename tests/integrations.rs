//! The pre-commit hook (`.pre-commit-hooks.yaml`) and the GitHub Action (`action.yml`):
//! their commands run as those tools run them, against the built binary.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `PATH` with the built binary first, as `cargo install` would put it.
fn path_with_binary() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_syncguard"))
        .parent()
        .unwrap()
        .to_path_buf();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).unwrap()
}

/// The value of `key: value` in a YAML file's first item that has it.
fn yaml_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| {
            line.trim_start()
                .trim_start_matches("- ")
                .strip_prefix(&format!("{key}: "))
        })
        .unwrap_or_else(|| panic!("no `{key}`"))
        .trim()
        .to_string()
}

#[test]
fn the_pre_commit_hook_matches_every_input_and_runs() {
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    assert_eq!(yaml_value(&hooks, "id"), "syncguard");
    let files = yaml_value(&hooks, "files");
    let listed: Vec<String> = files
        .trim_start_matches("\\.(")
        .trim_end_matches(")$")
        .split('|')
        .map(|ext| ext.replace("\\+", "+"))
        .collect();
    let mut wanted: Vec<String> = std::iter::once("sync")
        .chain(syncguard_cpp::EXTENSIONS.iter().copied())
        .chain(syncguard_python::EXTENSIONS.iter().copied())
        .map(String::from)
        .collect();
    wanted.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, wanted, "the hook's `files` are the extensions syncguard reads");

    // pre-commit runs `entry` with the staged files appended.
    let entry = yaml_value(&hooks, "entry");
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{entry} examples/cpp/pass_tile_pipeline.cpp examples/acl-event-sync/missing-reset.sync"
        ))
        .env("PATH", path_with_binary())
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .all(|line| line.starts_with("examples/acl-event-sync/missing-reset.sync:")),
        "{stdout}"
    );
}

/// The `run: |` script of the step named `name` in `action.yml`.
fn step_script(action: &str, name: &str) -> String {
    let lines: Vec<&str> = action.lines().collect();
    let step = lines
        .iter()
        .position(|line| line.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no step `{name}`"));
    let run = (step..lines.len())
        .find(|&k| lines[k].trim_start().starts_with("run:"))
        .unwrap();
    let first = lines[run].trim_start().trim_start_matches("run:").trim();
    if first != "|" {
        return first.to_string();
    }
    let indent = lines[run + 1].len() - lines[run + 1].trim_start().len();
    lines[run + 1..]
        .iter()
        .take_while(|line| line.trim().is_empty() || line.len() - line.trim_start().len() >= indent)
        .map(|line| line.get(indent..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_github_action_writes_sarif_and_fails_on_findings() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outputs: PathBuf = dir.path().join("github_output");
    let sarif = dir.path().join("syncguard.sarif");
    let check = Command::new("bash")
        .arg("-c")
        .arg(step_script(&action, "Check"))
        .env("PATH", path_with_binary())
        .env(
            "SYNCGUARD_PATHS",
            "examples/acl-event-sync examples/cpp/fail_tile_pipeline.cpp",
        )
        .env("SYNCGUARD_ARGS", "--ignore SG107")
        .env("SYNCGUARD_SARIF", &sarif)
        .env("GITHUB_OUTPUT", &outputs)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "the step itself succeeds: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(written.trim(), "status=1");
    let log: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(
        results.iter().all(|r| r["ruleId"] != "SG107"),
        "the step's args are passed on"
    );

    // The last step turns the recorded status into the job's result.
    let fail = step_script(&action, "Fail on findings").replace("${{ steps.check.outputs.status }}", "1");
    let status = Command::new("bash").arg("-c").arg(fail).status().unwrap();
    assert_eq!(status.code(), Some(1));
}
