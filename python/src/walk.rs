//! The walk of one entry point: statements in order, helpers and methods inlined,
//! values followed, catalogued calls and torch operations emitted as `.sync` statements.

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
    pub unresolved: Vec<(Range<usize>, String)>,
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
    unresolved: Vec<(Range<usize>, String)>,
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
        let range = self.range(node);
        let message = message.into();
        if !self
            .unresolved
            .iter()
            .any(|(seen, text)| *seen == range && *text == message)
        {
            self.unresolved.push((range, message));
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
                vec![name_expr(&event, span.clone())],
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
                    start: Box::new(int_expr(0, span.clone())),
                    end: Some(Box::new(int_expr(high, span.clone()))),
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

    // ---- statements ----------------------------------------------------------------

    fn block(&mut self, block: Node<'t>) -> Flow {
        if self.nesting >= MAX_NESTING {
            self.note(
                block,
                format!("blocks nested deeper than {MAX_NESTING} are not followed"),
            );
            return Flow::Normal;
        }
        self.nesting += 1;
        let mut flow = Flow::Normal;
        let mut cursor = block.walk();
        let children: Vec<Node<'t>> = block.named_children(&mut cursor).collect();
        for stmt in children {
            if !self.step(stmt) {
                break;
            }
            flow = self.statement(stmt);
            if flow != Flow::Normal {
                break;
            }
        }
        self.nesting -= 1;
        flow
    }

    fn statement(&mut self, stmt: Node<'t>) -> Flow {
        match stmt.kind() {
            "expression_statement" => {
                let mut cursor = stmt.walk();
                let children: Vec<Node<'t>> = stmt.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "assignment" => self.assignment(child),
                        "augmented_assignment" => self.augmented(child),
                        _ => {
                            self.last_api = None;
                            self.eval(child);
                            if let Some((range, api)) = self.last_api.take()
                                && range == self.range(child)
                                && failure_changes_synchronization(api)
                            {
                                self.unchecked.push((range, api));
                            }
                        }
                    }
                }
                Flow::Normal
            }
            "if_statement" => self.if_statement(stmt),
            "for_statement" => self.for_statement(stmt),
            "while_statement" => self.while_statement(stmt),
            "with_statement" => self.with_statement(stmt),
            "try_statement" => {
                let mut flow = Flow::Normal;
                if let Some(body) = stmt.child_by_field_name("body") {
                    flow = self.block(body);
                }
                let mut cursor = stmt.walk();
                let clauses: Vec<Node<'t>> = stmt.named_children(&mut cursor).collect();
                for clause in clauses {
                    match clause.kind() {
                        // The handlers run when something failed: every call succeeds.
                        "else_clause" if flow == Flow::Normal => {
                            if let Some(body) = clause.child_by_field_name("body") {
                                flow = self.block(body);
                            }
                        }
                        "finally_clause" => {
                            let mut inner = clause.walk();
                            let body = clause.named_children(&mut inner).find(|n| n.kind() == "block");
                            if let Some(body) = body {
                                let finally = self.block(body);
                                if finally != Flow::Normal {
                                    flow = finally;
                                }
                            }
                        }
                        _ => {}
                    }
                }
                flow
            }
            "return_statement" => {
                let value = match stmt.named_child(0) {
                    Some(expr) => self.eval(expr),
                    None => Value::None,
                };
                self.frame().returned = value;
                Flow::Return
            }
            "break_statement" => Flow::Break,
            "continue_statement" => Flow::Continue,
            "raise_statement" => Flow::Return,
            "assert_statement" | "delete_statement" | "print_statement" => {
                let mut cursor = stmt.walk();
                let children: Vec<Node<'t>> = stmt.named_children(&mut cursor).collect();
                for child in children {
                    self.eval(child);
                }
                Flow::Normal
            }
            "function_definition" | "class_definition" | "decorated_definition" => {
                if let Some(name) = stmt.child_by_field_name("name") {
                    let name = self.text(name).to_string();
                    self.frame().locals.insert(name, Value::Unknown);
                }
                Flow::Normal
            }
            "ERROR" => {
                self.note(stmt, "code the Python grammar cannot read is not followed");
                Flow::Normal
            }
            _ => Flow::Normal,
        }
    }

    fn assignment(&mut self, node: Node<'t>) {
        let (Some(left), Some(right)) = (node.child_by_field_name("left"), node.child_by_field_name("right")) else {
            return;
        };
        // `a = b = value`
        if right.kind() == "assignment" {
            self.assignment(right);
            if let Some(inner) = right.child_by_field_name("left") {
                let value = self.eval(inner);
                self.store(left, value);
            }
            return;
        }
        self.hint = Some(self.target_name(left));
        self.last_api = None;
        let value = self.eval(right);
        self.hint = None;
        let direct = self.last_api.take().filter(|(range, _)| *range == self.range(right));
        self.store(left, value);
        if let Some((range, api)) = direct
            && failure_changes_synchronization(api)
        {
            // pyACL returns the code last: `ret = f()`, `stream, ret = f()`.
            let ret_target = match left.kind() {
                "pattern_list" | "tuple_pattern" | "list_pattern" => {
                    let mut cursor = left.walk();
                    left.named_children(&mut cursor).last()
                }
                _ => Some(left),
            };
            if let Some(target) = ret_target {
                let name = self.text(target).to_string();
                if target.kind() == "identifier" && name != "_" {
                    self.frame().pending.push((name, range, api));
                } else if name == "_" {
                    self.unchecked.push((range, api));
                }
            }
        }
    }

    /// The name a value stored in `target` gets in the program (`self.events[0]` →
    /// `self_events_0`).
    fn target_name(&self, target: Node) -> String {
        match target.kind() {
            "pattern_list" | "tuple_pattern" | "list_pattern" => target
                .named_child(0)
                .map_or_else(|| "v".to_string(), |first| self.target_name(first)),
            _ => self.text(target).to_string(),
        }
    }

    fn store(&mut self, target: Node<'t>, value: Value) {
        match target.kind() {
            "identifier" => {
                let name = self.text(target).to_string();
                let frame = self.frame();
                // A code assigned again before it was read is discarded.
                if let Some(position) = frame.pending.iter().position(|(pending, ..)| *pending == name) {
                    let (_, range, api) = frame.pending.remove(position);
                    self.unchecked.push((range, api));
                }
                self.frame().locals.insert(name, value);
            }
            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                let mut cursor = target.walk();
                let targets: Vec<Node<'t>> = target.named_children(&mut cursor).collect();
                let items = match value {
                    Value::Tuple(items) | Value::List(items) if items.len() == targets.len() => items,
                    _ => vec![Value::Unknown; targets.len()],
                };
                for (target, item) in targets.into_iter().zip(items) {
                    self.store(target, item);
                }
            }
            "attribute" => {
                let (Some(object), Some(attr)) = (
                    target.child_by_field_name("object"),
                    target.child_by_field_name("attribute"),
                ) else {
                    return;
                };
                let object = self.eval(object);
                let attr = self.text(attr).to_string();
                if let Value::Object(slot) = object
                    && let Some(obj) = self.heap.get_mut(slot)
                {
                    obj.attrs.insert(attr, value);
                }
            }
            "subscript" => {
                let Some(base) = target.child_by_field_name("value") else {
                    return;
                };
                let container = self.eval(base);
                match container {
                    // `h[0] = x`, `h[:] = data`: the host writes the buffer; on a device
                    // tensor, a kernel on the current stream does (`index_put_`).
                    Value::Buffer(name, Place::Device) => {
                        let written = Value::Buffer(name, Place::Device);
                        self.tensor_op(target, "index_put_", &[value, written.clone()], Some(written));
                    }
                    Value::Buffer(name, place) => {
                        let span = self.range(target);
                        self.host_access(&name, place, true, span);
                    }
                    Value::Dict(mut pairs) => {
                        let key = target.child_by_field_name("subscript").map(|n| self.eval(n));
                        match key.filter(is_key) {
                            Some(key) => {
                                match pairs.iter().position(|(k, _)| equal(k, &key) == Some(true)) {
                                    Some(at) => pairs[at].1 = value,
                                    None if pairs.len() < MAX_ITEMS => pairs.push((key, value)),
                                    None => return self.store(base, Value::Unknown),
                                }
                                self.store(base, Value::Dict(pairs));
                            }
                            None => self.store(base, Value::Unknown),
                        }
                    }
                    Value::List(mut items) => {
                        let index = target.child_by_field_name("subscript").map(|n| self.eval(n));
                        match index.and_then(|index| index.int()) {
                            Some(index) => {
                                let len = items.len() as i64;
                                let at = if index < 0 { index + len } else { index };
                                if (0..len).contains(&at) {
                                    items[at as usize] = value;
                                    self.store(base, Value::List(items));
                                }
                            }
                            None => self.store(base, Value::Unknown),
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn augmented(&mut self, node: Node<'t>) {
        let (Some(left), Some(right), Some(op)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
            node.child_by_field_name("operator"),
        ) else {
            return;
        };
        let current = self.eval(left);
        let value = self.eval(right);
        let op = self.text(op).trim_end_matches('=').to_string();
        let result = match (&current, &value) {
            (Value::Buffer(..), _) | (_, Value::Buffer(..)) => {
                // `x += y` on a tensor: in place.
                let name = format!("{}_", operator_name(&op));
                self.tensor_op(node, &name, &[current.clone(), value], Some(current.clone()))
            }
            (Value::List(items), Value::List(more)) if op == "+" => {
                Value::List(items.iter().chain(more).cloned().collect())
            }
            _ => arith(&op, &current, &value),
        };
        self.store(left, result);
    }

    fn condition(&mut self, cond: Node<'t>) -> Option<bool> {
        self.eval(cond).truth()
    }

    fn if_statement(&mut self, stmt: Node<'t>) -> Flow {
        let Some(cond) = stmt.child_by_field_name("condition") else {
            return Flow::Normal;
        };
        // The arms in order: (condition, body); the else arm has no condition.
        let mut arms: Vec<(Option<Node<'t>>, Node<'t>)> = Vec::new();
        if let Some(body) = stmt.child_by_field_name("consequence") {
            arms.push((Some(cond), body));
        }
        let mut cursor = stmt.walk();
        for alternative in stmt.children_by_field_name("alternative", &mut cursor) {
            match alternative.kind() {
                "elif_clause" => {
                    if let (Some(cond), Some(body)) = (
                        alternative.child_by_field_name("condition"),
                        alternative.child_by_field_name("consequence"),
                    ) {
                        arms.push((Some(cond), body));
                    }
                }
                "else_clause" => {
                    if let Some(body) = alternative.child_by_field_name("body") {
                        arms.push((None, body));
                    }
                }
                _ => {}
            }
        }
        self.arms(stmt, &arms)
    }

    /// `if`/`elif`/`else` arms from the first: known conditions decide, an unknown
    /// one becomes a choice between its arm and the rest.
    fn arms(&mut self, stmt: Node<'t>, arms: &[(Option<Node<'t>>, Node<'t>)]) -> Flow {
        let Some(((cond, body), rest)) = arms.split_first() else {
            return Flow::Normal;
        };
        let Some(cond) = cond else {
            return self.block(*body);
        };
        match self.condition(*cond) {
            Some(true) => self.block(*body),
            Some(false) => self.arms(stmt, rest),
            None => {
                // An arm that only fails (raises, exits) is an error exit: not taken.
                if is_error_exit(*body, self.unit()) {
                    return self.arms(stmt, rest);
                }
                if rest
                    .first()
                    .is_some_and(|(_, other)| is_error_exit(*other, self.unit()))
                    && rest.len() == 1
                {
                    return self.block(*body);
                }
                let Some(name) = self.choice(*cond, "branch", 1) else {
                    return self.arms(stmt, rest);
                };
                let before = self.snapshot();
                self.push_block();
                let then_flow = self.block(*body);
                let then_stmts = self.pop_block(self.range(*body));
                let after_then = self.snapshot();
                self.restore(before);
                self.push_block();
                let else_flow = self.arms(stmt, rest);
                let else_stmts = self.pop_block(self.range(stmt));
                self.merge(after_then);
                if then_flow == Flow::Return || else_flow == Flow::Return {
                    self.note(
                        *cond,
                        "a return under a condition with no known value: the code after it is taken to run in every case",
                    );
                }
                if [then_flow, else_flow]
                    .iter()
                    .any(|flow| matches!(flow, Flow::Break | Flow::Continue))
                {
                    self.note(
                        *cond,
                        "a break or continue under a condition with no known value: the loop is taken to go on",
                    );
                }
                let span = self.range(stmt);
                let cond_expr = binary(
                    ast::BinaryOp::Eq,
                    name_expr(&name, self.range(*cond)),
                    int_expr(1, self.range(*cond)),
                );
                self.emit(
                    ast::StmtKind::If {
                        cond: cond_expr,
                        then: ast::Block {
                            stmts: then_stmts,
                            span: span.clone(),
                        },
                        otherwise: (!else_stmts.is_empty()).then(|| {
                            ast::Else::Block(ast::Block {
                                stmts: else_stmts,
                                span: span.clone(),
                            })
                        }),
                    },
                    span,
                );
                Flow::Normal
            }
        }
    }

    fn for_statement(&mut self, stmt: Node<'t>) -> Flow {
        let (Some(left), Some(right), Some(body)) = (
            stmt.child_by_field_name("left"),
            stmt.child_by_field_name("right"),
            stmt.child_by_field_name("body"),
        ) else {
            return Flow::Normal;
        };
        let items = self.iterable(right);
        match items {
            Some(items) => {
                for (count, item) in items.into_iter().enumerate() {
                    if count as i64 >= MAX_ITERATIONS {
                        self.note(stmt, format!("only the first {MAX_ITERATIONS} iterations are checked"));
                        break;
                    }
                    if self.incomplete.is_some() {
                        break;
                    }
                    self.store(left, item);
                    match self.block(body) {
                        Flow::Break => break,
                        Flow::Return => return Flow::Return,
                        Flow::Normal | Flow::Continue => {}
                    }
                }
                Flow::Normal
            }
            None => {
                // A loop over something the extraction cannot count: 0, 1 or 2 times.
                let Some(name) = self.choice(right, "loop", 2) else {
                    return Flow::Normal;
                };
                self.unknown_loop(stmt, body, Some(left), &name, 1);
                Flow::Normal
            }
        }
    }

    /// Iteration `k` (and the next inside it) of a loop run `name` times, up to 2.
    fn unknown_loop(&mut self, stmt: Node<'t>, body: Node<'t>, var: Option<Node<'t>>, name: &str, k: i64) {
        if k > 2 {
            return;
        }
        let before = self.snapshot();
        self.push_block();
        if let Some(var) = var {
            self.store(var, Value::Unknown);
        }
        let flow = self.block(body);
        if flow == Flow::Normal || flow == Flow::Continue {
            self.unknown_loop(stmt, body, var, name, k + 1);
        }
        let stmts = self.pop_block(self.range(body));
        self.merge(before);
        let span = self.range(stmt);
        let cond = binary(
            ast::BinaryOp::Ge,
            name_expr(name, span.clone()),
            int_expr(k, span.clone()),
        );
        self.emit(
            ast::StmtKind::If {
                cond,
                then: ast::Block {
                    stmts,
                    span: span.clone(),
                },
                otherwise: None,
            },
            span,
        );
    }

    /// The items a `for` walks, where known: `range(...)`, a list or tuple, `enumerate`
    /// and `zip` of those.
    fn iterable(&mut self, node: Node<'t>) -> Option<Vec<Value>> {
        if node.kind() == "call"
            && let Some(function) = node.child_by_field_name("function")
            && function.kind() == "identifier"
        {
            let name = self.text(function);
            let args: Vec<Value> = self.positional_args(node);
            match name {
                "range" => {
                    let ints: Option<Vec<i64>> = args.iter().map(Value::int).collect();
                    let (start, stop, step) = match ints?.as_slice() {
                        [stop] => (0, *stop, 1),
                        [start, stop] => (*start, *stop, 1),
                        [start, stop, step] if *step != 0 => (*start, *stop, *step),
                        _ => return None,
                    };
                    let mut items = Vec::new();
                    let mut at = start;
                    while (step > 0 && at < stop) || (step < 0 && at > stop) {
                        items.push(Value::Int(at));
                        if items.len() as i64 > MAX_ITERATIONS {
                            break;
                        }
                        at = at.checked_add(step)?;
                    }
                    return Some(items);
                }
                "enumerate" => {
                    let items = sequence(args.first()?)?;
                    return Some(
                        items
                            .into_iter()
                            .enumerate()
                            .map(|(i, item)| Value::Tuple(vec![Value::Int(i as i64), item]))
                            .collect(),
                    );
                }
                "zip" => {
                    let lists: Option<Vec<Vec<Value>>> = args.iter().map(sequence).collect();
                    let lists = lists?;
                    let len = lists.iter().map(Vec::len).min().unwrap_or(0);
                    return Some(
                        (0..len)
                            .map(|i| Value::Tuple(lists.iter().map(|list| list[i].clone()).collect()))
                            .collect(),
                    );
                }
                "reversed" => {
                    let mut items = sequence(args.first()?)?;
                    items.reverse();
                    return Some(items);
                }
                _ => {}
            }
        }
        let value = self.eval(node);
        sequence(&value)
    }

    fn while_statement(&mut self, stmt: Node<'t>) -> Flow {
        let (Some(cond), Some(body)) = (stmt.child_by_field_name("condition"), stmt.child_by_field_name("body")) else {
            return Flow::Normal;
        };
        if self.polling_loop(stmt) {
            return Flow::Normal;
        }
        for iteration in 0..=MAX_ITERATIONS {
            if self.incomplete.is_some() {
                break;
            }
            match self.condition(cond) {
                Some(false) => return Flow::Normal,
                Some(true) if iteration < MAX_ITERATIONS => match self.block(body) {
                    Flow::Break => return Flow::Normal,
                    Flow::Return => return Flow::Return,
                    Flow::Normal | Flow::Continue => {}
                },
                Some(true) => {
                    self.note(stmt, format!("only the first {MAX_ITERATIONS} iterations are checked"));
                    return Flow::Normal;
                }
                None => {
                    if iteration == 0 {
                        let Some(name) = self.choice(cond, "loop", 2) else {
                            return Flow::Normal;
                        };
                        self.unknown_loop(stmt, body, None, &name, 1);
                    } else {
                        self.note(cond, "a loop condition with no known value: the loop ends here");
                    }
                    return Flow::Normal;
                }
            }
        }
        Flow::Normal
    }

    /// A loop that polls one query until the work is done (`while True:` with
    /// `status, ret = acl.rt.query_event_status(ev)` and a `break` once it is complete,
    /// `while not ev.query(): time.sleep(...)`) and does nothing else that
    /// synchronizes: the `.sync` busy-wait, which orders what follows after the work.
    fn polling_loop(&mut self, stmt: Node<'t>) -> bool {
        let never = stmt
            .child_by_field_name("condition")
            .is_some_and(|cond| matches!(self.text(cond), "False" | "0" | "None"));
        if never {
            return false;
        }
        let calls: Vec<Node<'t>> = crate::index::preorder(stmt)
            .into_iter()
            .take(4096)
            .filter(|node| node.kind() == "call")
            .collect();
        let mut query = None;
        for call in &calls {
            let Some(function) = call.child_by_field_name("function") else {
                return false;
            };
            let callee = self.text(function);
            let last = callee.rsplit('.').next().unwrap_or(callee);
            match last {
                "query_event_status" | "query_event_wait_status" | "query" if query.is_none() => {
                    query = Some((*call, last, function));
                }
                "sleep" | "print" | "debug" | "info" | "warning" | "time" | "perf_counter" | "monotonic" | "range"
                | "len" | "format" => {}
                _ => return false,
            }
        }
        let Some((call, last, function)) = query else {
            return false;
        };
        let (target, api, done) = match last {
            "query" => {
                let Some(receiver) = function.child_by_field_name("object") else {
                    return false;
                };
                (receiver, None, None)
            }
            _ => {
                let (args, _) = self.argument_nodes(call);
                let Some(first) = args.first() else {
                    return false;
                };
                let (api, done) = if last == "query_event_status" {
                    ("acl.rt.query_event_status", "ACL_EVENT_RECORDED_STATUS_COMPLETE")
                } else {
                    ("acl.rt.query_event_wait_status", "ACL_EVENT_WAIT_STATUS_COMPLETE")
                };
                (*first, Some(api), Some(done))
            }
        };
        let value = self.eval(target);
        let span = self.range(call);
        let (api, subject, done) = match (&value, api) {
            (Value::Event(event), Some(api)) => (api, name_expr(event, span.clone()), done.unwrap_or_default()),
            (Value::Event(event), None) => {
                if self.never_recorded(event) {
                    // torch: querying an event never recorded is done at once.
                    return true;
                }
                (
                    "acl.rt.query_event_status",
                    name_expr(event, span.clone()),
                    "ACL_EVENT_RECORDED_STATUS_COMPLETE",
                )
            }
            (Value::Stream(_) | Value::DefaultStream, None) => {
                let Some(stream) = self.stream_expr(&value, call) else {
                    return false;
                };
                ("aclrtStreamQuery", stream, "ACL_STREAM_STATUS_COMPLETE")
            }
            _ => return false,
        };
        self.api_calls += 1;
        let cond = binary(
            ast::BinaryOp::Ne,
            call_expr(api, vec![subject], Vec::new(), span.clone()),
            name_expr(done, span.clone()),
        );
        let stmt_span = self.range(stmt);
        self.emit(
            ast::StmtKind::While {
                cond,
                body: ast::Block {
                    stmts: Vec::new(),
                    span: stmt_span.clone(),
                },
            },
            stmt_span,
        );
        true
    }

    fn with_statement(&mut self, stmt: Node<'t>) -> Flow {
        let saved = self.current.clone();
        for item in preorder_kind(stmt, "with_item") {
            let Some(value_node) = item.child_by_field_name("value") else {
                continue;
            };
            let (expr, alias) = if value_node.kind() == "as_pattern" {
                (value_node.named_child(0), value_node.child_by_field_name("alias"))
            } else {
                (Some(value_node), None)
            };
            let Some(expr) = expr else {
                continue;
            };
            let value = self.eval(expr);
            if let Value::StreamContext(stream) = &value {
                self.current = (**stream).clone();
            }
            if let Some(alias) = alias
                && let Some(target) = alias.named_child(0)
            {
                let stored = match value {
                    Value::StreamContext(stream) => *stream,
                    other => other,
                };
                self.store(target, stored);
            }
        }
        let flow = match stmt.child_by_field_name("body") {
            Some(body) => self.block(body),
            None => Flow::Normal,
        };
        self.current = saved;
        flow
    }

    // ---- expressions ---------------------------------------------------------------

    fn positional_args(&mut self, call: Node<'t>) -> Vec<Value> {
        self.arguments(call).0
    }

    /// A call's arguments, evaluated: positional and keyword. The name the call's
    /// result will be stored under is not theirs.
    fn arguments(&mut self, call: Node<'t>) -> (Vec<Value>, Vec<(String, Value)>) {
        let hint = self.hint.take();
        let arguments = self.arguments_inner(call);
        self.hint = hint;
        arguments
    }

    fn arguments_inner(&mut self, call: Node<'t>) -> (Vec<Value>, Vec<(String, Value)>) {
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        let Some(list) = call.child_by_field_name("arguments") else {
            return (positional, keywords);
        };
        let mut cursor = list.walk();
        let children: Vec<Node<'t>> = list.named_children(&mut cursor).collect();
        for arg in children {
            match arg.kind() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) =
                        (arg.child_by_field_name("name"), arg.child_by_field_name("value"))
                    {
                        let name = self.text(name).to_string();
                        let value = self.eval(value);
                        keywords.push((name, value));
                    }
                }
                "comment" => {}
                "list_splat" | "dictionary_splat" => {
                    if let Some(inner) = arg.named_child(0) {
                        self.eval(inner);
                    }
                    positional.push(Value::Unknown);
                }
                _ => positional.push(self.eval(arg)),
            }
        }
        (positional, keywords)
    }

    /// A call's argument nodes: positional ones and keyword ones by name.
    fn argument_nodes(&self, call: Node<'t>) -> (Vec<Node<'t>>, Vec<(String, Node<'t>)>) {
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        if let Some(list) = call.child_by_field_name("arguments") {
            let mut cursor = list.walk();
            for arg in list.named_children(&mut cursor) {
                match arg.kind() {
                    "keyword_argument" => {
                        if let (Some(name), Some(value)) =
                            (arg.child_by_field_name("name"), arg.child_by_field_name("value"))
                        {
                            keywords.push((self.text(name).to_string(), value));
                        }
                    }
                    "comment" => {}
                    _ => positional.push(arg),
                }
            }
        }
        (positional, keywords)
    }

    pub fn eval(&mut self, node: Node<'t>) -> Value {
        if self.nesting >= MAX_NESTING {
            self.note(
                node,
                format!("expressions nested deeper than {MAX_NESTING} are not followed"),
            );
            return Value::Unknown;
        }
        if !self.step(node) {
            return Value::Unknown;
        }
        self.nesting += 1;
        let value = self.eval_inner(node);
        self.nesting -= 1;
        value
    }

    fn eval_inner(&mut self, node: Node<'t>) -> Value {
        match node.kind() {
            "integer" => parse_int(self.text(node)).map_or(Value::Unknown, Value::Int),
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "none" => Value::None,
            "string" => {
                let raw = self.text(node);
                if raw.starts_with(['f', 'F']) {
                    return Value::Unknown;
                }
                let mut cursor = node.walk();
                let content: String = node
                    .named_children(&mut cursor)
                    .filter(|child| child.kind() == "string_content")
                    .map(|child| self.text(child))
                    .collect();
                Value::Str(content)
            }
            "concatenated_string" => Value::Unknown,
            "identifier" => self.identifier(node),
            "attribute" => self.attribute(node),
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => self.eval(inner),
                None => Value::Unknown,
            },
            "tuple" | "list" | "expression_list" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let items: Vec<Value> = children.into_iter().map(|child| self.eval(child)).collect();
                if items.len() > MAX_ITEMS {
                    Value::Unknown
                } else if node.kind() == "list" {
                    Value::List(items)
                } else {
                    Value::Tuple(items)
                }
            }
            "list_comprehension" | "generator_expression" => self.comprehension(node),
            "dictionary" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let hint = self.hint.clone();
                let mut pairs = Vec::new();
                let mut known = true;
                for child in children {
                    let (Some(key), Some(value)) =
                        (child.child_by_field_name("key"), child.child_by_field_name("value"))
                    else {
                        // `**other`, a comprehension: the dict is not known.
                        self.eval(child);
                        known = false;
                        continue;
                    };
                    let key = self.eval(key);
                    self.hint = match (&hint, &key) {
                        (Some(hint), Value::Str(text)) => Some(format!("{hint}_{text}")),
                        (Some(hint), Value::Int(at)) => Some(format!("{hint}_{at}")),
                        _ => hint.clone(),
                    };
                    let value = self.eval(value);
                    pairs.push((key, value));
                }
                self.hint = hint;
                if known && pairs.len() <= MAX_ITEMS && pairs.iter().all(|(key, _)| is_key(key)) {
                    Value::Dict(pairs)
                } else {
                    Value::Unknown
                }
            }
            "call" => self.call(node),
            "subscript" => self.subscript(node),
            "unary_operator" => {
                let value = node.child_by_field_name("argument").map(|arg| self.eval(arg));
                let op = node.child_by_field_name("operator").map(|op| self.text(op));
                match (op, value.as_ref().and_then(Value::int)) {
                    (Some("-"), Some(v)) => v.checked_neg().map_or(Value::Unknown, Value::Int),
                    (Some("+"), Some(v)) => Value::Int(v),
                    (Some("~"), Some(v)) => Value::Int(!v),
                    _ => Value::Unknown,
                }
            }
            "not_operator" => {
                let value = node.child_by_field_name("argument").map(|arg| self.eval(arg));
                match value.and_then(|value| value.truth()) {
                    Some(truth) => Value::Bool(!truth),
                    None => Value::Unknown,
                }
            }
            "boolean_operator" => {
                let (Some(left), Some(right), Some(op)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    node.child_by_field_name("operator"),
                ) else {
                    return Value::Unknown;
                };
                let is_and = self.text(op) == "and";
                let left = self.eval(left);
                match (left.truth(), is_and) {
                    (Some(false), true) => left,
                    (Some(true), false) => left,
                    (Some(_), _) => self.eval(right),
                    (None, _) => {
                        let right = self.eval(right);
                        match (right.truth(), is_and) {
                            (Some(false), true) => Value::Bool(false),
                            (Some(true), false) => Value::Bool(true),
                            _ => Value::Unknown,
                        }
                    }
                }
            }
            "binary_operator" => {
                let (Some(left), Some(right), Some(op)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    node.child_by_field_name("operator"),
                ) else {
                    return Value::Unknown;
                };
                let op = self.text(op).to_string();
                let left = self.eval(left);
                let right = self.eval(right);
                if left.buffer().is_some() || right.buffer().is_some() {
                    return self.tensor_op(node, operator_name(&op), &[left, right], None);
                }
                arith(&op, &left, &right)
            }
            "comparison_operator" => self.comparison(node),
            "conditional_expression" => {
                let mut cursor = node.walk();
                let parts: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let [then, cond, otherwise] = parts.as_slice() else {
                    return Value::Unknown;
                };
                match self.condition(*cond) {
                    Some(true) => self.eval(*then),
                    Some(false) => self.eval(*otherwise),
                    None => {
                        let a = self.eval(*then);
                        let b = self.eval(*otherwise);
                        if a == b { a } else { Value::Unknown }
                    }
                }
            }
            "await" => match node.named_child(0) {
                Some(inner) => self.eval(inner),
                None => Value::Unknown,
            },
            "lambda" => Value::Unknown,
            "named_expression" => {
                let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value"))
                else {
                    return Value::Unknown;
                };
                let value = self.eval(value);
                self.store(name, value.clone());
                value
            }
            _ => {
                // Evaluate what is inside (calls in a dict, a set) for their effects.
                let mut cursor = node.walk();
                let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.eval(child);
                }
                Value::Unknown
            }
        }
    }

    fn identifier(&mut self, node: Node<'t>) -> Value {
        let name = self.text(node);
        if let Some(value) = self.lookup(name) {
            return value;
        }
        self.global(name, node)
    }

    /// A name no local binds: an import, a module constant, a function or class.
    fn global(&mut self, name: &str, at: Node<'t>) -> Value {
        let unit = self.frames.last().map_or(0, |frame| frame.unit);
        let scope = &self.index.modules[unit];
        if let Some(full) = scope.aliases.get(name) {
            let full = full.clone();
            let simple = full.rsplit('.').next().unwrap_or(&full).to_string();
            // `from helpers import setup`: a function of another analyzed file.
            if !is_library(&full)
                && let Some(def) = self.index.function(unit, &simple)
            {
                return Value::Function(def);
            }
            if !is_library(&full) && self.index.class(&simple).is_some() {
                return Value::Class(simple);
            }
            return Value::Module(full);
        }
        if let Some(def) = self.index.function(unit, name) {
            return Value::Function(def);
        }
        if self.index.class(name).is_some() {
            return Value::Class(name.to_string());
        }
        if let Some(expr) = scope.globals.get(name).copied() {
            // A module constant, evaluated in its module (once per use; bounded by
            // the nesting limit, which also stops `A = A`).
            let hint = self.hint.take();
            self.frames.push(Frame {
                unit,
                locals: HashMap::new(),
                pending: Vec::new(),
                returned: Value::None,
            });
            let value = if self.nesting < 16 {
                self.eval(expr)
            } else {
                Value::Unknown
            };
            self.frames.pop();
            self.hint = hint;
            return value;
        }
        match name {
            // The success code pyACL samples compare with.
            "ACL_SUCCESS" | "ACL_ERROR_NONE" => Value::Int(0),
            "True" => Value::Bool(true),
            "False" => Value::Bool(false),
            "None" => Value::None,
            _ if name.starts_with("ACL_") => Value::Module(name.to_string()),
            _ => {
                let _ = at;
                Value::Unknown
            }
        }
    }

    fn attribute(&mut self, node: Node<'t>) -> Value {
        let (Some(object), Some(attr)) = (
            node.child_by_field_name("object"),
            node.child_by_field_name("attribute"),
        ) else {
            return Value::Unknown;
        };
        let attr = self.text(attr).to_string();
        let base = self.eval(object);
        match base {
            Value::Module(path) => Value::Module(format!("{path}.{attr}")),
            Value::Object(slot) => {
                if let Some(value) = self.heap.get(slot).and_then(|obj| obj.attrs.get(&attr)) {
                    return value.clone();
                }
                let class = self.heap.get(slot).map(|obj| obj.class.clone()).unwrap_or_default();
                match self.index.method(&class, &attr) {
                    Some(def) => Value::Method(slot, def),
                    None => Value::Unknown,
                }
            }
            Value::Buffer(..) if matches!(attr.as_str(), "T" | "mT" | "real" | "imag" | "data") => base,
            _ => Value::Unknown,
        }
    }

    fn subscript(&mut self, node: Node<'t>) -> Value {
        let Some(base) = node.child_by_field_name("value") else {
            return Value::Unknown;
        };
        let container = self.eval(base);
        let mut cursor = node.walk();
        let indices: Vec<Node<'t>> = node.children_by_field_name("subscript", &mut cursor).collect();
        let index = match indices.as_slice() {
            [one] => self.eval(*one),
            _ => {
                for index in indices {
                    self.eval(index);
                }
                Value::Unknown
            }
        };
        match container {
            Value::Tuple(items) | Value::List(items) => match index.int() {
                Some(at) => {
                    let len = items.len() as i64;
                    let at = if at < 0 { at + len } else { at };
                    if (0..len).contains(&at) {
                        items[at as usize].clone()
                    } else {
                        Value::Unknown
                    }
                }
                None => {
                    if items.iter().any(Value::holds_handle) && items.iter().any(|item| *item != items[0]) {
                        self.note(
                            node,
                            "an index with no known value into handles: the element is not known",
                        );
                    }
                    if items.iter().all(|item| *item == items[0]) {
                        items.first().cloned().unwrap_or(Value::Unknown)
                    } else {
                        Value::Unknown
                    }
                }
            },
            Value::Dict(pairs) => dict_get(&pairs, &index).unwrap_or(Value::Unknown),
            // `x[0]`, `x[:n]` of a tensor: a view of the same memory.
            Value::Buffer(..) => container,
            _ => Value::Unknown,
        }
    }

    fn comparison(&mut self, node: Node<'t>) -> Value {
        let mut cursor = node.walk();
        let operands: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        let mut cursor = node.walk();
        let operators: Vec<String> = node
            .children_by_field_name("operators", &mut cursor)
            .map(|op| self.text(op).to_string())
            .collect();
        let values: Vec<Value> = operands.iter().map(|operand| self.eval(*operand)).collect();
        let mut result = Some(true);
        for (position, op) in operators.iter().enumerate() {
            let (Some(left), Some(right)) = (values.get(position), values.get(position + 1)) else {
                return Value::Unknown;
            };
            let known = compare(op, left, right);
            result = match (result, known) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
        }
        // A comparison of a device tensor reads it on the host.
        for value in &values {
            if let Value::Buffer(name, place) = value {
                let span = self.range(node);
                self.host_read_value(&name.clone(), *place, span);
            }
        }
        result.map_or(Value::Unknown, Value::Bool)
    }

    fn comprehension(&mut self, node: Node<'t>) -> Value {
        let (Some(body), Some(clause)) = (node.child_by_field_name("body"), node.named_child(1)) else {
            return Value::Unknown;
        };
        if clause.kind() != "for_in_clause" {
            return Value::Unknown;
        }
        let (Some(left), Some(right)) = (clause.child_by_field_name("left"), clause.child_by_field_name("right"))
        else {
            return Value::Unknown;
        };
        let Some(items) = self.iterable(right) else {
            return Value::Unknown;
        };
        let hint = self.hint.clone();
        let mut out = Vec::new();
        for (position, item) in items.into_iter().enumerate() {
            if position as i64 >= MAX_ITERATIONS || self.incomplete.is_some() {
                break;
            }
            self.hint = hint.as_ref().map(|hint| format!("{hint}_{position}"));
            self.store(left, item);
            out.push(self.eval(body));
        }
        self.hint = hint;
        if out.len() > MAX_ITEMS {
            return Value::Unknown;
        }
        Value::List(out)
    }

    // ---- calls ---------------------------------------------------------------------

    fn call(&mut self, node: Node<'t>) -> Value {
        let Some(function) = node.child_by_field_name("function") else {
            return Value::Unknown;
        };
        // A method call: `obj.name(...)`.
        if function.kind() == "attribute"
            && let (Some(object), Some(attr)) = (
                function.child_by_field_name("object"),
                function.child_by_field_name("attribute"),
            )
        {
            let hint = self.hint.take();
            let receiver = self.eval(object);
            self.hint = hint;
            let name = self.text(attr).to_string();
            return self.method_call(node, receiver, &name);
        }
        let hint = self.hint.take();
        let callee = self.eval(function);
        self.hint = hint;
        self.call_value(node, callee)
    }

    fn call_value(&mut self, node: Node<'t>, callee: Value) -> Value {
        match callee {
            Value::Function(def) => {
                let (args, kwargs) = self.arguments(node);
                self.call_function(def, args, kwargs, node)
            }
            Value::Method(slot, def) => {
                let (mut args, kwargs) = self.arguments(node);
                args.insert(0, Value::Object(slot));
                self.call_function(def, args, kwargs, node)
            }
            Value::Class(class) => {
                let (args, kwargs) = self.arguments(node);
                self.construct(&class, args, kwargs, node)
            }
            Value::Module(path) => {
                // `helpers.setup(...)`, `runner.Runner(...)`: a function or class of an
                // analyzed module, called through the module.
                let module = path.trim_start_matches('.').split('.').next().unwrap_or("");
                if !is_library(&path)
                    && (self.index.stems.contains(module) || path.starts_with('.'))
                    && let Some(simple) = path.rsplit('.').next()
                {
                    let unit = self.frames.last().map_or(0, |frame| frame.unit);
                    if let Some(def) = self.index.function(unit, simple) {
                        let (args, kwargs) = self.arguments(node);
                        return self.call_function(def, args, kwargs, node);
                    }
                    if self.index.class(simple).is_some() {
                        let (args, kwargs) = self.arguments(node);
                        return self.construct(simple, args, kwargs, node);
                    }
                }
                self.library_call(node, &path)
            }
            // `model(x)` on an object: its `forward` (nn.Module) or `__call__`.
            Value::Object(slot) => {
                let class = self.heap.get(slot).map(|obj| obj.class.clone()).unwrap_or_default();
                let method = self
                    .index
                    .method(&class, "__call__")
                    .or_else(|| self.index.method(&class, "forward"));
                match method {
                    Some(def) => {
                        let (mut args, kwargs) = self.arguments(node);
                        args.insert(0, Value::Object(slot));
                        self.call_function(def, args, kwargs, node)
                    }
                    None => self.opaque_call(node, "call"),
                }
            }
            _ => {
                let name = node
                    .child_by_field_name("function")
                    .map(|f| self.text(f).rsplit('.').next().unwrap_or("").to_string())
                    .unwrap_or_default();
                match name.as_str() {
                    "print" | "str" | "repr" | "float" | "int" | "bool" | "len" | "list" | "tuple" | "format" => {
                        self.builtin(node, &name)
                    }
                    _ => self.opaque_call(node, &name),
                }
            }
        }
    }

    /// A callable the files do not define: on device tensors it is a kernel on the
    /// current stream that reads them and writes its result; on handles it is listed.
    fn opaque_call(&mut self, node: Node<'t>, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let all: Vec<Value> = args.iter().chain(kwargs.iter().map(|(_, v)| v)).cloned().collect();
        let tensors = flatten(&all)
            .into_iter()
            .filter(|value| matches!(value, Value::Buffer(_, Place::Device)))
            .count();
        if tensors > 0 {
            return self.tensor_op(node, name, &all, None);
        }
        if all
            .iter()
            .any(|value| matches!(value, Value::Stream(_) | Value::Event(_)))
        {
            let name = node
                .child_by_field_name("function")
                .map_or("", |f| self.text(f))
                .to_string();
            self.note(
                node,
                format!("`{name}` is neither catalogued nor defined in the analyzed files, and receives a stream or event: what it does with it is not known"),
            );
        }
        Value::Unknown
    }

    fn builtin(&mut self, node: Node<'t>, name: &str) -> Value {
        let args = self.positional_args(node);
        let span = self.range(node);
        // Printing or converting a tensor reads it on the host.
        for value in flatten(&args) {
            if let Value::Buffer(buffer, place) = value {
                self.host_read_value(&buffer, place, span.clone());
            }
        }
        match (name, args.first()) {
            ("int", Some(value)) => value.int().map_or(Value::Unknown, Value::Int),
            ("bool", Some(value)) => value.truth().map_or(Value::Unknown, Value::Bool),
            ("len", Some(Value::List(items) | Value::Tuple(items))) => Value::Int(items.len() as i64),
            ("list" | "tuple", Some(Value::List(items) | Value::Tuple(items))) => Value::List(items.clone()),
            _ => Value::Unknown,
        }
    }

    /// A call of a library function by its resolved path (`acl.rt.record_event`,
    /// `torch.npu.Stream`, `torch.zeros`).
    fn library_call(&mut self, node: Node<'t>, path: &str) -> Value {
        if path.starts_with("acl.") {
            return self.acl_call(node, path);
        }
        let torch = torch_path(path);
        match torch.as_deref() {
            Some("npu.Stream" | "npu.streams.Stream" | "cuda.Stream") => {
                self.arguments(node);
                let name = self.fresh_hint("stream");
                self.create(node, "acl.rt.create_stream", &name, Vec::new());
                Value::Stream(name)
            }
            Some("npu.Event" | "npu.streams.Event" | "cuda.Event") => {
                self.arguments(node);
                self.torch_event(node)
            }
            Some("npu.ExternalEvent") => {
                // An ACL sync event: a wait blocks until a record, and is reset after.
                self.arguments(node);
                let name = self.fresh_hint("event");
                let span = self.range(node);
                self.create(
                    node,
                    "acl.rt.create_event_with_flag",
                    &name,
                    vec![name_expr("ACL_EVENT_SYNC", span)],
                );
                if let Some(owned) = self.owned.last_mut() {
                    owned.push(name.clone());
                }
                Value::Event(name)
            }
            Some("npu.current_stream" | "cuda.current_stream") => {
                self.arguments(node);
                self.current.clone()
            }
            Some("npu.default_stream" | "cuda.default_stream") => {
                self.arguments(node);
                Value::DefaultStream
            }
            Some("npu.set_stream" | "cuda.set_stream") => {
                if let Some(stream) = self.positional_args(node).into_iter().next() {
                    self.current = stream;
                }
                Value::None
            }
            Some("npu.stream" | "cuda.stream") => {
                let stream = self.positional_args(node).into_iter().next().unwrap_or(Value::Unknown);
                let stream = match stream {
                    Value::None => self.current.clone(),
                    other => other,
                };
                Value::StreamContext(Box::new(stream))
            }
            Some("npu.synchronize" | "cuda.synchronize") => {
                self.arguments(node);
                self.catalogued(node, "acl.rt.synchronize_device", Vec::new());
                Value::None
            }
            Some("device") => {
                let args = self.positional_args(node);
                device_of(args.first()).map_or(Value::Unknown, Value::Device)
            }
            Some(name) if is_tensor_factory(name) => self.tensor_factory(node, name),
            Some("from_numpy" | "as_tensor" | "asarray") => {
                self.arguments(node);
                let name = self.fresh_hint("host");
                self.create(node, "malloc", &name, vec![int_expr(TENSOR_BYTES, self.range(node))]);
                let span = self.range(node);
                self.host_access(&name, Place::Pageable, true, span);
                Value::Buffer(name, Place::Pageable)
            }
            Some(name) if name.starts_with("npu.") || name.starts_with("cuda.") || name.starts_with("distributed") => {
                self.opaque_call(node, name)
            }
            Some(name) => {
                // `torch.matmul(a, b)`, `torch.nn.functional.relu(x)`, `torch_npu.npu_rms_norm(x)`.
                let short = name.rsplit('.').next().unwrap_or(name).to_string();
                let (args, kwargs) = self.arguments(node);
                let out = kwargs
                    .iter()
                    .find(|(key, _)| key == "out")
                    .map(|(_, value)| value.clone());
                let all: Vec<Value> = args.into_iter().chain(kwargs.into_iter().map(|(_, v)| v)).collect();
                if flatten(&all).iter().any(|value| value.buffer().is_some()) {
                    self.tensor_op(node, &short, &all, out)
                } else {
                    Value::Unknown
                }
            }
            None => {
                if path.starts_with("numpy.") || path.starts_with("np.") {
                    let args = self.positional_args(node);
                    let span = self.range(node);
                    for value in flatten(&args) {
                        if let Value::Buffer(buffer, place) = value {
                            self.host_read_value(&buffer, place, span.clone());
                        }
                    }
                    return Value::Unknown;
                }
                self.opaque_call(node, path)
            }
        }
    }

    fn fresh_hint(&mut self, default: &str) -> String {
        let hint = self.hint.take().unwrap_or_else(|| default.to_string());
        self.fresh_name(&hint)
    }

    /// `torch.npu.Event()`: an event whose records capture the stream's progress so far
    /// (torch_npu creates it with `aclrtCreateEventExWithFlag`).
    fn torch_event(&mut self, node: Node<'t>) -> Value {
        let name = self.fresh_hint("event");
        let span = self.range(node);
        self.create(
            node,
            "acl.rt.create_event_ex_with_flag",
            &name,
            vec![name_expr("ACL_EVENT_SYNC", span)],
        );
        if let Some(owned) = self.owned.last_mut() {
            owned.push(name.clone());
        }
        self.torch_events.insert(name.clone());
        Value::Event(name)
    }

    /// `let NAME = API(args);`
    fn create(&mut self, node: Node<'t>, api: &str, name: &str, args: Vec<ast::Expr>) {
        let span = self.range(node);
        self.api_calls += 1;
        let call = call_expr(api, args, Vec::new(), span.clone());
        self.emit(
            ast::StmtKind::Let {
                pattern: ast::Pattern::Name(ident(name, span.clone())),
                value: call,
            },
            span,
        );
    }

    /// A catalogued call statement `API(args);`.
    fn catalogued(&mut self, node: Node<'t>, api: &str, args: Vec<ast::Expr>) {
        let span = self.range(node);
        self.api_calls += 1;
        let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr(api, args, Vec::new(), span.clone())
        else {
            return;
        };
        self.emit(ast::StmtKind::Call(*call), span);
    }

    fn stream_expr(&mut self, stream: &Value, node: Node<'t>) -> Option<ast::Expr> {
        let span = self.range(node);
        match stream {
            Value::DefaultStream | Value::Int(0) | Value::None => Some(int_expr(0, span)),
            Value::Stream(name) => Some(name_expr(name, span)),
            _ => None,
        }
    }

    fn current_stream_expr(&mut self, node: Node<'t>) -> Option<ast::Expr> {
        let current = self.current.clone();
        let expr = self.stream_expr(&current, node);
        if expr.is_none() {
            self.note(node, "the current stream is not known here: the operation is left out");
        }
        expr
    }

    // ---- pyACL ---------------------------------------------------------------------

    fn acl_call(&mut self, node: Node<'t>, path: &str) -> Value {
        match path {
            "acl.util.ptr_to_numpy" | "acl.util.ptr_to_bytes" => {
                let args = self.positional_args(node);
                if let Some(Value::Buffer(name, place)) = args.first() {
                    let span = self.range(node);
                    self.host_access(name, *place, false, span);
                }
                return Value::Unknown;
            }
            "acl.util.numpy_to_ptr" | "acl.util.bytes_to_ptr" => {
                self.arguments(node);
                let name = self.fresh_hint("host");
                self.create(node, "malloc", &name, vec![int_expr(TENSOR_BYTES, self.range(node))]);
                let span = self.range(node);
                self.host_access(&name, Place::Pageable, true, span);
                return Value::Buffer(name, Place::Pageable);
            }
            "acl.create_data_buffer" => {
                let args = self.positional_args(node);
                return Value::DataBuffer(Box::new(args.into_iter().next().unwrap_or(Value::Unknown)));
            }
            "acl.mdl.create_dataset" => {
                self.heap.push(Obj::default());
                return Value::Dataset(self.heap.len() - 1);
            }
            "acl.mdl.add_dataset_buffer" => {
                let args = self.positional_args(node);
                if let (Some(Value::Dataset(slot)), Some(buffer)) = (args.first(), args.get(1))
                    && let Some(obj) = self.heap.get_mut(*slot)
                {
                    obj.items.push(buffer.clone());
                }
                return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
            }
            "acl.op.execute_v2" | "acl.op.execute" => {
                // (op_type, input_desc, inputs, output_desc, outputs, attr, stream)
                let args = self.positional_args(node);
                let label = match args.first() {
                    Some(Value::Str(name)) => name.clone(),
                    _ => "op".to_string(),
                };
                let names = |value: Option<&Value>| -> Vec<String> {
                    flatten(value.map(std::slice::from_ref).unwrap_or_default())
                        .iter()
                        .filter_map(|value| value.buffer().map(|(name, _)| name.to_string()))
                        .collect()
                };
                let (reads, writes) = (names(args.get(2)), names(args.get(4)));
                let stream = args.get(6).cloned().unwrap_or(Value::Unknown);
                let Some(stream_expr) = self.stream_expr(&stream, node) else {
                    self.note(node, "the operator's stream is not known: it is left out");
                    return Value::Int(0);
                };
                self.kernel(node, stream_expr, &label, &reads, &writes);
                return Value::Int(0);
            }
            "acl.mdl.execute_async" | "acl.mdl.execute" => {
                let args = self.positional_args(node);
                let stream = match path {
                    "acl.mdl.execute" => Value::DefaultStream,
                    _ => args.get(3).cloned().unwrap_or(Value::Unknown),
                };
                let reads = self.dataset_buffers(args.get(1));
                let writes = self.dataset_buffers(args.get(2));
                let Some(stream_expr) = self.stream_expr(&stream, node) else {
                    self.note(node, "the model execution's stream is not known: it is left out");
                    return Value::Int(0);
                };
                self.kernel(node, stream_expr, "model", &reads, &writes);
                if path == "acl.mdl.execute" {
                    let span = self.range(node);
                    self.catalogued(node, "acl.rt.synchronize_stream", vec![int_expr(0, span)]);
                }
                return Value::Int(0);
            }
            _ => {}
        }
        let Some(api) = syncguard_model::api::lookup(path) else {
            let (args, kwargs) = self.arguments(node);
            if args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(Value::holds_handle)
            {
                self.note(
                    node,
                    format!("`{path}` is not in the catalogue: what it does with its handles is not known"),
                );
            }
            return Value::Int(0);
        };
        let (arg_nodes, keyword_nodes) = self.argument_nodes(node);
        let params: Vec<_> = api.positional_params().collect();
        let mut converted = Vec::new();
        let mut positional = arg_nodes.into_iter();
        for param in &params {
            let arg = keyword_nodes
                .iter()
                .find(|(key, _)| key == param.name)
                .map(|(_, node)| *node)
                .or_else(|| positional.next());
            let Some(arg) = arg else {
                if param.optional {
                    continue;
                }
                self.note(
                    node,
                    format!("`{path}` is left out: it has no argument `{}`", param.name),
                );
                return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
            };
            match self.acl_arg(arg, param.kind) {
                Some(expr) => converted.push(expr),
                None => {
                    self.note(
                        arg,
                        format!(
                            "`{path}` is left out: its argument `{}` has no value the extraction can follow",
                            param.name
                        ),
                    );
                    return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
                }
            }
        }
        let range = self.range(node);
        self.last_api = Some((range.clone(), api));
        let created = match api.creates {
            Creates::Stream => Some(("stream", None)),
            Creates::Event(..) => Some(("event", None)),
            Creates::DeviceBuffer => Some(("dev_ptr", Some(Place::Device))),
            Creates::HostBuffer => Some(("host_ptr", Some(Place::Pinned))),
            Creates::PageableHostBuffer => Some(("host_ptr", Some(Place::Pageable))),
            _ => None,
        };
        match created {
            Some((default, place)) => {
                let name = self.fresh_hint(default);
                self.create(node, api.name, &name, converted);
                let object = match (api.creates, place) {
                    (Creates::Stream, _) => Value::Stream(name),
                    (_, Some(place)) => Value::Buffer(name, place),
                    _ => Value::Event(name),
                };
                Value::Tuple(vec![object, Value::Int(0)])
            }
            None => {
                self.api_calls += 1;
                let ast::Expr {
                    kind: ast::ExprKind::Call(call),
                    ..
                } = call_expr(api.name, converted, Vec::new(), range.clone())
                else {
                    return Value::Int(0);
                };
                self.emit(ast::StmtKind::Call(*call), range);
                if api.query.is_some() {
                    // `status, ret = acl.rt.query_event_status(ev)`: the status is not known.
                    return Value::Tuple(vec![Value::Unknown, Value::Int(0)]);
                }
                Value::Int(0)
            }
        }
    }

    fn dataset_buffers(&self, dataset: Option<&Value>) -> Vec<String> {
        let Some(Value::Dataset(slot)) = dataset else {
            return Vec::new();
        };
        let Some(obj) = self.heap.get(*slot) else {
            return Vec::new();
        };
        obj.items
            .iter()
            .filter_map(|item| match item {
                Value::DataBuffer(inner) => inner.buffer().map(|(name, _)| name.to_string()),
                _ => None,
            })
            .collect()
    }

    /// One pyACL argument as the catalogue's parameter kind wants it.
    fn acl_arg(&mut self, arg: Node<'t>, kind: ArgKind) -> Option<ast::Expr> {
        let span = self.range(arg);
        // Constants by name, as pyACL samples define them (`ACL_MEMCPY_HOST_TO_DEVICE = 1`).
        let written = self.text(arg).rsplit('.').next().unwrap_or("").to_string();
        let value = self.eval(arg);
        match kind {
            ArgKind::Stream => self.stream_expr(&value, arg),
            ArgKind::Event => match value {
                Value::Event(name) => Some(name_expr(&name, span)),
                _ => None,
            },
            ArgKind::Ptr => match value {
                Value::Buffer(name, _) => Some(name_expr(&name, span)),
                _ => None,
            },
            ArgKind::Enum(family) => {
                if family.constants().contains(&written.as_str()) {
                    return Some(name_expr(&written, span));
                }
                let acl: Vec<&str> = family
                    .constants()
                    .iter()
                    .copied()
                    .filter(|name| name.starts_with("ACL_"))
                    .collect();
                let at = usize::try_from(value.int()?).ok()?;
                acl.get(at).map(|name| name_expr(name, span))
            }
            ArgKind::Flags => {
                if syncguard_model::api::FLAG_CONSTANTS
                    .iter()
                    .any(|(name, _)| *name == written)
                {
                    return Some(name_expr(&written, span));
                }
                value.int().map(|v| int_expr(v, span))
            }
            ArgKind::Int | ArgKind::Timeout(_) => match value.int() {
                Some(v) => Some(int_expr(v, span)),
                // A size the code does not show: the tensor size taken.
                None => Some(int_expr(TENSOR_BYTES, span)),
            },
            ArgKind::Str => match value {
                Value::Str(text) => Some(ast::Expr {
                    kind: ast::ExprKind::Str(text),
                    span,
                }),
                _ => None,
            },
            ArgKind::Opaque => Some(int_expr(0, span)),
            _ => None,
        }
    }

    // ---- torch ---------------------------------------------------------------------

    /// `torch.zeros(..., device="npu")`, `torch.empty(..., pin_memory=True)`, `*_like`.
    fn tensor_factory(&mut self, node: Node<'t>, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let keyword = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let like = name.ends_with("_like").then(|| args.first().cloned()).flatten();
        let device = match keyword("device") {
            Some(device) => device_of(Some(&device)),
            None => match &like {
                Some(Value::Buffer(_, place)) => Some(*place == Place::Device),
                _ => Some(false),
            },
        };
        let pinned = keyword("pin_memory").and_then(|v| v.truth()).unwrap_or(false);
        let span = self.range(node);
        let size = int_expr(TENSOR_BYTES, span.clone());
        let filled = !name.starts_with("empty");
        let name = self.fresh_hint("tensor");
        match device {
            Some(true) => {
                self.create(
                    node,
                    "acl.rt.malloc",
                    &name,
                    vec![size, name_expr("ACL_MEM_MALLOC_HUGE_FIRST", span.clone())],
                );
                if filled && let Some(stream) = self.current_stream_expr(node) {
                    self.kernel(node, stream, "fill", &[], std::slice::from_ref(&name));
                }
                Value::Buffer(name, Place::Device)
            }
            Some(false) => {
                let place = if pinned { Place::Pinned } else { Place::Pageable };
                let api = if pinned { "acl.rt.malloc_host" } else { "malloc" };
                self.create(node, api, &name, vec![size]);
                if filled {
                    self.host_access(&name, place, true, span);
                }
                Value::Buffer(name, place)
            }
            None => {
                self.note(
                    node,
                    "a tensor on a device the extraction cannot tell: it is not followed",
                );
                Value::Unknown
            }
        }
    }

    /// `kernel(stream, "name", reads: [...], writes: [...]);`
    fn kernel(&mut self, node: Node<'t>, stream: ast::Expr, name: &str, reads: &[String], writes: &[String]) {
        let span = self.range(node);
        let list = |names: &[String]| ast::Expr {
            kind: ast::ExprKind::List(names.iter().map(|name| name_expr(name, span.clone())).collect()),
            span: span.clone(),
        };
        let mut named = Vec::new();
        if !reads.is_empty() {
            named.push(("reads", list(reads)));
        }
        if !writes.is_empty() {
            named.push(("writes", list(writes)));
        }
        let label = ast::Expr {
            kind: ast::ExprKind::Str(name.chars().filter(|c| *c != '"' && *c != '\\').take(64).collect()),
            span: span.clone(),
        };
        self.api_calls += 1;
        let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr("kernel", vec![stream, label], named, span.clone())
        else {
            return;
        };
        self.emit(ast::StmtKind::Call(*call), span);
    }

    /// `host_read(buf);` / `host_write(buf);` for host memory; a device tensor read
    /// on the host is a blocking copy out (`.item()`, `print(x)`).
    fn host_access(&mut self, name: &str, place: Place, write: bool, span: Range<usize>) {
        if !place.is_host() {
            return;
        }
        self.api_calls += 1;
        let api = if write { "host_write" } else { "host_read" };
        let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr(api, vec![name_expr(name, span.clone())], Vec::new(), span.clone())
        else {
            return;
        };
        self.emit(ast::StmtKind::Call(*call), span);
    }

    /// The host reads a tensor: a host one directly, a device one through the blocking
    /// copy torch makes (`.item()`, `.tolist()`, `print`), which waits for the current stream.
    fn host_read_value(&mut self, name: &str, place: Place, span: Range<usize>) {
        if place.is_host() {
            self.host_access(name, place, false, span);
            return;
        }
        let Some(stream) = self.current_stream_at(span.clone()) else {
            return;
        };
        let host = self.fresh_name(&format!("{name}_host"));
        self.api_calls += 3;
        let size = || int_expr(TENSOR_BYTES, span.clone());
        self.emit(
            ast::StmtKind::Let {
                pattern: ast::Pattern::Name(ident(&host, span.clone())),
                value: call_expr("malloc", vec![size()], Vec::new(), span.clone()),
            },
            span.clone(),
        );
        self.copy_stmt(&host, name, "ACL_MEMCPY_DEVICE_TO_HOST", stream.clone(), span.clone());
        self.sync_stream_stmt(stream, span.clone());
        self.host_access(&host, Place::Pageable, false, span);
    }

    fn current_stream_at(&mut self, span: Range<usize>) -> Option<ast::Expr> {
        match &self.current {
            Value::DefaultStream => Some(int_expr(0, span)),
            Value::Stream(name) => Some(name_expr(name, span)),
            _ => {
                self.unresolved.push((
                    span,
                    "the current stream is not known here: the operation is left out".into(),
                ));
                None
            }
        }
    }

    fn copy_stmt(&mut self, dst: &str, src: &str, kind: &str, stream: ast::Expr, span: Range<usize>) {
        let size = || int_expr(TENSOR_BYTES, span.clone());
        let args = vec![
            name_expr(dst, span.clone()),
            size(),
            name_expr(src, span.clone()),
            size(),
            name_expr(kind, span.clone()),
            stream,
        ];
        if let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr("acl.rt.memcpy_async", args, Vec::new(), span.clone())
        {
            self.emit(ast::StmtKind::Call(*call), span);
        }
    }

    fn sync_stream_stmt(&mut self, stream: ast::Expr, span: Range<usize>) {
        if let ast::Expr {
            kind: ast::ExprKind::Call(call),
            ..
        } = call_expr("acl.rt.synchronize_stream", vec![stream], Vec::new(), span.clone())
        {
            self.emit(ast::StmtKind::Call(*call), span);
        }
    }

    /// A copy `src` → `dst` on the current stream; `blocking` waits for it (torch
    /// synchronizes the stream after a copy that is not `non_blocking`).
    fn tensor_copy(&mut self, node: Node<'t>, dst: (&str, Place), src: (&str, Place), blocking: bool) {
        let span = self.range(node);
        if dst.1.is_host() && src.1.is_host() {
            self.host_access(src.0, src.1, false, span.clone());
            self.host_access(dst.0, dst.1, true, span);
            return;
        }
        let Some(stream) = self.current_stream_expr(node) else {
            return;
        };
        let kind = match (src.1.is_host(), dst.1.is_host()) {
            (true, false) => "ACL_MEMCPY_HOST_TO_DEVICE",
            (false, true) => "ACL_MEMCPY_DEVICE_TO_HOST",
            _ => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        };
        self.api_calls += 1;
        self.copy_stmt(dst.0, src.0, kind, stream.clone(), span.clone());
        // A copy from pageable memory is staged: the host returns once the source is
        // read, so the source is free again; the copy out of a device is awaited
        // unless `non_blocking`.
        let waits = blocking && kind != "ACL_MEMCPY_DEVICE_TO_DEVICE" || (src.1 == Place::Pageable && !dst.1.is_host());
        if waits {
            self.api_calls += 1;
            self.sync_stream_stmt(stream, span);
        }
    }

    /// An operation on tensors: device ones a kernel on the current stream, host ones
    /// host reads and writes. `out` is the tensor written (a new one when `None`).
    fn tensor_op(&mut self, node: Node<'t>, name: &str, operands: &[Value], out: Option<Value>) -> Value {
        let buffers: Vec<(String, Place)> = flatten(operands)
            .into_iter()
            .filter_map(|value| match value {
                Value::Buffer(name, place) => Some((name, place)),
                _ => None,
            })
            .collect();
        let on_device = buffers.iter().any(|(_, place)| *place == Place::Device);
        let span = self.range(node);
        if !on_device {
            for (buffer, place) in &buffers {
                self.host_access(buffer, *place, false, span.clone());
            }
            return match out {
                Some(Value::Buffer(out, place)) => {
                    self.host_access(&out, place, true, span);
                    Value::Buffer(out, place)
                }
                _ => {
                    let result = self.fresh_hint("host");
                    self.create(node, "malloc", &result, vec![int_expr(TENSOR_BYTES, span.clone())]);
                    self.host_access(&result, Place::Pageable, true, span);
                    Value::Buffer(result, Place::Pageable)
                }
            };
        }
        let Some(stream) = self.current_stream_expr(node) else {
            return Value::Unknown;
        };
        let mut reads: Vec<String> = Vec::new();
        for (buffer, _) in &buffers {
            if !reads.contains(buffer) {
                reads.push(buffer.clone());
            }
        }
        let (result, fresh) = match out {
            Some(Value::Buffer(out, place)) => (Value::Buffer(out, place), false),
            _ => {
                let result = self.fresh_hint("out");
                self.create(
                    node,
                    "acl.rt.malloc",
                    &result,
                    vec![
                        int_expr(TENSOR_BYTES, span.clone()),
                        name_expr("ACL_MEM_MALLOC_HUGE_FIRST", span.clone()),
                    ],
                );
                (Value::Buffer(result, Place::Device), true)
            }
        };
        let written = result.buffer().map(|(name, _)| name.to_string()).unwrap_or_default();
        let _ = fresh;
        self.kernel(node, stream, name, &reads, std::slice::from_ref(&written));
        result
    }

    /// `recv.name(args)`.
    fn method_call(&mut self, node: Node<'t>, receiver: Value, name: &str) -> Value {
        match receiver {
            Value::Object(slot) => {
                if let Some(value) = self.heap.get(slot).and_then(|obj| obj.attrs.get(name)).cloned() {
                    return self.call_value(node, value);
                }
                let class = self.heap.get(slot).map(|obj| obj.class.clone()).unwrap_or_default();
                match self.index.method(&class, name) {
                    Some(def) => {
                        let (mut args, kwargs) = self.arguments(node);
                        args.insert(0, Value::Object(slot));
                        self.call_function(def, args, kwargs, node)
                    }
                    None => self.opaque_call(node, name),
                }
            }
            Value::Module(path) => self.call_value(node, Value::Module(format!("{path}.{name}"))),
            Value::Stream(_) | Value::DefaultStream => self.stream_method(node, receiver, name),
            Value::Event(event) => self.event_method(node, &event, name),
            Value::Buffer(buffer, place) => self.tensor_method(node, &buffer, place, name),
            Value::List(items) if name == "append" => {
                let args = self.positional_args(node);
                let mut items = items;
                items.extend(args);
                let items = if items.len() > MAX_ITEMS {
                    Value::Unknown
                } else {
                    Value::List(items)
                };
                if let Some(target) = node
                    .child_by_field_name("function")
                    .and_then(|f| f.child_by_field_name("object"))
                {
                    self.store(target, items);
                }
                Value::None
            }
            Value::Dict(pairs) => {
                let args = self.positional_args(node);
                match name {
                    "get" => args
                        .first()
                        .and_then(|key| dict_get(&pairs, key))
                        .or_else(|| args.get(1).cloned())
                        .unwrap_or(Value::None),
                    "values" => Value::List(pairs.into_iter().map(|(_, value)| value).collect()),
                    "keys" => Value::List(pairs.into_iter().map(|(key, _)| key).collect()),
                    "items" => Value::List(
                        pairs
                            .into_iter()
                            .map(|(key, value)| Value::Tuple(vec![key, value]))
                            .collect(),
                    ),
                    _ => Value::Unknown,
                }
            }
            Value::StreamContext(_) => {
                self.arguments(node);
                Value::Unknown
            }
            _ => self.opaque_call(node, name),
        }
    }

    fn stream_method(&mut self, node: Node<'t>, stream: Value, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let arg = |key: &str| {
            kwargs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .or_else(|| args.first().cloned())
        };
        let span = self.range(node);
        let Some(stream_expr) = self.stream_expr(&stream, node) else {
            return Value::Unknown;
        };
        match name {
            "synchronize" => {
                self.catalogued(node, "acl.rt.synchronize_stream", vec![stream_expr]);
                Value::None
            }
            "wait_event" => {
                match arg("event") {
                    Some(Value::Event(event)) if self.never_recorded(&event) => {}
                    Some(Value::Event(event)) => self.catalogued(
                        node,
                        "acl.rt.stream_wait_event",
                        vec![stream_expr, name_expr(&event, span)],
                    ),
                    _ => self.note(
                        node,
                        "`wait_event` of an event the extraction cannot follow is left out",
                    ),
                }
                Value::None
            }
            "wait_stream" => {
                // torch: `self.wait_event(stream.record_event())`, with a new event.
                let other = arg("stream").unwrap_or(Value::Unknown);
                let Some(other_expr) = self.stream_expr(&other, node) else {
                    self.note(
                        node,
                        "`wait_stream` on a stream the extraction cannot follow is left out",
                    );
                    return Value::None;
                };
                let saved = self.hint.replace("wait_stream_event".into());
                let event = self.torch_event(node);
                self.hint = saved;
                if let Value::Event(event) = event {
                    self.recorded.insert(event.clone());
                    self.catalogued(
                        node,
                        "acl.rt.record_event",
                        vec![name_expr(&event, span.clone()), other_expr],
                    );
                    self.catalogued(
                        node,
                        "acl.rt.stream_wait_event",
                        vec![stream_expr, name_expr(&event, span.clone())],
                    );
                }
                Value::None
            }
            "record_event" => {
                let event = match arg("event") {
                    Some(Value::Event(event)) => Value::Event(event),
                    _ => self.torch_event(node),
                };
                if let Value::Event(name) = &event {
                    self.recorded.insert(name.clone());
                    self.catalogued(node, "acl.rt.record_event", vec![name_expr(name, span), stream_expr]);
                }
                event
            }
            "query" => Value::Unknown,
            _ => Value::Unknown,
        }
    }

    /// A torch event no record has reached yet: torch_npu has not created it, and a
    /// wait on it does nothing.
    fn never_recorded(&self, event: &str) -> bool {
        self.torch_events.contains(event) && !self.recorded.contains(event)
    }

    fn event_method(&mut self, node: Node<'t>, event: &str, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let stream = kwargs
            .iter()
            .find(|(k, _)| k == "stream")
            .map(|(_, v)| v.clone())
            .or_else(|| args.first().cloned());
        let span = self.range(node);
        let stream_expr = match stream {
            Some(stream) if !matches!(stream, Value::None) => self.stream_expr(&stream, node),
            _ => self.current_stream_expr(node),
        };
        let never_recorded = self.never_recorded(event);
        match name {
            "record" => {
                self.recorded.insert(event.to_string());
                if let Some(stream) = stream_expr {
                    self.catalogued(node, "acl.rt.record_event", vec![name_expr(event, span), stream]);
                }
                Value::None
            }
            "wait" | "synchronize" if never_recorded => Value::None,
            "wait" => {
                if let Some(stream) = stream_expr {
                    self.catalogued(node, "acl.rt.stream_wait_event", vec![stream, name_expr(event, span)]);
                }
                Value::None
            }
            "synchronize" => {
                self.catalogued(node, "acl.rt.synchronize_event", vec![name_expr(event, span)]);
                Value::None
            }
            // `ExternalEvent.reset(stream)`
            "reset" => {
                if let Some(stream) = stream_expr {
                    self.catalogued(node, "acl.rt.reset_event", vec![name_expr(event, span), stream]);
                }
                Value::None
            }
            _ => Value::Unknown,
        }
    }

    fn tensor_method(&mut self, node: Node<'t>, buffer: &str, place: Place, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let keyword = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let non_blocking = keyword("non_blocking").and_then(|v| v.truth()).unwrap_or(false);
        let span = self.range(node);
        match name {
            "npu" | "cuda" | "cpu" | "to" => {
                let target = match name {
                    "npu" | "cuda" => Some(true),
                    "cpu" => Some(false),
                    _ => {
                        let device = keyword("device").or_else(|| args.first().cloned());
                        match device {
                            Some(Value::Buffer(_, other)) => Some(other == Place::Device),
                            Some(device) => device_of(Some(&device)).or(Some(place == Place::Device)),
                            None => Some(place == Place::Device),
                        }
                    }
                };
                let Some(to_device) = target else {
                    return Value::Unknown;
                };
                if to_device == (place == Place::Device) {
                    // Already there: the same tensor.
                    return Value::Buffer(buffer.to_string(), place);
                }
                let default = format!("{buffer}_{}", if to_device { "dev" } else { "host" });
                let result = self.fresh_hint(&default);
                let result_place = if to_device {
                    self.create(
                        node,
                        "acl.rt.malloc",
                        &result,
                        vec![
                            int_expr(TENSOR_BYTES, span.clone()),
                            name_expr("ACL_MEM_MALLOC_HUGE_FIRST", span.clone()),
                        ],
                    );
                    Place::Device
                } else if non_blocking {
                    // torch allocates the result of a non-blocking copy out in pinned memory.
                    self.create(
                        node,
                        "acl.rt.malloc_host",
                        &result,
                        vec![int_expr(TENSOR_BYTES, span.clone())],
                    );
                    Place::Pinned
                } else {
                    self.create(node, "malloc", &result, vec![int_expr(TENSOR_BYTES, span.clone())]);
                    Place::Pageable
                };
                self.tensor_copy(node, (&result, result_place), (buffer, place), !non_blocking);
                Value::Buffer(result, result_place)
            }
            "copy_" => {
                match args.first() {
                    Some(Value::Buffer(src, src_place)) => {
                        let src = src.clone();
                        self.tensor_copy(node, (buffer, place), (&src, *src_place), !non_blocking);
                    }
                    _ => self.note(node, "`copy_` from a value the extraction cannot follow is left out"),
                }
                Value::Buffer(buffer.to_string(), place)
            }
            "item" | "tolist" | "numpy" | "__bool__" | "__float__" => {
                self.host_read_value(buffer, place, span);
                Value::Unknown
            }
            "record_stream" | "pin_memory" | "size" | "dim" | "numel" | "element_size" | "is_pinned" | "data_ptr"
            | "stride" | "storage_offset" => {
                if name == "pin_memory" && place == Place::Pageable {
                    let result = self.fresh_hint("pinned");
                    self.create(
                        node,
                        "acl.rt.malloc_host",
                        &result,
                        vec![int_expr(TENSOR_BYTES, span.clone())],
                    );
                    self.host_access(buffer, place, false, span.clone());
                    self.host_access(&result, Place::Pinned, true, span);
                    return Value::Buffer(result, Place::Pinned);
                }
                if name == "pin_memory" {
                    return Value::Buffer(buffer.to_string(), place);
                }
                Value::Unknown
            }
            "view" | "reshape" | "view_as" | "transpose" | "permute" | "t" | "squeeze" | "unsqueeze" | "flatten"
            | "expand" | "expand_as" | "narrow" | "detach" | "contiguous" | "chunk" | "split" | "unbind"
            | "as_strided" | "select" | "unflatten" | "movedim" => {
                let view = Value::Buffer(buffer.to_string(), place);
                if matches!(name, "chunk" | "split" | "unbind") {
                    if let Some(count) = args.first().and_then(Value::int).filter(|n| (1..=64).contains(n)) {
                        return Value::Tuple(vec![view; count as usize]);
                    }
                    return Value::Unknown;
                }
                view
            }
            _ => {
                let mut operands = vec![Value::Buffer(buffer.to_string(), place)];
                operands.extend(args);
                operands.extend(kwargs.into_iter().map(|(_, v)| v));
                // `x.add_(y)` writes x; `x.add(y)` a new tensor.
                let out =
                    (name.ends_with('_') && !name.starts_with('_')).then(|| Value::Buffer(buffer.to_string(), place));
                self.tensor_op(node, name, &operands, out)
            }
        }
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

fn int_expr(value: i64, span: Range<usize>) -> ast::Expr {
    let literal = ast::Expr {
        kind: ast::ExprKind::Int(ast::IntLit {
            value: value.unsigned_abs(),
            hex: false,
            unit: None,
        }),
        span: span.clone(),
    };
    if value < 0 {
        return ast::Expr {
            kind: ast::ExprKind::Unary(ast::UnaryOp::Neg, Box::new(literal)),
            span,
        };
    }
    literal
}

fn name_expr(name: &str, span: Range<usize>) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Name(ast::Path {
            text: name.to_string(),
            span: span.clone(),
        }),
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
