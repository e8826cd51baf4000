//! Long lines in text output: a line longer than [`MAX_LINE_BYTES`] is shown as windows
//! around the label boundaries on it, with `…` for what is left out. Label offsets move
//! with the text; the columns ariadne prints in a report's header are put back to the
//! columns of the file the user wrote.

use std::ops::Range;

use crate::source::SourceFile;

/// Lines longer than this are clipped, so that a diagnostic on a 100 kB line prints a
/// few hundred bytes, not the whole line (nor, for a thousand such diagnostics, 100 MB).
pub(super) const MAX_LINE_BYTES: usize = 400;

/// Bytes kept on each side of a label's start and end in a clipped line.
const CONTEXT_BYTES: usize = 60;

/// Marks the bytes a clipped line leaves out.
const ELLIPSIS: &str = "…";

/// A file's text with some lines clipped, and where its offsets moved.
pub(super) struct ClippedText {
    pub text: String,
    /// `(original offset, clipped offset)` at the start of every piece copied unchanged;
    /// an offset maps through the last piece that starts at or before it.
    pieces: Vec<(usize, usize)>,
    /// The 0-based lines that were clipped.
    pub lines: Vec<usize>,
}

impl ClippedText {
    pub fn map(&self, offset: usize) -> usize {
        let piece = self.pieces.partition_point(|&(original, _)| original <= offset);
        let (original, clipped) = self.pieces[piece.saturating_sub(1)];
        clipped + offset.saturating_sub(original)
    }
}

/// The byte range of 0-based `line` without its line end.
fn line_content(file: &SourceFile, line: usize) -> Range<usize> {
    let bytes = file.line_bytes(line);
    let text = &file.text[bytes.clone()];
    let content = text.trim_end_matches('\n');
    let content = content.strip_suffix('\r').unwrap_or(content);
    bytes.start..bytes.start + content.len()
}

/// Clip every line of `file` longer than [`MAX_LINE_BYTES`] that holds one of `points`
/// (label starts and ends); `None` when no such line is long.
pub(super) fn clip_long_lines(file: &SourceFile, points: &[usize]) -> Option<ClippedText> {
    if file.text.is_empty() {
        return None;
    }
    let mut lines: Vec<usize> = points.iter().map(|&p| file.line_of(p)).collect();
    lines.sort_unstable();
    lines.dedup();
    lines.retain(|&line| line_content(file, line).len() > MAX_LINE_BYTES);
    if lines.is_empty() {
        return None;
    }
    let mut clipped = ClippedText {
        text: String::with_capacity(file.text.len()),
        pieces: Vec::new(),
        lines: lines.clone(),
    };
    let mut copied = 0;
    for &line in &lines {
        let content = line_content(file, line);
        clipped.copy(file, copied..content.start);
        let mut cursor = content.start;
        for window in windows(file, &content, points) {
            if window.start > cursor {
                clipped.text.push_str(ELLIPSIS);
            }
            clipped.copy(file, window.clone());
            cursor = window.end;
        }
        if cursor < content.end {
            clipped.text.push_str(ELLIPSIS);
        }
        copied = content.end;
    }
    clipped.copy(file, copied..file.text.len());
    Some(clipped)
}

impl ClippedText {
    fn copy(&mut self, file: &SourceFile, range: Range<usize>) {
        self.pieces.push((range.start, self.text.len()));
        self.text.push_str(&file.text[range]);
    }
}

/// The parts of a long line to keep: [`CONTEXT_BYTES`] around each point on it, merged,
/// on character boundaries; the line's start when no point is on it.
fn windows(file: &SourceFile, content: &Range<usize>, points: &[usize]) -> Vec<Range<usize>> {
    let mut on_line: Vec<usize> = points
        .iter()
        .map(|&p| p.min(content.end))
        .filter(|p| content.contains(p) || *p == content.end)
        .collect();
    on_line.sort_unstable();
    if on_line.is_empty() {
        on_line.push(content.start);
    }
    let mut windows: Vec<Range<usize>> = Vec::new();
    for point in on_line {
        let start = floor_char_boundary(&file.text, point.saturating_sub(CONTEXT_BYTES).max(content.start));
        let end = ceil_char_boundary(&file.text, (point + CONTEXT_BYTES).min(content.end));
        match windows.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => windows.push(start..end),
        }
    }
    windows
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// `(written, true)` header locations: ariadne counts a clipped line's columns in the
/// clipped text; the header must name the column in the user's file.
pub(super) fn header_fixes(file: &SourceFile, clipped: &ClippedText, starts: &[usize]) -> Vec<(String, String)> {
    starts
        .iter()
        .filter(|&&start| clipped.lines.binary_search(&file.line_of(start)).is_ok())
        .map(|&start| {
            let (line, column) = file.line_col(start);
            let new = floor_char_boundary(&clipped.text, clipped.map(start));
            let line_start = clipped.text[..new].rfind(['\n', '\r']).map_or(0, |i| i + 1);
            let written = clipped.text[line_start..new].chars().count() + 1;
            let path = &file.path;
            (
                format!("{path}:{line}:{written} ]"),
                format!("{path}:{line}:{column} ]"),
            )
        })
        .collect()
}
