//! Inside one Ascend C kernel: the program every AI core runs, as the instructions it
//! issues to its pipes (`PIPE_S` issues in program order; `PIPE_V`, `PIPE_M`,
//! `PIPE_MTE1/2/3` and `PIPE_FIX` each run their own instructions in order), the
//! flags and queues that order the pipes, and the cross-core flags and `SyncAll`
//! that order the cores. The semantics of every call is in `docs/KERNELS.md`.
//!
//! A kernel is separate from the host program: nothing here is a stream or an event.
//! Integer values are the model's [`Expr`]: `GetBlockIdx()` is [`Expr::BlockIdx`],
//! `TILING_KEY_IS(k)` tests [`Expr::TilingKey`], tiling fields are parameters, loop
//! counters are variables.

use crate::model::{Expr, Pipe, VarId};
use crate::source::Span;

/// The index of a kernel's `GM_ADDR` parameter, a local buffer or a local tensor
/// variable, in the kernel's own lists.
pub type GmId = usize;
pub type BufferId = usize;
pub type TensorId = usize;

#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub kind: KernelKind,
    /// The number of blocks it is launched with: a number, or a parameter when the
    /// launch is not in the code read (`GetBlockNum()` is this value).
    pub blocks: Expr,
    /// The compiler inserts the scalar-pipe syncs itself (`--cce-auto-sync`, on by
    /// default): `PIPE_S` is ordered with `PIPE_V`, `PIPE_MTE2` and `PIPE_MTE3`.
    pub auto_sync: bool,
    /// The `GM_ADDR` parameters: global memory from the launch.
    pub gm: Vec<Named>,
    /// Local memory `TPipe::InitBuffer` gives to a `TQue`, `TQueBind` or `TBuf`.
    pub buffers: Vec<LocalBuffer>,
    /// Local tensor variables (`LocalTensor<T> x = q.AllocTensor<T>()`).
    pub tensors: Vec<LocalTensor>,
    pub body: Vec<KStmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Named {
    pub name: String,
    pub span: Span,
}

/// A local tensor variable and the buffer whose slots it takes.
#[derive(Clone, Debug)]
pub struct LocalTensor {
    pub name: String,
    pub buffer: BufferId,
    pub span: Span,
}

/// `KERNEL_TYPE_*` / `__mix__(aic, aiv)`: which cores run the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// `KERNEL_TYPE_AIV_ONLY`: vector cores only, no cross-core scheduler.
    AivOnly,
    /// `KERNEL_TYPE_AIC_ONLY`: cube cores only, no cross-core scheduler.
    AicOnly,
    /// `KERNEL_TYPE_MIX_AIC_1_<aiv>` / `MIX_AIV_1_0` (`aic` 0): `aic` cube and `aiv`
    /// vector cores per block.
    Mix { aic: u8, aiv: u8 },
}

impl KernelKind {
    pub const NAMES: [(&'static str, KernelKind); 6] = [
        ("AIV_ONLY", KernelKind::AivOnly),
        ("AIC_ONLY", KernelKind::AicOnly),
        ("MIX_AIV_1_0", KernelKind::Mix { aic: 0, aiv: 1 }),
        ("MIX_AIC_1_0", KernelKind::Mix { aic: 1, aiv: 0 }),
        ("MIX_AIC_1_1", KernelKind::Mix { aic: 1, aiv: 1 }),
        ("MIX_AIC_1_2", KernelKind::Mix { aic: 1, aiv: 2 }),
    ];

    pub fn from_name(name: &str) -> Option<KernelKind> {
        let name = name.strip_prefix("KERNEL_TYPE_").unwrap_or(name);
        KernelKind::NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    pub fn name(self) -> &'static str {
        KernelKind::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }

    /// The core types that run the kernel's code.
    pub fn cores(self) -> Vec<CoreType> {
        match self {
            KernelKind::AivOnly => vec![CoreType::Aiv],
            KernelKind::AicOnly => vec![CoreType::Aic],
            KernelKind::Mix { aic, aiv } => {
                let mut cores = Vec::new();
                if aic > 0 {
                    cores.push(CoreType::Aic);
                }
                if aiv > 0 {
                    cores.push(CoreType::Aiv);
                }
                cores
            }
        }
    }

    /// Cores of `core` type per block: the vector cores of a `MIX_AIC_1_n` kernel are
    /// `n` per block, every other kind runs one core of each of its types per block.
    pub fn per_block(self, core: CoreType) -> i64 {
        match (self, core) {
            (KernelKind::Mix { aiv, .. }, CoreType::Aiv) => i64::from(aiv),
            _ => 1,
        }
    }

    /// Cross-core flags need the mixed kernel types' scheduler.
    pub fn has_cross_core_scheduler(self) -> bool {
        matches!(self, KernelKind::Mix { .. })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoreType {
    Aic,
    Aiv,
}

impl CoreType {
    pub fn name(self) -> &'static str {
        match self {
            CoreType::Aic => "AIC",
            CoreType::Aiv => "AIV",
        }
    }

    /// The pipes the core has.
    pub fn pipes(self) -> &'static [Pipe] {
        match self {
            CoreType::Aic => &[Pipe::S, Pipe::Mte1, Pipe::Mte2, Pipe::Mte3, Pipe::M, Pipe::Fix],
            CoreType::Aiv => &[Pipe::S, Pipe::V, Pipe::Mte2, Pipe::Mte3],
        }
    }
}

/// Local memory of one core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Gm,
    Ub,
    L1,
    L0a,
    L0b,
    L0c,
}

impl Space {
    pub const NAMES: [(&'static str, Space); 6] = [
        ("GM", Space::Gm),
        ("UB", Space::Ub),
        ("L1", Space::L1),
        ("L0A", Space::L0a),
        ("L0B", Space::L0b),
        ("L0C", Space::L0c),
    ];

    pub fn from_name(name: &str) -> Option<Space> {
        Space::NAMES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
    }

    pub fn name(self) -> &'static str {
        Space::NAMES.iter().find(|(_, s)| *s == self).map_or("?", |(n, _)| n)
    }
}

/// `TPosition`: where a queue's or buffer's memory is, and which pipes its queue
/// syncs order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    VecIn,
    VecOut,
    VecCalc,
    A1,
    B1,
    A2,
    B2,
    Co1,
    Co2,
}

impl Position {
    pub const NAMES: [(&'static str, Position); 9] = [
        ("VECIN", Position::VecIn),
        ("VECOUT", Position::VecOut),
        ("VECCALC", Position::VecCalc),
        ("A1", Position::A1),
        ("B1", Position::B1),
        ("A2", Position::A2),
        ("B2", Position::B2),
        ("CO1", Position::Co1),
        ("CO2", Position::Co2),
    ];

    pub fn from_name(name: &str) -> Option<Position> {
        let name = name.strip_prefix("TPosition::").unwrap_or(name);
        Position::NAMES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    pub fn name(self) -> &'static str {
        Position::NAMES.iter().find(|(_, p)| *p == self).map_or("?", |(n, _)| n)
    }

    pub fn space(self) -> Space {
        match self {
            Position::VecIn | Position::VecOut | Position::VecCalc | Position::Co2 => Space::Ub,
            Position::A1 | Position::B1 => Space::L1,
            Position::A2 => Space::L0a,
            Position::B2 => Space::L0b,
            Position::Co1 => Space::L0c,
        }
    }

    /// The pipe that fills a tensor at this position (what `EnQue` waits for) and the
    /// pipe that consumes it (what `DeQue` orders): the queue's sync is a `SetFlag` on
    /// the first and a `WaitFlag` on the second, and back again for `FreeTensor`/`AllocTensor`.
    pub fn producer(self) -> Pipe {
        match self {
            Position::VecIn | Position::A1 | Position::B1 => Pipe::Mte2,
            Position::VecOut | Position::VecCalc => Pipe::V,
            Position::A2 | Position::B2 => Pipe::Mte1,
            Position::Co1 => Pipe::M,
            Position::Co2 => Pipe::Fix,
        }
    }

    pub fn consumer(self) -> Pipe {
        match self {
            Position::VecIn => Pipe::V,
            Position::VecOut | Position::Co2 => Pipe::Mte3,
            Position::A1 | Position::B1 => Pipe::Mte1,
            Position::A2 | Position::B2 => Pipe::M,
            Position::Co1 => Pipe::Fix,
            Position::VecCalc => Pipe::V,
        }
    }
}

/// A `TQue`/`TQueBind` (with `depth` slots used in turn) or a `TBuf` (no queue,
/// `depth` 1), given `len` bytes per slot by `TPipe::InitBuffer`.
#[derive(Clone, Debug)]
pub struct LocalBuffer {
    pub name: String,
    /// `TQueBind<src, dst>`: the pipes of `src` fill it, those of `dst` consume it.
    pub src: Position,
    pub dst: Position,
    pub queue: bool,
    pub depth: u32,
    pub len: Expr,
    pub span: Span,
}

impl LocalBuffer {
    pub fn producer(&self) -> Pipe {
        self.src.producer()
    }

    /// `TQueBind<VECIN, VECOUT>` is filled by MTE2 and drained by MTE3.
    pub fn consumer(&self) -> Pipe {
        self.dst.consumer()
    }
}

/// `HardEvent::SRC_DST`: a flag the `SRC` pipe sets and the `DST` pipe waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HardEvent {
    pub src: Pipe,
    pub dst: Pipe,
}

impl HardEvent {
    /// `MTE2_V`, `HardEvent::MTE2_V`.
    pub fn from_name(name: &str) -> Option<HardEvent> {
        let name = name.strip_prefix("HardEvent::").unwrap_or(name);
        let (src, dst) = name.split_once('_')?;
        let pipe = |n: &str| Pipe::from_name(&format!("PIPE_{n}")).filter(|p| *p != Pipe::All);
        Some(HardEvent {
            src: pipe(src)?,
            dst: pipe(dst)?,
        })
    }

    /// `MTE2_V`.
    pub fn name(self) -> String {
        let short = |p: Pipe| p.name().trim_start_matches("PIPE_").to_string();
        format!("{}_{}", short(self.src), short(self.dst))
    }
}

/// Memory an instruction reads or writes: a range of a GM parameter, of a local
/// space at a fixed address (static-tensor style), or of a local tensor variable
/// (its slot of a queue or buffer, known when the kernel runs). `offset` and `len`
/// are bytes; `len` `None` is the whole tensor or parameter.
#[derive(Clone, Debug)]
pub struct Access {
    pub target: Target,
    pub offset: Expr,
    pub len: Option<Expr>,
    /// What of the range is the code's: where the reader could not compute the length
    /// (`x[a.._]`) or even the start (`x[_.._]`, a tensor of an element size it does
    /// not know), the access runs over the rest of its tensor, but a race that rests on
    /// more than what is known is undecided.
    pub known: Known,
    pub span: Span,
}

/// How much of an access's range the reader knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    Range,
    /// The start only: the first byte is certain.
    Start,
    /// Neither: no byte is certain.
    Nothing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gm(GmId),
    Local(Space),
    Tensor(TensorId),
}

#[derive(Clone, Debug)]
pub enum KStmt {
    Op(KOp),
    If {
        cond: Expr,
        then: Vec<KStmt>,
        otherwise: Vec<KStmt>,
        span: Span,
    },
    /// `for var in start..end`: `end - start` iterations (none when it is not positive).
    For {
        var: VarId,
        start: Expr,
        end: Expr,
        body: Vec<KStmt>,
        span: Span,
    },
    Return(Span),
}

#[derive(Clone, Debug)]
pub struct KOp {
    /// The call as written (`AscendC::DataCopy`), for messages.
    pub api: String,
    pub kind: KOpKind,
    pub span: Span,
}

/// `CrossCoreSetFlag<mode, pipe>` modes 0, 1 and 2 (4 is Ascend 950 only).
pub const CROSS_CORE_FLAGS: i64 = 16;

#[derive(Clone, Debug)]
pub enum KOpKind {
    /// An instruction on `pipe` that reads and writes memory: `DataCopy`, a vector or
    /// cube operation, a scalar `GetValue`/`SetValue`.
    Work {
        pipe: Pipe,
        writes: Vec<Access>,
        reads: Vec<Access>,
    },
    SetFlag {
        event: HardEvent,
        id: Expr,
    },
    WaitFlag {
        event: HardEvent,
        id: Expr,
    },
    /// `PipeBarrier<pipe>`: the pipe's earlier instructions finish before its later
    /// ones start (`PIPE_ALL`: every pipe's).
    Barrier(Pipe),
    /// `q.AllocTensor()`: the queue's next slot, once the consumer freed it.
    AllocTensor {
        buffer: BufferId,
        tensor: TensorId,
    },
    EnQue {
        buffer: BufferId,
        tensor: TensorId,
    },
    /// `q.DeQue()`: the oldest slot enqueued, once its producer is done.
    DeQue {
        buffer: BufferId,
        tensor: TensorId,
    },
    FreeTensor {
        buffer: BufferId,
        tensor: TensorId,
    },
    /// `tbuf.Get()`: a `TBuf`'s memory, with no sync.
    GetBuf {
        buffer: BufferId,
        tensor: TensorId,
    },
    /// `TPipe::AllocEventID<e>()` (`release` false keeps it; `FetchEventID` is
    /// `fetch`: an id for immediate use that needs no release).
    AllocEventId {
        event: HardEvent,
        var: VarId,
        fetch: bool,
    },
    ReleaseEventId {
        event: HardEvent,
        id: Expr,
    },
    CrossCoreSetFlag {
        mode: u8,
        pipe: Pipe,
        flag: Expr,
    },
    CrossCoreWaitFlag {
        mode: u8,
        pipe: Pipe,
        flag: Expr,
    },
    /// `SyncAll<isAIVOnly>()` (hard) or `SyncAll(gmWs, ubWs)` (soft, with its GM
    /// workspace).
    SyncAll {
        aiv_only: bool,
        workspace: Option<Access>,
    },
}

impl KStmt {
    /// Every call, in source order, with the conditions and loops around it not
    /// looked at.
    pub fn calls<'a>(stmts: &'a [KStmt], out: &mut Vec<&'a KOp>) {
        for stmt in stmts {
            match stmt {
                KStmt::Op(op) => out.push(op),
                KStmt::If { then, otherwise, .. } => {
                    KStmt::calls(then, out);
                    KStmt::calls(otherwise, out);
                }
                KStmt::For { body, .. } => KStmt::calls(body, out),
                KStmt::Return(_) => {}
            }
        }
    }
}

/// A target's physical AI cores per die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreCounts {
    pub aic: u32,
    pub aiv: u32,
}

/// `SetFlag`/`WaitFlag` event ids are 0–7.
pub const EVENT_IDS: i64 = 8;

impl crate::model::Target {
    /// Physical cores of the target, where the documents name one count for it (A2
    /// and A3: 24 cube and 48 vector cores, Atlas 800T A2 / 910C die); `None` where
    /// models of the target differ and the launch must say.
    pub fn cores(self) -> Option<CoreCounts> {
        use crate::model::Target as T;
        match self {
            T::A2 | T::A3 => Some(CoreCounts { aic: 24, aiv: 48 }),
            T::Ascend950 | T::Ascend310P => None,
        }
    }
}

/// The calls of the kernel-level `.sync` form and of Ascend C kernels that the
/// frontends read, by what they do. One vocabulary for every frontend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelCall {
    /// `TQue<POS>(depth, len)` / `TQueBind<SRC, DST>(depth, len)` / `TBuf<POS>(len)`:
    /// a buffer `TPipe::InitBuffer` gives memory to.
    Queue,
    QueueBind,
    Buf,
    AllocTensor,
    EnQue,
    DeQue,
    FreeTensor,
    GetBuf,
    SetFlag,
    WaitFlag,
    PipeBarrier,
    AllocEventId,
    FetchEventId,
    ReleaseEventId,
    CrossCoreSetFlag,
    CrossCoreWaitFlag,
    SyncAll,
    /// `DataCopy`, `DataCopyPad`: the pipe follows from the two memories.
    Copy,
    /// `LoadData(dst, src)`: L1 (MTE1) or GM (MTE2) into L0A/L0B.
    LoadData,
    /// `Mmad(c, a, b)` on the cube pipe.
    Mmad,
    /// `Fixpipe(dst, src)`: L0C out through FIX.
    Fixpipe,
    /// A vector instruction: writes its first argument, reads the others.
    Vector,
    /// `GetValue` / `SetValue`: a scalar access on `PIPE_S`.
    ScalarRead,
    ScalarWrite,
}

impl KernelCall {
    pub fn lookup(name: &str) -> Option<KernelCall> {
        let name = name.strip_prefix("AscendC::").unwrap_or(name);
        Some(match name {
            "TQue" => KernelCall::Queue,
            "TQueBind" => KernelCall::QueueBind,
            "TBuf" => KernelCall::Buf,
            "TQue::AllocTensor" => KernelCall::AllocTensor,
            "TQue::EnQue" => KernelCall::EnQue,
            "TQue::DeQue" => KernelCall::DeQue,
            "TQue::FreeTensor" => KernelCall::FreeTensor,
            "TBuf::Get" => KernelCall::GetBuf,
            "SetFlag" => KernelCall::SetFlag,
            "WaitFlag" => KernelCall::WaitFlag,
            "PipeBarrier" => KernelCall::PipeBarrier,
            "TPipe::AllocEventID" => KernelCall::AllocEventId,
            "TPipe::FetchEventID" => KernelCall::FetchEventId,
            "TPipe::ReleaseEventID" => KernelCall::ReleaseEventId,
            "CrossCoreSetFlag" => KernelCall::CrossCoreSetFlag,
            "CrossCoreWaitFlag" => KernelCall::CrossCoreWaitFlag,
            "SyncAll" => KernelCall::SyncAll,
            "DataCopy" | "DataCopyPad" => KernelCall::Copy,
            "LoadData" => KernelCall::LoadData,
            "Mmad" => KernelCall::Mmad,
            "Fixpipe" => KernelCall::Fixpipe,
            "GetValue" => KernelCall::ScalarRead,
            "SetValue" => KernelCall::ScalarWrite,
            _ if VECTOR_OPS.binary_search(&name).is_ok() => KernelCall::Vector,
            _ => return None,
        })
    }
}

/// Ascend C vector instructions (basic and high-level API), on `PIPE_V`: each writes
/// the tensors [`vector_writes`] names (its first, for most) and reads the others. Sorted.
pub const VECTOR_OPS: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Add",
    "AddDeqRelu",
    "AddRelu",
    "AddReluCast",
    "Adds",
    "And",
    "Arange",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "Axpy",
    "BilinearInterpolation",
    "BlockReduceMax",
    "BlockReduceMin",
    "BlockReduceSum",
    "Brcb",
    "Broadcast",
    "Cast",
    "CastDeq",
    "Ceil",
    "ClampMax",
    "ClampMin",
    "Compare",
    "CompareScalar",
    "Compares",
    "Concat",
    "Copy",
    "Cos",
    "Cosh",
    "CumSum",
    "Digamma",
    "Div",
    "DropOut",
    "Duplicate",
    "Erf",
    "Exp",
    "Extract",
    "FasterGelu",
    "FasterGeluV2",
    "Floor",
    "Frac",
    "FusedMulAdd",
    "FusedMulAddRelu",
    "Gather",
    "GatherMask",
    "Gatherb",
    "Gelu",
    "GroupNorm",
    "LayerNorm",
    "LayerNormGrad",
    "LeakyRelu",
    "Lgamma",
    "Ln",
    "Log",
    "LogSoftMax",
    "Max",
    "Maxs",
    "Min",
    "Mins",
    "MrgSort",
    "MrgSort4",
    "Mul",
    "MulAddDst",
    "MulAddRelu",
    "MulCast",
    "Muls",
    "Not",
    "Or",
    "Pad",
    "PairReduceSum",
    "Power",
    "ProposalConcat",
    "ProposalExtract",
    "Reciprocal",
    "ReduceMax",
    "ReduceMin",
    "ReduceSum",
    "Relu",
    "RmsNorm",
    "Round",
    "Rsqrt",
    "Scatter",
    "Select",
    "ShiftLeft",
    "ShiftRight",
    "Sigmoid",
    "Sign",
    "Silu",
    "Sin",
    "Sinh",
    "SoftMax",
    "SoftmaxFlash",
    "SoftmaxFlashV2",
    "SoftmaxFlashV3",
    "Sort",
    "Sort32",
    "Sqrt",
    "Sub",
    "SubRelu",
    "SubReluCast",
    "SwiGLU",
    "Tan",
    "Tanh",
    "TransDataTo5HD",
    "Transpose",
    "Trunc",
    "UnPad",
    "WholeReduceMax",
    "WholeReduceMin",
    "WholeReduceSum",
    "Xor",
];

/// A bound the reader could not compute, in the `.sync` form of a kernel: `x[a.._]`
/// (the length), `x[_.._]` (the start too); see [`Access::known`].
pub const UNKNOWN_END: &str = "_";

/// The tensor arguments (positions among a call's tensors) that a vector instruction
/// writes: its destination, and for the high-level APIs every other output and the
/// scratch buffer (`sharedTmpBuffer`, which the API overwrites). From the parameter
/// names of the asc-devkit headers (`include/adv_api/**`, `dstTensor`, `outMax`,
/// `sumTensor`, `lastRowTensor`, ...). Where overloads with the same number of tensors
/// write different positions (`SoftmaxFlashV2` with eight: `outMax` or `srcTensor`
/// fourth), only the positions every overload writes count, so that no race rests on a
/// guessed overload.
pub fn vector_writes(op: &str, tensors: usize) -> &'static [usize] {
    const DESTINATION: &[usize] = &[0];
    const ELEMENTWISE_SCRATCH: &[&str] = &[
        "Acos",
        "Acosh",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "Ceil",
        "ClampMax",
        "ClampMin",
        "Cos",
        "Cosh",
        "Digamma",
        "Erf",
        "Exp",
        "FasterGelu",
        "FasterGeluV2",
        "Floor",
        "Frac",
        "Gelu",
        "Lgamma",
        "ReduceMax",
        "ReduceMin",
        "ReduceSum",
        "Round",
        "Sigmoid",
        "Sign",
        "Sin",
        "Sinh",
        "SoftMax",
        "Tan",
        "Tanh",
        "Transpose",
        "Trunc",
    ];
    match (op, tensors) {
        // `(dst, src, sharedTmpBuffer)`; a reduction's work buffer is the same.
        (_, 3) if ELEMENTWISE_SCRATCH.contains(&op) => &[0, 2],
        ("Power" | "Xor" | "DropOut" | "RmsNorm", 4) => &[0, 3],
        ("Concat", 3) => &[0, 2],
        ("CumSum", 3) | ("Extract", 3) | ("LayerNormGrad", 7) => &[0, 1],
        ("CumSum", 4) => &[0, 1, 3],
        ("LayerNormGrad", 8) => &[0, 1, 7],
        ("GroupNorm" | "LayerNorm", 6) | ("SoftMax", 4) | ("SoftmaxFlashV2", 8) => &[0, 1, 2],
        ("GroupNorm" | "LayerNorm", 7) => &[0, 1, 2, 6],
        ("SoftMax" | "LogSoftMax", 5) => &[0, 1, 2, 4],
        ("SoftmaxFlash" | "SoftmaxFlashV2", 7) => &[0, 1, 2, 4],
        ("SoftmaxFlash", 8) => &[0, 1, 2, 4, 7],
        ("SoftmaxFlashV3", 9) => &[0, 1, 2, 3, 5],
        ("SoftmaxFlashV2", 9) => &[0, 1, 2, 3, 5, 8],
        ("SoftmaxFlashV3", 10) => &[0, 1, 2, 3, 5, 9],
        // `Sort` with three or four tensors has overloads that disagree past the first.
        ("Sort", 5) => &[0, 1, 4],
        _ => DESTINATION,
    }
}

/// The pipe that moves data from one memory to another (`DataCopy`, `LoadData`,
/// `Fixpipe`), where the hardware has such a path.
pub fn copy_pipe(dst: Space, src: Space) -> Option<Pipe> {
    use Space::*;
    Some(match (src, dst) {
        (Gm, Ub | L1 | L0a | L0b) => Pipe::Mte2,
        (Ub, Gm | L1) | (L1, Gm) => Pipe::Mte3,
        (Ub, Ub) => Pipe::V,
        (L1, L0a | L0b) => Pipe::Mte1,
        (L0c, Gm | L1 | Ub) => Pipe::Fix,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_ops_are_sorted_for_the_search() {
        assert!(VECTOR_OPS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_high_level_api_writes_each_of_its_outputs() {
        assert_eq!(vector_writes("Add", 3), &[0]);
        assert_eq!(vector_writes("SoftmaxFlashV2", 7), &[0, 1, 2, 4]);
        // Eight tensors: `(dst, sum, max, src, expMax, inSum, inMax, tmp)` or
        // `(dst, reduceMax, sum, max, src, expMax, inSum, inMax)`.
        assert_eq!(vector_writes("SoftmaxFlashV2", 8), &[0, 1, 2]);
        assert_eq!(vector_writes("Sigmoid", 3), &[0, 2]);
        assert_eq!(vector_writes("Sigmoid", 2), &[0]);
    }

    #[test]
    fn hard_event_names_round_trip() {
        let event = HardEvent::from_name("HardEvent::MTE2_V").unwrap();
        assert_eq!((event.src, event.dst), (Pipe::Mte2, Pipe::V));
        assert_eq!(event.name(), "MTE2_V");
        assert!(HardEvent::from_name("ALL_V").is_none());
    }
}
