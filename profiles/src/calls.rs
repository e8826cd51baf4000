//! The calls a profile shows, written as the JSONL call trace `syncguard trace` would
//! have captured (docs/TRACE.md), so that the trace reader lowers them to the Program and
//! every rule runs on them unchanged; then the findings are moved from that trace's
//! lines to the profile events each line came from.

use std::fmt::Write as _;
use std::io::Read;

use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Sources, check_trace_reader};
use syncguard_model::source::Span;

/// One argument of a call line.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Str(&'a str),
    Int(i64),
    Null,
    /// Memory ranges: `[{"buf": ..., "off": ..., "len": ...}, ...]`.
    Accesses(&'a [crate::execution_trace::Access]),
}

/// A call trace built from a profile, with where each call came from.
pub struct CallTrace {
    /// The lines, in runs written apart and read as one text (never joined: a large
    /// profile's trace is not held twice).
    text: Vec<String>,
    /// The profile event behind each call line (line `i + 1`; line 0 is the header).
    origins: Vec<Span>,
    /// Where findings about the trace as a whole go: the profile's start.
    header_origin: Span,
}

impl CallTrace {
    pub fn new(world_size: u32, header_origin: Span) -> Self {
        let mut text = String::with_capacity(1 << 16);
        let _ = writeln!(text, "{{\"syncguard_trace\": 1, \"world_size\": {world_size}}}");
        CallTrace {
            text: vec![text],
            origins: Vec::new(),
            header_origin,
        }
    }

    /// Call lines without a header, to be [`CallTrace::append`]ed to a trace in order.
    pub fn part(header_origin: Span) -> Self {
        CallTrace {
            text: vec![String::with_capacity(1 << 20)],
            origins: Vec::new(),
            header_origin,
        }
    }

    /// Append the lines of a [`CallTrace::part`].
    pub fn append(&mut self, part: CallTrace) {
        self.text.extend(part.text);
        self.origins.extend(part.origins);
    }

    /// The number of call lines.
    pub fn len(&self) -> usize {
        self.origins.len()
    }

    pub fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Append one call made by `thread` of `rank` at `ts_ns`.
    pub fn call(&mut self, origin: Span, rank: u32, thread: i64, ts_ns: Option<u64>, api: &str, args: &[(&str, Arg)]) {
        let text = self.text.last_mut().expect("a trace has a first run of lines");
        let _ = write!(text, "{{\"rank\": {rank}, \"thread\": {thread}, ");
        if let Some(ts) = ts_ns {
            let _ = write!(text, "\"ts\": {ts}, ");
        }
        text.push_str("\"api\": ");
        push_string(text, api);
        text.push_str(", \"args\": {");
        for (index, (name, value)) in args.iter().enumerate() {
            if index > 0 {
                text.push_str(", ");
            }
            push_string(text, name);
            text.push_str(": ");
            match value {
                Arg::Str(value) => push_string(text, value),
                Arg::Int(value) => {
                    let _ = write!(text, "{value}");
                }
                Arg::Null => text.push_str("null"),
                Arg::Accesses(accesses) => {
                    text.push('[');
                    for (index, access) in accesses.iter().enumerate() {
                        if index > 0 {
                            text.push_str(", ");
                        }
                        text.push_str("{\"buf\": ");
                        push_string(text, &access.buffer);
                        let _ = write!(text, ", \"off\": {}, \"len\": {}}}", access.offset, access.len);
                    }
                    text.push(']');
                }
            }
        }
        text.push_str("}}\n");
        self.origins.push(origin);
    }

    /// The trace's text (for tests and `--explain`-style inspection).
    pub fn text(&self) -> String {
        self.text.concat()
    }

    /// Check the calls as a trace shown as `display`, and place every finding on the
    /// profile events the calls came from. `reading` (what reading the profile found)
    /// is added.
    pub fn check(
        &self,
        sources: &mut Sources,
        display: &str,
        reading: Vec<Diagnostic>,
        overrides: &Overrides,
    ) -> CheckedFile {
        let display = format!("{display} (as a call trace)");
        let reader = self
            .text
            .iter()
            .fold(Box::new(std::io::empty()) as Box<dyn Read>, |text, run| {
                Box::new(text.chain(run.as_bytes()))
            });
        let mut checked = check_trace_reader(sources, display, reader, None, overrides);
        let synthetic = checked.program.threads[0].span.file;
        let mut line_starts = Vec::with_capacity(self.origins.len() + 2);
        line_starts.push(0);
        let mut run_start = 0;
        for run in &self.text {
            line_starts.extend(memchr::memchr_iter(b'\n', run.as_bytes()).map(|at| run_start + at + 1));
            run_start += run.len();
        }
        for diagnostic in &mut checked.diagnostics {
            // A fix edits the text it points into: here that is a profile, not code.
            diagnostic.fix = None;
            for span in diagnostic.spans_mut() {
                self.place(span, synthetic, &line_starts);
            }
            if let Some(timeline) = &mut diagnostic.timeline {
                for op in &mut timeline.ops {
                    self.place(&mut op.span, synthetic, &line_starts);
                }
            }
        }
        for proof in &mut checked.proofs {
            self.place(&mut proof.span, synthetic, &line_starts);
            for (span, _) in &mut proof.because {
                self.place(span, synthetic, &line_starts);
            }
        }
        for unproved in &mut checked.unproved {
            self.place(&mut unproved.span, synthetic, &line_starts);
        }
        checked.diagnostics.extend(reading);
        Diagnostic::sort(&mut checked.diagnostics);
        checked
    }

    fn place(&self, span: &mut Span, synthetic: syncguard_model::source::FileId, line_starts: &[usize]) {
        if span.file != synthetic {
            return;
        }
        let line = line_starts
            .partition_point(|&start| start <= span.range.start)
            .saturating_sub(1);
        *span = match line.checked_sub(1).and_then(|call| self.origins.get(call)) {
            Some(origin) => origin.clone(),
            None => self.header_origin.clone(),
        };
    }
}

/// `value` as a JSON string.
fn push_string(text: &mut String, value: &str) {
    let plain = value.bytes().all(|byte| byte >= 0x20 && byte != b'"' && byte != b'\\');
    if plain {
        text.push('"');
        text.push_str(value);
        text.push('"');
    } else {
        text.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard_model::source::FileId;

    #[test]
    fn lines_are_json_with_escaped_names() {
        let origin = Span::new(FileId(0), 3..9);
        let mut trace = CallTrace::new(1, Span::new(FileId(0), 0..0));
        trace.call(
            origin,
            0,
            5,
            Some(1000),
            "cudaLaunchKernel",
            &[
                ("func", Arg::Str("k<\"a\">")),
                ("gridDim", Arg::Null),
                ("n", Arg::Int(2)),
            ],
        );
        let text = trace.text();
        let line = text.lines().nth(1).unwrap();
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["args"]["func"], "k<\"a\">");
        assert_eq!(value["ts"], 1000);
        assert_eq!(trace.len(), 1);
    }
}
