//! One core's run of a kernel for one launch: the kernel's statements walked with the
//! core's block index, core type, TilingKey and parameter values, loops unrolled, into
//! the instructions it issues, in program order, with memory at concrete addresses and
//! queue operations turned into the flags they set and wait for.

use std::collections::{HashSet, VecDeque};

use crate::exec::{CoreEnv, Env};
use crate::model::{Expr, Pipe, Program};
use crate::source::Span;
use syncguard_model::kernel::{
    Access, BufferId, CoreType, GmId, HardEvent, KOp, KOpKind, KStmt, Kernel, Known, Space, Target, TensorId,
};

/// Most instructions one core's run is followed for; the rest is said, not checked.
pub const MAX_STEPS: usize = 20_000;
/// Most statements and loop iterations one core's run walks (a loop of nothing but
/// arithmetic issues no instruction, and still takes time).
pub const MAX_WALK: usize = 200_000;
/// Deepest nesting of `if`/`for` walked.
const MAX_DEPTH: usize = 64;
/// Iterations in a row a loop is walked with before it counts as walked through: a race
/// between one iteration and the next needs two, a double-buffered slot's reuse three.
pub const REPEATS: i64 = 3;

/// A flag one pipe sets and another waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlagKey {
    /// `SetFlag<e>(id)` / `WaitFlag<e>(id)`.
    Event { event: HardEvent, id: i64 },
    /// A queue slot filled (`EnQue` sets, `DeQue` waits) or freed (`FreeTensor` sets,
    /// `AllocTensor` waits).
    Queue { buffer: BufferId, slot: u32, freed: bool },
}

/// Memory: a GM parameter or a local space, by byte address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Region {
    Gm(GmId),
    Local(Space),
}

#[derive(Clone, Debug)]
pub struct Mem<'p> {
    // `start..end` in bytes of `region`; a queue's tensor also names its slot.
    pub write: bool,
    pub region: Region,
    pub start: i64,
    pub end: i64,
    pub access: &'p Access,
    /// The queue slot, for a tensor of a queue: (buffer, slot).
    pub slot: Option<(BufferId, u32)>,
    pub tensor: Option<TensorId>,
    /// What of `start..end` the reader knows (the rest is the tensor's, to its end).
    pub known: Known,
}

/// What one instruction does, with its values decided.
#[derive(Clone, Debug)]
pub enum Step<'p> {
    Work { pipe: Pipe, mems: Vec<Mem<'p>> },
    Set { pipe: Pipe, key: FlagKey },
    Wait { pipe: Pipe, key: FlagKey },
    Barrier(Pipe),
    AllocEventId { event: HardEvent, id: i64, fetch: bool },
    ReleaseEventId { event: HardEvent, id: i64 },
    CrossSet { mode: u8, pipe: Pipe, flag: i64 },
    CrossWait { mode: u8, pipe: Pipe, flag: i64 },
    SyncAll { aiv_only: bool, workspace: Option<i64> },
}

impl Step<'_> {
    /// The pipe that runs it; `PIPE_ALL` for what orders every pipe (a full barrier,
    /// a cross-core wait, `SyncAll`), `PIPE_S` for scalar bookkeeping.
    pub fn pipe(&self) -> Pipe {
        match self {
            Step::Work { pipe, .. } | Step::Set { pipe, .. } | Step::Wait { pipe, .. } => *pipe,
            Step::CrossSet { pipe, .. } => *pipe,
            Step::Barrier(pipe) => *pipe,
            Step::CrossWait { .. } | Step::SyncAll { .. } => Pipe::All,
            Step::AllocEventId { .. } | Step::ReleaseEventId { .. } => Pipe::S,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Instr<'p> {
    pub op: &'p KOp,
    pub step: Step<'p>,
    /// The loop iterations it is in, outermost first: "i = 1".
    pub iterations: Vec<(crate::model::VarId, i64)>,
}

/// Why a run was not followed to its end.
#[derive(Clone, Debug)]
pub struct Stop {
    pub span: Span,
    pub reason: String,
}

/// One arm of one `if` of a kernel's code: the statement's address and whether the arm
/// is `then`. Not its span: every inlined copy of a helper's `if`, and every unrolled
/// iteration of a loop of unknown count, has the same one.
pub type ArmId = (usize, bool);

pub fn arm_id(stmt: &KStmt, is_then: bool) -> ArmId {
    (std::ptr::from_ref(stmt) as usize, is_then)
}

/// One instruction of a kernel's code that does work (a copy, a vector or cube
/// instruction), by its address, as arms are.
pub type WorkId = usize;

pub fn work_id(op: &KOp) -> WorkId {
    std::ptr::from_ref(op) as usize
}

pub struct Run<'p> {
    pub instrs: Vec<Instr<'p>>,
    pub stop: Option<Stop>,
    /// The loops whose body ran at least once.
    pub entered: HashSet<crate::model::VarId>,
    /// The loops whose body ran at least [`REPEATS`] times in a row.
    pub repeated: HashSet<crate::model::VarId>,
    /// The arms of `if`s taken.
    pub arms: HashSet<ArmId>,
    /// The arms taken while every enclosing loop whose count the launch decides ran at
    /// least [`REPEATS`] times: an arm inside a tile loop is walked through only then.
    pub arms_repeated: HashSet<ArmId>,
    /// The work instructions run with every length the code gives above zero, and those
    /// run with one at zero (`rotaryDim / 16` blocks at a small `rotaryDim`): such a run
    /// moves no byte, and checks nothing of the instruction.
    pub work_done: HashSet<WorkId>,
    pub work_empty: HashSet<WorkId>,
}

struct QueueState {
    allocated: u32,
    filled: VecDeque<u32>,
}

struct Walker<'p> {
    kernel: &'p Kernel,
    env: Env,
    /// Byte address of each buffer's first slot in its space.
    bases: Vec<i64>,
    lens: Vec<i64>,
    queues: Vec<QueueState>,
    /// The slot each tensor variable holds now.
    tensors: Vec<Option<u32>>,
    iterations: Vec<(crate::model::VarId, i64)>,
    entered: HashSet<crate::model::VarId>,
    repeated: HashSet<crate::model::VarId>,
    arms: HashSet<ArmId>,
    arms_repeated: HashSet<ArmId>,
    work_done: HashSet<WorkId>,
    work_empty: HashSet<WorkId>,
    /// Enclosing loops being walked with fewer than [`REPEATS`] iterations, of a count
    /// that is not a constant.
    short_loops: usize,
    walked: usize,
    out: Vec<Instr<'p>>,
    stop: Option<Stop>,
    returned: bool,
}

/// Walk `kernel` on one core.
pub fn run<'p>(program: &Program, kernel: &'p Kernel, params: &[i64], core: CoreType, block: i64, key: i64) -> Run<'p> {
    let env = Env {
        params: params.to_vec(),
        rank: 0,
        vars: vec![None; program.vars.len()],
        core: Some(CoreEnv {
            block_idx: block,
            tiling_key: key,
            is_aiv: core == CoreType::Aiv,
        }),
    };
    let mut walker = Walker {
        kernel,
        env,
        bases: Vec::new(),
        lens: Vec::new(),
        queues: kernel
            .buffers
            .iter()
            .map(|_| QueueState {
                allocated: 0,
                filled: VecDeque::new(),
            })
            .collect(),
        tensors: vec![None; kernel.tensors.len()],
        iterations: Vec::new(),
        entered: HashSet::new(),
        repeated: HashSet::new(),
        arms: HashSet::new(),
        arms_repeated: HashSet::new(),
        work_done: HashSet::new(),
        work_empty: HashSet::new(),
        short_loops: 0,
        walked: 0,
        out: Vec::new(),
        stop: None,
        returned: false,
    };
    if walker.lay_out_buffers() {
        walker.stmts(&kernel.body, 0);
    }
    Run {
        instrs: walker.out,
        stop: walker.stop,
        entered: walker.entered,
        repeated: walker.repeated,
        arms: walker.arms,
        arms_repeated: walker.arms_repeated,
        work_done: walker.work_done,
        work_empty: walker.work_empty,
    }
}

impl<'p> Walker<'p> {
    fn halt(&mut self, span: &Span, reason: impl Into<String>) {
        if self.stop.is_none() {
            self.stop = Some(Stop {
                span: span.clone(),
                reason: reason.into(),
            });
        }
    }

    fn going(&self) -> bool {
        self.stop.is_none() && !self.returned
    }

    fn eval(&mut self, expr: &Expr, span: &Span, what: &str) -> Option<i64> {
        match self.env.eval(expr) {
            Ok(value) => Some(value),
            Err(error) => {
                self.halt(span, format!("{what} {}", error.reason()));
                None
            }
        }
    }

    /// `TPipe::InitBuffer` hands out each space from its start, buffer after buffer.
    fn lay_out_buffers(&mut self) -> bool {
        let mut next: std::collections::HashMap<Space, i64> = std::collections::HashMap::new();
        for buffer in &self.kernel.buffers {
            let Some(len) = self.eval(&buffer.len, &buffer.span, "the buffer's length") else {
                return false;
            };
            let at = next.entry(buffer.src.space()).or_insert(0);
            self.bases.push(*at);
            self.lens.push(len.max(0));
            *at = at.saturating_add(len.max(0).saturating_mul(i64::from(buffer.depth)));
        }
        true
    }

    fn stmts(&mut self, stmts: &'p [KStmt], depth: usize) {
        for stmt in stmts {
            if !self.going() {
                return;
            }
            self.stmt(stmt, depth);
        }
    }

    fn stmt(&mut self, stmt: &'p KStmt, depth: usize) {
        self.walked += 1;
        if self.walked > MAX_WALK {
            let span = match stmt {
                KStmt::Op(op) => &op.span,
                KStmt::If { span, .. } | KStmt::For { span, .. } | KStmt::Return(span) => span,
            };
            return self.halt(
                span,
                format!("the core walks more than {MAX_WALK} statements and loop iterations"),
            );
        }
        match stmt {
            KStmt::Op(op) => self.op(op),
            KStmt::Return(_) => self.returned = true,
            KStmt::If {
                cond,
                then,
                otherwise,
                span,
            } => {
                if depth >= MAX_DEPTH {
                    return self.halt(span, "nested too deeply");
                }
                let Some(taken) = self.eval(cond, span, "the condition") else {
                    return;
                };
                let arm = arm_id(stmt, taken != 0);
                self.arms.insert(arm);
                if self.short_loops == 0 {
                    self.arms_repeated.insert(arm);
                }
                self.stmts(if taken != 0 { then } else { otherwise }, depth + 1);
            }
            KStmt::For {
                var,
                start,
                end,
                body,
                span,
            } => {
                if depth >= MAX_DEPTH {
                    return self.halt(span, "nested too deeply");
                }
                let constant_count = start.as_const().is_some() && end.as_const().is_some();
                let (Some(start), Some(end)) = (
                    self.eval(start, span, "the loop's start"),
                    self.eval(end, span, "the loop's end"),
                ) else {
                    return;
                };
                if end > start {
                    self.entered.insert(*var);
                }
                if end.saturating_sub(start) >= REPEATS {
                    self.repeated.insert(*var);
                }
                let short = !constant_count && end.saturating_sub(start) < REPEATS;
                self.short_loops += usize::from(short);
                let mut i = start;
                while i < end && self.going() {
                    self.walked += 1;
                    if self.walked > MAX_WALK {
                        self.halt(
                            span,
                            format!("the core walks more than {MAX_WALK} statements and loop iterations"),
                        );
                        break;
                    }
                    self.env.vars[var.index()] = Some(i);
                    self.iterations.push((*var, i));
                    self.stmts(body, depth + 1);
                    self.iterations.pop();
                    i += 1;
                }
                self.short_loops -= usize::from(short);
                self.env.vars[var.index()] = None;
            }
        }
    }

    fn push(&mut self, op: &'p KOp, step: Step<'p>) {
        if self.out.len() >= MAX_STEPS {
            return self.halt(&op.span, format!("the core issues more than {MAX_STEPS} instructions"));
        }
        self.out.push(Instr {
            op,
            step,
            iterations: self.iterations.clone(),
        });
    }

    fn op(&mut self, op: &'p KOp) {
        let step = match &op.kind {
            KOpKind::Work { pipe, writes, reads } => {
                let mut mems = Vec::new();
                for (write, access) in writes.iter().map(|a| (true, a)).chain(reads.iter().map(|a| (false, a))) {
                    match self.mem(access, write) {
                        Some(mem) => mems.push(mem),
                        None => return,
                    }
                }
                let empty = mems.iter().any(|mem| mem.access.len.is_some() && mem.end <= mem.start);
                match empty {
                    true => self.work_empty.insert(work_id(op)),
                    false => self.work_done.insert(work_id(op)),
                };
                Step::Work { pipe: *pipe, mems }
            }
            KOpKind::SetFlag { event, id } | KOpKind::WaitFlag { event, id } => {
                let Some(id) = self.eval(id, &op.span, "the event id") else {
                    return;
                };
                let key = FlagKey::Event { event: *event, id };
                if matches!(op.kind, KOpKind::SetFlag { .. }) {
                    Step::Set { pipe: event.src, key }
                } else {
                    Step::Wait { pipe: event.dst, key }
                }
            }
            KOpKind::Barrier(pipe) => Step::Barrier(*pipe),
            KOpKind::AllocTensor { buffer, tensor } => return self.alloc(op, *buffer, *tensor),
            KOpKind::EnQue { buffer, tensor } => return self.enque(op, *buffer, *tensor),
            KOpKind::DeQue { buffer, tensor } => return self.deque(op, *buffer, *tensor),
            KOpKind::FreeTensor { buffer, tensor } => return self.free(op, *buffer, *tensor),
            KOpKind::GetBuf { tensor, .. } => {
                self.tensors[*tensor] = Some(0);
                return;
            }
            KOpKind::AllocEventId { event, var, fetch } => {
                // TPipe hands out ids per HardEvent from a pool; which one is not
                // known, so each allocation gets its own, above the literal ids.
                let id = 1000 + self.out.len() as i64;
                self.env.vars[var.index()] = Some(id);
                Step::AllocEventId {
                    event: *event,
                    id,
                    fetch: *fetch,
                }
            }
            KOpKind::ReleaseEventId { event, id } => {
                let Some(id) = self.eval(id, &op.span, "the event id") else {
                    return;
                };
                Step::ReleaseEventId { event: *event, id }
            }
            KOpKind::CrossCoreSetFlag { mode, pipe, flag } | KOpKind::CrossCoreWaitFlag { mode, pipe, flag } => {
                let Some(flag) = self.eval(flag, &op.span, "the flag id") else {
                    return;
                };
                if matches!(op.kind, KOpKind::CrossCoreSetFlag { .. }) {
                    Step::CrossSet {
                        mode: *mode,
                        pipe: *pipe,
                        flag,
                    }
                } else {
                    Step::CrossWait {
                        mode: *mode,
                        pipe: *pipe,
                        flag,
                    }
                }
            }
            KOpKind::SyncAll { aiv_only, workspace } => {
                let workspace = match workspace {
                    Some(access) => access
                        .len
                        .as_ref()
                        .and_then(|len| self.eval(len, &access.span, "the workspace's length")),
                    None => None,
                };
                Step::SyncAll {
                    aiv_only: *aiv_only,
                    workspace,
                }
            }
        };
        self.push(op, step);
    }

    fn mem(&mut self, access: &'p Access, write: bool) -> Option<Mem<'p>> {
        let offset = self.eval(&access.offset, &access.span, "the offset")?;
        let len = match &access.len {
            Some(len) => Some(self.eval(len, &access.span, "the length")?),
            None => None,
        };
        let (region, base, whole, slot, tensor) = match access.target {
            Target::Gm(gm) => (Region::Gm(gm), 0, None, None, None),
            Target::Local(space) => (Region::Local(space), 0, None, None, None),
            Target::Tensor(tensor) => {
                let buffer = self.kernel.tensors[tensor].buffer;
                let Some(slot) = self.tensors[tensor] else {
                    let name = &self.kernel.tensors[tensor].name;
                    self.halt(
                        &access.span,
                        format!("tensor `{name}` is used before it holds a slot of its buffer"),
                    );
                    return None;
                };
                let space = self.kernel.buffers[buffer].src.space();
                let base = self.bases[buffer] + i64::from(slot) * self.lens[buffer];
                (
                    Region::Local(space),
                    base,
                    Some(self.lens[buffer]),
                    Some((buffer, slot)),
                    Some(tensor),
                )
            }
        };
        // A length of zero (a tile of no elements) touches nothing.
        let start = base.saturating_add(offset);
        let end = match (len, whole) {
            (Some(len), _) => start.saturating_add(len.max(0)),
            (None, Some(whole)) => base.saturating_add(whole.max(0)),
            (None, None) => i64::MAX,
        };
        Some(Mem {
            write,
            region,
            start,
            end,
            access,
            slot,
            tensor,
            known: access.known,
        })
    }

    fn alloc(&mut self, op: &'p KOp, buffer: BufferId, tensor: TensorId) {
        // A `TBuf`'s `AllocTensor` is its `Get`: its one piece of memory, no queue.
        if !self.kernel.buffers[buffer].queue {
            self.tensors[tensor] = Some(0);
            return;
        }
        let depth = self.kernel.buffers[buffer].depth;
        let queue = &mut self.queues[buffer];
        let slot = queue.allocated % depth;
        let reused = queue.allocated >= depth;
        queue.allocated += 1;
        self.tensors[tensor] = Some(slot);
        if reused {
            let pipe = self.kernel.buffers[buffer].producer();
            let key = FlagKey::Queue {
                buffer,
                slot,
                freed: true,
            };
            self.push(op, Step::Wait { pipe, key });
        }
    }

    fn enque(&mut self, op: &'p KOp, buffer: BufferId, tensor: TensorId) {
        let Some(slot) = self.tensors[tensor] else {
            return self.halt(&op.span, format!("`{}` enqueues a tensor that holds no slot", op.api));
        };
        self.queues[buffer].filled.push_back(slot);
        let pipe = self.kernel.buffers[buffer].producer();
        let key = FlagKey::Queue {
            buffer,
            slot,
            freed: false,
        };
        self.push(op, Step::Set { pipe, key });
    }

    fn deque(&mut self, op: &'p KOp, buffer: BufferId, tensor: TensorId) {
        // DeQue with nothing enqueued waits for a fill that never comes.
        let slot = self.queues[buffer].filled.pop_front().unwrap_or(u32::MAX);
        self.tensors[tensor] = Some(if slot == u32::MAX { 0 } else { slot });
        let pipe = self.kernel.buffers[buffer].consumer();
        let key = FlagKey::Queue {
            buffer,
            slot,
            freed: false,
        };
        self.push(op, Step::Wait { pipe, key });
    }

    fn free(&mut self, op: &'p KOp, buffer: BufferId, tensor: TensorId) {
        if !self.kernel.buffers[buffer].queue {
            return;
        }
        let Some(slot) = self.tensors[tensor] else {
            return self.halt(&op.span, format!("`{}` frees a tensor that holds no slot", op.api));
        };
        // Freed through another queue (SG811): the slot is the tensor's own queue's,
        // marked free with the called queue's event.
        let pipe = self.kernel.buffers[buffer].consumer();
        let own = self.kernel.tensors[tensor].buffer;
        let key = FlagKey::Queue {
            buffer: if self.kernel.buffers[own].queue { own } else { buffer },
            slot,
            freed: true,
        };
        self.push(op, Step::Set { pipe, key });
    }
}

impl Mem<'_> {
    /// Whether two accesses touch a common byte. Two slots of the kernel's queues and
    /// buffers never do, whatever their sizes: `TPipe::InitBuffer` gives each its own
    /// memory.
    pub fn overlaps(&self, other: &Mem) -> bool {
        if let (Some(a), Some(b)) = (self.slot, other.slot)
            && a != b
        {
            return false;
        }
        self.region == other.region && self.start < other.end && other.start < self.end
    }

    /// Whether the two would be in one piece of memory but one touches no byte: a
    /// length computed at zero (a copy counted in 32-byte blocks at small values).
    pub fn hidden_by_a_zero_length(&self, other: &Mem) -> bool {
        let zero = |mem: &Mem| mem.access.len.is_some() && mem.known == Known::Range && mem.end <= mem.start;
        let same_slot = match (self.slot, other.slot) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        self.region == other.region && same_slot && (zero(self) || zero(other))
    }

    /// Whether the two overlap in the bytes each certainly touches (the first byte of
    /// one whose length is unknown).
    pub fn certainly_overlaps(&self, other: &Mem) -> bool {
        let certain_end = |mem: &Mem| match mem.known {
            Known::Range => mem.end,
            Known::Start => mem.end.min(mem.start.saturating_add(1)),
            Known::Nothing => mem.start,
        };
        self.overlaps(other) && self.start < certain_end(other) && other.start < certain_end(self)
    }
}
