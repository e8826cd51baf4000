//! A small, bounded reader of the pickle opcodes Flight Recorder dumps use.
//!
//! PyTorch writes its dump with the TorchScript pickler (`torch::jit::Pickler`,
//! protocol 2: `EMPTY_DICT`/`SETITEMS`, `EMPTY_LIST`/`APPENDS`, `TUPLE*`,
//! `BINUNICODE`, `BININT*`/`LONG1`, `BINFLOAT`, `NEWTRUE`/`NEWFALSE`, `NONE`, memo
//! `BINPUT`/`BINGET` for shared values, `GLOBAL torch.jit._pickle build_*list` +
//! `REDUCE` for typed lists); Python's `pickle` (protocols 2 to 5) adds `FRAME`,
//! `MEMOIZE`, `SHORT_BINUNICODE` and friends. Those are read; anything else (code
//! objects, protocol 0/1 text opcodes) is an error naming the opcode and its offset.
//!
//! Never crashes, hangs or blows up: values live in an arena (a memo reference is an
//! index, never a copy, so a value shared a million times costs one slot), the arena
//! grows by at most one slot per opcode, and turning it into a [`Value`] tree is
//! bounded in depth ([`MAX_DEPTH`]) and in nodes ([`MAX_NODES`]), which also stops a
//! list that contains itself. A dump is read with `parse_with`, which applies the same
//! bounds to the arena and hands over its values where they are, instead of a copy.

use rustc_hash::FxHashMap;
use smallvec::{SmallVec, smallvec};

use crate::value::{Scalar, Tree, Value};

/// Nesting deeper than this is refused (a dump nests about 6 deep).
pub const MAX_DEPTH: usize = 64;
/// Values built when the arena becomes a tree (shared values count once per use).
pub const MAX_NODES: usize = 32_000_000;

/// A list's or tuple's items: a dump's shapes, dtypes and group pairs fit without a
/// heap block of their own.
type Items = SmallVec<[u32; 4]>;
type Pairs = SmallVec<[(u32, u32); 2]>;

#[derive(Clone, Debug)]
enum Node {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Bytes, a persistent id, an object built from a class: kept as an opaque value.
    Opaque(&'static str),
    List(Items),
    Tuple(Items),
    Dict(Pairs),
    /// Module and name (boxed: rare, and the arena holds one node per value).
    Global(Box<(String, String)>),
}

struct Machine<'a> {
    bytes: &'a [u8],
    pos: usize,
    arena: Vec<Node>,
    stack: Vec<u32>,
    marks: Vec<usize>,
    memo: Memo,
}

/// The memo: keys a pickler numbers from 0 (every dump's) in a vector, any other key in
/// a map; each key has one place, so the count of keys (`MEMOIZE` uses it) is exact.
#[derive(Default)]
struct Memo {
    /// By key; `u32::MAX` where none is stored.
    dense: Vec<u32>,
    stored_dense: usize,
    sparse: FxHashMap<u64, u32>,
}

impl Memo {
    /// Keys below this live in `dense` (at most 4 MiB of it, whatever a pickle says).
    const DENSE_KEYS: u64 = 1 << 20;

    fn insert(&mut self, key: u64, value: u32) {
        if key < Self::DENSE_KEYS {
            let key = key as usize;
            if key >= self.dense.len() {
                self.dense.resize(key + 1, u32::MAX);
            }
            if self.dense[key] == u32::MAX {
                self.stored_dense += 1;
            }
            self.dense[key] = value;
        } else {
            self.sparse.insert(key, value);
        }
    }

    fn get(&self, key: u64) -> Option<u32> {
        if key < Self::DENSE_KEYS {
            self.dense.get(key as usize).copied().filter(|&value| value != u32::MAX)
        } else {
            self.sparse.get(&key).copied()
        }
    }

    fn len(&self) -> usize {
        self.stored_dense + self.sparse.len()
    }
}

impl<'a> Machine<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self::with_buffers(bytes, Buffers::default())
    }

    fn with_buffers(bytes: &'a [u8], buffers: Buffers) -> Self {
        let Buffers {
            mut arena,
            stack,
            marks,
            memo,
            ..
        } = buffers;
        // A dump's pickle holds a value per 10 bytes or so: room for them at once.
        arena.reserve(bytes.len() / 8);
        Machine {
            bytes,
            pos: 0,
            arena,
            stack,
            marks,
            memo,
        }
    }
}

/// The buffers one reading needs, kept by each thread for its next pickle: a folder's
/// dumps are read one after another on each core, and buffers the size of a dump, made
/// and freed for each, cost page faults (and the kernel's flushes when they go back).
#[derive(Default)]
struct Buffers {
    arena: Vec<Node>,
    stack: Vec<u32>,
    marks: Vec<usize>,
    memo: Memo,
    walked: Vec<(u32, u8)>,
}

impl Buffers {
    /// Buffers this large (a dump of hundreds of MiB) are freed, not kept.
    const MAX_KEPT_VALUES: usize = 1 << 20;

    /// Emptied, keeping their room, when they are not too large to keep.
    fn kept(mut self) -> Option<Self> {
        if self.arena.capacity() > Self::MAX_KEPT_VALUES || self.memo.dense.capacity() > Self::MAX_KEPT_VALUES {
            return None;
        }
        self.arena.clear();
        self.stack.clear();
        self.marks.clear();
        self.memo.dense.clear();
        self.memo.stored_dense = 0;
        self.memo.sparse.clear();
        self.walked.clear();
        Some(self)
    }
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

/// Read one pickle; the error says what is wrong and at which byte.
pub fn read(bytes: &[u8]) -> Result<Value, String> {
    let mut machine = Machine::new(bytes);
    let root = machine.run()?;
    let mut budget = MAX_NODES;
    machine.tree(root, 0, &mut budget)
}

/// Read one pickle without building its [`Value`] tree, checked against the bounds of
/// [`read`] (the same errors, in the same order), and hand its root to `read_root`; the
/// values stay where the reader put them.
pub(crate) fn parse_with<R>(bytes: &[u8], read_root: impl FnOnce(Ref<'_>) -> R) -> Result<R, String> {
    let mut buffers = BUFFERS.with_borrow_mut(std::mem::take);
    let mut walked = std::mem::take(&mut buffers.walked);
    let mut machine = Machine::with_buffers(bytes, buffers);
    let read = machine.run().and_then(|root| {
        let mut budget = MAX_NODES;
        walked.resize(machine.arena.len(), (0, 0));
        machine.within_bounds(root, 0, &mut budget, &mut walked)?;
        Ok(read_root(Ref {
            nodes: &machine.arena,
            index: root,
        }))
    });
    let buffers = Buffers {
        arena: machine.arena,
        stack: machine.stack,
        marks: machine.marks,
        memo: machine.memo,
        walked,
    };
    if let Some(kept) = buffers.kept() {
        BUFFERS.with_borrow_mut(|buffers| *buffers = kept);
    }
    read
}

/// A value of a pickle read by [`parse_with`], read in place.
#[derive(Clone, Copy)]
pub(crate) struct Ref<'a> {
    nodes: &'a [Node],
    index: u32,
}

impl<'a> Ref<'a> {
    fn node(self) -> &'a Node {
        &self.nodes[self.index as usize]
    }

    fn at(self, index: u32) -> Self {
        Ref {
            nodes: self.nodes,
            index,
        }
    }

    fn key_is(self, index: u32, key: &str) -> bool {
        matches!(&self.nodes[index as usize], Node::Str(s) if s == key)
    }
}

/// What [`Value`]'s methods answer for the value [`Machine::tree`] would build.
impl<'a> Tree<'a> for Ref<'a> {
    fn get(self, key: &str) -> Option<Self> {
        match self.node() {
            Node::Dict(pairs) => pairs
                .iter()
                .find(|&&(k, _)| self.key_is(k, key))
                .map(|&(_, v)| self.at(v)),
            _ => None,
        }
    }

    fn scalar(self) -> Option<Scalar<'a>> {
        Some(match self.node() {
            Node::Bool(b) => Scalar::Bool(*b),
            Node::Int(i) => Scalar::Int(*i),
            Node::Float(f) => Scalar::Float(*f),
            Node::Str(s) => Scalar::Str(s),
            _ => return None,
        })
    }

    fn as_list(self) -> Option<impl ExactSizeIterator<Item = Self>> {
        match self.node() {
            Node::List(items) | Node::Tuple(items) => Some(items.iter().map(move |&item| self.at(item))),
            _ => None,
        }
    }

    fn is_dict(self) -> bool {
        matches!(self.node(), Node::Dict(_))
    }

    fn is_none(self) -> bool {
        matches!(self.node(), Node::None)
    }

    fn entries(self) -> impl Iterator<Item = (&'a str, Self)> {
        let pairs: &'a [(u32, u32)] = match self.node() {
            Node::Dict(pairs) => pairs,
            _ => &[],
        };
        pairs.iter().filter_map(move |&(k, v)| match &self.nodes[k as usize] {
            Node::Str(s) => Some((s.as_str(), self.at(v))),
            _ => None,
        })
    }

    fn identity(self) -> Option<usize> {
        Some(self.index as usize)
    }
}

impl Machine<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("the pickle is truncated at byte {} (wanted {n} more bytes)", self.pos))?;
        let taken = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(taken)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32_le(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64_le(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn len(&mut self, n: u64) -> Result<usize, String> {
        usize::try_from(n).map_err(|_| format!("length {n} at byte {} is too large", self.pos))
    }

    fn line(&mut self) -> Result<String, String> {
        let rest = &self.bytes[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| format!("the pickle is truncated at byte {} (a line without its end)", self.pos))?;
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.pos += end + 1;
        Ok(text)
    }

    fn push(&mut self, node: Node) {
        self.arena.push(node);
        self.stack.push(self.arena.len() as u32 - 1);
    }

    fn pop(&mut self, at: usize) -> Result<u32, String> {
        if self.stack.len() <= self.marks.last().copied().unwrap_or(0) {
            return Err(format!("opcode at byte {at} pops an empty stack"));
        }
        self.stack
            .pop()
            .ok_or_else(|| format!("opcode at byte {at} pops an empty stack"))
    }

    fn top(&self, at: usize) -> Result<u32, String> {
        self.stack
            .last()
            .copied()
            .ok_or_else(|| format!("opcode at byte {at} needs a value on the stack"))
    }

    fn pop_mark(&mut self, at: usize) -> Result<Items, String> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| format!("opcode at byte {at} needs a MARK"))?;
        let start = mark.min(self.stack.len());
        let items = Items::from_slice(&self.stack[start..]);
        self.stack.truncate(start);
        Ok(items)
    }

    /// The key-value pairs above the last MARK, taken off the stack.
    fn pop_mark_pairs(&mut self, at: usize) -> Result<Pairs, String> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| format!("opcode at byte {at} needs a MARK"))?;
        let start = mark.min(self.stack.len());
        let items = &self.stack[start..];
        if !items.len().is_multiple_of(2) {
            return Err(format!("SETITEMS at byte {at} has a key without a value"));
        }
        let pairs = items.chunks(2).map(|pair| (pair[0], pair[1])).collect();
        self.stack.truncate(start);
        Ok(pairs)
    }

    fn string(&mut self, len: usize) -> Result<(), String> {
        let bytes = self.take(len)?;
        // Valid UTF-8 (nearly always) is checked on the fast path and copied as it is.
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(_) => String::from_utf8_lossy(bytes).into_owned(),
        };
        self.push(Node::Str(text));
        Ok(())
    }

    fn memo_put(&mut self, key: u64, at: usize) -> Result<(), String> {
        let top = self.top(at)?;
        self.memo.insert(key, top);
        Ok(())
    }

    fn memo_get(&mut self, key: u64, at: usize) -> Result<(), String> {
        let index = self
            .memo
            .get(key)
            .ok_or_else(|| format!("memo key {key} at byte {at} was never stored"))?;
        self.stack.push(index);
        Ok(())
    }

    fn int_bytes(bytes: &[u8]) -> Node {
        if bytes.len() > 8 {
            return Node::Opaque("an integer wider than 64 bits");
        }
        let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
        let mut a = [if negative { 0xff } else { 0 }; 8];
        a[..bytes.len()].copy_from_slice(bytes);
        Node::Int(i64::from_le_bytes(a))
    }

    fn run(&mut self) -> Result<u32, String> {
        loop {
            let at = self.pos;
            let op = self
                .byte()
                .map_err(|_| format!("the pickle ends at byte {at} without its STOP opcode (truncated)"))?;
            match op {
                0x80 => {
                    let protocol = self.byte()?;
                    if !(2..=5).contains(&protocol) {
                        return Err(format!("pickle protocol {protocol} is not one a dump uses (2 to 5)"));
                    }
                }
                0x95 => {
                    self.take(8)?;
                }
                b'.' => {
                    let root = self.pop(at)?;
                    return Ok(root);
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop(at)?;
                }
                b'1' => {
                    self.pop_mark(at)?;
                }
                b'2' => {
                    let top = self.top(at)?;
                    self.stack.push(top);
                }
                b'N' => self.push(Node::None),
                0x88 => self.push(Node::Bool(true)),
                0x89 => self.push(Node::Bool(false)),
                b'J' => {
                    let v = self.u32_le()? as i32;
                    self.push(Node::Int(i64::from(v)));
                }
                b'K' => {
                    let v = self.byte()?;
                    self.push(Node::Int(i64::from(v)));
                }
                b'M' => {
                    let b = self.take(2)?;
                    let v = u16::from_le_bytes([b[0], b[1]]);
                    self.push(Node::Int(i64::from(v)));
                }
                0x8a => {
                    let n = usize::from(self.byte()?);
                    let node = Self::int_bytes(self.take(n)?);
                    self.push(node);
                }
                0x8b => {
                    let n = self.u32_le()? as usize;
                    let node = Self::int_bytes(self.take(n)?);
                    self.push(node);
                }
                b'I' | b'L' => {
                    let line = self.line()?;
                    let digits = line.trim_end_matches('L');
                    let node = match digits {
                        "00" => Node::Bool(false),
                        "01" => Node::Bool(true),
                        _ => digits
                            .parse()
                            .map_or(Node::Opaque("an integer wider than 64 bits"), Node::Int),
                    };
                    self.push(node);
                }
                b'G' => {
                    let b = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.push(Node::Float(f64::from_be_bytes(a)));
                }
                b'X' | b'T' => {
                    let n = self.u32_le()? as usize;
                    self.string(n)?;
                }
                0x8c | b'U' => {
                    let n = usize::from(self.byte()?);
                    self.string(n)?;
                }
                0x8d => {
                    let n = self.u64_le()?;
                    let n = self.len(n)?;
                    self.string(n)?;
                }
                b'B' => {
                    let n = self.u32_le()? as usize;
                    self.take(n)?;
                    self.push(Node::Opaque("bytes"));
                }
                b'C' => {
                    let n = usize::from(self.byte()?);
                    self.take(n)?;
                    self.push(Node::Opaque("bytes"));
                }
                0x8e | 0x96 => {
                    let n = self.u64_le()?;
                    let n = self.len(n)?;
                    self.take(n)?;
                    self.push(Node::Opaque("bytes"));
                }
                b']' => self.push(Node::List(Items::new())),
                b')' => self.push(Node::Tuple(Items::new())),
                b'}' => self.push(Node::Dict(Pairs::new())),
                0x8f => self.push(Node::List(Items::new())),
                b'l' => {
                    let items = self.pop_mark(at)?;
                    self.push(Node::List(items));
                }
                b't' | 0x91 => {
                    let items = self.pop_mark(at)?;
                    self.push(if op == b't' {
                        Node::Tuple(items)
                    } else {
                        Node::List(items)
                    });
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut items = Items::new();
                    for _ in 0..n {
                        items.push(self.pop(at)?);
                    }
                    items.reverse();
                    self.push(Node::Tuple(items));
                }
                b'd' => {
                    let pairs = self.pop_mark_pairs(at)?;
                    self.push(Node::Dict(pairs));
                }
                b'a' => {
                    let item = self.pop(at)?;
                    let list = self.top(at)?;
                    self.extend_list(list, smallvec![item], at)?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark(at)?;
                    let list = self.top(at)?;
                    self.extend_list(list, items, at)?;
                }
                b's' => {
                    let value = self.pop(at)?;
                    let key = self.pop(at)?;
                    let dict = self.top(at)?;
                    self.extend_dict(dict, smallvec![(key, value)], at)?;
                }
                b'u' => {
                    let pairs = self.pop_mark_pairs(at)?;
                    let dict = self.top(at)?;
                    self.extend_dict(dict, pairs, at)?;
                }
                b'q' => {
                    let key = u64::from(self.byte()?);
                    self.memo_put(key, at)?;
                }
                b'r' => {
                    let key = u64::from(self.u32_le()?);
                    self.memo_put(key, at)?;
                }
                0x94 => {
                    let key = self.memo.len() as u64;
                    self.memo_put(key, at)?;
                }
                b'p' => {
                    let key = self
                        .line()?
                        .trim()
                        .parse()
                        .map_err(|_| format!("bad PUT at byte {at}"))?;
                    self.memo_put(key, at)?;
                }
                b'h' => {
                    let key = u64::from(self.byte()?);
                    self.memo_get(key, at)?;
                }
                b'j' => {
                    let key = u64::from(self.u32_le()?);
                    self.memo_get(key, at)?;
                }
                b'g' => {
                    let key = self
                        .line()?
                        .trim()
                        .parse()
                        .map_err(|_| format!("bad GET at byte {at}"))?;
                    self.memo_get(key, at)?;
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.push(Node::Global(Box::new((module, name))));
                }
                0x93 => {
                    let name = self.pop(at)?;
                    let module = self.pop(at)?;
                    let text = |machine: &Self, index: u32| match &machine.arena[index as usize] {
                        Node::Str(text) => text.clone(),
                        _ => String::new(),
                    };
                    let global = Node::Global(Box::new((text(self, module), text(self, name))));
                    self.push(global);
                }
                b'R' => {
                    let args = self.pop(at)?;
                    let callable = self.pop(at)?;
                    let node = self.reduce(callable, args);
                    match node {
                        Ok(index) => self.stack.push(index),
                        Err(node) => self.push(node),
                    }
                }
                0x81 => {
                    self.pop(at)?;
                    self.pop(at)?;
                    self.push(Node::Opaque("an object"));
                }
                0x92 => {
                    self.pop(at)?;
                    self.pop(at)?;
                    self.pop(at)?;
                    self.push(Node::Opaque("an object"));
                }
                b'b' => {
                    self.pop(at)?;
                    self.top(at)?;
                }
                b'Q' => {
                    self.pop(at)?;
                    self.push(Node::Opaque("a persistent id"));
                }
                other => {
                    return Err(format!(
                        "pickle opcode 0x{other:02x} at byte {at} is not one a Flight Recorder dump uses"
                    ));
                }
            }
        }
    }

    /// `build_intlist([..])` and friends give their list; anything else is opaque.
    fn reduce(&self, callable: u32, args: u32) -> Result<u32, Node> {
        if let Node::Global(global) = &self.arena[callable as usize]
            && let (module, name) = &**global
            && (module == "torch.jit._pickle" && name.starts_with("build_") || module == "builtins" && name == "list")
            && let Node::Tuple(items) = &self.arena[args as usize]
            && let [list] = items.as_slice()
        {
            return Ok(*list);
        }
        if let Node::Global(global) = &self.arena[callable as usize]
            && let (module, name) = &**global
            && module == "collections"
            && name == "OrderedDict"
        {
            return Err(Node::Dict(Pairs::new()));
        }
        Err(Node::Opaque("an object"))
    }

    fn extend_list(&mut self, list: u32, items: Items, at: usize) -> Result<(), String> {
        match &mut self.arena[list as usize] {
            Node::List(existing) if existing.is_empty() => {
                *existing = items;
                Ok(())
            }
            Node::List(existing) => {
                existing.extend(items);
                Ok(())
            }
            // Appending to an object (`__setstate__` style): its contents do not matter.
            Node::Opaque(_) => Ok(()),
            _ => Err(format!("APPEND at byte {at} to something that is not a list")),
        }
    }

    fn extend_dict(&mut self, dict: u32, items: Pairs, at: usize) -> Result<(), String> {
        match &mut self.arena[dict as usize] {
            Node::Dict(existing) if existing.is_empty() => {
                *existing = items;
                Ok(())
            }
            Node::Dict(existing) => {
                existing.extend(items);
                Ok(())
            }
            Node::Opaque(_) => Ok(()),
            _ => Err(format!("SETITEM at byte {at} on something that is not a dict")),
        }
    }

    /// The bounds [`Machine::tree`] applies, checked in the same order without building
    /// anything: the same error for the same pickle. `walked` holds, per value, the
    /// values and the levels below it of a list or dict walked whole before (zero
    /// values: not yet): a value shared through the memo (every frame of a dump's
    /// stacks) is walked again only where the walk could fail inside it.
    fn within_bounds(
        &self,
        index: u32,
        depth: usize,
        budget: &mut usize,
        walked: &mut [(u32, u8)],
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("the pickle nests deeper than {MAX_DEPTH} levels"));
        }
        let (values, levels) = walked[index as usize];
        if values > 0 && depth + usize::from(levels) <= MAX_DEPTH && values as usize <= *budget {
            *budget -= values as usize;
            return Ok(());
        }
        let before = *budget;
        *budget = budget
            .checked_sub(1)
            .ok_or_else(|| format!("the pickle holds more than {MAX_NODES} values"))?;
        let mut below = 0u8;
        // A leaf costs a count (and the depth check), not a call.
        let mut child = |item: u32, budget: &mut usize| match &self.arena[item as usize] {
            Node::List(_) | Node::Tuple(_) | Node::Dict(_) => {
                self.within_bounds(item, depth + 1, budget, walked)?;
                below = below.max(walked[item as usize].1 + 1);
                Ok(())
            }
            _ if depth + 1 > MAX_DEPTH => Err(format!("the pickle nests deeper than {MAX_DEPTH} levels")),
            _ => {
                *budget = budget
                    .checked_sub(1)
                    .ok_or_else(|| format!("the pickle holds more than {MAX_NODES} values"))?;
                below = below.max(1);
                Ok(())
            }
        };
        match &self.arena[index as usize] {
            Node::List(items) | Node::Tuple(items) => {
                for &item in items {
                    child(item, budget)?;
                }
            }
            Node::Dict(pairs) => {
                for &(k, v) in pairs {
                    child(k, budget)?;
                    child(v, budget)?;
                }
            }
            _ => {}
        }
        // Walked whole: at most MAX_NODES values, at most MAX_DEPTH levels.
        walked[index as usize] = ((before - *budget) as u32, below);
        Ok(())
    }

    fn tree(&self, index: u32, depth: usize, budget: &mut usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("the pickle nests deeper than {MAX_DEPTH} levels"));
        }
        *budget = budget
            .checked_sub(1)
            .ok_or_else(|| format!("the pickle holds more than {MAX_NODES} values"))?;
        Ok(match &self.arena[index as usize] {
            Node::None => Value::None,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => Value::Int(*i),
            Node::Float(f) => Value::Float(*f),
            Node::Str(s) => Value::Str(s.clone()),
            Node::Opaque(what) => Value::Opaque(what),
            Node::Global(..) => Value::Opaque("a global"),
            Node::List(items) | Node::Tuple(items) => Value::List(
                items
                    .iter()
                    .map(|&item| self.tree(item, depth + 1, budget))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Dict(pairs) => Value::Dict(
                pairs
                    .iter()
                    .map(|&(k, v)| Ok((self.tree(k, depth + 1, budget)?, self.tree(v, depth + 1, budget)?)))
                    .collect::<Result<_, String>>()?,
                0..0,
            ),
        })
    }
}
