//! The call-trace frontend: reading a JSONL call trace (docs/TRACE.md) into the Program
//! model, streamed and never failing, and `convert` (a trace as a `.sync` program).
//! The analyzer checks what it reads; the JSON library's types stay inside.
//!
//! The file is read line by line into one reused buffer; each line is parsed into JSON
//! that borrows from the buffer and is lowered at once, so memory holds the Program,
//! not the text. A malformed line is an SG002 finding and is skipped; the rest is
//! still checked.

mod args;
mod before;
pub mod convert;
mod json;
pub mod locate;
pub mod locations;
mod lower;
pub mod merge;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use json::Line;
pub use lower::{ReadTrace, RecordedCall, TraceLowerer};

use syncguard_model::diagnostic::Diagnostic;
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::source::{SourceFile, Sources, Span};

/// Lines longer than this are reported and skipped rather than buffered.
const MAX_LINE: usize = 16 << 20;

/// Stream every line of a trace through a [`TraceLowerer`], in file order.
pub fn read_trace(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
    keep_calls: bool,
    keep_times: bool,
) -> TraceLowerer {
    let file = sources.add(SourceFile::deferred(display, reread));
    let mut lowerer = TraceLowerer::new(file, keep_calls);
    lowerer.keep_times = keep_times;
    let mut lines = LineReader::new(reader);
    let mut line_starts = Vec::new();
    while let Some(line) = lines.next_line() {
        line_starts.push(line.start);
        let span = Span::new(file, line.start..line.start + line.bytes.len());
        if let Some(problem) = line.problem {
            lowerer.report(Diagnostic::new(&TraceFormatError::INFO, span, problem));
            continue;
        }
        lower_line(&mut lowerer, line.bytes, span);
    }
    if line_starts.is_empty() {
        line_starts.push(0);
    }
    sources.get_mut(file).set_layout(line_starts, lines.offset);
    lowerer
}

/// Parse one line and lower it, or report why it is not a trace line; blank lines are
/// skipped. The parsed line borrows from `bytes` and is lowered in place.
fn lower_line(lowerer: &mut TraceLowerer, bytes: &[u8], span: Span) {
    let problem = |lowerer: &mut TraceLowerer, range: std::ops::Range<usize>, message: String, label: &str| {
        let diagnostic = Diagnostic::new(&TraceFormatError::INFO, Span::new(span.file, range), message);
        lowerer.report(diagnostic.with_label(label));
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let at = span.range.start + err.valid_up_to();
            let message = "invalid UTF-8 byte: the line is skipped".to_string();
            return problem(
                lowerer,
                at..at + 1,
                message,
                "this byte is not part of any UTF-8 character",
            );
        }
    };
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
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
        return problem(lowerer, span.range.clone(), message, "skipped");
    }
    match serde_json::from_str::<Line>(text) {
        Ok(line) => lowerer.parsed_line(&line, span.clone()),
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
            problem(
                lowerer,
                at,
                format!("{what}: {message}{found}"),
                "the line is skipped from here",
            )
        }
    }
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

/// One line, without its newline (and carriage return).
struct RawLine<'b> {
    start: usize,
    bytes: &'b [u8],
    /// Why the line cannot be read at all (too long, an I/O error).
    problem: Option<String>,
}

/// Splits a byte stream into lines, reusing one buffer.
struct LineReader<R> {
    reader: BufReader<R>,
    buffer: Vec<u8>,
    offset: usize,
    done: bool,
}

impl<R: Read> LineReader<R> {
    fn new(reader: R) -> Self {
        LineReader {
            reader: BufReader::with_capacity(1 << 16, reader),
            buffer: Vec::with_capacity(4096),
            offset: 0,
            done: false,
        }
    }

    fn next_line(&mut self) -> Option<RawLine<'_>> {
        if self.done {
            return None;
        }
        self.buffer.clear();
        let start = self.offset;
        let mut problem = None;
        let mut consumed = 0usize;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    problem = Some(format!("reading stopped here: {err}"));
                    self.done = true;
                    break;
                }
            };
            if chunk.is_empty() {
                self.done = true;
                break;
            }
            let (take, newline) = match memchr::memchr(b'\n', chunk) {
                Some(at) => (at + 1, true),
                None => (chunk.len(), false),
            };
            let content = &chunk[..take - newline as usize];
            if self.buffer.len() + content.len() <= MAX_LINE {
                self.buffer.extend_from_slice(content);
            } else if problem.is_none() {
                problem = Some(format!(
                    "line longer than {} MiB: skipped (a trace has one call per line)",
                    MAX_LINE >> 20
                ));
            }
            consumed += take;
            self.reader.consume(take);
            if newline {
                break;
            }
        }
        self.offset += consumed;
        if consumed == 0 && problem.is_none() {
            return None;
        }
        if self.buffer.last() == Some(&b'\r') {
            self.buffer.pop();
        }
        if problem.is_some() {
            self.buffer.clear();
        }
        Some(RawLine {
            start,
            bytes: &self.buffer,
            problem,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<(usize, Vec<u8>)> {
        let mut reader = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line() {
            out.push((line.start, line.bytes.to_vec()));
        }
        out
    }

    #[test]
    fn lines_keep_their_offsets() {
        assert_eq!(
            lines(b"ab\r\ncd\n\nef"),
            vec![
                (0, b"ab".to_vec()),
                (4, b"cd".to_vec()),
                (7, vec![]),
                (8, b"ef".to_vec())
            ]
        );
        assert!(lines(b"").is_empty());
    }
}
