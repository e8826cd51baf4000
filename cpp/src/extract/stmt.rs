//! Statements: blocks, declarations, branches, loops, `switch`, jumps.

use std::collections::HashMap;

use tree_sitter::Node;

use super::ast;
use super::value::Value;
use super::{Flow, MAX_ITERATIONS, MAX_NESTING, Walker};
use crate::fields::FieldChild;

impl<'u> Walker<'_, 'u> {
    pub(super) fn stmt(&mut self, node: Node<'u>) -> Flow {
        if !self.step(node) {
            return Flow::Return;
        }
        if self.nesting >= MAX_NESTING {
            self.unresolved(node, format!("nested deeper than {MAX_NESTING} levels: not followed"));
            return Flow::Normal;
        }
        self.nesting += 1;
        let flow = self.stmt_inner(node);
        self.nesting -= 1;
        flow
    }

    fn stmt_inner(&mut self, node: Node<'u>) -> Flow {
        match node.kind() {
            "compound_statement" => self.block(node),
            "declaration" => {
                self.declaration(node);
                Flow::Normal
            }
            "expression_statement" => {
                if let Some(expr) = node.named_child(0) {
                    self.eval(expr);
                }
                Flow::Normal
            }
            "if_statement" => self.if_statement(node, &[]).unwrap_or(Flow::Normal),
            "for_statement" => self.for_statement(node),
            "for_range_loop" => self.for_range(node),
            "while_statement" => self.while_statement(node),
            "do_statement" => self.do_statement(node),
            "switch_statement" => self.switch_statement(node),
            "return_statement" => {
                let value = node.named_child(0).map_or(Value::Unknown, |expr| self.eval(expr));
                self.frame_mut().returned = value;
                // A kernel's own `return` ends the core's work, which the sub-kernel says.
                if self.core.is_some() && self.frames.len() == 1 {
                    self.emit(syncguard_grammar::ast::StmtKind::Return, self.range(node));
                }
                Flow::Return
            }
            "break_statement" => Flow::Break,
            "continue_statement" => Flow::Continue,
            "labeled_statement" | "attributed_statement" => {
                match node.named_child(node.named_child_count().saturating_sub(1)) {
                    Some(inner) => self.stmt(inner),
                    None => Flow::Normal,
                }
            }
            "try_statement" => match node.field_child("body") {
                Some(body) => self.stmt(body),
                None => Flow::Normal,
            },
            "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef" => self.preproc_branch(node),
            "preproc_else" => self.preproc_body(node, None, None),
            "ERROR" => {
                self.unresolved(node, "this code does not parse as C++: not read");
                Flow::Normal
            }
            "goto_statement" => {
                self.unresolved(node, "`goto` is not followed: the code is read as if it fell through");
                Flow::Normal
            }
            // Comments, empty statements, local type and using declarations: no effect.
            _ => Flow::Normal,
        }
    }

    fn block(&mut self, node: Node<'u>) -> Flow {
        self.frame_mut().scopes.push(HashMap::new());
        self.frame_mut().cleanups.push(Vec::new());
        let flow = self.stmts(node);
        // Destructors run as the block closes, last constructed first.
        let cleanups = self.frame_mut().cleanups.pop().unwrap_or_default();
        for (place, destructor) in cleanups.into_iter().rev() {
            self.run_function(&destructor, Some(place), &[]);
        }
        self.frame_mut().scopes.pop();
        flow
    }

    /// `Timer t(stream);`: the constructor of a class the analyzed files define runs on
    /// the new object, and its destructor is due when the scope closes.
    fn construct(&mut self, place: &str, type_text: &str, args: &[Node<'u>]) -> bool {
        let class = class_name(type_text);
        if class.is_empty() {
            return false;
        }
        let from = self.scope_unit();
        let constructor = self
            .index
            .lookup_from(from, class)
            .find(|def| def.class.as_deref() == Some(class) && def.params.len() == args.len())
            .cloned();
        let destructor = self
            .index
            .lookup_from(from, &format!("~{class}"))
            .find(|def| def.class.as_deref() == Some(class))
            .cloned();
        if constructor.is_none() && destructor.is_none() {
            return false;
        }
        if let Some(constructor) = constructor {
            self.run_function(&constructor, Some(place.to_string()), args);
        }
        if let Some(destructor) = destructor
            && let Some(scope) = self.frame_mut().cleanups.last_mut()
        {
            scope.push((place.to_string(), destructor));
        }
        true
    }

    /// The named children of `node` as statements, in order.
    fn stmts(&mut self, node: Node<'u>) -> Flow {
        let mut cursor = node.walk();
        let children: Vec<Node<'u>> = node.named_children(&mut cursor).collect();
        self.stmt_list(&children)
    }

    /// Statements in order. A branch on a condition with no concrete value takes the
    /// statements after it into its arms (see `branches`).
    pub(super) fn stmt_list(&mut self, stmts: &[Node<'u>]) -> Flow {
        for (position, stmt) in stmts.iter().enumerate() {
            if stmt.kind() == "if_statement" {
                let rest = &stmts[position + 1..];
                if let Some(flow) = self.if_statement(*stmt, rest) {
                    return flow;
                }
                continue;
            }
            match self.stmt(*stmt) {
                Flow::Normal => {}
                other => return other,
            }
        }
        Flow::Normal
    }

    fn declaration(&mut self, node: Node<'u>) {
        let type_text = node.field_child("type").map(|t| self.text(t)).unwrap_or_default();
        let is_container = ["vector", "array", "deque"].iter().any(|word| type_text.contains(word));
        let mut cursor = node.walk();
        let declarators: Vec<Node<'u>> = node.children_by_field_name("declarator", &mut cursor).collect();
        for declarator in declarators {
            self.declarator(declarator, is_container, type_text);
        }
    }

    fn declarator(&mut self, declarator: Node<'u>, is_container: bool, type_text: &str) {
        let (target, init) = match declarator.kind() {
            "init_declarator" => (declarator.field_child("declarator"), declarator.field_child("value")),
            _ => (Some(declarator), None),
        };
        let Some(target) = target else { return };
        let Some((name, shape)) = declared_name(self, target) else {
            return;
        };
        if shape == Shape::Reference {
            // `auto &s = ctx.streams[0];`: another name for the place.
            if let Some(place) = init.and_then(|init| self.place_of(init)) {
                self.alias(&name, place);
                return;
            }
        }
        let place = self.declare(&name);
        let class = class_name(type_text);
        if self.aicore.is_some() {
            // Kernel code: queue and tensor types say where their memory is.
            self.store
                .insert(format!("{place}.#type"), Value::Str(type_text.to_string()));
            if type_text.contains('<') && self.index.classes.contains(class) {
                self.bind_type_args(type_text);
            }
        }
        if self.index.classes.contains(class) {
            self.store
                .insert(format!("{place}.#class"), Value::Str(class.to_string()));
        }
        if let Some(size) = pointee_size(self, target, type_text) {
            self.store.insert(format!("{place}.#elem"), Value::Int(size));
        }
        let array = shape == Shape::Array || is_container;
        if array {
            self.store.insert(place.clone(), Value::Ref(place.clone()));
        }
        let constructor_args: Option<Vec<Node<'u>>> = match init {
            None => Some(Vec::new()),
            Some(init) if matches!(init.kind(), "argument_list" | "initializer_list") => {
                let mut cursor = init.walk();
                Some(init.named_children(&mut cursor).collect())
            }
            Some(_) => None,
        };
        // `std::thread t(f, args...)`: a host thread starts.
        if class == "thread"
            && shape == Shape::Plain
            && let Some(args) = constructor_args
                .clone()
                .filter(|args| !args.is_empty())
                .or_else(|| vexing_arguments(target))
            && let Some((function, args)) = args.split_first()
        {
            self.spawn_thread(declarator, place, *function, args);
            return;
        }
        if !array
            && shape == Shape::Plain
            && let Some(args) = constructor_args
            && self.construct(&place, type_text, &args)
        {
            return;
        }
        let Some(init) = init else {
            if !array {
                self.store.insert(place, Value::Unknown);
            }
            return;
        };
        match init.kind() {
            "initializer_list" => {
                let mut cursor = init.walk();
                let items: Vec<Node<'u>> = init.named_children(&mut cursor).collect();
                if array {
                    for (position, item) in items.iter().enumerate() {
                        let value = self.eval(*item);
                        self.store.insert(format!("{place}[{position}]"), value);
                    }
                    self.store
                        .insert(format!("{place}.#len"), Value::Int(items.len() as i64));
                } else {
                    // One item is a scalar's value (`int n{5}`); more are a struct's fields
                    // (`SoftMaxShapeInfo shape = {rows, cols, ...}`), no value of its own.
                    let value = match items.as_slice() {
                        [] => Value::Int(0),
                        [item] => self.eval(*item),
                        _ => Value::Unknown,
                    };
                    // Kernel code: `DataCopyExtParams p{1, len, 0, 0, 0}` names its fields.
                    if self.aicore.is_some() && type_text.contains("DataCopy") && type_text.contains("Params") {
                        let fields = ["blockCount", "blockLen", "srcStride", "dstStride"];
                        for (field, item) in fields.iter().zip(&items) {
                            let value = self.eval(*item);
                            self.store.insert(format!("{place}.{field}"), value);
                        }
                    }
                    self.store.insert(place, value);
                }
            }
            // `std::vector<aclrtStream> streams(N);`
            "argument_list" => {
                let mut cursor = init.walk();
                let args: Vec<Node<'u>> = init.named_children(&mut cursor).collect();
                let values: Vec<Value> = args.iter().map(|arg| self.eval(*arg)).collect();
                if let Some(Value::Int(len)) = values.first() {
                    self.store.insert(format!("{place}.#len"), Value::Int(*len));
                }
            }
            _ => {
                let value = self.eval(init);
                if !array {
                    self.store.insert(place, value);
                }
            }
        }
    }

    /// `if`: a known condition takes its branch (`Some(flow)` only for a jump out of
    /// the block, `None` to go on with `rest`); a condition over `rank` becomes a
    /// `.sync` `if`, one with no value a choice; both take `rest` into their arms and
    /// return its flow.
    pub(super) fn if_statement(&mut self, node: Node<'u>, rest: &[Node<'u>]) -> Option<Flow> {
        if !self.step(node) {
            return Some(Flow::Return);
        }
        let then = node.field_child("consequence");
        let otherwise = node
            .field_child("alternative")
            .and_then(|alternative| alternative.named_child(0));
        let condition = node.field_child("condition")?;
        if self.nesting >= MAX_NESTING {
            self.unresolved(node, format!("nested deeper than {MAX_NESTING} levels: not followed"));
            return None;
        }
        self.nesting += 1;
        let flow = self.if_branches(node, condition, then, otherwise, rest);
        self.nesting -= 1;
        flow
    }

    fn if_branches(
        &mut self,
        node: Node<'u>,
        condition: Node<'u>,
        then: Option<Node<'u>>,
        otherwise: Option<Node<'u>>,
        rest: &[Node<'u>],
    ) -> Option<Flow> {
        let flow = match self.condition_value(condition) {
            Value::Sym(cond) => return self.branches(node, &[Some(cond), None], &[then, otherwise], rest),
            value => match value.truth() {
                Some(true) => then.map_or(Flow::Normal, |then| self.stmt(then)),
                Some(false) => otherwise.map_or(Flow::Normal, |otherwise| self.stmt(otherwise)),
                // `if (context == nullptr || ...) { return ge::GRAPH_FAILED; }`: an
                // error exit, taken to be not taken, as a failing API call is.
                None if !self.error_paths && then.is_some_and(|then| self.is_error_exit(then)) => {
                    otherwise.map_or(Flow::Normal, |otherwise| self.stmt(otherwise))
                }
                // `if constexpr (is_same_v<T, half>) {...} else if constexpr (is_same_v<T,
                // float>) {...}` with no final `else`: the chain covers the types the
                // operator is built for, so the last test holds when the earlier ones do
                // not (the build with none of them does not exist).
                None if otherwise.is_none() && self.is_last_type_test_of_chain(node) => {
                    then.map_or(Flow::Normal, |then| self.stmt(then))
                }
                None => {
                    let key = self.condition_key("if", condition, true);
                    return self.alternatives(node, "branch", Some(key), &[then, otherwise], rest);
                }
            },
        };
        match flow {
            Flow::Normal => None,
            other => Some(other),
        }
    }

    /// A branch that only leaves with a failure: its last statement returns an error
    /// (`ge::GRAPH_FAILED`, `ACL_ERROR_INVALID_PARAM`, `-1`, `false`, `nullptr`) and it
    /// calls nothing but logging.
    fn is_error_exit(&self, arm: Node<'u>) -> bool {
        let last = match arm.kind() {
            "compound_statement" => arm.named_child(arm.named_child_count().saturating_sub(1)),
            _ => Some(arm),
        };
        let Some(last) = last.filter(|last| last.kind() == "return_statement") else {
            return false;
        };
        let value = last.named_child(0).map_or("", |value| self.text(value));
        let failure = value.contains("FAIL")
            || value.contains("ERROR")
            || value.contains("ERR_")
            || value.starts_with('-')
            || matches!(value, "false" | "nullptr" | "NULL");
        let calls_api =
            self.text(arm).contains("aclrt") || self.text(arm).contains("Hcom") || self.text(arm).contains("cuda");
        failure && !calls_api
    }

    /// A condition clause (`(x)`, `(auto r = f(); r == 0)`) or expression, evaluated.
    fn condition(&mut self, node: Node<'u>) -> Option<bool> {
        self.condition_value(node).truth()
    }

    fn condition_value(&mut self, node: Node<'u>) -> Value {
        let node = if node.kind() == "condition_clause" {
            if let Some(init) = node.field_child("initializer") {
                self.stmt(init);
            }
            match node.field_child("value") {
                Some(value) if value.kind() == "declaration" => {
                    self.declaration(value);
                    return Value::Unknown;
                }
                Some(value) => value,
                None => return Value::Unknown,
            }
        } else {
            node
        };
        self.eval(node)
    }

    fn for_statement(&mut self, node: Node<'u>) -> Flow {
        self.frame_mut().scopes.push(HashMap::new());
        if let Some(init) = node.field_child("initializer") {
            match init.kind() {
                "declaration" => self.declaration(init),
                _ => {
                    self.eval(init);
                }
            }
        }
        let condition = node.field_child("condition");
        let update = node.field_child("update");
        let body = node.field_child("body");
        // Kernel code: a counted loop over tiling values stays a loop.
        if let Some(flow) = self.symbolic_for(node) {
            self.frame_mut().scopes.pop();
            return flow;
        }
        let flow = self.run_loop(node, condition, update, body, false);
        self.frame_mut().scopes.pop();
        flow
    }

    fn while_statement(&mut self, node: Node<'u>) -> Flow {
        let condition = node.field_child("condition");
        let body = node.field_child("body");
        if self.busy_wait(node, condition, body) {
            return Flow::Normal;
        }
        self.run_loop(node, condition, None, body, false)
    }

    fn do_statement(&mut self, node: Node<'u>) -> Flow {
        let condition = node.field_child("condition");
        let body = node.field_child("body");
        if self.busy_wait(node, condition, body) {
            return Flow::Normal;
        }
        self.run_loop(node, condition, None, body, true)
    }

    /// Iterate while the condition is known to hold; a condition with no known value
    /// makes the loop run 0, 1 or 2 times (up to 3 in kernel code), as alternatives.
    pub(super) fn run_loop(
        &mut self,
        node: Node<'u>,
        condition: Option<Node<'u>>,
        update: Option<Node<'u>>,
        body: Option<Node<'u>>,
        body_first: bool,
    ) -> Flow {
        if let Some(body) = body
            && self.is_data_loop(body)
        {
            self.data_loop(body);
            return Flow::Normal;
        }
        for iteration in 0..=MAX_ITERATIONS {
            if !(body_first && iteration == 0) {
                let truth = match condition {
                    Some(condition) => self.condition(condition),
                    None => Some(true),
                };
                match truth {
                    Some(true) => {}
                    Some(false) => return Flow::Normal,
                    None if iteration == 0 => {
                        return match self.loop_over_unknown_bound(node, condition, update, body) {
                            Some(flow) => flow,
                            None => self.unknown_loop(node, update, body),
                        };
                    }
                    None => {
                        self.unresolved(
                            node,
                            format!("the loop's condition has no known value after {iteration} iterations: it is taken to end there"),
                        );
                        return Flow::Normal;
                    }
                }
            }
            if iteration == MAX_ITERATIONS {
                self.unresolved(
                    node,
                    format!(
                        "the loop runs more than {MAX_ITERATIONS} times: only the first {MAX_ITERATIONS} are checked"
                    ),
                );
                return Flow::Normal;
            }
            match body.map_or(Flow::Normal, |body| self.stmt(body)) {
                Flow::Break => return Flow::Normal,
                Flow::Return => return Flow::Return,
                Flow::Normal | Flow::Continue => {}
            }
            if let Some(update) = update {
                self.eval(update);
            }
        }
        Flow::Normal
    }

    /// A loop whose bound is unknown: `param loop_op_L12 in 0..=2`, the body nested as
    /// `if loop >= 1 { first; if loop >= 2 { second } }`.
    fn unknown_loop(&mut self, node: Node<'u>, update: Option<Node<'u>>, body: Option<Node<'u>>) -> Flow {
        let iterations = self.unknown_loop_iterations();
        let Some(choice) = self.choice_param(node, "loop", iterations) else {
            return Flow::Return;
        };
        let span = self.range(node);
        let before = self.store.freeze();
        let mut stores = vec![before.clone()];
        let mut bodies = Vec::new();
        for _ in 0..iterations {
            self.open_block();
            let flow = body.map_or(Flow::Normal, |body| self.stmt(body));
            if let Some(update) = update {
                self.eval(update);
            }
            bodies.push(self.close_block());
            stores.push(self.store.clone());
            if matches!(flow, Flow::Break | Flow::Return) {
                break;
            }
        }
        let mut nested: Vec<syncguard_grammar::ast::Stmt> = Vec::new();
        for (iteration, mut stmts) in bodies.into_iter().enumerate().rev() {
            stmts.append(&mut nested);
            let cond = super::ast_binary(
                syncguard_grammar::ast::BinaryOp::Ge,
                super::ast::Expr::name(&choice, span.clone()),
                super::ast::Expr::int(iteration as i64 + 1, span.clone()),
            );
            nested = vec![syncguard_grammar::ast::Stmt {
                kind: syncguard_grammar::ast::StmtKind::If {
                    cond,
                    then: syncguard_grammar::ast::Block {
                        stmts,
                        span: span.clone(),
                    },
                    otherwise: None,
                },
                span: span.clone(),
            }];
        }
        self.blocks.last_mut().expect("open").extend(nested);
        self.store = super::store::merge(&before, &stores);
        Flow::Normal
    }

    fn for_range(&mut self, node: Node<'u>) -> Flow {
        let (Some(declarator), Some(right), Some(body)) = (
            node.field_child("declarator"),
            node.field_child("right"),
            node.field_child("body"),
        ) else {
            return Flow::Normal;
        };
        let container = match self.container_place(right) {
            Some(place) => place,
            None => {
                self.unresolved(
                    right,
                    "a range over something the extractor cannot follow: the loop is not checked",
                );
                return Flow::Normal;
            }
        };
        let Some(len) = self.store.get(&format!("{container}.#len")).and_then(Value::int) else {
            self.unresolved(right, "a range of unknown length: the loop is not checked");
            return Flow::Normal;
        };
        let Some((name, shape)) = declared_name(self, declarator) else {
            return Flow::Normal;
        };
        for position in 0..len.clamp(0, MAX_ITERATIONS as i64) {
            self.frame_mut().scopes.push(HashMap::new());
            let element = format!("{container}[{position}]");
            if shape == Shape::Reference {
                self.alias(&name, element);
            } else {
                let value = self.store.get(&element).cloned().unwrap_or(Value::Unknown);
                let place = self.declare(&name);
                self.store.insert(place, value);
            }
            let flow = self.stmt(body);
            self.frame_mut().scopes.pop();
            match flow {
                Flow::Break => break,
                Flow::Return => return Flow::Return,
                _ => {}
            }
        }
        Flow::Normal
    }

    fn switch_statement(&mut self, node: Node<'u>) -> Flow {
        let (Some(condition), Some(body)) = (node.field_child("condition"), node.field_child("body")) else {
            return Flow::Normal;
        };
        let value = match condition.kind() {
            "condition_clause" => condition.field_child("value").map(|v| self.eval(v)),
            _ => Some(self.eval(condition)),
        };
        let mut cursor = body.walk();
        let cases: Vec<Node<'u>> = body
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "case_statement")
            .collect();
        let start = match value.as_ref().and_then(Value::int) {
            Some(value) => {
                let matching = cases.iter().position(|case| {
                    case.field_child("value")
                        .is_some_and(|label| self.eval(label).int() == Some(value))
                });
                let default = cases.iter().position(|case| case.field_child("value").is_none());
                match matching.or(default) {
                    Some(start) => start,
                    None => return Flow::Normal,
                }
            }
            None => {
                let mut arms: Vec<Option<Node<'u>>> = cases.iter().map(|case| Some(*case)).collect();
                // A value the walk knows symbolically (`switch (tilingKey_)` over a tiling
                // field): each case is that value equal to its label, so the arm agrees
                // with every other test of the same value instead of being a choice of
                // its own.
                if let Some(Value::Sym(discriminant)) = &value
                    && let Some(mut conditions) = self.case_conditions(discriminant, &cases)
                {
                    if conditions.last().is_none_or(Option::is_some) {
                        // No `default`: no case matches otherwise.
                        conditions.push(None);
                        arms.push(None);
                    }
                    return self.branches(node, &conditions, &arms, &[]).unwrap_or(Flow::Normal);
                }
                return self
                    .alternatives(node, "case", None, &arms, &[])
                    .unwrap_or(Flow::Normal);
            }
        };
        for case in &cases[start..] {
            match self.case_body(*case) {
                Flow::Normal => {}
                Flow::Break => return Flow::Normal,
                other => return other,
            }
        }
        Flow::Normal
    }

    /// `discriminant == label` per case, `None` for a `default` (only as the last case);
    /// `None` when a label has no constant value or `default` comes earlier.
    fn case_conditions(&mut self, discriminant: &ast::Expr, cases: &[Node<'u>]) -> Option<Vec<Option<ast::Expr>>> {
        let mut conditions = Vec::with_capacity(cases.len());
        for (at, case) in cases.iter().enumerate() {
            match case.field_child("value") {
                Some(label) => {
                    let label = self.eval(label).int()?;
                    let span = self.range(*case);
                    conditions.push(Some(super::ast_binary(
                        ast::BinaryOp::Eq,
                        discriminant.clone(),
                        ast::Expr::int(label, span),
                    )));
                }
                None if at + 1 == cases.len() => conditions.push(None),
                None => return None,
            }
        }
        Some(conditions)
    }

    /// A `switch` arm entered at `case`: its statements, falling through into the next
    /// cases until one leaves; a `break` ends the `switch`, not the loop around it.
    pub(super) fn case_arm(&mut self, case: Node<'u>) -> Flow {
        let mut next = Some(case);
        while let Some(case) = next.filter(|node| node.kind() == "case_statement") {
            match self.case_body(case) {
                Flow::Normal => next = case.next_named_sibling(),
                Flow::Break => return Flow::Normal,
                other => return other,
            }
        }
        Flow::Normal
    }

    /// The statements of one `case` (its label is not a statement).
    fn case_body(&mut self, case: Node<'u>) -> Flow {
        let label = case.field_child("value");
        let mut cursor = case.walk();
        let children: Vec<Node<'u>> = case.named_children(&mut cursor).filter(|c| Some(*c) != label).collect();
        for child in children {
            match self.stmt(child) {
                Flow::Normal => {}
                other => return other,
            }
        }
        Flow::Normal
    }

    /// `#if` / `#ifdef` inside a function: decided when the condition is a known
    /// constant or `#ifdef` of a name the analyzed files define; otherwise both.
    fn preproc_branch(&mut self, node: Node<'u>) -> Flow {
        let condition = node.field_child("condition").or_else(|| node.field_child("name"));
        let alternative = node.field_child("alternative");
        let truth = match (node.kind(), condition) {
            _ if self.preproc_taken == Some(node.id()) => {
                self.preproc_taken = None;
                Some(true)
            }
            ("preproc_ifdef", Some(name)) => {
                let negated = self.text(node).starts_with("#ifndef");
                self.is_defined(self.text(name)).map(|defined| defined != negated)
            }
            // `#if NAME`: an undefined name is 0.
            (_, Some(condition)) if condition.kind() == "identifier" => self
                .eval(condition)
                .truth()
                .or_else(|| (self.is_defined(self.text(condition)) == Some(false)).then_some(false)),
            (_, Some(condition)) => self.eval(condition).truth(),
            _ => None,
        };
        let taken = |walker: &mut Self, wanted: bool| -> Flow {
            if wanted {
                walker.preproc_body(node, condition, alternative)
            } else {
                alternative.map_or(Flow::Normal, |alternative| walker.preproc_alternative(alternative))
            }
        };
        match truth {
            Some(truth) => taken(self, truth),
            None => {
                self.assumed(
                    node,
                    "a preprocessor condition the analyzed files and flags do not decide: its branches are checked as \
                     alternatives (`-D`, or a compile_commands.json, decides it)",
                );
                // The first arm is this node again, decided true once.
                self.preproc_taken = Some(node.id());
                // The build decides it once: the same condition elsewhere takes this choice.
                let directive = self.text(node).split_whitespace().next().unwrap_or_default();
                let key = condition.map(|condition| self.condition_key(directive, condition, false));
                let flow = self.alternatives(node, "preproc", key, &[Some(node), alternative], &[]);
                self.preproc_taken = None;
                flow.unwrap_or(Flow::Normal)
            }
        }
    }

    /// Whether the preprocessor sees `name` defined here: by an analyzed file, `-D`, or
    /// the compilation database's command for this file. Without a database, a name no
    /// analyzed file defines may come from the build: unknown.
    pub(super) fn is_defined(&self, name: &str) -> Option<bool> {
        if self.index.is_defined_from(self.scope_unit(), name) {
            return Some(true);
        }
        match (&self.unit().build, self.index.compile_db) {
            (Some(flags), _) => Some(flags.defines(name) == Some(true)),
            // A header is compiled inside the files that include it.
            (None, Some(db)) => (!db.any_defines(name)).then_some(false),
            (None, None) => None,
        }
    }

    fn preproc_body(&mut self, node: Node<'u>, condition: Option<Node<'u>>, alternative: Option<Node<'u>>) -> Flow {
        let mut cursor = node.walk();
        let children: Vec<Node<'u>> = node
            .named_children(&mut cursor)
            .filter(|child| Some(*child) != condition && Some(*child) != alternative)
            .collect();
        for child in children {
            match self.stmt(child) {
                Flow::Normal => {}
                other => return other,
            }
        }
        Flow::Normal
    }

    fn preproc_alternative(&mut self, alternative: Node<'u>) -> Flow {
        match alternative.kind() {
            "preproc_elif" | "preproc_elifdef" => self.preproc_branch(alternative),
            _ => self.preproc_body(alternative, None, None),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    Plain,
    Array,
    Reference,
}

/// The name a declarator declares, and whether it is an array or a reference.
pub(super) fn declared_name(walker: &Walker, mut node: Node) -> Option<(String, Shape)> {
    let mut shape = Shape::Plain;
    for _ in 0..MAX_NESTING {
        match node.kind() {
            "identifier" | "field_identifier" => return Some((walker.text(node).to_string(), shape)),
            "array_declarator" => shape = Shape::Array,
            "reference_declarator" => shape = Shape::Reference,
            "pointer_declarator" | "init_declarator" | "parenthesized_declarator" | "attributed_declarator" => {}
            "structured_binding_declarator" => return None,
            _ => {}
        }
        node = node
            .field_child("declarator")
            .or_else(|| node.named_child(node.named_child_count().checked_sub(1)?))?;
    }
    None
}

/// `std::thread t(Worker, stream, dev);` parses as the declaration of a function `t`
/// whose parameters are of types `Worker`, `stream`, `dev` (C++'s most vexing parse):
/// those names are the arguments. `None` if a parameter declares a name of its own.
fn vexing_arguments(declarator: Node) -> Option<Vec<Node>> {
    let parameters = (declarator.kind() == "function_declarator")
        .then(|| declarator.field_child("parameters"))
        .flatten()?;
    let mut cursor = parameters.walk();
    parameters
        .named_children(&mut cursor)
        .map(|parameter| {
            (parameter.kind() == "parameter_declaration" && parameter.field_child("declarator").is_none())
                .then(|| parameter.field_child("type"))
                .flatten()
        })
        .collect()
}

/// `float *p`: the size of what `p` points to, where the type is known.
fn pointee_size(walker: &Walker, declarator: Node, type_text: &str) -> Option<i64> {
    let text = walker.text(declarator);
    if !text.trim_start().starts_with('*') {
        return None;
    }
    super::expr::type_size(type_text)
}

/// `const ns::Timer<T>` → `Timer`.
pub(super) fn class_name(type_text: &str) -> &str {
    let text = type_text.trim();
    let text = text.split('<').next().unwrap_or(text);
    let text = text.rsplit("::").next().unwrap_or(text);
    text.rsplit(' ').next().unwrap_or(text).trim()
}

impl Walker<'_, '_> {
    /// `node` tests a type trait and ends a chain of such tests (it is the `else` of an
    /// `if` on a type trait, `if constexpr` or not).
    fn is_last_type_test_of_chain(&self, node: Node) -> bool {
        let tests_type = |n: Node| {
            n.field_child("condition")
                .is_some_and(|c| self.text(c).contains("is_same"))
        };
        let in_chain = node
            .parent()
            .filter(|p| p.kind() == "else_clause")
            .and_then(|p| p.parent())
            .is_some_and(|p| p.kind() == "if_statement" && tests_type(p));
        tests_type(node) && in_chain
    }
}
