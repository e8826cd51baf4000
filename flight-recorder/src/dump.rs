//! One rank's dump: recognized by its content, read from pickle or JSON into [`Dump`].
//! The fields and where PyTorch writes them are listed in docs/FLIGHT_RECORDER.md.

use std::ops::Range;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::value::Tree;

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
    let has = |needle: &[u8]| memchr::memmem::find(head, needle).is_some();
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

/// A string of a dump (an operation, a group, a dtype), kept once per dump and shared
/// by the entries that hold it: a dump repeats a handful of them thousands of times.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(Arc::from(text))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The shapes of an entry's tensors (`[[8, 1024]]`), kept once per dump like [`Text`].
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Sizes(Arc<[Vec<i64>]>);

impl std::ops::Deref for Sizes {
    type Target = [Vec<i64>];

    fn deref(&self) -> &[Vec<i64>] {
        &self.0
    }
}

impl PartialEq<Vec<Vec<i64>>> for Sizes {
    fn eq(&self, other: &Vec<Vec<i64>>) -> bool {
        *self.0 == **other
    }
}

impl std::fmt::Debug for Sizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

/// One recorded collective or point-to-point operation. Its strings, shapes and stack
/// are shared with the dump's other entries that hold the same ones.
#[derive(Clone, Debug)]
pub struct Entry {
    pub record_id: u64,
    pub pg_name: Text,
    pub pg_desc: Text,
    pub collective_seq_id: u64,
    pub p2p_seq_id: u64,
    pub is_p2p: bool,
    /// `nccl:all_reduce`, `nccl:send 0->1`.
    pub profiling_name: Text,
    pub input_sizes: Sizes,
    pub input_dtypes: Arc<[Text]>,
    pub output_sizes: Sizes,
    pub output_dtypes: Arc<[Text]>,
    pub state: State,
    /// The watchdog gave up on it: retired while not completed means it timed out.
    pub retired: bool,
    pub timeout_ms: Option<i64>,
    /// Python stack, innermost first (pickle dumps only: JSON dumps have none); shared
    /// by the entries of one dump with the same stack.
    pub frames: Arc<[Frame]>,
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
        Some(Format::Pickle) => read_pickle(bytes),
        Some(Format::Json) => read_json(bytes),
        None if bytes.first() == Some(&0x80) => {
            // A pickle the reader refuses says why; one it reads that is no dump, so.
            crate::pickle::parse_with(bytes, |root| from_tree(root, &[]))?
                .map_err(|e| format!("{e} (is this a Flight Recorder dump?)"))
        }
        None => read_json(bytes),
    }
}

/// Read in place from the pickle reader's arena: no [`crate::value::Value`] tree.
fn read_pickle(bytes: &[u8]) -> Result<Dump, String> {
    crate::pickle::parse_with(bytes, |root| from_tree(root, &[]))?
}

fn read_json(bytes: &[u8]) -> Result<Dump, String> {
    let json = crate::json::parse(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
    from_tree(json.root(), &entry_spans(bytes))
}

/// The byte range of each element of the top-level object's `entries` array, found
/// by one pass over the text (strings and nesting followed, nothing recursive).
pub fn entry_spans(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut last_key: Option<(usize, usize)> = None;
    let mut entries_next = false;
    let mut entries_depth = None;
    let mut element_start = None;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                // A string ends at the next quote not escaped (a backslash escapes the
                // byte after it); the bytes between are skipped, not looked at one by one.
                let start = i + 1;
                let mut at = start;
                let end = loop {
                    let Some(rest) = bytes.get(at..) else { break None };
                    match memchr::memchr2(b'"', b'\\', rest) {
                        Some(offset) if rest[offset] == b'\\' => at += offset + 2,
                        Some(offset) => break Some(at + offset),
                        None => break None,
                    }
                };
                // Unterminated: nothing after it is structure.
                let Some(end) = end else { break };
                if depth == 1 {
                    last_key = Some((start, end));
                }
                i = end + 1;
                continue;
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
        i += 1;
    }
    spans
}

/// The dump held by `root`; `spans` are the byte ranges of its entries (JSON), used
/// when there is one per entry.
fn from_tree<'a>(root: impl Tree<'a>, spans: &[Range<usize>]) -> Result<Dump, String> {
    if !root.is_dict() {
        return Err("the dump is not a dict".to_string());
    }
    let version = match root.get("version") {
        Some(v) => match v.as_str() {
            Some(text) => text.to_string(),
            None => v.as_i64().map(|v| v.to_string()).unwrap_or_default(),
        },
        None if root.get("entries").is_some() => String::new(),
        None => return Err("the dump has neither `version` nor `entries`".to_string()),
    };
    let rank = root
        .get("rank")
        .and_then(Tree::as_i64)
        .and_then(|r| u32::try_from(r).ok());
    let groups = root
        .get("pg_config")
        .map(|config| {
            config
                .entries()
                .map(|(key, info)| GroupConfig {
                    name: info.get("name").and_then(Tree::as_str).unwrap_or(key).to_string(),
                    desc: info.get("desc").and_then(Tree::as_str).unwrap_or_default().to_string(),
                    ranks: info.get("ranks").and_then(ranks),
                })
                .collect()
        })
        .unwrap_or_default();
    let entries = match root.get("entries") {
        None => Vec::new(),
        Some(list) if list.is_none() => Vec::new(),
        Some(list) => {
            let Some(items) = list.as_list() else {
                return Err("`entries` is not a list".to_string());
            };
            let spans = (spans.len() == items.len()).then_some(spans);
            let mut shared = Shared::default();
            let mut entries = Vec::with_capacity(items.len());
            for (i, item) in items.enumerate() {
                let span = spans.map_or(0..0, |spans| spans[i].clone());
                entries.push(entry(item, span, &mut shared).map_err(|e| format!("entry {i}: {e}"))?);
            }
            entries
        }
    };
    Ok(Dump {
        version,
        rank,
        groups,
        entries,
    })
}

/// `"[0, 1, 2]"` (how PyTorch writes them) or a list of integers.
fn ranks<'a>(value: impl Tree<'a>) -> Option<Vec<u32>> {
    if let Some(text) = value.as_str() {
        if text.len() < LONG_RANK_LIST {
            return ranks_text(text);
        }
        // The world's list, as long as the job is wide, is in every dump of the job: the
        // last one read on this thread is kept and compared before being read again.
        return LAST_LONG_RANK_LIST.with_borrow_mut(|last| match last {
            Some((seen, ranks)) if seen == text => ranks.clone(),
            _ => {
                let ranks = ranks_text(text);
                *last = Some((text.to_string(), ranks.clone()));
                ranks
            }
        });
    }
    value
        .as_list()?
        .map(|r| r.as_i64().and_then(|r| u32::try_from(r).ok()))
        .collect()
}

/// A rank list written this long (some 800 ranks and more) is kept for the next dump.
const LONG_RANK_LIST: usize = 4096;

thread_local! {
    static LAST_LONG_RANK_LIST: std::cell::RefCell<Option<(String, Option<Vec<u32>>)>> =
        const { std::cell::RefCell::new(None) };
}

/// `"[0, 1, 2]"`.
fn ranks_text(text: &str) -> Option<Vec<u32>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    rank_list(inner).or_else(|| inner.split(',').map(|r| r.trim().parse().ok()).collect())
}

/// The common shape of a rank list's inside, `0, 1, 2` (digits, commas, spaces), read
/// in one pass: the world's list is as long as the job is wide, in every dump. `None`
/// for anything else, which the general reading then decides.
fn rank_list(inner: &str) -> Option<Vec<u32>> {
    let bytes = inner.as_bytes();
    let mut ranks = Vec::with_capacity(memchr::memchr_iter(b',', bytes).count() + 1);
    // Each piece: spaces, 1 to 9 digits, spaces (what `trim` and `parse` surely read
    // alike), in one pass.
    let (mut rank, mut digits, mut after_digits) = (0u32, 0, false);
    for &b in bytes {
        match b {
            b'0'..=b'9' if !after_digits && digits < 9 => {
                rank = rank * 10 + u32::from(b - b'0');
                digits += 1;
            }
            b' ' => after_digits = digits > 0,
            b',' if digits > 0 => {
                ranks.push(rank);
                (rank, digits, after_digits) = (0, 0, false);
            }
            _ => return None,
        }
    }
    (digits > 0).then(|| {
        ranks.push(rank);
        ranks
    })
}

/// What the entries of one dump share: each distinct string, shape list, dtype list and
/// Python stack is built once and handed out again, found by its content (borrowed from
/// the parsed dump: a lookup builds nothing).
#[derive(Default)]
struct Shared<'a> {
    texts: FxHashMap<&'a str, Text>,
    /// Shape lists by their flattened form: each shape's length, then its dimensions.
    sizes: FxHashMap<Vec<i64>, Sizes>,
    dtypes: FxHashMap<Vec<&'a str>, Arc<[Text]>>,
    stacks: Stacks<'a>,
    flat_sizes: Vec<i64>,
    dtype_key: Vec<&'a str>,
}

impl<'a> Shared<'a> {
    fn text(&mut self, text: &'a str) -> Text {
        self.texts.entry(text).or_insert_with(|| Text::from(text)).clone()
    }

    /// A list of shapes: `[[8, 1024], [4]]`; a shape that is not a list is empty, a
    /// dimension that is not an integer is left out.
    fn sizes(&mut self, value: Option<impl Tree<'a>>) -> Sizes {
        let mut flat = std::mem::take(&mut self.flat_sizes);
        flat.clear();
        for dims in value.and_then(Tree::as_list).into_iter().flatten() {
            let at = flat.len();
            flat.push(0);
            flat.extend(dims.as_list().into_iter().flatten().filter_map(Tree::as_i64));
            flat[at] = (flat.len() - at - 1) as i64;
        }
        let sizes = match self.sizes.get(flat.as_slice()) {
            Some(sizes) => sizes.clone(),
            None => {
                let mut shapes = Vec::new();
                let mut rest = flat.as_slice();
                while let Some((&len, after)) = rest.split_first() {
                    let (dims, after) = after.split_at(len as usize);
                    shapes.push(dims.to_vec());
                    rest = after;
                }
                let sizes = Sizes(Arc::from(shapes));
                self.sizes.insert(flat.clone(), sizes.clone());
                sizes
            }
        };
        self.flat_sizes = flat;
        sizes
    }

    /// A list of strings (what is not a string is left out).
    fn dtypes(&mut self, value: Option<impl Tree<'a>>) -> Arc<[Text]> {
        let mut key = std::mem::take(&mut self.dtype_key);
        key.clear();
        key.extend(
            value
                .and_then(Tree::as_list)
                .into_iter()
                .flatten()
                .filter_map(Tree::as_str),
        );
        let dtypes = match self.dtypes.get(key.as_slice()) {
            Some(dtypes) => dtypes.clone(),
            None => {
                let dtypes: Arc<[Text]> = key.iter().map(|&dtype| self.text(dtype)).collect();
                self.dtypes.insert(key.clone(), dtypes.clone());
                dtypes
            }
        };
        self.dtype_key = key;
        dtypes
    }
}

/// The Python stacks of one dump, each kept once: a dump repeats a few stacks over
/// thousands of entries (PyTorch's pickle even shares each frame's dict), and each
/// entry's stack is a handle on the one copy.
#[derive(Default)]
struct Stacks<'a> {
    /// A frame's dict, by its identity, as an index into `frames`.
    by_identity: FxHashMap<usize, u32>,
    by_content: FxHashMap<(&'a str, &'a str, i64), u32>,
    frames: Vec<Frame>,
    /// A stack, as the indices of its frames.
    stacks: FxHashMap<Vec<u32>, Arc<[Frame]>>,
    key: Vec<u32>,
    empty: Option<Arc<[Frame]>>,
}

impl<'a> Stacks<'a> {
    fn frame(&mut self, value: impl Tree<'a>) -> u32 {
        let identity = value.identity();
        if let Some(index) = identity.and_then(|id| self.by_identity.get(&id)) {
            return *index;
        }
        let content = (
            value.get("name").and_then(Tree::as_str).unwrap_or_default(),
            value.get("filename").and_then(Tree::as_str).unwrap_or_default(),
            value.get("line").and_then(Tree::as_i64).unwrap_or(0),
        );
        let index = *self.by_content.entry(content).or_insert_with(|| {
            self.frames.push(Frame {
                name: content.0.to_string(),
                filename: content.1.to_string(),
                line: content.2,
            });
            self.frames.len() as u32 - 1
        });
        if let Some(id) = identity {
            self.by_identity.insert(id, index);
        }
        index
    }

    fn stack(&mut self, frames: Option<impl ExactSizeIterator<Item = impl Tree<'a>>>) -> Arc<[Frame]> {
        let Some(frames) = frames.filter(|frames| frames.len() > 0) else {
            return self.empty.get_or_insert_with(|| Arc::from(Vec::new())).clone();
        };
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.extend(frames.map(|frame| self.frame(frame)));
        let stack = match self.stacks.get(key.as_slice()) {
            Some(stack) => stack.clone(),
            None => {
                let stack: Arc<[Frame]> = key.iter().map(|&i| self.frames[i as usize].clone()).collect();
                self.stacks.insert(key.clone(), stack.clone());
                stack
            }
        };
        self.key = key;
        stack
    }
}

/// The fields of an entry that are read, each what [`Tree::get`] gives for its key:
/// found in one pass over the entry's keys rather than one search per field.
struct EntryFields<T> {
    record_id: Option<T>,
    process_group: Option<T>,
    pg_id: Option<T>,
    collective_seq_id: Option<T>,
    p2p_seq_id: Option<T>,
    is_p2p: Option<T>,
    profiling_name: Option<T>,
    input_sizes: Option<T>,
    input_dtypes: Option<T>,
    output_sizes: Option<T>,
    output_dtypes: Option<T>,
    state: Option<T>,
    retired: Option<T>,
    timeout_ms: Option<T>,
    frames: Option<T>,
}

impl<'a, T: Tree<'a>> EntryFields<T> {
    fn of(item: T) -> Self {
        let mut fields = EntryFields {
            record_id: None,
            process_group: None,
            pg_id: None,
            collective_seq_id: None,
            p2p_seq_id: None,
            is_p2p: None,
            profiling_name: None,
            input_sizes: None,
            input_dtypes: None,
            output_sizes: None,
            output_dtypes: None,
            state: None,
            retired: None,
            timeout_ms: None,
            frames: None,
        };
        for (key, value) in item.pairs_in_order() {
            let slot = match key {
                "record_id" => &mut fields.record_id,
                "process_group" => &mut fields.process_group,
                "pg_id" => &mut fields.pg_id,
                "collective_seq_id" => &mut fields.collective_seq_id,
                "p2p_seq_id" => &mut fields.p2p_seq_id,
                "is_p2p" => &mut fields.is_p2p,
                "profiling_name" => &mut fields.profiling_name,
                "input_sizes" => &mut fields.input_sizes,
                "input_dtypes" => &mut fields.input_dtypes,
                "output_sizes" => &mut fields.output_sizes,
                "output_dtypes" => &mut fields.output_dtypes,
                "state" => &mut fields.state,
                "retired" => &mut fields.retired,
                "timeout_ms" => &mut fields.timeout_ms,
                "frames" => &mut fields.frames,
                _ => continue,
            };
            if T::LATER_KEYS_WIN || slot.is_none() {
                *slot = Some(value);
            }
        }
        fields
    }
}

fn entry<'a, T: Tree<'a>>(item: T, span: Range<usize>, shared: &mut Shared<'a>) -> Result<Entry, String> {
    let fields = EntryFields::of(item);
    let int = |value: Option<T>, key: &str| -> Result<u64, String> {
        let value = value.ok_or_else(|| format!("no `{key}`"))?;
        value
            .as_i64()
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| format!("`{key}` is not a count"))
    };
    let profiling_name = fields
        .profiling_name
        .and_then(Tree::as_str)
        .ok_or("no `profiling_name`")?;
    let process_group = fields.process_group;
    let (pg_name, pg_desc) = match process_group.and_then(Tree::as_list) {
        Some(mut pair) => {
            let name = pair.next();
            let desc = pair.next();
            (
                shared.text(name.and_then(Tree::as_str).unwrap_or_default()),
                shared.text(desc.and_then(Tree::as_str).unwrap_or_default()),
            )
        }
        None => match process_group.and_then(Tree::as_str) {
            Some(name) => (shared.text(name), Text::default()),
            None => match fields.pg_id.and_then(Tree::as_i64) {
                Some(id) => (Text::from(id.to_string().as_str()), Text::default()),
                None => return Err("no `process_group`".to_string()),
            },
        },
    };
    let state = match fields.state.and_then(Tree::as_str) {
        Some("completed") => State::Completed,
        Some("started") => State::Started,
        Some("scheduled") => State::Scheduled,
        Some(other) => return Err(format!("unknown `state` `{other}`")),
        None => return Err("no `state`".to_string()),
    };
    let op = profiling_name.split_once(':').map_or(profiling_name, |(_, n)| n);
    let is_p2p = fields
        .is_p2p
        .and_then(Tree::as_bool)
        .unwrap_or(op.starts_with("send") || op.starts_with("recv"));
    let frames = shared.stacks.stack(fields.frames.and_then(Tree::as_list));
    Ok(Entry {
        record_id: int(fields.record_id, "record_id")?,
        pg_name,
        pg_desc,
        collective_seq_id: int(fields.collective_seq_id, "collective_seq_id")?,
        p2p_seq_id: int(fields.p2p_seq_id, "p2p_seq_id").unwrap_or(0),
        is_p2p,
        profiling_name: shared.text(profiling_name),
        input_sizes: shared.sizes(fields.input_sizes),
        input_dtypes: shared.dtypes(fields.input_dtypes),
        output_sizes: shared.sizes(fields.output_sizes),
        output_dtypes: shared.dtypes(fields.output_dtypes),
        state,
        retired: fields.retired.and_then(Tree::as_bool).unwrap_or(false),
        timeout_ms: fields.timeout_ms.and_then(Tree::as_i64),
        frames,
        span,
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
