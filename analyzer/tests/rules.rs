//! Per-rule fixtures: `fixtures/<CODE>/fail_*.{sync,jsonl}` must report the rule,
//! `fixtures/<CODE>/pass_*.{sync,jsonl}` must not (as an error or a warning: information
//! reports nothing); the rendered text of each is
//! snapshotted. `.jsonl` fixtures are call traces, checked by the trace reader.

use std::path::Path;

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::rules::RULES;
use syncguard_analyzer::{Overrides, Severity, Sources, apply_suppressions, check_sync_bytes, check_trace_reader};

/// The codes of every diagnostic, of those that are findings (errors and warnings), and
/// the rendered text.
fn check_fixture(path: &Path) -> (Vec<&'static str>, Vec<&'static str>, String) {
    let bytes = std::fs::read(path).unwrap();
    let code = path.parent().unwrap().file_name().unwrap().to_string_lossy();
    let name = format!("{code}/{}", path.file_name().unwrap().to_string_lossy());
    let mut sources = Sources::default();
    let checked = match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => check_trace_reader(&mut sources, name, &bytes[..], Some(path.into()), &Overrides::default()),
        _ => check_sync_bytes(&mut sources, name, &bytes),
    };
    sources.load_deferred();
    let mut diagnostics = checked.diagnostics;
    apply_suppressions(&mut diagnostics, &sources);
    let codes = diagnostics.iter().flat_map(|d| d.codes()).collect();
    let findings = diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .flat_map(|d| d.codes())
        .collect();
    (
        codes,
        findings,
        render_text(&diagnostics, &sources, TextOptions::default()),
    )
}

#[test]
fn rule_fixtures() {
    insta::glob!("fixtures/*/*.{sync,jsonl}", |path| {
        let code = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let (codes, findings, rendered) = check_fixture(path);
        if stem.starts_with("fail") {
            assert!(
                codes.contains(&code.as_str()),
                "{stem} must report {code}, got {codes:?}"
            );
        } else {
            assert!(
                stem.starts_with("pass"),
                "fixture names start with fail_ or pass_: {stem}"
            );
            assert!(
                !findings.contains(&code.as_str()),
                "{stem} must not report {code}, got {findings:?}"
            );
        }
        insta::assert_snapshot!(rendered);
    });
}

#[test]
fn every_rule_has_a_failing_and_a_passing_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for rule in RULES {
        let dir = root.join(rule.code);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|_| panic!("{} has no fixture folder {}", rule.code, dir.display()))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("fail")),
            "{} has no fail_ fixture",
            rule.code
        );
        assert!(
            names.iter().any(|n| n.starts_with("pass")),
            "{} has no pass_ fixture",
            rule.code
        );
    }
}
