//! Source files and spans. A span always points into the file the user wrote.

use std::ops::Range;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub range: Range<usize>,
}

impl Span {
    pub fn new(file: FileId, range: Range<usize>) -> Self {
        Span { file, range }
    }
}

#[derive(Debug)]
pub struct SourceFile {
    /// The path as the user gave it (or `-` for standard input).
    pub path: String,
    /// The whole text; empty for a trace until [`Sources::load_deferred`] reads it for
    /// rendering (traces are streamed, never held whole while they are checked).
    pub text: String,
    line_starts: Vec<usize>,
    len: usize,
    /// Where to read the text from later, for a file whose text is deferred.
    deferred: Option<PathBuf>,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0).chain(line_starts(&text)).collect();
        SourceFile {
            path: path.into(),
            len: text.len(),
            text,
            line_starts,
            deferred: None,
        }
    }

    /// A file read as a stream: only its line starts and length are kept; the text can
    /// be read again from `reread` (if any) when a diagnostic is rendered.
    pub fn deferred(path: impl Into<String>, reread: Option<PathBuf>) -> Self {
        SourceFile {
            path: path.into(),
            text: String::new(),
            line_starts: vec![0],
            len: 0,
            deferred: reread,
        }
    }

    /// Record the layout of a deferred file once it has been streamed.
    pub fn set_layout(&mut self, line_starts: Vec<usize>, len: usize) {
        self.line_starts = line_starts;
        self.len = len;
    }

    /// The 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// The bytes of 0-based `line`, with its newline.
    pub fn line_bytes(&self, line: usize) -> Range<usize> {
        let start = self.line_starts.get(line).copied().unwrap_or(self.len);
        let end = self.line_starts.get(line + 1).copied().unwrap_or(self.len);
        start..end
    }

    /// The length in bytes, whether or not the text is loaded.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// 1-based line and 1-based column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.len);
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |prefix| prefix.chars().count());
        (line + 1, column + 1)
    }
}

/// Every file of one run, indexed by `FileId`.
#[derive(Debug, Default)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn get_mut(&mut self, id: FileId) -> &mut SourceFile {
        &mut self.files[id.0 as usize]
    }

    /// Read the text of every deferred file, for renderers that show source lines. A
    /// file that cannot be read again (deleted meanwhile) keeps empty lines of its
    /// original layout, so its line numbers stay right.
    pub fn load_deferred(&mut self) {
        for file in &mut self.files {
            let Some(path) = file.deferred.take() else { continue };
            let bytes = std::fs::read(&path).unwrap_or_default();
            let (text, _) = decode_utf8_lossless_offsets(&bytes);
            if text.len() == file.len {
                file.text = text;
            } else {
                let mut blank = vec![b' '; file.len];
                for &start in &file.line_starts[1..] {
                    blank[start - 1] = b'\n';
                }
                file.text = String::from_utf8(blank).unwrap_or_default();
            }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i as u32), f))
    }
}

/// Decode bytes as UTF-8 without losing offsets: each invalid byte becomes U+001A
/// (one byte, like the original), and its offset is returned for a diagnostic.
pub fn decode_utf8_lossless_offsets(bytes: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(bytes.len());
    let mut invalid = Vec::new();
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for _ in chunk.invalid() {
            invalid.push(text.len());
            text.push('\u{1A}');
        }
    }
    (text, invalid)
}

/// Where each line after the first starts: after `\n`, `\r\n` or a lone `\r` (the line
/// ends every frontend and the renderers agree on).
pub fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().filter_map(move |(index, &byte)| {
        let ends_line = byte == b'\n' || (byte == b'\r' && bytes.get(index + 1) != Some(&b'\n'));
        ends_line.then_some(index + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let file = SourceFile::new("f", "ab\nçd\n");
        assert_eq!(file.line_col(0), (1, 1));
        assert_eq!(file.line_col(3), (2, 1));
        assert_eq!(file.line_col(5), (2, 2));
        assert_eq!(file.line_col(100), (3, 1));
    }

    #[test]
    fn every_line_end_starts_a_line() {
        let file = SourceFile::new("f", "a\rb\r\nc\nd\r\re");
        let lines: Vec<usize> = [0, 2, 5, 7, 9, 10].map(|offset| file.line_col(offset).0).into();
        assert_eq!(lines, [1, 2, 3, 4, 5, 6]);
        assert_eq!(file.line_col(10), (6, 1));
        assert_eq!(file.line_bytes(1), 2..5, "`\\r\\n` ends one line");
    }

    #[test]
    fn invalid_utf8_keeps_offsets() {
        let (text, invalid) = decode_utf8_lossless_offsets(b"ab\xff\xfecd");
        assert_eq!(text.len(), 6);
        assert_eq!(invalid, vec![2, 3]);
    }
}
