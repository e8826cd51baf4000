//! The bundled examples double as smoke fixtures. Each file's header names what it
//! should report (`// expect: SG103` or `// expect: clean`); every expected code whose
//! rule exists must be reported, and nothing unexpected may be. The formatter must
//! round-trip every example.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syncguard_analyzer::rules::RULES;
use syncguard_analyzer::{Sources, check_sync_bytes};
use syncguard_grammar::spanless::same_syntax;

fn examples() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "sync") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"), &mut out);
    out.sort();
    assert!(
        out.len() >= 20,
        "the examples folder is incomplete: {} files",
        out.len()
    );
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

#[test]
fn examples_report_exactly_what_they_expect() {
    let implemented: BTreeSet<&str> = RULES.iter().map(|r| r.code).collect();
    for path in examples() {
        let bytes = std::fs::read(&path).unwrap();
        let expected = expected_codes(&String::from_utf8_lossy(&bytes), &path);
        let mut sources = Sources::default();
        let checked = check_sync_bytes(&mut sources, path.display().to_string(), &bytes);
        let reported: BTreeSet<String> = checked.diagnostics.iter().map(|d| d.code.to_string()).collect();
        let due: BTreeSet<String> = expected
            .iter()
            .filter(|code| implemented.contains(code.as_str()))
            .cloned()
            .collect();
        assert_eq!(reported, due, "{}: expected {expected:?}", path.display());
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
