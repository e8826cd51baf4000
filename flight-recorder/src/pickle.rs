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
//! list that contains itself.

use std::collections::HashMap;

use crate::value::Value;

/// Nesting deeper than this is refused (a dump nests about 6 deep).
pub const MAX_DEPTH: usize = 64;
/// Values built when the arena becomes a tree (shared values count once per use).
pub const MAX_NODES: usize = 32_000_000;

#[derive(Clone, Debug)]
enum Node {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Bytes, a persistent id, an object built from a class: kept as an opaque value.
    Opaque(&'static str),
    List(Vec<u32>),
    Tuple(Vec<u32>),
    Dict(Vec<(u32, u32)>),
    Global(String, String),
}

struct Machine<'a> {
    bytes: &'a [u8],
    pos: usize,
    arena: Vec<Node>,
    stack: Vec<u32>,
    marks: Vec<usize>,
    memo: HashMap<u64, u32>,
}

/// Read one pickle; the error says what is wrong and at which byte.
pub fn read(bytes: &[u8]) -> Result<Value, String> {
    let mut machine = Machine {
        bytes,
        pos: 0,
        arena: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
    };
    let root = machine.run()?;
    let mut budget = MAX_NODES;
    machine.tree(root, 0, &mut budget)
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

    fn pop_mark(&mut self, at: usize) -> Result<Vec<u32>, String> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| format!("opcode at byte {at} needs a MARK"))?;
        Ok(self.stack.split_off(mark.min(self.stack.len())))
    }

    fn string(&mut self, len: usize) -> Result<(), String> {
        let text = String::from_utf8_lossy(self.take(len)?).into_owned();
        self.push(Node::Str(text));
        Ok(())
    }

    fn memo_put(&mut self, key: u64, at: usize) -> Result<(), String> {
        let top = self.top(at)?;
        self.memo.insert(key, top);
        Ok(())
    }

    fn memo_get(&mut self, key: u64, at: usize) -> Result<(), String> {
        let index = *self
            .memo
            .get(&key)
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
                b']' => self.push(Node::List(Vec::new())),
                b')' => self.push(Node::Tuple(Vec::new())),
                b'}' => self.push(Node::Dict(Vec::new())),
                0x8f => self.push(Node::List(Vec::new())),
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
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop(at)?);
                    }
                    items.reverse();
                    self.push(Node::Tuple(items));
                }
                b'd' => {
                    let items = self.pop_mark(at)?;
                    let pairs = pairs(&items, at)?;
                    self.push(Node::Dict(pairs));
                }
                b'a' => {
                    let item = self.pop(at)?;
                    let list = self.top(at)?;
                    self.extend_list(list, vec![item], at)?;
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
                    self.extend_dict(dict, vec![(key, value)], at)?;
                }
                b'u' => {
                    let items = self.pop_mark(at)?;
                    let pairs = pairs(&items, at)?;
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
                    self.push(Node::Global(module, name));
                }
                0x93 => {
                    let name = self.pop(at)?;
                    let module = self.pop(at)?;
                    let text = |machine: &Self, index: u32| match &machine.arena[index as usize] {
                        Node::Str(text) => text.clone(),
                        _ => String::new(),
                    };
                    let global = Node::Global(text(self, module), text(self, name));
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
        if let Node::Global(module, name) = &self.arena[callable as usize]
            && (module == "torch.jit._pickle" && name.starts_with("build_") || module == "builtins" && name == "list")
            && let Node::Tuple(items) = &self.arena[args as usize]
            && let [list] = items.as_slice()
        {
            return Ok(*list);
        }
        if let Node::Global(module, name) = &self.arena[callable as usize]
            && module == "collections"
            && name == "OrderedDict"
        {
            return Err(Node::Dict(Vec::new()));
        }
        Err(Node::Opaque("an object"))
    }

    fn extend_list(&mut self, list: u32, items: Vec<u32>, at: usize) -> Result<(), String> {
        match &mut self.arena[list as usize] {
            Node::List(existing) => {
                existing.extend(items);
                Ok(())
            }
            // Appending to an object (`__setstate__` style): its contents do not matter.
            Node::Opaque(_) => Ok(()),
            _ => Err(format!("APPEND at byte {at} to something that is not a list")),
        }
    }

    fn extend_dict(&mut self, dict: u32, items: Vec<(u32, u32)>, at: usize) -> Result<(), String> {
        match &mut self.arena[dict as usize] {
            Node::Dict(existing) => {
                existing.extend(items);
                Ok(())
            }
            Node::Opaque(_) => Ok(()),
            _ => Err(format!("SETITEM at byte {at} on something that is not a dict")),
        }
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

fn pairs(items: &[u32], at: usize) -> Result<Vec<(u32, u32)>, String> {
    if !items.len().is_multiple_of(2) {
        return Err(format!("SETITEMS at byte {at} has a key without a value"));
    }
    Ok(items.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}
