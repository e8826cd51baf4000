//! Minimized shapes of real operator code that syncguard misread when run over whole
//! public repositories (`tests/realcode/`). Each file's `expect:` line (a `.jsonl`
//! trace's `.expect` file beside it) names the codes of the errors and warnings it must
//! get, `clean` for none. Each file is checked alone and inside the whole folder: a
//! file's findings do not depend on the other files of the run.

mod common;

use common::syncguard;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const DIR: &str = "tests/realcode";

/// The codes an `expect:` line names (`SG501`, `clean`; any words around them are
/// explanation).
fn codes_named(line: &str) -> BTreeSet<String> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| word.len() == 5 && word.starts_with("SG") && word[2..].bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

fn expected(path: &Path) -> BTreeSet<String> {
    let sidecar = path.with_extension("expect");
    let text = if sidecar.is_file() {
        std::fs::read_to_string(&sidecar).unwrap()
    } else {
        std::fs::read_to_string(path).unwrap()
    };
    let line = text
        .lines()
        .find_map(|line| line.split_once("expect:").map(|(_, rest)| rest.to_string()))
        .or_else(|| text.lines().next().map(str::to_string))
        .unwrap_or_else(|| panic!("{} has no `expect:` line", path.display()));
    codes_named(&line)
}

fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext != "expect"))
        .collect();
    out.sort();
    out
}

/// Per file of the run, the codes of its errors and warnings.
fn findings(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = vec!["check", "--isolated", "--format", "json"];
    all.extend_from_slice(args);
    let output = syncguard(&all);
    assert_ne!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    let mut by_file: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for diagnostic in json["diagnostics"].as_array().unwrap() {
        if matches!(diagnostic["severity"].as_str(), Some("error" | "warning")) {
            let file = Path::new(diagnostic["file"].as_str().unwrap());
            by_file
                .entry(file.file_name().unwrap().to_string_lossy().into_owned())
                .or_default()
                .insert(diagnostic["code"].as_str().unwrap().to_string());
        }
    }
    by_file
}

#[test]
fn every_input_gets_the_codes_its_expect_line_names() {
    let mut wrong = Vec::new();
    for input in inputs() {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let got = findings(&[input.to_str().unwrap()]).remove(&name).unwrap_or_default();
        let want = expected(&input);
        if got != want {
            wrong.push(format!("{name}: expected {want:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_file_gets_the_same_findings_alone_and_in_the_whole_folder() {
    let together = findings(&[DIR]);
    for input in inputs() {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let alone = findings(&[input.to_str().unwrap()]).remove(&name).unwrap_or_default();
        assert_eq!(
            together.get(&name).cloned().unwrap_or_default(),
            alone,
            "{name}: alone and inside {DIR}"
        );
    }
}

#[test]
fn expect_lines_name_codes() {
    assert_eq!(codes_named(" clean"), BTreeSet::new());
    assert_eq!(
        codes_named(" SG701 (the unchecked synchronize; not SG60x)"),
        BTreeSet::from(["SG701".to_string()])
    );
}
