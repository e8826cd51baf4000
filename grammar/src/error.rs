//! The grammar's own error type. Parser-library error types never leave this crate.

use crate::ast::Span;

/// One syntax error: where, what, and what the parser was in the middle of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub span: Span,
    /// The headline, e.g. "expected `;`, found `}`".
    pub message: String,
    /// The text of the label under the primary span.
    pub label: String,
    /// "while parsing this …" context: the construct and its span, innermost first.
    pub contexts: Vec<(String, Span)>,
    pub help: Option<String>,
}

impl SyntaxError {
    pub fn new(span: Span, message: impl Into<String>, label: impl Into<String>) -> Self {
        SyntaxError {
            span,
            message: message.into(),
            label: label.into(),
            contexts: Vec::new(),
            help: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}
