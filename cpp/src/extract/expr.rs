//! Expressions: values, places, calls of helpers and of what is not analyzed.

use syncguard_grammar::ast;
use syncguard_model::api;
use tree_sitter::Node;

use super::value::{Place, Scale, Value};
use super::{Frame, MAX_INLINE_DEPTH, MAX_NESTING, Walker};
use crate::fields::FieldChild;
use crate::index::{DEFINES, FnDef, is_library_api};

/// Return codes of success: error branches that test against them are not taken.
const SUCCESS_CODES: &[&str] = &[
    "ACL_SUCCESS",
    "ACL_ERROR_NONE",
    "RT_ERROR_NONE",
    "HCCL_SUCCESS",
    "GRAPH_SUCCESS",
    "SUCCESS",
    "cudaSuccess",
    "CUDA_SUCCESS",
];

/// Byte sizes of the types `sizeof` is applied to in operator code.
const TYPE_SIZES: &[(&str, i64)] = &[
    ("char", 1),
    ("int8_t", 1),
    ("uint8_t", 1),
    ("bool", 1),
    ("short", 2),
    ("int16_t", 2),
    ("uint16_t", 2),
    ("half", 2),
    ("aclFloat16", 2),
    ("__half", 2),
    ("bfloat16_t", 2),
    ("int", 4),
    ("unsigned", 4),
    ("int32_t", 4),
    ("uint32_t", 4),
    ("float", 4),
    ("long", 8),
    ("int64_t", 8),
    ("uint64_t", 8),
    ("size_t", 8),
    ("double", 8),
    ("void*", 8),
];

/// Calls that only convert their first argument.
const CONVERSIONS: &[&str] = &[
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "std::move",
    "move",
    "std::ref",
];

impl<'u> Walker<'_, 'u> {
    pub(super) fn eval(&mut self, node: Node<'u>) -> Value {
        if self.nesting >= MAX_NESTING || !self.step(node) {
            return Value::Unknown;
        }
        self.nesting += 1;
        let value = self.eval_inner(node);
        self.nesting -= 1;
        value
    }

    /// The value of an argument the API takes as `kind`. A received `void *` passed
    /// where a stream, event or notify goes (`void add_do(..., void *stream)`, the
    /// usual signature of an Ascend C launch wrapper) is that handle from before, not
    /// memory: it is left without a value here so that the argument becomes the handle.
    pub(super) fn eval_argument(&mut self, kind: api::ArgKind, node: Node<'u>) -> Value {
        if matches!(kind, api::ArgKind::Stream | api::ArgKind::Event | api::ArgKind::Notify)
            && let Some(place) = self.unvalued_pointer_param(super::api::strip_casts(node))
        {
            return self.load(&place);
        }
        self.eval(node)
    }

    /// The place of a received pointer named by `node` that holds no value yet.
    fn unvalued_pointer_param(&self, node: Node<'u>) -> Option<Place> {
        if node.kind() != "identifier" {
            return None;
        }
        let place = self.lookup_local(self.text(node))?;
        (self.pointer_params.contains(&place) && matches!(self.store.get(&place), None | Some(Value::Unknown)))
            .then_some(place)
    }

    fn eval_inner(&mut self, node: Node<'u>) -> Value {
        match node.kind() {
            "number_literal" => parse_int(self.text(node)).map_or(Value::Unknown, Value::Int),
            "true" => Value::Int(1),
            "false" => Value::Int(0),
            "null" | "nullptr" => Value::Null,
            "string_literal" | "raw_string_literal" | "concatenated_string" => {
                Value::Str(self.text(node).trim_matches('"').to_string())
            }
            "char_literal" => self
                .text(node)
                .chars()
                .nth(1)
                .map_or(Value::Unknown, |c| Value::Int(c as i64)),
            // A type name is an expression where a declaration was parsed for a call
            // (`std::thread t(Worker, stream)`).
            "qualified_identifier" | "template_function" if self.is_type_test(node) => self.type_test(node),
            "identifier" | "qualified_identifier" | "type_identifier" => self.name_value(node),
            "preproc_defined" => node
                .named_child(0)
                .and_then(|name| self.is_defined(self.text(name)))
                .map_or(Value::Unknown, |defined| Value::Int(defined.into())),
            "this" => self.frame().this.clone().map_or(Value::Unknown, Value::Ref),
            "parenthesized_expression" => node.named_child(0).map_or(Value::Unknown, |inner| self.eval(inner)),
            "cast_expression" => {
                let value = node.field_child("value").map_or(Value::Unknown, |v| self.eval(v));
                let scale = node.field_child("type").and_then(|ty| self.cast_scale(ty));
                match scale {
                    Some(scale) => super::aicore::with_scale(&value, scale),
                    None => value,
                }
            }
            "field_expression" | "subscript_expression" => self.read_place(node),
            "pointer_expression" => self.pointer_expression(node),
            "unary_expression" => self.unary(node),
            "binary_expression" => self.binary(node),
            "conditional_expression" => self.conditional(node),
            "assignment_expression" => self.assignment(node),
            "update_expression" => self.update(node),
            "call_expression" => self.call(node),
            "comma_expression" => {
                if let Some(left) = node.field_child("left") {
                    self.eval(left);
                }
                node.field_child("right")
                    .map_or(Value::Unknown, |right| self.eval(right))
            }
            "sizeof_expression" => self.size_of(node),
            _ => Value::Unknown,
        }
    }

    fn name_value(&mut self, node: Node<'u>) -> Value {
        let text = self.text(node).trim_start_matches("::");
        if let Some(place) = self.lookup_local(text) {
            if self.pointer_params.contains(&place) && matches!(self.store.get(&place), None | Some(Value::Unknown)) {
                // A pointer the caller passes in: memory of its own, from before (that of
                // another name of its alias group, if one has some).
                let region = match self.aliased_from_before(&place) {
                    Some(region) => region,
                    None => self.memory_from_before(text, node),
                };
                self.from_before.insert(place.clone(), region.clone());
                self.store.insert(place.clone(), region);
            }
            return self.load(&place);
        }
        if text == "NULL" {
            return Value::Null;
        }
        if let Some(value) = self.aicore_constant(text) {
            return value;
        }
        if self.core.is_some() && matches!(text, "ASCEND_IS_AIV" | "ASCEND_IS_AIC") {
            return Value::Sym(super::ast::Expr::name(text, self.range(node)));
        }
        let simple = text.rsplit("::").next().unwrap_or(text);
        if SUCCESS_CODES.contains(&simple) {
            return Value::Int(0);
        }
        if is_catalogue_constant(simple) {
            return Value::Sym(super::ast::Expr::name(simple, self.range(node)));
        }
        let from = self.scope_unit();
        if let Some(value) = self.constant(from, simple, 0) {
            return Value::Int(value);
        }
        if let Some(text) = self.index.string_constant_from(from, simple) {
            return Value::Str(text.to_string());
        }
        // A function named as a value (a callback, a kernel handed on): one this code
        // can call, not a method of another class.
        let class = self.frame().class.clone();
        if let Some(function) = self
            .index
            .lookup_from(from, simple)
            .find(|def| def.class.is_none() || def.class == class)
        {
            return Value::Str(function.simple_name().to_string());
        }
        let place = self.member_or_global(text);
        match self.load(&place) {
            Value::Unknown => self.tiling_param(&place, node).unwrap_or(Value::Unknown),
            value => value,
        }
    }

    /// A name no local declares: a member of `this` inside a method, else a global.
    fn member_or_global(&self, name: &str) -> Place {
        match &self.frame().this {
            Some(this) if !name.contains("::") => format!("{this}.{name}"),
            _ => format!("::{name}"),
        }
    }

    /// The value of the constant `name` (`kForce`, `ns::kForce`), if it is one.
    pub(super) fn named_constant(&mut self, name: &str) -> Option<i64> {
        let from = self.scope_unit();
        self.constant(from, name.rsplit("::").next().unwrap_or(name), 0)
    }

    /// The value of a constant (`#define`, enumerator, `constexpr`) that code in unit
    /// `from` sees, evaluated in the unit that defines it.
    fn constant(&mut self, from: usize, name: &str, depth: usize) -> Option<i64> {
        let definition = self.index.constant_from(from, name)?;
        if depth > 16 {
            return None;
        }
        let unit = if definition.unit == DEFINES {
            None
        } else {
            Some(definition.unit)
        };
        let from = definition.origin.unwrap_or(from);
        self.const_eval((unit, from), definition.value, depth)
    }

    /// Evaluate a constant expression without side effects (for definitions outside
    /// the walked code): its text is in `unit` (`None`: the `#define`s), its names are
    /// looked up from the analyzed file `from`.
    fn const_eval(&mut self, at: (Option<usize>, usize), node: Node<'u>, depth: usize) -> Option<i64> {
        if depth > 32 {
            return None;
        }
        let (unit, from) = at;
        let source = self.index.unit(unit.unwrap_or(crate::index::DEFINES));
        match node.kind() {
            "number_literal" => parse_int(source.text_of(node)),
            "true" => Some(1),
            "false" => Some(0),
            "identifier" | "qualified_identifier" => {
                let text = source.text_of(node);
                let simple = text.rsplit("::").next().unwrap_or(text).to_string();
                self.constant(from, &simple, depth + 1)
            }
            "parenthesized_expression" => self.const_eval(at, node.named_child(0)?, depth + 1),
            "cast_expression" => self.const_eval(at, node.field_child("value")?, depth + 1),
            "unary_expression" => {
                let operand = self.const_eval(at, node.field_child("argument")?, depth + 1)?;
                unary_op(source.text_of(node.field_child("operator")?), operand)
            }
            "binary_expression" => {
                let left = self.const_eval(at, node.field_child("left")?, depth + 1)?;
                let right = self.const_eval(at, node.field_child("right")?, depth + 1)?;
                binary_op(source.text_of(node.field_child("operator")?), left, right)
            }
            "sizeof_expression" => {
                let ty = node.field_child("type")?;
                type_size(source.text_of(ty))
            }
            _ => None,
        }
    }

    /// Where an lvalue lives; `None` for what is no place the extractor follows.
    pub(super) fn place_of(&mut self, node: Node<'u>) -> Option<Place> {
        if self.nesting >= MAX_NESTING || !self.step(node) {
            return None;
        }
        self.nesting += 1;
        let place = self.place_of_inner(node);
        self.nesting -= 1;
        place
    }

    fn place_of_inner(&mut self, node: Node<'u>) -> Option<Place> {
        match node.kind() {
            "identifier" | "type_identifier" => {
                let name = self.text(node);
                Some(self.lookup_local(name).unwrap_or_else(|| self.member_or_global(name)))
            }
            "qualified_identifier" => Some(format!("::{}", self.text(node).trim_start_matches("::"))),
            "parenthesized_expression" => self.place_of(node.named_child(0)?),
            "cast_expression" => self.place_of(node.field_child("value")?),
            "field_expression" => {
                let base = node.field_child("argument")?;
                let field = self.text(node.field_child("field")?);
                let arrow = node.field_child("operator").is_some_and(|op| self.text(op) == "->");
                let base_place = if arrow || base.kind() == "this" {
                    match self.eval(base) {
                        Value::Ref(place) => place,
                        _ => self.place_of(base)?,
                    }
                } else {
                    self.place_of(base)?
                };
                Some(format!("{base_place}.{field}"))
            }
            "subscript_expression" => {
                let base = node.field_child("argument")?;
                let index = node.field_child("indices").or_else(|| node.field_child("index"))?;
                let index = match index.kind() {
                    "subscript_argument_list" => index.named_child(0)?,
                    _ => index,
                };
                let position = self.eval(index).int()?;
                let base_place = match self.eval(base) {
                    Value::Ref(place) => place,
                    _ => self.place_of(base)?,
                };
                Some(format!("{base_place}[{position}]"))
            }
            "pointer_expression" if self.operator(node) == "*" => match self.eval(node.field_child("argument")?) {
                Value::Ref(place) => Some(place),
                _ => None,
            },
            _ => None,
        }
    }

    fn operator(&self, node: Node) -> &'u str {
        node.field_child("operator").map_or("", |op| self.text(op))
    }

    /// The value at a field or element; reading through a buffer pointer on the host
    /// is a host read of that buffer.
    fn read_place(&mut self, node: Node<'u>) -> Value {
        if let Some(base) = node.field_child("argument")
            && node.kind() == "subscript_expression"
        {
            let base_value = self.eval(base);
            if matches!(base_value, Value::Buffer { .. } | Value::SymBuffer { .. }) {
                if self.core.is_some() {
                    // `xGm[k]` in kernel code: the global tensor from element `k`.
                    let index = node.field_child("indices").and_then(|list| list.named_child(0));
                    let steps = index.map_or(Value::Unknown, |index| self.eval(index));
                    return match advance_by(&base_value, &steps, self.range(node)) {
                        // `aicore`: from an element of no known index, the whole tensor.
                        Value::Unknown if self.aicore.is_some() => super::aicore::anywhere_in(&base_value),
                        moved => moved,
                    };
                }
                self.host_access(node, &base_value, false);
                return Value::Unknown;
            }
        }
        let place = self.place_of(node);
        match place.as_ref().map(|place| self.load(place)) {
            Some(Value::Unknown) if node.kind() == "field_expression" && self.aicore.is_some() => {
                let place = place.unwrap_or_default();
                self.tiling_param(&place, node).unwrap_or(Value::Unknown)
            }
            Some(Value::Unknown) | None => self.symbolic_element(node),
            Some(value) => value,
        }
    }

    /// `workers[idx]` with an index over `rank`, or past the elements the code
    /// created: the element of the handle array as a `.sync` index expression,
    /// evaluated (and checked against the array's length) per rank.
    fn symbolic_element(&mut self, node: Node<'u>) -> Value {
        if node.kind() != "subscript_expression" {
            return Value::Unknown;
        }
        let (Some(base), Some(indices)) = (node.field_child("argument"), node.field_child("indices")) else {
            return Value::Unknown;
        };
        let Some(index) = indices.named_child(0) else {
            return Value::Unknown;
        };
        // A symbolic index, or a concrete one past the array's end (SG605 then says so).
        let Some(index) = symbolic(&self.eval(index), self.range(index)) else {
            return Value::Unknown;
        };
        let Some(container) = self.container_place(base) else {
            return Value::Unknown;
        };
        match self.store.get(&format!("{container}[0]")) {
            Some(Value::Sym(ast::Expr {
                kind: ast::ExprKind::Index { base, .. },
                ..
            })) => Value::Sym(ast::Expr {
                span: self.range(node),
                kind: ast::ExprKind::Index {
                    base: base.clone(),
                    index: Box::new(index),
                },
            }),
            // An array of one: the `.sync` name is the handle itself, which `.sync`
            // cannot index; a constant index past it leaves the call out (listed).
            Some(handle @ Value::Handle(_))
                if !self.store.contains_key(&format!("{container}[1]"))
                    && !matches!(index.kind, ast::ExprKind::Int(ref k) if k.value != 0) =>
            {
                handle.clone()
            }
            _ => Value::Unknown,
        }
    }

    /// The value at a place; a pointer read through a typed place (`float *p`) steps
    /// by its pointee's size.
    pub(super) fn load(&self, place: &str) -> Value {
        match self.store.get(place).cloned().unwrap_or(Value::Unknown) {
            Value::Buffer { name, offset, scale } => Value::Buffer {
                name,
                offset,
                scale: self
                    .store
                    .get(&format!("{place}.#elem"))
                    .and_then(Value::int)
                    .map_or(scale, Scale::Bytes),
            },
            other => other,
        }
    }

    fn pointer_expression(&mut self, node: Node<'u>) -> Value {
        let Some(argument) = node.field_child("argument") else {
            return Value::Unknown;
        };
        if self.operator(node) == "&" {
            return self.place_of(argument).map_or(Value::Unknown, Value::Ref);
        }
        match self.eval(argument) {
            Value::Ref(place) => self.store.get(&place).cloned().unwrap_or(Value::Unknown),
            buffer @ Value::Buffer { .. } => {
                self.host_access(node, &buffer, false);
                Value::Unknown
            }
            _ => Value::Unknown,
        }
    }

    fn unary(&mut self, node: Node<'u>) -> Value {
        let Some(argument) = node.field_child("argument") else {
            return Value::Unknown;
        };
        let operator = self.operator(node);
        let value = self.eval(argument);
        match (operator, &value) {
            ("!" | "-", Value::Sym(expr)) => Value::Sym(ast::Expr {
                span: self.range(node),
                kind: ast::ExprKind::Unary(
                    if operator == "!" {
                        ast::UnaryOp::Not
                    } else {
                        ast::UnaryOp::Neg
                    },
                    Box::new(expr.clone()),
                ),
            }),
            ("!", value) => value
                .truth()
                .map_or(Value::Unknown, |truth| Value::Int(i64::from(!truth))),
            (_, Value::Int(operand)) => unary_op(operator, *operand).map_or(Value::Unknown, Value::Int),
            _ => Value::Unknown,
        }
    }

    fn binary(&mut self, node: Node<'u>) -> Value {
        let (Some(left), Some(right)) = (node.field_child("left"), node.field_child("right")) else {
            return Value::Unknown;
        };
        let operator = self.operator(node);
        let left_value = self.eval(left);
        // Short-circuit, as C evaluates them.
        match (operator, left_value.truth()) {
            ("&&", Some(false)) => return Value::Int(0),
            ("||", Some(true)) => return Value::Int(1),
            _ => {}
        }
        let right_value = self.eval(right);
        match (&left_value, &right_value) {
            (Value::Int(a), Value::Int(b)) => binary_op(operator, *a, *b).map_or(Value::Unknown, Value::Int),
            (Value::Buffer { .. }, Value::Int(delta)) if matches!(operator, "+" | "-") => {
                let delta = if operator == "-" {
                    delta.checked_neg()
                } else {
                    Some(*delta)
                };
                delta.map_or(Value::Unknown, |delta| advance(&left_value, delta))
            }
            (Value::Int(delta), Value::Buffer { .. }) if operator == "+" => advance(&right_value, *delta),
            // Kernel code: a pointer moved by what has no value is somewhere in its buffer.
            (Value::Buffer { .. } | Value::SymBuffer { .. }, Value::Unknown)
                if self.aicore.is_some() && matches!(operator, "+" | "-") =>
            {
                super::aicore::anywhere_in(&left_value)
            }
            (Value::Sym(a), Value::Sym(b)) if operator == "|" => {
                Value::Sym(super::ast_binary(ast::BinaryOp::BitOr, a.clone(), b.clone()))
            }
            (Value::Buffer { .. } | Value::SymBuffer { .. }, Value::Sym(_))
            | (Value::SymBuffer { .. }, Value::Int(_))
                if operator == "+" =>
            {
                advance_by(&left_value, &right_value, self.range(right))
            }
            // An expression over `rank` stays one, for the program to evaluate per rank.
            (Value::Sym(_), Value::Int(_) | Value::Sym(_)) | (Value::Int(_), Value::Sym(_))
                if too_large(&[&left_value, &right_value]) =>
            {
                Value::Unknown
            }
            (Value::Sym(_), Value::Int(_) | Value::Sym(_)) | (Value::Int(_), Value::Sym(_)) => {
                match (
                    binary_ast(operator),
                    symbolic(&left_value, self.range(left)),
                    symbolic(&right_value, self.range(right)),
                ) {
                    (Some(op), Some(a), Some(b)) => Value::Sym(super::ast_binary(op, a, b)),
                    _ => Value::Unknown,
                }
            }
            // Handles compare equal when they are the same object.
            (a, b) if matches!(operator, "==" | "!=") && a != &Value::Unknown && b != &Value::Unknown => {
                let same = a == b;
                Value::Int(i64::from(if operator == "==" { same } else { !same }))
            }
            // An unknown left side decides nothing unless the right side is false: a
            // poll `while (probe() != 0 && timeout-- > 0)` may end at any pass.
            (_, b) if operator == "&&" => match b.truth() {
                Some(false) => Value::Int(0),
                _ => Value::Unknown,
            },
            (_, b) if operator == "||" => match b.truth() {
                Some(true) => Value::Int(1),
                _ => Value::Unknown,
            },
            _ => Value::Unknown,
        }
    }

    fn conditional(&mut self, node: Node<'u>) -> Value {
        let (Some(condition), Some(then), Some(otherwise)) = (
            node.field_child("condition"),
            node.field_child("consequence"),
            node.field_child("alternative"),
        ) else {
            return Value::Unknown;
        };
        let cond = self.eval(condition);
        match cond.truth() {
            Some(true) => return self.eval(then),
            Some(false) => return self.eval(otherwise),
            None => {}
        }
        // `i < rank ? i : i + 1`: stays a `.sync` conditional over `rank`.
        let Value::Sym(cond) = cond else {
            return Value::Unknown;
        };
        let (then, otherwise) = (self.eval(then), self.eval(otherwise));
        if too_large(&[&Value::Sym(cond.clone()), &then, &otherwise]) {
            return Value::Unknown;
        }
        match (
            symbolic(&then, self.range(node)),
            symbolic(&otherwise, self.range(node)),
        ) {
            (Some(then), Some(otherwise)) => Value::Sym(ast::Expr {
                span: self.range(node),
                kind: ast::ExprKind::Cond {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise: Box::new(otherwise),
                },
            }),
            _ => Value::Unknown,
        }
    }

    fn assignment(&mut self, node: Node<'u>) -> Value {
        let (Some(left), Some(right)) = (node.field_child("left"), node.field_child("right")) else {
            return Value::Unknown;
        };
        let operator = self.operator(node);
        let value = self.eval(right);
        // `host[i] = x` and `*host = x` write a buffer from the host.
        if matches!(left.kind(), "subscript_expression" | "pointer_expression")
            && let Some(base) = left.field_child("argument")
        {
            let base_value = self.eval(base);
            if let Value::Buffer { .. } = base_value {
                self.host_access(left, &base_value, true);
                return value;
            }
        }
        let Some(place) = self.place_of(left) else {
            return value;
        };
        let stored = if operator == "=" {
            value
        } else {
            let current = self.store.get(&place).cloned().unwrap_or(Value::Unknown);
            match (current, &value) {
                (Value::Int(a), Value::Int(b)) => {
                    binary_op(operator.trim_end_matches('='), a, *b).map_or(Value::Unknown, Value::Int)
                }
                (buffer @ Value::Buffer { .. }, Value::Int(b)) if matches!(operator, "+=" | "-=") => {
                    let delta = if operator == "-=" { b.checked_neg() } else { Some(*b) };
                    delta.map_or(Value::Unknown, |delta| advance(&buffer, delta))
                }
                // Kernel code: `offset -= a * b` over tiling values stays an expression.
                (current @ (Value::Int(_) | Value::Sym(_)), Value::Int(_) | Value::Sym(_)) if self.aicore.is_some() => {
                    let span = self.range(node);
                    match (
                        binary_ast(operator.trim_end_matches('=')),
                        symbolic(&current, span.clone()),
                        symbolic(&value, span),
                    ) {
                        (Some(op), Some(a), Some(b)) => Value::Sym(super::ast_binary(op, a, b)),
                        _ => Value::Unknown,
                    }
                }
                _ => Value::Unknown,
            }
        };
        self.note_written(&place);
        self.keep_declared(&place, &stored);
        self.store.insert(place, stored.clone());
        stored
    }

    fn update(&mut self, node: Node<'u>) -> Value {
        let Some(argument) = node.field_child("argument") else {
            return Value::Unknown;
        };
        let delta = if self.text(node).contains("++") { 1 } else { -1 };
        let Some(place) = self.place_of(argument) else {
            return Value::Unknown;
        };
        let current = self.store.get(&place).cloned().unwrap_or(Value::Unknown);
        let next = match &current {
            Value::Int(value) => value.checked_add(delta).map_or(Value::Unknown, Value::Int),
            buffer @ Value::Buffer { .. } => advance(buffer, delta),
            _ => Value::Unknown,
        };
        self.note_written(&place);
        self.store.insert(place, next.clone());
        // Prefix forms yield the new value.
        if self.text(node).starts_with(['+', '-']) {
            next
        } else {
            current
        }
    }

    /// `(__gm__ half *)x`: arithmetic on the result steps by the new pointee's size. In
    /// kernel code a pointee of no known size (`(__gm__ T *)x`, `T` from the build) steps
    /// by an unknown one (whole tensors), not by the build's `sizeof_T` as local tensors
    /// do: global offsets are products of tiling fields the host keeps related (a row's
    /// elements and a copy's blocks) and the walk takes apart, so at degenerate values
    /// (rows of no element, copied with blocks of bytes) two tiles' rows would meet.
    fn cast_scale(&self, ty: Node<'u>) -> Option<Scale> {
        let text = self.text(ty);
        if let Some(size) = pointee_size(text) {
            return Some(Scale::Bytes(size));
        }
        self.aicore.as_ref()?;
        // `__gm__ T *`, `const T *`: the type is the last word.
        let pointee = text.trim().strip_suffix('*')?.split_whitespace().last()?;
        Some(self.type_size_of(pointee).map_or(Scale::UNKNOWN, Scale::Bytes))
    }

    fn size_of(&mut self, node: Node<'u>) -> Value {
        if let Some(ty) = node.field_child("type") {
            let text = self.text(ty);
            return match type_size(text).or_else(|| self.aicore.as_ref().and(self.type_size_of(text))) {
                Some(size) => Value::Int(size),
                None => self.sizeof_param(text, node).unwrap_or(Value::Unknown),
            };
        }
        // `sizeof(half)` where the grammar cannot tell a type from a value: by name.
        if let Some(value) = node.field_child("value") {
            let text = self.text(value).trim().trim_start_matches('(').trim_end_matches(')');
            if let Some(size) = type_size(text).or_else(|| self.aicore.as_ref().and(self.type_size_of(text))) {
                return Value::Int(size);
            }
            if is_type_name(text)
                && let Some(size) = self.sizeof_param(text, node)
            {
                return size;
            }
        }
        Value::Unknown
    }

    /// A call: a kernel launch, a catalogued API, a helper defined in the analyzed
    /// files (inlined), or something else (its arguments are still evaluated, and a
    /// handle it receives is listed as unresolved).
    pub(super) fn call(&mut self, node: Node<'u>) -> Value {
        let (Some(function), Some(arguments)) = (node.field_child("function"), node.field_child("arguments")) else {
            return Value::Unknown;
        };
        if let Some(value) = self.macro_call(node) {
            return value;
        }
        let mut cursor = arguments.walk();
        let args: Vec<Node<'u>> = arguments
            .named_children(&mut cursor)
            .filter(|arg| arg.kind() != "comment")
            .collect();
        if function.kind() == "call_expression"
            && let Some(kernel) = function.field_child("function")
            && self.unit().masked.launches.contains_key(&kernel.end_byte())
        {
            return self.launch(node, kernel, function, &args);
        }
        let name = callee_name(self.text(function));
        let simple = name.rsplit(['.', ':', '>']).next().unwrap_or(&name).to_string();
        if let Some(value) = self.rank_query(&simple, &args) {
            return value;
        }
        if self.core.is_none()
            && let Some(value) = self.thread_call(node, function, &simple, &args)
        {
            return value;
        }
        if self.core.is_some()
            && let Some(value) = self.core_call(node, function, &name, &simple, &args)
        {
            return value;
        }
        if CONVERSIONS.contains(&name.as_str()) {
            return args.first().map_or(Value::Unknown, |arg| self.eval(*arg));
        }
        let qualified = name.trim_start_matches("::").trim_start_matches("ge::");
        if let Some(api) = api::lookup(qualified).or_else(|| api::lookup(&simple)) {
            match api.place {
                api::Place::Host => return self.api_call(node, api, &args),
                api::Place::GenTask if self.gen_task.is_some() => return self.gen_task_factory(node, api, &args),
                _ => {}
            }
        }
        if function.kind() == "field_expression"
            && let Some(value) = self
                .task_method(function, &simple, &args)
                .or_else(|| self.stream_info(&simple))
        {
            return value;
        }
        if function.kind() == "field_expression"
            && let Some(value) = self.container_method(function, &simple, &args)
        {
            return value;
        }
        if let Some(definition) = self.resolve(function, &simple, args.len()) {
            return self.inline(node, function, &definition, &args);
        }
        if let Some(classes) = self.ambiguous_method(function, &simple, args.len()) {
            self.unresolved(
                node,
                format!(
                    "`{name}` is a method of {classes}, and the class of its object is not known: the call is not \
                     followed"
                ),
            );
        }
        self.opaque_call(node, &name, &args)
    }

    /// `HcclGetRankId(comm, &rank)` and `HcclGetRankSize(comm, &size)`: the rank is the
    /// program's `rank`, the size the rank count it is extracted for.
    fn rank_query(&mut self, name: &str, args: &[Node<'u>]) -> Option<Value> {
        let value = match name {
            // The rank is where the code asked for it (`&rank`), as every span is.
            "HcclGetRankId" => {
                let asked = args.last().map_or(0..0, |arg| self.range(*arg));
                Value::Sym(super::ast::Expr::name("rank", asked))
            }
            "HcclGetRankSize" => self.ranks.map_or(Value::Unknown, Value::Int),
            _ => return None,
        };
        self.wants_ranks = true;
        let output = args.last().and_then(|arg| match self.eval(*arg) {
            Value::Ref(place) => Some(place),
            _ => None,
        });
        if let Some(place) = output {
            self.store.insert(place, value);
        }
        Some(Value::Int(0))
    }

    /// `v.push_back(x)`, `v.data()`, `v.size()`, `v.resize(n)` on a container place.
    fn container_method(&mut self, function: Node<'u>, method: &str, args: &[Node<'u>]) -> Option<Value> {
        let base = function.field_child("argument")?;
        let place = self.container_place(base)?;
        let len_place = format!("{place}.#len");
        let len = self.store.get(&len_place).and_then(Value::int);
        match method {
            "push_back" | "emplace_back" => {
                let value = args.first().map_or(Value::Unknown, |arg| self.eval(*arg));
                let len = len.unwrap_or(0);
                self.store.insert(format!("{place}[{len}]"), value);
                self.store.insert(len_place, Value::Int(len + 1));
                Some(Value::Unknown)
            }
            "resize" | "reserve" => {
                if method == "resize"
                    && let Some(Value::Int(new_len)) = args.first().map(|arg| self.eval(*arg))
                {
                    self.store.insert(len_place, Value::Int(new_len));
                }
                Some(Value::Unknown)
            }
            "data" => Some(Value::Ref(place)),
            // An iterator, as the index it stands at (`v.begin() + k`).
            "begin" => Some(Value::Int(0)),
            "insert" => {
                let (Some(position), Some(value)) = (args.first(), args.get(1)) else {
                    return Some(Value::Unknown);
                };
                let (Some(position), Some(len)) = (self.eval(*position).int(), len) else {
                    return Some(Value::Unknown);
                };
                let value = self.eval(*value);
                for k in (position..len).rev() {
                    let moved = self
                        .store
                        .get(&format!("{place}[{k}]"))
                        .cloned()
                        .unwrap_or(Value::Unknown);
                    self.store.insert(format!("{place}[{}]", k + 1), moved);
                }
                self.store.insert(format!("{place}[{position}]"), value);
                self.store.insert(len_place, Value::Int(len + 1));
                Some(Value::Unknown)
            }
            "size" => Some(len.map_or(Value::Unknown, Value::Int)),
            "empty" => Some(len.map_or(Value::Unknown, |len| Value::Int(i64::from(len == 0)))),
            "clear" => {
                self.store.insert(len_place, Value::Int(0));
                Some(Value::Unknown)
            }
            "at" | "front" | "back" => {
                let position = match method {
                    "front" => Some(0),
                    "back" => len.map(|len| len - 1),
                    _ => args.first().and_then(|arg| self.eval(*arg).int()),
                };
                Some(position.map_or(Value::Unknown, |position| {
                    self.store
                        .get(&format!("{place}[{position}]"))
                        .cloned()
                        .unwrap_or(Value::Unknown)
                }))
            }
            _ => None,
        }
    }

    /// The place of a container (`v`, `this->events_`, a pointer to one).
    pub(super) fn container_place(&mut self, node: Node<'u>) -> Option<Place> {
        match self.eval(node) {
            Value::Ref(place) => Some(place),
            _ => self.place_of(node),
        }
    }

    /// The definition a call names: among the same-named definitions the calling file
    /// can call (see `Index::links`) with room for the arguments and the qualifier the
    /// call writes (`ns::F`, `Class::F`), the closest to the caller (its own file, then
    /// a file it includes), preferring the caller's class and an exact parameter count.
    /// A library API's own implementation is never one (`is_library_api`).
    fn resolve(&mut self, function: Node<'u>, simple: &str, argc: usize) -> Option<FnDef<'u>> {
        let is_method = function.kind() == "field_expression";
        let class = self.receiver_class(function);
        let ambiguous =
            is_method && self.core.is_some() && class.is_none() && self.classes_defining(simple, argc).len() > 1;
        let qualifier = (!is_method).then(|| qualifier_of(self.text(function))).flatten();
        let from = self.scope_unit();
        self.index
            .lookup_from(from, simple)
            .filter(|def| !def.kernel && def.params.len() >= argc)
            .filter(|def| def.class.is_some() || !is_library_api(def.simple_name()))
            // Device helpers run in kernel code, host functions in host code.
            .filter(|def| def.device == self.core.is_some() || !def.device)
            .filter(|def| match &qualifier {
                Some(qualifier) => qualifies(def, qualifier),
                None => is_method || def.class.is_none() || def.class == class,
            })
            // Kernel code: a method of an object of unknown class that several classes
            // define is none of them (`ambiguous_method` says so), not the nearest file's.
            .filter(|def| !ambiguous || def.class.is_none())
            .max_by_key(|def| {
                let closeness = if def.unit == from {
                    2
                } else if self.index.scopes.sees(from, def.unit) {
                    1
                } else {
                    0
                };
                // `max_by_key` keeps the last of equals: reverse the position to keep the first.
                (
                    closeness,
                    def.class == class,
                    def.params.len() == argc,
                    std::cmp::Reverse(def.unit),
                )
            })
            .cloned()
    }

    /// `op.Process()`: the class `op` was declared with (a member's from its field
    /// declaration, in kernel code); `Process()` and `this->Process()`: the caller's.
    fn receiver_class(&mut self, function: Node<'u>) -> Option<String> {
        let base = (function.kind() == "field_expression")
            .then(|| function.field_child("argument"))
            .flatten();
        let Some(base) = base.filter(|base| base.kind() != "this") else {
            return self.frame().class.clone();
        };
        let place = self.place_of(base);
        if let Some(Value::Str(class)) = place
            .as_ref()
            .and_then(|place| self.store.get(&format!("{place}.#class")))
        {
            return Some(class.clone());
        }
        if self.core.is_none() {
            return self.frame().class.clone();
        }
        let declared = place.and_then(|place| self.declared_type(&place))?;
        // `PolicyType policy;` in `template <typename PolicyType> class Kernel`.
        let declared = self
            .aicore
            .as_ref()
            .and_then(|state| state.type_args.get(super::stmt::class_name(&declared)))
            .cloned()
            .unwrap_or(declared);
        let class = super::stmt::class_name(&declared);
        self.index.classes.contains(class).then(|| class.to_string())
    }

    /// The classes that define a method `simple` taking `argc` arguments, sorted.
    fn classes_defining(&self, simple: &str, argc: usize) -> Vec<String> {
        let mut classes: Vec<String> = self
            .index
            .lookup_from(self.scope_unit(), simple)
            .filter(|def| def.params.len() >= argc)
            .filter_map(|def| def.class.clone())
            .collect();
        classes.sort_unstable();
        classes.dedup();
        classes
    }

    /// Kernel code: `obj.f()` where `obj`'s class is unknown and several classes define
    /// `f`: their names, for the note that the call is not followed.
    fn ambiguous_method(&mut self, function: Node<'u>, simple: &str, argc: usize) -> Option<String> {
        if function.kind() != "field_expression" || self.core.is_none() || self.receiver_class(function).is_some() {
            return None;
        }
        let classes = self.classes_defining(simple, argc);
        (classes.len() > 1).then(|| {
            let shown: Vec<String> = classes.iter().take(4).map(|class| format!("`{class}`")).collect();
            match classes.len().saturating_sub(4) {
                0 => shown.join(", "),
                more => format!("{} and {more} more classes", shown.join(", ")),
            }
        })
    }

    fn inline(&mut self, node: Node<'u>, function: Node<'u>, definition: &FnDef<'u>, args: &[Node<'u>]) -> Value {
        if self.frames.len() > MAX_INLINE_DEPTH {
            self.unresolved(
                node,
                format!(
                    "calls nest deeper than {MAX_INLINE_DEPTH} levels here: `{}` is not followed",
                    definition.qualified
                ),
            );
            return self.opaque_call(node, &definition.qualified, args);
        }
        if self
            .frames
            .iter()
            .any(|frame| frame.function.as_deref() == Some(definition.qualified.as_str()))
        {
            self.unresolved(
                node,
                format!(
                    "`{}` calls itself: the recursive call is not followed",
                    definition.qualified
                ),
            );
            return self.opaque_call(node, &definition.qualified, args);
        }
        let receiver = self.receiver(function, definition);
        self.run_function(definition, receiver, args)
    }

    /// The object a method is called on: `obj.f()`, `p->f()`, or `this` for `f()`
    /// inside a method of the same class.
    fn receiver(&mut self, function: Node<'u>, definition: &FnDef<'u>) -> Option<Place> {
        match function.kind() {
            "field_expression" => function.field_child("argument").and_then(|base| {
                let arrow = function.field_child("operator").is_some_and(|op| self.text(op) == "->");
                if arrow || base.kind() == "this" {
                    match self.eval(base) {
                        Value::Ref(place) => Some(place),
                        _ => None,
                    }
                } else {
                    self.place_of(base)
                }
            }),
            _ if definition.class.is_some() && definition.class == self.frame().class => self.frame().this.clone(),
            _ => None,
        }
    }

    /// Walk `definition`'s body with its parameters bound to `args` (evaluated in the
    /// caller) and `this` to `receiver`; returns what it returns.
    pub(super) fn run_function(&mut self, definition: &FnDef<'u>, receiver: Option<Place>, args: &[Node<'u>]) -> Value {
        let bound: Vec<(Value, Option<Place>)> = args
            .iter()
            .map(|arg| {
                let place = self.place_of(*arg);
                (self.eval(*arg), place)
            })
            .collect();
        let this = receiver.or_else(|| definition.class.as_ref().map(|_| self.fresh_place("this")));
        self.frames.push(Frame {
            unit: definition.unit,
            scopes: vec![Default::default()],
            cleanups: vec![Vec::new()],
            this,
            function: Some(definition.qualified.clone()),
            class: definition.class.clone(),
            returned: Value::Unknown,
            call_block: self.blocks.len() - 1,
        });
        for (position, param) in definition.params.iter().enumerate() {
            let (value, place) = bound.get(position).cloned().unwrap_or((Value::Unknown, None));
            match place {
                Some(place) if param.reference => self.alias(&param.name, place),
                Some(place) if !param.indirect => {
                    let copy = self.declare(&param.name);
                    self.copy_members(&place, &copy);
                    self.store.insert(copy, value);
                }
                _ => {
                    let local = self.declare(&param.name);
                    if self.aicore.is_some() {
                        // Kernel code: a register parameter (`RegTensor<float> &src`) is known by its type.
                        self.store
                            .insert(format!("{local}.#type"), Value::Str(param.type_text.clone()));
                    }
                    self.store.insert(local, value);
                }
            }
        }
        self.stmt(definition.body);
        self.frames.pop().map_or(Value::Unknown, |frame| frame.returned)
    }

    /// A struct passed by value: its members come along.
    fn copy_members(&mut self, from: &str, to: &str) {
        let members: Vec<(Place, Value)> = self
            .store
            .under(from)
            .filter(|(place, _)| {
                place
                    .strip_prefix(from)
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
            })
            .map(|(place, value)| (format!("{to}{}", &place[from.len()..]), value.clone()))
            .collect();
        self.store.extend(members);
    }

    /// A call the extractor does not follow: its arguments are evaluated (a checking
    /// macro's argument is the real call), and handles it receives are listed.
    fn opaque_call(&mut self, node: Node<'u>, name: &str, args: &[Node<'u>]) -> Value {
        let mut handed = Vec::new();
        let mut touches = Vec::new();
        let outputs = self.opaque_outputs(name, args);
        for arg in args {
            let value = self.eval(*arg);
            touches.extend(match &value {
                Value::Ref(place) => self.store.get(place).map(Value::object_names).unwrap_or_default(),
                value => value.object_names(),
            });
            let passes_object = match &value {
                value if value.is_object() => true,
                Value::Ref(place) => self.store.get(place).is_some_and(Value::is_object),
                // A parameter or member not used yet may be a handle from outside.
                Value::Unknown => self.place_of(*arg).is_some_and(|place| self.is_outside(&place)),
                _ => false,
            };
            if passes_object && arg.kind() != "call_expression" {
                handed.push(self.text(*arg).to_string());
            }
        }
        // What the call may write has no known value after it (`GetRingNum(&n)`), not
        // the value it had before.
        for place in outputs {
            self.note_written(&place);
            self.store.insert(format!("{place}.#len"), Value::Unknown);
            self.store.insert(place, Value::Unknown);
        }
        if !handed.is_empty() && !is_harmless(name) {
            let simple = name.rsplit(['.', ':', '>']).next().unwrap_or(name);
            let what = if is_library_api(simple) && self.index.lookup_from(self.scope_unit(), simple).next().is_some() {
                "is a library API (its implementation among the analyzed files is the library's, not followed)"
            } else {
                "is neither a catalogued API nor defined in the analyzed files"
            };
            self.unresolved_touching(
                node,
                format!(
                    "`{name}` {what}, and receives {}: what it does with {} is not known",
                    handed.iter().map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", "),
                    if handed.len() == 1 { "it" } else { "them" }
                ),
                touches,
            );
        }
        Value::Unknown
    }
}

impl<'u> Walker<'_, 'u> {
    /// The places a call the walk does not follow may write: what it gets the address
    /// of (`&n`), and what it takes by non-`const` reference where its declaration is
    /// visible (`void Prepare(uint32_t &n)`).
    fn opaque_outputs(&mut self, name: &str, args: &[Node<'u>]) -> Vec<Place> {
        let simple = name.rsplit(['.', ':', '>']).next().unwrap_or(name);
        let by_reference: Vec<bool> = self
            .index
            .prototype_from(self.scope_unit(), simple)
            .map(|params| params.iter().map(|param| param.reference && !param.is_const).collect())
            .unwrap_or_default();
        let mut outputs = Vec::new();
        for (position, arg) in args.iter().enumerate() {
            let arg = super::api::strip_casts(*arg);
            let written = if arg.kind() == "pointer_expression" && self.text(arg).starts_with('&') {
                arg.field_child("argument")
            } else if by_reference.get(position) == Some(&true) {
                Some(arg)
            } else {
                None
            };
            if let Some(place) = written.and_then(|target| self.place_of(target)) {
                outputs.push(place);
            }
        }
        outputs
    }
}

/// Functions known to do nothing to synchronization with the handles they receive.
pub(super) fn is_harmless(name: &str) -> bool {
    let simple = name.rsplit("::").next().unwrap_or(name);
    matches!(
        simple,
        "printf"
            | "fprintf"
            | "snprintf"
            | "sprintf"
            | "puts"
            | "assert"
            | "ASSERT_NE"
            | "EXPECT_NE"
            | "LOG"
            | "INFO_LOG"
            | "ERROR_LOG"
            | "WARN_LOG"
            | "DEBUG_LOG"
            | "memset_s"
            | "aclGetRecentErrMsg"
    ) || name.starts_with("std::cout")
}

/// A flag or enumeration constant the catalogue names, kept as a name.
fn is_catalogue_constant(name: &str) -> bool {
    api::FLAG_CONSTANTS.iter().any(|(flag, _)| *flag == name)
        || [
            api::EnumFamily::Engine,
            api::EnumFamily::MemcpyKind,
            api::EnumFamily::MallocPolicy,
            api::EnumFamily::DataType,
            api::EnumFamily::StreamFailureMode,
            api::EnumFamily::CaptureMode,
        ]
        .iter()
        .any(|family| family.constants().contains(&name))
        || name.ends_with("_STATUS_COMPLETE")
        || name.ends_with("_STATUS_NOT_READY")
        || name == "cudaErrorNotReady"
        || name.starts_with("COMM_PROTOCOL_")
}

/// `ns::Run` → `ns`, `a::B::Run` → `B`: the scope a qualified call names (`None`
/// unqualified, or `::Run`).
fn qualifier_of(text: &str) -> Option<String> {
    // Blanks and template arguments (`B<int>`) out.
    let mut depth = 0usize;
    let text: String = text
        .chars()
        .filter(|c| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                _ => return depth == 0 && !c.is_whitespace(),
            }
            false
        })
        .collect();
    let (scope, _) = text.trim_start_matches("::").rsplit_once("::")?;
    let last = scope.rsplit("::").next().unwrap_or(scope);
    (!last.is_empty()).then(|| last.to_string())
}

/// Whether `def` is in the class or namespace a qualified call names.
fn qualifies(def: &FnDef, qualifier: &str) -> bool {
    def.class.as_deref() == Some(qualifier)
        || def.namespace.rsplit("::").next() == Some(qualifier)
        || def.qualified.contains(&format!("{qualifier}::"))
}

/// `static_cast<aclrtStream>` → `static_cast`, `::aclrtFoo` → `aclrtFoo`, blanks out.
fn callee_name(text: &str) -> String {
    // `q.template AllocTensor<T>`: the keyword is no part of the name.
    let text = text
        .replace(".template ", ".")
        .replace("->template ", "->")
        .replace("::template ", "::");
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let text = text.trim_start_matches("::");
    match text.find('<') {
        Some(at) if !text.contains("->") => text[..at].to_string(),
        // `pipe->AllocEventID<HardEvent::V_MTE3>`: the template arguments at the end.
        _ if text.ends_with('>') => {
            let mut depth = 0usize;
            for (at, c) in text.char_indices().rev() {
                match c {
                    '>' => depth += 1,
                    '<' => {
                        depth -= 1;
                        if depth == 0 {
                            return text[..at].to_string();
                        }
                    }
                    _ => {}
                }
            }
            text.to_string()
        }
        _ => text.to_string(),
    }
}

pub(super) fn parse_int(text: &str) -> Option<i64> {
    let text = text.replace('\'', "");
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L', 'z', 'Z']);
    if digits.contains(['.', 'e', 'E']) && !digits.starts_with("0x") && !digits.starts_with("0X") {
        return None;
    }
    let (digits, radix) = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        (hex, 16)
    } else if let Some(binary) = digits.strip_prefix("0b").or_else(|| digits.strip_prefix("0B")) {
        (binary, 2)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (&digits[1..], 8)
    } else {
        (digits, 10)
    };
    u64::from_str_radix(digits, radix)
        .ok()
        .and_then(|value| i64::try_from(value).ok())
}

/// Most nodes of an expression the walk keeps symbolic; a larger one has no value.
/// An iteration like Newton's `y = (y + d / y) / 2` doubles its expression each pass:
/// sixteen passes would build (and copy) millions of nodes for one loop bound.
const MAX_SYMBOLIC_NODES: usize = 256;

/// Whether the symbolic operands together exceed [`MAX_SYMBOLIC_NODES`] (counted only
/// up to it).
fn too_large(operands: &[&Value]) -> bool {
    fn count(expr: &ast::Expr, budget: &mut usize) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        match &expr.kind {
            ast::ExprKind::Unary(_, a) => count(a, budget),
            ast::ExprKind::Binary(_, a, b) => {
                count(a, budget);
                count(b, budget);
            }
            ast::ExprKind::Cond { cond, then, otherwise } => {
                count(cond, budget);
                count(then, budget);
                count(otherwise, budget);
            }
            _ => {}
        }
    }
    let mut budget = MAX_SYMBOLIC_NODES + 1;
    for operand in operands {
        if let Value::Sym(expr) = operand {
            count(expr, &mut budget);
        }
    }
    budget == 0
}

fn unary_op(operator: &str, operand: i64) -> Option<i64> {
    match operator {
        "-" => operand.checked_neg(),
        "+" => Some(operand),
        "~" => Some(!operand),
        "!" => Some(i64::from(operand == 0)),
        _ => None,
    }
}

fn binary_op(operator: &str, a: i64, b: i64) -> Option<i64> {
    Some(match operator {
        "+" => a.checked_add(b)?,
        "-" => a.checked_sub(b)?,
        "*" => a.checked_mul(b)?,
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        "<<" => a.checked_shl(u32::try_from(b).ok()?)?,
        ">>" => a.checked_shr(u32::try_from(b).ok()?)?,
        "&" => a & b,
        "|" => a | b,
        "^" => a ^ b,
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "<" => i64::from(a < b),
        "<=" => i64::from(a <= b),
        ">" => i64::from(a > b),
        ">=" => i64::from(a >= b),
        "&&" => i64::from(a != 0 && b != 0),
        "||" => i64::from(a != 0 || b != 0),
        _ => return None,
    })
}

/// A value as `.sync` syntax, where it has one.
pub(super) fn symbolic(value: &Value, span: std::ops::Range<usize>) -> Option<ast::Expr> {
    match value {
        Value::Int(v) => Some(super::ast::Expr::int(*v, span)),
        Value::Sym(expr) => Some(expr.clone()),
        _ => None,
    }
}

/// A pointer moved by `steps` (an integer or an expression over `rank` or the core),
/// in its pointee's size: a symbolic buffer position.
pub(super) fn advance_by(pointer: &Value, steps: &Value, span: std::ops::Range<usize>) -> Value {
    if let Value::Int(steps) = steps
        && let Value::Buffer {
            scale: Scale::Bytes(_), ..
        } = pointer
    {
        return advance(pointer, *steps);
    }
    let Some(steps) = symbolic(steps, span.clone()) else {
        return Value::Unknown;
    };
    let (name, base, scale) = match pointer {
        Value::Buffer { name, offset, scale } => (name, super::ast::Expr::int(*offset, span.clone()), scale),
        Value::SymBuffer { name, offset, scale } => (name, offset.clone(), scale),
        _ => return Value::Unknown,
    };
    let Some(size) = scale.expr(span.clone()) else {
        return somewhere_in(name);
    };
    let bytes = if *scale == Scale::Bytes(1) {
        steps
    } else {
        super::ast_binary(ast::BinaryOp::Mul, steps, size)
    };
    let offset = match base.kind {
        ast::ExprKind::Int(ast::IntLit { value: 0, .. }) => bytes,
        _ => super::ast_binary(ast::BinaryOp::Add, base, bytes),
    };
    Value::SymBuffer {
        name: name.clone(),
        offset,
        scale: scale.clone(),
    }
}

/// `half *` → 2: the size of what a pointer type points to.
pub(super) fn pointee_size(type_text: &str) -> Option<i64> {
    let text = type_text.trim();
    let pointee = text.strip_suffix('*')?;
    type_size(pointee).or_else(|| (pointee.trim() == "void").then_some(1))
}

/// The `.sync` operator of a C binary operator, where they mean the same.
fn binary_ast(operator: &str) -> Option<ast::BinaryOp> {
    use ast::BinaryOp::*;
    Some(match operator {
        "*" => Mul,
        "/" => Div,
        "%" => Rem,
        "+" => Add,
        "-" => Sub,
        "&" => BitAnd,
        "^" => BitXor,
        "|" => BitOr,
        "<<" => Shl,
        ">>" => Shr,
        "==" => Eq,
        "!=" => Ne,
        "<" => Lt,
        "<=" => Le,
        ">" => Gt,
        ">=" => Ge,
        "&&" => And,
        "||" => Or,
        _ => return None,
    })
}

/// A pointer moved by steps of a size the reader does not know: somewhere in its buffer
/// (no byte of it is known).
pub(super) fn somewhere_in(name: &str) -> Value {
    Value::Buffer {
        name: name.to_string(),
        offset: 0,
        scale: Scale::LOST,
    }
}

/// `buffer + steps`, in the buffer's steps.
fn advance(buffer: &Value, steps: i64) -> Value {
    let Value::Buffer { name, offset, scale } = buffer else {
        return Value::Unknown;
    };
    if steps == 0 {
        return buffer.clone();
    }
    let size = match scale {
        Scale::Bytes(size) if *size > 0 => *size,
        Scale::Bytes(_) => return somewhere_in(name),
        Scale::Sym(size) => return advance_by(buffer, &Value::Int(steps), size.span.clone()),
    };
    steps
        .checked_mul(size)
        .and_then(|bytes| offset.checked_add(bytes))
        .map_or(Value::Unknown, |offset| Value::Buffer {
            name: name.clone(),
            offset,
            scale: scale.clone(),
        })
}

/// `T`, `DTYPE_X`, `ns::Type`: a name that may be a type (in `sizeof(T)` the grammar
/// cannot tell).
pub(super) fn is_type_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

pub(super) fn type_size(text: &str) -> Option<i64> {
    let text: String = text
        .split_whitespace()
        .filter(|w| *w != "const")
        .collect::<Vec<_>>()
        .join("");
    if text.ends_with('*') {
        return Some(8);
    }
    let text = text.trim_start_matches("std::");
    TYPE_SIZES.iter().find(|(name, _)| *name == text).map(|(_, size)| *size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_as_c_writes_them() {
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("1024UL"), Some(1024));
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("1'000"), Some(1000));
        assert_eq!(parse_int("1.5f"), None);
    }

    #[test]
    fn a_qualified_call_names_its_scope() {
        assert_eq!(qualifier_of("ns::Run"), Some("ns".into()));
        assert_eq!(qualifier_of("a::B<int>::Run"), Some("B".into()));
        assert_eq!(qualifier_of("::Run"), None);
        assert_eq!(qualifier_of("Run"), None);
    }

    #[test]
    fn callee_names_lose_templates_and_scope() {
        assert_eq!(callee_name("static_cast<aclrtStream>"), "static_cast");
        assert_eq!(callee_name(":: aclrtRecordEvent"), "aclrtRecordEvent");
        assert_eq!(callee_name("q.template AllocTensor<T>"), "q.AllocTensor");
        assert_eq!(
            callee_name("pipe->AllocEventID<HardEvent::V_MTE3>"),
            "pipe->AllocEventID"
        );
    }
}
