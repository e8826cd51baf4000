//! Findings as the protocol's diagnostics: the root cause as the message, every
//! involved call as related information (in any file), the rule's code with a link to
//! its documentation.

use std::path::PathBuf;

use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location, NumberOrString, Url,
};
use syncguard_analyzer::source::Span;
use syncguard_analyzer::{Diagnostic, Severity};

use crate::analysis::Analysis;
use crate::positions::LineIndex;

/// The diagnostics of `file` in `analysis`, for `publishDiagnostics`.
pub fn for_file(analysis: &Analysis, file: &Url) -> Vec<lsp_types::Diagnostic> {
    let Some(id) = analysis.file_of(file) else {
        return Vec::new();
    };
    analysis
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.primary.file == id)
        .map(|diagnostic| to_lsp(analysis, diagnostic))
        .collect()
}

/// One finding as the protocol's diagnostic (as published, so that an editor matches
/// a code action to it).
pub fn for_file_one(analysis: &Analysis, diagnostic: &Diagnostic) -> lsp_types::Diagnostic {
    to_lsp(analysis, diagnostic)
}

pub fn range_of(analysis: &Analysis, span: &Span) -> lsp_types::Range {
    let text = &analysis.sources.get(span.file).text;
    LineIndex::new(text).range(span.range.clone())
}

fn to_lsp(analysis: &Analysis, diagnostic: &Diagnostic) -> lsp_types::Diagnostic {
    let related = diagnostic
        .related
        .iter()
        .filter_map(|related| {
            let uri = analysis.url_of(related.span.file)?.clone();
            Some(DiagnosticRelatedInformation {
                location: Location::new(uri, range_of(analysis, &related.span)),
                message: related.message.clone(),
            })
        })
        .collect();
    lsp_types::Diagnostic {
        range: range_of(analysis, &diagnostic.primary),
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(diagnostic.code.to_string())),
        code_description: RULE_DOCS
            .get()
            .and_then(Option::as_ref)
            .and_then(|docs| docs.url(diagnostic.code))
            .map(|href| CodeDescription { href }),
        source: Some("syncguard".to_string()),
        message: message(diagnostic),
        related_information: Some(related),
        tags: (diagnostic.code == "SG005").then(|| vec![DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}

/// The headline, what is under the call, then how to fix it and the notes.
fn message(diagnostic: &Diagnostic) -> String {
    let mut message = diagnostic.message.clone();
    if !diagnostic.label.is_empty() {
        message.push_str(&format!(" ({})", diagnostic.label));
    }
    if let Some(help) = &diagnostic.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    for note in &diagnostic.notes {
        message.push_str(&format!("\nnote: {note}"));
    }
    message
}

/// Where the rules' documentation was written, once per process.
pub static RULE_DOCS: std::sync::OnceLock<Option<RuleDocs>> = std::sync::OnceLock::new();

/// Each rule's documentation as a Markdown file, written once per server, that a
/// diagnostic's code links to (editors open `file:` links; the rules' docs ship in
/// the binary, so no network is needed).
pub struct RuleDocs {
    folder: PathBuf,
}

impl RuleDocs {
    /// Write the docs below `folder`; `None` if it cannot be written.
    pub fn write(folder: PathBuf) -> Option<RuleDocs> {
        std::fs::create_dir_all(&folder).ok()?;
        for rule in syncguard_analyzer::rules::RULES {
            let text = format!("# {} {}\n\n{}\n", rule.code, rule.name, rule.docs);
            std::fs::write(folder.join(format!("{}.md", rule.code)), text).ok()?;
        }
        Some(RuleDocs { folder })
    }

    fn url(&self, code: &str) -> Option<Url> {
        Url::from_file_path(self.folder.join(format!("{code}.md"))).ok()
    }
}
