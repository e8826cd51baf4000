//! The call-trace frontend: reading a JSONL call trace (docs/TRACE.md) into the Program
//! model, streamed and never failing, and `convert` (a trace as a `.sync` program).
//! The analyzer checks what it reads; the JSON library's types stay inside.
//!
//! The trace is read in blocks of 4 MiB of whole lines (`blocks`): a block ends after
//! its last newline, and the line it cuts carries over into the next block; a line
//! longer than 16 MiB is not held but reported and skipped, and a read that fails ends
//! the trace with a finding where it stopped. While the calling thread reads and splits
//! block k+1 into lines, rayon's pool works on block k (`parallel`): its lines are
//! parsed in parallel, in batches that grow from 256 to 2048 lines and halve again
//! towards the block's end, in place into JSON that borrows from the block's text
//! (`scan`: the common line by a byte scanner, `fast_line`; escapes, floats and
//! malformed lines by serde_json, which words every finding), and each batch is lowered
//! in file order while the next batch is parsed. Lowering is sequential (it names
//! handles and builds the Program in file order), so parsing and freeing the parsed
//! lines is what runs in parallel with it. Memory holds about three blocks of text and
//! two batches of parsed lines besides the Program, never the whole file. A malformed
//! line is an SG002 finding and is skipped; the rest is still checked. Every finding,
//! its span and its order, and the line layout, are those of reading one line at a time
//! (`line_reader`, kept as the reference the tests hold the block reader to, and for the
//! benchmark's comparison).

mod args;
mod before;
mod blocks;
pub mod convert;
mod fast_line;
mod json;
mod line_reader;
pub mod locate;
pub mod locations;
mod lower;
pub mod merge;
mod parallel;
mod scan;

/// A rule for the tests' findings.
#[cfg(test)]
mod test_rule {
    pub struct Rule;
    impl syncguard_model::diagnostic::Rule for Rule {
        fn code(&self) -> &'static str {
            "SG999"
        }
        fn name(&self) -> &'static str {
            "test"
        }
        fn severity(&self) -> syncguard_model::diagnostic::Severity {
            syncguard_model::diagnostic::Severity::Error
        }
    }
}

use std::io::Read;
use std::path::PathBuf;

use blocks::BlockReader;
use line_reader::LineReader;
pub use lower::{ReadTrace, RecordedCall, TraceLowerer};
use parallel::{lower_block, split_block};
use scan::{scan_line, unreadable};

use syncguard_model::source::{SourceFile, Sources, Span};

/// Lines longer than this are reported and skipped rather than buffered.
const MAX_LINE: usize = 16 << 20;
/// Bytes read at a time: large enough that a block's lines keep every thread busy.
const BLOCK_SIZE: usize = 4 << 20;

/// Stream every line of a trace through a [`TraceLowerer`], in file order.
pub fn read_trace(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
    keep_calls: bool,
    keep_times: bool,
) -> TraceLowerer {
    let options = ReadOptions::default();
    read_trace_with(sources, display, reader, reread, keep_calls, keep_times, options)
}

/// How [`read_trace_with`] reads: for the tests and benchmarks that compare the block
/// reader with the line-by-line reader.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Bytes read at a time, parsed in parallel; `None`: one line at a time, parsed and
    /// lowered on the calling thread.
    pub block_size: Option<usize>,
    /// Lines longer than this are reported and skipped.
    pub max_line: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            block_size: Some(BLOCK_SIZE),
            max_line: MAX_LINE,
        }
    }
}

/// [`read_trace`], reading as `options` say.
#[doc(hidden)]
pub fn read_trace_with(
    sources: &mut Sources,
    display: impl Into<String>,
    reader: impl Read,
    reread: Option<PathBuf>,
    keep_calls: bool,
    keep_times: bool,
    options: ReadOptions,
) -> TraceLowerer {
    // The file the text can be read again from is the one being read: its length sizes
    // the op lists.
    let expected_bytes = reread
        .as_ref()
        .and_then(|path| std::fs::metadata(path).ok())
        .map(|metadata| metadata.len());
    let file = sources.add(SourceFile::deferred(display, reread));
    let mut lowerer = TraceLowerer::new(file, keep_calls);
    lowerer.keep_times = keep_times;
    lowerer.expected_bytes = expected_bytes;
    let mut line_starts = Vec::new();
    let length = match options.block_size {
        Some(block_size) => read_in_blocks(&mut lowerer, reader, block_size, options.max_line, &mut line_starts),
        None => read_line_by_line(&mut lowerer, reader, options.max_line, &mut line_starts),
    };
    if line_starts.is_empty() {
        line_starts.push(0);
    }
    sources.get_mut(file).set_layout(line_starts, length);
    lowerer
}

/// Read block by block: the calling thread reads and splits the next block while
/// rayon's pool parses and lowers this one (the reader need not be `Send`). Returns the
/// bytes read.
fn read_in_blocks(
    lowerer: &mut TraceLowerer,
    reader: impl Read,
    block_size: usize,
    max_line: usize,
    line_starts: &mut Vec<usize>,
) -> usize {
    let mut blocks = BlockReader::new(reader, block_size, max_line);
    let mut next = blocks
        .next_block()
        .map(|block| split_block(block, max_line, line_starts));
    while let Some(split) = next {
        next = rayon::in_place_scope(|scope| {
            scope.spawn(|_| lower_block(lowerer, &split, max_line));
            let block = blocks.next_block()?;
            Some(split_block(block, max_line, line_starts))
        });
        blocks.recycle(split.block.text);
    }
    blocks.offset
}

/// Read, parse and lower one line at a time on the calling thread. Returns the bytes
/// read.
fn read_line_by_line(
    lowerer: &mut TraceLowerer,
    reader: impl Read,
    max_line: usize,
    line_starts: &mut Vec<usize>,
) -> usize {
    let mut lines = LineReader::new(reader, max_line);
    while let Some(line) = lines.next_line() {
        line_starts.push(line.start);
        let span = Span::new(lowerer.file, line.start..line.start + line.bytes.len());
        let scanned = match line.problem {
            Some(problem) => unreadable(span, problem),
            None => scan_line(line.bytes, span),
        };
        scanned.lower(lowerer);
    }
    lines.offset
}
