//! The trace read one line at a time into one reused buffer: the way every trace was
//! read before reading in blocks, kept as the reference the block reader is tested and
//! measured against.

use std::io::{BufRead, BufReader, Read};

use crate::scan::too_long;

/// One line, without its newline (and carriage return).
pub(crate) struct RawLine<'b> {
    pub(crate) start: usize,
    pub(crate) bytes: &'b [u8],
    /// Why the line cannot be read at all (too long, an I/O error).
    pub(crate) problem: Option<String>,
}

/// Splits a byte stream into lines, reusing one buffer.
pub(crate) struct LineReader<R> {
    reader: BufReader<R>,
    max_line: usize,
    buffer: Vec<u8>,
    /// Every byte read so far.
    pub(crate) offset: usize,
    done: bool,
}

impl<R: Read> LineReader<R> {
    pub(crate) fn new(reader: R, max_line: usize) -> Self {
        LineReader {
            reader: BufReader::with_capacity(1 << 16, reader),
            max_line,
            buffer: Vec::with_capacity(4096),
            offset: 0,
            done: false,
        }
    }

    pub(crate) fn next_line(&mut self) -> Option<RawLine<'_>> {
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
            if self.buffer.len() + content.len() <= self.max_line {
                self.buffer.extend_from_slice(content);
            } else if problem.is_none() {
                problem = Some(too_long(self.max_line));
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
        let mut reader = LineReader::new(input, crate::MAX_LINE);
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
