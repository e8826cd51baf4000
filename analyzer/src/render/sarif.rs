//! SARIF 2.1.0, as GitHub code scanning and other SARIF viewers read it: the rule
//! catalogue with each rule's documentation, one result per finding with every involved
//! call as a related location, the shortest cycle of a deadlock as a code flow, and
//! fingerprints that survive edits elsewhere in the file.

use std::path::Path;

use serde_json::{Value, json};

use super::fingerprint::fingerprints;
use super::json::position;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{RULES, RuleInfo};
use crate::source::{Sources, Span};

/// Who made the log: the tool's version, and where its documentation is (if known).
pub struct SarifTool<'a> {
    pub version: &'a str,
    pub information_uri: Option<&'a str>,
}

/// The SARIF log of one run. Paths are relative to `root` (the directory the run
/// started in, `%SRCROOT%`) where they are inside it, absolute `file:` URIs otherwise.
pub fn render_sarif(diagnostics: &[Diagnostic], sources: &Sources, root: &Path, tool: &SarifTool) -> Value {
    let fingerprints = fingerprints(diagnostics, sources);
    let results: Vec<Value> = diagnostics
        .iter()
        .zip(&fingerprints)
        .map(|(diagnostic, fingerprint)| result(diagnostic, fingerprint, sources, root))
        .collect();
    let mut driver = json!({
        "name": "syncguard",
        "version": tool.version,
        "semanticVersion": tool.version,
        "rules": RULES.iter().map(|rule| rule_descriptor(rule)).collect::<Vec<_>>(),
    });
    if let Some(uri) = tool.information_uri {
        driver["informationUri"] = json!(uri);
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "originalUriBaseIds": { SRCROOT: { "uri": directory_uri(root) } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

const SRCROOT: &str = "%SRCROOT%";

fn rule_descriptor(rule: &RuleInfo) -> Value {
    let docs = rule.documentation();
    let detects = section(&docs, "What it detects").unwrap_or(rule.docs.trim());
    let fix = section(&docs, "Fix").unwrap_or("");
    json!({
        "id": rule.code,
        "name": rule.name,
        "shortDescription": { "text": first_sentence(detects) },
        "fullDescription": { "text": one_paragraph(detects) },
        "help": { "text": one_paragraph(fix), "markdown": docs.trim() },
        "defaultConfiguration": { "level": level(rule.severity) },
        "properties": { "tags": [family(rule.code)] },
    })
}

fn result(diagnostic: &Diagnostic, fingerprint: &str, sources: &Sources, root: &Path) -> Value {
    let related: Vec<Value> = diagnostic
        .related
        .iter()
        .enumerate()
        .map(|(id, related)| {
            json!({
                "id": id + 1,
                "physicalLocation": physical_location(&related.span, sources, root),
                "message": { "text": related.message },
            })
        })
        .collect();
    let mut text = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        text.push_str("\nHelp: ");
        text.push_str(help);
    }
    for note in &diagnostic.notes {
        text.push_str("\nNote: ");
        text.push_str(note);
    }
    let mut result = json!({
        "ruleId": diagnostic.code,
        "ruleIndex": RULES.iter().position(|rule| rule.code == diagnostic.code),
        "level": level(diagnostic.severity),
        "message": { "text": text },
        "locations": [{
            "physicalLocation": physical_location(&diagnostic.primary, sources, root),
            "message": { "text": diagnostic.label },
        }],
        "relatedLocations": related,
        "partialFingerprints": { "syncguard/v1": fingerprint },
    });
    if is_cycle(diagnostic) {
        result["codeFlows"] = json!([code_flow(diagnostic, sources, root)]);
    }
    result
}

/// A deadlock's witness: the primary call, then every call on the cycle in order.
fn is_cycle(diagnostic: &Diagnostic) -> bool {
    diagnostic.code == "SG501" && !diagnostic.related.is_empty()
}

fn code_flow(diagnostic: &Diagnostic, sources: &Sources, root: &Path) -> Value {
    let step = |span: &Span, message: &str| {
        json!({
            "location": {
                "physicalLocation": physical_location(span, sources, root),
                "message": { "text": message },
            },
        })
    };
    let locations: Vec<Value> = std::iter::once(step(&diagnostic.primary, &diagnostic.label))
        .chain(
            diagnostic
                .related
                .iter()
                .map(|related| step(&related.span, &related.message)),
        )
        .collect();
    json!({
        "message": { "text": "the cycle of waits, in order" },
        "threadFlows": [{ "locations": locations }],
    })
}

fn physical_location(span: &Span, sources: &Sources, root: &Path) -> Value {
    let (file, line, column) = position(span, sources, false);
    let (_, end_line, end_column) = position(span, sources, true);
    let mut region = json!({ "startLine": line, "startColumn": column });
    if (end_line, end_column) > (line, column) {
        region["endLine"] = json!(end_line);
        region["endColumn"] = json!(end_column);
    }
    json!({ "artifactLocation": artifact(&file, root), "region": region })
}

/// `{"uri": "src/op.cpp", "uriBaseId": "%SRCROOT%"}`, or an absolute `file:` URI for a
/// file outside the root (or read from standard input: its display name as is).
fn artifact(file: &str, root: &Path) -> Value {
    let path = Path::new(file);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    match absolute.strip_prefix(root) {
        Ok(relative) if !file.is_empty() && file != "-" && file != "<stdin>" => {
            json!({ "uri": encode_path(relative), "uriBaseId": SRCROOT })
        }
        _ if path.is_absolute() => json!({ "uri": format!("file://{}", encode_path(path)) }),
        _ => json!({ "uri": encode_path(path) }),
    }
}

fn directory_uri(root: &Path) -> String {
    let mut uri = format!("file://{}", encode_path(root));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// Percent-encode what a URI path may not hold (RFC 3986), keeping `/`.
fn encode_path(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The rule's family, from its code's hundreds (`SG1xx`: events).
fn family(code: &str) -> &'static str {
    match code.get(2..3) {
        Some("0") => "input",
        Some("1") => "events",
        Some("2") => "groups",
        Some("3") => "notifies",
        Some("4") => "superkernel",
        Some("5") => "deadlocks",
        Some("6") => "memory",
        Some("7") => "lint",
        _ => "other",
    }
}

/// The text of a `## title` section of a rule's documentation.
fn section<'d>(docs: &'d str, title: &str) -> Option<&'d str> {
    let start = docs.find(&format!("## {title}\n"))? + title.len() + 4;
    let rest = &docs[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// A paragraph on one line.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn first_sentence(text: &str) -> String {
    let text = one_paragraph(text);
    match text.find(". ") {
        Some(end) => text[..=end].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_root_are_relative_to_it() {
        let root = Path::new("/work/repo");
        assert_eq!(
            artifact("ops/a b.cpp", root),
            json!({"uri": "ops/a%20b.cpp", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact("/work/repo/x.sync", root),
            json!({"uri": "x.sync", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(artifact("/tmp/y.sync", root), json!({"uri": "file:///tmp/y.sync"}));
        assert_eq!(directory_uri(root), "file:///work/repo/");
    }

    #[test]
    fn every_rule_has_descriptions() {
        for rule in RULES {
            let descriptor = rule_descriptor(rule);
            for key in ["shortDescription", "fullDescription"] {
                assert!(
                    !descriptor[key]["text"].as_str().unwrap().is_empty(),
                    "{}: {key}",
                    rule.code
                );
            }
        }
    }
}
