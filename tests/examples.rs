//! The bundled examples double as smoke fixtures. Each file's header names what it
//! should report: `// expect: SG103` or `// expect: clean` in a `.sync` program, an
//! `"expect": ["SG103"]` list (empty when clean) in the header line of a `.jsonl` call
//! trace. Every expected code whose rule exists must be reported, and nothing unexpected
//! may be. The formatter must round-trip every `.sync` example.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syncguard_analyzer::rules::RULES;
use syncguard_analyzer::{Overrides, Sources, check_sync_bytes, check_trace_file};
use syncguard_grammar::spanless::same_syntax;

/// The example files with extension `ext`, sorted.
fn files_with_extension(ext: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, ext, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"), ext, &mut out);
    out.sort();
    out
}

/// The `.sync` examples.
fn examples() -> Vec<PathBuf> {
    let out = files_with_extension("sync");
    assert!(
        out.len() >= 20,
        "the examples folder is incomplete: {} files",
        out.len()
    );
    out
}

/// The `.jsonl` call-trace examples.
fn trace_examples() -> Vec<PathBuf> {
    let out = files_with_extension("jsonl");
    assert!(out.len() >= 7, "the trace examples are incomplete: {} files", out.len());
    out
}

/// The codes named on `// expect:` lines; empty for `clean`.
fn expected_codes(text: &str, path: &Path) -> BTreeSet<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("// expect:"))
        .collect();
    assert!(!lines.is_empty(), "{} has no `// expect:` line", path.display());
    lines
        .iter()
        .flat_map(|line| line.split([',', ' ']))
        .map(str::trim)
        .filter(|word| word.starts_with("SG"))
        .map(String::from)
        .collect()
}

/// The codes in the `expect` list of a trace's header line (its first line).
fn expected_trace_codes(text: &str, path: &Path) -> BTreeSet<String> {
    let first = text.lines().next().unwrap_or_default();
    let header: serde_json::Value = serde_json::from_str(first)
        .unwrap_or_else(|err| panic!("{}: the first line is not a JSON header: {err}", path.display()));
    assert!(
        header.get("syncguard_trace").is_some(),
        "{} does not start with a `syncguard_trace` header",
        path.display()
    );
    let Some(serde_json::Value::Array(codes)) = header.get("expect") else {
        panic!("{}: the header has no `expect` list", path.display());
    };
    codes
        .iter()
        .map(|code| match code {
            serde_json::Value::String(code) if code.starts_with("SG") => code.clone(),
            other => panic!("{}: `expect` holds {other}, not a rule code", path.display()),
        })
        .collect()
}

/// Every code reported, also those of consequences folded into a finding.
fn reported_codes(diagnostics: &[syncguard_analyzer::Diagnostic]) -> BTreeSet<String> {
    diagnostics.iter().flat_map(|d| d.codes()).map(str::to_string).collect()
}

/// Assert that `reported` is exactly the implemented part of `expected`.
fn assert_reports(path: &Path, expected: &BTreeSet<String>, reported: BTreeSet<String>) {
    let implemented: BTreeSet<&str> = RULES.iter().map(|r| r.code).collect();
    let due: BTreeSet<String> = expected
        .iter()
        .filter(|code| implemented.contains(code.as_str()))
        .cloned()
        .collect();
    assert_eq!(reported, due, "{}: expected {expected:?}", path.display());
}

#[test]
fn examples_report_exactly_what_they_expect() {
    for path in examples() {
        let bytes = std::fs::read(&path).unwrap();
        let expected = expected_codes(&String::from_utf8_lossy(&bytes), &path);
        let mut sources = Sources::default();
        let checked = check_sync_bytes(&mut sources, path.display().to_string(), &bytes);
        assert_reports(&path, &expected, reported_codes(&checked.diagnostics));
    }
}

#[test]
fn trace_examples_report_exactly_what_they_expect() {
    for path in trace_examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = expected_trace_codes(&text, &path);
        let mut sources = Sources::default();
        let checked = check_trace_file(&mut sources, &path, &Overrides::default())
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
        assert_reports(&path, &expected, reported_codes(&checked.diagnostics));
    }
}

#[test]
fn examples_round_trip_through_the_formatter() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = syncguard_grammar::parse(&text);
        assert!(parsed.errors.is_empty(), "{} does not parse", path.display());
        let formatted = syncguard_grammar::format(&text, &parsed);
        let reparsed = syncguard_grammar::parse(&formatted);
        assert!(
            reparsed.errors.is_empty(),
            "{} formats to invalid syntax",
            path.display()
        );
        assert!(
            same_syntax(&parsed.file, &reparsed.file),
            "{}: parse(fmt(parse(x))) != parse(x)",
            path.display()
        );
        assert_eq!(
            syncguard_grammar::format(&formatted, &reparsed),
            formatted,
            "{}: formatting is not idempotent",
            path.display()
        );
    }
}

#[test]
fn examples_are_formatted() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = syncguard_grammar::parse(&text);
        assert_eq!(
            syncguard_grammar::format(&text, &parsed),
            text,
            "{} is not in canonical form; run `syncguard fmt examples/`",
            path.display()
        );
    }
}
