//! Machine-readable output, in the shape the README documents ("Command line").

use serde_json::{Value, json};

use crate::diagnostic::{Diagnostic, Severity};
use crate::smt::{Proof, Unproved};
use crate::source::{Sources, Span};

/// `{"diagnostics": [...], "proved": [...], "unproved": [...], "summary": {...}}`
pub fn render_json(
    diagnostics: &[Diagnostic],
    proofs: &[Proof],
    unproved: &[Unproved],
    sources: &Sources,
    files_checked: usize,
) -> Value {
    let count = |severity: Severity| diagnostics.iter().filter(|d| d.severity == severity).count();
    json!({
        "diagnostics": diagnostics.iter().map(|d| diagnostic_json(d, sources)).collect::<Vec<_>>(),
        "proved": super::proofs::proofs_json(proofs, sources),
        "unproved": super::proofs::unproved_json(unproved, sources),
        "summary": {
            "files": files_checked,
            "errors": count(Severity::Error),
            "warnings": count(Severity::Warning),
            "infos": count(Severity::Info),
        },
    })
}

fn diagnostic_json(diagnostic: &Diagnostic, sources: &Sources) -> Value {
    let (file, line, column) = position(&diagnostic.primary, sources, false);
    let (_, end_line, end_column) = position(&diagnostic.primary, sources, true);
    let related: Vec<Value> = diagnostic
        .related
        .iter()
        .map(|related| {
            let (file, line, column) = position(&related.span, sources, false);
            json!({"file": file, "line": line, "column": column, "message": related.message})
        })
        .collect();
    json!({
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
        "file": file,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "related": related,
        "help": diagnostic.help,
        "notes": diagnostic.notes,
        "consequences": diagnostic.consequences,
    })
}

pub(super) fn position(span: &Span, sources: &Sources, end: bool) -> (String, usize, usize) {
    let file = sources.get(span.file);
    let offset = if end { span.range.end } else { span.range.start };
    let (line, column) = file.line_col(offset);
    (file.path.clone(), line, column)
}
