//! Reading a JSONL call trace (DESIGN.md, "Call-trace format"): lines to Program plus
//! diagnostics, streamed and never failing.
//!
//! The file is read line by line into one reused buffer; each line is parsed into
//! borrowed JSON and lowered at once, so memory holds the Program, not the text. A
//! malformed line is an SG002 finding and is skipped; the rest is still checked.

mod args;
pub mod convert;
mod json;
mod lower;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::frontend::{CheckedFile, Overrides};
use crate::source::{FileId, SourceFile, Sources, Span};

pub use lower::TraceLowerer;

/// Lines longer than this are reported and skipped rather than buffered.
const MAX_LINE: usize = 16 << 20;

/// Check the trace at `path`, streaming it from disk.
pub fn check_trace_file(sources: &mut Sources, path: &Path, overrides: &Overrides) -> std::io::Result<CheckedFile> {
    let reader = BufReader::with_capacity(1 << 16, std::fs::File::open(path)?);
    let display = path.display().to_string();
    Ok(check_trace_reader(
        sources,
        display,
        reader,
        Some(path.to_path_buf()),
        overrides,
    ))
}

/// Check a trace read from `reader`, shown as `display`; `reread` is where its text
/// can be read again to render diagnostics (`None`: lines are shown blank).
pub fn check_trace_reader(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
    overrides: &Overrides,
) -> CheckedFile {
    let (_, lowerer) = read_trace(sources, display, reader, reread, false);
    lowerer.finish(overrides)
}

/// Stream every line of a trace through a [`TraceLowerer`].
pub(crate) fn read_trace(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
    keep_calls: bool,
) -> (FileId, TraceLowerer) {
    let file = sources.add(SourceFile::deferred(display, reread));
    let mut lowerer = TraceLowerer::new(file, keep_calls);
    let mut lines = LineReader::new(reader);
    let mut line_starts = Vec::new();
    while let Some(line) = lines.next_line() {
        line_starts.push(line.start);
        let span = Span::new(file, line.start..line.start + line.bytes.len());
        match line.problem {
            Some(problem) => lowerer.report(Diagnostic::new(&crate::rules::TraceFormatError::INFO, span, problem)),
            None => lowerer.line(line.bytes, span),
        }
    }
    if line_starts.is_empty() {
        line_starts.push(0);
    }
    sources.get_mut(file).set_layout(line_starts, lines.offset);
    (file, lowerer)
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
            let (take, newline) = match chunk.iter().position(|&b| b == b'\n') {
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
