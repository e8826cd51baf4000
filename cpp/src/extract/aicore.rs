//! Ascend C kernels as the pipe program each AI core runs: the `.sync` `aicore` block
//! (grammar/SYNC.md, "Kernels inside"). The walk is the one host code gets (the kernel
//! class's methods inlined, constants evaluated, `GetBlockIdx()` and `TILING_KEY_IS`
//! symbolic); what differs is what a call becomes:
//!
//! - `pipe.InitBuffer(que, depth, len)` declares the queue or buffer with the position
//!   its `TQue<POS, depth>` / `TQueBind<SRC, DST, depth>` / `TBuf<POS>` type names;
//! - local tensors are values of the walk ([`Value::Buffer`] named after the tensor,
//!   stepping by the element size), so copies and `x[offset]` sub-tensors alias it;
//!   global tensors are the `GM_ADDR` parameters from the element `SetGlobalBuffer` names;
//! - the instructions (`DataCopy`, vector operations, `Mmad`, ...) and syncs (flags,
//!   barriers, event ids, cross-core flags, `SyncAll`) become the calls of the table in
//!   SYNC.md;
//! - tiling fields the code reads (`tilingData.tileNum`) are top-level `param`s, and a
//!   counted loop over them stays a `.sync` `for` instead of being unrolled.
//!
//! What cannot be followed (an Ascend C call this does not know that receives a local
//! tensor, a tensor or queue with no known value, a loop of no countable shape) is
//! listed as unresolved, as host code's is: never dropped silently.

use std::collections::HashMap;

use syncguard_grammar::ast;
use syncguard_model::kernel::{HardEvent, KernelKind, Position, UNKNOWN_END, VECTOR_OPS};
use syncguard_model::model::Pipe;
use tree_sitter::Node;

use super::value::{Place, Scale, Value};
use super::{Extracted, Flow, WalkOptions, Walker, ast_binary};
use crate::fields::FieldChild;
use crate::index::{FnDef, Index};

/// What the walk of one kernel's `aicore` block keeps besides the output.
#[derive(Clone, Default)]
pub(super) struct AicoreState {
    /// `.sync` names of the `GM_ADDR` parameters, in order.
    gm: Vec<String>,
    /// `KERNEL_TASK_TYPE_DEFAULT(...)` / `__mix__(a, b)`.
    kind: Option<KernelKind>,
    /// Queues and buffers `InitBuffer` declared, by `.sync` name: where their memory is.
    buffers: HashMap<String, Position>,
    /// Local tensors, by `.sync` name.
    tensors: std::collections::HashSet<String>,
    /// Tiling fields (and other integers from outside) made parameters, by place.
    pub(super) params: HashMap<Place, String>,
    /// Declared types of class members, by member name (`None`: not found).
    field_types: HashMap<String, Option<String>>,
    /// Field declarations' text, by member name (`None`: not found): each lookup reads
    /// the class declarations of every file.
    field_texts: HashMap<String, Option<String>>,
    /// Class constants initialized by an expression, by member name and the template
    /// arguments bound: their value (`None`: none, or being evaluated, so one naming
    /// itself has none).
    class_constants: HashMap<String, Option<Value>>,
    /// Whether the files define a type name as a struct, class or alias.
    records: HashMap<String, bool>,
    /// Template parameters bound by the declaration of a kernel class object
    /// (`KernelAdd<half> op;`): `T` → `half`.
    pub(super) type_args: HashMap<String, String>,
    /// Types from the build the kernel tests (`is_same_v<T, half>`), with their parameters.
    pub(super) type_choices: super::type_tests::TypeChoices,
    /// The output block of the `aicore` body, where declarations made under a
    /// condition go (see [`Walker::hoisted_to`]).
    body_block: usize,
    /// Buffers declared in the body block (their `TBuf::Get` may go there too).
    hoisted: std::collections::HashSet<String>,
    /// Members holding what went to the body block (a queue, a `TBuf::Get` tensor):
    /// they hold it on every path, also after the branch that set them.
    declared: HashMap<Place, Value>,
    /// Counters of the `.sync` loops open at this point of the walk.
    loop_vars: Vec<String>,
    cube: bool,
    vector: bool,
}

/// Vector instructions whose count argument (the last) gives every tensor's length;
/// the others (reductions, gathers, masked forms) touch the whole tensors. `GatherMask`
/// ends with the count it reports back (`rsvdCnt`), not one it is given.
fn counts_every_tensor(op: &str) -> bool {
    !(op.contains("Reduce")
        || matches!(
            op,
            "Gather" | "GatherMask" | "Brcb" | "Transpose" | "Select" | "PairReduceSum"
        ))
}

/// Vector comparisons, whose destination is a bit mask (one bit per element compared).
fn is_comparison(op: &str) -> bool {
    matches!(op, "Compare" | "CompareScalar" | "Compares")
}

/// Calls on a local tensor that issue no instruction.
const TENSOR_ACCESSORS: &[&str] = &[
    "GetSize",
    "SetSize",
    "GetLength",
    "GetPhyAddr",
    "SetUserTag",
    "GetUserTag",
    "SetShapeInfo",
    "GetShapeInfo",
    "SetBufferLen",
    "SetAddrWithOffset",
    "operator[]",
];

/// Whether `def` is an Ascend C kernel (`__global__ __aicore__`, or a kernel of a `.asc`
/// file or one taking `GM_ADDR` parameters), not a CUDA kernel.
pub fn is_ascend_kernel(index: &Index, def: &FnDef) -> bool {
    if !def.kernel {
        return false;
    }
    let unit = index.unit(def.unit);
    let header = kernel_head(&unit.text, def.node);
    !unit.cuda
        && (header.contains("__aicore__")
            || unit.path.ends_with(".asc")
            || def
                .params
                .iter()
                .any(|p| p.type_text.contains("GM_ADDR") || p.type_text.contains("__gm__")))
}

/// The programs of an Ascend C kernel: its `aicore` block, after the `superkernel` of
/// its early start when `superkernel` (the file uses SuperKernel early start).
pub fn extract_kernel<'i, 'u>(
    index: &'i Index<'u>,
    entry: &FnDef<'u>,
    superkernel: Option<Extracted>,
    options: WalkOptions<'i>,
) -> Extracted {
    let mut walker = Walker::new(index, None, options);
    if let Some(first) = &superkernel {
        for stmt in &first.file.stmts {
            match &stmt.kind {
                ast::StmtKind::Let {
                    pattern: ast::Pattern::Name(name),
                    ..
                }
                | ast::StmtKind::Param { name, .. } => {
                    walker.used_names.insert(name.name.clone());
                }
                _ => {}
            }
        }
    }
    walker.aicore_block(entry);
    let aicore = walker.finish(entry);
    let Some(mut first) = superkernel else {
        return aicore;
    };
    // Top-level declarations first, then the blocks.
    let (mut decls, mut blocks): (Vec<ast::Stmt>, Vec<ast::Stmt>) = first
        .file
        .stmts
        .into_iter()
        .partition(|s| matches!(s.kind, ast::StmtKind::Let { .. } | ast::StmtKind::Param { .. }));
    let (more_decls, more_blocks): (Vec<ast::Stmt>, Vec<ast::Stmt>) = aicore
        .file
        .stmts
        .into_iter()
        .partition(|s| matches!(s.kind, ast::StmtKind::Let { .. } | ast::StmtKind::Param { .. }));
    decls.extend(more_decls);
    blocks.extend(more_blocks);
    decls.extend(blocks);
    first.file.stmts = decls;
    first.api_calls += aicore.api_calls;
    for item in aicore.unresolved {
        if !first
            .unresolved
            .iter()
            .any(|u| u.span == item.span && u.message == item.message)
        {
            first.unresolved.push(item);
        }
    }
    first.incomplete = first.incomplete.or(aicore.incomplete);
    first
}

impl<'u> Walker<'_, 'u> {
    /// Walk `kernel` as one AI core runs it and emit its `aicore` block.
    fn aicore_block(&mut self, kernel: &FnDef<'u>) {
        let span = self.range_in(kernel.unit, kernel.node);
        self.enter(kernel);
        self.core = Some(super::kernel::CoreState::default());
        let mut state = AicoreState::default();
        for param in &kernel.params {
            let place = self.declare(&param.name);
            let name = self.object_name(&param.name);
            self.store.insert(
                place,
                Value::Buffer {
                    name: name.clone(),
                    offset: 0,
                    scale: Scale::Bytes(1),
                },
            );
            state.gm.push(name);
        }
        state.kind = mix_attribute(kernel_head(&self.index.unit(kernel.unit).text, kernel.node));
        self.open_block();
        state.body_block = self.blocks.len() - 1;
        self.aicore = Some(state);
        self.stmt(kernel.body);
        self.bound_type_choices();
        let mut body = self.close_block();
        prune_empty_branches(&mut body);
        let state = self.aicore.take().unwrap_or_default();
        let kind = state.kind.unwrap_or(match (state.cube, state.vector) {
            (true, true) => KernelKind::Mix { aic: 1, aiv: 2 },
            (true, false) => KernelKind::AicOnly,
            _ => KernelKind::AivOnly,
        });
        let mut args: Vec<ast::Arg> = state
            .gm
            .iter()
            .map(|name| ast::Arg {
                name: None,
                value: ast::Expr::name(name, span.clone()),
            })
            .collect();
        args.push(named("type", ast::Expr::name(kind.name(), span.clone()), span.clone()));
        if !self.unit_auto_sync(kernel.unit) {
            args.push(named(
                "auto_sync",
                ast::Expr {
                    kind: ast::ExprKind::Bool(false),
                    span: span.clone(),
                },
                span.clone(),
            ));
        }
        let name_span = crate::index::function_declarator(kernel.node)
            .and_then(|d| d.field_child("declarator"))
            .map_or(span.clone(), |node| self.range_in(kernel.unit, node));
        self.emit(
            ast::StmtKind::AiCore {
                name: ast::Ident {
                    name: super::value::identifier(kernel.simple_name()),
                    span: name_span,
                },
                args,
                body: ast::Block {
                    stmts: body,
                    span: span.clone(),
                },
            },
            span,
        );
    }

    /// `--cce-auto-sync=off` in the file's compile command turns the compiler's
    /// scalar-pipe syncs off.
    fn unit_auto_sync(&self, unit: usize) -> bool {
        self.index
            .unit(unit)
            .build
            .as_ref()
            .is_none_or(|flags| !flags.cce_auto_sync_off)
    }

    /// Kernel calls: `None` for a call walked as usual (a helper, a conversion).
    pub(super) fn aicore_call(
        &mut self,
        node: Node<'u>,
        function: Node<'u>,
        name: &str,
        simple: &str,
        args: &[Node<'u>],
    ) -> Option<Value> {
        if name.contains("MicroAPI::") || name.contains("Reg::") {
            return Some(self.micro_api(node, simple, args));
        }
        // `asc_vf_call<F>(...)`, `VF_CALL<F>(...)`: a vector function (register-based or
        // SIMT) run on PIPE_V, reaching the unified buffer through raw `__ubuf__`
        // pointers. Which bytes it reads and writes is not followed: said, never dropped.
        if matches!(simple, "asc_vf_call" | "VF_CALL") {
            for arg in args {
                self.eval(*arg);
            }
            self.unresolved_data(
                node,
                format!("`{simple}`: a vector function's reads and writes of the unified buffer (through raw pointers) are not followed"),
            );
            return Some(Value::Unknown);
        }
        // `op.InitBuffer()`, `ReleaseEventID()` of the kernel class: its own method.
        if self.is_own_method(function, simple) || !api_arity(simple, args.len()) {
            return None;
        }
        let receiver = (function.kind() == "field_expression")
            .then(|| function.field_child("argument"))
            .flatten();
        match simple {
            // The user workspace is the workspace parameter's memory.
            "GetUserWorkspace" => Some(args.first().map_or(Value::Unknown, |a| self.eval(*a))),
            "SetSysWorkspace" | "InitSocState" | "SetAtomicNone" | "SetMaskNorm" | "SetMaskCount" | "SetVectorMask"
            | "ResetMask" | "SetAtomicAdd" | "SetAtomicType" => {
                for arg in args {
                    self.eval(*arg);
                }
                Some(Value::Int(0))
            }
            "DivCeil" | "CeilDiv" | "CeilDivision" | "Ceil" | "AlignUp" | "CeilAlign" | "Align" | "AlignDown"
            | "FloorAlign" | "Min" | "Max" | "min" | "max"
                if args.len() == 2 && !self.defines_function(simple) =>
            {
                self.integer_helper(node, simple, args)
            }
            // `ParamOffset<half>(x, n)`: this core's `n` elements of `x`.
            "ParamOffset" if args.len() == 2 => {
                let base = self.eval(args[0]);
                let count = self.eval(args[1]);
                let size = self.template_type_size(function).unwrap_or(0);
                let span = self.range(node);
                let steps = super::expr::symbolic(&count, span.clone()).map(|count| {
                    Value::Sym(ast_binary(
                        ast::BinaryOp::Mul,
                        sym_call("GetBlockIdx", Vec::new(), span.clone()),
                        count,
                    ))
                });
                Some(match steps {
                    Some(steps) if size > 0 => {
                        super::expr::advance_by(&with_scale(&base, Scale::Bytes(size)), &steps, span)
                    }
                    _ => anywhere_in(&base),
                })
            }
            "GetBlockNum" => Some(Value::Sym(sym_call("GetBlockNum", Vec::new(), self.range(node)))),
            "GET_TILING_DATA"
            | "GET_TILING_DATA_WITH_STRUCT"
            | "GET_TILING_DATA_MEMBER"
            | "GET_TILING_DATA_PTR_WITH_STRUCT"
            | "REGISTER_TILING_DEFAULT"
            | "REGISTER_TILING_FOR_TILINGKEY" => {
                // `GET_TILING_DATA(tilingData, tiling)` declares `tilingData`, whose
                // fields are tiling parameters.
                let at = usize::from(simple.contains("WITH_STRUCT"));
                if let Some(name) = args.get(at).filter(|a| a.kind() == "identifier") {
                    let name = self.text(*name).to_string();
                    if self.lookup_local(&name).is_none() {
                        self.declare(&name);
                    }
                }
                Some(Value::Int(0))
            }
            "KERNEL_TASK_TYPE_DEFAULT" | "KERNEL_TASK_TYPE" => {
                let text = self.text(node);
                let kind = KernelKind::NAMES
                    .iter()
                    .rev()
                    .find(|(name, _)| text.contains(&format!("KERNEL_TYPE_{name}")))
                    .map(|(_, kind)| *kind);
                if let (Some(kind), Some(state)) = (kind, self.aicore.as_mut()) {
                    state.kind.get_or_insert(kind);
                }
                Some(Value::Int(0))
            }
            "InitBuffer" => Some(self.init_buffer(node, args)),
            // SuperKernel early start belongs to the `superkernel` block.
            "SetNextTaskStart" | "WaitPreTaskEnd" => Some(Value::Int(0)),
            "AllocTensor" | "DeQue" | "Get" | "GetWithOffset" if receiver.is_some() => {
                self.take_tensor(node, function, simple, receiver?, args)
            }
            "EnQue" | "FreeTensor" if receiver.is_some() => self.give_tensor(node, simple, receiver?, args),
            "SetFlag" | "WaitFlag" => Some(self.flag(node, function, simple, args)),
            "set_flag" | "wait_flag" => Some(self.low_level_flag(node, simple, args)),
            "PipeBarrier" | "pipe_barrier" => Some(self.barrier(node, function, args)),
            "AllocEventID" | "FetchEventID" | "ReleaseEventID" => Some(self.event_id(node, function, simple, args)),
            "CrossCoreSetFlag" | "CrossCoreWaitFlag" => Some(self.cross_core(node, function, simple, args)),
            "SyncAll" => Some(self.sync_all(node, function, args)),
            "SetGlobalBuffer" => Some(self.set_global_buffer(function, args)),
            "ReinterpretCast" if receiver.is_some() => {
                let value = self.eval(receiver?);
                let scale = self.template_type_scale(function, node);
                Some(with_scale(&value, scale))
            }
            "GetValue" | "SetValue" if receiver.is_some() => self.scalar_access(node, simple, receiver?, args),
            // Ascend 950 vector-function code: an instruction on registers.
            _ if args.iter().any(|arg| self.is_register(*arg)) => Some(self.micro_api(node, simple, args)),
            "DataCopy" | "DataCopyPad" | "LoadData" | "Fixpipe" => Some(self.copy(node, simple, args)),
            "Mmad" => Some(self.instruction(node, "Mmad", Pipe::M, args)),
            _ if VECTOR_OPS.binary_search(&simple).is_ok() && !args.is_empty() => {
                // `Min(a, b)` of the files' own (a scalar helper) is theirs.
                if self.defines_helper(simple, args) {
                    return None;
                }
                Some(self.instruction(node, simple, Pipe::V, args))
            }
            _ => {
                let receiver_value = receiver.map(|r| self.eval(r));
                match receiver_value {
                    Some(value) if self.is_tensor(&value) => {
                        if !TENSOR_ACCESSORS.contains(&simple) {
                            let text = self.text(function).to_string();
                            self.unresolved(
                                node,
                                format!("`{text}` is a call on a local tensor this reader does not know: not followed"),
                            );
                        }
                        Some(Value::Unknown)
                    }
                    _ => None,
                }
            }
        }
    }

    /// An unknown field or member read in kernel code: a tiling value (or another
    /// integer from outside the kernel), a top-level `param NAME in 0..;`.
    pub(super) fn tiling_param(&mut self, place: &Place, node: Node<'u>) -> Option<Value> {
        let state = self.aicore.as_ref()?;
        if let Some(value) = state.declared.get(place) {
            return Some(value.clone());
        }
        // Only what the kernel never assigned: a value it computed and lost (a float,
        // an opaque call's result) is no tiling field.
        if !place.contains('.') || place.contains(".#") || self.store.contains_key(place) {
            return None;
        }
        if let Some(name) = state.params.get(place) {
            return Some(Value::Sym(ast::Expr::name(name, self.range(node))));
        }
        // A member with a default initializer (`uint16_t m = 32;`) has its value. A
        // class constant is the same in every state: kept out of the store, where the
        // merge after a loop would take its first read inside the loop for a change.
        if let Some(value) = self.field_default(place) {
            if !self.is_class_constant(place) {
                self.store.insert(place.clone(), Value::Int(value));
            }
            return Some(Value::Int(value));
        }
        if let Some(value) = self.class_constant(place) {
            return Some(value);
        }
        // A member of a type other than an integer (a queue, a tensor, a parameter
        // struct) is no tiling value.
        if let Some(declared) = self.declared_type(place)
            && (super::expr::type_size(&declared).is_none() && self.type_size_of(&declared).is_none()
                || ["float", "double", "half", "bfloat16"]
                    .iter()
                    .any(|t| declared.contains(t)))
        {
            return None;
        }
        let name = self.object_name(place);
        let span = self.range(node);
        self.declare_param(&name, 0, None, span.clone());
        if let Some(state) = self.aicore.as_mut() {
            state.params.insert(place.clone(), name.clone());
        }
        let value = Value::Sym(ast::Expr::name(&name, span));
        self.store.insert(place.clone(), value.clone());
        Some(value)
    }

    /// A member assigned a tensor of the body block (`src = ub.Get<half>()` under `if
    /// ASCEND_IS_AIV` in `Init`) holds it on every path.
    pub(super) fn keep_declared(&mut self, place: &Place, value: &Value) {
        let Some(state) = self.aicore.as_mut() else { return };
        let name = match value {
            Value::Buffer { name, .. } | Value::SymBuffer { name, .. } => name.as_str(),
            // An event id `AllocEventID` gave (`pingId_ = pipe.AllocEventID<...>()`).
            Value::Sym(ast::Expr {
                kind: ast::ExprKind::Name(path),
                ..
            }) => path.text.as_str(),
            _ => return,
        };
        if place.contains('.') && state.hoisted.contains(name) {
            state.declared.insert(place.clone(), value.clone());
        }
    }

    /// `EVENT_ID0` .. `EVENT_ID7`: the event ids; a value template parameter of the
    /// kernel class (`BUFFER_NUM` of `KernelAdd<2>`): its argument.
    pub(super) fn aicore_constant(&mut self, name: &str) -> Option<Value> {
        let bound = self.aicore.as_ref()?.type_args.get(name).cloned();
        if let Some(bound) = bound {
            return super::expr::parse_int(&bound)
                .or_else(|| self.named_constant(&bound))
                .map(Value::Int)
                .or(Some(Value::Unknown));
        }
        let id = name
            .rsplit("::")
            .next()?
            .strip_prefix("EVENT_ID")?
            .parse::<i64>()
            .ok()?;
        Some(Value::Int(id))
    }

    fn defines_function(&self, name: &str) -> bool {
        self.index.lookup_from(self.scope_unit(), name).next().is_some()
    }

    /// `DivCeil(a, b)`, `AlignUp(a, b)`, `Min(a, b)` of the library on integers: their
    /// value, symbolic where the arguments are. `None` where an argument is a tensor
    /// (`Min(dst, src0, src1, n)` is the vector instruction).
    fn integer_helper(&mut self, node: Node<'u>, name: &str, args: &[Node<'u>]) -> Option<Value> {
        let span = self.range(node);
        let values: Vec<Value> = args.iter().map(|a| self.eval(*a)).collect();
        let [a, b] = values.as_slice() else { return None };
        if self.is_tensor(a) || self.is_gm(a) {
            return None;
        }
        if let (Value::Int(a), Value::Int(b)) = (a, b) {
            let (a, b) = (*a, *b);
            let ceil = |a: i64, b: i64| (b != 0).then(|| a.checked_add(b - 1).map(|s| s / b)).flatten();
            let value = match name {
                "DivCeil" | "CeilDiv" | "CeilDivision" | "Ceil" => ceil(a, b),
                "AlignUp" | "CeilAlign" | "Align" => ceil(a, b).and_then(|q| q.checked_mul(b)),
                "AlignDown" | "FloorAlign" => (b != 0).then(|| a / b * b),
                "Min" | "min" => Some(a.min(b)),
                _ => Some(a.max(b)),
            };
            return Some(value.map_or(Value::Unknown, Value::Int));
        }
        let (Some(a), Some(b)) = (
            super::expr::symbolic(a, span.clone()),
            super::expr::symbolic(b, span.clone()),
        ) else {
            return Some(Value::Unknown);
        };
        use ast::BinaryOp::{Add, Div, Gt, Lt, Mul, Sub};
        let one = ast::Expr::int(1, span.clone());
        let ceil = ast_binary(
            Div,
            ast_binary(Sub, ast_binary(Add, a.clone(), b.clone()), one),
            b.clone(),
        );
        let expr = match name {
            "DivCeil" | "CeilDiv" | "CeilDivision" | "Ceil" => ceil,
            "AlignUp" | "CeilAlign" | "Align" => ast_binary(Mul, ceil, b),
            "AlignDown" | "FloorAlign" => ast_binary(Mul, ast_binary(Div, a, b.clone()), b),
            _ => {
                let less = if name.eq_ignore_ascii_case("min") { Lt } else { Gt };
                ast::Expr {
                    kind: ast::ExprKind::Cond {
                        cond: Box::new(ast_binary(less, a.clone(), b.clone())),
                        then: Box::new(a),
                        otherwise: Box::new(b),
                    },
                    span,
                }
            }
        };
        Some(Value::Sym(expr))
    }

    /// Whether the call names a method of a class the files define (on its object, or
    /// unqualified inside one of its methods), which the walk inlines.
    fn is_own_method(&mut self, function: Node<'u>, simple: &str) -> bool {
        let class = match function.kind() {
            "field_expression" => {
                let Some(base) = function.field_child("argument") else {
                    return false;
                };
                let arrow = function.field_child("operator").is_some_and(|op| self.text(op) == "->");
                let place = if arrow || base.kind() == "this" {
                    match self.eval(base) {
                        Value::Ref(place) => Some(place),
                        _ => None,
                    }
                } else {
                    self.place_of(base)
                };
                match place.and_then(|p| self.store.get(&format!("{p}.#class")).cloned()) {
                    Some(Value::Str(class)) => Some(class),
                    _ if base.kind() == "this" => self.frame().class.clone(),
                    _ => None,
                }
            }
            "identifier" => self.frame().class.clone(),
            _ => None,
        };
        let Some(class) = class else { return false };
        self.index
            .lookup_from(self.scope_unit(), simple)
            .any(|def| def.class.as_deref() == Some(class.as_str()))
    }

    /// Whether the files define a function `name` whose arguments are no tensors: a
    /// helper of the same name as a vector instruction (`Min(a, b)` on integers).
    fn defines_helper(&mut self, name: &str, args: &[Node<'u>]) -> bool {
        if self.index.lookup_from(self.scope_unit(), name).next().is_none() {
            return false;
        }
        let values: Vec<Value> = args.iter().map(|a| self.eval(*a)).collect();
        !values.iter().any(|v| self.is_tensor(v) || self.is_gm(v))
    }

    /// Ascend 950's register-based vector functions (`MicroAPI::LoadAlign`, `Add` on
    /// registers): registers are no memory, so only the loads and stores of the
    /// unified buffer matter, and those are not followed yet (noted).
    fn micro_api(&mut self, node: Node<'u>, simple: &str, args: &[Node<'u>]) -> Value {
        for arg in args {
            self.eval(*arg);
        }
        if simple.starts_with("Load") || simple.starts_with("Store") || simple.starts_with("DataCopy") {
            self.unresolved(
                node,
                format!("`MicroAPI::{simple}`: a register load or store of the unified buffer (Ascend 950 vector function) is not followed"),
            );
        }
        Value::Unknown
    }

    /// `*(__gm__ int32_t *)p`, `p[i] = v` in kernel code: a scalar read or write.
    pub(super) fn scalar_memory_access(&mut self, node: Node<'u>, value: &Value, write: bool) {
        let span = self.range(node);
        let Some(access) = self.memory(value, Some(Value::Int(1)), span) else {
            return;
        };
        let call = if write {
            "AscendC::SetValue"
        } else {
            "AscendC::GetValue"
        };
        self.emit_call(node, call, None, vec![access]);
    }

    /// An argument declared as a vector-function register (`RegTensor<float> x`,
    /// `MaskReg m`), a local or a parameter.
    fn is_register(&mut self, arg: Node<'u>) -> bool {
        if !matches!(arg.kind(), "identifier" | "field_expression") {
            return false;
        }
        let Some(place) = self.place_of(arg) else {
            return false;
        };
        let declared = match self.store.get(&format!("{place}.#type")) {
            Some(Value::Str(text)) => Some(text.clone()),
            _ if place.contains('.') => self.declared_type(&place),
            _ => None,
        };
        declared.is_some_and(|t| t.contains("RegTensor") || t.contains("MaskReg") || t.contains("AddrReg"))
    }

    fn is_tensor(&self, value: &Value) -> bool {
        let Some(state) = self.aicore.as_ref() else {
            return false;
        };
        match value {
            Value::Buffer { name, .. } | Value::SymBuffer { name, .. } => state.tensors.contains(name),
            _ => false,
        }
    }

    fn is_gm(&self, value: &Value) -> bool {
        let Some(state) = self.aicore.as_ref() else {
            return false;
        };
        match value {
            Value::Buffer { name, .. } | Value::SymBuffer { name, .. } => state.gm.contains(name),
            _ => false,
        }
    }

    fn emit_call(&mut self, node: Node<'u>, name: &str, generics: Option<Vec<ast::Expr>>, args: Vec<ast::Expr>) {
        let mut call = self.ast_call(name, node, args.into_iter().map(arg).collect(), Vec::new());
        call.generics = generics;
        self.api_calls += 1;
        let span = call.span.clone();
        self.emit(ast::StmtKind::Call(call), span);
    }

    /// The output block a declaration with these arguments goes to, if not the current
    /// one: `InitBuffer` under `if ASCEND_IS_AIV` in `Init` declares the queue for the
    /// `Process` code after it, which a `.sync` block scope would hide. Only where its
    /// arguments name nothing but top-level parameters and buffers declared there.
    fn hoisted_to(&self, callee: &str, args: &[ast::Expr]) -> Option<usize> {
        let state = self.aicore.as_ref()?;
        let here = self.blocks.len() - 1;
        let target = match callee {
            "TQue" | "TQueBind" | "TBuf" | "TBuf::Get" => state.body_block,
            // An event id only where the kernel sets up (`Init`, called from outside its
            // class), outside loops, and only as far as the block `Init` was called in:
            // the ids of one TilingKey's object are not allocated under another key,
            // nor those of a helper `InitAndCopy` that `Process` calls on some cores.
            "TPipe::AllocEventID" if state.loop_vars.is_empty() && self.in_setup() => self.frame().call_block,
            _ => return None,
        };
        (here > target && self.names_are_top_level(args)).then_some(target)
    }

    /// Whether the walk is in a kernel class's `Init`, called from outside the class.
    fn in_setup(&self) -> bool {
        let frame = self.frame();
        let is_init = frame
            .function
            .as_deref()
            .is_some_and(|f| f.rsplit("::").next().unwrap_or(f).starts_with("Init"));
        let caller = self.frames.len().checked_sub(2).map(|at| &self.frames[at]);
        is_init && caller.is_some_and(|caller| caller.class.is_none() || caller.class != frame.class)
    }

    fn emit_let(
        &mut self,
        node: Node<'u>,
        bound: &str,
        name: &str,
        generics: Option<Vec<ast::Expr>>,
        args: Vec<ast::Expr>,
    ) {
        let hoist = self.hoisted_to(name, &args);
        let mut call = self.ast_call(name, node, args.into_iter().map(arg).collect(), Vec::new());
        call.generics = generics;
        self.api_calls += 1;
        let span = call.span.clone();
        let depth = self.blocks.len() - 1;
        if let Some(state) = self.aicore.as_mut()
            && matches!(name, "TQue" | "TQueBind" | "TBuf" | "TBuf::Get" | "TPipe::AllocEventID")
            && (hoist.is_some() || depth == state.body_block)
        {
            state.hoisted.insert(bound.to_string());
        }
        let kind = ast::StmtKind::Let {
            pattern: ast::Pattern::Name(ast::Ident {
                name: bound.to_string(),
                span: span.clone(),
            }),
            value: ast::Expr {
                span: span.clone(),
                kind: ast::ExprKind::Call(Box::new(call)),
            },
        };
        match hoist {
            Some(at) => self.blocks[at].push(ast::Stmt { kind, span }),
            None => self.emit(kind, span),
        }
    }

    /// The variable a call's result goes to (`LocalTensor<T> x = q.AllocTensor<T>()`,
    /// `x = ...`, through casts), for the `.sync` name.
    fn bound_name(&self, node: Node<'u>, fallback: &str) -> String {
        let mut at = node;
        for _ in 0..6 {
            let Some(parent) = at.parent() else { break };
            match parent.kind() {
                "init_declarator" => {
                    if let Some(declarator) = parent.field_child("declarator") {
                        return self.text(declarator).trim_start_matches(['*', '&', ' ']).to_string();
                    }
                }
                "assignment_expression" => {
                    if let Some(left) = parent.field_child("left") {
                        let text = self.text(left);
                        return text.rsplit(['.', '>']).next().unwrap_or(text).to_string();
                    }
                }
                "argument_list" | "call_expression" | "cast_expression" | "parenthesized_expression" => {}
                _ => break,
            }
            at = parent;
        }
        fallback.to_string()
    }

    /// `pipe.InitBuffer(que, depth, len)` / `pipe.InitBuffer(buf, len)`: the queue or
    /// buffer, as the position its declared type names.
    fn init_buffer(&mut self, node: Node<'u>, args: &[Node<'u>]) -> Value {
        let Some(target) = args.first().copied() else {
            return Value::Unknown;
        };
        let Some(place) = self.place_of(target) else {
            self.unresolved(node, "`InitBuffer` of a queue this reader cannot follow: not followed");
            return Value::Unknown;
        };
        let Some(type_text) = self.declared_type(&place) else {
            let text = self.text(target).to_string();
            self.unresolved(
                node,
                format!(
                    "`InitBuffer`: the declaration of `{text}` (its `TQue`/`TBuf` type) is not found: not followed"
                ),
            );
            return Value::Unknown;
        };
        let Some(shape) = buffer_shape(&type_text) else {
            self.unresolved(
                node,
                format!(
                    "`InitBuffer` of a `{}`: a queue type this reader does not know",
                    type_text.trim()
                ),
            );
            return Value::Unknown;
        };
        let (depth, len) = match (shape.kind, args) {
            (BufferKind::Buf, [_, len, ..]) => (None, *len),
            (_, [_, depth, len, ..]) => (Some(*depth), *len),
            _ => return Value::Unknown,
        };
        let depth = match depth {
            None => None,
            Some(depth) => match self.eval(depth).int() {
                Some(depth) => Some(depth),
                None => {
                    self.unresolved(
                        node,
                        "`InitBuffer`: the queue depth has no value this reader can follow: taken as 1",
                    );
                    Some(1)
                }
            },
        };
        let len_value = self.eval(len);
        let member = place.rsplit(['.', '#']).next().unwrap_or(&place).to_string();
        let wanted = if place.contains('.') {
            member
        } else {
            self.text(target).to_string()
        };
        let len = match super::expr::symbolic(&len_value, self.range(len)) {
            Some(len) => len,
            // A length computed from what the files do not say (a type trait, a
            // helper of the library): a parameter of its own, any size.
            None => match self.length_param(&place, &wanted, len) {
                Some(Value::Sym(len)) => len,
                _ => return Value::Unknown,
            },
        };
        let name = self.object_name(&wanted);
        let span = self.range(node);
        let position = |p: Position| ast::Expr::name(p.name(), span.clone());
        let (callee, generics, call_args) = match shape.kind {
            BufferKind::Que => (
                "TQue",
                vec![position(shape.src)],
                vec![ast::Expr::int(depth.unwrap_or(1), span.clone()), len],
            ),
            BufferKind::Bind => (
                "TQueBind",
                vec![position(shape.src), position(shape.dst)],
                vec![ast::Expr::int(depth.unwrap_or(1), span.clone()), len],
            ),
            BufferKind::Buf => ("TBuf", vec![position(shape.src)], vec![len]),
        };
        self.emit_let(node, &name, callee, Some(generics), call_args);
        if let Some(state) = self.aicore.as_mut() {
            state.buffers.insert(name.clone(), shape.src);
            note_position(state, shape.src);
            note_position(state, shape.dst);
        }
        if let Some(state) = self.aicore.as_mut()
            && state.hoisted.contains(&name)
        {
            state.declared.insert(place.clone(), Value::Handle(name.clone()));
        }
        self.store.insert(place, Value::Handle(name));
        Value::Int(0)
    }

    /// A queue or buffer the receiver names, or a note.
    fn buffer_of(&mut self, node: Node<'u>, receiver: Node<'u>, call: &str) -> Option<String> {
        let value = self.eval(receiver);
        if let Value::Handle(name) = &value
            && self.aicore.as_ref().is_some_and(|s| s.buffers.contains_key(name))
        {
            return Some(name.clone());
        }
        let text = self.text(receiver).to_string();
        self.unresolved(
            node,
            format!("`{text}.{call}`: `{text}` is no queue or buffer an `InitBuffer` this reader followed gave memory to: not followed"),
        );
        None
    }

    /// `q.AllocTensor<T>()`, `q.DeQue<T>()`, `buf.Get<T>()`: a new local tensor.
    /// `buf.GetWithOffset<T>(count, offset)`: the buffer from byte `offset`.
    fn take_tensor(
        &mut self,
        node: Node<'u>,
        function: Node<'u>,
        call: &str,
        receiver: Node<'u>,
        args: &[Node<'u>],
    ) -> Option<Value> {
        // `Get` on something else than a buffer (a tiling getter) is no tensor.
        if call.starts_with("Get") {
            let value = self.eval(receiver);
            if !matches!(&value, Value::Handle(name) if self.aicore.as_ref().is_some_and(|s| s.buffers.contains_key(name)))
            {
                return None;
            }
        }
        let buffer = match self.buffer_of(node, receiver, call) {
            Some(buffer) => buffer,
            None => return Some(Value::Unknown),
        };
        let wanted = self.bound_name(node, "tensor");
        let name = self.object_name(&wanted);
        let callee = match call {
            "AllocTensor" => "TQue::AllocTensor",
            "DeQue" => "TQue::DeQue",
            _ => "TBuf::Get",
        };
        let span = self.range(receiver);
        self.emit_let(node, &name, callee, None, vec![ast::Expr::name(&buffer, span)]);
        let scale = match self.template_type_scale(function, node) {
            Scale::Bytes(0) => self.declared_tensor_scale(node),
            known => known,
        };
        if let Some(state) = self.aicore.as_mut() {
            state.tensors.insert(name.clone());
        }
        let tensor = Value::Buffer {
            name,
            offset: 0,
            scale: scale.clone(),
        };
        if call == "GetWithOffset" {
            let offset = args.get(1).map_or(Value::Int(0), |a| self.eval(*a));
            let span = self.range(node);
            return Some(match (&offset, scale) {
                // The offset counts bytes (known even where the element size is not):
                // stepping in bytes, then in elements again.
                (Value::Int(_) | Value::Sym(_), scale) => {
                    match super::expr::advance_by(&with_scale(&tensor, Scale::Bytes(1)), &offset, span) {
                        Value::Unknown => anywhere_in(&tensor),
                        moved => with_scale(&moved, scale),
                    }
                }
                // Somewhere in the buffer, no byte of it certain (`x[_.._]`).
                _ => anywhere_in(&tensor),
            });
        }
        Some(tensor)
    }

    /// `q.EnQue(t)`, `q.FreeTensor(t)`.
    fn give_tensor(&mut self, node: Node<'u>, call: &str, receiver: Node<'u>, args: &[Node<'u>]) -> Option<Value> {
        let buffer = self.buffer_of(node, receiver, call)?;
        let tensor = args.first().map(|a| self.eval(*a));
        let Some(Value::Buffer { name, .. } | Value::SymBuffer { name, .. }) = tensor.filter(|t| self.is_tensor(t))
        else {
            self.unresolved(
                node,
                format!("`{call}` of a tensor this reader cannot follow: not followed"),
            );
            return Some(Value::Unknown);
        };
        let span = self.range(node);
        let callee = if call == "EnQue" {
            "TQue::EnQue"
        } else {
            "TQue::FreeTensor"
        };
        self.emit_call(
            node,
            callee,
            None,
            vec![ast::Expr::name(&buffer, span.clone()), ast::Expr::name(&name, span)],
        );
        Some(Value::Int(0))
    }

    /// `SetFlag<HardEvent::MTE2_V>(id)`, `WaitFlag<...>(id)`.
    fn flag(&mut self, node: Node<'u>, function: Node<'u>, call: &str, args: &[Node<'u>]) -> Value {
        let event = self.template_args(function).first().and_then(|t| hard_event(t));
        let Some(event) = event.or_else(|| self.que_sync_event(function)) else {
            self.unresolved(
                node,
                format!("`{call}`: its `HardEvent` is not one this reader knows: not followed"),
            );
            return Value::Unknown;
        };
        self.emit_flag(node, call, event, args.first().copied());
        Value::Int(0)
    }

    /// `TQueSync<PIPE_V, PIPE_MTE3> sync; sync.SetFlag(id)`: the event its type names.
    fn que_sync_event(&mut self, function: Node<'u>) -> Option<HardEvent> {
        let receiver = function.field_child("argument")?;
        let place = self.place_of(receiver)?;
        let declared = self.declared_type(&place)?;
        let args = declared.split_once("TQueSync<")?.1.split('>').next()?;
        let pipes: Vec<&str> = args.split(',').map(str::trim).collect();
        let [src, dst] = pipes.as_slice() else { return None };
        HardEvent::from_name(&format!("{}_{}", short_pipe(src), short_pipe(dst)))
    }

    /// `set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0)`, `wait_flag(...)`: the same as
    /// `SetFlag<HardEvent::MTE2_V>(EVENT_ID0)`.
    fn low_level_flag(&mut self, node: Node<'u>, call: &str, args: &[Node<'u>]) -> Value {
        let event = match args {
            [src, dst, ..] => {
                let name = format!("{}_{}", short_pipe(self.text(*src)), short_pipe(self.text(*dst)));
                HardEvent::from_name(&name)
            }
            _ => None,
        };
        let Some(event) = event else {
            self.unresolved(
                node,
                format!("`{call}`: its pipes are not ones this reader knows: not followed"),
            );
            return Value::Unknown;
        };
        let callee = if call == "set_flag" { "SetFlag" } else { "WaitFlag" };
        self.emit_flag(node, callee, event, args.get(2).copied());
        Value::Int(0)
    }

    fn emit_flag(&mut self, node: Node<'u>, call: &str, event: HardEvent, id: Option<Node<'u>>) {
        let Some(id) = self.id_expr(node, call, id) else { return };
        let span = self.range(node);
        self.emit_call(
            node,
            &format!("AscendC::{call}"),
            Some(vec![ast::Expr::name(&event.name(), span)]),
            vec![id],
        );
    }

    /// An event or flag id as `.sync`, or a note.
    fn id_expr(&mut self, node: Node<'u>, call: &str, id: Option<Node<'u>>) -> Option<ast::Expr> {
        let value = id.map_or(Value::Int(0), |id| self.eval(id));
        let expr = super::expr::symbolic(&value, id.map_or(self.range(node), |id| self.range(id)));
        if expr.is_none() {
            let text = id.map_or("", |id| self.text(id)).to_string();
            self.unresolved(
                node,
                format!("`{call}`: its id `{text}` has no value this reader can follow: not followed"),
            );
        }
        expr
    }

    /// `PipeBarrier<PIPE_V>()`, `pipe_barrier(PIPE_V)`.
    fn barrier(&mut self, node: Node<'u>, function: Node<'u>, args: &[Node<'u>]) -> Value {
        let text = match self.template_args(function).first() {
            Some(text) => text.clone(),
            None => args.first().map_or(String::new(), |a| self.text(*a).to_string()),
        };
        let name = text.rsplit("::").next().unwrap_or("").trim().to_string();
        if Pipe::from_name(&name).is_none() {
            self.unresolved(
                node,
                format!("`PipeBarrier` of `{text}`: a pipe this reader does not know: not followed"),
            );
            return Value::Unknown;
        }
        let span = self.range(node);
        self.emit_call(
            node,
            "AscendC::PipeBarrier",
            Some(vec![ast::Expr::name(&name, span)]),
            Vec::new(),
        );
        Value::Int(0)
    }

    /// `pipe.AllocEventID<HardEvent::V_MTE3>()`, `GetTPipePtr()->FetchEventID(
    /// HardEvent::V_MTE3)`, `pipe.ReleaseEventID<HardEvent::V_MTE3>(id)`.
    fn event_id(&mut self, node: Node<'u>, function: Node<'u>, call: &str, args: &[Node<'u>]) -> Value {
        let from_template = self.template_args(function).first().and_then(|t| hard_event(t));
        let from_arg = || args.first().and_then(|a| hard_event(self.text(*a)));
        let Some(event) = from_template.or_else(from_arg) else {
            self.unresolved(
                node,
                format!("`{call}`: its `HardEvent` is not one this reader knows: not followed"),
            );
            return Value::Unknown;
        };
        let span = self.range(node);
        let generics = Some(vec![ast::Expr::name(&event.name(), span.clone())]);
        if call == "ReleaseEventID" {
            let id = args.iter().find(|a| hard_event(self.text(**a)).is_none()).copied();
            if let Some(id) = self.id_expr(node, call, id) {
                self.emit_call(node, "TPipe::ReleaseEventID", generics, vec![id]);
            }
            return Value::Int(0);
        }
        let wanted = self.bound_name(node, "eventId");
        let name = self.object_name(&wanted);
        self.emit_let(node, &name, &format!("TPipe::{call}"), generics, Vec::new());
        Value::Sym(ast::Expr::name(&name, span))
    }

    /// `CrossCoreSetFlag<mode, PIPE_X>(flag)`, `CrossCoreWaitFlag(flag)`.
    fn cross_core(&mut self, node: Node<'u>, function: Node<'u>, call: &str, args: &[Node<'u>]) -> Value {
        let generics = self.template_args(function);
        let mut out = Vec::new();
        let span = self.range(node);
        if let Some(mode) = generics.first() {
            let Some(mode) = super::expr::parse_int(mode.trim()).or_else(|| self.named_constant(mode.trim())) else {
                self.unresolved(
                    node,
                    format!("`{call}`: its mode `{mode}` has no value this reader can follow: not followed"),
                );
                return Value::Unknown;
            };
            out.push(ast::Expr::int(mode, span.clone()));
        }
        if let Some(pipe) = generics.get(1) {
            let pipe = pipe.rsplit("::").next().unwrap_or("").trim().to_string();
            if Pipe::from_name(&pipe).is_none() {
                self.unresolved(
                    node,
                    format!("`{call}`: its pipe `{pipe}` is not one this reader knows: not followed"),
                );
                return Value::Unknown;
            }
            out.push(ast::Expr::name(&pipe, span.clone()));
        }
        if call == "CrossCoreSetFlag" && out.len() < 2 {
            self.unresolved(node, "`CrossCoreSetFlag` without its mode and pipe: not followed");
            return Value::Unknown;
        }
        let Some(flag) = self.id_expr(node, call, args.first().copied()) else {
            return Value::Unknown;
        };
        self.emit_call(
            node,
            &format!("AscendC::{call}"),
            (!out.is_empty()).then_some(out),
            vec![flag],
        );
        Value::Int(0)
    }

    /// `SyncAll()` / `SyncAll<false>()` (hard) or `SyncAll(gmWorkspace, ubWorkspace)`.
    fn sync_all(&mut self, node: Node<'u>, function: Node<'u>, args: &[Node<'u>]) -> Value {
        let span = self.range(node);
        if let Some(workspace) = args.first() {
            let value = self.eval(*workspace);
            let Some(access) = self.memory(&value, None, self.range(*workspace)) else {
                self.unresolved(
                    node,
                    "`SyncAll`: its GM workspace is not memory this reader can follow: not followed",
                );
                return Value::Unknown;
            };
            let mut rest = Vec::new();
            if let Some(ub) = args.get(1) {
                let value = self.eval(*ub);
                if let Some(ub) = self.memory(&value, None, self.range(*ub)) {
                    rest.push(ub);
                }
            }
            let mut call_args = vec![access];
            call_args.extend(rest);
            self.emit_call(node, "AscendC::SyncAll", None, call_args);
            return Value::Int(0);
        }
        let generics = match self.template_args(function).first().map(|t| t.trim().to_string()) {
            Some(text) => {
                let value = match text.as_str() {
                    "true" => Some(1),
                    "false" => Some(0),
                    other => self.named_constant(other),
                };
                match value {
                    Some(value) => Some(vec![ast::Expr::int(value, span.clone())]),
                    None => {
                        self.unresolved(
                            node,
                            format!("`SyncAll<{text}>`: a value this reader cannot follow: not followed"),
                        );
                        return Value::Unknown;
                    }
                }
            }
            None => None,
        };
        self.emit_call(node, "AscendC::SyncAll", generics, Vec::new());
        Value::Int(0)
    }

    /// `xGm.SetGlobalBuffer((__gm__ T *)x + off, len)`: the global tensor is the
    /// parameter from that element, stepping by the tensor's element size.
    fn set_global_buffer(&mut self, function: Node<'u>, args: &[Node<'u>]) -> Value {
        let Some(base) = function.field_child("argument") else {
            return Value::Unknown;
        };
        let Some(place) = self.place_of(base) else {
            return Value::Unknown;
        };
        let mut value = args.first().map_or(Value::Unknown, |arg| self.eval(*arg));
        let declared = self.declared_type(&place).and_then(|t| self.element_size(&t));
        // A pointer of unknown steps (`(__gm__ T *)x + off`) keeps them: its offset is
        // not known in bytes.
        let unknown_steps = matches!(
            value,
            Value::Buffer {
                scale: Scale::Bytes(0),
                ..
            } | Value::SymBuffer {
                scale: Scale::Bytes(0),
                ..
            }
        );
        if let Some(size) = declared.filter(|_| !unknown_steps) {
            value = with_scale(&value, Scale::Bytes(size));
        }
        // Set on one path of a branch (after an early return on the others), it is
        // the parameter's memory wherever the tensor is used.
        if let Value::SymBuffer { offset, .. } = &value
            && self.names_are_top_level(std::slice::from_ref(offset))
            && let Some(state) = self.aicore.as_mut()
        {
            state.declared.insert(place.clone(), value.clone());
        }
        if let (Value::Buffer { .. }, Some(state)) = (&value, self.aicore.as_mut()) {
            state.declared.insert(place.clone(), value.clone());
        }
        self.store.insert(place, value);
        Value::Int(0)
    }

    /// `sizeof(T)` of a type the files do not size (`DTYPE_X` from the build): a
    /// top-level `param sizeof_T in 1..=8;`, so that lengths stay symbolic.
    pub(super) fn sizeof_param(&mut self, type_text: &str, node: Node<'u>) -> Option<Value> {
        let state = self.aicore.as_ref()?;
        let text = type_text.trim();
        let bound = state.type_args.get(text).map_or(text, String::as_str).to_string();
        let key = format!("sizeof({bound})");
        if let Some(name) = state.params.get(&key) {
            return Some(Value::Sym(ast::Expr::name(name, self.range(node))));
        }
        let name = self.object_name(&format!("sizeof_{bound}"));
        let span = self.range(node);
        self.declare_param(&name, 1, Some(8), span.clone());
        if let Some(state) = self.aicore.as_mut() {
            state.params.insert(key, name.clone());
        }
        Some(Value::Sym(ast::Expr::name(&name, span)))
    }

    /// The byte length of a buffer whose `InitBuffer` length has no value: `param
    /// NAME_bytes in 1..;`, the same for the same buffer.
    fn length_param(&mut self, place: &Place, wanted: &str, node: Node<'u>) -> Option<Value> {
        let key = format!("{place}.#bytes");
        if let Some(name) = self.aicore.as_ref()?.params.get(&key) {
            return Some(Value::Sym(ast::Expr::name(name, self.range(node))));
        }
        let name = self.object_name(&format!("{wanted}_bytes"));
        let span = self.range(node);
        self.declare_param(&name, 1, None, span.clone());
        if let Some(state) = self.aicore.as_mut() {
            state.params.insert(key, name.clone());
        }
        Some(Value::Sym(ast::Expr::name(&name, span)))
    }

    /// Kernel code: an integer the arms of a branch on a symbolic condition leave with
    /// different values is that condition's choice between them (`blockLen_` after an
    /// early return of `Init` is `cond ? 0 : len`), not unknown: tile loops over it
    /// stay bounded.
    pub(super) fn merge_as_conditions(
        &mut self,
        before: &super::store::Store,
        arms: &[&super::store::Store],
        conditions: &[Option<ast::Expr>],
    ) {
        let mut places: Vec<Place> = arms.iter().flat_map(|arm| arm.changed_places(before)).collect();
        places.sort();
        places.dedup();
        for place in places {
            if self.store.get(&place) != Some(&Value::Unknown) || place.contains(".#") {
                continue;
            }
            // An arm that never wrote a member with a default initializer left it there
            // (looked up only then: the lookup reads the class's declarations).
            let mut values: Vec<Option<&Value>> = arms.iter().map(|arm| arm.get(&place)).collect();
            let default = if values.iter().any(Option::is_none) {
                self.field_default(&place).map(Value::Int)
            } else {
                None
            };
            for value in values.iter_mut().filter(|value| value.is_none()) {
                *value = default.as_ref();
            }
            if let Some(chosen) = self.chosen_by_conditions(&values, conditions) {
                self.store.insert(place, chosen);
            }
        }
    }

    /// Kernel code: the value each arm of a branch on `conditions` (the last `None`, the
    /// `else`) gives, as one `cond ? then : otherwise` value; `None` where an arm's value
    /// is no integer expression, or the choice grows too big or names what is out of
    /// scope after the branch (a value named in one arm's block, a fetched event id).
    pub(super) fn chosen_by_conditions(
        &self,
        values: &[Option<&Value>],
        conditions: &[Option<ast::Expr>],
    ) -> Option<Value> {
        if values.len() != conditions.len() || conditions.last().is_none_or(Option::is_some) || values.len() < 2 {
            return None;
        }
        let values: Vec<ast::Expr> = values
            .iter()
            .map(|value| match value {
                Some(Value::Int(v)) => Some(ast::Expr::int(*v, 0..0)),
                Some(Value::Sym(expr)) => Some(expr.clone()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let mut chosen = values.last().cloned()?;
        for (value, cond) in values.iter().zip(conditions).rev().skip(1) {
            let Some(cond) = cond else { continue };
            let span = cond.span.clone();
            chosen = ast::Expr {
                kind: ast::ExprKind::Cond {
                    cond: Box::new(cond.clone()),
                    then: Box::new(value.clone()),
                    otherwise: Box::new(chosen),
                },
                span,
            };
        }
        (expr_size(&chosen, MAX_MERGED_NODES) <= MAX_MERGED_NODES && self.in_scope_everywhere(&chosen))
            .then_some(Value::Sym(chosen))
    }

    /// Whether `expr` names only what is in scope wherever the walk is: top-level
    /// parameters, declarations of the body block, counters of the loops open.
    fn in_scope_everywhere(&self, expr: &ast::Expr) -> bool {
        let Some(state) = self.aicore.as_ref() else {
            return false;
        };
        expr.names().into_iter().all(|name| {
            state.params.values().any(|p| p == name)
                || state.hoisted.contains(name)
                || state.loop_vars.iter().any(|v| v == name)
                || matches!(name, "ASCEND_IS_AIV" | "ASCEND_IS_AIC")
        })
    }

    /// Whether `exprs` name nothing but top-level parameters and body-block buffers.
    fn names_are_top_level(&self, exprs: &[ast::Expr]) -> bool {
        let Some(state) = self.aicore.as_ref() else {
            return false;
        };
        exprs
            .iter()
            .flat_map(|a| a.names())
            .all(|name| state.params.values().any(|p| p == name) || state.hoisted.contains(name))
    }

    /// `t.GetValue(i)` / `t.SetValue(i, v)`: a scalar access of element `i`.
    fn scalar_access(&mut self, node: Node<'u>, call: &str, receiver: Node<'u>, args: &[Node<'u>]) -> Option<Value> {
        let tensor = self.eval(receiver);
        if !self.is_tensor(&tensor) {
            return None;
        }
        for arg in args.iter().skip(1) {
            self.eval(*arg);
        }
        let index = args.first().map_or(Value::Unknown, |a| self.eval(*a));
        let span = self.range(node);
        let element = super::expr::advance_by(&tensor, &index, span.clone());
        let access = self
            .memory(&element, Some(Value::Int(1)), span)
            .or_else(|| self.memory(&tensor, None, self.range(receiver)))?;
        self.emit_call(node, &format!("AscendC::{call}"), None, vec![access]);
        Some(Value::Unknown)
    }

    /// `DataCopy(dst, src, count)`, `DataCopyPad`, `LoadData`, `Fixpipe`: two memories.
    fn copy(&mut self, node: Node<'u>, call: &str, args: &[Node<'u>]) -> Value {
        let values: Vec<Value> = args.iter().map(|a| self.eval(*a)).collect();
        let count = (call == "DataCopy" && args.len() == 3)
            .then(|| values.get(2).cloned())
            .flatten()
            .filter(|count| matches!(count, Value::Int(_) | Value::Sym(_)));
        // `DataCopyPad(dst, src, {blockCount, blockLen (bytes), ...})`, `DataCopy(dst,
        // src, {blockCount, blockLen (32-byte blocks), ...})`: the bytes, where the blocks
        // follow each other.
        let bytes = match (call, args.get(2)) {
            ("DataCopyPad" | "DataCopy", Some(params)) if count.is_none() => {
                let unit = if call == "DataCopy" { 32 } else { 1 };
                self.copy_params_bytes(*params, unit)
            }
            _ => None,
        };
        let mut accesses = Vec::new();
        for (position, value) in values.iter().take(2).enumerate() {
            let access = match &bytes {
                Some(bytes) => self.memory_bytes(value, bytes.clone(), self.range(args[position])),
                None => self.memory(value, count.clone(), self.range(args[position])),
            };
            match access {
                Some(access) => accesses.push(access),
                None => {
                    let text = self.text(args[position]).to_string();
                    self.unresolved(
                        node,
                        format!("`{call}`: `{text}` is no tensor this reader can follow: not followed"),
                    );
                    return Value::Unknown;
                }
            }
        }
        if accesses.len() < 2 {
            return Value::Unknown;
        }
        if let Some(state) = self.aicore.as_mut() {
            match call {
                "LoadData" | "Fixpipe" => state.cube = true,
                _ => {}
            }
        }
        self.emit_call(node, &format!("AscendC::{call}"), None, accesses);
        Value::Int(0)
    }

    /// `Mmad(c, a, b, params)` and the vector instructions: every tensor argument, the
    /// first written.
    fn instruction(&mut self, node: Node<'u>, call: &str, pipe: Pipe, args: &[Node<'u>]) -> Value {
        let values: Vec<Value> = args.iter().map(|a| self.eval(*a)).collect();
        let tensors = values.iter().take_while(|v| self.is_tensor(v) || self.is_gm(v)).count();
        if tensors == 0 {
            self.unresolved(
                node,
                format!("`{call}`: its destination is no tensor this reader can follow: not followed"),
            );
            return Value::Unknown;
        }
        let count = (pipe == Pipe::V && counts_every_tensor(call) && values.len() > tensors)
            .then(|| values.last().cloned())
            .flatten()
            .filter(|count| matches!(count, Value::Int(_) | Value::Sym(_)));
        let mut accesses = Vec::new();
        for (position, (value, arg)) in values.iter().zip(args).take(tensors).enumerate() {
            let span = self.range(*arg);
            let access = match &count {
                // A comparison writes one bit per element: `count / 8` bytes of mask.
                Some(count) if position == 0 && is_comparison(call) => super::expr::symbolic(count, span.clone())
                    .and_then(|count| {
                        let bits = ast_binary(ast::BinaryOp::Add, count, ast::Expr::int(7, span.clone()));
                        let bytes = ast_binary(ast::BinaryOp::Div, bits, ast::Expr::int(8, span.clone()));
                        self.memory_bytes(value, bytes, span.clone())
                    }),
                _ => self.memory(value, count.clone(), span),
            };
            accesses.extend(access);
        }
        // Tensors after scalar arguments (`Select(dst, mask, src0, src1, ...)`).
        for (value, arg) in values.iter().zip(args).skip(tensors) {
            if self.is_tensor(value)
                && let Some(access) = self.memory(value, None, self.range(*arg))
            {
                accesses.push(access);
            }
        }
        if let Some(state) = self.aicore.as_mut() {
            if pipe == Pipe::M {
                state.cube = true;
            } else {
                state.vector = true;
            }
        }
        self.emit_call(node, &format!("AscendC::{call}"), None, accesses);
        Value::Int(0)
    }

    /// The bytes a copy's `DataCopyParams`/`DataCopyExtParams` move, where its blocks are
    /// known and contiguous (one block, or no strides); `unit` is the size of a
    /// `blockLen` step.
    fn copy_params_bytes(&mut self, params: Node<'u>, unit: i64) -> Option<ast::Expr> {
        let span = self.range(params);
        let fields: Vec<Value> = if params.kind() == "initializer_list" {
            let mut cursor = params.walk();
            let items: Vec<Node<'u>> = params.named_children(&mut cursor).collect();
            items.iter().take(4).map(|item| self.eval(*item)).collect()
        } else {
            let place = self.place_of(params)?;
            ["blockCount", "blockLen", "srcStride", "dstStride"]
                .iter()
                .map(|field| self.load(&format!("{place}.{field}")))
                .collect()
        };
        let [count, len, src, dst] = fields.as_slice() else {
            return None;
        };
        let contiguous = matches!(count, Value::Int(1)) || matches!((src, dst), (Value::Int(0), Value::Int(0)));
        if !contiguous {
            return None;
        }
        let count = super::expr::symbolic(count, span.clone())?;
        let len = super::expr::symbolic(len, span.clone())?;
        let mut bytes = match &count.kind {
            ast::ExprKind::Int(ast::IntLit { value: 1, .. }) => len,
            _ => ast_binary(ast::BinaryOp::Mul, count, len),
        };
        if unit != 1 {
            bytes = ast_binary(ast::BinaryOp::Mul, bytes, ast::Expr::int(unit, span));
        }
        Some(bytes)
    }

    /// A tensor value as `.sync` memory `bytes` long from its offset.
    fn memory_bytes(&self, value: &Value, bytes: ast::Expr, span: std::ops::Range<usize>) -> Option<ast::Expr> {
        match value {
            Value::Buffer { scale, .. } | Value::SymBuffer { scale, .. } if scale.is_known() => {
                self.memory(&with_scale(value, Scale::Bytes(1)), Some(Value::Sym(bytes)), span)
            }
            _ => self.memory(value, None, span),
        }
    }

    /// A tensor value as `.sync` memory: `x`, `x[off..]`, `x[off..off + count * size]`.
    fn memory(&self, value: &Value, count: Option<Value>, span: std::ops::Range<usize>) -> Option<ast::Expr> {
        if !self.is_tensor(value) && !self.is_gm(value) {
            return None;
        }
        let (name, offset, scale) = match value {
            Value::Buffer { name, offset, scale } => (name, ast::Expr::int(*offset, span.clone()), scale),
            Value::SymBuffer { name, offset, scale } => (name, offset.clone(), scale),
            _ => return None,
        };
        let whole = ast::Expr::name(name, span.clone());
        let unknown = || ast::Expr::name(UNKNOWN_END, span.clone());
        let Some(size) = scale.expr(span.clone()) else {
            // An element size the reader does not know: the length is not known, and
            // after an index into it neither is the start (`x[_.._]`).
            let start = if scale.is_lost() { unknown() } else { offset };
            return Some(super::byte_slice(whole, start, unknown(), span));
        };
        let start_is_zero = matches!(offset.kind, ast::ExprKind::Int(ast::IntLit { value: 0, .. }));
        let end = count
            .and_then(|count| super::expr::symbolic(&count, span.clone()))
            .map(|count| {
                let bytes = ast_binary(ast::BinaryOp::Mul, count, size);
                if start_is_zero {
                    bytes
                } else {
                    ast_binary(ast::BinaryOp::Add, offset.clone(), bytes)
                }
            });
        // A length the reader could not compute: `x[a.._]`, certain only at `a`.
        Some(super::byte_slice(whole, offset, end.unwrap_or_else(unknown), span))
    }

    /// The template arguments of a call (`SetFlag<HardEvent::MTE2_V>` →
    /// `["HardEvent::MTE2_V"]`), as text.
    fn template_args(&self, function: Node<'u>) -> Vec<String> {
        let Some(list) = super::kernel::template_argument_list(function) else {
            return Vec::new();
        };
        let mut cursor = list.walk();
        list.named_children(&mut cursor)
            .map(|arg| self.text(arg).trim().to_string())
            .collect()
    }

    /// The element size a call's template argument names (`AllocTensor<half>`).
    fn template_type_size(&self, function: Node<'u>) -> Option<i64> {
        let first = self.template_args(function).into_iter().next()?;
        self.type_size_of(&first)
    }

    /// The element size a call's template argument names (`AllocTensor<half>`,
    /// `AllocTensor<T>` of a type from the build: `sizeof_T`).
    fn template_type_scale(&mut self, function: Node<'u>, node: Node<'u>) -> Scale {
        match self.template_args(function).into_iter().next() {
            Some(first) => self.element_scale(&first, node),
            None => Scale::UNKNOWN,
        }
    }

    /// The element size of the `LocalTensor<T>` the call's result initializes.
    fn declared_tensor_scale(&mut self, node: Node<'u>) -> Scale {
        let mut at = node;
        for _ in 0..6 {
            let Some(parent) = at.parent() else {
                break;
            };
            if parent.kind() == "declaration" {
                let Some(ty) = parent.field_child("type") else {
                    break;
                };
                let Some(inner) = element_type(self.text(ty)) else {
                    break;
                };
                return self.element_scale(inner, node);
            }
            at = parent;
        }
        Scale::UNKNOWN
    }

    /// A scalar type's size: known, or the build's `sizeof_T` for a type name the files
    /// do not size (a template parameter bound to `DTYPE_X`), so that offsets and
    /// lengths in it stay symbolic.
    fn element_scale(&mut self, type_text: &str, node: Node<'u>) -> Scale {
        if let Some(size) = self.type_size_of(type_text) {
            return Scale::Bytes(size);
        }
        let text = type_text.trim();
        if text.contains("::") || !super::expr::is_type_name(text) || self.defines_record(text) {
            return Scale::UNKNOWN;
        }
        match self.sizeof_param(text, node) {
            Some(Value::Sym(size)) => Scale::Sym(size),
            _ => Scale::UNKNOWN,
        }
    }

    /// `LocalTensor<half>` / `GlobalTensor<T>`: the size of its element type.
    fn element_size(&self, type_text: &str) -> Option<i64> {
        self.type_size_of(element_type(type_text)?)
    }

    /// A type's size, through the template parameters a kernel class object binds.
    pub(super) fn type_size_of(&self, text: &str) -> Option<i64> {
        let text = text.trim();
        let bound = self
            .aicore
            .as_ref()
            .and_then(|s| s.type_args.get(text))
            .map_or(text, String::as_str);
        super::expr::type_size(bound).or_else(|| match bound.rsplit("::").next()? {
            "float16_t" | "bfloat16_t" | "half" => Some(2),
            "int4b_t" => None,
            _ => None,
        })
    }

    /// The declared type of a local (recorded when declared) or a class member (found
    /// among the files' field declarations).
    pub(super) fn declared_type(&mut self, place: &Place) -> Option<String> {
        // An element of an array (`addResQue_[0]`) has the array's element type.
        let place = match place.strip_suffix(']').and_then(|p| p.rsplit_once('[')) {
            Some((array, _)) => array.to_string(),
            None => place.clone(),
        };
        if let Some(Value::Str(text)) = self.store.get(&format!("{place}.#type")) {
            return Some(text.clone());
        }
        let member = place.rsplit('.').next()?;
        if !place.contains('.') {
            return None;
        }
        let member = member.to_string();
        if let Some(found) = self.aicore.as_ref().and_then(|s| s.field_types.get(&member)) {
            return found.clone();
        }
        let found = self.find_field_type(&member);
        if let Some(state) = self.aicore.as_mut() {
            state.field_types.insert(member, found.clone());
        }
        found
    }

    /// The constant a member's declaration initializes it with (`uint16_t m = 32, k;`).
    fn field_default(&mut self, place: &Place) -> Option<i64> {
        // Only an object the kernel constructs (of a class with methods here): tiling
        // data comes from the host whatever its struct's defaults say.
        // A `constexpr` or `static const` member is a constant of its class anyway.
        let (owner, member) = place.rsplit_once('.')?;
        let member = member.to_string();
        let text = self.field_text(&member)?;
        if !declares_constant(&text) && !matches!(self.store.get(&format!("{owner}.#class")), Some(Value::Str(_))) {
            return None;
        }
        let body = text.trim_end().trim_end_matches(';');
        let (_, declarators) = body.split_once(|c: char| c.is_whitespace())?;
        for part in split_top_level(declarators) {
            let (name, value) = match part.split_once('=') {
                Some((name, value)) => (name, value),
                None => match part.split_once('{') {
                    Some((name, value)) => (name, value.trim_end_matches('}')),
                    None => continue,
                },
            };
            let name = name
                .trim()
                .rsplit(|c: char| c.is_whitespace() || c == '*')
                .next()
                .unwrap_or("");
            if name == member {
                let value = value.trim();
                return super::expr::parse_int(value).or_else(|| self.named_constant(value));
            }
        }
        None
    }

    /// A class constant initialized by an expression over other constants and the
    /// build's types (`BLOCK_BYTES / sizeof(T)`, `!IsSameType<T, float>::value`): its
    /// value, the initializer evaluated where it is written, in the class's scope.
    fn class_constant(&mut self, place: &Place) -> Option<Value> {
        let (owner, member) = place.rsplit_once('.')?;
        let state = self.aicore.as_ref()?;
        let mut bound: Vec<_> = state.type_args.iter().collect();
        bound.sort();
        let key = format!("{member} {bound:?}");
        if let Some(known) = state.class_constants.get(&key) {
            return known.clone();
        }
        if !self.is_class_constant(place) {
            return None;
        }
        let (unit, field) = self.find_field(member)?;
        let initializer = initializer_of(self.index.unit(unit), field, member)?;
        self.aicore.as_mut()?.class_constants.insert(key.clone(), None);
        let class = self.frame().class.clone();
        self.frames.push(super::Frame {
            unit,
            scopes: vec![Default::default()],
            cleanups: vec![Vec::new()],
            this: Some(owner.to_string()),
            function: None,
            class,
            returned: Value::Unknown,
            call_block: self.blocks.len() - 1,
        });
        let value = self.eval(initializer);
        self.frames.pop();
        let value = matches!(value, Value::Int(_) | Value::Sym(_)).then_some(value);
        if let Some(state) = self.aicore.as_mut() {
            state.class_constants.insert(key, value.clone());
        }
        value
    }

    /// Whether the member `place` names is declared `constexpr` or `static const`.
    fn is_class_constant(&mut self, place: &Place) -> bool {
        let Some((_, member)) = place.rsplit_once('.') else {
            return false;
        };
        self.field_text(member).is_some_and(|text| declares_constant(&text))
    }

    /// The text of the field declaration of `name`, looked up once per kernel walk.
    fn field_text(&mut self, name: &str) -> Option<String> {
        if let Some(found) = self.aicore.as_ref().and_then(|state| state.field_texts.get(name)) {
            return found.clone();
        }
        let found = self.find_field_text(name);
        if let Some(state) = self.aicore.as_mut() {
            state.field_texts.insert(name.to_string(), found.clone());
        }
        found
    }

    /// The text of the field declaration of `name`.
    fn find_field_text(&self, name: &str) -> Option<String> {
        self.find_field(name)
            .map(|(unit, node)| self.index.unit(unit).text_of(node).to_string())
    }

    /// The type of the class member `name`, from the first field declaration of that
    /// name in the file being walked or the files it sees.
    fn find_field_type(&self, name: &str) -> Option<String> {
        let (unit, node) = self.find_field(name)?;
        let source = self.index.unit(unit);
        node.field_child("type").map(|ty| source.text_of(ty).to_string())
    }

    /// The first field declaration of `name` in the file being walked or the files it
    /// sees: its unit and node.
    fn find_field(&self, name: &str) -> Option<(usize, Node<'u>)> {
        let from = self.scope_unit();
        let mut units: Vec<usize> = (0..self.index.units.len())
            .filter(|unit| *unit == from || self.index.scopes.sees(from, *unit))
            .collect();
        units.sort_by_key(|unit| *unit != from);
        for unit in units {
            // Read as before the table (the files a walk read decide what it reuses).
            let source = self.index.unit(unit);
            if !source.text.contains(name) {
                continue;
            }
            if let Some(node) = self.index.types.field(unit, name) {
                return Some((unit, node));
            }
        }
        None
    }

    /// A declaration of a kernel class object (`KernelAdd<half, float> op;`): its
    /// template arguments bind the class's template parameters for the element sizes.
    pub(super) fn bind_type_args(&mut self, type_text: &str) {
        if self.aicore.is_none() {
            return;
        }
        let Some((class, rest)) = type_text.split_once('<') else {
            return;
        };
        let class = class.rsplit("::").next().unwrap_or(class).trim();
        let Some(inner) = rest.rsplit_once('>').map(|(inner, _)| inner) else {
            return;
        };
        let args = split_top_level(inner);
        let Some(params) = self.template_params_of(class) else {
            return;
        };
        if let Some(state) = self.aicore.as_mut() {
            for (param, arg) in params.into_iter().zip(args) {
                state.type_args.insert(param, arg.trim().to_string());
            }
        }
    }

    /// Whether the files define `name` as a struct, class or alias (a tiling struct is
    /// no scalar the build picks), looked up once per kernel walk.
    fn defines_record(&mut self, name: &str) -> bool {
        if let Some(&known) = self.aicore.as_ref().and_then(|state| state.records.get(name)) {
            return known;
        }
        // Type definitions are outside function bodies, in what each file offers the
        // others: not a read of a file's code (see `extract_cache`).
        let defined = self.index.types.defines_record(name);
        if let Some(state) = self.aicore.as_mut() {
            state.records.insert(name.to_string(), defined);
        }
        defined
    }

    /// `template <typename T, typename U> class NAME`: `["T", "U"]`.
    fn template_params_of(&self, class: &str) -> Option<Vec<String>> {
        // Template declarations are outside function bodies, in what each file offers
        // the others: not a read of a file's code (see `extract_cache`).
        self.index.types.template_params(class)
    }

    /// `for (i = a; i < n; ++i)` in kernel code: a `.sync` `for`, its body walked once
    /// with the counter symbolic, so a loop over tiling values is one loop the prover
    /// decides for every count. `None` where the loop is no such loop, or where its body
    /// carries values from one iteration to the next (a ping-pong index) and its bounds
    /// are known: it is unrolled then, each iteration with the values the last left.
    pub(super) fn symbolic_for(&mut self, node: Node<'u>) -> Option<Flow> {
        self.aicore.as_ref()?;
        let condition = node.field_child("condition")?;
        let update = node.field_child("update")?;
        let body = node.field_child("body")?;
        let (counter, limit, inclusive) = self.counted(condition)?;
        if !super::loops::steps_by_one(self.text(update), self.text(counter).trim()) {
            return None;
        }
        let place = self.place_of(counter)?;
        let start = self.load(&place);
        let end = self.eval(limit);
        let span = self.range(node);
        let (start_expr, mut end_expr) = (
            super::expr::symbolic(&start, span.clone())?,
            super::expr::symbolic(&end, span.clone())?,
        );
        let known = matches!((&start, &end), (Value::Int(_), Value::Int(_)));
        if inclusive {
            end_expr = ast_binary(ast::BinaryOp::Add, end_expr, ast::Expr::int(1, span.clone()));
        }
        let counter_name = self.text(counter).trim().to_string();
        let var = self.object_name(&counter_name);
        let before = self.store.freeze();
        let saved = self.snapshot();
        if let Some(state) = self.aicore.as_mut() {
            state.loop_vars.push(var.clone());
        }
        self.store
            .insert(place.clone(), Value::Sym(ast::Expr::name(&var, span.clone())));
        self.open_block();
        self.stmt(body);
        let stmts = self.close_block();
        let carried: Vec<Place> = self
            .store
            .changed_places(&before)
            .into_iter()
            .filter(|p| *p != place && before.get(p).is_some())
            .collect();
        let stmts = if carried.is_empty() {
            stmts
        } else {
            if known {
                // Unroll: each iteration gets the values the previous one left.
                self.restore(saved);
                self.store = before;
                return None;
            }
            // Values carried between iterations have no known value inside the loop.
            self.restore(saved);
            if let Some(state) = self.aicore.as_mut() {
                state.loop_vars.push(var.clone());
            }
            self.store = before.clone();
            for p in &carried {
                self.store.insert(p.clone(), Value::Unknown);
            }
            self.store
                .insert(place.clone(), Value::Sym(ast::Expr::name(&var, span.clone())));
            self.open_block();
            self.stmt(body);
            self.close_block()
        };
        if let Some(state) = self.aicore.as_mut() {
            state.loop_vars.retain(|v| *v != var);
        }
        let after: Vec<Place> = self.store.changed_places(&before);
        self.store = before;
        for p in after {
            if p != place {
                self.store.insert(p, Value::Unknown);
            }
        }
        // After the loop the counter is at its bound.
        self.store.insert(place, end);
        self.emit(
            ast::StmtKind::For {
                var: ast::Ident {
                    name: var,
                    span: span.clone(),
                },
                range: ast::RangeExpr {
                    start: Box::new(start_expr),
                    end: Some(Box::new(end_expr)),
                    inclusive: false,
                    span: span.clone(),
                },
                body: ast::Block {
                    stmts,
                    span: span.clone(),
                },
            },
            span,
        );
        Some(Flow::Normal)
    }

    /// `i < n`, `i <= n`, `n > i`, `n >= i`: the counter, the limit, whether inclusive.
    fn counted(&self, condition: Node<'u>) -> Option<(Node<'u>, Node<'u>, bool)> {
        let mut condition = condition;
        while condition.kind() == "parenthesized_expression" {
            condition = condition.named_child(0)?;
        }
        if condition.kind() != "binary_expression" {
            return None;
        }
        let operator = self.text(condition.field_child("operator")?);
        let (left, right) = (condition.field_child("left")?, condition.field_child("right")?);
        Some(match operator {
            "<" | "!=" => (left, right, false),
            "<=" => (left, right, true),
            ">" => (right, left, false),
            ">=" => (right, left, true),
            _ => return None,
        })
    }

    /// What a walk that is taken back changes besides the store.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            prelude: self.prelude.len(),
            unresolved: self.unresolved.len(),
            used_names: self.used_names.clone(),
            aicore: self.aicore.clone(),
            api_calls: self.api_calls,
            body_len: self
                .aicore
                .as_ref()
                .map(|s| (s.body_block, self.blocks[s.body_block].len())),
        }
    }

    fn restore(&mut self, saved: Snapshot) {
        self.prelude.truncate(saved.prelude);
        self.unresolved.truncate(saved.unresolved);
        self.used_names = saved.used_names;
        self.aicore = saved.aicore;
        self.api_calls = saved.api_calls;
        if let Some((at, len)) = saved.body_len {
            self.blocks[at].truncate(len);
        }
    }
}

struct Snapshot {
    prelude: usize,
    unresolved: usize,
    used_names: std::collections::HashSet<String>,
    aicore: Option<AicoreState>,
    api_calls: usize,
    /// The `aicore` body block and its length (declarations hoisted there).
    body_len: Option<(usize, usize)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BufferKind {
    Que,
    Bind,
    Buf,
}

#[derive(Clone, Copy, Debug)]
struct BufferShape {
    kind: BufferKind,
    src: Position,
    dst: Position,
}

/// `TQue<TPosition::VECIN, BUFFER_NUM>`, `TQueBind<TPosition::VECIN, TPosition::VECOUT, 1>`,
/// `TBuf<TPosition::VECCALC>`, `TBuf<>`: which kind, and its positions.
fn buffer_shape(type_text: &str) -> Option<BufferShape> {
    let text: String = type_text.chars().filter(|c| !c.is_whitespace()).collect();
    let (head, rest) = text.split_once('<').unwrap_or((&text, ""));
    let kind = match head.rsplit("::").next()? {
        "TQue" => BufferKind::Que,
        "TQueBind" => BufferKind::Bind,
        "TBuf" => BufferKind::Buf,
        _ => return None,
    };
    let inner = rest.rsplit_once('>').map_or("", |(inner, _)| inner);
    let args = split_top_level(inner);
    let position = |at: usize| -> Option<Position> {
        let text = args.get(at)?;
        let name = text.rsplit("::").next()?;
        Position::from_name(name).or(match name {
            "VECIN" => Some(Position::VecIn),
            "LCM" | "SPM" => Some(Position::VecCalc),
            "C1" => Some(Position::A1),
            "C2" => Some(Position::A2),
            _ => None,
        })
    };
    match kind {
        BufferKind::Buf => {
            let src = if args.is_empty() {
                Position::VecCalc
            } else {
                position(0)?
            };
            Some(BufferShape { kind, src, dst: src })
        }
        BufferKind::Que => {
            let src = position(0)?;
            Some(BufferShape { kind, src, dst: src })
        }
        BufferKind::Bind => Some(BufferShape {
            kind,
            src: position(0)?,
            dst: position(1)?,
        }),
    }
}

fn note_position(state: &mut AicoreState, position: Position) {
    match position {
        Position::VecIn | Position::VecOut | Position::VecCalc => state.vector = true,
        _ => state.cube = true,
    }
}

/// Template arguments at the top level of `a, B<c, d>, e`.
pub(super) fn split_top_level(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current).trim().to_string());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// The most nodes a value merged from the arms of branches may have.
const MAX_MERGED_NODES: usize = 48;

/// The nodes of `expr`, counted up to a little past `cap`.
fn expr_size(expr: &ast::Expr, cap: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        count += 1;
        if count > cap {
            break;
        }
        match &expr.kind {
            ast::ExprKind::Unary(_, operand) => stack.push(operand),
            ast::ExprKind::Binary(_, left, right) => stack.extend([left.as_ref(), right.as_ref()]),
            ast::ExprKind::Cond { cond, then, otherwise } => {
                stack.extend([cond.as_ref(), then.as_ref(), otherwise.as_ref()])
            }
            ast::ExprKind::Call(call) => stack.extend(call.args.iter().map(|a| &a.value)),
            _ => {}
        }
    }
    count
}

/// `if c {} else {}` left by conditions whose arms issue nothing: out.
fn prune_empty_branches(stmts: &mut Vec<ast::Stmt>) {
    for stmt in stmts.iter_mut() {
        for block in stmt.blocks_mut() {
            prune_empty_branches(&mut block.stmts);
        }
    }
    stmts.retain(|stmt| match &stmt.kind {
        ast::StmtKind::If { then, otherwise, .. } => {
            !then.stmts.is_empty()
                || match otherwise {
                    None => false,
                    Some(ast::Else::Block(block)) => !block.stmts.is_empty(),
                    Some(ast::Else::If(_)) => true,
                }
        }
        _ => true,
    });
}

/// Whether a call of `name` with `count` arguments can be the Ascend C API of that
/// name (`op.InitBuffer()` of the kernel class cannot).
fn api_arity(name: &str, count: usize) -> bool {
    match name {
        "InitBuffer" => (2..=3).contains(&count),
        "ReleaseEventID" | "EnQue" | "FreeTensor" | "SetFlag" | "WaitFlag" => count >= 1,
        "DataCopy" | "DataCopyPad" | "LoadData" | "Fixpipe" => count >= 2,
        "Mmad" => count >= 3,
        _ => true,
    }
}

/// A tensor from an element of no known index: the tensor, whole (its steps unknown).
pub(super) fn anywhere_in(value: &Value) -> Value {
    match value {
        Value::Buffer { name, .. } | Value::SymBuffer { name, .. } => super::expr::somewhere_in(name),
        other => other.clone(),
    }
}

/// A tensor value stepping by `scale` bytes.
pub(super) fn with_scale(value: &Value, scale: Scale) -> Value {
    match value {
        Value::Buffer { name, offset, .. } => Value::Buffer {
            name: name.clone(),
            offset: *offset,
            scale,
        },
        Value::SymBuffer { name, offset, .. } => Value::SymBuffer {
            name: name.clone(),
            offset: offset.clone(),
            scale,
        },
        other => other.clone(),
    }
}

/// `HardEvent::MTE2_V`, `AscendC::HardEvent::MTE2_V`, `MTE2_V`.
fn hard_event(text: &str) -> Option<HardEvent> {
    HardEvent::from_name(text.trim().rsplit("::").next()?)
}

/// `PIPE_MTE2` → `MTE2`.
fn short_pipe(text: &str) -> &str {
    let text = text.trim();
    let text = text.rsplit("::").next().unwrap_or(text);
    text.strip_prefix("PIPE_").unwrap_or(text)
}

/// A kernel's declaration up to its body, with the qualifiers before the node
/// (`extern "C" __global__ __aicore__ __mix__(1, 2)`, which parsing blanks out).
fn kernel_head<'t>(text: &'t str, node: Node) -> &'t str {
    let start = node.start_byte().min(text.len());
    let from = text[..start].rfind([';', '}', '{', '#']).map_or(0, |at| at + 1);
    let end = text[start..].find('{').map_or(text.len(), |at| start + at);
    text.get(from..end).unwrap_or_default()
}

/// `__mix__(1, 2)` on a kernel: its cube and vector cores per block.
fn mix_attribute(text: &str) -> Option<KernelKind> {
    let head = &text[..text.find('{').unwrap_or(text.len())];
    let at = head.find("__mix__(")?;
    let inside = head[at + "__mix__(".len()..].split(')').next()?;
    let mut numbers = inside.split(',').map(|n| n.trim().parse::<u8>().ok());
    let (aic, aiv) = (numbers.next()??, numbers.next()??);
    let name = if aic == 0 {
        "MIX_AIV_1_0".to_string()
    } else {
        format!("MIX_AIC_{aic}_{aiv}")
    };
    KernelKind::from_name(&name)
}

fn sym_call(name: &str, args: Vec<ast::Expr>, span: std::ops::Range<usize>) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Call(Box::new(ast::Call {
            callee: ast::Path {
                text: name.into(),
                span: span.clone(),
            },
            generics: None,
            args: args.into_iter().map(arg).collect(),
            span: span.clone(),
        })),
        span,
    }
}

fn arg(value: ast::Expr) -> ast::Arg {
    ast::Arg { name: None, value }
}

fn named(label: &str, value: ast::Expr, span: std::ops::Range<usize>) -> ast::Arg {
    ast::Arg {
        name: Some(ast::Ident {
            name: label.to_string(),
            span,
        }),
        value,
    }
}

/// `LocalTensor<half>` → `half`.
fn element_type(type_text: &str) -> Option<&str> {
    Some(type_text.split_once('<')?.1.rsplit_once('>')?.0)
}

/// The expression `member` is initialized with in the field declaration `field`
/// (`static constexpr int32_t N = 32 / sizeof(T);`).
fn initializer_of<'u>(source: &'u crate::index::Unit, field: Node<'u>, member: &str) -> Option<Node<'u>> {
    let mut cursor = field.walk();
    if !cursor.goto_first_child() {
        return None;
    }
    let mut named = false;
    loop {
        let child = cursor.node();
        match cursor.field_name() {
            Some("declarator") => named = crate::type_tables::declared_identifier(source.text_of(child)) == member,
            Some("default_value") if named => {
                return match child.kind() {
                    "initializer_list" => child.named_child(0),
                    _ => Some(child),
                };
            }
            _ => {}
        }
        if !cursor.goto_next_sibling() {
            return None;
        }
    }
}

/// Whether a field declaration's text declares a constant of its class.
fn declares_constant(text: &str) -> bool {
    text.contains("constexpr") || (text.contains("static") && text.contains("const"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_types_name_their_positions() {
        let que = buffer_shape("AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM>").unwrap();
        assert_eq!((que.kind, que.src), (BufferKind::Que, Position::VecIn));
        let bind = buffer_shape("TQueBind<TPosition::VECIN, TPosition::VECOUT, 1>").unwrap();
        assert_eq!((bind.src, bind.dst), (Position::VecIn, Position::VecOut));
        assert_eq!(buffer_shape("TBuf<>").unwrap().src, Position::VecCalc);
        assert!(buffer_shape("GlobalTensor<half>").is_none());
    }

    #[test]
    fn mix_attributes_name_the_kernel_type() {
        assert_eq!(
            mix_attribute("extern \"C\" __global__ __aicore__ __mix__(1, 2) void k() {}"),
            Some(KernelKind::Mix { aic: 1, aiv: 2 })
        );
        assert_eq!(mix_attribute("__global__ void k() {}"), None);
    }

    #[test]
    fn low_level_pipes_make_hard_events() {
        let name = format!("{}_{}", short_pipe("PIPE_MTE2"), short_pipe("PIPE_V"));
        assert_eq!(HardEvent::from_name(&name).map(|e| e.name()), Some("MTE2_V".into()));
    }
}
