//! Walking one entry point: the C++ statements it runs, with helper functions inlined
//! across files, loops with known bounds unrolled and conditions with known values
//! decided, become a `.sync` syntax tree whose spans point into the C++ files.
//!
//! What cannot be decided becomes a `param` of the extracted program: a condition with
//! no known value is `param branch_op_L42 in 0..=1` and both branches are checked (a
//! finding names the value it needs), a loop with no known bound runs 0, 1 and 2 times
//! (`param loop_op_L50 in 0..=2`). What cannot be followed at all (a handle from an
//! opaque call, an unknown callee that receives a handle) is listed as unresolved.

mod aicore;
mod api;
mod checks;
mod choices;
mod chunks;
mod expr;
mod from_before;
mod gen_task;
mod kernel;
mod loops;
mod macro_call;
mod stmt;
mod store;
mod threads;
mod type_tests;
pub mod value;

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use syncguard_grammar::ast;
use syncguard_model::api::Api;
use tree_sitter::Node;

use crate::fields::FieldChild;
use crate::index::{EXPANSIONS, FnDef, Index, Unit};
pub use aicore::{extract_kernel, is_ascend_kernel};
use value::{Place, Value};

/// How deep helper calls are inlined.
pub const MAX_INLINE_DEPTH: usize = 24;
/// How many statements and expressions one entry point may walk.
pub const MAX_STEPS: usize = 200_000;
/// Iterations of one loop before the walk stops.
pub const MAX_ITERATIONS: usize = 4_096;
/// Undecided conditions and loop bounds one entry point may turn into parameters.
pub const MAX_CHOICES: usize = 32;
/// In kernel code, more: its launches are sampled and completed by z3 per unreached
/// arm, so a choice costs one more query rather than doubling the runs; a tiling-driven
/// kernel asks one per tail test, per type test and per loop.
pub const MAX_KERNEL_CHOICES: usize = 128;
/// How deep C++ syntax nests before the walker stops following it.
pub const MAX_NESTING: usize = 200;

/// Something the extractor could not follow, at a byte range of its own space.
#[derive(Clone, Debug)]
pub struct Unresolved {
    pub span: Range<usize>,
    pub message: String,
    /// The objects a call left out uses (`.sync` names).
    pub touches: Vec<String>,
    /// Walked every way (an undecided `#if`): said, not a limit.
    pub assumption: bool,
    /// Moves data only (a vector function): only a kernel's races rest on it.
    pub data_only: bool,
}

/// One entry point as a `.sync` program.
pub struct Extracted {
    pub entry: String,
    /// The entry point's name, in the extractor's byte space.
    pub span: Range<usize>,
    pub file: ast::File,
    /// Calls of catalogued APIs (and kernel launches) in the program.
    pub api_calls: usize,
    pub unresolved: Vec<Unresolved>,
    /// Why the walk stopped before the end of the entry point, if it did.
    pub incomplete: Option<Unresolved>,
    /// Calls whose return code is thrown away (SG701), once per call site.
    pub unchecked: Vec<(Range<usize>, &'static Api)>,
    /// The code asks for its rank or the rank count: it runs on several ranks.
    pub wants_ranks: bool,
    /// The handles as the code writes them: `.sync` name → text.
    pub written: Vec<(String, String)>,
}

enum Flow {
    Normal,
    Break,
    Continue,
    Return,
}

struct Frame<'u> {
    unit: usize,
    scopes: Vec<HashMap<String, Place>>,
    /// Per scope, the objects whose destructor runs when it closes (innermost last).
    cleanups: Vec<Vec<(Place, FnDef<'u>)>>,
    this: Option<Place>,
    /// The function being walked, for recursion cuts and method lookup.
    function: Option<String>,
    class: Option<String>,
    returned: Value,
    /// The output block the call that opened this frame was made in.
    call_block: usize,
}

struct Walker<'i, 'u> {
    index: &'i Index<'u>,
    /// Open output blocks; the last is where statements go.
    blocks: Vec<Vec<ast::Stmt>>,
    /// Each open output block's id (the top-level block is 0), for the threads it starts.
    block_ids: Vec<usize>,
    next_block: usize,
    /// Host threads started and not joined yet (see `threads`).
    threads: Vec<threads::PendingThread>,
    /// Top-level statements: choices (`param`) and objects from before.
    prelude: Vec<ast::Stmt>,
    store: store::Store,
    frames: Vec<Frame<'u>>,
    next_id: usize,
    used_names: HashSet<String>,
    /// The handles as the code writes them: `.sync` name → text ([`written_place`]).
    written: HashMap<String, String>,
    unresolved: Vec<Unresolved>,
    incomplete: Option<Unresolved>,
    unchecked: Vec<(Range<usize>, &'static Api)>,
    steps: usize,
    choices: usize,
    api_calls: usize,
    nesting: usize,
    /// Streams and events that entry parameters and globals hold, created on first use.
    from_before: HashMap<Place, Value>,
    /// The communicator of the HCCL threads and channels from before, once declared.
    hccl_comm: Option<String>,
    /// The entry point's one `ChannelHandle` parameter: paired with a peer rank.
    paired_channel: Option<Place>,
    /// The rank count the program is extracted for (`HcclGetRankSize`).
    ranks: Option<i64>,
    /// Entry parameters that are pointers (`void *sendBuf`): memory from the caller.
    pointer_params: HashSet<Place>,
    wants_ranks: bool,
    /// For a GE gen-task callback: the op and the place of its `tasks` list.
    gen_task: Option<(String, Place)>,
    /// For an Ascend C kernel: what its per-core walk collects.
    core: Option<kernel::CoreState>,
    /// For an Ascend C kernel's `aicore` block: its queues, tensors and tiling values.
    aicore: Option<aicore::AicoreState>,
    /// Calls may fail (`--error-paths`): their return codes have no known value.
    error_paths: bool,
    /// Names of parameters, globals and members that may be one object (`--alias`).
    aliases: &'i [Vec<String>],
    /// An undecided `#if` whose first arm runs next (by node id): taken as true once.
    preproc_taken: Option<usize>,
    /// The macro calls being expanded, innermost last.
    sites: Vec<MacroSite>,
    /// Where kernel arguments start chunks of buffers (see `chunks`).
    chunk_starts: chunks::ChunkStarts,
}

/// A macro call whose expansion is being walked: the expansion's code is reported there.
struct MacroSite {
    range: Range<usize>,
    /// The call is a statement of its own: the value of an expression body is discarded.
    discarded: bool,
    unit: usize,
    line: usize,
}

/// What the command line says about walking an entry point.
#[derive(Clone, Copy, Debug)]
pub struct WalkOptions<'o> {
    /// Calls may fail (`--error-paths`): their return codes have no known value.
    pub error_paths: bool,
    /// Groups of names of parameters, globals and members that may be one object
    /// (`--alias src,dst`): the objects from before they stand for are one.
    pub aliases: &'o [Vec<String>],
}

/// Extract the program `entry` runs, on `ranks` ranks if it is SPMD code.
pub fn extract<'i, 'u>(
    index: &'i Index<'u>,
    entry: &FnDef<'u>,
    ranks: Option<i64>,
    options: WalkOptions<'i>,
) -> Extracted {
    let mut walker = Walker::new(index, ranks, options);
    if let Some(count) = ranks {
        let span = walker.range_in(entry.unit, entry.node);
        walker.prelude.push(ast::Stmt {
            kind: ast::StmtKind::Ranks(ast::RankCount::Fixed(ast::Expr::int(count, span.clone()))),
            span,
        });
    }
    if entry.kernel {
        let sub = walker.subkernel(entry, &mut HashMap::new());
        let vector_only = sub.1;
        walker.superkernel(
            entry.simple_name(),
            vec![sub.0],
            vector_only,
            walker.range_in(entry.unit, entry.node),
        );
        return walker.finish(entry);
    }
    walker.enter(entry);
    let mut places = Vec::new();
    for param in &entry.params {
        let place = walker.declare(&param.name);
        places.push(place.clone());
        // The caller's objects: materialized as objects from before where first used.
        walker.store.insert(place.clone(), Value::Unknown);
        // Data pointers only (`void *x`, `float *x`, `GM_ADDR x`), not objects.
        let data = param.type_text == "GM_ADDR"
            || param.type_text.trim_start_matches("const ").trim() == "void"
            || expr::type_size(&param.type_text).is_some();
        if param.indirect && !param.reference && data {
            walker.pointer_params.insert(place);
        }
    }
    walker.paired_channel = from_before::paired_channel_param(&entry.params, &places);
    walker.begin_gen_task(entry);
    walker.stmt(entry.body);
    walker.end_gen_task(entry);
    walker.finish(entry)
}

/// Extract a SuperKernel the graph fuses from `kernels`, in order (a `// syncguard:
/// superkernel NAME = k1, k2` line names them): one sub-kernel each, a parameter name
/// one buffer across them (the tensor one kernel writes and the next reads).
pub fn extract_fused<'i, 'u>(
    index: &'i Index<'u>,
    name: &str,
    kernels: &[&FnDef<'u>],
    options: WalkOptions<'i>,
) -> Extracted {
    let mut walker = Walker::new(index, None, options);
    let mut buffers = HashMap::new();
    let mut subs = Vec::new();
    let mut vector_only = false;
    for kernel in kernels {
        let (sub, vector) = walker.subkernel(kernel, &mut buffers);
        subs.push(sub);
        vector_only |= vector;
        walker.frames.clear();
    }
    let first = kernels[0];
    walker.superkernel(name, subs, vector_only, walker.range_in(first.unit, first.node));
    let mut extracted = walker.finish(first);
    extracted.entry = name.to_string();
    extracted
}

impl<'i, 'u> Walker<'i, 'u> {
    fn new(index: &'i Index<'u>, ranks: Option<i64>, options: WalkOptions<'i>) -> Self {
        Walker {
            error_paths: options.error_paths,
            aliases: options.aliases,
            index,
            blocks: vec![Vec::new()],
            block_ids: vec![0],
            next_block: 0,
            threads: Vec::new(),
            prelude: Vec::new(),
            store: store::Store::default(),
            frames: Vec::new(),
            next_id: 0,
            used_names: HashSet::new(),
            written: HashMap::new(),
            unresolved: Vec::new(),
            incomplete: None,
            unchecked: Vec::new(),
            steps: 0,
            choices: 0,
            preproc_taken: None,
            sites: Vec::new(),
            chunk_starts: chunks::ChunkStarts::new(),
            api_calls: 0,
            nesting: 0,
            from_before: HashMap::new(),
            hccl_comm: None,
            paired_channel: None,
            ranks,
            wants_ranks: false,
            pointer_params: HashSet::new(),
            gen_task: None,
            core: None,
            aicore: None,
        }
    }

    /// Open the frame of `entry`, the outermost function of the walk.
    fn enter(&mut self, entry: &FnDef<'u>) {
        let this = entry.class.as_ref().map(|_| self.fresh_place("this"));
        self.frames.push(Frame {
            unit: entry.unit,
            scopes: vec![HashMap::new()],
            cleanups: vec![Vec::new()],
            this,
            function: Some(entry.qualified.clone()),
            class: entry.class.clone(),
            returned: Value::Unknown,
            call_block: 0,
        });
    }

    /// The extracted program: the top-level declarations, then what was walked.
    fn finish(mut self, entry: &FnDef<'u>) -> Extracted {
        let name_span = crate::index::function_declarator(entry.node)
            .and_then(|d| d.field_child("declarator"))
            .unwrap_or(entry.node);
        let mut stmts = std::mem::take(&mut self.prelude);
        stmts.extend(self.close_block());
        let store = &self.store;
        let end_of = |buffer: &str| {
            store
                .get(&format!("{buffer}.#size"))
                .and_then(Value::int)
                .unwrap_or(syncguard_model::model::UNKNOWN_SIZE)
        };
        chunks::bound_chunks(&mut stmts, &self.chunk_starts, &end_of);
        Extracted {
            entry: entry.qualified.clone(),
            span: self.range_in(entry.unit, name_span),
            file: ast::File { stmts },
            api_calls: self.api_calls,
            unresolved: self.unresolved,
            incomplete: self.incomplete,
            unchecked: self.unchecked,
            wants_ranks: self.wants_ranks,
            written: self.written.into_iter().collect(),
        }
    }
}

impl<'u> Walker<'_, 'u> {
    /// What a catalogued call returns: success, unless failures are to be checked.
    fn call_result(&self) -> Value {
        if self.error_paths {
            Value::Unknown
        } else {
            Value::Int(0)
        }
    }

    fn unit(&self) -> &'u Unit {
        self.index.unit(self.frame().unit)
    }

    /// The analyzed file the walk is in: inside a macro expansion, the call site's.
    fn source_unit(&self) -> (&'u Unit, Option<&MacroSite>) {
        match self.sites.last() {
            Some(site) if self.frame().unit == EXPANSIONS => (self.index.unit(site.unit), Some(site)),
            _ => (self.unit(), None),
        }
    }

    /// The analyzed file whose names the walk resolves now: the frame's, or inside a
    /// macro expansion the call site's.
    fn scope_unit(&self) -> usize {
        match self.sites.last() {
            Some(site) if self.frame().unit == EXPANSIONS => site.unit,
            _ => self.frame().unit,
        }
    }

    fn frame(&self) -> &Frame<'u> {
        self.frames.last().expect("a frame is open while walking")
    }

    fn frame_mut(&mut self) -> &mut Frame<'u> {
        self.frames.last_mut().expect("a frame is open while walking")
    }

    fn text(&self, node: Node) -> &'u str {
        self.unit().text_of(node)
    }

    /// A node's bytes in the extractor's space (each file at its own base).
    fn range(&self, node: Node) -> Range<usize> {
        self.range_in(self.frame().unit, node)
    }

    fn range_in(&self, unit: usize, node: Node) -> Range<usize> {
        if unit == EXPANSIONS {
            return self.sites.last().map_or(0..0, |site| site.range.clone());
        }
        let base = self.index.unit(unit).base;
        base + node.start_byte()..base + node.end_byte()
    }

    fn emit(&mut self, kind: ast::StmtKind, span: Range<usize>) {
        self.blocks
            .last_mut()
            .expect("an output block is open while walking")
            .push(ast::Stmt { kind, span });
    }

    fn unresolved(&mut self, node: Node, message: impl Into<String>) {
        self.unresolved_touching(node, message, Vec::new());
    }

    /// A call left out (or not followed) that uses `touches`: findings that rest on
    /// those objects are undecided.
    fn unresolved_touching(&mut self, node: Node, message: impl Into<String>, touches: Vec<String>) {
        self.note_unresolved(node, message.into(), touches, false);
    }

    /// A kernel call left out that only moves data: it orders nothing, so only the
    /// kernel's races are undecided for it.
    fn unresolved_data(&mut self, node: Node, message: impl Into<String>) {
        let before = self.unresolved.len();
        self.note_unresolved(node, message.into(), Vec::new(), false);
        if let Some(item) = self.unresolved.get_mut(before) {
            item.data_only = true;
        }
    }

    /// A choice the walk takes every way (an `#if` no flag decides): said as a note,
    /// but no limit, since every arm is checked.
    fn assumed(&mut self, node: Node, message: impl Into<String>) {
        self.note_unresolved(node, message.into(), Vec::new(), true);
    }

    fn note_unresolved(&mut self, node: Node, message: String, touches: Vec<String>, assumption: bool) {
        let span = self.range(node);
        if self.unresolved.iter().any(|u| u.span == span) {
            return;
        }
        self.unresolved.push(Unresolved {
            span,
            message,
            touches,
            assumption,
            data_only: false,
        });
    }

    /// Count a step; false once the budget is spent (the walk then unwinds).
    fn step(&mut self, node: Node) -> bool {
        if self.incomplete.is_some() {
            return false;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.incomplete = Some(Unresolved {
                touches: Vec::new(),
                span: self.range(node),
                message: format!(
                    "the walk of this entry point stopped here after {MAX_STEPS} steps (loops unrolled, helpers \
                     inlined); what follows was not checked"
                ),
                assumption: false,
                data_only: false,
            });
            return false;
        }
        true
    }

    fn fresh_place(&mut self, name: &str) -> Place {
        self.next_id += 1;
        format!("{name}#{}", self.next_id)
    }

    /// A new local in the innermost scope.
    fn declare(&mut self, name: &str) -> Place {
        let place = self.fresh_place(name);
        self.frame_mut()
            .scopes
            .last_mut()
            .expect("a scope is open")
            .insert(name.to_string(), place.clone());
        place
    }

    fn alias(&mut self, name: &str, place: Place) {
        self.frame_mut()
            .scopes
            .last_mut()
            .expect("a scope is open")
            .insert(name.to_string(), place);
    }

    fn lookup_local(&self, name: &str) -> Option<Place> {
        self.frame()
            .scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name).cloned())
    }

    /// A `.sync` name for an object, unique in the program.
    fn object_name(&mut self, wanted: &str) -> String {
        let mut base = value::name_for(wanted);
        if syncguard_grammar::lexer::Keyword::is_keyword(&base)
            || matches!(base.as_str(), "rank" | "context" | "memory")
            || syncguard_model::api::lookup(&base).is_some()
            || base.starts_with("ACL_")
            || base.starts_with("cuda")
        {
            base = format!("{base}_");
        }
        let mut name = base.clone();
        let mut counter = 1;
        while !self.used_names.insert(name.clone()) {
            counter += 1;
            name = format!("{base}_{counter}");
        }
        name
    }

    /// Remember that the object `name` is written `node` in the code (`&inReady_` gives
    /// `inReady_`), for messages; nothing when `node` is not a plain place.
    fn record_written(&mut self, name: &str, node: Node<'u>) {
        match written_place(self.text(api::strip_casts(node))) {
            Some(text) => self.written.insert(name.to_string(), text),
            None => self.written.remove(name),
        };
    }

    /// Run `arms` as alternatives of a `param` the extractor declares (`branch_L42`):
    /// each arm on its own copy of the state, emitted as `if choice == k { ... }`.
    /// A condition recognized by `condition` (see `choices`) that was asked before and
    /// whose variables did not change takes the earlier choice.
    fn alternatives(
        &mut self,
        at: Node<'u>,
        prefix: &str,
        condition: Option<choices::ConditionKey>,
        arms: &[Option<Node<'u>>],
        rest: &[Node<'u>],
    ) -> Option<Flow> {
        let remembered = condition
            .as_ref()
            .and_then(|condition| self.remembered_choice(condition));
        let choice = match remembered {
            Some(choice) => choice,
            None => {
                let choice = self.choice_param(at, prefix, arms.len() as i64 - 1)?;
                if let Some(condition) = &condition {
                    self.remember_choice(condition, &choice);
                }
                choice
            }
        };
        let span = self.range(at);
        let conditions: Vec<Option<ast::Expr>> = (0..arms.len())
            .map(|arm| {
                (arm + 1 < arms.len() || arms.len() == 1).then(|| {
                    ast_binary(
                        ast::BinaryOp::Eq,
                        ast::Expr::name(&choice, span.clone()),
                        ast::Expr::int(arm as i64, span.clone()),
                    )
                })
            })
            .collect();
        self.branches(at, &conditions, arms, rest)
    }

    /// Run each arm under its condition (`None`: the last `else`) on its own copy of
    /// the state, followed by `rest` (the statements after the branch in its block)
    /// where the arm ends normally, so that an arm that `continue`s, `break`s or
    /// `return`s skips them as the C++ does. Emitted as an `if` chain; where the arms
    /// leave a place with different values, it is unknown afterwards.
    fn branches(
        &mut self,
        at: Node<'u>,
        conditions: &[Option<ast::Expr>],
        arms: &[Option<Node<'u>>],
        rest: &[Node<'u>],
    ) -> Option<Flow> {
        let before = self.store.freeze();
        let returned_before = self.frame().returned.clone();
        let mut outcomes = Vec::new();
        let mut rest_taken = Vec::new();
        let mut block_ids = Vec::new();
        let mut returned = Vec::new();
        for arm in arms {
            self.store = before.clone();
            self.frame_mut().returned = returned_before.clone();
            self.open_block();
            let (flow, took_rest) = self.arm(*arm, rest);
            let (id, body) = self.take_block();
            outcomes.push((body, std::mem::take(&mut self.store), flow));
            rest_taken.push(took_rest);
            block_ids.push(id);
            returned.push(std::mem::replace(&mut self.frame_mut().returned, Value::Unknown));
        }
        // Only where an arm jumps does the rest of the block belong to the other arms;
        // otherwise it runs once, after the branch (no copy per arm: no blow-up).
        let consumed =
            rest_taken.iter().any(|took| *took) || outcomes.iter().any(|(_, _, flow)| !matches!(flow, Flow::Normal));
        if consumed {
            let arms_run = outcomes.iter_mut().zip(&rest_taken).zip(&block_ids).zip(&mut returned);
            for ((((body, store, flow), took_rest), id), returned) in arms_run {
                if matches!(flow, Flow::Normal) && !rest.is_empty() && !took_rest {
                    self.store = std::mem::take(store);
                    self.frame_mut().returned = std::mem::replace(returned, Value::Unknown);
                    self.reopen_block(*id, std::mem::take(body));
                    *flow = self.stmt_list(rest);
                    *body = self.take_block().1;
                    *store = std::mem::take(&mut self.store);
                    *returned = std::mem::replace(&mut self.frame_mut().returned, Value::Unknown);
                }
            }
        }
        // What the function returns: the arms' value where they agree; in kernel code,
        // the branch's choice between them (`if (!CopyIn(t))` after `CopyIn` returned
        // early under the same condition takes the same arm).
        self.frame_mut().returned = match returned.split_first() {
            Some((first, others)) if others.iter().all(|value| value == first) => first.clone(),
            Some(_) if self.aicore.is_some() => {
                let values: Vec<Option<&Value>> = returned.iter().map(Some).collect();
                self.chosen_by_conditions(&values, conditions).unwrap_or(Value::Unknown)
            }
            Some(_) => Value::Unknown,
            None => returned_before,
        };
        // The threads an arm started and did not join end with it.
        for ((body, _, _), id) in outcomes.iter_mut().zip(&block_ids) {
            self.end_threads_of(*id, body);
        }
        let span = self.range(at);
        let mut chain: Option<ast::Else> = None;
        let mut stores = Vec::new();
        let mut flows = Vec::new();
        for ((body, store, flow), condition) in outcomes.into_iter().zip(conditions).rev() {
            stores.push(store);
            flows.push(flow);
            let block = ast::Block {
                stmts: body,
                span: span.clone(),
            };
            let Some(cond) = condition.clone() else {
                chain = Some(ast::Else::Block(block));
                continue;
            };
            let stmt = ast::Stmt {
                kind: ast::StmtKind::If {
                    cond,
                    then: block,
                    otherwise: chain.take(),
                },
                span: span.clone(),
            };
            chain = Some(ast::Else::If(Box::new(stmt)));
        }
        match chain {
            Some(ast::Else::If(stmt)) => self.emit(stmt.kind, stmt.span),
            Some(ast::Else::Block(block)) => self.blocks.last_mut().expect("open").extend(block.stmts),
            None => {}
        }
        self.store = store::merge(&before, &stores);
        if self.aicore.is_some() {
            let arms: Vec<&store::Store> = stores.iter().rev().collect();
            self.merge_as_conditions(&before, &arms, conditions);
        }
        if !consumed {
            return None;
        }
        let all = |wanted: fn(&Flow) -> bool| flows.iter().all(wanted);
        Some(if all(|f| matches!(f, Flow::Return)) {
            Flow::Return
        } else if all(|f| matches!(f, Flow::Break)) {
            Flow::Break
        } else if all(|f| matches!(f, Flow::Continue)) {
            Flow::Continue
        } else {
            // In a function's own body the rest of the function is in the arms, and
            // every arm goes back to the caller: exact.
            let in_function_body = self.frame().scopes.len() <= 2;
            if flows.iter().any(|f| matches!(f, Flow::Return)) && !in_function_body {
                // The rest of this block is skipped exactly; the code after the blocks
                // around it is not.
                self.unresolved(
                    at,
                    "a branch here returns early under a condition with no known value: the code after the \
                     block around it is taken as running in every case",
                );
            }
            Flow::Normal
        })
    }

    /// One arm of a branch, and whether it ran `rest` itself: an `else if` is the
    /// next branch of the same chain, so the statements after the chain follow each of
    /// its arms that does not jump (an early `return` in an `else if` skips them).
    fn arm(&mut self, arm: Option<Node<'u>>, rest: &[Node<'u>]) -> (Flow, bool) {
        match arm {
            Some(node) if node.kind() == "if_statement" && !rest.is_empty() => match self.if_statement(node, rest) {
                Some(flow) => (flow, true),
                None => (Flow::Normal, false),
            },
            Some(node) if node.kind() == "case_statement" => (self.case_arm(node), false),
            Some(node) => (self.stmt(node), false),
            None => (Flow::Normal, false),
        }
    }

    /// Declare `param PREFIX_FILE_L12 in 0..=max;` and return its name.
    fn choice_param(&mut self, at: Node, prefix: &str, max: i64) -> Option<String> {
        self.choices += 1;
        let max_choices = if self.aicore.is_some() {
            MAX_KERNEL_CHOICES
        } else {
            MAX_CHOICES
        };
        if self.choices > max_choices {
            // Each choice doubles (or triples) the runs the analysis makes.
            self.incomplete.get_or_insert(Unresolved {
                touches: Vec::new(),
                span: self.range(at),
                message: format!(
                    "more than {max_choices} conditions or loop bounds here have no known value: the walk of this \
                     entry point stopped at this one, and what follows was not checked"
                ),
                assumption: false,
                data_only: false,
            });
            return None;
        }
        let (unit, site) = self.source_unit();
        let line = site.map_or(at.start_position().row + 1, |site| site.line);
        let stem = std::path::Path::new(&unit.path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = self.object_name(&format!("{prefix}_{stem}_L{line}"));
        self.declare_param(&name, 0, Some(max), self.range(at));
        Some(name)
    }

    /// `param NAME in min..=max;` (or `min..` without a bound) at the top of the program.
    fn declare_param(&mut self, name: &str, min: i64, max: Option<i64>, span: Range<usize>) {
        self.prelude.push(ast::Stmt {
            kind: ast::StmtKind::Param {
                name: ast::Ident {
                    name: name.to_string(),
                    span: span.clone(),
                },
                range: ast::RangeExpr {
                    start: Box::new(ast::Expr::int(min, span.clone())),
                    inclusive: max.is_some(),
                    end: max.map(|max| Box::new(ast::Expr::int(max, span.clone()))),
                    span: span.clone(),
                },
            },
            span,
        });
    }
}

pub(crate) fn ast_binary(op: ast::BinaryOp, left: ast::Expr, right: ast::Expr) -> ast::Expr {
    let span = left.span.start.min(right.span.start)..left.span.end.max(right.span.end);
    ast::Expr {
        kind: ast::ExprKind::Binary(op, Box::new(left), Box::new(right)),
        span,
    }
}

/// `text` as a handle's name in messages and fixes, if it is a plain place: names joined
/// by `.`, `->` or `::`, with literal subscripts (`streams_[1]`), an `&` or `*`,
/// parentheses around it and `this->` (a member is written without it in most code) dropped. A subscript by a variable (`streams_[i]`) names a
/// different handle on each iteration, so it is not one.
pub(crate) fn written_place(text: &str) -> Option<String> {
    let mut place: String = text.split_whitespace().collect();
    loop {
        let inner = place
            .strip_prefix("this->")
            .or_else(|| place.strip_prefix('&'))
            .or_else(|| place.strip_prefix('*'))
            .or_else(|| place.strip_prefix('(').and_then(|rest| rest.strip_suffix(')')));
        match inner {
            Some(inner) => place = inner.to_string(),
            None => break,
        }
    }
    let plain = place
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.->:[]".contains(c));
    let literal_subscripts = place.split('[').skip(1).all(|rest| {
        rest.split(']')
            .next()
            .is_some_and(|index| index.chars().all(|c| c.is_ascii_digit()) && !index.is_empty())
    });
    let starts_as_name = place.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == ':');
    (plain && literal_subscripts && starts_as_name && place.len() <= 48).then_some(place)
}

/// `base[start..end]`, a byte range in the `.sync` form.
pub(super) fn byte_slice(base: ast::Expr, start: ast::Expr, end: ast::Expr, span: std::ops::Range<usize>) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Slice {
            base: Box::new(base),
            range: ast::RangeExpr {
                start: Box::new(start),
                end: Some(Box::new(end)),
                inclusive: false,
                span: span.clone(),
            },
        },
        span,
    }
}

#[cfg(test)]
mod written_place_tests {
    use super::written_place;

    #[test]
    fn a_handle_is_named_as_the_code_writes_it() {
        assert_eq!(written_place("&inReady_").as_deref(), Some("inReady_"));
        assert_eq!(written_place("&this->streams_[1]").as_deref(), Some("streams_[1]"));
        assert_eq!(written_place("&(ctx->stream)").as_deref(), Some("ctx->stream"));
        assert_eq!(written_place("& pool.events [ 0 ]").as_deref(), Some("pool.events[0]"));
    }

    #[test]
    fn what_is_not_one_handle_is_not_a_name() {
        // A subscript by a variable names another handle on each iteration.
        assert_eq!(written_place("&streams[i]"), None);
        assert_eq!(written_place("make_stream()"), None);
        assert_eq!(written_place("base + offset"), None);
        assert_eq!(written_place("&streams[]"), None);
        assert_eq!(written_place(&format!("&{}", "x".repeat(60))), None);
    }
}
