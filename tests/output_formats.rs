//! `--format concise|github|sarif`: every format says what the JSON output says. SARIF
//! is valid against the official SARIF 2.1.0 schema (tests/fixtures), GitHub workflow
//! commands parse back, and fingerprints survive edits elsewhere in a file.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn syncguard(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// Inputs with every kind of finding location: `.sync` (a deadlock cycle), C/C++ over
/// two files, a streamed trace.
const INPUTS: [&str; 4] = [
    "examples/acl-event-sync",
    "examples/cpp/fail_stage_events",
    "examples/cpp/fail_copy_compute_streams.cu",
    "examples/traces",
];

fn json_findings() -> Vec<Value> {
    let output = syncguard(&[&["check", "--format", "json"], &INPUTS[..]].concat());
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap().clone();
    assert!(diagnostics.len() >= 10, "{json}");
    diagnostics
}

fn output_of(format: &str) -> (String, Option<i32>) {
    let output = syncguard(&[&["check", "--format", format], &INPUTS[..]].concat());
    (String::from_utf8(output.stdout).unwrap(), output.status.code())
}

#[test]
fn sarif_is_valid_against_the_sarif_2_1_0_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif-2.1.0-rtm.5.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft4::new(&schema).unwrap();
    let (text, status) = output_of("sarif");
    assert_eq!(status, Some(1), "findings fail the run in every format");
    let sarif: Value = serde_json::from_str(&text).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|error| format!("{} at {}", error, error.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(!validator.is_valid(&broken), "the schema is enforced");

    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), syncguard_analyzer::rules::RULES.len());
    let results = run["results"].as_array().unwrap();
    let findings = json_findings();
    assert_eq!(results.len(), findings.len());
    for (result, finding) in results.iter().zip(&findings) {
        assert_eq!(result["ruleId"], finding["code"]);
        let rule = &rules[result["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], finding["code"]);
        let location = &result["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uri"], finding["file"]);
        assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(location["region"]["startLine"], finding["line"]);
        assert_eq!(
            result["relatedLocations"].as_array().unwrap().len(),
            finding["related"].as_array().unwrap().len()
        );
        assert!(
            result["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with(finding["message"].as_str().unwrap())
        );
        assert_eq!(
            result["partialFingerprints"]["syncguard/v1"].as_str().unwrap().len(),
            16
        );
    }
    let cycle = results.iter().find(|r| r["ruleId"] == "SG501").expect("a deadlock");
    assert!(
        cycle["codeFlows"][0]["threadFlows"][0]["locations"]
            .as_array()
            .unwrap()
            .len()
            >= 2,
        "the cycle is a code flow: {cycle}"
    );
    let fingerprints: BTreeSet<&str> = results
        .iter()
        .map(|r| r["partialFingerprints"]["syncguard/v1"].as_str().unwrap())
        .collect();
    assert_eq!(fingerprints.len(), results.len(), "fingerprints are unique");
}

/// `::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::MESSAGE`, decoded.
fn parse_workflow_command(line: &str) -> (String, Vec<(String, String)>, String) {
    let rest = line.strip_prefix("::").unwrap();
    let (head, message) = rest.split_once("::").unwrap();
    let (command, properties) = head.split_once(' ').unwrap();
    let decode = |text: &str| {
        text.replace("%0A", "\n")
            .replace("%0D", "\r")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let properties = properties
        .split(',')
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap();
            (key.to_string(), decode(value))
        })
        .collect();
    (command.to_string(), properties, decode(message))
}

#[test]
fn github_workflow_commands_parse_back_to_the_findings() {
    let (text, status) = output_of("github");
    assert_eq!(status, Some(1));
    let findings = json_findings();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), findings.len(), "one command per finding:\n{text}");
    for (line, finding) in lines.iter().zip(&findings) {
        let (command, properties, message) = parse_workflow_command(line);
        let severity = finding["severity"].as_str().unwrap();
        let expected = if severity == "info" { "notice" } else { severity };
        assert_eq!(command, expected);
        let property = |key: &str| {
            properties
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(property("file"), finding["file"].as_str().unwrap());
        assert_eq!(property("line"), finding["line"].to_string());
        assert_eq!(property("col"), finding["column"].to_string());
        assert_eq!(property("endLine"), finding["end_line"].to_string());
        assert!(property("title").starts_with(finding["code"].as_str().unwrap()));
        assert!(message.starts_with(finding["message"].as_str().unwrap()), "{message}");
    }
}

#[test]
fn concise_is_one_line_per_finding() {
    let (text, status) = output_of("concise");
    assert_eq!(status, Some(1));
    let findings = json_findings();
    let expected: Vec<String> = findings
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}: {} [{}] {}",
                f["file"].as_str().unwrap(),
                f["line"],
                f["column"],
                f["code"].as_str().unwrap(),
                f["severity"].as_str().unwrap(),
                f["message"]
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
        .collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn fingerprints_survive_edits_elsewhere_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acl-event-sync/missing-reset.sync"),
    )
    .unwrap();
    let file = dir.path().join("program.sync");
    let fingerprints = |text: &str| -> Vec<(String, String)> {
        std::fs::write(&file, text).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
            .args(["check", "--format", "sarif", "program.sync"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let sarif: Value = serde_json::from_slice(&output.stdout).unwrap();
        sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["syncguard/v1"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let before = fingerprints(&original);
    assert!(!before.is_empty());
    let shifted = format!("// reviewed 2026-11-26\n// owner: runtime team\n\n{original}");
    assert_eq!(before, fingerprints(&shifted), "lines added above change nothing");
}
