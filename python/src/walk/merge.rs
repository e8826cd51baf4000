//! Where control flow meets again: the states two branches (or a loop run an unknown
//! number of times) leave, joined into one.
//!
//! In the `.sync` program each branch is a block, and a name declared in a block is not
//! visible after it. So after the join no value may name an object declared inside a
//! branch: a tensor or stream that both branches create alike (`if a: return
//! torch.rand(...)` / `else: return torch.randn(...)`) becomes one object, its creation
//! hoisted before the `if` and the else branch's name renamed to the then branch's;
//! any other value the branches leave different is unknown after them (and said, where
//! it held a handle).

use std::collections::{HashMap, HashSet};

use super::*;

/// What a branch can change: the locals and results of every frame, the objects, the
/// current stream, the events recorded so far.
#[derive(Clone)]
pub(super) struct State {
    frames: Vec<FrameState>,
    heap: Vec<Obj>,
    current: Value,
    device: i64,
    other_currents: std::collections::BTreeMap<i64, Value>,
    program_device: devices::ProgramDevice,
    recorded: HashSet<String>,
    started: HashMap<usize, String>,
}

#[derive(Clone)]
struct FrameState {
    locals: HashMap<String, Value>,
    results: Results,
}

/// What a function returns on the path walked: the value of the `return` that ended it
/// (`None` before any), and the values of returns taken under conditions with no known
/// value on paths the walk then went on past (the code after them is taken to run in
/// every case).
#[derive(Clone, Debug)]
pub(super) struct Results {
    pub returned: Value,
    pub early: Option<Value>,
}

impl Results {
    pub(super) fn new() -> Results {
        Results {
            returned: Value::None,
            early: None,
        }
    }

    /// This path returned while the walk goes on along another, whose result so far is
    /// `continuing`: its result becomes an early one.
    fn return_early(&mut self, continuing: Value) {
        let result = std::mem::replace(&mut self.returned, continuing);
        self.early = join_early(self.early.take(), Some(result));
    }

    /// What the function returns: its result, where every early one is the same.
    pub(super) fn value(self) -> Value {
        match self.early {
            Some(early) if early != self.returned => Value::Unknown,
            _ => self.returned,
        }
    }
}

impl State {
    fn results(&mut self) -> Option<&mut Results> {
        self.frames.last_mut().map(|frame| &mut frame.results)
    }

    /// The innermost frame's result so far.
    pub(super) fn returned(&self) -> Value {
        self.frames
            .last()
            .map_or(Value::None, |frame| frame.results.returned.clone())
    }
}

/// One way through a choice, walked: the state it left, how it ended, its statements.
pub(super) struct Branch {
    pub state: State,
    pub flow: Flow,
    pub stmts: Vec<ast::Stmt>,
}

/// Two branches joined: the creations both share (to emit before the `if`), the
/// branches' statements, how the whole ended.
pub(super) struct Joined {
    pub hoisted: Vec<ast::Stmt>,
    pub then: Vec<ast::Stmt>,
    pub otherwise: Vec<ast::Stmt>,
    pub flow: Flow,
}

impl<'t> Walker<'_, 't> {
    pub(super) fn snapshot(&self) -> State {
        State {
            frames: self
                .frames
                .iter()
                .map(|frame| FrameState {
                    locals: frame.locals.clone(),
                    results: frame.results.clone(),
                })
                .collect(),
            heap: self.heap.clone(),
            current: self.current.clone(),
            device: self.device,
            other_currents: self.other_currents.clone(),
            program_device: self.program_device,
            recorded: self.recorded.clone(),
            started: self.started.clone(),
        }
    }

    pub(super) fn restore(&mut self, state: State) {
        for (frame, saved) in self.frames.iter_mut().zip(state.frames) {
            frame.locals = saved.locals;
            frame.results = saved.results;
        }
        self.heap = state.heap;
        self.current = state.current;
        self.device = state.device;
        self.other_currents = state.other_currents;
        self.program_device = state.program_device;
        self.recorded = state.recorded;
        self.started = state.started;
    }

    /// This path (the walk's) returned while the walk goes on along another (whose
    /// result so far is `continuing`).
    pub(super) fn return_early(&mut self, continuing: Value) {
        if let Some(frame) = self.frames.last_mut() {
            frame.results.return_early(continuing);
        }
    }

    /// The innermost frame's result so far.
    pub(super) fn returned(&self) -> Value {
        self.frames
            .last()
            .map_or(Value::None, |frame| frame.results.returned.clone())
    }

    /// Every value the walk's state holds, for `visit` to change.
    pub(super) fn for_each_value(&mut self, mut visit: impl FnMut(&mut Value)) {
        for frame in &mut self.frames {
            frame.locals.values_mut().for_each(&mut visit);
            visit(&mut frame.results.returned);
            if let Some(early) = &mut frame.results.early {
                visit(early);
            }
        }
        for obj in &mut self.heap {
            obj.attrs.values_mut().for_each(&mut visit);
            obj.items.iter_mut().for_each(&mut visit);
        }
        visit(&mut self.current);
        self.other_currents.values_mut().for_each(&mut visit);
    }

    /// Join the then branch, walked earlier, with the else branch the walk is on (its
    /// flow and statements). `at` is the condition.
    pub(super) fn join_branches(
        &mut self,
        at: Node<'t>,
        mut then: Branch,
        else_flow: Flow,
        mut otherwise: Vec<ast::Stmt>,
    ) -> Joined {
        let both_return = then.flow == Flow::Return && else_flow == Flow::Return;
        if !both_return {
            if then.flow == Flow::Return
                && let Some(results) = then.state.results()
            {
                results.return_early(self.returned());
            }
            if else_flow == Flow::Return {
                self.return_early(then.state.returned());
            }
        }
        let mut pairs = Vec::new();
        let mine = self.snapshot();
        pair_states(&then.state, &mine, &mut pairs);
        let (hoisted, renamed) = unify(&mut then.stmts, &mut otherwise, &pairs);
        if !renamed.is_empty() {
            syntax::rename(&mut otherwise, &renamed);
            self.for_each_value(|value| value.rename(&renamed));
        }
        self.merge(then.state, at, "these branches");
        let mut declared = syntax::declared_names(&then.stmts);
        declared.extend(syntax::declared_names(&otherwise));
        self.forget(&declared);
        Joined {
            hoisted,
            then: then.stmts,
            otherwise,
            flow: if both_return { Flow::Return } else { Flow::Normal },
        }
    }

    /// Where two ways meet: a value they left different is unknown after them (`what`
    /// names them for the note that says so where the value held a handle).
    pub(super) fn merge(&mut self, other: State, at: Node<'t>, what: &str) {
        let mut lost: Vec<String> = Vec::new();
        for (frame, theirs) in self.frames.iter_mut().zip(other.frames) {
            merge_map(&mut frame.locals, &theirs.locals, &mut |name| {
                lost.push(format!("`{name}`"))
            });
            let results = &mut frame.results;
            if results.returned != theirs.results.returned {
                results.returned = Value::Unknown;
            }
            results.early = join_early(results.early.take(), theirs.results.early);
        }
        for (slot, obj) in other.heap.into_iter().enumerate() {
            match self.heap.get_mut(slot) {
                Some(mine) => {
                    merge_map(&mut mine.attrs, &obj.attrs, &mut |name| lost.push(format!("`.{name}`")));
                    if mine.items != obj.items {
                        mine.items.clear();
                    }
                }
                None => self.heap.push(obj),
            }
        }
        if self.current != other.current || self.device != other.device {
            self.current = Value::Unknown;
        }
        let devices: Vec<i64> = self
            .other_currents
            .keys()
            .chain(other.other_currents.keys())
            .copied()
            .collect();
        for device in devices {
            let default = Value::DefaultStream(device);
            let theirs = other.other_currents.get(&device).unwrap_or(&default);
            let mine = self.other_currents.entry(device).or_insert_with(|| default.clone());
            if mine != theirs {
                *mine = Value::Unknown;
            }
        }
        if self.program_device != other.program_device {
            self.program_device = devices::ProgramDevice::Unknown;
        }
        // Recorded on either way: a later wait is kept (and checked for the other).
        self.recorded.extend(other.recorded);
        // Started on both ways, as the same `thread` block: a later join can wait for it.
        self.started
            .retain(|thread, name| other.started.get(thread) == Some(name));
        lost.sort();
        lost.dedup();
        if !lost.is_empty() {
            self.note(
                at,
                format!(
                    "{} {} different streams, events or tensors after {what}: not known after them",
                    lost.join(", "),
                    if lost.len() == 1 { "holds" } else { "hold" }
                ),
            );
        }
    }

    /// No value names an object declared in `declared` (inside a block that ended):
    /// such values are unknown from here.
    pub(super) fn forget(&mut self, declared: &HashSet<String>) {
        if declared.is_empty() {
            return;
        }
        self.for_each_value(|value| {
            if value.mentions(declared) {
                *value = Value::Unknown;
            }
        });
    }
}

/// Both ways' early results: either's, or unknown where both have one and they differ.
fn join_early(a: Option<Value>, b: Option<Value>) -> Option<Value> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => Some(Value::Unknown),
        (a, b) => a.or(b),
    }
}

/// `mine` keeps what both maps hold alike; a name they hold differently is unknown (and
/// reported to `lost` where either value held a handle).
fn merge_map(mine: &mut HashMap<String, Value>, theirs: &HashMap<String, Value>, lost: &mut impl FnMut(&str)) {
    let names: Vec<String> = mine.keys().chain(theirs.keys()).cloned().collect();
    for name in names {
        let (a, b) = (mine.get(&name), theirs.get(&name));
        if a != b {
            if a.is_some_and(Value::holds_handle) || b.is_some_and(Value::holds_handle) {
                lost(&name);
            }
            mine.insert(name, Value::Unknown);
        }
    }
}

/// The objects two states hold in the same place under different names: `(then's,
/// else's)`, in a fixed order.
fn pair_states(then: &State, otherwise: &State, pairs: &mut Vec<(String, String)>) {
    for (a, b) in then.frames.iter().zip(&otherwise.frames) {
        pair_maps(&a.locals, &b.locals, pairs);
        pair_values(&a.results.returned, &b.results.returned, pairs);
        if let (Some(x), Some(y)) = (&a.results.early, &b.results.early) {
            pair_values(x, y, pairs);
        }
    }
    for (a, b) in then.heap.iter().zip(&otherwise.heap) {
        pair_maps(&a.attrs, &b.attrs, pairs);
        for (x, y) in a.items.iter().zip(&b.items) {
            pair_values(x, y, pairs);
        }
    }
    pair_values(&then.current, &otherwise.current, pairs);
}

fn pair_maps(a: &HashMap<String, Value>, b: &HashMap<String, Value>, pairs: &mut Vec<(String, String)>) {
    let mut names: Vec<&String> = a.keys().filter(|name| b.contains_key(*name)).collect();
    names.sort();
    for name in names {
        pair_values(&a[name], &b[name], pairs);
    }
}

/// Streams and buffers (of one kind of memory) at the same place of two values.
fn pair_values(a: &Value, b: &Value, pairs: &mut Vec<(String, String)>) {
    match (a, b) {
        (Value::Buffer(x, p), Value::Buffer(y, q)) if p == q && x != y => pairs.push((x.clone(), y.clone())),
        (Value::Stream(x), Value::Stream(y)) if x != y => pairs.push((x.clone(), y.clone())),
        (Value::Tuple(xs), Value::Tuple(ys)) | (Value::List(xs), Value::List(ys)) if xs.len() == ys.len() => {
            for (x, y) in xs.iter().zip(ys) {
                pair_values(x, y, pairs);
            }
        }
        (Value::Dict(xs), Value::Dict(ys)) if xs.len() == ys.len() => {
            for ((kx, x), (ky, y)) in xs.iter().zip(ys) {
                if kx == ky {
                    pair_values(x, y, pairs);
                }
            }
        }
        (Value::DataBuffer(x), Value::DataBuffer(y)) | (Value::StreamContext(x), Value::StreamContext(y)) => {
            pair_values(x, y, pairs);
        }
        _ => {}
    }
}

/// Of the `pairs`, those both branches create alike at their top level (`let x =
/// acl.rt.malloc(1 MiB, ...)` in one, the same call in the other) become one object:
/// the then branch's creation is taken out to be emitted before the `if`, the else
/// branch's is dropped. Returns the creations and the else names renamed.
fn unify(
    then: &mut Vec<ast::Stmt>,
    otherwise: &mut Vec<ast::Stmt>,
    pairs: &[(String, String)],
) -> (Vec<ast::Stmt>, HashMap<String, String>) {
    let mut renamed: HashMap<String, String> = HashMap::new();
    if pairs.is_empty() {
        return (Vec::new(), renamed);
    }
    let then_lets = top_level_lets(then);
    let else_lets = top_level_lets(otherwise);
    let then_declared = syntax::declared_names(then);
    let mut taken: HashSet<&str> = HashSet::new();
    let (mut hoist, mut drop) = (Vec::new(), Vec::new());
    for (a, b) in pairs {
        if taken.contains(a.as_str()) || renamed.contains_key(b) {
            continue;
        }
        let (Some((at_a, value_a)), Some((at_b, value_b))) = (then_lets.get(a.as_str()), else_lets.get(b.as_str()))
        else {
            continue;
        };
        let alike = syncguard_grammar::expr_text(value_a) == syncguard_grammar::expr_text(value_b);
        if !alike || syntax::mentions_any(value_a, &then_declared) {
            continue;
        }
        taken.insert(a);
        renamed.insert(b.clone(), a.clone());
        hoist.push(*at_a);
        drop.push(*at_b);
    }
    let hoisted = take_positions(then, hoist);
    take_positions(otherwise, drop);
    (hoisted, renamed)
}

/// Remove the statements at `positions`; returns them in their order.
fn take_positions(stmts: &mut Vec<ast::Stmt>, mut positions: Vec<usize>) -> Vec<ast::Stmt> {
    positions.sort_unstable();
    let mut taken: Vec<ast::Stmt> = positions.into_iter().rev().map(|at| stmts.remove(at)).collect();
    taken.reverse();
    taken
}

/// The creations at the top level of a block: name → (position, created by).
fn top_level_lets(stmts: &[ast::Stmt]) -> HashMap<&str, (usize, &ast::Expr)> {
    let mut lets = HashMap::new();
    for (at, stmt) in stmts.iter().enumerate() {
        if let ast::StmtKind::Let {
            pattern: ast::Pattern::Name(name),
            value,
        } = &stmt.kind
            && matches!(value.kind, ast::ExprKind::Call(_))
        {
            lets.insert(name.name.as_str(), (at, value));
        }
    }
    lets
}
