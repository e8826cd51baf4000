//! One line of text to a parsed trace line, or to the SG002 finding that says why it is
//! not one. Scanning needs nothing but the line, so lines are scanned on any thread;
//! only their lowering must follow file order.

use syncguard_model::diagnostic::Diagnostic;
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::Span;

use crate::json::Line;
use crate::lower::TraceLowerer;

/// What a line of the trace holds, ready to be lowered.
// Parsed lines are kept by value: they fill a batch's Vec, and a box each would cost an
// allocation per line.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ScannedLine<'t> {
    /// Only whitespace: skipped without a word.
    Blank,
    /// A JSON object, borrowing from the line's text, and the line's span.
    Parsed(Line<'t>, Span),
    /// Why the line is skipped.
    Skipped(Box<Diagnostic>),
}

impl ScannedLine<'_> {
    /// Lower the line, or report why it was skipped. By reference: the line is freed
    /// later, off the lowering thread.
    pub(crate) fn lower(&self, lowerer: &mut TraceLowerer) {
        match self {
            ScannedLine::Blank => {}
            ScannedLine::Parsed(line, span) => lowerer.parsed_line(line, span.clone()),
            ScannedLine::Skipped(diagnostic) => lowerer.report(Diagnostic::clone(diagnostic)),
        }
    }
}

/// A line that could not be read at all (too long, or where reading stopped): its span
/// is empty, at the line's start.
pub(crate) fn unreadable<'t>(span: Span, problem: String) -> ScannedLine<'t> {
    ScannedLine::Skipped(Box::new(Diagnostic::new(&TraceFormatError::INFO, span, problem)))
}

/// Why a line longer than `max_line` bytes is not read.
pub(crate) fn too_long(max_line: usize) -> String {
    format!(
        "line longer than {} MiB: skipped (a trace has one call per line)",
        max_line >> 20
    )
}

/// Parse one line (without its newline), which spans `span` of the file.
pub(crate) fn scan_line(bytes: &[u8], span: Span) -> ScannedLine<'_> {
    match std::str::from_utf8(bytes) {
        Ok(text) => scan_text(text, span),
        Err(err) => {
            let at = span.range.start + err.valid_up_to();
            let message = "invalid UTF-8 byte: the line is skipped";
            skipped(
                &span,
                at..at + 1,
                message,
                "this byte is not part of any UTF-8 character",
            )
        }
    }
}

/// The finding that skips the line `span`, at `range` of it.
fn skipped<'t>(span: &Span, range: std::ops::Range<usize>, message: impl Into<String>, label: &str) -> ScannedLine<'t> {
    let diagnostic = Diagnostic::new(&TraceFormatError::INFO, Span::new(span.file, range), message);
    ScannedLine::Skipped(Box::new(diagnostic.with_label(label)))
}

/// Parse one line known to be UTF-8.
pub(crate) fn scan_text(text: &str, span: Span) -> ScannedLine<'_> {
    let mut slot = ScannedLine::Blank;
    scan_text_into(text, span, &mut slot);
    slot
}

/// Parse one line known to be UTF-8 into `slot`. The common line is read by the byte
/// scanner, in place: a parsed line is a few hundred bytes, and moving it from call to
/// call cost more than reading its values. Any other line is read by serde_json, which
/// also words the finding for a malformed one.
pub(crate) fn scan_text_into<'t>(text: &'t str, span: Span, slot: &mut ScannedLine<'t>) {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        *slot = ScannedLine::Blank;
        return;
    }
    if !trimmed.starts_with('{') {
        let found = if trimmed.starts_with('[') {
            "an array"
        } else {
            "something else"
        };
        let message = format!(
            "not a JSON object: a trace line is one call `{{\"api\": ..., \"args\": {{...}}}}`, this is {found}"
        );
        *slot = skipped(&span, span.range.clone(), message, "skipped");
        return;
    }
    *slot = ScannedLine::Parsed(Line::default(), span);
    let ScannedLine::Parsed(line, span) = slot else {
        unreachable!("just written");
    };
    if crate::fast_line::scan_into(text, line).is_some() {
        return;
    }
    let span = span.clone();
    *slot = match serde_json::from_str::<Line>(text) {
        Ok(line) => ScannedLine::Parsed(line, span),
        Err(err) => {
            let message = err.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            let what = match err.classify() {
                serde_json::error::Category::Data => "malformed trace line",
                _ => "not valid JSON",
            };
            let at = character_at(text, err.column().saturating_sub(1), span.range.start);
            let found = text[at.start - span.range.start..at.end - span.range.start]
                .chars()
                .find(|c| !c.is_ascii())
                .map(|c| format!(" (found U+{:04X})", u32::from(c)))
                .unwrap_or_default();
            skipped(
                &span,
                at,
                format!("{what}: {message}{found}"),
                "the line is skipped from here",
            )
        }
    };
}

/// The whole character of `line` (which starts at file offset `start`) that byte
/// `column` falls in, or the line's last character past its end: a label must never
/// split a character.
fn character_at(line: &str, column: usize, start: usize) -> std::ops::Range<usize> {
    let Some((at, c)) = line.char_indices().take_while(|&(i, _)| i <= column).last() else {
        return start..start;
    };
    start + at..start + at + c.len_utf8()
}
