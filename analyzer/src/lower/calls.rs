//! One call statement to one model op, driven by the API catalogue.

use syncguard_grammar::ast;

use super::args::{BoundArgs, CoreMem};
use super::{Lowerer, Place};
use crate::api::{self, Api, ArgKind, Creates, Effect};
use crate::model::{
    Block, BufferInfo, ChannelInfo, CopyDirection, EventInfo, Expr, GeTask, GeTaskKind, MemorySpace, ObjId, ObjectKind,
    Op, OpKind, Pipe, Stmt,
};

impl Lowerer {
    pub(super) fn lower_call(&mut self, call: &ast::Call, pattern: Option<&ast::Pattern>, out: &mut Block) {
        let Some(api) = api::lookup(&call.callee.text) else {
            let names = api::APIS.iter().map(|a| a.name);
            self.unknown_name(&call.callee.span, "API", &call.callee.text, names);
            return;
        };
        if !self.check_call_shape(api, call, pattern) {
            return;
        }
        let Some(args) = self.bind_args(api, call) else {
            return;
        };
        if !self.validate_args(api, &args) {
            return;
        }
        if let Place::GenTask(index) = self.place {
            self.lower_ge_task(index, api, &args, call);
            return;
        }
        let kinds = match pattern {
            Some(pattern) => self
                .lower_creation(api, &args, pattern, call)
                .into_iter()
                .map(OpKind::Create)
                .collect(),
            None => self.lower_effect(api, &args, call).into_iter().collect::<Vec<_>>(),
        };
        for kind in kinds {
            out.push(Stmt::Op(Op {
                api: api.name.to_string(),
                kind,
                span: self.span(&call.span),
            }));
        }
    }

    /// Place, binding and template arguments; everything but the argument values.
    fn check_call_shape(&mut self, api: &Api, call: &ast::Call, pattern: Option<&ast::Pattern>) -> bool {
        let place_ok = match (api.place, self.place) {
            (api::Place::Host, Place::Host) | (api::Place::Core, Place::Core) => true,
            (api::Place::GenTask, Place::GenTask(_)) => true,
            (api::Place::Host, _) => self.misplaced(api, call, "in host code"),
            (api::Place::GenTask, _) => self.misplaced(api, call, "inside an `op` block"),
            (api::Place::Core, _) => self.misplaced(api, call, "inside a `subkernel` block"),
        };
        if !place_ok {
            return false;
        }
        let creates = api.creates != Creates::Nothing;
        match (creates, pattern) {
            (true, None) => {
                let message = format!("the result of `{}` must be bound with `let`", api.name);
                self.syntax_error(&call.span, message, "created here but never named");
                return false;
            }
            (false, Some(pattern)) => {
                let span = pattern.names()[0].span.start..call.span.end;
                self.syntax_error(
                    &span,
                    format!("`{}` creates nothing to bind", api.name),
                    "remove `let ... =`",
                );
                return false;
            }
            _ => {}
        }
        match &call.generics {
            Some(generics) if generics.len() > api.generics.len() => {
                let message = match api.generics.len() {
                    0 => format!("`{}` takes no template arguments", api.name),
                    n => format!("`{}` takes at most {n} template arguments", api.name),
                };
                let label = format!("template parameters: <{}>", api.generics.join(", "));
                self.syntax_error(&call.span, message, label);
                false
            }
            _ => true,
        }
    }

    fn misplaced(&mut self, api: &Api, call: &ast::Call, where_: &str) -> bool {
        self.syntax_error(
            &call.callee.span,
            format!("`{}` can only be called {where_}", api.name),
            "called here",
        );
        false
    }

    /// Creates the objects a `let` binds; one `Create` op per handle.
    fn lower_creation(&mut self, api: &Api, args: &BoundArgs, pattern: &ast::Pattern, call: &ast::Call) -> Vec<ObjId> {
        let names = pattern.names();
        let Some(kinds) = self.created_kinds(api, args, names.len(), call) else {
            return Vec::new();
        };
        if kinds.len() != names.len() {
            let message = format!(
                "`{}` creates {} handle(s) but {} name(s) are bound",
                api.name,
                kinds.len(),
                names.len()
            );
            self.syntax_error(&call.span, message, "make the names match the count");
            return Vec::new();
        }
        names
            .iter()
            .zip(kinds)
            .map(|(name, kind)| self.new_object(name, kind, api.name))
            .collect()
    }

    /// The objects a creating call makes, in binding order.
    fn created_kinds(
        &mut self,
        api: &Api,
        args: &BoundArgs,
        bound: usize,
        call: &ast::Call,
    ) -> Option<Vec<ObjectKind>> {
        let arg = |i: usize| args.get(i);
        Some(match api.creates {
            Creates::Nothing => Vec::new(),
            Creates::Stream => vec![ObjectKind::Stream],
            Creates::Notify => vec![ObjectKind::Notify],
            Creates::Comm => vec![ObjectKind::Comm],
            Creates::Event(semantics, creator) => {
                let flags = match arg(0) {
                    Some(expr) => self.arg_flags(expr)?,
                    None => 0,
                };
                vec![ObjectKind::Event(EventInfo {
                    semantics,
                    creator,
                    flags,
                })]
            }
            Creates::DeviceBuffer | Creates::HostBuffer => {
                let size = self.lower_expr(arg(0)?);
                let space = if api.creates == Creates::DeviceBuffer {
                    MemorySpace::Device
                } else {
                    MemorySpace::Host
                };
                vec![ObjectKind::Buffer(BufferInfo { space, size })]
            }
            Creates::HcclLocalBuffer | Creates::HcclPeerBuffer => {
                self.arg_object(arg(0)?, ArgKind::Comm)?;
                let space = match api.creates {
                    Creates::HcclPeerBuffer => MemorySpace::HcclPeer(self.arg_object(arg(1)?, ArgKind::Channel)?),
                    _ => MemorySpace::HcclLocal,
                };
                let size = Expr::Int(self.program.settings.hccl_buffer_size as i64);
                vec![ObjectKind::Buffer(BufferInfo { space, size })]
            }
            Creates::HcclThreads => {
                self.arg_object(arg(0)?, ArgKind::Comm)?;
                self.arg_enum(arg(1)?, api::EnumFamily::Engine)?;
                let count = self.lower_expr(arg(2)?);
                if count.as_const() != Some(bound as i64) {
                    let message = format!("`threadNum` must be the number of names bound ({bound})");
                    self.syntax_error(&arg(2)?.span, message, "threadNum and the `let [...]` list disagree");
                    return None;
                }
                let notify_num = self.lower_expr(arg(3)?);
                vec![
                    ObjectKind::HcclThread {
                        stream: None,
                        notify_num
                    };
                    bound
                ]
            }
            Creates::HcclThreadOnStream => {
                self.arg_object(arg(0)?, ArgKind::Comm)?;
                self.arg_enum(arg(1)?, api::EnumFamily::Engine)?;
                let stream = self.arg_object(arg(2)?, ArgKind::Stream)?;
                let notify_num = self.lower_expr(arg(3)?);
                vec![ObjectKind::HcclThread {
                    stream: Some(stream),
                    notify_num,
                }]
            }
            Creates::Channels => self.created_channels(args, call)?,
        })
    }

    fn created_channels(&mut self, args: &BoundArgs, call: &ast::Call) -> Option<Vec<ObjectKind>> {
        let comm = self.arg_object(args.get(0)?, ArgKind::Comm)?;
        let engine = self.arg_enum(args.get(1)?, api::EnumFamily::Engine)?;
        let descs = self.arg_channel_descs(args.get(2)?);
        let count_expr = args.get(3)?;
        if self.lower_expr(count_expr).as_const() != Some(descs.len() as i64) {
            let message = format!(
                "`channelNum` must equal the number of channel descriptors ({})",
                descs.len()
            );
            self.syntax_error(&count_expr.span, message, "channelNum disagrees with channelDescs");
            return None;
        }
        if descs.is_empty() {
            self.syntax_error(&call.span, "`HcclChannelAcquire` needs at least one descriptor", "");
            return None;
        }
        Some(
            descs
                .into_iter()
                .map(|desc| {
                    ObjectKind::Channel(ChannelInfo {
                        comm,
                        remote_rank: desc.remote_rank,
                        protocol: desc.protocol,
                        notify_num: desc.notify_num,
                        engine: engine.clone(),
                    })
                })
                .collect(),
        )
    }

    /// The op of a call that creates nothing.
    fn lower_effect(&mut self, api: &Api, args: &BoundArgs, call: &ast::Call) -> Option<OpKind> {
        let arg = |i: usize| args.get(i);
        let kind = |i: usize| api.params[i].kind;
        Some(match api.effect {
            Effect::Create => return None,
            Effect::Destroy => {
                let expr = arg(0)?;
                let id = match kind(0) {
                    ArgKind::Ptr => self.arg_ptr(expr, None)?.buffer,
                    other => self.arg_object(expr, other)?,
                };
                OpKind::Destroy(id)
            }
            Effect::EventRecord => OpKind::EventRecord {
                event: self.arg_object(arg(0)?, ArgKind::Event)?,
                stream: self.optional_stream(arg(1))?,
            },
            Effect::EventWait => OpKind::EventWait {
                stream: self.arg_object(arg(0)?, ArgKind::Stream)?,
                event: self.arg_object(arg(1)?, ArgKind::Event)?,
                timeout: self.optional_timeout(api, args, 2),
            },
            Effect::EventReset => OpKind::EventReset {
                event: self.arg_object(arg(0)?, ArgKind::Event)?,
                stream: self.arg_object(arg(1)?, ArgKind::Stream)?,
            },
            Effect::EventQuery { wait_status } => OpKind::EventQuery {
                event: self.arg_object(arg(0)?, ArgKind::Event)?,
                wait_status,
            },
            Effect::EventSynchronize => OpKind::EventSynchronize {
                event: self.arg_object(arg(0)?, ArgKind::Event)?,
                timeout: self.optional_timeout(api, args, 1),
            },
            Effect::StreamSynchronize => OpKind::StreamSynchronize {
                stream: self.arg_object(arg(0)?, ArgKind::Stream)?,
                timeout: self.optional_timeout(api, args, 1),
            },
            Effect::DeviceSynchronize => OpKind::DeviceSynchronize,
            Effect::NotifyRecord => OpKind::NotifyRecord {
                notify: self.arg_object(arg(0)?, ArgKind::Notify)?,
                stream: self.arg_object(arg(1)?, ArgKind::Stream)?,
            },
            Effect::NotifyWait => OpKind::NotifyWait {
                notify: self.arg_object(arg(0)?, ArgKind::Notify)?,
                stream: self.arg_object(arg(1)?, ArgKind::Stream)?,
                timeout: self.optional_timeout(api, args, 2),
            },
            Effect::ChannelNotifyRecord => OpKind::ChannelNotifyRecord {
                thread: self.arg_object(arg(0)?, ArgKind::Thread)?,
                channel: self.arg_object(arg(1)?, ArgKind::Channel)?,
                index: self.lower_expr(arg(2)?),
            },
            Effect::ChannelNotifyWait => OpKind::ChannelNotifyWait {
                thread: self.arg_object(arg(0)?, ArgKind::Thread)?,
                channel: self.arg_object(arg(1)?, ArgKind::Channel)?,
                index: self.lower_expr(arg(2)?),
                timeout: self.optional_timeout(api, args, 3),
            },
            Effect::ThreadNotifyRecord => OpKind::ThreadNotifyRecord {
                thread: self.arg_object(arg(0)?, ArgKind::Thread)?,
                target: self.arg_object(arg(1)?, ArgKind::Thread)?,
                index: self.lower_expr(arg(2)?),
            },
            Effect::ThreadNotifyWait => OpKind::ThreadNotifyWait {
                thread: self.arg_object(arg(0)?, ArgKind::Thread)?,
                index: self.lower_expr(arg(1)?),
                timeout: self.optional_timeout(api, args, 2),
            },
            Effect::RemoteWrite { with_notify } => {
                let (thread, channel, dst, src) = self.transfer_args(args)?;
                let notify = if with_notify {
                    Some(self.lower_expr(arg(5)?))
                } else {
                    None
                };
                OpKind::RemoteWrite {
                    thread,
                    channel,
                    dst,
                    src,
                    notify,
                }
            }
            Effect::RemoteRead => {
                let (thread, channel, dst, src) = self.transfer_args(args)?;
                OpKind::RemoteRead {
                    thread,
                    channel,
                    dst,
                    src,
                }
            }
            Effect::LocalCopy => {
                let thread = self.arg_object(arg(0)?, ArgKind::Thread)?;
                let len = self.lower_expr(arg(3)?);
                let dst = self.arg_ptr(arg(1)?, Some(len.clone()))?;
                let src = self.arg_ptr(arg(2)?, Some(len))?;
                OpKind::LocalCopy { thread, dst, src }
            }
            Effect::Fence { channel } => OpKind::Fence {
                thread: self.arg_object(arg(0)?, ArgKind::Thread)?,
                channel: if channel {
                    Some(self.arg_object(arg(1)?, ArgKind::Channel)?)
                } else {
                    None
                },
            },
            Effect::ThreadSynchronize => OpKind::ThreadSynchronize {
                thread: self.arg_object(arg(0)?, ArgKind::Thread)?,
            },
            Effect::Kernel => OpKind::Kernel {
                stream: self.arg_object(arg(0)?, ArgKind::Stream)?,
                name: self.arg_string(arg(1)?)?,
                reads: arg(2).map(|e| self.arg_ranges(e)).unwrap_or_default(),
                writes: arg(3).map(|e| self.arg_ranges(e)).unwrap_or_default(),
            },
            Effect::Memcpy { with_stream } => self.lower_memcpy(api, args, with_stream)?,
            Effect::HostAccess { write } => OpKind::HostAccess {
                write,
                range: self.arg_ptr(arg(0)?, None)?,
            },
            Effect::SetWaitTimeout => OpKind::SetWaitTimeout(self.optional_timeout(api, args, 0)?),
            Effect::GeHcomRecord | Effect::GeHcomWait | Effect::GeAicpuKfc | Effect::GeAiCore | Effect::GeCcu => {
                return None;
            }
            Effect::DataCopy => self.lower_data_copy(args, call)?,
            Effect::SetNextTaskStart => {
                let generics = call.generics.as_deref().unwrap_or_default();
                OpKind::SetNextTaskStart {
                    aiv_pipe: self.generic_pipe(generics.first(), Pipe::Mte3)?,
                    aic_pipe: self.generic_pipe(generics.get(1), Pipe::Fix)?,
                    force: self.generic_bool(generics.get(2))?,
                }
            }
            Effect::WaitPreTaskEnd => {
                let generics = call.generics.as_deref().unwrap_or_default();
                OpKind::WaitPreTaskEnd {
                    force: self.generic_bool(generics.first())?,
                }
            }
        })
    }

    fn optional_stream(&mut self, expr: Option<&ast::Expr>) -> Option<ObjId> {
        match expr {
            Some(expr) => self.arg_object(expr, ArgKind::Stream),
            None => Some(crate::model::Program::DEFAULT_STREAM),
        }
    }

    fn optional_timeout(&mut self, api: &Api, args: &BoundArgs, index: usize) -> Option<crate::model::Timeout> {
        let param = api.params.get(index)?;
        let ArgKind::Timeout(unit) = param.kind else {
            return None;
        };
        let expr = args.get(index)?;
        Some(self.arg_timeout(expr, unit))
    }

    /// `(thread, channel, dst, src, len, ...)` of the Hcomm transfer calls.
    fn transfer_args(
        &mut self,
        args: &BoundArgs,
    ) -> Option<(ObjId, ObjId, crate::model::MemRange, crate::model::MemRange)> {
        let thread = self.arg_object(args.get(0)?, ArgKind::Thread)?;
        let channel = self.arg_object(args.get(1)?, ArgKind::Channel)?;
        let len = self.lower_expr(args.get(4)?);
        let dst = self.arg_ptr(args.get(2)?, Some(len.clone()))?;
        let src = self.arg_ptr(args.get(3)?, Some(len))?;
        Some((thread, channel, dst, src))
    }

    fn lower_memcpy(&mut self, api: &Api, args: &BoundArgs, with_stream: bool) -> Option<OpKind> {
        let index = |name: &str| api.params.iter().position(|p| p.name == name);
        let count = self.lower_expr(args.get(index("count")?)?);
        let dst = self.arg_ptr(args.get(index("dst")?)?, Some(count.clone()))?;
        let src = self.arg_ptr(args.get(index("src")?)?, Some(count))?;
        self.arg_enum(args.get(index("kind")?)?, api::EnumFamily::MemcpyKind)?;
        let dest_max = index("destMax")
            .or_else(|| index("dest_max"))
            .and_then(|i| args.get(i))
            .map(|expr| self.lower_expr(expr));
        let stream = if with_stream {
            Some(self.optional_stream(index("stream").and_then(|i| args.get(i)))?)
        } else {
            None
        };
        Some(OpKind::Memcpy {
            stream,
            dst,
            src,
            dest_max,
        })
    }

    fn lower_data_copy(&mut self, args: &BoundArgs, call: &ast::Call) -> Option<OpKind> {
        let dst = self.arg_core_mem(args.get(0)?)?;
        let src = self.arg_core_mem(args.get(1)?)?;
        match (dst, src) {
            (CoreMem::Local, CoreMem::Global(range)) => Some(OpKind::DataCopy {
                direction: CopyDirection::In,
                range,
            }),
            (CoreMem::Global(range), CoreMem::Local) => Some(OpKind::DataCopy {
                direction: CopyDirection::Out,
                range,
            }),
            _ => {
                self.syntax_error(
                    &call.span,
                    "`DataCopy` moves data between global memory and a local buffer",
                    "write `DataCopy(UB, x[0..1 KiB])` (in) or `DataCopy(y[0..1 KiB], UB)` (out)",
                );
                None
            }
        }
    }

    fn generic_pipe(&mut self, expr: Option<&ast::Expr>, default: Pipe) -> Option<Pipe> {
        let Some(expr) = expr else { return Some(default) };
        let name = match &expr.kind {
            ast::ExprKind::Name(path) => path.text.rsplit("::").next().unwrap_or(&path.text),
            _ => "",
        };
        Pipe::from_name(name).or_else(|| {
            let names = Pipe::NAMES.iter().map(|(n, _)| *n);
            self.unknown_name(&expr.span, "pipe", name, names);
            None
        })
    }

    fn generic_bool(&mut self, expr: Option<&ast::Expr>) -> Option<bool> {
        match expr.map(|e| &e.kind) {
            None => Some(false),
            Some(ast::ExprKind::Bool(value)) => Some(*value),
            Some(_) => {
                self.syntax_error(&expr?.span, "`FORCE` is `true` or `false`", "");
                None
            }
        }
    }

    fn check_context_arg(&mut self, expr: &ast::Expr) -> Option<()> {
        match &expr.kind {
            ast::ExprKind::Name(path) if path.text == "context" => Some(()),
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

    /// A gen-task factory call: one entry of the op's serialized task list.
    fn lower_ge_task(&mut self, index: usize, api: &Api, args: &BoundArgs, call: &ast::Call) {
        if let Some(task) = self.ge_task(api, args, call) {
            self.program.ge_ops[index].tasks.push(task);
        }
    }

    fn ge_task(&mut self, api: &Api, args: &BoundArgs, call: &ast::Call) -> Option<GeTask> {
        self.check_context_arg(args.get(0)?)?;
        let arg = |name: &str| api.params.iter().position(|p| p.name == name).and_then(|i| args.get(i));
        let stream_id = match arg("stream_id") {
            Some(expr) => u32::try_from(self.const_int(expr)?).ok()?,
            None => 0,
        };
        let kind = match api.effect {
            Effect::GeHcomRecord => {
                let (group, group_span) = self.group_name(arg("group_name"), call)?;
                GeTaskKind::HcomRecord { group, group_span }
            }
            Effect::GeHcomWait => {
                let (group, group_span) = self.group_name(arg("group_name"), call)?;
                GeTaskKind::HcomWait { group, group_span }
            }
            Effect::GeAicpuKfc => GeTaskKind::AicpuKfc {
                so_name: self.arg_string(arg("so_name")?)?,
                kernel_name: self.arg_string(arg("kernel_name")?)?,
            },
            Effect::GeAiCore => GeTaskKind::AiCore {
                name: self.arg_string(arg("data")?)?,
            },
            _ => GeTaskKind::Ccu {
                groups: self.arg_strings(arg("groups")?),
            },
        };
        Some(GeTask {
            api: api.name.to_string(),
            kind,
            stream_id,
            span: self.span(&call.span),
        })
    }

    /// The `group_name` argument, or the API's default `"group"` (spanning the call).
    fn group_name(&mut self, expr: Option<&ast::Expr>, call: &ast::Call) -> Option<(String, crate::source::Span)> {
        match expr {
            Some(expr) => Some((self.arg_string(expr)?, self.span(&expr.span))),
            None => Some(("group".to_string(), self.span(&call.span))),
        }
    }
}
