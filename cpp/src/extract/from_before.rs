//! Objects the code receives from outside: an entry point's parameters, globals, members
//! of an object the entry point did not construct. Each is declared once, at the top of
//! the program, as an object from before (`existing_event()`, `existing_thread(comm)`,
//! `existing_channel(comm, peer)`, ...), where the code first uses it.
//!
//! An entry point whose one `ChannelHandle` parameter is how it talks to its peer is SPMD
//! code: every rank runs it with its own channel. Which rank is at the other end is not
//! in the code; ranks are paired (`rank ^ 1`, the last rank of an odd count with itself),
//! so that a handshake both ends get wrong in the same way (each waits before it records)
//! is found for every rank count. Other channels from before (several parameters,
//! members, arrays) have unknown peers: their notifies order nothing.

use syncguard_grammar::ast;
use syncguard_model::api::ArgKind;
use tree_sitter::Node;

use super::Walker;
use super::api::strip_casts;
use super::value::{Place, Scale, Value};
use crate::index::ParamDecl;

impl<'u> Walker<'_, 'u> {
    /// An object the code receives from outside, as an argument of kind `kind`: declared
    /// once, at the top, as an object from before. Only places rooted outside the walked
    /// code qualify: a local whose value is unknown is a handle the extractor lost, not
    /// one from before.
    pub(super) fn object_from_before(&mut self, kind: ArgKind, arg: Node<'u>) -> Option<ast::Expr> {
        let place = self.place_of(strip_casts(arg))?;
        if let Some(value) = self.from_before.get(&place).cloned() {
            return self.value_expr(&value, self.range(arg));
        }
        if !self.is_outside(&place) {
            return None;
        }
        if let Some(value) = self.aliased_from_before(&place) {
            self.from_before.insert(place.clone(), value.clone());
            self.store.insert(place, value.clone());
            return self.value_expr(&value, self.range(arg));
        }
        let span = self.range(arg);
        let (call, args) = match kind {
            ArgKind::Stream if self.source_unit().0.cuda => ("cudaStreamCreate", Vec::new()),
            ArgKind::Stream => ("aclrtCreateStream", Vec::new()),
            ArgKind::Event => ("existing_event", Vec::new()),
            ArgKind::Notify => ("existing_notify", Vec::new()),
            ArgKind::Comm => ("existing_comm", Vec::new()),
            ArgKind::Thread => ("existing_thread", vec![self.comm_from_before(span.clone())]),
            ArgKind::Channel => {
                let mut args = vec![self.comm_from_before(span.clone())];
                args.extend(self.channel_peer(&place, span.clone()));
                ("existing_channel", args)
            }
            ArgKind::Ptr => {
                let region = self.memory_from_before(&place, arg);
                self.from_before.insert(place.clone(), region.clone());
                self.store.insert(place, region.clone());
                return self.value_expr(&region, span);
            }
            _ => return None,
        };
        let name = self.object_name(&place);
        self.record_written(&name, arg);
        self.declare_from_before(&name, call, args, span.clone());
        let value = Value::Handle(name);
        self.from_before.insert(place.clone(), value.clone());
        self.store.insert(place, value.clone());
        self.value_expr(&value, span)
    }

    /// The object from before of another name of `place`'s alias group (`--alias`),
    /// if one was declared: the same object.
    pub(super) fn aliased_from_before(&self, place: &str) -> Option<Value> {
        let name = alias_name(place)?;
        let group = self
            .aliases
            .iter()
            .find(|group| group.iter().any(|member| member == name))?;
        let mut seen: Vec<(&Place, &Value)> = self
            .from_before
            .iter()
            .filter(|(other, _)| {
                alias_name(other).is_some_and(|other| other != name && group.iter().any(|m| m == other))
            })
            .collect();
        // The first declared, whatever the map's order.
        seen.sort_by_key(|(other, _)| other.as_str());
        seen.first().map(|(_, value)| (*value).clone())
    }

    /// `let NAME = CALL(ARGS);` at the top of the program.
    fn declare_from_before(&mut self, name: &str, call: &str, args: Vec<ast::Expr>, span: std::ops::Range<usize>) {
        let created = ast::Call {
            callee: ast::Path {
                text: call.to_string(),
                span: span.clone(),
            },
            generics: None,
            args: args.into_iter().map(|value| ast::Arg { name: None, value }).collect(),
            span: span.clone(),
        };
        self.prelude.push(ast::Stmt {
            kind: ast::StmtKind::Let {
                pattern: ast::Pattern::Name(ast::Ident {
                    name: name.to_string(),
                    span: span.clone(),
                }),
                value: ast::Expr {
                    span: span.clone(),
                    kind: ast::ExprKind::Call(Box::new(created)),
                },
            },
            span,
        });
    }

    /// The communicator of the HCCL threads and channels from before, whose own
    /// communicator the code does not show: one for them all, declared at first need.
    fn comm_from_before(&mut self, span: std::ops::Range<usize>) -> ast::Expr {
        let name = match &self.hccl_comm {
            Some(name) => name.clone(),
            None => {
                let name = self.object_name("comm");
                self.declare_from_before(&name, "existing_comm", Vec::new(), span.clone());
                self.hccl_comm = Some(name.clone());
                name
            }
        };
        ast::Expr::name(&name, span)
    }

    /// The peer of a channel from before: for the entry point's one `ChannelHandle`
    /// parameter, `(rank ^ 1) < N ? rank ^ 1 : rank` on `N` ranks (which makes the code
    /// SPMD); none for any other channel, whose peer is unknown.
    fn channel_peer(&mut self, place: &str, span: std::ops::Range<usize>) -> Option<ast::Expr> {
        if self.paired_channel.as_deref() != Some(place) {
            return None;
        }
        self.wants_ranks = true;
        let ranks = self.ranks?;
        let rank = || ast::Expr::name("rank", span.clone());
        let partner = || super::ast_binary(ast::BinaryOp::BitXor, rank(), ast::Expr::int(1, span.clone()));
        Some(ast::Expr {
            kind: ast::ExprKind::Cond {
                cond: Box::new(super::ast_binary(
                    ast::BinaryOp::Lt,
                    partner(),
                    ast::Expr::int(ranks, span.clone()),
                )),
                then: Box::new(partner()),
                otherwise: Box::new(rank()),
            },
            span,
        })
    }

    /// Whether a place is rooted outside the walked code: a global, a member of an
    /// object the entry point did not construct, or an entry parameter.
    pub(super) fn is_outside(&self, place: &str) -> bool {
        place.starts_with("::") || place.starts_with("this#") || self.is_entry_param(place)
    }

    fn is_entry_param(&self, place: &str) -> bool {
        let root = place.split(['.', '[']).next().unwrap_or(place);
        self.frames
            .first()
            .and_then(|frame| frame.scopes.first())
            .is_some_and(|scope| scope.values().any(|param| param == root))
    }

    /// Memory of its own from before, for one unknown pointer (named after it): two
    /// pointers the code does not relate are never taken to alias.
    pub(super) fn memory_from_before(&mut self, pointer: &str, first_use: Node<'u>) -> Value {
        let name = self.object_name(pointer);
        self.record_written(&name, first_use);
        let span = self.range(first_use);
        self.prelude
            .push(super::kernel::let_call(&name, "existing_memory", span));
        Value::Buffer {
            offset: 0,
            name,
            scale: Scale::Bytes(1),
        }
    }

    pub(super) fn value_expr(&self, value: &Value, span: std::ops::Range<usize>) -> Option<ast::Expr> {
        match value {
            Value::Handle(name) => Some(ast::Expr::name(name, span)),
            Value::Buffer { name, offset, .. } => Some(super::api::pointer(name, *offset, span)),
            _ => None,
        }
    }
}

/// The entry point's one `ChannelHandle` parameter (by value or reference), if it has
/// exactly one: the channel to pair with a peer.
pub(super) fn paired_channel_param(params: &[ParamDecl], places: &[Place]) -> Option<Place> {
    let mut channels = params
        .iter()
        .zip(places)
        .filter(|(param, _)| !param.indirect && is_channel_type(&param.type_text));
    let (_, place) = channels.next()?;
    channels.next().is_none().then(|| place.clone())
}

fn is_channel_type(type_text: &str) -> bool {
    let text = type_text.trim().trim_start_matches("const ").trim();
    text.rsplit("::").next() == Some("ChannelHandle")
}

/// The name an alias group gives a place: an entry parameter (`src#0`), a global
/// (`::g_stream`) or a member (`this#2.stream_`) as written; a part of one (`ctx#1.s`,
/// `bufs#0[1]`) has none.
fn alias_name(place: &str) -> Option<&str> {
    let name = if let Some(global) = place.strip_prefix("::") {
        global
    } else if let Some(member) = place.strip_prefix("this#") {
        member.split_once('.')?.1
    } else {
        let (name, rest) = place.split_once('#')?;
        if rest.contains(['.', '[']) {
            return None;
        }
        name
    };
    (!name.contains(['.', '['])).then_some(name)
}
