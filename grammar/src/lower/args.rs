//! Matching a call's arguments to its API's parameters, and resolving each argument
//! to what the model needs: an object, a byte range, flags, a constant.

use crate::ast::{self, ExprKind};

use super::{Binding, Lowerer};
use syncguard_model::api::{Api, ArgKind, EnumFamily, FLAG_CONSTANTS};
use syncguard_model::calls::{Address, ArgValue, CallArgs, ChannelDesc, Copy3D, CoreMem, Pitched};
use syncguard_model::diagnostic::UsedBeforeCreation;
use syncguard_model::diagnostic::with_article;
use syncguard_model::model::{BinOp, Expr, MemRange, ObjId, Program, TimeUnit, Timeout};

/// A call's arguments in parameter order (`None`: left out, optional).
pub(super) struct BoundArgs<'a> {
    pub values: Vec<Option<&'a ast::Expr>>,
}

impl<'a> BoundArgs<'a> {
    pub fn get(&self, index: usize) -> Option<&'a ast::Expr> {
        self.values.get(index).copied().flatten()
    }
}

const CHANNEL_DESC_FIELDS: [&str; 3] = ["remoteRank", "channelProtocol", "notifyNum"];
const LOCAL_MEMORIES: [&str; 3] = ["UB", "L1", "L0C"];

impl Lowerer<'_> {
    /// Match positional and named arguments to `api`'s parameters; report arity problems.
    pub(super) fn bind_args<'a>(&mut self, api: &Api, call: &'a ast::Call) -> Option<BoundArgs<'a>> {
        if call.args.iter().any(|arg| arg.value.kind == ExprKind::Error) {
            return None; // the parser reported it; an arity error on top would be noise
        }
        let mut values: Vec<Option<&ast::Expr>> = vec![None; api.params.len()];
        let positional: Vec<usize> = (0..api.params.len()).filter(|&i| !api.params[i].named_only).collect();
        let mut next_positional = 0;
        let mut ok = true;
        for arg in &call.args {
            let index = match &arg.name {
                None => {
                    let Some(&index) = positional.get(next_positional) else {
                        self.arity_error(api, call);
                        return None;
                    };
                    next_positional += 1;
                    index
                }
                Some(name) => match api.params.iter().position(|p| p.name == name.name) {
                    Some(index) => index,
                    None => {
                        let names = api.params.iter().map(|p| p.name);
                        let close = syncguard_model::suggest::closest(&name.name, names);
                        let label = close.map_or("no such parameter".to_string(), |c| format!("did you mean `{c}`?"));
                        self.syntax_error(
                            &name.span,
                            format!("`{}` has no parameter `{}`", api.name, name.name),
                            label,
                        );
                        ok = false;
                        continue;
                    }
                },
            };
            if values[index].is_some() {
                let message = format!("parameter `{}` is given twice", api.params[index].name);
                self.syntax_error(&arg.value.span, message, "second value here");
                ok = false;
            }
            values[index] = Some(&arg.value);
        }
        let missing: Vec<&str> = api
            .params
            .iter()
            .zip(&values)
            .filter(|(param, value)| !param.optional && value.is_none())
            .map(|(param, _)| param.name)
            .collect();
        if missing.is_empty() {
            return ok.then_some(BoundArgs { values });
        }
        if call.args.len() < api.required_params() || call.args.iter().all(|arg| arg.name.is_none()) {
            self.arity_error(api, call);
        } else {
            // Enough arguments, but named ones took the place of a required one.
            let names: Vec<String> = missing.iter().map(|name| format!("`{name}`")).collect();
            let message = format!("`{}` is missing {}", api.name, names.join(", "));
            self.syntax_error(&call.span, message, format!("expected {}", api.signature()));
        }
        None
    }

    /// Resolve every argument to its model value, reporting all problems of a call
    /// together rather than only the first; `None` if any argument is unusable.
    pub(super) fn resolve_args(&mut self, api: &Api, args: &BoundArgs) -> Option<CallArgs> {
        let before = self.diagnostics.len();
        let mut values = Vec::with_capacity(api.params.len());
        for (index, param) in api.params.iter().enumerate() {
            let value = args.get(index).and_then(|expr| self.resolve_arg(expr, param.kind));
            values.push(value);
        }
        (self.diagnostics.len() == before).then_some(CallArgs { values })
    }

    fn resolve_arg(&mut self, expr: &ast::Expr, kind: ArgKind) -> Option<ArgValue> {
        Some(match kind {
            ArgKind::Stream
            | ArgKind::Context
            | ArgKind::Graph
            | ArgKind::GraphExec
            | ArgKind::Event
            | ArgKind::Notify
            | ArgKind::Comm
            | ArgKind::Channel
            | ArgKind::Thread => ArgValue::Object(self.arg_object(expr, kind)?),
            ArgKind::Ptr => ArgValue::Address(self.arg_address(expr)?),
            ArgKind::Ranges => ArgValue::Ranges(self.arg_ranges(expr)),
            ArgKind::Int => ArgValue::Int(self.lower_expr(expr)),
            ArgKind::Timeout(unit) => ArgValue::Timeout(self.arg_timeout(expr, unit)),
            ArgKind::Flags => ArgValue::Flags(self.arg_flags(expr)?),
            ArgKind::Enum(family) => ArgValue::Enum(self.arg_enum(expr, family)?),
            ArgKind::Str => ArgValue::Str(self.arg_string(expr)?, self.span(&expr.span)),
            ArgKind::Strs => ArgValue::Strs(self.arg_strings(expr)),
            ArgKind::Threads => {
                let items = match &expr.kind {
                    ExprKind::List(items) => items.iter().collect(),
                    _ => vec![expr],
                };
                let threads: Vec<Option<ObjId>> = items
                    .into_iter()
                    .map(|item| self.arg_object(item, ArgKind::Thread))
                    .collect();
                ArgValue::Objects(threads.into_iter().collect::<Option<_>>()?)
            }
            ArgKind::ChannelDescs => match &expr.kind {
                ExprKind::ListFor(list) => self.channel_desc_array(&list.item, &list.var, &list.range)?,
                _ => ArgValue::ChannelDescs(self.arg_channel_descs(expr)),
            },
            ArgKind::CoreMem => ArgValue::CoreMem(self.arg_core_mem(expr)?),
            ArgKind::GenTaskContext => {
                self.check_context_arg(expr)?;
                ArgValue::Opaque
            }
            ArgKind::PitchedPtr => ArgValue::Pitched(self.arg_pitched(expr)?),
            ArgKind::Extent => ArgValue::Extent(self.arg_triple(expr, &["width", "height", "depth"], "cudaExtent")?),
            ArgKind::Memcpy3DParms => ArgValue::Copy3D(Box::new(self.arg_copy3d(expr)?)),
            ArgKind::Opaque => ArgValue::Opaque,
            ArgKind::Function => ArgValue::Str(function_name(expr), self.span(&expr.span)),
        })
    }

    fn check_context_arg(&mut self, expr: &ast::Expr) -> Option<()> {
        match &expr.kind {
            ExprKind::Name(path) if path.text == "context" => Some(()),
            _ => {
                self.syntax_error(
                    &expr.span,
                    "the first argument is the gen-task `context`",
                    "write `context`",
                );
                None
            }
        }
    }

    fn arity_error(&mut self, api: &Api, call: &ast::Call) {
        let required = api.required_params();
        let total = api.positional_params().count();
        let count = if required == total {
            format!("{required}")
        } else {
            format!("{required} to {total}")
        };
        let plural = if total == 1 { "" } else { "s" };
        let message = format!(
            "`{}` takes {count} argument{plural}, {} given",
            api.name,
            call.args.len()
        );
        self.syntax_error(&call.span, message, format!("expected {}", api.signature()));
    }

    /// An object of the kind `kind` names (`ArgKind::Stream` → a stream, ...).
    pub(super) fn arg_object(&mut self, expr: &ast::Expr, kind: ArgKind) -> Option<ObjId> {
        let noun = kind.noun();
        if kind == ArgKind::Stream {
            if is_default_stream(expr) {
                return Some(self.program.default_stream());
            }
            if let ExprKind::Name(path) = &expr.kind
                && let Some(stream) = Program::cuda_stream(&path.text)
            {
                return Some(stream);
            }
        }
        if let ExprKind::Index { base, index } = &expr.kind {
            return self.element(base, index, kind);
        }
        let ExprKind::Name(path) = &expr.kind else {
            if !matches!(expr.kind, ExprKind::Error) {
                self.syntax_error(
                    &expr.span,
                    format!("expected {} handle", with_article(noun)),
                    format!("not {}", with_article(noun)),
                );
            }
            return None;
        };
        match self.lookup(&path.text) {
            Some(Binding::Object(id)) => {
                let object = self.program.object(id);
                if object.kind.noun() == noun && object.array.is_some() {
                    self.bare_array(expr, &path.text, id);
                    return None;
                }
                if object.kind.noun() == noun {
                    return Some(id);
                }
                let message = format!(
                    "expected {}, but `{}` is {}",
                    with_article(noun),
                    path.text,
                    with_article(object.kind.noun())
                );
                let related = object.span.clone();
                let diagnostic = syncguard_model::diagnostic::Diagnostic::new(
                    &syncguard_model::reading_rules::SyntaxErrorRule::INFO,
                    self.span(&expr.span),
                    message,
                )
                .with_label(format!("this must be {}", with_article(noun)))
                .with_related(related, format!("`{}` is created here", path.text));
                self.diagnostics.push(diagnostic);
                None
            }
            Some(_) => {
                let message = format!("expected {}, but `{}` is a number", with_article(noun), path.text);
                self.syntax_error(&expr.span, message, "");
                None
            }
            None => {
                let later = self
                    .created_later(&path.text)
                    .map(|later| (self.span(&later.span), later.noun, later.api.clone()));
                if let Some((let_span, "event", api)) = &later
                    && noun == "event"
                {
                    self.used_before_let.push(UsedBeforeCreation {
                        use_span: self.span(&expr.span),
                        name: path.text.clone(),
                        create_span: let_span.clone(),
                        api: api.clone(),
                        help: None,
                    });
                    return None;
                }
                let candidates = self.visible_objects(Some(noun));
                self.unknown_name(&expr.span, noun, &path.text, candidates.iter().map(String::as_str));
                if let Some((span, created, api)) = later
                    && let Some(diagnostic) = self.diagnostics.last_mut()
                {
                    diagnostic.related.push(syncguard_model::diagnostic::Related {
                        span,
                        message: format!(
                            "`{}` is created only here, later ({})",
                            path.text,
                            with_article(created)
                        ),
                    });
                    if created == noun {
                        let name = &path.text;
                        diagnostic.help = Some(format!("move `let {name} = {api}(...);` above its first use"));
                    }
                }
                None
            }
        }
    }

    /// A flag bitmap: macro names OR-ed together, or an integer.
    pub(super) fn arg_flags(&mut self, expr: &ast::Expr) -> Option<u32> {
        match &expr.kind {
            ExprKind::Int(lit) => lit.scaled().and_then(|v| u32::try_from(v).ok()).or_else(|| {
                self.syntax_error(&expr.span, "flag value does not fit in 32 bits", "");
                None
            }),
            ExprKind::Name(path) => {
                let name = last_segment(&path.text);
                match FLAG_CONSTANTS.iter().find(|(n, _)| *n == name) {
                    Some((_, value)) => Some(*value),
                    None => {
                        let names = FLAG_CONSTANTS.iter().map(|(n, _)| *n);
                        self.unknown_name(&expr.span, "flag", name, names);
                        None
                    }
                }
            }
            ExprKind::Binary(ast::BinaryOp::BitOr, a, b) => Some(self.arg_flags(a)? | self.arg_flags(b)?),
            ExprKind::Error => None,
            _ => {
                self.syntax_error(
                    &expr.span,
                    "expected flags",
                    "e.g. `ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE`",
                );
                None
            }
        }
    }

    /// One constant of `family`, written bare or qualified (`CommEngine::COMM_ENGINE_CPU`).
    pub(super) fn arg_enum(&mut self, expr: &ast::Expr, family: EnumFamily) -> Option<&'static str> {
        let ExprKind::Name(path) = &expr.kind else {
            self.syntax_error(
                &expr.span,
                "expected a constant name",
                format!("e.g. `{}`", family.constants()[0]),
            );
            return None;
        };
        let name = last_segment(&path.text);
        if let Some(constant) = family.constants().iter().find(|c| **c == name) {
            return Some(constant);
        }
        self.unknown_name(&expr.span, "constant", name, family.constants().iter().copied());
        None
    }

    pub(super) fn arg_string(&mut self, expr: &ast::Expr) -> Option<String> {
        match &expr.kind {
            ExprKind::Str(text) => Some(text.clone()),
            ExprKind::Error => None,
            _ => {
                self.syntax_error(&expr.span, "expected a string literal", "write it in double quotes");
                None
            }
        }
    }

    pub(super) fn arg_strings(&mut self, expr: &ast::Expr) -> Vec<String> {
        match &expr.kind {
            ExprKind::List(items) => items.iter().filter_map(|item| self.arg_string(item)).collect(),
            _ => self.arg_string(expr).into_iter().collect(),
        }
    }

    pub(super) fn arg_timeout(&mut self, expr: &ast::Expr, unit: TimeUnit) -> Timeout {
        Timeout {
            value: self.lower_expr(expr),
            unit,
            span: self.span(&expr.span),
        }
    }

    /// An address with an optional length: `buf`, `buf + off` (`buf + a + b - c`), or
    /// `buf[a..b]`.
    pub(super) fn arg_address(&mut self, expr: &ast::Expr) -> Option<Address> {
        let (base, offset, len) = match &expr.kind {
            ExprKind::Binary(ast::BinaryOp::Add | ast::BinaryOp::Sub, ..) => {
                let (base, offset) = self.base_and_offset(expr);
                (base, offset, None)
            }
            ExprKind::Slice { base, range } => {
                let start = self.lower_expr(&range.start);
                let end = range.end.as_ref().map(|end| {
                    let end = self.lower_expr(end);
                    if range.inclusive {
                        Expr::Binary(BinOp::Add, Box::new(end), Box::new(Expr::Int(1)))
                    } else {
                        end
                    }
                });
                let len = end.map(|end| Expr::Binary(BinOp::Sub, Box::new(end), Box::new(start.clone())));
                (base.as_ref(), start, len)
            }
            _ => (expr, Expr::Int(0), None),
        };
        Some(Address {
            buffer: self.arg_object(base, ArgKind::Ptr)?,
            offset,
            len,
            span: self.span(&expr.span),
        })
    }

    /// `buf + a - b` as `buf` and `a - b`: the buffer is the leftmost operand of a chain
    /// of `+` and `-` (bounded by the nesting limit).
    fn base_and_offset<'e>(&mut self, expr: &'e ast::Expr) -> (&'e ast::Expr, Expr) {
        let ExprKind::Binary(op @ (ast::BinaryOp::Add | ast::BinaryOp::Sub), lhs, rhs) = &expr.kind else {
            return (expr, Expr::Int(0));
        };
        let (base, before) = self.base_and_offset(lhs);
        let rhs = self.lower_expr(rhs);
        let offset = match (op, before) {
            (ast::BinaryOp::Add, Expr::Int(0)) => rhs,
            (ast::BinaryOp::Add, before) => {
                super::expr::folded(Expr::Binary(BinOp::Add, Box::new(before), Box::new(rhs)))
            }
            (_, before) => super::expr::folded(Expr::Binary(BinOp::Sub, Box::new(before), Box::new(rhs))),
        };
        (base, offset)
    }

    /// The bytes an address names on its own (the rest of the buffer unless sliced).
    pub(super) fn arg_range(&mut self, expr: &ast::Expr) -> Option<MemRange> {
        Some(self.arg_address(expr)?.range(None, &self.program))
    }

    /// `[a[0..16], b]`: a kernel's reads or writes.
    pub(super) fn arg_ranges(&mut self, expr: &ast::Expr) -> Vec<MemRange> {
        match &expr.kind {
            ExprKind::List(items) => items.iter().filter_map(|item| self.arg_range(item)).collect(),
            _ => self.arg_range(expr).into_iter().collect(),
        }
    }

    /// `{ remoteRank: 1, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 3 }` or a list.
    pub(super) fn arg_channel_descs(&mut self, expr: &ast::Expr) -> Vec<ChannelDesc> {
        match &expr.kind {
            ExprKind::List(items) => items.iter().filter_map(|item| self.channel_desc(item)).collect(),
            _ => self.channel_desc(expr).into_iter().collect(),
        }
    }

    pub(super) fn channel_desc(&mut self, expr: &ast::Expr) -> Option<ChannelDesc> {
        let ExprKind::Struct(fields) = &expr.kind else {
            self.syntax_error(
                &expr.span,
                "expected an HcclChannelDesc",
                "e.g. `{ remoteRank: 1, notifyNum: 3 }`",
            );
            return None;
        };
        let mut desc = ChannelDesc {
            remote_rank: Expr::Int(0),
            protocol: "COMM_PROTOCOL_HCCS".into(),
            notify_num: Expr::Int(0),
        };
        let mut has_remote = false;
        for field in fields {
            match field.name.name.as_str() {
                "remoteRank" => {
                    desc.remote_rank = self.lower_expr(&field.value);
                    has_remote = true;
                }
                "notifyNum" => desc.notify_num = self.lower_expr(&field.value),
                "channelProtocol" => match &field.value.kind {
                    ExprKind::Name(path) => desc.protocol = last_segment(&path.text).to_string(),
                    _ => self.syntax_error(
                        &field.value.span,
                        "expected a protocol name",
                        "e.g. `COMM_PROTOCOL_HCCS`",
                    ),
                },
                other => {
                    let close = syncguard_model::suggest::closest(other, CHANNEL_DESC_FIELDS);
                    let label = close.map_or("not modelled by syncguard".into(), |c| format!("did you mean `{c}`?"));
                    self.syntax_error(
                        &field.name.span,
                        format!("HcclChannelDesc has no field `{other}`"),
                        label,
                    );
                }
            }
        }
        if !has_remote {
            self.syntax_error(
                &expr.span,
                "an HcclChannelDesc needs `remoteRank`",
                "remoteRank missing",
            );
            return None;
        }
        Some(desc)
    }

    /// The fields of a struct literal, each checked against `known`, for `what`.
    fn struct_fields<'e>(&mut self, expr: &'e ast::Expr, known: &[&str], what: &str) -> Option<Vec<&'e ast::Field>> {
        let ExprKind::Struct(fields) = &expr.kind else {
            let example = known.iter().map(|f| format!("{f}: ...")).collect::<Vec<_>>().join(", ");
            self.syntax_error(
                &expr.span,
                format!("expected a {what}"),
                format!("e.g. `{{ {example} }}`"),
            );
            return None;
        };
        for field in fields {
            let name = field.name.name.as_str();
            if !known.contains(&name) {
                let close = syncguard_model::suggest::closest(name, known.iter().copied());
                let label = close.map_or("not a field syncguard reads".into(), |c| format!("did you mean `{c}`?"));
                self.syntax_error(&field.name.span, format!("{what} has no field `{name}`"), label);
            }
        }
        Some(fields.iter().collect())
    }

    /// A struct's field, required.
    fn required_field<'e>(
        &mut self,
        fields: &[&'e ast::Field],
        name: &str,
        whole: &ast::Expr,
        what: &str,
    ) -> Option<&'e ast::Expr> {
        let found = fields.iter().find(|f| f.name.name == name).map(|f| &f.value);
        if found.is_none() {
            self.syntax_error(
                &whole.span,
                format!("a {what} needs `{name}`"),
                format!("{name} missing"),
            );
        }
        found
    }

    /// Three integer fields (`cudaExtent`, `cudaPos`); `x`, `y`, `z` default to 0.
    fn arg_triple(&mut self, expr: &ast::Expr, names: &[&str; 3], what: &str) -> Option<[Expr; 3]> {
        let fields = self.struct_fields(expr, names, what)?;
        let optional = what == "cudaPos";
        let mut values = [Expr::Int(0), Expr::Int(0), Expr::Int(0)];
        for (value, name) in values.iter_mut().zip(names) {
            match fields.iter().find(|f| f.name.name == *name) {
                Some(field) => *value = self.lower_expr(&field.value),
                None if optional => {}
                None => {
                    self.syntax_error(
                        &expr.span,
                        format!("a {what} needs `{name}`"),
                        format!("{name} missing"),
                    );
                    return None;
                }
            }
        }
        Some(values)
    }

    /// `{ ptr: buf + off, pitch: 512, xsize: 400, ysize: 64 }`.
    fn arg_pitched(&mut self, expr: &ast::Expr) -> Option<Pitched> {
        const WHAT: &str = "cudaPitchedPtr";
        let fields = self.struct_fields(expr, &["ptr", "pitch", "xsize", "ysize"], WHAT)?;
        let ptr = self.required_field(&fields, "ptr", expr, WHAT)?;
        let pitch = self.required_field(&fields, "pitch", expr, WHAT)?;
        let ysize = self.required_field(&fields, "ysize", expr, WHAT)?;
        Some(Pitched {
            address: self.arg_address(ptr)?,
            pitch: self.lower_expr(pitch),
            ysize: self.lower_expr(ysize),
        })
    }

    /// `{ srcPtr: {...}, srcPos: {...}?, dstPtr: {...}, dstPos: {...}?, extent: {...}, kind }`.
    fn arg_copy3d(&mut self, expr: &ast::Expr) -> Option<Copy3D> {
        const WHAT: &str = "cudaMemcpy3DParms";
        const FIELDS: &[&str] = &["srcPtr", "srcPos", "dstPtr", "dstPos", "extent", "kind"];
        let fields = self.struct_fields(expr, FIELDS, WHAT)?;
        let position = |this: &mut Self, name: &str| match fields.iter().find(|f| f.name.name == name) {
            Some(field) => this.arg_triple(&field.value, &["x", "y", "z"], "cudaPos"),
            None => Some([Expr::Int(0), Expr::Int(0), Expr::Int(0)]),
        };
        let src_pos = position(self, "srcPos")?;
        let dst_pos = position(self, "dstPos")?;
        let src = self.required_field(&fields, "srcPtr", expr, WHAT)?;
        let dst = self.required_field(&fields, "dstPtr", expr, WHAT)?;
        let extent = self.required_field(&fields, "extent", expr, WHAT)?;
        let kind = self.required_field(&fields, "kind", expr, WHAT)?;
        Some(Copy3D {
            src: self.arg_pitched(src)?,
            src_pos,
            dst: self.arg_pitched(dst)?,
            dst_pos,
            extent: self.arg_triple(extent, &["width", "height", "depth"], "cudaExtent")?,
            kind: self.arg_enum(kind, EnumFamily::MemcpyKind)?,
        })
    }

    pub(super) fn arg_core_mem(&mut self, expr: &ast::Expr) -> Option<CoreMem> {
        if let ExprKind::Name(path) = &expr.kind
            && LOCAL_MEMORIES.contains(&path.text.as_str())
        {
            return Some(CoreMem::Local);
        }
        self.arg_range(expr).map(CoreMem::Global)
    }
}

/// `NULL`, `nullptr` or `0` where a stream is expected: the default stream.
fn is_default_stream(expr: &ast::Expr) -> bool {
    match &expr.kind {
        ExprKind::Null => true,
        ExprKind::Int(lit) => lit.value == 0 && lit.unit.is_none(),
        _ => false,
    }
}

fn last_segment(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

/// The name a kernel function argument gives its kernel in messages: the handle's
/// variable or the string written, else the expression's kind.
fn function_name(expr: &ast::Expr) -> String {
    match &expr.kind {
        ExprKind::Name(path) => path.text.clone(),
        ExprKind::Str(text) => text.clone(),
        _ => "kernel".to_string(),
    }
}
