//! The source lines a report points at: each op and finding links to its line, which
//! the page lists (with a line of context) rather than embedding whole files, some of
//! which are traces of millions of lines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::escape;
use crate::source::{FileId, Sources, Span};

/// Lines shown around each referenced line.
const CONTEXT_LINES: usize = 1;
/// Characters of a source line kept (minified code and traces have long lines).
const MAX_LINE_CHARS: usize = 240;

/// Where a span is, and the text of its line.
pub struct Location {
    pub file: FileId,
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub text: String,
}

impl Location {
    /// The id of the line's row in the source listing.
    pub fn anchor(&self) -> String {
        format!("src-{}-{}", self.file.0, self.line)
    }

    /// "examples/a.sync:12: aclrtStreamWaitEvent(s1, e2);"
    pub fn describe(&self) -> String {
        format!("{}:{}: {}", self.path, self.line, self.text.trim())
    }
}

/// Looks spans up, and remembers every line looked up for [`SourceIndex::listing`].
pub struct SourceIndex<'s> {
    sources: &'s Sources,
    referenced: std::cell::RefCell<BTreeMap<FileId, BTreeSet<usize>>>,
}

impl<'s> SourceIndex<'s> {
    pub fn new(sources: &'s Sources) -> Self {
        SourceIndex {
            sources,
            referenced: Default::default(),
        }
    }

    pub fn location(&self, span: &Span) -> Location {
        let file = self.sources.get(span.file);
        let (line, column) = file.line_col(span.range.start);
        self.referenced.borrow_mut().entry(span.file).or_default().insert(line);
        Location {
            file: span.file,
            path: file.path.clone(),
            line,
            column,
            text: self.line_text(span.file, line),
        }
    }

    /// The text of 1-based `line`, without its newline, shortened.
    fn line_text(&self, file: FileId, line: usize) -> String {
        let file = self.sources.get(file);
        let text = file
            .text
            .get(file.line_bytes(line.saturating_sub(1)))
            .unwrap_or("")
            .trim_end_matches(['\n', '\r']);
        match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.to_string(),
        }
    }

    /// The listing of every line looked up so far, with context, by file.
    pub fn listing(&self) -> String {
        let referenced = self.referenced.borrow();
        let mut out = String::new();
        for (&file, lines) in referenced.iter() {
            let source = self.sources.get(file);
            let last_line = source.line_of(source.len()) + 1;
            let shown: BTreeSet<usize> = lines
                .iter()
                .flat_map(|&line| line.saturating_sub(CONTEXT_LINES).max(1)..=(line + CONTEXT_LINES).min(last_line))
                .collect();
            let _ = write!(
                out,
                r#"<section class="source"><h3>{}</h3><table class="code">"#,
                escape(&source.path)
            );
            let mut previous = None;
            for &line in &shown {
                if previous.is_some_and(|p| p + 1 < line) {
                    out.push_str(r#"<tr class="gap"><td></td><td>⋯</td></tr>"#);
                }
                previous = Some(line);
                let class = if lines.contains(&line) {
                    " class=\"referenced\""
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    r#"<tr id="src-{}-{line}"{class}><td class="line-number">{line}</td><td><code>{}</code></td></tr>"#,
                    file.0,
                    escape(&self.line_text(file, line))
                );
            }
            out.push_str("</table></section>");
        }
        out
    }
}
