//! The walk of one entry point: statements in order, helpers and methods inlined,
//! values followed, catalogued calls and torch operations emitted as `.sync` statements.
//!
//! This module holds the walker's state, its helpers and function inlining;
//! `stmt.rs` walks statements, `expr.rs` evaluates expressions and dispatches calls,
//! `acl.rs` turns pyACL calls into catalogue calls, `torch.rs` maps torch_npu streams,
//! events and tensors to ACL.

mod acl;
mod expr;
mod stmt;
mod torch;

use std::collections::HashMap;
use std::ops::Range;

use syncguard_grammar::ast;
use syncguard_model::api::{Api, ArgKind, Creates};
use syncguard_model::reading_rules::failure_changes_synchronization;
use tree_sitter::Node;

use crate::index::{FnDef, Index, Unit, space_range, text};
use crate::value::{Place, Value};

/// Steps (statements and expressions) one entry point may take.
pub const MAX_STEPS: usize = 200_000;
/// Function calls inlined into each other at most.
const MAX_INLINE: usize = 24;
/// Blocks and expressions nested into each other at most.
const MAX_NESTING: usize = 96;
/// Iterations of one loop that are unrolled at most.
const MAX_ITERATIONS: i64 = 4_096;
/// Undecided conditions per entry point at most (each doubles the states to check).
const MAX_CHOICES: usize = 32;
/// Items a list or tuple value holds at most: a longer one has no known value (lists
/// of handles are short, and values are copied as they are passed around).
const MAX_ITEMS: usize = 256;
/// The size taken for a tensor, whose shape the extraction does not follow.
pub const TENSOR_BYTES: i64 = 1 << 20;

/// What one entry point's walk produced.
pub struct Walked {
    pub stmts: Vec<ast::Stmt>,
    pub api_calls: usize,
    /// What could not be followed: where, why, and the `.sync` names of the objects a
    /// call left out uses.
    pub unresolved: Vec<(Range<usize>, String, Vec<String>)>,
    pub incomplete: Option<(Range<usize>, String)>,
    pub unchecked: Vec<(Range<usize>, &'static Api)>,
}

/// How a block ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flow {
    Normal,
    Return,
    Break,
    Continue,
}

struct Frame {
    unit: usize,
    locals: HashMap<String, Value>,
    /// Return codes bound to a name and not read yet: `ret = acl.rt.record_event(...)`.
    pending: Vec<(String, Range<usize>, &'static Api)>,
    returned: Value,
}

/// The state a branch changes: merged where two branches meet.
#[derive(Clone)]
struct State {
    frames_locals: Vec<HashMap<String, Value>>,
    heap: Vec<Obj>,
    current: Value,
    recorded: std::collections::HashSet<String>,
}

#[derive(Clone, Default)]
struct Obj {
    class: String,
    attrs: HashMap<String, Value>,
    /// A pyACL dataset's buffers.
    items: Vec<Value>,
}

pub struct Walker<'i, 't> {
    index: &'i Index<'t>,
    blocks: Vec<Vec<ast::Stmt>>,
    /// Per block being built: the torch events created in it, which Python's garbage
    /// collector destroys (here: where the block ends).
    owned: Vec<Vec<String>>,
    params: Vec<ast::Stmt>,
    frames: Vec<Frame>,
    heap: Vec<Obj>,
    /// The current stream of torch (`with torch.npu.stream(s):`).
    current: Value,
    /// torch events, and those of them recorded so far: torch_npu creates an event
    /// at its first record, and a wait or synchronize before that does nothing.
    torch_events: std::collections::HashSet<String>,
    recorded: std::collections::HashSet<String>,
    /// `.sync` names given so far, with how often.
    names: HashMap<String, usize>,
    /// The name the value being assigned will be stored under.
    hint: Option<String>,
    inlined: Vec<usize>,
    nesting: usize,
    steps: usize,
    choices: usize,
    api_calls: usize,
    /// The catalogued call the last expression evaluated directly was.
    last_api: Option<(Range<usize>, &'static Api)>,
    unresolved: Vec<(Range<usize>, String, Vec<String>)>,
    incomplete: Option<(Range<usize>, String)>,
    unchecked: Vec<(Range<usize>, &'static Api)>,
}

/// Names that are `.sync` keywords or pseudo-calls: a Python name spelled so gets a `_`.
const RESERVED: &[&str] = &[
    "let",
    "mut",
    "if",
    "else",
    "for",
    "in",
    "while",
    "param",
    "thread",
    "op",
    "attrs",
    "superkernel",
    "subkernel",
    "return",
    "target",
    "cann",
    "ranks",
    "rank",
    "true",
    "false",
    "kernel",
    "host_read",
    "host_write",
    "NULL",
    "nullptr",
    "UB",
    "L1",
    "L0C",
];

impl<'i, 't> Walker<'i, 't> {
    pub fn new(index: &'i Index<'t>) -> Self {
        Walker {
            index,
            blocks: vec![Vec::new()],
            owned: vec![Vec::new()],
            params: Vec::new(),
            frames: Vec::new(),
            heap: Vec::new(),
            current: Value::DefaultStream,
            torch_events: std::collections::HashSet::new(),
            recorded: std::collections::HashSet::new(),
            names: HashMap::new(),
            hint: None,
            inlined: Vec::new(),
            nesting: 0,
            steps: 0,
            choices: 0,
            api_calls: 0,
            last_api: None,
            unresolved: Vec::new(),
            incomplete: None,
            unchecked: Vec::new(),
        }
    }

    /// Walk entry point `def`: a method runs on an object its class's `__init__` built.
    pub fn run(mut self, def_at: usize) -> Walked {
        let def = &self.index.functions[def_at];
        let mut args = Vec::new();
        if let Some(class) = def.class.clone() {
            let object = self.construct(&class, Vec::new(), Vec::new(), def.node);
            args.push(object);
        }
        self.call_function(def_at, args, Vec::new(), def.node);
        let end = def.node.end_byte().saturating_sub(1)..def.node.end_byte();
        let end = self.index.units[def.unit].base + end.start..self.index.units[def.unit].base + end.end;
        let mut stmts = std::mem::take(&mut self.params);
        stmts.extend(self.pop_block(end));
        Walked {
            stmts,
            api_calls: self.api_calls,
            unresolved: self.unresolved,
            incomplete: self.incomplete,
            unchecked: self.unchecked,
        }
    }

    // ---- helpers -------------------------------------------------------------------

    fn unit(&self) -> &'t Unit {
        let at = self.frames.last().map_or(0, |frame| frame.unit);
        &self.index.units[at]
    }

    fn range(&self, node: Node) -> Range<usize> {
        space_range(self.unit(), node)
    }

    fn text(&self, node: Node) -> &'t str {
        text(self.unit(), node)
    }

    fn note(&mut self, node: Node, message: impl Into<String>) {
        self.note_touching(node, message, Vec::new());
    }

    /// A call left out that uses the objects `touches` names: findings that rest on them
    /// are undecided.
    fn note_touching(&mut self, node: Node, message: impl Into<String>, touches: Vec<String>) {
        let range = self.range(node);
        let message = message.into();
        if !self
            .unresolved
            .iter()
            .any(|(seen, text, _)| *seen == range && *text == message)
        {
            self.unresolved.push((range, message, touches));
        }
    }

    /// Count a step; false once the entry has taken too many (the walk then stops).
    fn step(&mut self, node: Node) -> bool {
        if self.incomplete.is_some() {
            return false;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.incomplete = Some((
                self.range(node),
                format!("the extraction stopped after {MAX_STEPS} steps: the code that follows is not checked"),
            ));
            return false;
        }
        true
    }

    fn push_block(&mut self) {
        self.blocks.push(Vec::new());
        self.owned.push(Vec::new());
    }

    /// The statements of the innermost block, with the torch events created in it
    /// destroyed at its end (`span`).
    fn pop_block(&mut self, span: Range<usize>) -> Vec<ast::Stmt> {
        let mut stmts = self.blocks.pop().unwrap_or_default();
        for event in self.owned.pop().unwrap_or_default() {
            if let ast::Expr {
                kind: ast::ExprKind::Call(call),
                ..
            } = call_expr(
                "acl.rt.destroy_event",
                vec![ast::Expr::name(&event, span.clone())],
                Vec::new(),
                span.clone(),
            ) {
                stmts.push(ast::Stmt {
                    kind: ast::StmtKind::Call(*call),
                    span: span.clone(),
                });
            }
        }
        stmts
    }

    fn emit(&mut self, kind: ast::StmtKind, span: Range<usize>) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(ast::Stmt { kind, span });
        }
    }

    /// A fresh `.sync` name from a Python one (`self.update_stream` → `update_stream`).
    fn fresh_name(&mut self, base: &str) -> String {
        let base = base.strip_prefix("self.").unwrap_or(base);
        let mut name: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(48)
            .collect();
        while name.contains("__") {
            name = name.replace("__", "_");
        }
        name = name.trim_matches('_').to_string();
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            name = format!("v_{name}");
        }
        if RESERVED.contains(&name.as_str()) {
            name.push('_');
        }
        let count = self.names.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count == 1 { name } else { format!("{name}_{count}") }
    }

    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("a frame while walking")
    }

    fn lookup(&mut self, name: &str) -> Option<Value> {
        let frame = self.frames.last_mut()?;
        frame.pending.retain(|(pending, _, _)| pending != name);
        if let Some(value) = frame.locals.get(name) {
            return Some(value.clone());
        }
        None
    }

    fn snapshot(&self) -> State {
        State {
            frames_locals: self.frames.iter().map(|frame| frame.locals.clone()).collect(),
            heap: self.heap.clone(),
            current: self.current.clone(),
            recorded: self.recorded.clone(),
        }
    }

    fn restore(&mut self, state: State) {
        for (frame, locals) in self.frames.iter_mut().zip(state.frames_locals) {
            frame.locals = locals;
        }
        self.heap = state.heap;
        self.current = state.current;
        self.recorded = state.recorded;
    }

    /// Where two branches meet: a value they left different is unknown after them.
    fn merge(&mut self, other: State) {
        for (frame, locals) in self.frames.iter_mut().zip(other.frames_locals) {
            let names: Vec<String> = frame.locals.keys().chain(locals.keys()).cloned().collect();
            for name in names {
                if frame.locals.get(&name) != locals.get(&name) {
                    frame.locals.insert(name, Value::Unknown);
                }
            }
        }
        for (at, obj) in other.heap.into_iter().enumerate() {
            match self.heap.get_mut(at) {
                Some(mine) => {
                    let names: Vec<String> = mine.attrs.keys().chain(obj.attrs.keys()).cloned().collect();
                    for name in names {
                        if mine.attrs.get(&name) != obj.attrs.get(&name) {
                            mine.attrs.insert(name, Value::Unknown);
                        }
                    }
                    if mine.items != obj.items {
                        mine.items.clear();
                    }
                }
                None => self.heap.push(obj),
            }
        }
        if self.current != other.current {
            self.current = Value::Unknown;
        }
        // Recorded on either way: a later wait is kept (and checked for the other).
        self.recorded.extend(other.recorded);
    }

    /// A new undecided choice `param NAME in 0..=high;` (None past the limit).
    fn choice(&mut self, node: Node, kind: &str, high: i64) -> Option<String> {
        if self.choices >= MAX_CHOICES {
            self.note(
                node,
                format!("more than {MAX_CHOICES} undecided conditions: this one is taken as not taken"),
            );
            return None;
        }
        self.choices += 1;
        let stem = self.index.units[self.frames.last().map_or(0, |f| f.unit)].stem();
        let line = node.start_position().row + 1;
        let name = self.fresh_name(&format!("{kind}_{stem}_L{line}"));
        let span = self.range(node);
        self.params.push(ast::Stmt {
            kind: ast::StmtKind::Param {
                name: ident(&name, span.clone()),
                range: ast::RangeExpr {
                    start: Box::new(ast::Expr::int(0, span.clone())),
                    end: Some(Box::new(ast::Expr::int(high, span.clone()))),
                    inclusive: true,
                    span: span.clone(),
                },
            },
            span,
        });
        Some(name)
    }

    // ---- functions -----------------------------------------------------------------

    /// Inline function `def_at` with `args` (the object first for a method).
    fn call_function(&mut self, def_at: usize, args: Vec<Value>, kwargs: Vec<(String, Value)>, at: Node) -> Value {
        let def: &FnDef<'t> = &self.index.functions[def_at];
        if self.inlined.contains(&def_at) {
            self.note(
                at,
                format!("`{}` calls itself: the recursive call is not followed", def.qualified()),
            );
            return Value::Unknown;
        }
        if self.inlined.len() >= MAX_INLINE {
            self.note(
                at,
                format!(
                    "calls nested deeper than {MAX_INLINE}: `{}` is not followed",
                    def.qualified()
                ),
            );
            return Value::Unknown;
        }
        let unit = &self.index.units[def.unit];
        let mut locals = HashMap::new();
        let mut positional = args.into_iter();
        if let Some(parameters) = def.node.child_by_field_name("parameters") {
            let mut cursor = parameters.walk();
            for param in parameters.named_children(&mut cursor) {
                let (name, default) = match param.kind() {
                    "identifier" => (Some(param), None),
                    "typed_parameter" => (param.named_child(0).filter(|n| n.kind() == "identifier"), None),
                    "default_parameter" | "typed_default_parameter" => {
                        (param.child_by_field_name("name"), param.child_by_field_name("value"))
                    }
                    _ => (None, None),
                };
                let Some(name) = name else {
                    continue;
                };
                let name = text(unit, name).to_string();
                let value = match kwargs.iter().find(|(key, _)| *key == name) {
                    Some((_, value)) => {
                        // Keyword arguments do not take a positional slot.
                        value.clone()
                    }
                    None => match positional.next() {
                        Some(value) => value,
                        None => match default {
                            Some(default) => {
                                // Defaults are evaluated in the function's module.
                                self.frames.push(Frame {
                                    unit: def.unit,
                                    locals: HashMap::new(),
                                    pending: Vec::new(),
                                    returned: Value::None,
                                });
                                let value = self.eval(default);
                                self.frames.pop();
                                value
                            }
                            None => Value::Unknown,
                        },
                    },
                };
                locals.insert(name, value);
            }
        }
        self.frames.push(Frame {
            unit: def.unit,
            locals,
            pending: Vec::new(),
            returned: Value::None,
        });
        self.inlined.push(def_at);
        if let Some(body) = def.node.child_by_field_name("body") {
            self.block(body);
        }
        self.inlined.pop();
        let frame = self.frames.pop().expect("the frame pushed above");
        self.unchecked
            .extend(frame.pending.into_iter().map(|(_, range, api)| (range, api)));
        frame.returned
    }

    /// `Class(args)`: a new object, with `__init__` run on it.
    fn construct(&mut self, class: &str, args: Vec<Value>, kwargs: Vec<(String, Value)>, at: Node) -> Value {
        self.heap.push(Obj {
            class: class.to_string(),
            ..Obj::default()
        });
        let object = Value::Object(self.heap.len() - 1);
        if let Some(init_at) = self.index.method(class, "__init__") {
            let mut all = vec![object.clone()];
            all.extend(args);
            self.call_function(init_at, all, kwargs, at);
        }
        object
    }
}

// ---- free helpers ------------------------------------------------------------------

/// Whether a block only fails: it raises or exits, with no other statement that
/// could synchronize.
fn is_error_exit(block: Node, unit: &Unit) -> bool {
    let mut cursor = block.walk();
    let stmts: Vec<Node> = block.named_children(&mut cursor).collect();
    let Some(last) = stmts.last() else {
        return false;
    };
    let exits = match last.kind() {
        "raise_statement" => true,
        "expression_statement" => {
            let text = text(unit, *last);
            text.starts_with("sys.exit") || text.starts_with("exit(") || text.starts_with("os._exit")
        }
        "return_statement" => {
            let text = text(unit, *last);
            let value = text.trim_start_matches("return").trim();
            value.starts_with('-')
                || value == "False"
                || value == "ret"
                || value.contains("FAIL")
                || value.contains("ERROR")
        }
        _ => false,
    };
    exits
        && stmts[..stmts.len() - 1].iter().all(|stmt| {
            let text = text(unit, *stmt);
            !text.contains("acl.")
                && !text.contains("synchronize")
                && !text.contains("record")
                && !text.contains("wait")
        })
}

fn preorder_kind<'t>(node: Node<'t>, kind: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == kind {
            out.push(child);
        } else if child.kind() == "with_clause" {
            out.extend(preorder_kind(child, kind));
        }
    }
    out
}

/// `torch.X`, `torch_npu.X` → `X` (`torch_npu.npu.Stream` → `npu.Stream`).
fn torch_path(path: &str) -> Option<String> {
    let rest = path
        .strip_prefix("torch_npu.")
        .or_else(|| path.strip_prefix("torch."))?;
    Some(
        rest.strip_prefix("npu.npu.")
            .map_or_else(|| rest.to_string(), |r| format!("npu.{r}")),
    )
}

fn is_library(path: &str) -> bool {
    ["torch", "torch_npu", "acl", "numpy", "np"]
        .iter()
        .any(|lib| path == *lib || path.starts_with(&format!("{lib}.")))
}

fn is_tensor_factory(name: &str) -> bool {
    matches!(
        name,
        "empty"
            | "zeros"
            | "ones"
            | "full"
            | "rand"
            | "randn"
            | "randint"
            | "arange"
            | "tensor"
            | "empty_like"
            | "zeros_like"
            | "ones_like"
            | "full_like"
            | "rand_like"
            | "randn_like"
            | "empty_strided"
            | "linspace"
    )
}

/// Whether a device value (`"npu"`, `"npu:0"`, `torch.device("cuda")`) is an accelerator.
fn device_of(value: Option<&Value>) -> Option<bool> {
    match value? {
        Value::Str(text) => {
            let kind = text.split(':').next().unwrap_or("");
            match kind {
                "npu" | "cuda" => Some(true),
                "cpu" => Some(false),
                _ => None,
            }
        }
        Value::Device(on) => Some(*on),
        Value::Int(_) => Some(true),
        Value::Buffer(_, place) => Some(*place == Place::Device),
        _ => None,
    }
}

fn sequence(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::List(items) | Value::Tuple(items) => Some(items.clone()),
        // Iterating a dict gives its keys.
        Value::Dict(pairs) => Some(pairs.iter().map(|(key, _)| key.clone()).collect()),
        _ => None,
    }
}

/// Values inside lists and tuples, one level deep per nesting (bounded).
fn flatten(values: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Value, usize)> = values.iter().rev().map(|v| (v, 0)).collect();
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Tuple(items) | Value::List(items) if depth < 8 => {
                stack.extend(items.iter().rev().map(|item| (item, depth + 1)));
            }
            Value::DataBuffer(inner) => out.push((**inner).clone()),
            Value::Dict(pairs) if depth < 8 => {
                stack.extend(pairs.iter().rev().map(|(_, value)| (value, depth + 1)));
            }
            other => out.push(other.clone()),
        }
        if out.len() > 4096 {
            break;
        }
    }
    out
}

/// The torch name of a binary operator on tensors (`a @ b` is `matmul`).
fn operator_name(op: &str) -> &'static str {
    match op {
        "+" => "add",
        "-" => "sub",
        "*" => "mul",
        "/" => "div",
        "//" => "floor_divide",
        "%" => "remainder",
        "**" => "pow",
        "@" => "matmul",
        "&" => "bitwise_and",
        "|" => "bitwise_or",
        "^" => "bitwise_xor",
        "<<" => "bitwise_left_shift",
        ">>" => "bitwise_right_shift",
        _ => "op",
    }
}

/// Whether a value can be a dict key the extraction compares: a string or an integer.
fn is_key(value: &Value) -> bool {
    matches!(value, Value::Str(_) | Value::Int(_) | Value::Bool(_))
}

/// The value under `key`, if the key is known and present.
fn dict_get(pairs: &[(Value, Value)], key: &Value) -> Option<Value> {
    if !is_key(key) {
        return None;
    }
    pairs
        .iter()
        .find(|(k, _)| equal(k, key) == Some(true))
        .map(|(_, value)| value.clone())
}

fn parse_int(text: &str) -> Option<i64> {
    let text: String = text.chars().filter(|c| *c != '_').collect();
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Some(bin) = lower.strip_prefix("0b") {
        return i64::from_str_radix(bin, 2).ok();
    }
    if let Some(oct) = lower.strip_prefix("0o") {
        return i64::from_str_radix(oct, 8).ok();
    }
    lower.parse().ok()
}

fn arith(op: &str, left: &Value, right: &Value) -> Value {
    let (Some(a), Some(b)) = (left.int(), right.int()) else {
        if op == "+"
            && let (Value::Str(a), Value::Str(b)) = (left, right)
            && a.len() + b.len() < 4096
        {
            return Value::Str(format!("{a}{b}"));
        }
        return Value::Unknown;
    };
    let result = match op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "//" => (b != 0).then(|| a.div_euclid(b)),
        "%" => (b != 0).then(|| a.rem_euclid(b)),
        "**" => u32::try_from(b).ok().and_then(|b| a.checked_pow(b)),
        "<<" => u32::try_from(b).ok().filter(|b| *b < 63).and_then(|b| a.checked_shl(b)),
        ">>" => u32::try_from(b).ok().filter(|b| *b < 64).map(|b| a >> b),
        "&" => Some(a & b),
        "|" => Some(a | b),
        "^" => Some(a ^ b),
        _ => None,
    };
    result.map_or(Value::Unknown, Value::Int)
}

fn compare(op: &str, left: &Value, right: &Value) -> Option<bool> {
    let op: String = op.split_whitespace().collect::<Vec<_>>().join(" ");
    match op.as_str() {
        "is" | "==" => equal(left, right),
        "is not" | "!=" => equal(left, right).map(|eq| !eq),
        "<" | "<=" | ">" | ">=" => {
            let (a, b) = (left.int()?, right.int()?);
            Some(match op.as_str() {
                "<" => a < b,
                "<=" => a <= b,
                ">" => a > b,
                _ => a >= b,
            })
        }
        "in" | "not in" => {
            let items = sequence(right)?;
            let mut found = Some(false);
            for item in &items {
                match equal(left, item) {
                    Some(true) => {
                        found = Some(true);
                        break;
                    }
                    None => found = None,
                    Some(false) => {}
                }
            }
            if op == "in" { found } else { found.map(|f| !f) }
        }
        _ => None,
    }
}

fn equal(left: &Value, right: &Value) -> Option<bool> {
    match (left, right) {
        (Value::Unknown, _) | (_, Value::Unknown) => None,
        (Value::None, Value::None) => Some(true),
        (Value::None, other) | (other, Value::None) => match other {
            Value::Int(_) | Value::Bool(_) | Value::Str(_) | Value::Stream(_) | Value::Event(_) | Value::Buffer(..) => {
                Some(false)
            }
            _ => None,
        },
        (Value::Str(a), Value::Str(b)) => Some(a == b),
        _ => match (left.int(), right.int()) {
            (Some(a), Some(b)) => Some(a == b),
            _ => None,
        },
    }
}

fn ident(name: &str, span: Range<usize>) -> ast::Ident {
    ast::Ident {
        name: name.to_string(),
        span,
    }
}

fn binary(op: ast::BinaryOp, left: ast::Expr, right: ast::Expr) -> ast::Expr {
    let span = left.span.start.min(right.span.start)..left.span.end.max(right.span.end);
    ast::Expr {
        kind: ast::ExprKind::Binary(op, Box::new(left), Box::new(right)),
        span,
    }
}

fn call_expr(callee: &str, args: Vec<ast::Expr>, named: Vec<(&str, ast::Expr)>, span: Range<usize>) -> ast::Expr {
    let mut all: Vec<ast::Arg> = args.into_iter().map(|value| ast::Arg { name: None, value }).collect();
    all.extend(named.into_iter().map(|(name, value)| ast::Arg {
        name: Some(ident(name, span.clone())),
        value,
    }));
    ast::Expr {
        kind: ast::ExprKind::Call(Box::new(ast::Call {
            callee: ast::Path {
                text: callee.to_string(),
                span: span.clone(),
            },
            generics: None,
            args: all,
            span: span.clone(),
        })),
        span,
    }
}
