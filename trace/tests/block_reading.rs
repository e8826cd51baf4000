//! Reading a trace in blocks parsed in parallel finds exactly what reading it one line
//! at a time finds: the same findings (message, label, span) in the same order, the
//! same line layout, the same Program and the same recorded calls, wherever the blocks
//! happen to cut the lines, and however the input arrives or fails.

use std::io::{self, Read};
use std::ops::Range;

use proptest::prelude::*;
use syncguard_model::Diagnostic;
use syncguard_model::source::Sources;
use syncguard_trace::{ReadOptions, read_trace_with};

/// Everything a reading produces, comparable.
#[derive(Debug, PartialEq)]
struct Reading {
    diagnostics: Vec<Diagnostic>,
    lines: Vec<Range<usize>>,
    len: usize,
    program: String,
    call_times: Vec<(usize, u64)>,
    used_before_creation: String,
    calls: Vec<(usize, String)>,
}

/// Hands out the input in pieces of at most `piece` bytes, an interrupted read now and
/// then, and an error once `fail_at` bytes have been read.
struct Trickle<'a> {
    input: &'a [u8],
    at: usize,
    piece: usize,
    fail_at: Option<usize>,
    reads: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        if self.reads.is_multiple_of(7) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let end = self.fail_at.unwrap_or(usize::MAX).min(self.input.len());
        if self.fail_at.is_some_and(|fail_at| self.at >= fail_at) {
            return Err(io::Error::other("the disk is gone"));
        }
        let n = buf.len().min(self.piece).min(end - self.at);
        buf[..n].copy_from_slice(&self.input[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn trickle(input: &[u8], piece: usize, fail_at: Option<usize>) -> Trickle<'_> {
    Trickle {
        input,
        at: 0,
        piece: piece.max(1),
        fail_at,
        reads: 0,
    }
}

fn read(reader: impl Read, options: ReadOptions) -> Reading {
    let mut sources = Sources::default();
    let lowerer = read_trace_with(&mut sources, "t.jsonl", reader, None, true, true, options);
    let mut read = lowerer.into_read(None, None);
    // Kept apart, in order: a HashMap's Debug has no order of its own.
    let mut call_times: Vec<(usize, u64)> = read.program.call_times.drain().collect();
    call_times.sort();
    let file = sources.get(read.file);
    let count = file.line_of(usize::MAX) + 1;
    let mut calls: Vec<(usize, String)> = read
        .calls
        .unwrap_or_default()
        .into_iter()
        .map(|(at, call)| (at, format!("{} {:?} {:?}", call.api.name, call.args, call.created)))
        .collect();
    calls.sort();
    Reading {
        diagnostics: read.diagnostics,
        lines: (0..count).map(|line| file.line_bytes(line)).collect(),
        len: file.len(),
        program: format!("{:?}", read.program),
        call_times,
        used_before_creation: format!("{:?}", read.used_before_creation),
        calls,
    }
}

/// Field by field, so that a failure shows what differs.
#[track_caller]
fn assert_same_reading(actual: &Reading, expected: &Reading, context: &str) {
    let messages = |reading: &Reading| -> Vec<(Range<usize>, String)> {
        let diagnostics = reading.diagnostics.iter();
        diagnostics
            .map(|d| (d.primary.range.clone(), d.message.clone()))
            .collect()
    };
    assert_eq!(messages(actual), messages(expected), "{context}");
    assert_eq!(actual.lines, expected.lines, "{context}");
    assert_eq!(actual.len, expected.len, "{context}");
    assert_eq!(actual, expected, "{context}");
}

fn line_by_line(max_line: usize) -> ReadOptions {
    ReadOptions {
        block_size: None,
        max_line,
    }
}

fn blocks(block_size: usize, max_line: usize) -> ReadOptions {
    ReadOptions {
        block_size: Some(block_size),
        max_line,
    }
}

/// Read `input` in blocks of `block_size` and line by line; they must agree. Returns
/// the reading.
fn assert_same(input: &[u8], block_size: usize, max_line: usize) -> Reading {
    let expected = read(input, line_by_line(max_line));
    let actual = read(input, blocks(block_size, max_line));
    let context = format!("blocks of {block_size} bytes on {:?}", String::from_utf8_lossy(input));
    assert_same_reading(&actual, &expected, &context);
    actual
}

/// Every block size from one byte to past the whole input.
fn assert_same_for_every_block_size(input: &[u8], max_line: usize) -> Reading {
    let expected = assert_same(input, 1, max_line);
    for block_size in 2..=input.len() + 2 {
        assert_same(input, block_size, max_line);
    }
    expected
}

const NO_LIMIT: usize = 16 << 20;

const TRACE: &str = r#"{"syncguard_trace": 1, "world_size": 1, "target": "A3"}
{"rank": 0, "thread": 0, "api": "aclrtCreateStream", "args": {"stream": "0xaaab2f40"}, "ret": 0, "ts": 100}
{"rank": 0, "thread": 0, "api": "aclrtCreateEventWithFlag", "args": {"event": "0xaaab4100", "flag": "ACL_EVENT_SYNC"}, "ret": 0, "ts": 200}
{"rank": 0, "thread": 0, "api": "aclrtMalloc", "args": {"devPtr": "0x124080000000", "size": 4096, "policy": "ACL_MEM_MALLOC_HUGE_FIRST"}, "ret": 0, "ts": 300}
{"rank": 0, "thread": 0, "api": "kernel", "args": {"stream": "0xaaab2f40", "name": "matmul", "writes": ["0x124080000000"]}, "ts": 400}
{"rank": 0, "thread": 0, "api": "aclrtRecordEvent", "args": {"event": "0xaaab4100", "stream": "0xaaab2f40"}, "ret": 0, "ts": 500}
{"rank": 0, "thread": 0, "api": "aclrtSynchronizeEvent", "args": {"event": "0xaaab4100"}, "ret": 0, "ts": 600}
"#;

fn spans(reading: &Reading) -> Vec<(Range<usize>, &str)> {
    reading
        .diagnostics
        .iter()
        .map(|d| (d.primary.range.clone(), d.message.as_str()))
        .collect()
}

#[test]
fn lines_cut_by_blocks_read_as_whole_lines() {
    let reading = assert_same_for_every_block_size(TRACE.as_bytes(), NO_LIMIT);
    assert_eq!(reading.lines.len(), 7);
    assert_eq!(reading.calls.len(), 6, "every call is lowered");
}

#[test]
fn carriage_returns_at_block_ends_stay_out_of_the_lines() {
    let crlf = TRACE.replace('\n', "\r\n");
    let reading = assert_same_for_every_block_size(crlf.as_bytes(), NO_LIMIT);
    assert_eq!(reading.calls.len(), 6);
    let with_error = "{\"api\": 1}\r\n[1]\r\n{\"api\": \r\n";
    let reading = assert_same_for_every_block_size(with_error.as_bytes(), NO_LIMIT);
    assert_eq!(reading.diagnostics.len(), 3);
    assert_eq!(
        reading.diagnostics[1].primary.range,
        12..15,
        "the span ends before the \\r"
    );
}

#[test]
fn a_last_line_without_newline_is_read() {
    let trimmed = TRACE.trim_end();
    let reading = assert_same_for_every_block_size(trimmed.as_bytes(), NO_LIMIT);
    assert_eq!(reading.calls.len(), 6);
    assert_eq!(reading.len, trimmed.len());
    let cr = format!("{trimmed}\r");
    assert_eq!(assert_same_for_every_block_size(cr.as_bytes(), NO_LIMIT).calls.len(), 6);
    assert_eq!(assert_same_for_every_block_size(b"[", NO_LIMIT).diagnostics.len(), 1);
}

#[test]
fn empty_and_blank_inputs_have_one_line() {
    for input in ["", "\n", "\n\n", "  \r\n\t\n", "\r"] {
        let reading = assert_same_for_every_block_size(input.as_bytes(), NO_LIMIT);
        let messages: Vec<_> = reading.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["the trace has no calls: nothing to verify"], "{input:?}");
    }
    assert_eq!(read(&b""[..], blocks(4, NO_LIMIT)).lines, vec![0..0]);
}

#[test]
fn a_too_long_line_is_reported_at_its_start_wherever_blocks_cut_it() {
    let max_line = 24;
    let long = format!("{{\"api\": \"{}\"}}", "x".repeat(30));
    let input = format!("{{\"api\": 1}}\n{long}\n{{\"api\": 2}}\n{long}");
    let reading = assert_same_for_every_block_size(input.as_bytes(), max_line);
    let long_at = 11;
    let second_long_at = long_at + long.len() + 1 + 11;
    let found = spans(&reading);
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found[1].0, long_at..long_at);
    assert!(
        found[1].1.starts_with("line longer than 0 MiB: skipped"),
        "{}",
        found[1].1
    );
    assert_eq!(found[3].0, second_long_at..second_long_at);
    assert_eq!(reading.len, input.len());
}

#[test]
fn the_line_limit_counts_a_carriage_return() {
    // 10 bytes, 10 bytes and a carriage return, 11 bytes: the last two are too long.
    let input = b"{\"api\":1}x\n{\"api\":1}x\r\n{\"api\":1}xx\nok\n";
    let reading = assert_same_for_every_block_size(input, 10);
    let too_long = spans(&reading)
        .iter()
        .filter(|(_, message)| message.starts_with("line longer"))
        .count();
    assert_eq!(too_long, 2);
}

#[test]
fn an_invalid_utf8_byte_is_reported_at_the_byte() {
    let mut input = TRACE.as_bytes().to_vec();
    let at = TRACE.find("matmul").unwrap() + 2;
    input[at] = 0xff;
    let reading = assert_same_for_every_block_size(&input, NO_LIMIT);
    assert_eq!(
        spans(&reading),
        vec![(at..at + 1, "invalid UTF-8 byte: the line is skipped")]
    );
    assert_eq!(reading.calls.len(), 5);
}

#[test]
fn malformed_lines_amid_a_parallel_block_keep_their_place() {
    let call = r#"{"rank": 0, "thread": 0, "api": "aclrtCreateStream", "args": {"stream": "0x1"}, "ret": 0}"#;
    let mut input = String::new();
    let mut expected = Vec::new();
    for i in 0..20_000 {
        let start = input.len();
        match i % 1999 {
            5 => {
                let malformed = r#"{"rank": 0, "api": "aclrtCreateStream", "args": {"stream": }}"#;
                input.push_str(malformed);
                let at = start + malformed.find(" }").unwrap() + 1;
                expected.push(at..at + 1);
            }
            7 => {
                input.push_str("[1, 2]");
                expected.push(start..start + 6);
            }
            _ => input.push_str(&call.replace("0x1", &format!("{i:#x}"))),
        }
        input.push('\n');
    }
    for block_size in [1 << 10, 64 << 10, 8 << 20] {
        let reading = assert_same(input.as_bytes(), block_size, NO_LIMIT);
        let found: Vec<_> = spans(&reading).into_iter().map(|(span, _)| span).collect();
        assert_eq!(found, expected);
        assert_eq!(reading.lines.len(), 20_000);
    }
}

#[test]
fn a_read_error_stops_reading_where_it_happens() {
    let input = TRACE.as_bytes();
    for fail_at in 0..=input.len() {
        for piece in [1, 3, 64, 4096] {
            let expected = read(trickle(input, piece, Some(fail_at)), line_by_line(NO_LIMIT));
            let last = expected.diagnostics.last().expect("the error is reported");
            assert_eq!(last.message, "reading stopped here: the disk is gone");
            assert_eq!(expected.len, fail_at);
            for block_size in [1, 2, 7, 50, 200, 4096] {
                let actual = read(trickle(input, piece, Some(fail_at)), blocks(block_size, NO_LIMIT));
                let context = format!("failing at {fail_at}, pieces of {piece}, blocks of {block_size}");
                assert_same_reading(&actual, &expected, &context);
            }
        }
    }
}

#[test]
fn a_read_error_inside_a_too_long_line_is_reported_at_its_start() {
    let input = b"{\"api\": 1}\n{\"api\": \"a long name\"}\n{\"api\": 2}\n";
    for fail_at in 0..=input.len() {
        let expected = read(trickle(input, 5, Some(fail_at)), line_by_line(12));
        for block_size in [1, 2, 5, 13, 40] {
            let actual = read(trickle(input, 5, Some(fail_at)), blocks(block_size, 12));
            let context = format!("failing at {fail_at}, blocks of {block_size}");
            assert_same_reading(&actual, &expected, &context);
        }
    }
}

/// A line of a random trace: calls the lowering reads, lines it rejects, lines that are
/// not JSON, too long or not UTF-8, and blank lines.
fn any_line() -> impl Strategy<Value = Vec<u8>> {
    let call = (
        0u8..3,
        0u8..4,
        prop::sample::select(vec![
            "aclrtCreateStream",
            "aclrtCreateEvent",
            "aclrtRecordEvent",
            "aclrtStreamWaitEvent",
            "aclrtSynchronizeStream",
            "aclrtDestroyEvent",
        ]),
    )
        .prop_map(|(rank, handle, api)| {
            format!(r#"{{"rank": {rank}, "api": "{api}", "args": {{"stream": "s{handle}", "event": "e{handle}"}}}}"#)
                .into_bytes()
        });
    let header = Just(br#"{"syncguard_trace": 1, "world_size": 3}"#.to_vec());
    let malformed = prop::sample::select(vec![
        r#"{"api": "aclrtCreateStream", "args": {"stream": }}"#,
        r#"{"api": 12}"#,
        r#"{"rank": 0}"#,
        r#"{"api": "aclrtCreateStream", "args": [1]}"#,
        "[1, 2, 3]",
        "not json",
        "{\"api\": \"caf\u{e9}\", ",
        "{\u{e9}}",
    ])
    .prop_map(|line| line.as_bytes().to_vec());
    let long = (130usize..300).prop_map(|n| format!("{{\"api\": \"{}\"}}", "y".repeat(n)).into_bytes());
    let bytes = prop::collection::vec(any::<u8>(), 0..12);
    let blank = prop::sample::select(vec!["", " ", "\t  "]).prop_map(|line| line.as_bytes().to_vec());
    prop_oneof![6 => call, 1 => header, 2 => malformed, 1 => long, 1 => bytes, 1 => blank]
}

fn any_trace() -> impl Strategy<Value = Vec<u8>> {
    let ended_line = (any_line(), prop::sample::select(vec!["\n", "\r\n"]));
    (prop::collection::vec(ended_line, 0..40), any_line()).prop_map(|(lines, last)| {
        let mut trace = Vec::new();
        for (line, end) in lines {
            trace.extend_from_slice(&line);
            trace.extend_from_slice(end.as_bytes());
        }
        trace.extend_from_slice(&last);
        trace
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn blocks_of_any_size_read_like_lines(
        trace in any_trace(),
        block_size in 1usize..400,
        piece in 1usize..300,
        fail_at in prop::option::weighted(0.2, 0usize..4000),
    ) {
        let max_line = 128;
        let expected = read(trickle(&trace, piece, fail_at), line_by_line(max_line));
        let actual = read(trickle(&trace, piece, fail_at), blocks(block_size, max_line));
        prop_assert_eq!(actual, expected);
    }
}
