//! The trace read in large blocks of whole lines, so that the lines of a block can be
//! parsed in parallel. A block ends after its last newline; the line it cuts carries
//! over into the next block. A line longer than the limit is not held: its bytes are
//! dropped up to its newline and it is reported at its start, as the line-by-line
//! reader does.

use std::io::Read;

use crate::scan::too_long;

/// A run of whole lines of the trace, then possibly one line that could not be held.
pub(crate) struct Block {
    /// File offset of `text[0]`.
    pub(crate) start: usize,
    /// Whole lines, each ended by a newline except the file's last.
    pub(crate) text: Vec<u8>,
    /// The line after `text`, when it is longer than the limit or reading stopped in it.
    pub(crate) unread: Option<UnreadLine>,
}

/// A line that is not in any block's text.
pub(crate) struct UnreadLine {
    pub(crate) start: usize,
    pub(crate) problem: String,
}

/// What one read found.
enum Filled {
    /// All it asked for: there may be more.
    Full,
    /// Fewer: the input has ended (nothing is read after an end).
    End,
    Failed(std::io::Error),
}

/// Reads a byte stream as [`Block`]s.
pub(crate) struct BlockReader<R> {
    reader: R,
    block_size: usize,
    max_line: usize,
    /// Bytes read after the last whole line: the start of the next line.
    pending: Vec<u8>,
    /// File offset of the line `pending` starts (or, when skipping, of the long line).
    line_start: usize,
    /// The line at `line_start` is longer than `max_line`: its bytes are dropped until
    /// its newline.
    skipping: bool,
    /// Every byte read so far.
    pub(crate) offset: usize,
    /// The input has ended or failed: nothing more is read.
    ended: bool,
    /// Why reading failed, until the block that reports it.
    failure: Option<String>,
    /// A block's text given back, to read into again.
    spare: Vec<u8>,
}

impl<R: Read> BlockReader<R> {
    pub(crate) fn new(reader: R, block_size: usize, max_line: usize) -> Self {
        BlockReader {
            reader,
            block_size: block_size.max(1),
            max_line,
            pending: Vec::new(),
            line_start: 0,
            skipping: false,
            offset: 0,
            ended: false,
            failure: None,
            spare: Vec::new(),
        }
    }

    /// The next block, `None` once the input is over.
    pub(crate) fn next_block(&mut self) -> Option<Block> {
        loop {
            if let Some(problem) = self.failure.take() {
                return Some(self.stopped(problem));
            }
            if self.ended {
                return self.rest();
            }
            if self.skipping {
                self.pending.clear();
            }
            match self.fill() {
                Filled::Full => {
                    if let Some(block) = self.cut() {
                        return Some(block);
                    }
                }
                Filled::End => self.ended = true,
                Filled::Failed(err) => {
                    self.ended = true;
                    self.failure = Some(format!("reading stopped here: {err}"));
                    // A long line may have ended before the failure, as a line of its own.
                    if self.skipping
                        && let Some(block) = self.cut()
                    {
                        return Some(block);
                    }
                }
            }
        }
    }

    /// Give a block's text back once its lines are lowered: its memory holds the next one.
    pub(crate) fn recycle(&mut self, text: Vec<u8>) {
        if text.capacity() > self.spare.capacity() {
            self.spare = text;
        }
    }

    /// Read into `pending` until it holds `block_size` bytes (at least half of that
    /// more), or the input ends or fails.
    fn fill(&mut self) -> Filled {
        let before = self.pending.len();
        let want = (self.block_size.saturating_sub(before)).max(self.block_size.div_ceil(2));
        // Exactly: a recycled block's memory then holds the next block without growing.
        self.pending.reserve_exact(want);
        // `read_to_end` retries interrupted reads and keeps what it read before an error.
        let result = (&mut self.reader).take(want as u64).read_to_end(&mut self.pending);
        self.offset += self.pending.len() - before;
        match result {
            Err(err) => Filled::Failed(err),
            Ok(read) if read < want => Filled::End,
            Ok(_) => Filled::Full,
        }
    }

    /// The whole lines read so far as a block, or `None` while no line has ended.
    fn cut(&mut self) -> Option<Block> {
        if self.skipping {
            let newline = memchr::memchr(b'\n', &self.pending)?;
            return Some(self.long_line_skipped(newline + 1));
        }
        let Some(newline) = memchr::memrchr(b'\n', &self.pending) else {
            self.skip_if_too_long();
            return None;
        };
        let block = self.take_lines(newline + 1, None);
        self.skip_if_too_long();
        Some(block)
    }

    /// What is left once the input has ended, a block at a time.
    fn rest(&mut self) -> Option<Block> {
        if self.skipping {
            let end = memchr::memchr(b'\n', &self.pending).map_or(self.pending.len(), |newline| newline + 1);
            return Some(self.long_line_skipped(end));
        }
        if self.pending.is_empty() {
            return None;
        }
        Some(self.take_lines(self.pending.len(), None))
    }

    /// The whole lines read before reading failed, then the line it failed in; nothing
    /// is left after it.
    fn stopped(&mut self, problem: String) -> Block {
        let whole = match memchr::memrchr(b'\n', &self.pending) {
            Some(newline) if !self.skipping => newline + 1,
            _ => 0,
        };
        let unread = UnreadLine {
            start: self.line_start + whole,
            problem,
        };
        let block = self.take_lines(whole, Some(unread));
        self.pending.clear();
        self.skipping = false;
        block
    }

    /// A block of the first `end` bytes of `pending` (whole lines), then `unread`; the
    /// rest of `pending` stays for the next block.
    fn take_lines(&mut self, end: usize, unread: Option<UnreadLine>) -> Block {
        let mut rest = std::mem::take(&mut self.spare);
        rest.clear();
        rest.extend_from_slice(&self.pending[end..]);
        self.pending.truncate(end);
        let text = std::mem::replace(&mut self.pending, rest);
        let start = self.line_start;
        self.line_start += end;
        Block { start, text, unread }
    }

    /// The report of the long line at `line_start`, which ends before `end` in
    /// `pending` (after its newline, or where the input ended).
    fn long_line_skipped(&mut self, end: usize) -> Block {
        self.pending.drain(..end);
        self.skipping = false;
        let start = self.line_start;
        self.line_start = self.offset - self.pending.len();
        Block {
            start,
            text: Vec::new(),
            unread: Some(UnreadLine {
                start,
                problem: too_long(self.max_line),
            }),
        }
    }

    /// Stop holding the line `pending` starts once it is longer than the limit.
    fn skip_if_too_long(&mut self) {
        if self.pending.len() > self.max_line {
            self.skipping = true;
            self.pending.clear();
        }
    }
}
