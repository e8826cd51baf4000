//! Host threads: `threading.Thread(target=f, args=(...), kwargs={...})` (or an object
//! of a subclass of `threading.Thread`, whose `run` is the body) and its `start()` and
//! `join()`.
//!
//! `start()` is a `thread` block of the extracted program, at that point of the
//! starting thread's issue order: the target inlined with its arguments, on the
//! default stream (torch's current stream is per thread). The `.sync` language has no
//! join, so `join()` is made of what orders host calls across threads there: the
//! thread records an event of its own when its body ends, on a stream of its own, and
//! the joining thread makes another stream wait for that record (an `ACL_EVENT_SYNC`
//! event's wait waits for a record issued later) and synchronizes it. What the joining
//! thread does next follows the thread's calls; the thread's device work is not waited
//! for, as in Python. Where a thread synchronizes the device, its synchronize would
//! wait for that stream, so the join is not written: it is listed, with the objects the
//! thread uses, and what rests on them is undecided.

use super::*;

/// One `threading.Thread` the code made.
#[derive(Clone)]
pub(super) struct HostThread {
    target: Value,
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
    joined: bool,
}

/// Calls that make memory only: taken out of a thread's block, so that what the
/// thread leaves in shared lists and attributes stays visible after it.
const ALLOCATIONS: &[&str] = &["acl.rt.malloc", "acl.rt.malloc_host", "malloc"];

impl<'t> Walker<'_, 't> {
    /// `threading.Thread(group, target, name, args, kwargs, daemon=...)`.
    pub(super) fn new_thread(&mut self, node: Node<'t>) -> Value {
        let (args, kwargs) = self.arguments(node);
        let keyword = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let target = keyword("target")
            .or_else(|| args.get(1).cloned())
            .unwrap_or(Value::None);
        let call_args = keyword("args").or_else(|| args.get(3).cloned());
        let call_kwargs = keyword("kwargs").or_else(|| args.get(4).cloned());
        let call_args = match call_args {
            None | Some(Value::None) => Some(Vec::new()),
            Some(Value::Tuple(items) | Value::List(items)) => Some(items),
            Some(_) => None,
        };
        let call_kwargs = match call_kwargs {
            None | Some(Value::None) => Some(Vec::new()),
            Some(Value::Dict(pairs)) => pairs
                .into_iter()
                .map(|(key, value)| match key {
                    Value::Str(key) => Some((key, value)),
                    _ => None,
                })
                .collect(),
            Some(_) => None,
        };
        let (Some(args), Some(kwargs)) = (call_args, call_kwargs) else {
            self.note(
                node,
                "a thread's arguments have no value the extraction can follow: its body is not followed",
            );
            return Value::Unknown;
        };
        self.threads.push(HostThread {
            target,
            args,
            kwargs,
            joined: false,
        });
        Value::HostThread(self.threads.len() - 1)
    }

    /// An object of a subclass of `threading.Thread` the files define: a thread whose
    /// body is the object's `run`.
    pub(super) fn thread_of_object(&mut self, slot: usize) -> Option<usize> {
        let class = self.heap.get(slot)?.class.clone();
        if !self.index.derives_from_thread(&class) {
            return None;
        }
        if let Some(Value::HostThread(at)) = self.heap[slot].attrs.get("<thread>") {
            return Some(*at);
        }
        let run = self.index.method(&class, "run")?;
        self.threads.push(HostThread {
            target: Value::Method(slot, run),
            args: Vec::new(),
            kwargs: Vec::new(),
            joined: false,
        });
        let at = self.threads.len() - 1;
        self.heap[slot].attrs.insert("<thread>".into(), Value::HostThread(at));
        Some(at)
    }

    /// `t.start()`, `t.join()`, other methods of a thread.
    pub(super) fn thread_method(&mut self, node: Node<'t>, at: usize, name: &str) -> Value {
        self.arguments(node);
        match name {
            "start" => self.start_thread(node, at),
            "join" => self.join_thread(node, at),
            _ => {}
        }
        Value::Unknown
    }

    fn start_thread(&mut self, node: Node<'t>, at: usize) {
        let Some(thread) = self.threads.get(at).cloned() else {
            return;
        };
        if self.started.contains_key(&at) {
            // Python raises: a thread starts once.
            return;
        }
        let base = match &thread.target {
            Value::Function(def) => self.index.functions[*def].name.clone(),
            Value::Method(_, def) => self.index.functions[*def].name.clone(),
            _ => "thread".to_string(),
        };
        let name = self.fresh_name(&format!("thread_{base}"));
        let span = self.range(node);
        // A new thread starts on device 0 with its default stream current, in torch and
        // in the program.
        let outside = (
            std::mem::replace(&mut self.current, Value::DefaultStream(0)),
            std::mem::replace(&mut self.device, 0),
            std::mem::take(&mut self.other_currents),
            std::mem::replace(&mut self.program_device, devices::ProgramDevice::Start),
        );
        self.push_block();
        let followed = match thread.target {
            Value::Function(def) => {
                self.call_function(def, thread.args, thread.kwargs, node);
                true
            }
            Value::Method(slot, def) => {
                let mut args = vec![Value::Object(slot)];
                args.extend(thread.args);
                self.call_function(def, args, thread.kwargs, node);
                true
            }
            Value::Nested(nested) => {
                self.call_nested(nested, thread.args, thread.kwargs, node);
                true
            }
            _ => false,
        };
        let mut body = self.pop_block(span.clone());
        (self.current, self.device, self.other_currents, self.program_device) = outside;
        if !followed {
            self.note(
                node,
                "the thread's target is neither defined in the analyzed files nor known: its body is not followed",
            );
            return;
        }
        for allocation in take_allocations(&mut body) {
            self.emit(allocation.kind, allocation.span);
        }
        let declared = syntax::declared_names(&body);
        self.emit(
            ast::StmtKind::Thread {
                name: ident(&name, span.clone()),
                body: ast::Block {
                    stmts: body,
                    span: span.clone(),
                },
            },
            span,
        );
        self.forget(&declared);
        self.started.insert(at, name);
    }

    fn join_thread(&mut self, node: Node<'t>, at: usize) {
        if self.threads.get(at).is_none_or(|thread| thread.joined) {
            return;
        }
        let Some(name) = self.started.get(&at).cloned() else {
            self.note(
                node,
                "`join` of a thread not started here on every way (or started under conditions with no known value) is not followed",
            );
            return;
        };
        if self.a_thread_synchronizes_the_device() {
            let touched = self
                .blocks
                .iter()
                .find_map(|block| thread_body_in(block, &name).map(syntax::objects_used))
                .unwrap_or_default();
            self.note_touching(
                node,
                "`join` of a thread while a thread synchronizes the device is not followed: what follows it is not known to follow the thread's calls",
                touched,
            );
            self.threads[at].joined = true;
            return;
        }
        let span = self.range(node);
        let done = self.fresh_name(&format!("{name}_done"));
        let exit = self.fresh_name(&format!("{name}_exit"));
        let joining = self.fresh_name(&format!("{name}_join"));
        self.declare_join_objects(&done, &exit, &joining, span.clone());
        let name_expr = |name: &str| ast::Expr::name(name, span.clone());
        let record = call_stmt(
            "acl.rt.record_event",
            vec![name_expr(&done), name_expr(&exit)],
            span.clone(),
        );
        let Some(body) = self.blocks.iter_mut().rev().find_map(|block| thread_body(block, &name)) else {
            return;
        };
        body.push(record);
        for stmt in [
            call_stmt(
                "acl.rt.stream_wait_event",
                vec![name_expr(&joining), name_expr(&done)],
                span.clone(),
            ),
            call_stmt("acl.rt.synchronize_stream", vec![name_expr(&joining)], span.clone()),
            call_stmt("acl.rt.destroy_event", vec![name_expr(&done)], span),
        ] {
            self.emit(stmt.kind, stmt.span);
        }
        self.threads[at].joined = true;
    }

    /// A join's event and streams, at the top of the program.
    fn declare_join_objects(&mut self, done: &str, exit: &str, joining: &str, span: Range<usize>) {
        let sync_flag = ast::Expr::name("ACL_EVENT_SYNC", span.clone());
        self.declare(done, "acl.rt.create_event_with_flag", vec![sync_flag], span.clone());
        self.declare(exit, "acl.rt.create_stream", Vec::new(), span.clone());
        self.declare(joining, "acl.rt.create_stream", Vec::new(), span);
    }

    /// Whether a thread started here synchronizes a device: it would wait for the
    /// stream a join makes wait, and the join cannot be written so.
    fn a_thread_synchronizes_the_device(&self) -> bool {
        let names: Vec<&String> = self.started.values().collect();
        self.blocks.iter().any(|block| {
            names.iter().any(|name| {
                thread_body_in(block, name).is_some_and(|body| syntax::calls(body, "acl.rt.synchronize_device"))
            })
        })
    }
}

/// The body of the `thread` block named `name` in `stmts`, nested blocks included.
fn thread_body_in<'a>(stmts: &'a [ast::Stmt], name: &str) -> Option<&'a [ast::Stmt]> {
    for stmt in stmts {
        match &stmt.kind {
            ast::StmtKind::Thread { name: thread, body } if thread.name == name => return Some(&body.stmts),
            _ => {}
        }
        for block in syntax::blocks(stmt) {
            if let Some(body) = thread_body_in(&block.stmts, name) {
                return Some(body);
            }
        }
    }
    None
}

/// The body of the `thread` block named `name` in `stmts`, nested blocks included, to
/// change.
fn thread_body<'a>(stmts: &'a mut [ast::Stmt], name: &str) -> Option<&'a mut Vec<ast::Stmt>> {
    for stmt in stmts {
        if let ast::StmtKind::Thread { name: thread, .. } = &stmt.kind
            && thread.name == name
        {
            let ast::StmtKind::Thread { body, .. } = &mut stmt.kind else {
                return None;
            };
            return Some(&mut body.stmts);
        }
        for block in stmt.blocks_mut() {
            if let Some(body) = thread_body(&mut block.stmts, name) {
                return Some(body);
            }
        }
    }
    None
}

/// The allocations at the top level of a thread's block, taken out of it.
fn take_allocations(body: &mut Vec<ast::Stmt>) -> Vec<ast::Stmt> {
    let (allocations, rest): (Vec<ast::Stmt>, Vec<ast::Stmt>) = std::mem::take(body).into_iter().partition(|stmt| {
        matches!(&stmt.kind, ast::StmtKind::Let { value: ast::Expr { kind: ast::ExprKind::Call(call), .. }, .. }
            if ALLOCATIONS.contains(&call.callee.text.as_str()))
    });
    *body = rest;
    allocations
}
