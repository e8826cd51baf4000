//! One rank's dump: recognized by its content, read from pickle or JSON into [`Dump`].
//! The fields and where PyTorch writes them are listed in docs/FLIGHT_RECORDER.md.

use std::ops::Range;

use crate::value::Value;

/// How much of a file decides whether it is a dump: the keys that say so come first.
pub const SNIFF_BYTES: usize = 4096;

/// The largest dump read (a 20,000-entry buffer with stacks is a few tens of MiB).
pub const MAX_DUMP_BYTES: u64 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pickle,
    Json,
}

/// The format of a file whose first bytes are `head`, if it is a Flight Recorder dump:
/// a pickle (protocol 2 to 5) of a dict naming `version` and `pg_config` or `entries`,
/// or a JSON object naming `entries` with entry fields, or `pg_config` and `pg_status`.
pub fn sniff(head: &[u8]) -> Option<Format> {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    if let [0x80, 2..=5, ..] = head {
        return (has(b"version") && (has(b"pg_config") || has(b"entries"))).then_some(Format::Pickle);
    }
    let first = head.iter().position(|b| !b.is_ascii_whitespace())?;
    if head[first] != b'{' {
        return None;
    }
    let entry_fields = has(b"\"profiling_name\"") || has(b"\"collective_seq_id\"") || has(b"\"record_id\"");
    let config = has(b"\"pg_config\"") && (has(b"\"pg_status\"") || has(b"\"version\""));
    ((has(b"\"entries\"") && entry_fields) || config).then_some(Format::Json)
}

/// One rank's dump.
#[derive(Clone, Debug, Default)]
pub struct Dump {
    pub version: String,
    /// The `rank` field, where the writer added one (PyTorch's does not: the file
    /// name's trailing number is the rank, as `fr_trace` reads it).
    pub rank: Option<u32>,
    pub groups: Vec<GroupConfig>,
    /// In the order recorded.
    pub entries: Vec<Entry>,
}

/// A process group as `pg_config` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupConfig {
    pub name: String,
    pub desc: String,
    /// Global ranks; `None` when the dump does not say (or says it in a form not read).
    pub ranks: Option<Vec<u32>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Scheduled,
    Started,
    Completed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Scheduled => "scheduled",
            State::Started => "started",
            State::Completed => "completed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub name: String,
    pub filename: String,
    pub line: i64,
}

/// One recorded collective or point-to-point operation.
#[derive(Clone, Debug)]
pub struct Entry {
    pub record_id: u64,
    pub pg_name: String,
    pub pg_desc: String,
    pub collective_seq_id: u64,
    pub p2p_seq_id: u64,
    pub is_p2p: bool,
    /// `nccl:all_reduce`, `nccl:send 0->1`.
    pub profiling_name: String,
    pub input_sizes: Vec<Vec<i64>>,
    pub input_dtypes: Vec<String>,
    pub output_sizes: Vec<Vec<i64>>,
    pub output_dtypes: Vec<String>,
    pub state: State,
    /// The watchdog gave up on it: retired while not completed means it timed out.
    pub retired: bool,
    pub timeout_ms: Option<i64>,
    /// Python stack, innermost first (pickle dumps only: JSON dumps have none).
    pub frames: Vec<Frame>,
    /// The entry's bytes in its file (`0..0` for a pickle).
    pub span: Range<usize>,
}

impl Entry {
    /// The operation without the backend prefix or p2p peers: `all_reduce`, `send`.
    pub fn op(&self) -> &str {
        let name = self
            .profiling_name
            .split_once(':')
            .map_or(self.profiling_name.as_str(), |(_, n)| n);
        name.split(' ').next().unwrap_or(name)
    }
}

/// Read a dump of either format; the error says why it is not one.
pub fn read(bytes: &[u8]) -> Result<Dump, String> {
    match sniff(bytes) {
        Some(Format::Pickle) => from_value(&crate::pickle::read(bytes)?),
        Some(Format::Json) => read_json(bytes),
        None if bytes.first() == Some(&0x80) => {
            from_value(&crate::pickle::read(bytes)?).map_err(|e| format!("{e} (is this a Flight Recorder dump?)"))
        }
        None => read_json(bytes),
    }
}

fn read_json(bytes: &[u8]) -> Result<Dump, String> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
    let mut value = Value::from_json(&json);
    drop(json);
    let spans = entry_spans(bytes);
    if let Value::Dict(pairs, _) = &mut value
        && let Some((_, Value::List(entries))) = pairs.iter_mut().find(|(k, _)| k.as_str() == Some("entries"))
        && spans.len() == entries.len()
    {
        for (entry, span) in entries.iter_mut().zip(spans) {
            if let Value::Dict(_, range) = entry {
                *range = span;
            }
        }
    }
    from_value(&value)
}

/// The byte range of each element of the top-level object's `entries` array, found
/// by one pass over the text (strings and nesting followed, nothing recursive).
pub fn entry_spans(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0;
    let mut last_key: Option<(usize, usize)> = None;
    let mut entries_next = false;
    let mut entries_depth = None;
    let mut element_start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    if depth == 1 {
                        last_key = Some((string_start, i));
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i + 1;
            }
            b':' if depth == 1 => {
                entries_next = last_key.is_some_and(|(s, e)| &bytes[s..e] == b"entries");
            }
            b'{' | b'[' => {
                if b == b'[' && depth == 1 && entries_next {
                    entries_depth = Some(depth + 1);
                }
                if b == b'{' && Some(depth) == entries_depth {
                    element_start = Some(i);
                }
                depth += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if b == b'}'
                    && Some(depth) == entries_depth
                    && let Some(start) = element_start.take()
                {
                    spans.push(start..i + 1);
                }
                if b == b']' && Some(depth + 1) == entries_depth {
                    entries_depth = None;
                }
            }
            b',' if depth == 1 => {
                entries_next = false;
                last_key = None;
            }
            _ => {}
        }
    }
    spans
}

fn from_value(root: &Value) -> Result<Dump, String> {
    if !matches!(root, Value::Dict(..)) {
        return Err("the dump is not a dict".to_string());
    }
    let version = match root.get("version") {
        Some(Value::Str(v)) => v.clone(),
        Some(other) => other.as_i64().map(|v| v.to_string()).unwrap_or_default(),
        None if root.get("entries").is_some() => String::new(),
        None => return Err("the dump has neither `version` nor `entries`".to_string()),
    };
    let rank = root
        .get("rank")
        .and_then(Value::as_i64)
        .and_then(|r| u32::try_from(r).ok());
    let groups = root
        .get("pg_config")
        .map(|config| {
            config
                .entries()
                .map(|(key, info)| GroupConfig {
                    name: info.get("name").and_then(Value::as_str).unwrap_or(key).to_string(),
                    desc: info.get("desc").and_then(Value::as_str).unwrap_or_default().to_string(),
                    ranks: info.get("ranks").and_then(ranks),
                })
                .collect()
        })
        .unwrap_or_default();
    let entries = match root.get("entries") {
        None | Some(Value::None) => Vec::new(),
        Some(Value::List(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| entry(item).map_err(|e| format!("entry {i}: {e}")))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`entries` is not a list".to_string()),
    };
    Ok(Dump {
        version,
        rank,
        groups,
        entries,
    })
}

/// `"[0, 1, 2]"` (how PyTorch writes them) or a list of integers.
fn ranks(value: &Value) -> Option<Vec<u32>> {
    match value {
        Value::Str(text) => {
            let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
            if inner.trim().is_empty() {
                return Some(Vec::new());
            }
            inner.split(',').map(|r| r.trim().parse().ok()).collect()
        }
        Value::List(items) => items
            .iter()
            .map(|r| r.as_i64().and_then(|r| u32::try_from(r).ok()))
            .collect(),
        _ => None,
    }
}

fn sizes(value: Option<&Value>) -> Vec<Vec<i64>> {
    value
        .and_then(Value::as_list)
        .map(|list| {
            list.iter()
                .map(|dims| {
                    dims.as_list()
                        .map(|dims| dims.iter().filter_map(Value::as_i64).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_list)
        .map(|list| list.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn entry(item: &Value) -> Result<Entry, String> {
    let int = |key: &str| -> Result<u64, String> {
        let value = item.get(key).ok_or_else(|| format!("no `{key}`"))?;
        value
            .as_i64()
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| format!("`{key}` is not a count"))
    };
    let profiling_name = item
        .get("profiling_name")
        .and_then(Value::as_str)
        .ok_or("no `profiling_name`")?
        .to_string();
    let (pg_name, pg_desc) = match item.get("process_group") {
        Some(Value::List(pair)) => (
            pair.first().and_then(Value::as_str).unwrap_or_default().to_string(),
            pair.get(1).and_then(Value::as_str).unwrap_or_default().to_string(),
        ),
        Some(Value::Str(name)) => (name.clone(), String::new()),
        _ => match item.get("pg_id").and_then(Value::as_i64) {
            Some(id) => (id.to_string(), String::new()),
            None => return Err("no `process_group`".to_string()),
        },
    };
    let state = match item.get("state").and_then(Value::as_str) {
        Some("completed") => State::Completed,
        Some("started") => State::Started,
        Some("scheduled") => State::Scheduled,
        Some(other) => return Err(format!("unknown `state` `{other}`")),
        None => return Err("no `state`".to_string()),
    };
    let op = profiling_name
        .split_once(':')
        .map_or(profiling_name.as_str(), |(_, n)| n);
    let is_p2p = item
        .get("is_p2p")
        .and_then(Value::as_bool)
        .unwrap_or(op.starts_with("send") || op.starts_with("recv"));
    let frames = item
        .get("frames")
        .and_then(Value::as_list)
        .map(|frames| {
            frames
                .iter()
                .map(|f| Frame {
                    name: f.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                    filename: f
                        .get("filename")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    line: f.get("line").and_then(Value::as_i64).unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Entry {
        record_id: int("record_id")?,
        pg_name,
        pg_desc,
        collective_seq_id: int("collective_seq_id")?,
        p2p_seq_id: int("p2p_seq_id").unwrap_or(0),
        is_p2p,
        profiling_name,
        input_sizes: sizes(item.get("input_sizes")),
        input_dtypes: strings(item.get("input_dtypes")),
        output_sizes: sizes(item.get("output_sizes")),
        output_dtypes: strings(item.get("output_dtypes")),
        state,
        retired: item.get("retired").and_then(Value::as_bool).unwrap_or(false),
        timeout_ms: item.get("timeout_ms").and_then(Value::as_i64),
        frames,
        span: item.span(),
    })
}

/// The rank a file name ends in (`nccl_trace_rank_3`, `rank_3.json`): what `fr_trace`
/// reads the rank from.
pub fn rank_from_file_name(name: &str) -> Option<u32> {
    let stem = name
        .strip_suffix(".json")
        .or_else(|| name.strip_suffix(".pkl"))
        .or_else(|| name.strip_suffix(".pickle"))
        .unwrap_or(name);
    let digits: String = stem
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    digits.parse().ok()
}
