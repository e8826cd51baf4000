//! One API call to its model op, independent of the frontend that read it.
//!
//! Each frontend resolves a call's arguments from its own syntax (`.sync` expressions,
//! trace JSON) to [`ArgValue`]s in the API's parameter order, reporting problems in its
//! own terms; everything after that is shared, so a call means the same in every input.

use crate::api::{Api, Creates, Effect, Existing};
use crate::model::{
    ArrayShape, BinOp, BufferInfo, ChannelInfo, CopyDirection, CopyKind, CoreClaim, EventCreator, EventInfo,
    EventSemantics, Expr, GeTaskKind, KernelLaunch, MemRange, MemoryCopy, MemorySpace, ObjId, ObjectKind, OpKind,
    Program, StreamSync, Timeout, ValueCondition,
};
use crate::source::Span;

/// One resolved argument.
#[derive(Clone, Debug)]
pub enum ArgValue {
    Object(ObjId),
    Objects(Vec<ObjId>),
    Int(Expr),
    Address(Address),
    Ranges(Vec<MemRange>),
    Timeout(Timeout),
    Flags(u32),
    /// A constant of an [`crate::api::EnumFamily`].
    Enum(&'static str),
    Str(String, Span),
    Strs(Vec<String>),
    ChannelDescs(Vec<ChannelDesc>),
    /// `[desc for i in range]`: `shape.len` descriptors, `desc` over `shape.element`.
    ChannelDescArray(ChannelDesc, ArrayShape),
    CoreMem(CoreMem),
    /// `cudaPitchedPtr`.
    Pitched(Pitched),
    /// `cudaExtent`: width in bytes, height in rows, depth in slices.
    Extent([Expr; 3]),
    /// `cudaMemcpy3DParms`.
    Copy3D(Box<Copy3D>),
    /// A value the model does not use (`rootInfo`, the gen-task `context`).
    Opaque,
}

/// A pointer argument: a place in a buffer, with a length only if the syntax gave one
/// (`buf[a..b]`); the API's own length argument wins over it.
#[derive(Clone, Debug)]
pub struct Address {
    pub buffer: ObjId,
    pub offset: Expr,
    pub len: Option<Expr>,
    pub span: Span,
}

impl Address {
    /// The bytes the call touches: `len` if the API has a length argument, else the
    /// written length, else the rest of the buffer.
    pub fn range(&self, len: Option<Expr>, program: &Program) -> MemRange {
        let len = len
            .or_else(|| self.len.clone())
            .unwrap_or_else(|| match &program.object(self.buffer).kind {
                ObjectKind::Buffer(info) => {
                    Expr::Binary(BinOp::Sub, Box::new(info.size.clone()), Box::new(self.offset.clone()))
                }
                _ => Expr::Int(0),
            });
        MemRange {
            buffer: self.buffer,
            offset: self.offset.clone(),
            len,
            span: self.span.clone(),
        }
    }
}

/// A `cudaPitchedPtr`: `ysize` rows of `pitch` bytes per slice, from `address`.
#[derive(Clone, Debug)]
pub struct Pitched {
    pub address: Address,
    pub pitch: Expr,
    pub ysize: Expr,
}

/// A `cudaMemcpy3DParms`: positions are `x` (bytes), `y` (rows), `z` (slices).
#[derive(Clone, Debug)]
pub struct Copy3D {
    pub src: Pitched,
    pub src_pos: [Expr; 3],
    pub dst: Pitched,
    pub dst_pos: [Expr; 3],
    pub extent: [Expr; 3],
    /// A `cudaMemcpyKind` constant.
    pub kind: &'static str,
}

/// The bytes an `extent` at `pos` of a pitched pointer spans, from the first row's
/// start to the last row's end: the gaps between rows and slices count as touched.
pub fn pitched_range(pitched: &Pitched, pos: &[Expr; 3], extent: &[Expr; 3], program: &Program) -> MemRange {
    let add = |a: Expr, b: Expr| Expr::Binary(BinOp::Add, Box::new(a), Box::new(b));
    let mul = |a: Expr, b: Expr| Expr::Binary(BinOp::Mul, Box::new(a), Box::new(b));
    let before_last = |count: &Expr| Expr::Binary(BinOp::Sub, Box::new(count.clone()), Box::new(Expr::Int(1)));
    let slice = mul(pitched.pitch.clone(), pitched.ysize.clone());
    let [x, y, z] = pos.clone();
    let [width, height, depth] = extent;
    let start = add(add(x, mul(y, pitched.pitch.clone())), mul(z, slice.clone()));
    let len = add(
        add(
            mul(before_last(depth), slice),
            mul(before_last(height), pitched.pitch.clone()),
        ),
        width.clone(),
    );
    let mut range = pitched.address.range(Some(len), program);
    range.offset = add(range.offset, start);
    range
}

/// One `HcclChannelDesc`.
#[derive(Clone, Debug)]
pub struct ChannelDesc {
    pub remote_rank: Expr,
    pub protocol: String,
    pub notify_num: Expr,
}

impl ChannelDesc {
    /// Descriptor `k` of a `[... for ...]` list over `element`.
    pub fn at(&self, element: crate::model::VarId, k: i64) -> ChannelDesc {
        let k = Expr::Int(k);
        ChannelDesc {
            remote_rank: self.remote_rank.substitute(element, &k),
            protocol: self.protocol.clone(),
            notify_num: self.notify_num.substitute(element, &k),
        }
    }
}

/// Where a core's `DataCopy` moves data: a local buffer or a global-memory range.
#[derive(Clone, Debug)]
pub enum CoreMem {
    Local,
    Global(MemRange),
}

/// A call's arguments in parameter order (`None`: an optional parameter left out).
#[derive(Clone, Debug, Default)]
pub struct CallArgs {
    pub values: Vec<Option<ArgValue>>,
}

impl CallArgs {
    pub fn get(&self, index: usize) -> Option<&ArgValue> {
        self.values.get(index)?.as_ref()
    }

    /// The argument of the parameter called `name`.
    pub fn named(&self, api: &Api, name: &str) -> Option<&ArgValue> {
        self.get(api.params.iter().position(|p| p.name == name)?)
    }

    pub fn object(&self, index: usize) -> Option<ObjId> {
        match self.get(index)? {
            ArgValue::Object(id) => Some(*id),
            _ => None,
        }
    }

    /// A stream argument; a left-out optional stream is the default stream.
    fn stream_or_default(&self, index: usize, program: &Program) -> Option<ObjId> {
        match self.get(index) {
            None => Some(program.default_stream()),
            Some(_) => self.object(index),
        }
    }

    pub fn int(&self, index: usize) -> Option<Expr> {
        match self.get(index)? {
            ArgValue::Int(expr) => Some(expr.clone()),
            _ => None,
        }
    }

    fn address(&self, index: usize) -> Option<&Address> {
        match self.get(index)? {
            ArgValue::Address(address) => Some(address),
            _ => None,
        }
    }

    /// Boxed: a timeout (an expression and a span) would make every `Op` larger.
    fn timeout(&self, index: usize) -> Option<Box<Timeout>> {
        match self.get(index)? {
            ArgValue::Timeout(timeout) => Some(Box::new(timeout.clone())),
            _ => None,
        }
    }

    fn string(&self, api: &Api, name: &str) -> Option<(String, Span)> {
        match self.named(api, name)? {
            ArgValue::Str(text, span) => Some((text.clone(), span.clone())),
            _ => None,
        }
    }

    fn flags(&self, index: usize) -> Option<u32> {
        match self.get(index)? {
            ArgValue::Flags(flags) => Some(*flags),
            _ => None,
        }
    }

    fn core_mem(&self, index: usize) -> Option<&CoreMem> {
        match self.get(index)? {
            ArgValue::CoreMem(mem) => Some(mem),
            _ => None,
        }
    }
}

/// `aclrtValueWrite` / `aclrtValueWait` (and the driver's `cuStream*Value*`, whose
/// parameters come in another order): the word is `bits / 8` bytes at the address.
fn value_op(api: &Api, args: &CallArgs, bits: u8, program: &Program) -> Option<OpKind> {
    let index = |names: &[&str]| api.params.iter().position(|p| names.contains(&p.name));
    let word = args
        .address(index(&["devAddr", "dev_addr", "addr"])?)?
        .range(Some(Expr::Int(i64::from(bits / 8))), program);
    let stream = args.stream_or_default(index(&["stream"])?, program)?;
    let value = args.int(index(&["value"])?)?;
    let flags = args.flags(index(&["flag", "flags"])?).unwrap_or(0);
    Some(match api.effect {
        Effect::ValueWait { .. } => OpKind::ValueWait {
            stream,
            word: Box::new(word),
            value,
            condition: ValueCondition::from_flags(flags),
            bits,
        },
        _ => OpKind::ValueWrite {
            stream,
            word: Box::new(word),
            value,
            bits,
        },
    })
}

/// The op of a host call that creates nothing; `None` for effects that are not host
/// ops (creation, gen-task factories, the template-driven core calls).
pub fn effect_op(api: &Api, args: &CallArgs, program: &Program) -> Option<OpKind> {
    let obj = |i: usize| args.object(i);
    let int = |i: usize| args.int(i);
    Some(match api.effect {
        Effect::Destroy => match args.get(0)? {
            ArgValue::Address(address) => OpKind::Destroy(address.buffer),
            _ => OpKind::Destroy(obj(0)?),
        },
        Effect::EventRecord => OpKind::EventRecord {
            event: obj(0)?,
            stream: args.stream_or_default(1, program)?,
        },
        Effect::EventWait => OpKind::EventWait {
            stream: obj(0)?,
            event: obj(1)?,
            timeout: args.timeout(2),
        },
        Effect::EventReset => OpKind::EventReset {
            event: obj(0)?,
            stream: obj(1)?,
        },
        Effect::EventQuery { wait_status } => OpKind::EventQuery {
            event: obj(0)?,
            wait_status,
        },
        Effect::EventElapsedTime => OpKind::EventElapsedTime {
            start: obj(0)?,
            end: obj(1)?,
        },
        Effect::EventSynchronize => OpKind::EventSynchronize {
            event: obj(0)?,
            timeout: args.timeout(1),
        },
        Effect::StreamSynchronize => OpKind::StreamSynchronize {
            stream: obj(0)?,
            timeout: args.timeout(1),
        },
        Effect::DeviceSynchronize => OpKind::DeviceSynchronize,
        Effect::NotifyRecord => OpKind::NotifyRecord {
            notify: obj(0)?,
            stream: obj(1)?,
        },
        Effect::NotifyWait => OpKind::NotifyWait {
            notify: obj(0)?,
            stream: obj(1)?,
            timeout: args.timeout(2),
        },
        Effect::ChannelNotifyRecord => OpKind::ChannelNotifyRecord {
            thread: obj(0)?,
            channel: obj(1)?,
            index: int(2)?,
        },
        Effect::ChannelNotifyWait => OpKind::ChannelNotifyWait {
            thread: obj(0)?,
            channel: obj(1)?,
            index: int(2)?,
            timeout: args.timeout(3),
        },
        Effect::ThreadNotifyRecord => OpKind::ThreadNotifyRecord {
            thread: obj(0)?,
            target: obj(1)?,
            index: int(2)?,
        },
        Effect::ThreadNotifyWait => OpKind::ThreadNotifyWait {
            thread: obj(0)?,
            index: int(1)?,
            timeout: args.timeout(2),
        },
        Effect::RemoteWrite { with_notify, reduce } => {
            let len = transfer_len(api, args, reduce)?;
            OpKind::RemoteWrite {
                thread: obj(0)?,
                channel: obj(1)?,
                dst: Box::new(args.address(2)?.range(Some(len.clone()), program)),
                src: Box::new(args.address(3)?.range(Some(len), program)),
                notify: if with_notify {
                    Some(Box::new(args.int(api.params.len() - 1)?))
                } else {
                    None
                },
            }
        }
        Effect::RemoteRead { reduce } => {
            let len = transfer_len(api, args, reduce)?;
            OpKind::RemoteRead {
                thread: obj(0)?,
                channel: obj(1)?,
                dst: Box::new(args.address(2)?.range(Some(len.clone()), program)),
                src: Box::new(args.address(3)?.range(Some(len), program)),
            }
        }
        Effect::LocalCopy { reduce } => {
            let len = transfer_len(api, args, reduce)?;
            OpKind::LocalCopy {
                thread: obj(0)?,
                dst: Box::new(args.address(1)?.range(Some(len.clone()), program)),
                src: Box::new(args.address(2)?.range(Some(len), program)),
            }
        }
        Effect::NotifyRecordOnThread => OpKind::NotifyRecord {
            notify: obj(1)?,
            stream: obj(0)?,
        },
        Effect::NotifyWaitOnThread => OpKind::NotifyWait {
            notify: obj(1)?,
            stream: obj(0)?,
            timeout: args.timeout(2),
        },
        Effect::Fence { channel } => OpKind::Fence {
            thread: obj(0)?,
            channel: if channel { Some(obj(1)?) } else { None },
        },
        Effect::ThreadSynchronize => OpKind::ThreadSynchronize { thread: obj(0)? },
        Effect::Kernel => OpKind::Kernel {
            stream: args.stream_or_default(api.params.iter().position(|p| p.name == "stream")?, program)?,
            launch: Box::new(KernelLaunch {
                // A real launch names its kernel by a function handle the model cannot read.
                name: ["name", "funcHandle", "func"]
                    .into_iter()
                    .find_map(|param| args.string(api, param))
                    .map_or_else(|| api.name.to_string(), |(name, _)| name),
                reads: ranges(args.named(api, "reads")),
                writes: ranges(args.named(api, "writes")),
                cores: core_claim(api, args),
            }),
        },
        Effect::HostFunc => OpKind::Kernel {
            stream: args.stream_or_default(0, program)?,
            launch: Box::new(KernelLaunch {
                name: "host function".into(),
                reads: Vec::new(),
                writes: Vec::new(),
                cores: None,
            }),
        },
        Effect::Memcpy { with_stream } => memcpy(api, args, with_stream, program)?,
        Effect::Memset { with_stream } => {
            let index = |name: &str| api.params.iter().position(|p| p.name == name);
            let range = match (args.get(0)?, index("extent").and_then(|i| args.get(i))) {
                (ArgValue::Pitched(pitched), Some(ArgValue::Extent(extent))) => {
                    let origin = [Expr::Int(0), Expr::Int(0), Expr::Int(0)];
                    pitched_range(pitched, &origin, extent, program)
                }
                _ => {
                    let count = match index("count") {
                        Some(count) => args.int(count)?,
                        None => rows(api, args, "pitch")?,
                    };
                    args.address(0)?.range(Some(count), program)
                }
            };
            let stream = match (with_stream, api.name.starts_with("cuda")) {
                (true, _) => args.stream_or_default(index("stream")?, program)?,
                // CUDA's synchronous memset is work on the default stream; it may return
                // before the work is done (the CUDA runtime's "API synchronization
                // behavior"), unlike ACL's.
                (false, true) => program.default_stream(),
                (false, false) => {
                    return Some(OpKind::HostAccess {
                        write: true,
                        range: Box::new(range),
                    });
                }
            };
            OpKind::Kernel {
                stream,
                launch: Box::new(KernelLaunch {
                    name: "memset".into(),
                    reads: Vec::new(),
                    writes: vec![range],
                    cores: None,
                }),
            }
        }
        Effect::HostAccess { write } => OpKind::HostAccess {
            write,
            range: Box::new(args.address(0)?.range(None, program)),
        },
        Effect::SetWaitTimeout => OpKind::SetWaitTimeout(args.timeout(0)?),
        Effect::IpcExport => {
            let key = args
                .string(api, "handle")
                .or_else(|| args.string(api, "key"))?
                .0
                .into_boxed_str();
            match args.get(0)? {
                ArgValue::Address(address) => OpKind::IpcExport {
                    obj: address.buffer,
                    offset: address.offset.clone(),
                    key,
                },
                _ => OpKind::IpcExport {
                    obj: obj(0)?,
                    offset: Expr::Int(0),
                    key,
                },
            }
        }
        Effect::ValueWrite { bits } | Effect::ValueWait { bits } => value_op(api, args, bits, program)?,
        Effect::HostRegister { register: true } => {
            let size = args.int(1)?;
            OpKind::HostRegister(Box::new(args.address(0)?.range(Some(size), program)))
        }
        Effect::HostRegister { register: false } => {
            OpKind::HostUnregister(Box::new(args.address(0)?.range(Some(Expr::Int(0)), program)))
        }
        Effect::SetCurrentContext => OpKind::SetCurrentContext(obj(0)?),
        Effect::BeginCapture => OpKind::BeginCapture {
            stream: obj(0)?,
            relaxed: matches!(
                args.named(api, "mode"),
                Some(ArgValue::Enum(
                    "cudaStreamCaptureModeRelaxed" | "ACL_MODEL_RI_CAPTURE_MODE_RELAXED"
                ))
            ),
        },
        Effect::SetDevice => OpKind::SetDevice(int(0)?),
        Effect::GraphLaunch => OpKind::GraphLaunch {
            graph: obj(0)?,
            stream: args.stream_or_default(1, program)?,
        },
        Effect::BatchMode { start } => OpKind::BatchMode {
            start,
            tag: args.string(api, "batchTag")?.0,
        },
        Effect::DataCopy => match (args.core_mem(0)?, args.core_mem(1)?) {
            (CoreMem::Local, CoreMem::Global(range)) => OpKind::DataCopy {
                direction: CopyDirection::In,
                range: Box::new(range.clone()),
            },
            (CoreMem::Global(range), CoreMem::Local) => OpKind::DataCopy {
                direction: CopyDirection::Out,
                range: Box::new(range.clone()),
            },
            _ => return None,
        },
        Effect::Create
        | Effect::None
        | Effect::NotifyId
        | Effect::ThreadAlias
        | Effect::GeFusion
        | Effect::GeSetStreamId
        | Effect::GeHcomRecord
        | Effect::GeHcomWait
        | Effect::GeAicpuKfc
        | Effect::GeAiCore
        | Effect::GeCcu
        | Effect::SetNextTaskStart
        | Effect::WaitPreTaskEnd => return None,
    })
}

/// The byte length of a transfer: `len`, or `count` elements of `dataType` for the
/// reduce variants.
fn transfer_len(api: &Api, args: &CallArgs, reduce: bool) -> Option<Expr> {
    let index = |name: &str| api.params.iter().position(|p| p.name == name);
    if !reduce {
        return args.int(index("len")?);
    }
    let count = args.int(index("count")?)?;
    let ArgValue::Enum(data_type) = args.get(index("dataType")?)? else {
        return None;
    };
    let size = crate::api::data_type_size(data_type)?;
    Some(Expr::Binary(BinOp::Mul, Box::new(count), Box::new(Expr::Int(size))))
}

/// The cores a `kernel` line claims (`vectorCores:`, `schemMode:`, `collective:`);
/// `None` without a constant `vectorCores`.
fn core_claim(api: &Api, args: &CallArgs) -> Option<CoreClaim> {
    let constant = |name: &str| match args.named(api, name)? {
        ArgValue::Int(expr) => expr.as_const(),
        _ => None,
    };
    Some(CoreClaim {
        vector_cores: u32::try_from(constant("vectorCores")?).ok()?,
        all_at_once: constant("schemMode") == Some(1),
        collective: constant("collective").is_some_and(|flag| flag != 0),
    })
}

fn ranges(value: Option<&ArgValue>) -> Vec<MemRange> {
    match value {
        Some(ArgValue::Ranges(ranges)) => ranges.clone(),
        _ => Vec::new(),
    }
}

fn memcpy(api: &Api, args: &CallArgs, with_stream: bool, program: &Program) -> Option<OpKind> {
    let index = |name: &str| api.params.iter().position(|p| p.name == name);
    let copy3d = match index("p").and_then(|i| args.get(i)) {
        Some(ArgValue::Copy3D(copy)) => Some(copy),
        _ => None,
    };
    let (dst, src) = match copy3d {
        Some(copy) => (
            pitched_range(&copy.dst, &copy.dst_pos, &copy.extent, program),
            pitched_range(&copy.src, &copy.src_pos, &copy.extent, program),
        ),
        None => {
            let (dst_len, src_len) = match index("count") {
                Some(count) => (args.int(count)?, args.int(count)?),
                // `cudaMemcpy2D`: `height` rows of `width` bytes, `dpitch` / `spitch` apart.
                None => (rows(api, args, "dpitch")?, rows(api, args, "spitch")?),
            };
            (
                args.address(index("dst")?)?.range(Some(dst_len), program),
                args.address(index("src")?)?.range(Some(src_len), program),
            )
        }
    };
    let dest_max = index("destMax").or_else(|| index("dest_max")).and_then(|i| args.int(i));
    let stream = match with_stream {
        true => Some(match index("stream") {
            Some(i) => args.stream_or_default(i, program)?,
            None => program.default_stream(),
        }),
        false => None,
    };
    let cuda = api.name.starts_with("cuda");
    let kind = match (copy3d, index("kind").and_then(|i| args.get(i))) {
        (Some(copy), _) => CopyKind::from_name(copy.kind),
        (_, Some(ArgValue::Enum(name))) => CopyKind::from_name(name),
        _ => CopyKind::Default,
    };
    Some(OpKind::Memcpy {
        stream,
        copy: Box::new(MemoryCopy {
            synchronous_on: (!with_stream && cuda).then(|| program.default_stream()),
            dst,
            src,
            dest_max,
            kind,
            staged_by_cuda: cuda,
        }),
    })
}

/// The bytes `height` rows of `width` bytes, `pitch` apart, span: from the first row's
/// start to the last row's end (the gaps between rows are counted as touched).
fn rows(api: &Api, args: &CallArgs, pitch: &str) -> Option<Expr> {
    let int = |name: &str| args.int(api.params.iter().position(|p| p.name == name)?);
    let (pitch, width, height) = (int(pitch)?, int("width")?, int("height")?);
    let rows_before_last = Expr::Binary(BinOp::Sub, Box::new(height), Box::new(Expr::Int(1)));
    let before_last = Expr::Binary(BinOp::Mul, Box::new(pitch), Box::new(rows_before_last));
    Some(Expr::Binary(BinOp::Add, Box::new(before_last), Box::new(width)))
}

/// The handle or key an IPC open names (`aclrtIpcOpenEventHandle`,
/// `aclrtNotifyImportByKey`): what the exporting process obtained.
pub fn ipc_key(api: &Api, args: &CallArgs) -> Option<String> {
    match api.creates {
        Creates::IpcEvent | Creates::IpcNotify | Creates::IpcMemory => {
            Some(args.string(api, api.params.first()?.name)?.0)
        }
        _ => None,
    }
}

/// How a created stream is ordered against CUDA's legacy default stream: blocking,
/// unless created with `cudaStreamNonBlocking` (ACL streams never are).
fn stream_sync(api: &Api, args: &CallArgs) -> StreamSync {
    const CUDA_STREAM_NON_BLOCKING: u32 = 0x1;
    let flags = args.named(api, "flags").and_then(|value| match value {
        ArgValue::Flags(flags) => Some(*flags),
        _ => None,
    });
    if !api.name.starts_with("cuda") || flags.is_some_and(|f| f & CUDA_STREAM_NON_BLOCKING != 0) {
        StreamSync::Independent
    } else {
        StreamSync::Blocking
    }
}

/// The objects a creating call makes, in handle order. `count` is the number of
/// handles the call returns, which the frontend has checked against the call's own
/// count argument (`threadNum`, `channelNum`).
pub fn created_objects(api: &Api, args: &CallArgs, count: usize, program: &Program) -> Option<Vec<ObjectKind>> {
    let engine = || match args.named(api, "engine") {
        Some(ArgValue::Enum(name)) => name.to_string(),
        _ => String::new(),
    };
    Some(match api.creates {
        Creates::Nothing => Vec::new(),
        Creates::Stream => vec![ObjectKind::Stream(stream_sync(api, args))],
        Creates::Context => vec![ObjectKind::Context { current: false }],
        Creates::CurrentContext => vec![ObjectKind::Context { current: true }],
        Creates::Graph => vec![ObjectKind::Graph {
            stream: args.object(0)?,
        }],
        Creates::GraphExec => vec![ObjectKind::GraphExec { graph: args.object(0)? }],
        Creates::Notify | Creates::IpcNotify => vec![ObjectKind::Notify],
        // CANN makes IPC events with `aclrtCreateEventExWithFlag(ACL_EVENT_IPC)` only.
        // Its size is the exporter's, known once the processes are matched.
        Creates::IpcMemory => vec![ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::Device,
            size: Expr::Int(EXISTING_MEMORY_SIZE),
        })],
        Creates::IpcEvent => vec![ObjectKind::Event(EventInfo {
            semantics: EventSemantics::Capture,
            creator: EventCreator::IpcOpen,
            flags: crate::api::ACL_EVENT_IPC,
        })],
        Creates::Comm => vec![ObjectKind::Comm],
        Creates::Event(semantics, creator) => vec![ObjectKind::Event(EventInfo {
            semantics,
            creator,
            flags: args.flags(0).unwrap_or(0),
        })],
        Creates::DeviceBuffer | Creates::HostBuffer | Creates::PageableHostBuffer => {
            let space = match api.creates {
                Creates::DeviceBuffer => MemorySpace::Device,
                Creates::PageableHostBuffer => MemorySpace::Pageable,
                _ => MemorySpace::Host,
            };
            vec![ObjectKind::Buffer(BufferInfo {
                space,
                size: args.int(0)?,
            })]
        }
        Creates::PitchedDeviceBuffer => vec![ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::Device,
            size: pitched_size(args.int(0)?, args.int(1)?, args.int(2)),
        })],
        Creates::HcclLocalBuffer | Creates::HcclPeerBuffer => {
            let space = match api.creates {
                Creates::HcclPeerBuffer => MemorySpace::HcclPeer(args.object(1)?),
                _ => MemorySpace::HcclLocal,
            };
            let size = Expr::Int(program.settings.hccl_buffer_size as i64);
            vec![ObjectKind::Buffer(BufferInfo { space, size })]
        }
        Creates::HcclThreads => {
            let notify_num = args.int(3)?;
            vec![
                ObjectKind::HcclThread {
                    comm: args.object(0)?,
                    engine: engine(),
                    stream: None,
                    notify_num
                };
                count
            ]
        }
        Creates::HcclThreadOnStream => vec![ObjectKind::HcclThread {
            comm: args.object(0)?,
            engine: engine(),
            stream: Some(args.object(2)?),
            notify_num: args.int(3)?,
        }],
        Creates::Existing(existing) => vec![existing_object(existing, args)?],
        Creates::Channels => {
            let comm = args.object(0)?;
            let descs = match args.get(2) {
                Some(ArgValue::ChannelDescs(descs)) => descs.clone(),
                // One object for the whole array, or the descriptors of a constant count.
                Some(ArgValue::ChannelDescArray(desc, _)) if count <= 1 => vec![desc.clone()],
                Some(ArgValue::ChannelDescArray(desc, shape)) => {
                    (0..count as i64).map(|k| desc.at(shape.element, k)).collect()
                }
                _ => return None,
            };
            descs
                .iter()
                .map(|desc| {
                    ObjectKind::Channel(ChannelInfo {
                        comm,
                        remote_rank: Some(desc.remote_rank.clone()),
                        protocol: desc.protocol.clone(),
                        notify_num: desc.notify_num.clone(),
                        engine: engine(),
                    })
                })
                .collect()
        }
    })
}

/// The synchronize a query stands for once it has seen the work done (a traced query
/// that did, or the end of a busy-wait on it): on its event or stream.
pub fn completion_synchronize(api: &Api, args: &CallArgs) -> Option<OpKind> {
    api.query?;
    let object = args.object(0)?;
    if api.effect == (Effect::EventQuery { wait_status: true }) {
        return Some(OpKind::EventWaitsSynchronize { event: object });
    }
    Some(match api.params.first()?.kind {
        crate::api::ArgKind::Event => OpKind::EventSynchronize {
            event: object,
            timeout: None,
        },
        _ => OpKind::StreamSynchronize {
            stream: object,
            timeout: None,
        },
    })
}

/// The row alignment `cudaMallocPitch` is taken to use when the returned pitch is not
/// given: `texturePitchAlignment` of current GPUs.
const PITCH_ALIGNMENT: i64 = 512;

/// `height` rows of `pitch` bytes; without the returned pitch, `width` rounded up to
/// [`PITCH_ALIGNMENT`].
fn pitched_size(width: Expr, height: Expr, pitch: Option<Expr>) -> Expr {
    let pitch = pitch.unwrap_or_else(|| {
        let padded = Expr::Binary(BinOp::Add, Box::new(width), Box::new(Expr::Int(PITCH_ALIGNMENT - 1)));
        let rows = Expr::Binary(BinOp::Div, Box::new(padded), Box::new(Expr::Int(PITCH_ALIGNMENT)));
        Expr::Binary(BinOp::Mul, Box::new(rows), Box::new(Expr::Int(PITCH_ALIGNMENT)))
    });
    let size = Expr::Binary(BinOp::Mul, Box::new(pitch), Box::new(height));
    size.as_const().map_or(size, Expr::Int)
}

/// The size of memory from before: large enough for any address a trace prints.
pub const EXISTING_MEMORY_SIZE: i64 = 1 << 62;

/// The notify count of an HCCL thread or channel from before: the whole range
/// `notifyNum` may have (`[0, 65535]`, `hccl_res.h`), since its real count is unknown.
const EXISTING_NOTIFY_NUM: i64 = 65535;

/// An object from before the code or trace begins. Its event is capture-kind with
/// unknown flags (a wait before any record passes, as on a record from before); the
/// matching and the rules treat what its state may have been without false alarms.
fn existing_object(existing: Existing, args: &CallArgs) -> Option<ObjectKind> {
    Some(match existing {
        Existing::Event => ObjectKind::Event(EventInfo {
            semantics: EventSemantics::Capture,
            creator: EventCreator::Existing,
            flags: 0,
        }),
        Existing::Notify => ObjectKind::Notify,
        Existing::Comm => ObjectKind::Comm,
        Existing::Thread => ObjectKind::HcclThread {
            comm: args.object(0)?,
            engine: String::new(),
            stream: None,
            notify_num: Expr::Int(EXISTING_NOTIFY_NUM),
        },
        Existing::Channel => ObjectKind::Channel(ChannelInfo {
            comm: args.object(0)?,
            remote_rank: args.int(1),
            protocol: String::new(),
            notify_num: Expr::Int(EXISTING_NOTIFY_NUM),
            engine: String::new(),
        }),
        Existing::Memory => ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::Before,
            size: Expr::Int(EXISTING_MEMORY_SIZE),
        }),
        Existing::PeerMemory => ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::BeforePeer(args.object(0)?),
            size: Expr::Int(EXISTING_MEMORY_SIZE),
        }),
    })
}

/// How many handles a creating call returns, when its arguments say so.
pub fn created_count(api: &Api, args: &CallArgs) -> Option<usize> {
    match api.creates {
        Creates::Nothing => Some(0),
        Creates::HcclThreads => usize::try_from(args.int(2)?.as_const()?).ok(),
        Creates::Channels => match args.get(2)? {
            ArgValue::ChannelDescs(descs) => Some(descs.len()),
            ArgValue::ChannelDescArray(_, shape) => usize::try_from(shape.len.as_const()?).ok(),
            _ => None,
        },
        _ => Some(1),
    }
}

/// A gen-task factory call as one task of the op's list; `call` spans the whole call
/// (where the default group name is reported).
pub fn ge_task_kind(api: &Api, args: &CallArgs, call: &Span) -> Option<GeTaskKind> {
    let group = || {
        args.string(api, "group_name")
            .unwrap_or_else(|| ("group".to_string(), call.clone()))
    };
    Some(match api.effect {
        Effect::GeHcomRecord => {
            let (group, group_span) = group();
            GeTaskKind::HcomRecord { group, group_span }
        }
        Effect::GeHcomWait => {
            let (group, group_span) = group();
            GeTaskKind::HcomWait { group, group_span }
        }
        Effect::GeAicpuKfc => GeTaskKind::AicpuKfc {
            so_name: args.string(api, "so_name")?.0,
            kernel_name: args.string(api, "kernel_name")?.0,
        },
        Effect::GeAiCore => GeTaskKind::AiCore {
            name: args.string(api, "data")?.0,
        },
        Effect::GeFusion => GeTaskKind::AiCore {
            name: "fusion task".into(),
        },
        Effect::GeCcu => GeTaskKind::Ccu {
            groups: match args.named(api, "groups")? {
                ArgValue::Strs(groups) => groups.clone(),
                _ => return None,
            },
        },
        _ => return None,
    })
}

/// The `stream_id` of a gen-task call (0 when not set, as in GE).
pub fn ge_stream_id(api: &Api, args: &CallArgs) -> Option<u32> {
    match args.named(api, "stream_id") {
        None => Some(0),
        Some(ArgValue::Int(expr)) => u32::try_from(expr.as_const()?).ok(),
        Some(_) => None,
    }
}
