//! Statements: assignments, branches (known or choices), loops (unrolled, or run 0 to 2
//! times), `with` blocks, `try`, polling loops.

use super::*;

impl<'t> Walker<'_, 't> {
    pub(super) fn block(&mut self, block: Node<'t>) -> Flow {
        if self.nesting >= MAX_NESTING {
            self.note(
                block,
                format!("blocks nested deeper than {MAX_NESTING} are not followed"),
            );
            return Flow::Normal;
        }
        self.nesting += 1;
        let mut cursor = block.walk();
        let children: Vec<Node<'t>> = block.named_children(&mut cursor).collect();
        let flow = self.statements(&children);
        self.nesting -= 1;
        flow
    }

    /// Statements in order, until one ends the block. An `if` whose arms all return and
    /// that has no `else` (`if a: return x`, then the rest) has the rest of the block as
    /// its `else`: it is walked there, so that where the condition is not known, each
    /// way returns what it returns.
    fn statements(&mut self, stmts: &[Node<'t>]) -> Flow {
        for (at, stmt) in stmts.iter().enumerate() {
            if !self.step(*stmt) {
                break;
            }
            if stmt.kind() == "if_statement" && self.nesting < MAX_NESTING && arms_all_return(*stmt) {
                self.nesting += 1;
                let flow = self.if_statement(*stmt, &stmts[at + 1..]);
                self.nesting -= 1;
                return flow;
            }
            let flow = self.statement(*stmt);
            if flow != Flow::Normal {
                return flow;
            }
        }
        Flow::Normal
    }

    pub(super) fn statement(&mut self, stmt: Node<'t>) -> Flow {
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
            "if_statement" => self.if_statement(stmt, &[]),
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
                self.frame().results.returned = value;
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
            "function_definition" | "decorated_definition" => {
                let definition = match stmt.kind() {
                    "decorated_definition" => stmt.child_by_field_name("definition"),
                    _ => Some(stmt),
                };
                if let Some(definition) = definition
                    && let Some(name) = definition.child_by_field_name("name")
                {
                    let name = self.text(name).to_string();
                    let value = match definition.kind() {
                        "function_definition" => {
                            self.nested.push(Nested {
                                unit: self.frames.last().map_or(0, |frame| frame.unit),
                                node: definition,
                                depth: self.frames.len(),
                            });
                            Value::Nested(self.nested.len() - 1)
                        }
                        _ => Value::Unknown,
                    };
                    self.frame().locals.insert(name, value);
                }
                Flow::Normal
            }
            "class_definition" => {
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

    pub(super) fn assignment(&mut self, node: Node<'t>) {
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
        let value = match self.unpacked(left, right) {
            Some(value) => value,
            None => self.eval(right),
        };
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

    /// `a, b = f(), g()`: each value evaluated with its own target's name (all before
    /// any is stored, as Python does).
    fn unpacked(&mut self, left: Node<'t>, right: Node<'t>) -> Option<Value> {
        let is_sequence = |node: Node| {
            matches!(
                node.kind(),
                "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "expression_list"
            )
        };
        if !is_sequence(left) || !matches!(right.kind(), "tuple" | "list" | "expression_list") {
            return None;
        }
        let mut cursor = left.walk();
        let targets: Vec<Node<'t>> = left.named_children(&mut cursor).collect();
        let mut cursor = right.walk();
        let values: Vec<Node<'t>> = right.named_children(&mut cursor).collect();
        if targets.len() != values.len() || targets.iter().any(|target| target.kind() == "list_splat_pattern") {
            return None;
        }
        let items = targets
            .iter()
            .zip(values)
            .map(|(target, value)| {
                self.hint = Some(self.target_name(*target));
                self.eval(value)
            })
            .collect();
        Some(match right.kind() {
            "list" => Value::List(items),
            _ => Value::Tuple(items),
        })
    }

    /// The name a value stored in `target` gets in the program (`self.events[0]` →
    /// `self_events_0`).
    pub(super) fn target_name(&self, target: Node) -> String {
        match target.kind() {
            "pattern_list" | "tuple_pattern" | "list_pattern" => target
                .named_child(0)
                .map_or_else(|| "v".to_string(), |first| self.target_name(first)),
            _ => self.text(target).to_string(),
        }
    }

    pub(super) fn store(&mut self, target: Node<'t>, value: Value) {
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
                // `out[:n] = y` of a tensor: a received `out` is one.
                let container = match value {
                    Value::Buffer(_, Place::Device) => self.received_as(container, received::Kind::Tensor),
                    _ => container,
                };
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

    pub(super) fn augmented(&mut self, node: Node<'t>) {
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
        let (current, value) = self.tensor_operands(&op, current, value);
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

    pub(super) fn condition(&mut self, cond: Node<'t>) -> Option<bool> {
        self.eval(cond).truth()
    }

    /// `if`/`elif`/`else`; `rest` are the statements after it that run where no arm
    /// is taken (its implicit `else`).
    pub(super) fn if_statement(&mut self, stmt: Node<'t>, rest: &[Node<'t>]) -> Flow {
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
        self.arms(stmt, &arms, rest)
    }

    /// `if`/`elif`/`else` arms from the first: known conditions decide, an unknown
    /// one becomes a choice between its arm and the rest. `after` runs where no arm is
    /// taken.
    pub(super) fn arms(&mut self, stmt: Node<'t>, arms: &[(Option<Node<'t>>, Node<'t>)], after: &[Node<'t>]) -> Flow {
        let Some(((cond, body), rest)) = arms.split_first() else {
            return self.statements(after);
        };
        let Some(cond) = cond else {
            return self.block(*body);
        };
        match self.condition(*cond) {
            Some(true) => self.block(*body),
            Some(false) => self.arms(stmt, rest, after),
            None => {
                // An arm that only fails (raises, exits) is an error exit: not taken.
                if is_error_exit(*body, self.unit()) {
                    return self.arms(stmt, rest, after);
                }
                let otherwise_fails = match rest {
                    [] => !after.is_empty() && are_error_exit(after, self.unit()),
                    [(_, other)] => is_error_exit(*other, self.unit()),
                    _ => false,
                };
                if otherwise_fails {
                    return self.block(*body);
                }
                let Some(name) = self.choice(*cond, "branch", 1) else {
                    return self.arms(stmt, rest, after);
                };
                let before = self.snapshot();
                self.push_block();
                let then_flow = self.block(*body);
                let then_stmts = self.pop_block(self.range(*body));
                let then = merge::Branch {
                    state: self.snapshot(),
                    flow: then_flow,
                    stmts: then_stmts,
                };
                self.restore(before);
                self.push_block();
                let else_flow = self.arms(stmt, rest, after);
                let else_stmts = self.pop_block(self.range(stmt));
                let one_returned = (then_flow == Flow::Return) != (else_flow == Flow::Return);
                let joined = self.join_branches(*cond, then, else_flow, else_stmts);
                if one_returned {
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
                for hoisted in joined.hoisted {
                    self.emit(hoisted.kind, hoisted.span);
                }
                let cond_expr = binary(
                    ast::BinaryOp::Eq,
                    ast::Expr::name(&name, self.range(*cond)),
                    ast::Expr::int(1, self.range(*cond)),
                );
                self.emit(
                    ast::StmtKind::If {
                        cond: cond_expr,
                        then: ast::Block {
                            stmts: joined.then,
                            span: span.clone(),
                        },
                        otherwise: (!joined.otherwise.is_empty()).then(|| {
                            ast::Else::Block(ast::Block {
                                stmts: joined.otherwise,
                                span: span.clone(),
                            })
                        }),
                    },
                    span,
                );
                joined.flow
            }
        }
    }

    pub(super) fn for_statement(&mut self, stmt: Node<'t>) -> Flow {
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
    pub(super) fn unknown_loop(&mut self, stmt: Node<'t>, body: Node<'t>, var: Option<Node<'t>>, name: &str, k: i64) {
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
        if flow == Flow::Return {
            self.note(
                stmt,
                "a return inside a loop that runs an unknown number of times: the code after it is taken to run in every case",
            );
            self.return_early(before.returned());
        }
        self.merge(before, stmt, "this loop");
        self.forget(&syntax::declared_names(&stmts));
        let span = self.range(stmt);
        let cond = binary(
            ast::BinaryOp::Ge,
            ast::Expr::name(name, span.clone()),
            ast::Expr::int(k, span.clone()),
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
    pub(super) fn iterable(&mut self, node: Node<'t>) -> Option<Vec<Value>> {
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

    pub(super) fn while_statement(&mut self, stmt: Node<'t>) -> Flow {
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
    pub(super) fn polling_loop(&mut self, stmt: Node<'t>) -> bool {
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
            (Value::Event(event), Some(api)) => (api, ast::Expr::name(event, span.clone()), done.unwrap_or_default()),
            (Value::Event(event), None) => {
                if self.never_recorded(event) {
                    // torch: querying an event never recorded is done at once.
                    return true;
                }
                (
                    "acl.rt.query_event_status",
                    ast::Expr::name(event, span.clone()),
                    "ACL_EVENT_RECORDED_STATUS_COMPLETE",
                )
            }
            (Value::Stream(_) | Value::DefaultStream(_), None) => {
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
            ast::Expr::name(done, span.clone()),
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

    /// Whether a `with` item is a test's expectation that its body raises
    /// (`self.assertRaises(E)`, `pytest.raises(E)`).
    fn expects_raise(&self, expr: Node<'t>) -> bool {
        let Some(function) = expr.child_by_field_name("function").filter(|_| expr.kind() == "call") else {
            return false;
        };
        let callee = self.text(function);
        let last = callee.rsplit('.').next().unwrap_or(callee);
        last.starts_with("assertRaises") || callee == "pytest.raises" || callee == "raises"
    }

    pub(super) fn with_statement(&mut self, stmt: Node<'t>) -> Flow {
        // A stream or device context restores the current device and its streams.
        let saved = (self.current.clone(), self.device, self.other_currents.clone());
        // Graphs captured by this `with`, ended (innermost first) where its body ends.
        let mut captures = Vec::new();
        let mut expects_raise = false;
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
            expects_raise |= self.expects_raise(expr);
            let value = self.eval(expr);
            match &value {
                Value::StreamContext(stream) => {
                    self.switch_device(self.stream_device(stream));
                    self.current = (**stream).clone();
                }
                Value::DeviceContext(device) => self.switch_device(*device),
                Value::GraphContext(capture) => {
                    let stream = self.enter_graph(capture, expr);
                    captures.push((capture.graph.clone(), stream, expr));
                }
                _ => {}
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
            Some(body) if expects_raise => {
                self.note(
                    body,
                    "code a test expects to raise (`assertRaises`, `pytest.raises`) is not followed: where it fails is not known",
                );
                Flow::Normal
            }
            Some(body) => self.block(body),
            None => Flow::Normal,
        };
        for (graph, stream, at) in captures.into_iter().rev() {
            self.capture_end(at, &graph, &stream);
        }
        (self.current, self.device, self.other_currents) = saved;
        flow
    }
}
