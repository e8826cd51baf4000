//! The reduction: which call lines of a trace file can be left out without changing
//! any finding (docs/SCALE.md, "What the skeleton leaves out, and why that is exact").
//!
//! A line is left out only if it is a kernel launch that declares no memory (no `reads`,
//! no `writes`) strictly inside a run of such launches that are adjacent in the rank's
//! order of calls (nothing else of that rank between them), issued by one host thread
//! to one stream: the launches before and after it in the run are kept. Such a launch
//! becomes a device node with no access, ordered only by its stream and by its issue
//! on its host thread, between two kept nodes with exactly the same orderings; no rule
//! reads it (there is nothing for it to race on, wait for or signal), except:
//! - the note that launches declare no memory (SG004) lists the first nine of them and
//!   counts them all: the first nine launches of every host thread are kept, and the
//!   global pass adds the count left out;
//! - a stream destroyed at once (`aclrtDestroyStreamForce`) names the work still
//!   queued on it: launches on such a stream are kept;
//! - a stream used before its creation, created twice, or used after its destroy has
//!   findings on each use: only launches on a stream created once, after its creation
//!   and before its destroy (or its context's) are left out;
//! - a launch during a stream capture is a node of a graph: a file with any capture
//!   call keeps every launch, as does a rank while an HCCL batch is open;
//! - the analysis tries every order in which host threads that share a stream can
//!   issue their calls: only launches on an ACL stream that the calls of one host
//!   thread alone name are left out (they keep their place among that thread's calls
//!   in every order; a CUDA blocking stream is ordered against every thread's legacy
//!   default stream).
//!
//! Every test is on the line's exact text: a line whose shape is anything other than
//! what a capture writes (a duplicate key, an escape, a field of an unexpected type, a
//! thread named by a string) is kept, and so is every line the reader would report.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::Value;
use syncguard_model::api::{self, ArgKind, Creates, Effect};

/// The first launches without memory of every host thread that are always kept: the
/// SG004 note shows the first and lists the next eight.
pub const KEPT_PER_THREAD: usize = 9;

/// A JSON object's fields in order, duplicates kept (so that they can be refused).
struct Plain(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Plain;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    fields.push((key, value));
                }
                Ok(Plain(fields))
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// What the reduction needs of one line.
#[derive(Default)]
struct Line {
    /// `(rank, thread, stream)` of a launch without memory in the exact shape a capture
    /// writes (it certainly becomes a kernel op on that thread, without findings).
    launch: Option<(i64, i64, String)>,
    /// The handles the line creates (through the API's output parameter), by rank; the
    /// bool: whether the call certainly succeeded (else the handle is not trusted).
    creates: Vec<(i64, String, bool, bool)>,
    /// Streams it destroys: (rank, handle, at once).
    destroys: Vec<(i64, String, bool)>,
    /// It destroys a context (ending every stream's interval on its rank).
    destroys_context: Option<i64>,
    /// +1 / -1: an HCCL batch opened or closed on `rank`.
    batch: Option<(i64, i64)>,
    /// The file cannot be reduced (a capture call, a thread named by a string, ...).
    poisons_file: bool,
    /// `(rank, thread)` and every string or number in its arguments: the handles it may
    /// touch.
    mentions: Option<(i64, i64, Vec<String>)>,
}

fn strict_int(value: &Value) -> Option<i64> {
    value.as_i64()
}

/// A handle as the reader keys it, when it is plainly written (a string without
/// surrounding blanks, not a default stream's name).
fn plain_handle(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.is_empty() && text.trim() == text => Some(text.clone()),
        _ => None,
    }
}

/// Any handle a line names, as the reader would key it (for creations: trimmed).
fn any_handle(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => vec![text.trim().to_string()],
        Value::Number(n) => vec![n.to_string()],
        Value::Array(items) => items.iter().flat_map(any_handle).collect(),
        _ => Vec::new(),
    }
}

/// Every string (trimmed) and number in a value, at any depth.
fn every_handle(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.trim().to_string()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|item| every_handle(item, out)),
        Value::Object(fields) => fields.values().for_each(|item| every_handle(item, out)),
        _ => {}
    }
}

const DEFAULT_STREAMS: &[&str] = &[
    "0",
    "0x0",
    "NULL",
    "null",
    "nullptr",
    "0x1",
    "0x2",
    "cudaStreamLegacy",
    "cudaStreamPerThread",
];

fn parse_line(text: &[u8], capture: bool, world_size: Option<i64>) -> Line {
    let mut line = Line::default();
    let Ok(Plain(fields)) = serde_json::from_slice::<Plain>(text) else {
        return line;
    };
    let get = |name: &str| fields.iter().find(|(key, _)| key == name).map(|(_, value)| value);
    // Header or closing lines, and lines of no API, are only kept.
    let Some(Value::String(api_name)) = get("api") else {
        return line;
    };
    if api_name.contains("Capture") {
        line.poisons_file = true;
    }
    let rank = match get("rank") {
        None => Some(0),
        Some(value) if !capture => strict_int(value).filter(|&r| r >= 0 && world_size.is_none_or(|w| r < w)),
        Some(_) => {
            // A rank file's line naming its own rank: merging adds another.
            line.poisons_file = true;
            None
        }
    };
    let Some(rank) = rank else {
        line.poisons_file = true;
        return line;
    };
    let thread = match get("thread") {
        None | Some(Value::Null) => Some(0),
        Some(value) => strict_int(value),
    };
    let Some(thread) = thread else {
        line.poisons_file = true;
        return line;
    };
    let Some(api) = api::lookup(api_name) else {
        return line;
    };
    let args = args_of(text);
    let ret = get("ret");
    let certainly_ok = matches!(ret, None | Some(Value::Null)) || ret.and_then(strict_int) == Some(0);
    let certainly_failed = ret.and_then(strict_int).is_some_and(|r| r != 0);
    if api.name.starts_with("HcommBatchMode") {
        line.batch = Some((rank, if api.name.ends_with("Start") { 1 } else { -1 }));
    }
    let Some(args) = args else {
        return line;
    };
    let arg = |name: &str| args.iter().find(|(key, _)| key == name).map(|(_, value)| value);
    let mut mentioned = Vec::new();
    for (_, value) in &args {
        every_handle(value, &mut mentioned);
    }
    line.mentions = Some((rank, thread, mentioned));
    if api.creates != Creates::Nothing && !api.output.is_empty() && !certainly_failed {
        // An ACL stream: CUDA's blocking streams are ordered against the legacy default
        // stream of every thread, so their work is reordered between threads.
        let acl_stream = api.creates == Creates::Stream && api.name.starts_with("aclrt");
        for handle in arg(api.output).map(any_handle).unwrap_or_default() {
            line.creates.push((rank, handle, acl_stream, certainly_ok));
        }
    }
    if api.effect == Effect::Destroy {
        for param in api.params {
            match param.kind {
                ArgKind::Stream => {
                    for handle in arg(param.name).map(any_handle).unwrap_or_default() {
                        line.destroys.push((rank, handle, api.releases_at_once));
                    }
                }
                ArgKind::Context => line.destroys_context = Some(rank),
                _ => {}
            }
        }
    }
    // A launch without memory, written exactly as a capture writes it.
    if api.effect != Effect::Kernel || api.name == "kernel" || !certainly_ok {
        return line;
    }
    let fields_ok = fields.iter().all(|(key, _)| {
        matches!(
            key.as_str(),
            "rank" | "thread" | "api" | "args" | "ret" | "ts" | "loc" | "caller"
        )
    }) && distinct(fields.iter().map(|(key, _)| key.as_str()));
    let ts_ok = get("ts").is_some_and(|ts| ts.as_u64().is_some());
    if !fields_ok || !ts_ok || text.contains(&b'\\') || !distinct(args.iter().map(|(key, _)| key.as_str())) {
        return line;
    }
    let mut stream = None;
    for (key, value) in &args {
        let Some(param) = api.params.iter().find(|param| param.name == key) else {
            return line;
        };
        let fine = match param.kind {
            ArgKind::Int => strict_int(value).is_some(),
            ArgKind::Opaque | ArgKind::Function => true,
            ArgKind::Stream => {
                stream = plain_handle(value).filter(|handle| !DEFAULT_STREAMS.contains(&handle.as_str()));
                stream.is_some()
            }
            // `reads`, `writes`: a launch with memory is always kept.
            _ => false,
        };
        if !fine {
            return line;
        }
    }
    let all_given = api
        .params
        .iter()
        .filter(|param| !param.optional)
        .all(|param| arg(param.name).is_some());
    if let (true, Some(stream)) = (all_given, stream) {
        line.launch = Some((rank, thread, stream));
    }
    line
}

fn distinct<'a>(keys: impl Iterator<Item = &'a str>) -> bool {
    let mut seen: Vec<&str> = keys.collect();
    let len = seen.len();
    seen.sort_unstable();
    seen.dedup();
    seen.len() == len
}

/// The `args` object of a line, its fields in order with duplicates.
fn args_of(text: &[u8]) -> Option<Vec<(String, Value)>> {
    #[derive(Deserialize)]
    struct OnlyArgs {
        args: Option<Plain>,
    }
    // Unknown fields are ignored; a duplicate `args` is an error, and nothing is left out.
    serde_json::from_slice::<OnlyArgs>(text)
        .ok()?
        .args
        .map(|Plain(fields)| fields)
}

/// Which of `lines` (one file's calls in the rank's order: a rank file's calls sorted
/// by merge key, or an ordinary trace's lines in file order) can be left out.
/// `capture`: the lines are a rank file's (merging adds their rank).
/// `world_size`: what an ordinary trace's header says (a line of a rank at or past it
/// is reported, so never left out).
pub fn droppable(lines: &[&[u8]], capture: bool, world_size: Option<i64>) -> Vec<bool> {
    let parsed: Vec<Line> = lines.iter().map(|line| parse_line(line, capture, world_size)).collect();
    let mut out = vec![false; lines.len()];
    if parsed.iter().any(|line| line.poisons_file) {
        return out;
    }
    // Each stream's creations, destroys and whether it may be released at once.
    #[derive(Default)]
    struct Stream {
        creations: usize,
        trusted: bool,
        /// The host threads whose calls name it: work on a stream of one thread keeps
        /// its place among that thread's calls in every issue order the analysis tries.
        threads: Vec<i64>,
        created_at: usize,
        ends_at: Option<usize>,
        at_once: bool,
    }
    let mut streams: HashMap<(i64, String), Stream> = HashMap::new();
    let mut context_destroyed: HashMap<i64, usize> = HashMap::new();
    for (index, line) in parsed.iter().enumerate() {
        for (rank, handle, is_stream, ok) in &line.creates {
            let stream = streams.entry((*rank, handle.clone())).or_default();
            stream.creations += 1;
            stream.trusted = *is_stream && *ok && stream.creations == 1;
            stream.created_at = index;
        }
        for (rank, handle, at_once) in &line.destroys {
            let stream = streams.entry((*rank, handle.clone())).or_default();
            stream.ends_at.get_or_insert(index);
            stream.at_once |= at_once;
        }
        if let Some(rank) = line.destroys_context {
            context_destroyed.entry(rank).or_insert(index);
        }
        if let Some((rank, thread, mentioned)) = &line.mentions {
            for handle in mentioned {
                if let Some(stream) = streams.get_mut(&(*rank, handle.clone()))
                    && !stream.threads.contains(thread)
                {
                    stream.threads.push(*thread);
                }
            }
        }
    }
    // A handle named before its creation line: count that thread too.
    for (index, line) in parsed.iter().enumerate() {
        let Some((rank, thread, mentioned)) = &line.mentions else {
            continue;
        };
        for handle in mentioned {
            if let Some(stream) = streams.get_mut(&(*rank, handle.clone()))
                && index < stream.created_at
                && !stream.threads.contains(thread)
            {
                stream.threads.push(*thread);
            }
        }
    }
    let mut launches: HashMap<(i64, i64), usize> = HashMap::new();
    let mut batches: HashMap<i64, i64> = HashMap::new();
    let eligible: Vec<bool> = parsed
        .iter()
        .enumerate()
        .map(|(index, line)| {
            if let Some((rank, change)) = line.batch {
                *batches.entry(rank).or_default() += change;
            }
            let Some((rank, thread, handle)) = &line.launch else {
                return false;
            };
            let count = launches.entry((*rank, *thread)).or_default();
            *count += 1;
            let live = streams.get(&(*rank, handle.clone())).is_some_and(|s| {
                s.creations == 1
                    && s.trusted
                    && s.threads.len() == 1
                    && !s.at_once
                    && s.created_at < index
                    && s.ends_at.is_none_or(|end| index < end)
            });
            let context_live = context_destroyed.get(rank).is_none_or(|&end| index < end);
            let no_batch = batches.values().all(|&open| open == 0);
            *count > KEPT_PER_THREAD && live && context_live && no_batch
        })
        .collect();
    let mut index = 0;
    while index < lines.len() {
        if !eligible[index] {
            index += 1;
            continue;
        }
        let key = parsed[index].launch.as_ref();
        let mut end = index + 1;
        while end < lines.len() && eligible[end] && parsed[end].launch.as_ref() == key {
            end += 1;
        }
        // Keep the run's first and last launch; leave out those between.
        for drop in out.iter_mut().take(end.saturating_sub(1)).skip(index + 1) {
            *drop = true;
        }
        index = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(thread: i64, stream: &str, ts: u64) -> String {
        format!(
            r#"{{"thread": {thread}, "api": "aclrtLaunchKernel", "args": {{"funcHandle": "0xf", "numBlocks": 8, "argsData": "0x9", "argsSize": 64, "stream": "{stream}"}}, "ret": 0, "ts": {ts}}}"#
        )
    }

    fn create(stream: &str) -> String {
        format!(r#"{{"thread": 1, "api": "aclrtCreateStream", "args": {{"stream": "{stream}"}}, "ret": 0, "ts": 1}}"#)
    }

    fn reduce(lines: &[String]) -> Vec<bool> {
        let lines: Vec<&[u8]> = lines.iter().map(|line| line.as_bytes()).collect();
        droppable(&lines, true, None)
    }

    #[test]
    fn the_inside_of_a_long_run_is_left_out() {
        let mut lines = vec![create("0xa")];
        lines.extend((0..20).map(|i| launch(1, "0xa", 10 + i)));
        let dropped = reduce(&lines);
        // The create and the first nine launches, then the run's first and last.
        let kept: Vec<usize> = (0..lines.len()).filter(|&i| !dropped[i]).collect();
        assert_eq!(kept, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20]);
    }

    #[test]
    fn anything_between_ends_the_run() {
        let mut lines = vec![create("0xa"), create("0xb")];
        lines.extend((0..12).map(|i| launch(1, "0xa", 10 + i)));
        lines.extend((0..12).map(|i| launch(1, "0xb", 30 + i)));
        lines.extend((0..12).map(|i| launch(2, "0xb", 50 + i)));
        let dropped = reduce(&lines);
        // Thread 1: nine kept, then a run of three on 0xa; 0xb is named by two threads,
        // whose launches on it the analysis reorders: all kept.
        assert_eq!(dropped.iter().filter(|&&d| d).count(), 1);
    }

    #[test]
    fn unusual_lines_and_streams_are_kept() {
        let mut lines = vec![create("0xa")];
        lines.extend((0..20).map(|i| launch(1, "0xa", 10 + i)));
        // A force destroy anywhere keeps every launch on the stream.
        let mut forced = lines.clone();
        forced.push(r#"{"thread": 1, "api": "aclrtDestroyStreamForce", "args": {"stream": "0xa"}}"#.into());
        assert!(!reduce(&forced).contains(&true));
        // A capture call keeps the whole file.
        let mut captured = lines.clone();
        captured.push(r#"{"thread": 1, "api": "cudaStreamBeginCapture", "args": {"stream": "0xa", "mode": 0}}"#.into());
        assert!(!reduce(&captured).contains(&true));
        // A stream never created, or created twice.
        assert!(!reduce(&lines[1..]).contains(&true));
        let mut twice = lines.clone();
        twice.push(create("0xa"));
        assert!(!reduce(&twice).contains(&true));
        // A duplicate key, an escape, a failed call, a read list.
        for odd in [
            launch(1, "0xa", 5).replace("\"ret\": 0", "\"ret\": 0, \"ret\": 1"),
            launch(1, "0xa", 5).replace("0xf", "0x\\u0066"),
            launch(1, "0xa", 5).replace("\"ret\": 0", "\"ret\": 7"),
            launch(1, "0xa", 5).replace("\"argsSize\": 64", "\"argsSize\": 64, \"reads\": []"),
        ] {
            let mut with = lines.clone();
            with[15] = odd;
            let dropped = reduce(&with);
            assert!(!dropped[14] && !dropped[15] && !dropped[16], "around {}", with[15]);
        }
    }
}
