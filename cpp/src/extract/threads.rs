//! Host threads the code starts: `std::thread t(f, args...)`, `threads.emplace_back(f,
//! args...)` and `pthread_create(&t, attr, f, arg)` run `f` (or a lambda) with those
//! arguments, as host threads of the caller.
//!
//! `.sync` has no join: a `thread` block runs concurrently with everything its parent
//! does after it, so the teardown after `t.join()` would race with the thread. A joined
//! thread is therefore written into its parent: its calls up to its first host-blocking
//! call (a synchronize, a polling loop) where it is started, where they are issued
//! concurrently with the parent's next calls as far as the device can tell, and the rest
//! where it is joined (`t.join()`, `pthread_join(t, ...)`), which the parent passes only
//! once the thread is done. A thread not joined in the block that started it (detached,
//! or joined elsewhere) is taken to end where that block ends.

use syncguard_grammar::ast;
use syncguard_model::api::{self, Effect};
use tree_sitter::Node;

use super::value::{Place, Value};
use super::{MAX_INLINE_DEPTH, Walker};
use crate::fields::FieldChild;
use crate::index::FnDef;

/// A started thread whose rest (from its first host-blocking call) is due at its join.
#[derive(Clone, Debug)]
pub(super) struct PendingThread {
    /// Where the thread object is (`t`, `workers[2]`).
    place: Place,
    /// The output block that started it: the rest is due there at the latest.
    block: usize,
    rest: Vec<ast::Stmt>,
}

impl<'u> Walker<'_, 'u> {
    /// `std::thread t(f, args...)`: start `f` as a thread kept at `place`.
    pub(super) fn spawn_thread(&mut self, at: Node<'u>, place: Place, function: Node<'u>, args: &[Node<'u>]) {
        self.open_block();
        let started = self.run_thread_function(at, function, args);
        let mut body = self.close_block();
        if !started {
            return;
        }
        let split = body.iter_mut().position(blocks_host).unwrap_or(body.len());
        let rest = body.split_off(split);
        self.blocks.last_mut().expect("an output block is open").extend(body);
        let block = self.current_block();
        self.threads.push(PendingThread { place, block, rest });
    }

    /// Walk a thread's function (a function the files define, a method with its object
    /// first, or a lambda) with its arguments; false, with a note, if it cannot be.
    fn run_thread_function(&mut self, at: Node<'u>, function: Node<'u>, args: &[Node<'u>]) -> bool {
        let function = super::api::strip_casts(function);
        if function.kind() == "lambda_expression" {
            if let Some(body) = function.field_child("body") {
                self.stmt(body);
            }
            return true;
        }
        let name = self
            .text(function_name(function))
            .trim()
            .trim_start_matches("::")
            .to_string();
        let Some(definition) = self.thread_function(function) else {
            self.unresolved(
                at,
                format!("the thread runs `{name}`, which the analyzed files do not define: it is not followed"),
            );
            return false;
        };
        let recursive = self
            .frames
            .iter()
            .any(|frame| frame.function.as_deref() == Some(definition.qualified.as_str()));
        if recursive || self.frames.len() > MAX_INLINE_DEPTH {
            self.unresolved(at, format!("the thread's `{name}` is not followed: it nests too deep"));
            return false;
        }
        // `std::thread(&Worker::Run, this, x)`: a method runs on its first argument.
        let (receiver, args) = match (definition.class.is_some(), args.split_first()) {
            (true, Some((object, rest))) if definition.params.len() == rest.len() => {
                let receiver = match self.eval(*object) {
                    Value::Ref(place) => Some(place),
                    _ => self.place_of(*object),
                };
                (receiver, rest)
            }
            _ => (None, args),
        };
        self.run_function(&definition, receiver, args);
        true
    }

    /// `t.join()`, `pthread_join(t, ...)`: the rest of the thread at `place` runs here.
    pub(super) fn join_thread(&mut self, at: Node<'u>, place: &str) {
        let block = self.current_block();
        let Some(position) = self.threads.iter().position(|thread| thread.place == place) else {
            return;
        };
        if self.threads[position].block != block {
            self.unresolved(
                at,
                "a thread joined in another block than the one that started it is taken to end where that block ends",
            );
            return;
        }
        let thread = self.threads.remove(position);
        self.blocks
            .last_mut()
            .expect("an output block is open")
            .extend(thread.rest);
    }

    /// Thread calls: `pthread_create`, `pthread_join`, `t.join()`, `t.detach()`,
    /// `threads.emplace_back(f, ...)`. `None` for any other call.
    pub(super) fn thread_call(
        &mut self,
        node: Node<'u>,
        function: Node<'u>,
        simple: &str,
        args: &[Node<'u>],
    ) -> Option<Value> {
        let method_of = |walker: &mut Self| {
            function
                .field_child("argument")
                .filter(|_| function.kind() == "field_expression")
                .and_then(|object| walker.place_of(object))
        };
        match simple {
            "pthread_create" => {
                let [handle, _, start, rest @ ..] = args else {
                    return None;
                };
                let place = self.output_place(*handle)?;
                self.spawn_thread(node, place, *start, rest);
                Some(Value::Int(0))
            }
            "pthread_join" => {
                let place = self.place_of(*args.first()?)?;
                self.join_thread(node, &place);
                Some(Value::Int(0))
            }
            "join" => {
                let place = method_of(self)?;
                self.threads.iter().any(|thread| thread.place == place).then_some(())?;
                self.join_thread(node, &place);
                Some(Value::Unknown)
            }
            "emplace_back" => {
                // A vector of threads: its element is started with the rest as arguments.
                let (start, rest) = args.split_first()?;
                self.names_function(*start).then_some(())?;
                let container = self.container_place(function.field_child("argument")?)?;
                let len = self
                    .store
                    .get(&format!("{container}.#len"))
                    .and_then(Value::int)
                    .unwrap_or(0);
                self.store.insert(format!("{container}.#len"), Value::Int(len + 1));
                self.spawn_thread(node, format!("{container}[{len}]"), *start, rest);
                Some(Value::Unknown)
            }
            _ => None,
        }
    }

    /// Whether `node` names a function a thread can run (`Worker`, `&Worker::Run`, a
    /// lambda), not a local.
    fn names_function(&mut self, node: Node<'u>) -> bool {
        let node = super::api::strip_casts(node);
        let target = function_name(node);
        node.kind() == "lambda_expression"
            || (matches!(target.kind(), "identifier" | "qualified_identifier")
                && self.lookup_local(self.text(target).trim()).is_none()
                && self.thread_function(node).is_some())
    }

    /// The host function the analyzed files define under the name a thread is given.
    fn thread_function(&self, function: Node<'u>) -> Option<FnDef<'u>> {
        let name = self.text(function_name(function)).trim();
        let simple = name.rsplit("::").next().unwrap_or(name);
        self.index
            .lookup_from(self.scope_unit(), simple)
            .find(|def| !def.kernel && !def.device)
            .cloned()
    }

    /// Start an output block (an arm, a loop body, a thread's code).
    pub(super) fn open_block(&mut self) {
        self.next_block += 1;
        self.block_ids.push(self.next_block);
        self.blocks.push(Vec::new());
    }

    /// Continue output block `id` with `stmts` already in it.
    pub(super) fn reopen_block(&mut self, id: usize, stmts: Vec<ast::Stmt>) {
        self.block_ids.push(id);
        self.blocks.push(stmts);
    }

    /// The innermost output block and its id, taken as it is.
    pub(super) fn take_block(&mut self) -> (usize, Vec<ast::Stmt>) {
        (
            self.block_ids.pop().unwrap_or_default(),
            self.blocks.pop().unwrap_or_default(),
        )
    }

    /// End the innermost output block: the threads it started and did not join end
    /// with it.
    pub(super) fn close_block(&mut self) -> Vec<ast::Stmt> {
        let (id, mut stmts) = self.take_block();
        self.end_threads_of(id, &mut stmts);
        stmts
    }

    /// Append the rest of every thread block `id` started and did not join.
    pub(super) fn end_threads_of(&mut self, id: usize, stmts: &mut Vec<ast::Stmt>) {
        let (ending, pending): (Vec<PendingThread>, Vec<PendingThread>) = std::mem::take(&mut self.threads)
            .into_iter()
            .partition(|thread| thread.block == id);
        self.threads = pending;
        for thread in ending {
            stmts.extend(thread.rest);
        }
    }

    fn current_block(&self) -> usize {
        self.block_ids.last().copied().unwrap_or_default()
    }
}

/// `&Worker::Run` → `Worker::Run`: the name a function is given by.
fn function_name(function: Node) -> Node {
    match function.kind() {
        "pointer_expression" => function.field_child("argument").unwrap_or(function),
        _ => function,
    }
}

/// Whether a statement makes its host thread wait (a synchronize, a polling loop), here
/// or inside its blocks.
fn blocks_host(stmt: &mut ast::Stmt) -> bool {
    let blocking = match &stmt.kind {
        ast::StmtKind::Call(call) => api::lookup(&call.callee.text).is_some_and(|api| {
            matches!(
                api.effect,
                Effect::StreamSynchronize
                    | Effect::EventSynchronize
                    | Effect::DeviceSynchronize
                    | Effect::ThreadSynchronize
            )
        }),
        ast::StmtKind::While { .. } => true,
        _ => false,
    };
    blocking
        || stmt
            .blocks_mut()
            .into_iter()
            .any(|block| block.stmts.iter_mut().any(blocks_host))
}
