//! The walk of one entry point: statements in order, helpers and methods inlined,
//! values followed, catalogued calls and torch operations emitted as `.sync` statements.
//!
//! This module holds the walker's state, its helpers and function inlining;
//! `stmt.rs` walks statements, `expr.rs` evaluates expressions and dispatches calls,
//! `acl.rs` turns pyACL calls into catalogue calls, `torch.rs` maps torch_npu streams,
//! events and tensors to ACL.

mod acl;
mod devices;
mod expr;
mod graphs;
mod merge;
mod received;
mod stmt;
mod syntax;
mod threads;
mod torch;

use std::collections::HashMap;
use std::ops::Range;

use syncguard_grammar::ast;
use syncguard_model::api::{Api, ArgKind, Creates};
use syncguard_model::reading_rules::failure_changes_synchronization;
use tree_sitter::Node;

use crate::index::{FnDef, Index, Unit, space_range, text};
use crate::value::{GraphCapture, Place, Value};

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
    /// The files (units) whose code the walk read: the program depends on no other
    /// file's text, only on what the files define (by name).
    pub touched: std::collections::BTreeSet<usize>,
    /// The objects as the code writes them: `.sync` name → text.
    pub written: Vec<(String, String)>,
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
    results: merge::Results,
}

impl Frame {
    /// A frame of code in module `unit` with these locals.
    fn new(unit: usize, locals: HashMap<String, Value>) -> Frame {
        Frame {
            unit,
            locals,
            pending: Vec::new(),
            results: merge::Results::new(),
        }
    }
}

/// A function the walk inlines: of the index, or nested in another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Callee {
    Indexed(usize),
    Nested(usize),
}

struct Function<'t> {
    callee: Callee,
    unit: usize,
    node: Node<'t>,
    name: String,
}

/// A function defined inside a function the walk is in, with how many frames deep the
/// function that defined it was.
struct Nested<'t> {
    unit: usize,
    node: Node<'t>,
    depth: usize,
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
    /// Names of received objects that may be one object (`--alias`).
    aliases: &'i [Vec<String>],
    blocks: Vec<Vec<ast::Stmt>>,
    /// Per block being built: the torch events created in it, which Python's garbage
    /// collector destroys (here: where the block ends).
    owned: Vec<Vec<String>>,
    /// The top of the program: the choices (`param`) and the objects received from
    /// outside.
    prelude: Vec<ast::Stmt>,
    frames: Vec<Frame>,
    /// The units of every frame entered.
    touched: std::collections::BTreeSet<usize>,
    heap: Vec<Obj>,
    /// The `threading.Thread`s made (`Value::HostThread`), and those started on the
    /// way walked, with their `thread` blocks' names.
    threads: Vec<threads::HostThread>,
    started: HashMap<usize, String>,
    /// Objects the entry point receives from outside (`Value::Received`).
    received: Vec<received::Received>,
    /// The object a method entry point runs on, and its attributes nothing set.
    entry_object: Option<usize>,
    entry_attrs: HashMap<String, usize>,
    /// The current stream of torch's current device (`with torch.npu.stream(s):`).
    current: Value,
    /// torch's current device, and the current streams of the other devices.
    device: i64,
    other_currents: std::collections::BTreeMap<i64, Value>,
    /// The device the extracted program has set, and whether it set device 0 at its
    /// top (at the first switch away from it).
    program_device: devices::ProgramDevice,
    home_declared: bool,
    /// The devices of the streams and device tensors made.
    stream_devices: HashMap<String, i64>,
    tensor_devices: HashMap<String, i64>,
    /// The side stream torch captures graphs on when the code names none, and the
    /// capture in progress.
    capture_stream: Option<Value>,
    capture: Option<graphs::Capture>,
    /// torch events, and those of them recorded so far: torch_npu creates an event
    /// at its first record, and a wait or synchronize before that does nothing.
    torch_events: std::collections::HashSet<String>,
    recorded: std::collections::HashSet<String>,
    /// `.sync` names given so far, with how often.
    names: HashMap<String, usize>,
    /// The objects as the code writes them: `.sync` name → text, for messages.
    written: HashMap<String, String>,
    /// The name the value being assigned will be stored under.
    hint: Option<String>,
    inlined: Vec<Callee>,
    /// Functions defined inside the functions walked (`Value::Nested`).
    nested: Vec<Nested<'t>>,
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

/// Names of `.sync` pseudo-calls, settings and memories: like the grammar's keywords, a
/// Python name spelled so gets a `_`.
const RESERVED: &[&str] = &[
    "target",
    "cann",
    "rank",
    "kernel",
    "host_read",
    "host_write",
    "UB",
    "L1",
    "L0C",
];

impl<'i, 't> Walker<'i, 't> {
    pub fn new(index: &'i Index<'t>, aliases: &'i [Vec<String>]) -> Self {
        Walker {
            index,
            aliases,
            blocks: vec![Vec::new()],
            owned: vec![Vec::new()],
            prelude: Vec::new(),
            frames: Vec::new(),
            touched: std::collections::BTreeSet::new(),
            heap: Vec::new(),
            threads: Vec::new(),
            started: HashMap::new(),
            received: Vec::new(),
            entry_object: None,
            entry_attrs: HashMap::new(),
            current: Value::DefaultStream(0),
            device: 0,
            other_currents: std::collections::BTreeMap::new(),
            program_device: devices::ProgramDevice::Start,
            home_declared: false,
            stream_devices: HashMap::new(),
            tensor_devices: HashMap::new(),
            capture_stream: None,
            capture: None,
            torch_events: std::collections::HashSet::new(),
            recorded: std::collections::HashSet::new(),
            names: HashMap::new(),
            written: HashMap::new(),
            hint: None,
            inlined: Vec::new(),
            nested: Vec::new(),
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
            if let Value::Object(slot) = object {
                self.entry_object = Some(slot);
            }
            args.push(object);
        }
        self.call_function(def_at, args, Vec::new(), def.node);
        let end = def.node.end_byte().saturating_sub(1)..def.node.end_byte();
        let end = self.index.units[def.unit].base + end.start..self.index.units[def.unit].base + end.end;
        let mut stmts = std::mem::take(&mut self.prelude);
        stmts.extend(self.pop_block(end));
        Walked {
            stmts,
            api_calls: self.api_calls,
            unresolved: self.unresolved,
            incomplete: self.incomplete,
            unchecked: self.unchecked,
            touched: self.touched,
            written: self.written.into_iter().collect(),
        }
    }

    // ---- helpers -------------------------------------------------------------------

    /// Walk on in a frame of code of module `unit`: every read of a file's code is in
    /// a frame of its unit.
    fn enter(&mut self, unit: usize, locals: HashMap<String, Value>) {
        self.touched.insert(unit);
        self.frames.push(Frame::new(unit, locals));
    }

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
        self.note_at(range, message, touches);
    }

    /// As `note_touching`, at a range of the run's byte space.
    fn note_at(&mut self, range: Range<usize>, message: impl Into<String>, touches: Vec<String>) {
        let message = message.into();
        // The same call left out again (in a loop, from another caller) may use other
        // objects: each of them is one a finding may rest on.
        match self
            .unresolved
            .iter_mut()
            .find(|(seen, text, _)| *seen == range && *text == message)
        {
            Some((_, _, seen)) => {
                for name in touches {
                    if !seen.contains(&name) {
                        seen.push(name);
                    }
                }
            }
            None => self.unresolved.push((range, message, touches)),
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
        let mut stmt = ast::Stmt { kind, span };
        if self.joins_capture(&stmt) {
            let mut touched = syntax::objects_used(std::slice::from_ref(&stmt));
            // A default stream's placeholder names no object of its own.
            touched.retain(|name| !name.starts_with('_'));
            let range = stmt.span.clone();
            self.note_at(
                range,
                "work joined to a graph capture from another stream (an event of a capturing stream, or waiting for one) is not followed: the model captures one stream",
                touched,
            );
            return;
        }
        self.place_on_device(&mut stmt);
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    /// A fresh `.sync` name for an object the code writes `text` (`self.stream`,
    /// `events[0]`), remembered for messages.
    fn fresh_written(&mut self, text: &str) -> String {
        let name = self.fresh_name(text);
        self.remember_written(&name, text);
        name
    }

    /// Remember that object `name` is written `text`, if that is one short line.
    pub(super) fn remember_written(&mut self, name: &str, text: &str) {
        if text.len() <= 48 && !text.contains('\n') {
            self.written.insert(name.to_string(), text.to_string());
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
        if RESERVED.contains(&name.as_str()) || syncguard_grammar::lexer::Keyword::is_keyword(&name) {
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

    /// `let NAME = API(args);` at the top of the program: an object every block sees.
    fn declare(&mut self, name: &str, api: &str, args: Vec<ast::Expr>, span: Range<usize>) {
        self.prelude.push(ast::Stmt {
            kind: ast::StmtKind::Let {
                pattern: ast::Pattern::Name(ident(name, span.clone())),
                value: call_expr(api, args, Vec::new(), span.clone()),
            },
            span,
        });
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
        self.prelude.push(ast::Stmt {
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
        let function = Function {
            callee: Callee::Indexed(def_at),
            unit: def.unit,
            node: def.node,
            name: def.qualified(),
        };
        self.inline(&function, HashMap::new(), args, kwargs, at).0
    }

    /// Call a function nested in another (`def worker(t): ...` inside a test): it sees
    /// the locals of the function that defined it where that function is the one
    /// calling it, and the lists and dicts it changes there are changed for that
    /// function too (Python shares them).
    fn call_nested(&mut self, nested_at: usize, args: Vec<Value>, kwargs: Vec<(String, Value)>, at: Node) -> Value {
        let Some(nested) = self.nested.get(nested_at) else {
            return Value::Unknown;
        };
        let (unit, node, depth) = (nested.unit, nested.node, nested.depth);
        let name = node
            .child_by_field_name("name")
            .map_or_else(String::new, |name| text(&self.index.units[unit], name).to_string());
        let encloses = self.frames.len() == depth;
        let captured = match self.frames.last() {
            Some(frame) if encloses => frame.locals.clone(),
            _ => HashMap::new(),
        };
        let function = Function {
            callee: Callee::Nested(nested_at),
            unit,
            node,
            name,
        };
        let (value, locals) = self.inline(&function, captured, args, kwargs, at);
        if encloses && let Some(frame) = self.frames.last_mut() {
            for (name, changed) in locals {
                let shared = frame
                    .locals
                    .get(&name)
                    .is_some_and(|before| matches!(before, Value::List(_) | Value::Dict(_)) && *before != changed);
                if shared && matches!(changed, Value::List(_) | Value::Dict(_)) {
                    frame.locals.insert(name, changed);
                }
            }
        }
        value
    }

    /// Walk a function's body with its parameters bound (over `locals`): its result
    /// and its locals at the end.
    fn inline(
        &mut self,
        function: &Function<'t>,
        locals: HashMap<String, Value>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        at: Node,
    ) -> (Value, HashMap<String, Value>) {
        if self.inlined.contains(&function.callee) {
            self.note(
                at,
                format!("`{}` calls itself: the recursive call is not followed", function.name),
            );
            return (Value::Unknown, HashMap::new());
        }
        if self.inlined.len() >= MAX_INLINE {
            self.note(
                at,
                format!(
                    "calls nested deeper than {MAX_INLINE}: `{}` is not followed",
                    function.name
                ),
            );
            return (Value::Unknown, HashMap::new());
        }
        // The name the caller stores the result under is the result's, not that of the
        // first object the body makes.
        let target = self.hint.take();
        let start = self.blocks.last().map_or(0, Vec::len);
        let locals = self.bind_parameters(function, locals, args, kwargs);
        self.enter(function.unit, locals);
        self.inlined.push(function.callee);
        if let Some(body) = function.node.child_by_field_name("body") {
            self.block(body);
        }
        self.inlined.pop();
        let frame = self.frames.pop().expect("the frame pushed above");
        self.unchecked
            .extend(frame.pending.into_iter().map(|(_, range, api)| (range, api)));
        let mut result = frame.results.value();
        if let Some(target) = target {
            self.name_result(&mut result, &target, start);
        }
        (result, frame.locals)
    }

    /// A function's result that the call made (declared in the current block from
    /// `start`) is named after the caller's `target` (`x = make_input()`: `x`).
    fn name_result(&mut self, result: &mut Value, target: &str, start: usize) {
        let (Value::Buffer(made, _) | Value::Stream(made)) = &*result else {
            return;
        };
        let made = made.clone();
        let Some(block) = self.blocks.last() else {
            return;
        };
        let declared_here = block.get(start..).is_some_and(|made_here| {
            made_here.iter().any(|stmt| {
                matches!(&stmt.kind, ast::StmtKind::Let { pattern: ast::Pattern::Name(name), .. } if name.name == made)
            })
        });
        let wanted = target.strip_prefix("self.").unwrap_or(target);
        if !declared_here || made.starts_with(wanted) {
            return;
        }
        let new = self.fresh_written(target);
        let renamed = HashMap::from([(made.clone(), new.clone())]);
        if let Some(block) = self.blocks.last_mut() {
            syntax::rename(&mut block[start..], &renamed);
        }
        self.for_each_value(|value| value.rename(&renamed));
        result.rename(&renamed);
        for devices in [&mut self.tensor_devices, &mut self.stream_devices] {
            if let Some(device) = devices.remove(&made) {
                devices.insert(new.clone(), device);
            }
        }
    }

    /// A function's parameters bound to `args` and `kwargs` (or their defaults), over
    /// `locals`. The entry point's own parameters that no argument gives come from
    /// outside.
    fn bind_parameters(
        &mut self,
        function: &Function<'t>,
        mut locals: HashMap<String, Value>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
    ) -> HashMap<String, Value> {
        let unit = &self.index.units[function.unit];
        let mut positional = args.into_iter();
        let Some(parameters) = function.node.child_by_field_name("parameters") else {
            return locals;
        };
        let mut cursor = parameters.walk();
        for param in parameters.named_children(&mut cursor) {
            let (name, default) = match param.kind() {
                "identifier" | "typed_parameter" => (parameter_name(param), None),
                "default_parameter" | "typed_default_parameter" => {
                    (param.child_by_field_name("name"), param.child_by_field_name("value"))
                }
                _ => (None, None),
            };
            let Some(name_node) = name else {
                continue;
            };
            let name = text(unit, name_node).to_string();
            let value = match kwargs.iter().find(|(key, _)| *key == name) {
                // Keyword arguments do not take a positional slot.
                Some((_, value)) => value.clone(),
                None => match (positional.next(), default) {
                    (Some(value), _) => value,
                    (None, Some(default)) => {
                        // Defaults are evaluated in the function's module.
                        self.enter(function.unit, HashMap::new());
                        let value = self.eval(default);
                        self.frames.pop();
                        value
                    }
                    (None, None) if self.inlined.is_empty() => {
                        let annotation = param.child_by_field_name("type").map(|node| text(unit, node));
                        self.enter(function.unit, HashMap::new());
                        let value = self.receive(&name, name_node, annotation);
                        self.frames.pop();
                        value
                    }
                    (None, None) => Value::Unknown,
                },
            };
            locals.insert(name, value);
        }
        locals
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

/// The name a plain or annotated parameter declares (`x`, `x: torch.Tensor`).
fn parameter_name(param: Node) -> Option<Node> {
    match param.kind() {
        "identifier" => Some(param),
        _ => param.named_child(0).filter(|node| node.kind() == "identifier"),
    }
}

/// Whether a block only fails: it raises or exits, with no other statement that
/// could synchronize.
fn is_error_exit(block: Node, unit: &Unit) -> bool {
    let mut cursor = block.walk();
    let stmts: Vec<Node> = block.named_children(&mut cursor).collect();
    are_error_exit(&stmts, unit)
}

/// Whether statements only fail (as `is_error_exit`).
fn are_error_exit(stmts: &[Node], unit: &Unit) -> bool {
    let stmts: Vec<Node> = stmts.iter().copied().filter(|stmt| stmt.kind() != "comment").collect();
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
            // A statement that may return first (`if a: return x`) leaves another way.
            !text.contains("return")
                && !text.contains("acl.")
                && !text.contains("synchronize")
                && !text.contains("record")
                && !text.contains("wait")
        })
}

/// Whether every arm of an `if` statement ends in `return` or `raise` and it has no
/// `else`: the code after it runs only where no arm is taken.
fn arms_all_return(stmt: Node) -> bool {
    let ends_in_exit = |block: Option<Node>| {
        block.is_some_and(|block| {
            let mut cursor = block.walk();
            let last = block
                .named_children(&mut cursor)
                .filter(|child| child.kind() != "comment")
                .last();
            last.is_some_and(|last| matches!(last.kind(), "return_statement" | "raise_statement"))
        })
    };
    if !ends_in_exit(stmt.child_by_field_name("consequence")) {
        return false;
    }
    let mut cursor = stmt.walk();
    let alternatives: Vec<Node> = stmt.children_by_field_name("alternative", &mut cursor).collect();
    alternatives.iter().all(|alternative| {
        alternative.kind() == "elif_clause" && ends_in_exit(alternative.child_by_field_name("consequence"))
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

/// Whether a function compares tensors on the host: an assertion (`assertEqual`,
/// `torch.testing.assert_close`), `torch.allclose`, `torch.equal`. Its tensors are read
/// on the host, through the blocking copy torch makes for a device tensor.
fn is_host_check(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    let last = last.trim_start_matches('_');
    last.starts_with("assert") || matches!(last, "allclose" | "equal")
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

/// `API(args);`
fn call_stmt(api: &str, args: Vec<ast::Expr>, span: Range<usize>) -> ast::Stmt {
    let kind = match call_expr(api, args, Vec::new(), span.clone()).kind {
        ast::ExprKind::Call(call) => ast::StmtKind::Call(*call),
        _ => ast::StmtKind::Error,
    };
    ast::Stmt { kind, span }
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
