//! Handle arrays: `let ts = HcclThreadAcquire(comm, engine, N - 1, 1);` binds one
//! array object of `N - 1` threads, `ts[i]` names one of them, and
//! `[{ remoteRank: (rank + 1 + i) % N, notifyNum: 2 } for i in 0..N - 1]` describes
//! `N - 1` channels at once. Which handle an index names is decided when the call runs.

use crate::ast::{self, ExprKind};

use super::expr::folded;
use super::{Binding, Lowerer};
use syncguard_model::api::{Api, ArgKind, Creates};
use syncguard_model::calls::{ArgValue, CallArgs, ChannelDesc};
use syncguard_model::diagnostic::with_article;
use syncguard_model::model::{ArrayShape, BinOp, Expr, ObjId, Object, ObjectKind, Var, VarId};

impl Lowerer<'_> {
    /// `base[index]` where a handle of `kind` is expected.
    pub(super) fn element(&mut self, base: &ast::Expr, index: &ast::Expr, kind: ArgKind) -> Option<ObjId> {
        let noun = kind.noun();
        let array = match (&base.kind, self.lookup_path(base)) {
            (_, Some(Binding::Object(id))) if self.program.object(id).array.is_some() => id,
            (ExprKind::Name(path), Some(Binding::Object(id))) if self.program.object(id).kind.noun() == noun => {
                let object = self.program.object(id);
                let message = format!(
                    "`{}` is a single {}, not an array of handles",
                    path.text,
                    object.kind.noun()
                );
                let diagnostic = syncguard_model::diagnostic::Diagnostic::new(
                    &syncguard_model::reading_rules::SyntaxErrorRule::INFO,
                    self.span(&base.span),
                    message,
                )
                .with_label("remove the index")
                .with_related(object.span.clone(), format!("`{}` is created here", path.text));
                self.diagnostics.push(diagnostic);
                return None;
            }
            _ => {
                // Not a name of an array: the usual message for what the base is, or,
                // for a handle (`NULL[0]`), that it has no elements.
                if self.arg_object(base, kind).is_some() {
                    self.syntax_error(&base.span, "this is not an array of handles", "remove the index");
                }
                return None;
            }
        };
        let object = self.program.object(array);
        if object.kind.noun() != noun {
            let message = format!(
                "expected {}, but `{}` holds {} handles",
                with_article(noun),
                object.name,
                object.kind.noun()
            );
            self.syntax_error(&base.span, message, format!("this must be {}", with_article(noun)));
            return None;
        }
        let index_value = self.lower_expr(index);
        Some(self.element_object(array, index_value, index))
    }

    /// The object for `array[index]`; uses with the same index share it.
    fn element_object(&mut self, array: ObjId, index: Expr, written: &ast::Expr) -> ObjId {
        let kind = ObjectKind::Element { array, index };
        let same = |object: &Object| matches!((&object.kind, &kind), (ObjectKind::Element { array: a, index: i }, ObjectKind::Element { array: b, index: j }) if a == b && i == j);
        if let Some(found) = self.program.objects.iter().position(same) {
            return ObjId(found as u32);
        }
        let name = format!("{}[{}]", self.program.object(array).name, crate::expr_text(written));
        self.program.objects.push(Object {
            name,
            written: None,
            kind,
            span: self.span(&written.span),
            created_by: None,
            array: None,
            ipc_key: None,
        });
        ObjId(self.program.objects.len() as u32 - 1)
    }

    fn lookup_path(&self, expr: &ast::Expr) -> Option<Binding> {
        match &expr.kind {
            ExprKind::Name(path) => self.lookup(&path.text),
            _ => None,
        }
    }

    /// A handle array named where one handle is expected.
    pub(super) fn bare_array(&mut self, expr: &ast::Expr, name: &str, array: ObjId) {
        let object = self.program.object(array);
        let message = format!(
            "`{name}` is an array of {} handles: name one of them",
            object.kind.noun()
        );
        let diagnostic = syncguard_model::diagnostic::Diagnostic::new(
            &syncguard_model::reading_rules::SyntaxErrorRule::INFO,
            self.span(&expr.span),
            message,
        )
        .with_label(format!("write `{name}[i]`"))
        .with_related(object.span.clone(), format!("`{name}` is created here"));
        self.diagnostics.push(diagnostic);
    }

    /// `[desc for var in start..end]`: one descriptor over the element index.
    pub(super) fn channel_desc_array(
        &mut self,
        item: &ast::Expr,
        var: &ast::Ident,
        range: &ast::RangeExpr,
    ) -> Option<ArgValue> {
        let start = self.lower_expr(&range.start);
        let Some(end) = &range.end else {
            self.syntax_error(&range.span, "a list needs an upper bound", "add an end, e.g. `0..N`");
            return None;
        };
        let end = self.lower_expr(end);
        let element = self.new_var(var);
        let desc = self.in_scope(self.place, |this| {
            this.bind(&var.name, Binding::Var(element));
            this.channel_desc(item)
        })?;
        let len = if range.inclusive {
            add(sub(end, start.clone()), Expr::Int(1))
        } else {
            sub(end, start.clone())
        };
        // Descriptor `k` is the item with `var` = `start + k`.
        let at = match start.as_const() {
            Some(0) => Expr::Var(element),
            _ => add(Expr::Var(element), start),
        };
        let desc = ChannelDesc {
            remote_rank: desc.remote_rank.substitute(element, &at),
            protocol: desc.protocol,
            notify_num: desc.notify_num.substitute(element, &at),
        };
        Some(ArgValue::ChannelDescArray(desc, ArrayShape { len, element }))
    }

    pub(super) fn new_var(&mut self, var: &ast::Ident) -> VarId {
        let id = VarId(self.program.vars.len() as u32);
        self.program.vars.push(Var {
            name: var.name.clone(),
            span: self.span(&var.span),
        });
        id
    }

    /// The shape of what a `let` with one name binds, if it is a handle array: the
    /// threads of `HcclThreadAcquire` unless `threadNum` is 1, the channels of a
    /// `[... for ...]` descriptor list or of a list of more than one descriptor.
    pub(super) fn array_shape(&mut self, api: &Api, args: &CallArgs, name: &ast::Ident) -> Option<ArrayShape> {
        let len = match (api.creates, args.get(2)) {
            (Creates::HcclThreads, _) => {
                let len = args.int(2)?;
                if len.as_const() == Some(1) {
                    return None;
                }
                len
            }
            (Creates::Channels, Some(ArgValue::ChannelDescArray(_, shape))) => return Some(shape.clone()),
            (Creates::Channels, Some(ArgValue::ChannelDescs(descs))) if descs.len() > 1 => {
                Expr::Int(descs.len() as i64)
            }
            _ => return None,
        };
        let element = self.new_var(name);
        Some(ArrayShape { len, element })
    }
}

impl Lowerer<'_> {
    /// `let name = ...` of a call that creates a handle array: one object.
    pub(super) fn lower_array_creation(
        &mut self,
        api: &Api,
        args: &CallArgs,
        name: &ast::Ident,
        shape: ArrayShape,
        call: &ast::Call,
    ) -> Option<ObjId> {
        let mut args = args.clone();
        if api.creates == Creates::Channels {
            if !args.int(3).is_some_and(|count| same_count(&count, &shape.len)) {
                let message = "`channelNum` must be the number of channel descriptors, written the same way";
                self.syntax_error(&call.span, message, "channelNum disagrees with channelDescs");
                return None;
            }
            if let Some(ArgValue::ChannelDescs(descs)) = args.get(2) {
                let desc = desc_over(descs, shape.element)?;
                args.values[2] = Some(ArgValue::ChannelDescArray(desc, shape.clone()));
            }
        }
        let kind = syncguard_model::calls::created_objects(api, &args, 1, &self.program)?
            .into_iter()
            .next()?;
        let id = self.new_object(name, kind, api.name);
        self.program.objects[id.index()].array = Some(shape);
        Some(id)
    }
}

impl Lowerer<'_> {
    /// `let xs = HcclThreadExportToCommEngine(comm, N - 1, ts, engine);` with `ts` an
    /// array: `xs` names the same threads. Whether `threads` is such an array.
    pub(super) fn alias_array(
        &mut self,
        name: &ast::Ident,
        threads: &ast::Expr,
        count: Option<&ast::Expr>,
        call: &ast::Call,
    ) -> bool {
        let Some(Binding::Object(array)) = self.lookup_path(threads) else {
            return false;
        };
        let Some(shape) = self.program.object(array).array.clone() else {
            return false;
        };
        let count = count.map(|count| self.lower_expr(count));
        if !count.is_some_and(|count| same_count(&count, &shape.len)) {
            let message = "`threadNum` must be the number of threads in the array, written the same way";
            self.syntax_error(&call.span, message, "threadNum disagrees with the array");
        }
        self.bind(&name.name, Binding::Object(array));
        true
    }
}

/// Channel descriptors of a written list as one descriptor over the element index:
/// `element == 0 ? d0 : element == 1 ? d1 : ...`.
pub(super) fn desc_over(descs: &[ChannelDesc], element: VarId) -> Option<ChannelDesc> {
    let pick = |field: fn(&ChannelDesc) -> &Expr| {
        let (last, rest) = descs.split_last()?;
        Some(
            rest.iter()
                .enumerate()
                .rev()
                .fold(field(last).clone(), |otherwise, (k, desc)| {
                    let is_k = Expr::Binary(BinOp::Eq, Box::new(Expr::Var(element)), Box::new(Expr::Int(k as i64)));
                    Expr::cond(is_k, field(desc).clone(), otherwise)
                }),
        )
    };
    Some(ChannelDesc {
        remote_rank: pick(|d| &d.remote_rank)?,
        protocol: descs.first()?.protocol.clone(),
        notify_num: pick(|d| &d.notify_num)?,
    })
}

/// Whether a count argument is the array's length: the same constant, or written the
/// same way (`N - 1`).
fn same_count(count: &Expr, len: &Expr) -> bool {
    count == len || count.as_const().is_some_and(|n| Some(n) == len.as_const())
}

fn add(a: Expr, b: Expr) -> Expr {
    folded(Expr::Binary(BinOp::Add, Box::new(a), Box::new(b)))
}

fn sub(a: Expr, b: Expr) -> Expr {
    if b.as_const() == Some(0) {
        return a;
    }
    folded(Expr::Binary(BinOp::Sub, Box::new(a), Box::new(b)))
}
