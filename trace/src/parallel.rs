//! A block's lines parsed in parallel and lowered in file order: batch by batch, the
//! lowering of one batch overlaps the parsing of the next (and the freeing of the one
//! before), so the sequential lowering waits as little as possible.

use std::ops::Range;

use rayon::prelude::*;
use syncguard_model::source::{FileId, Span};

use crate::blocks::Block;
use crate::lower::TraceLowerer;
use crate::scan::{ScannedLine, scan_line, scan_text_into, too_long, unreadable};

/// Lines in a block's first batch, which is parsed with nothing to overlap: small, so
/// that lowering starts soon. Each batch after it doubles, up to `MAX_BATCH`, so that
/// there are few joins, and near the block's end they halve again down to this size.
const FIRST_BATCH: usize = 256;
const MAX_BATCH: usize = 2048;

/// One line of a block.
struct BlockLine {
    /// File offset.
    start: usize,
    /// Its bytes in the block's text, without newline and carriage return.
    text: Range<usize>,
    /// Longer than the limit (counting a carriage return, as the line-by-line reader
    /// does): reported, not parsed.
    too_long: bool,
}

/// A block and its lines.
pub(crate) struct SplitBlock {
    pub(crate) block: Block,
    lines: Vec<BlockLine>,
}

/// Split a block into lines, and record where each line starts in `line_starts` (the
/// line it ends with unread included). Done while the block before is lowered.
pub(crate) fn split_block(block: Block, max_line: usize, line_starts: &mut Vec<usize>) -> SplitBlock {
    let lines = split_lines(&block, max_line);
    line_starts.extend(lines.iter().map(|line| line.start));
    line_starts.extend(block.unread.as_ref().map(|unread| unread.start));
    SplitBlock { block, lines }
}

/// Parse a block's lines and lower them in file order, then the line that ends the
/// block unread.
pub(crate) fn lower_block(lowerer: &mut TraceLowerer, split: &SplitBlock, max_line: usize) {
    let SplitBlock { block, lines } = split;
    let scanner = Scanner {
        block,
        file: lowerer.file,
        max_line,
    };
    let mut batches = Batches {
        lines,
        size: FIRST_BATCH,
    };
    let mut current = Vec::new();
    let mut next = Vec::new();
    if let Some(first) = batches.next() {
        scanner.scan_into(first, &mut current);
    }
    for batch in batches {
        rayon::join(
            || lower_all(lowerer, &current),
            || {
                next.clear(); // the batch lowered before: freed off the lowering thread
                scanner.scan_into(batch, &mut next);
            },
        );
        std::mem::swap(&mut current, &mut next);
    }
    lower_all(lowerer, &current);
    if let Some(unread) = &block.unread {
        let span = Span::new(scanner.file, unread.start..unread.start);
        unreadable(span, unread.problem.clone()).lower(lowerer);
    }
}

fn lower_all(lowerer: &mut TraceLowerer, scanned: &[ScannedLine]) {
    for line in scanned {
        line.lower(lowerer);
    }
}

/// The lines of a block's text.
fn split_lines(block: &Block, max_line: usize) -> Vec<BlockLine> {
    let text = &block.text;
    let mut lines = Vec::with_capacity(text.len() / 128 + 1);
    let mut line = |range: Range<usize>| {
        let too_long = range.len() > max_line;
        let end = range.end - usize::from(text[range.clone()].ends_with(b"\r"));
        lines.push(BlockLine {
            start: block.start + range.start,
            text: range.start..end,
            too_long,
        });
    };
    let mut start = 0;
    for newline in memchr::memchr_iter(b'\n', text) {
        line(start..newline);
        start = newline + 1;
    }
    if start < text.len() {
        line(start..text.len());
    }
    lines
}

/// A block's lines in batches of growing size.
struct Batches<'l> {
    lines: &'l [BlockLine],
    size: usize,
}

impl<'l> Iterator for Batches<'l> {
    type Item = &'l [BlockLine];

    fn next(&mut self) -> Option<Self::Item> {
        if self.lines.is_empty() {
            return None;
        }
        // Near the block's end, half of what is left: the block's last batch is lowered
        // with nothing to parse beside it, so it is kept small.
        let size = self.size.min(self.lines.len().div_ceil(2).max(FIRST_BATCH));
        let (batch, rest) = self.lines.split_at(size.min(self.lines.len()));
        self.lines = rest;
        self.size = (self.size * 2).min(MAX_BATCH);
        Some(batch)
    }
}

/// Scans the lines of one block.
struct Scanner<'t> {
    block: &'t Block,
    file: FileId,
    max_line: usize,
}

impl<'t> Scanner<'t> {
    /// Scan a batch of consecutive lines in parallel into `scanned`. The batch's text is
    /// checked to be UTF-8 once, as a whole, rather than line by line.
    fn scan_into(&self, batch: &[BlockLine], scanned: &mut Vec<ScannedLine<'t>>) {
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
            return;
        };
        let block: &'t Block = self.block;
        let base = first.text.start;
        let checked = std::str::from_utf8(&block.text[base..last.text.end]).ok();
        let checked = checked.map(|text| (text, base));
        scanned.resize_with(batch.len(), || ScannedLine::Blank);
        scanned
            .par_iter_mut()
            .zip(batch.par_iter())
            .for_each(|(slot, line)| self.scan(line, checked, slot));
    }

    /// Scan one line into `slot`; `checked` is the UTF-8 text it is part of, and the
    /// offset of that text in the block, when known.
    fn scan(&self, line: &BlockLine, checked: Option<(&'t str, usize)>, slot: &mut ScannedLine<'t>) {
        if line.too_long {
            *slot = unreadable(Span::new(self.file, line.start..line.start), too_long(self.max_line));
            return;
        }
        let span = Span::new(self.file, line.start..line.start + line.text.len());
        match checked {
            Some((text, base)) => scan_text_into(&text[line.text.start - base..line.text.end - base], span, slot),
            None => {
                let block: &'t Block = self.block;
                *slot = scan_line(&block.text[line.text.clone()], span);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch_sizes(lines: usize) -> Vec<usize> {
        let lines: Vec<BlockLine> = (0..lines)
            .map(|start| BlockLine {
                start,
                text: 0..0,
                too_long: false,
            })
            .collect();
        let batches = Batches {
            lines: &lines,
            size: FIRST_BATCH,
        };
        batches.map(<[BlockLine]>::len).collect()
    }

    #[test]
    fn batches_grow_then_halve_so_that_the_last_is_small() {
        let sizes = batch_sizes(23_000);
        assert_eq!(sizes.iter().sum::<usize>(), 23_000);
        assert_eq!(&sizes[..4], &[256, 512, 1024, 2048]);
        assert!(sizes.iter().all(|&size| size <= MAX_BATCH));
        assert!(*sizes.last().unwrap() <= FIRST_BATCH, "{sizes:?}");
        assert_eq!(batch_sizes(100), vec![100]);
        assert_eq!(batch_sizes(0), Vec::<usize>::new());
    }
}
