//! Inside kernels (`Program::kernels`): every core's run of each kernel, for every
//! launch (parameter values, sampled as the host runs are), core type, block index and
//! TilingKey, walked into the instructions it issues (`walk`), ordered across its pipes
//! (`order`), and the facts the SG8xx rules report: races between pipes, flags set and
//! never waited or waited and never set, and the cross-core flags and `SyncAll` each
//! core reaches. Computed once per Program, read by every SG8xx rule.

pub mod cases;
pub mod divisors;
pub mod mixed_ids;
pub mod order;
mod reach;
pub use reach::Unwalked;
pub mod walk;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::model::{BinOp, Expr, ParamId, Pipe, Program, VarId};
use crate::source::Span;
use syncguard_model::kernel::{CoreType, HardEvent, KOp, KOpKind, KStmt, Kernel};
use walk::{FlagKey, Instr, Mem, Region, Step};

/// Most cores of one type walked per launch; beyond it, the first, second, middle and
/// last two.
const MAX_CORES: i64 = 64;
/// Launches with every mentioned parameter at 1, 2, ... this many.
const UNIFORM_LAUNCHES: i64 = 4;
/// Most instructions walked for one kernel over all its runs; the runs beyond are said.
const MAX_KERNEL_INSTRUCTIONS: usize = 4_000_000;

/// A core by type and index.
type CoreIndex = (CoreType, i64);

/// Where a run was: "AIV core 3 (tileNum = 2)".
#[derive(Clone, Debug)]
pub struct RunContext {
    pub kernel: usize,
    pub core: CoreType,
    pub block: i64,
    pub launch: String,
}

impl RunContext {
    pub fn describe(&self) -> String {
        let core = format!("{} core {}", self.core.name(), self.block);
        if self.launch.is_empty() {
            core
        } else {
            format!("{core} ({})", self.launch)
        }
    }
}

/// Two accesses on different pipes of one core, to overlapping memory, at least one a
/// write, that nothing orders.
#[derive(Clone, Debug)]
pub struct Race<'p> {
    pub first: &'p KOp,
    pub second: &'p KOp,
    pub first_pipe: Pipe,
    pub second_pipe: Pipe,
    pub first_write: bool,
    pub second_write: bool,
    pub memory: String,
    /// The consumer's access to a queue's tensor that was never dequeued.
    pub without_dequeue: Option<String>,
    /// A race on a queue's slot involving a pipe the queue's syncs do not order: why.
    pub beyond_queue: Option<String>,
    pub context: RunContext,
    pub iterations: String,
    /// The two ranges overlap only where the length the reader could not compute of
    /// one of them reaches: the finding is undecided (information).
    pub undecided: Option<String>,
}

impl Race<'_> {
    /// RAW, WAR or WAW, of the second access against the first.
    pub fn kind(&self) -> &'static str {
        match (self.first_write, self.second_write) {
            (true, false) => "read-after-write",
            (false, true) => "write-after-read",
            _ => "write-after-write",
        }
    }
}

#[derive(Clone, Debug)]
pub struct FlagFinding<'p> {
    pub op: &'p KOp,
    /// The other call involved: the set a wait depends on, the earlier set of a double set.
    pub other: Option<&'p KOp>,
    /// For a hang: the later waits of the same run that block because of it.
    pub also: Vec<&'p KOp>,
    pub key: FlagKey,
    pub context: RunContext,
}

/// Cross-core flags and `SyncAll` calls of one core's run.
#[derive(Clone, Debug, Default)]
pub struct CoreSyncs<'p> {
    /// Flag id → its sets and waits (a wait names no mode of its own on A2/A3: the
    /// set's mode, in the kernel's code, decides who takes part).
    pub flags: std::collections::BTreeMap<i64, FlagCount<'p>>,
    pub sync_alls: Vec<&'p KOp>,
    /// Most sets of one flag in a row with no cross-core wait between: (count, flag, call).
    pub longest_burst: Option<(u32, i64, &'p KOp)>,
    pub soft_workspaces: Vec<(&'p KOp, i64)>,
}

#[derive(Clone, Debug, Default)]
pub struct FlagCount<'p> {
    pub sets: u32,
    pub waits: u32,
    pub set_call: Option<&'p KOp>,
    pub wait_call: Option<&'p KOp>,
}

/// All cores of one kernel for one launch.
#[derive(Clone, Debug)]
pub struct Launch<'p> {
    pub kernel: usize,
    pub launch: String,
    pub blocks: i64,
    /// Every core walked, with what it reached, and whether its run was complete.
    pub cores: Vec<(RunContext, CoreSyncs<'p>, bool)>,
}

/// What the launches take for granted about the tiling values, said.
#[derive(Clone, Debug)]
pub struct Assumption {
    pub span: Span,
    pub message: String,
    pub kind: Assumed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assumed {
    /// A field the kernel only compares with constants takes only those values.
    Cases,
    /// A field the kernel divides by is not 0.
    NoZeroDivisor,
}

#[derive(Default)]
pub struct KernelFacts<'p> {
    pub races: Vec<Race<'p>>,
    /// Waits that never return: no set, or the set comes only after the wait.
    pub hangs: Vec<FlagFinding<'p>>,
    pub pending_sets: Vec<FlagFinding<'p>>,
    pub double_sets: Vec<FlagFinding<'p>>,
    pub ids_out_of_range: Vec<FlagFinding<'p>>,
    pub unreleased_ids: Vec<(&'p KOp, HardEvent, RunContext)>,
    /// Literal event ids used in a run that also takes ids of their `HardEvent` from TPipe.
    pub mixed_ids: Vec<mixed_ids::MixedId<'p>>,
    pub launches: Vec<Launch<'p>>,
    /// What could not be followed, said (`--explain`).
    pub stops: Vec<(Span, String)>,
    /// Loops and `if` arms no launch reached, outermost only, with why: their calls are
    /// not checked.
    pub unwalked: Vec<reach::Unwalked>,
    /// Tiling fields whose launches take only the constants the kernel compares them with.
    pub assumptions: Vec<Assumption>,
}

impl<'p> KernelFacts<'p> {
    /// What the walks could not follow, as information: the instructions after each
    /// stop are not checked.
    pub fn stop_notes(&self) -> Vec<crate::Diagnostic> {
        let mut seen = HashSet::new();
        let assumptions = self.assumptions.iter().map(|assumption| {
            let (label, help) = match assumption.kind {
                Assumed::Cases => (
                    "compared only with constants",
                    "if the host writes other values to it, handle them in the kernel (an `else`)",
                ),
                Assumed::NoZeroDivisor => (
                    "checked for divisors from 1",
                    "if the host can write 0 to one of them, return early in the kernel when it does",
                ),
            };
            crate::Diagnostic::new(
                &crate::rules::SolverUnknown::INFO,
                assumption.span.clone(),
                assumption.message.clone(),
            )
            .with_severity(crate::Severity::Info)
            .with_label(label)
            .with_help(help)
        });
        let stops = self
            .stops
            .iter()
            .filter(|(span, _)| seen.insert(span.clone()))
            .map(|(span, reason)| {
                crate::Diagnostic::new(
                    &crate::rules::TooLargeToAnalyze::INFO,
                    span.clone(),
                    format!("the kernel's walk stopped here: {reason}; what follows on that core is not checked"),
                )
                .with_severity(crate::Severity::Info)
                .with_label("kernel walk stopped")
            });
        // A helper inlined twice has its `if` twice: one note per arm of the source.
        let mut places = HashSet::new();
        let unwalked = self
            .unwalked
            .iter()
            .filter(|unwalked| places.insert((&unwalked.span, unwalked.arm)))
            .map(|unwalked| {
                crate::Diagnostic::new(
                    &crate::rules::TooLargeToAnalyze::INFO,
                    unwalked.span.clone(),
                    unwalked.message.clone(),
                )
                .with_severity(crate::Severity::Info)
                .with_label("walked in no launch")
            });
        assumptions.chain(stops).chain(unwalked).collect()
    }

    pub fn of(program: &'p Program) -> KernelFacts<'p> {
        let mut facts = KernelFacts::default();
        let mut seen = Seen::default();
        for (index, kernel) in program.kernels.iter().enumerate() {
            facts.kernel(program, index, kernel, &mut seen);
        }
        // An undecided race whose pair races certainly in another run is that one.
        facts.races.retain(|race| {
            race.undecided.is_none()
                || !seen
                    .races
                    .contains(&(race.first.span.clone(), race.second.span.clone()))
        });
        facts
    }

    fn kernel(&mut self, program: &'p Program, index: usize, kernel: &'p Kernel, seen: &mut Seen) {
        // Pairs are this kernel's instructions: z3 is asked about them in its own search.
        seen.hidden_pairs.clear();
        let cases = cases::case_fields(program, kernel);
        self.assumptions.extend(cases.iter().map(|case| {
            let (span, message) = cases::assumption(program, kernel, case);
            Assumption {
                span,
                message,
                kind: Assumed::Cases,
            }
        }));
        let divisors = divisors::divisor_fields(program, kernel);
        if !divisors.is_empty() {
            self.assumptions.push(Assumption {
                span: kernel.span.clone(),
                message: divisors::assumption(program, kernel, &divisors),
                kind: Assumed::NoZeroDivisor,
            });
        }
        // The values launches take: the case fields cut to the values compared, the
        // divisors from 1.
        let domain = if cases.is_empty() && divisors.is_empty() {
            std::borrow::Cow::Borrowed(program)
        } else {
            std::borrow::Cow::Owned(divisors::narrowed(cases::narrowed(program, &cases), &divisors))
        };
        let mut walk = KernelWalk {
            index,
            kernel,
            mentioned: mentioned_params(kernel),
            keys: tiling_keys(&kernel.body),
            dequeued: dequeued_tensors(kernel),
            later_dequeue_loops: later_dequeue_loops(kernel),
            walked: 0,
            entered: HashSet::new(),
            repeated: HashSet::new(),
            arms_repeated: HashSet::new(),
            arms: HashSet::new(),
            work_done: HashSet::new(),
            work_empty: HashSet::new(),
        };
        for planned in launches_to_walk(&domain, kernel, &walk.mentioned, &walk.keys) {
            if !self.walk_launch(program, &mut walk, planned, seen) {
                return;
            }
        }
        self.reach_the_rest(program, &domain, &mut walk, seen);
    }

    /// Walk every core of one launch; `false` once the kernel's instruction budget is
    /// spent (said as a stop).
    fn walk_launch(
        &mut self,
        program: &'p Program,
        walk: &mut KernelWalk<'p>,
        planned: PlannedLaunch,
        seen: &mut Seen,
    ) -> bool {
        let (index, kernel) = (walk.index, walk.kernel);
        if walk.walked > MAX_KERNEL_INSTRUCTIONS {
            let reason = format!(
                "its runs issue more than {MAX_KERNEL_INSTRUCTIONS} instructions; later launches are not walked"
            );
            self.stops.push((kernel.span.clone(), reason));
            return false;
        }
        let PlannedLaunch {
            params,
            cores: extra_cores,
            counterexample,
            focus,
        } = planned;
        let mut launch = describe_launch(program, &params, &walk.mentioned);
        if counterexample {
            launch = [launch, "z3's smallest counterexample".into()]
                .into_iter()
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
        }
        let env = crate::exec::Env {
            params: params.clone(),
            rank: 0,
            vars: vec![None; program.vars.len()],
            core: None,
        };
        let Some(blocks) = env.eval(&kernel.blocks).ok().filter(|blocks| *blocks > 0) else {
            self.stops
                .push((kernel.span.clone(), "its block count has no value here".into()));
            return true;
        };
        // The TilingKey is the launch's, the same on every core: the cores a rule
        // compares (a `SyncAll` count, cross-core flags) are those of one key.
        let keys = walk.keys.clone();
        for key in keys.into_iter().filter(|key| focus.is_none_or(|focus| focus == *key)) {
            let launch = match walk.keys.len() {
                1 => launch.clone(),
                _ => [launch.as_str(), &format!("TilingKey {key}")]
                    .into_iter()
                    .filter(|part| !part.is_empty())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let named_cores_only = focus.is_some();
            let at = LaunchAt {
                params: &params,
                extra_cores: &extra_cores,
                named_cores_only,
                blocks,
                key,
                launch: &launch,
            };
            let cores = self.walk_cores(program, walk, at, seen);
            if named_cores_only {
                continue;
            }
            self.launches.push(Launch {
                kernel: index,
                launch,
                blocks,
                cores,
            });
        }
        true
    }

    /// Every core of one launch and TilingKey, walked and checked.
    fn walk_cores(
        &mut self,
        program: &'p Program,
        walk: &mut KernelWalk<'p>,
        at: LaunchAt,
        seen: &mut Seen,
    ) -> Vec<(RunContext, CoreSyncs<'p>, bool)> {
        let (index, kernel) = (walk.index, walk.kernel);
        let LaunchAt {
            params,
            extra_cores,
            named_cores_only,
            blocks,
            key,
            launch,
        } = at;
        let mut cores = Vec::new();
        for core in kernel.kind.cores() {
            let mut indices = match named_cores_only {
                true => Vec::new(),
                false => sample_blocks(blocks.saturating_mul(kernel.kind.per_block(core))),
            };
            indices.extend(extra_cores.iter().filter(|(c, _)| *c == core).map(|(_, i)| *i));
            indices.sort_unstable();
            indices.dedup();
            for block in indices {
                let run = walk::run(program, kernel, params, core, block, key);
                walk.walked += run.instrs.len();
                walk.entered.extend(run.entered.iter().copied());
                walk.repeated.extend(run.repeated.iter().copied());
                walk.arms.extend(run.arms.iter().cloned());
                walk.arms_repeated.extend(run.arms_repeated.iter().cloned());
                walk.work_done.extend(run.work_done.iter().copied());
                walk.work_empty.extend(run.work_empty.iter().copied());
                let context = RunContext {
                    kernel: index,
                    core,
                    block,
                    launch: launch.to_string(),
                };
                if let Some(stop) = &run.stop {
                    self.stops
                        .push((stop.span.clone(), format!("{} on {}", stop.reason, context.describe())));
                }
                cores.push((context.clone(), core_syncs(&run.instrs), run.stop.is_none()));
                if seen.runs.insert(fingerprint(index, &run.instrs)) {
                    self.check_run(walk, &run, &context, seen);
                }
            }
        }
        cores
    }

    fn check_run(&mut self, walk: &KernelWalk<'p>, run: &walk::Run<'p>, context: &RunContext, seen: &mut Seen) {
        let (kernel, dequeued) = (walk.kernel, walk.dequeued.as_slice());
        let instrs = &run.instrs;
        let order = order::order(instrs, auto_synced(kernel, context.core, Pipe::S, Pipe::V));
        let finding = |i: usize, other: Option<usize>, key: FlagKey| FlagFinding {
            op: instrs[i].op,
            other: other.map(|o| instrs[o].op),
            also: Vec::new(),
            key,
            context: context.clone(),
        };
        let key_of = |i: usize| match &instrs[i].step {
            Step::Set { key, .. } | Step::Wait { key, .. } => Some(*key),
            _ => None,
        };
        // The first wait that blocks for good is the cause; the later ones of the run
        // (a drain after the loop, the pipes it holds up) follow from it.
        let mut stuck: Vec<(usize, Option<usize>)> = order.unmatched_waits.iter().map(|&w| (w, None)).collect();
        stuck.extend(order.cycles.iter().map(|&(w, s)| (w, Some(s))));
        stuck.sort_unstable();
        if let Some(&(wait, set)) = stuck.first()
            && let Some(key) = key_of(wait)
            && seen.spans.insert(("hang", instrs[wait].op.span.clone()))
        {
            let mut hang = finding(wait, set, key);
            hang.also = stuck[1..].iter().map(|&(w, _)| instrs[w].op).collect();
            hang.also.dedup_by_key(|op| op.span.clone());
            self.hangs.push(hang);
        }
        // A run not followed to its end may wait for its sets in the part not walked.
        let unmatched_sets = if run.stop.is_none() {
            order.unmatched_sets.as_slice()
        } else {
            &[]
        };
        for &set in unmatched_sets {
            if let Some(key) = key_of(set)
                && !fill_for_a_loop_not_run(instrs[set].op, key, &walk.later_dequeue_loops, &run.entered)
                && seen.spans.insert(("pending", instrs[set].op.span.clone()))
            {
                self.pending_sets.push(finding(set, None, key));
            }
        }
        self.double_sets_and_ids(instrs, context, seen);
        for mixed in mixed_ids::mixed_ids(kernel, instrs) {
            if seen.mixed.insert((context.kernel, mixed.event, mixed.literal)) {
                self.mixed_ids.push(mixed);
            }
        }
        if order.unmatched_waits.is_empty() && order.cycles.is_empty() {
            self.races(kernel, instrs, &order, context, dequeued, seen);
        }
    }

    fn double_sets_and_ids(&mut self, instrs: &[Instr<'p>], context: &RunContext, seen: &mut Seen) {
        let mut pending: HashMap<FlagKey, usize> = HashMap::new();
        let mut allocated: HashMap<(HardEvent, i64), usize> = HashMap::new();
        for (i, instr) in instrs.iter().enumerate() {
            match &instr.step {
                Step::Set { key, .. } => {
                    if let FlagKey::Event { id, .. } = key
                        && !(0..syncguard_model::kernel::EVENT_IDS).contains(id)
                        && *id < 1000
                        && seen.spans.insert(("id", instr.op.span.clone()))
                    {
                        self.ids_out_of_range.push(FlagFinding {
                            op: instr.op,
                            other: None,
                            also: Vec::new(),
                            key: *key,
                            context: context.clone(),
                        });
                    }
                    if !matches!(key, FlagKey::Event { .. }) {
                        continue;
                    }
                    if let Some(&earlier) = pending.get(key)
                        && seen.spans.insert(("double", instr.op.span.clone()))
                    {
                        self.double_sets.push(FlagFinding {
                            op: instr.op,
                            other: Some(instrs[earlier].op),
                            also: Vec::new(),
                            key: *key,
                            context: context.clone(),
                        });
                    }
                    pending.insert(*key, i);
                }
                Step::Wait { key, .. } => {
                    pending.remove(key);
                }
                Step::AllocEventId {
                    event,
                    id,
                    fetch: false,
                } => {
                    allocated.insert((*event, *id), i);
                }
                Step::ReleaseEventId { event, id } => {
                    allocated.remove(&(*event, *id));
                }
                _ => {}
            }
        }
        let mut left: Vec<(HardEvent, usize)> = allocated.into_iter().map(|((e, _), i)| (e, i)).collect();
        left.sort_by_key(|(_, i)| *i);
        for (event, i) in left {
            if seen.spans.insert(("release", instrs[i].op.span.clone())) {
                self.unreleased_ids.push((instrs[i].op, event, context.clone()));
            }
        }
    }

    fn races(
        &mut self,
        kernel: &'p Kernel,
        instrs: &[Instr<'p>],
        order: &order::Order,
        context: &RunContext,
        dequeued: &[bool],
        seen: &mut Seen,
    ) {
        // Earlier accesses by memory region and lane, in program order.
        let mut earlier: HashMap<Region, [Vec<(usize, usize)>; order::LANES]> = HashMap::new();
        for (b, instr) in instrs.iter().enumerate() {
            let Step::Work { pipe, mems } = &instr.step else {
                continue;
            };
            if !order.runs(b) {
                continue;
            }
            for (bm, mem) in mems.iter().enumerate() {
                let lanes = earlier.entry(mem.region).or_default();
                for (lane, list) in lanes.iter().enumerate() {
                    if lane == order::lane(*pipe) {
                        continue;
                    }
                    for &(a, am) in list.iter().rev() {
                        if order.before(instrs, a, b) {
                            break;
                        }
                        let Step::Work {
                            pipe: a_pipe,
                            mems: a_mems,
                        } = &instrs[a].step
                        else {
                            continue;
                        };
                        let other = &a_mems[am];
                        if !(other.write || mem.write) {
                            continue;
                        }
                        if order.before(instrs, b, a) || auto_synced(kernel, context.core, *a_pipe, *pipe) {
                            continue;
                        }
                        if !other.overlaps(mem) {
                            if other.hidden_by_a_zero_length(mem) {
                                seen.hidden_by_zero_length(walk::work_id(instrs[a].op), walk::work_id(instr.op));
                            }
                            continue;
                        }
                        let pair = (instrs[a].op.span.clone(), instr.op.span.clone());
                        let undecided = (!other.certainly_overlaps(mem)).then(|| unknown_length(other, mem));
                        let new = match undecided {
                            None => seen.races.insert(pair),
                            Some(_) => !seen.races.contains(&pair) && seen.undecided_races.insert(pair),
                        };
                        if !new {
                            continue;
                        }
                        let without_dequeue = missing_dequeue(kernel, dequeued, other, mem, *a_pipe, *pipe);
                        let beyond_queue = beyond_queue(kernel, other, mem, *a_pipe, *pipe);
                        self.races.push(Race {
                            first: instrs[a].op,
                            second: instr.op,
                            first_pipe: *a_pipe,
                            second_pipe: *pipe,
                            first_write: other.write,
                            second_write: mem.write,
                            memory: memory_name(kernel, mem),
                            without_dequeue,
                            beyond_queue,
                            context: context.clone(),
                            iterations: iterations(instrs, a, b),
                            undecided,
                        });
                    }
                }
                lanes[order::lane(*pipe)].push((b, bm));
            }
        }
    }
}

/// One launch's values, its extra core indices (z3's), block count and TilingKey.
struct LaunchAt<'a> {
    params: &'a [i64],
    extra_cores: &'a [CoreIndex],
    /// Only `extra_cores`, not the sampled ones.
    named_cores_only: bool,
    blocks: i64,
    key: i64,
    launch: &'a str,
}

#[derive(Default)]
struct Seen {
    runs: HashSet<u64>,
    spans: HashSet<(&'static str, Span)>,
    races: HashSet<(Span, Span)>,
    /// Pairs found racing only through a length the reader could not compute.
    undecided_races: HashSet<(Span, Span)>,
    /// (kernel, HardEvent, literal id) already said mixed with TPipe's ids.
    mixed: HashSet<(usize, HardEvent, i64)>,
    /// Unordered work instructions of two pipes on one memory that no run of the kernel
    /// being checked gave bytes together (one ran at a length of zero), in the order
    /// found: z3 is asked for a launch that does (`reach`).
    hidden_pairs: Vec<(walk::WorkId, walk::WorkId)>,
}

impl Seen {
    /// Most pairs kept: z3's questions per kernel are fewer.
    const MAX_HIDDEN_PAIRS: usize = 256;

    fn hidden_by_zero_length(&mut self, first: walk::WorkId, second: walk::WorkId) {
        let pair = (first, second);
        if self.hidden_pairs.len() < Self::MAX_HIDDEN_PAIRS && !self.hidden_pairs.contains(&pair) {
            self.hidden_pairs.push(pair);
        }
    }
}

/// The compiler's automatic sync orders the scalar pipe with V, MTE2 and MTE3, both
/// ways, on vector cores; on cube cores it inserts nothing.
fn auto_synced(kernel: &Kernel, core: CoreType, a: Pipe, b: Pipe) -> bool {
    let scalar_pair = |x: Pipe, y: Pipe| x == Pipe::S && matches!(y, Pipe::V | Pipe::Mte2 | Pipe::Mte3);
    kernel.auto_sync && core == CoreType::Aiv && (scalar_pair(a, b) || scalar_pair(b, a))
}

/// For a race on a queue's tensor between its producer and consumer pipes where the
/// consumer's tensor never came from `DeQue`: the tensor's name.
fn missing_dequeue(kernel: &Kernel, dequeued: &[bool], a: &Mem, b: &Mem, a_pipe: Pipe, b_pipe: Pipe) -> Option<String> {
    let (buffer, _) = a.slot.filter(|slot| Some(*slot) == b.slot)?;
    let buffer = &kernel.buffers[buffer];
    if !buffer.queue {
        return None;
    }
    let consumer_side = [(a, a_pipe), (b, b_pipe)]
        .into_iter()
        .find(|(_, pipe)| *pipe == buffer.consumer())?;
    let tensor = consumer_side.0.tensor?;
    (!dequeued[tensor] && [a_pipe, b_pipe].contains(&buffer.producer())).then(|| kernel.tensors[tensor].name.clone())
}

/// For a race on one slot of a queue where one of the two pipes is neither the queue's
/// producer nor its consumer (an input queue's tile copied out by MTE3): what the queue
/// orders, and the queue that would order the pair.
fn beyond_queue(kernel: &Kernel, a: &Mem, b: &Mem, a_pipe: Pipe, b_pipe: Pipe) -> Option<String> {
    let (buffer, _) = a.slot.filter(|slot| Some(*slot) == b.slot)?;
    let buffer = &kernel.buffers[buffer];
    let (producer, consumer) = (buffer.producer(), buffer.consumer());
    if !buffer.queue
        || [a_pipe, b_pipe]
            .iter()
            .all(|pipe| *pipe == producer || *pipe == consumer)
    {
        return None;
    }
    let mut text = format!(
        "`{}` is a queue from {} to {}: its EnQue/DeQue and FreeTensor/AllocTensor order those two pipes only",
        buffer.name,
        producer.name(),
        consumer.name()
    );
    if buffer.src == syncguard_model::kernel::Position::VecIn && [a_pipe, b_pipe].contains(&Pipe::Mte3) {
        text.push_str(
            "; a tile copied out straight from the queue it came in by needs `TQueBind<TPosition::VECIN, \
             TPosition::VECOUT>`, whose syncs order PIPE_MTE2 with PIPE_MTE3",
        );
    }
    Some(text)
}

fn memory_name(kernel: &Kernel, mem: &Mem) -> String {
    let range = |start: i64, end: i64| {
        if end == i64::MAX {
            String::new()
        } else {
            format!(" bytes {start}..{end}")
        }
    };
    match (mem.region, mem.tensor) {
        (_, Some(tensor)) => {
            let t = &kernel.tensors[tensor];
            let buffer = &kernel.buffers[t.buffer];
            let slot = mem.slot.map_or(0, |(_, s)| s);
            format!(
                "tensor `{}` ({} slot {slot} of `{}`,{})",
                t.name,
                buffer.src.space().name(),
                buffer.name,
                range(mem.start, mem.end)
            )
        }
        (Region::Gm(gm), None) => format!("GM `{}`{}", kernel.gm[gm].name, range(mem.start, mem.end)),
        (Region::Local(space), None) => format!("{}{}", space.name(), range(mem.start, mem.end)),
    }
}

/// Why a race whose ranges overlap only past a first byte is undecided.
fn unknown_length(first: &Mem, second: &Mem) -> String {
    use syncguard_model::kernel::Known;
    let which = match (first.known != Known::Range, second.known != Known::Range) {
        (true, true) => "either access",
        (true, false) => "the first access",
        _ => "the second access",
    };
    format!(
        "undecided: the reader could not compute which bytes of its tensor {which} touches (its length, or the \
         element size its offset counts in), and the two may not overlap"
    )
}

fn iterations(instrs: &[Instr], a: usize, b: usize) -> String {
    let show = |i: usize| {
        instrs[i]
            .iterations
            .iter()
            .map(|(_, v)| v.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (x, y) = (show(a), show(b));
    match (x.is_empty(), y.is_empty()) {
        (true, true) => String::new(),
        _ if x == y => format!("in loop iteration {x}"),
        (true, false) => format!("before the loop and in iteration {y}"),
        (false, true) => format!("in iteration {x} and after the loop"),
        _ => format!("in iterations {x} and {y}"),
    }
}

fn core_syncs<'p>(instrs: &[Instr<'p>]) -> CoreSyncs<'p> {
    let mut syncs = CoreSyncs::default();
    let mut burst: HashMap<i64, u32> = HashMap::new();
    for instr in instrs {
        match &instr.step {
            Step::CrossSet { flag, .. } => {
                let count = syncs.flags.entry(*flag).or_default();
                count.sets += 1;
                count.set_call.get_or_insert(instr.op);
                let run = burst.entry(*flag).or_default();
                *run += 1;
                if syncs.longest_burst.is_none_or(|(n, _, _)| *run > n) {
                    syncs.longest_burst = Some((*run, *flag, instr.op));
                }
            }
            Step::CrossWait { flag, .. } => {
                let count = syncs.flags.entry(*flag).or_default();
                count.waits += 1;
                count.wait_call.get_or_insert(instr.op);
                burst.clear();
            }
            Step::SyncAll { workspace, .. } => {
                syncs.sync_alls.push(instr.op);
                if let Some(len) = workspace {
                    syncs.soft_workspaces.push((instr.op, *len));
                }
                burst.clear();
            }
            _ => {}
        }
    }
    syncs
}

fn sample_blocks(count: i64) -> Vec<i64> {
    if count <= MAX_CORES {
        return (0..count).collect();
    }
    let set: BTreeSet<i64> = [0, 1, count / 2, count - 2, count - 1].into_iter().collect();
    set.into_iter().collect()
}

fn fingerprint(kernel: usize, instrs: &[Instr]) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    kernel.hash(&mut hasher);
    for instr in instrs {
        (instr.op as *const KOp as usize).hash(&mut hasher);
        match &instr.step {
            Step::Work { mems, .. } => {
                for mem in mems {
                    (mem.region, mem.start, mem.end).hash(&mut hasher);
                }
            }
            Step::Set { key, .. } | Step::Wait { key, .. } => key.hash(&mut hasher),
            Step::CrossSet { flag, .. } | Step::CrossWait { flag, .. } => flag.hash(&mut hasher),
            _ => {}
        }
    }
    hasher.finish()
}

/// Every call of the kernel, in source order.
pub fn calls(kernel: &Kernel) -> Vec<&KOp> {
    let mut out = Vec::new();
    KStmt::calls(&kernel.body, &mut out);
    out
}

/// Per `EnQue` (by span), the loops that come after it in the kernel's code and hold a
/// `DeQue` of its queue: where a prologue's fill is taken.
fn later_dequeue_loops(kernel: &Kernel) -> HashMap<Span, Vec<VarId>> {
    /// The kernel's code in order: its `EnQue`s, and its loops with the queues they
    /// dequeue from.
    enum Event<'k> {
        EnQue(&'k Span, usize),
        Loop(VarId, HashSet<usize>),
    }
    fn dequeued_in(stmts: &[KStmt]) -> HashSet<usize> {
        let mut ops = Vec::new();
        KStmt::calls(stmts, &mut ops);
        ops.iter()
            .filter_map(|op| match op.kind {
                KOpKind::DeQue { buffer, .. } => Some(buffer),
                _ => None,
            })
            .collect()
    }
    fn visit<'k>(stmts: &'k [KStmt], events: &mut Vec<Event<'k>>) {
        for stmt in stmts {
            match stmt {
                KStmt::Op(op) => {
                    if let KOpKind::EnQue { buffer, .. } = op.kind {
                        events.push(Event::EnQue(&op.span, buffer));
                    }
                }
                KStmt::If { then, otherwise, .. } => {
                    visit(then, events);
                    visit(otherwise, events);
                }
                KStmt::For { var, body, .. } => {
                    events.push(Event::Loop(*var, dequeued_in(body)));
                    visit(body, events);
                }
                KStmt::Return(_) => {}
            }
        }
    }
    let mut events = Vec::new();
    visit(&kernel.body, &mut events);
    let mut out: HashMap<Span, Vec<VarId>> = HashMap::new();
    for (at, event) in events.iter().enumerate() {
        let Event::EnQue(span, buffer) = event else { continue };
        let loops = out.entry((*span).clone()).or_default();
        for later in &events[at + 1..] {
            if let Event::Loop(var, queues) = later
                && queues.contains(buffer)
                && !loops.contains(var)
            {
                loops.push(*var);
            }
        }
    }
    out
}

/// A queue fill left set in a run that did not enter a loop, after the `EnQue`, that
/// holds the queue's `DeQue`s: the prologue fill of a prefetching tile loop (`EnQue`
/// before the loop, each iteration takes one and fills the next) at a launch with no
/// tiles, which the host's tiling does not make. Not reported from that run; a run that
/// enters the loop and still leaves the fill is.
fn fill_for_a_loop_not_run(
    op: &KOp,
    key: FlagKey,
    later_loops: &HashMap<Span, Vec<VarId>>,
    entered: &HashSet<VarId>,
) -> bool {
    matches!(key, FlagKey::Queue { freed: false, .. })
        && later_loops
            .get(&op.span)
            .is_some_and(|loops| loops.iter().any(|var| !entered.contains(var)))
}

fn dequeued_tensors(kernel: &Kernel) -> Vec<bool> {
    let mut dequeued = vec![false; kernel.tensors.len()];
    for op in calls(kernel) {
        if let KOpKind::DeQue { tensor, .. } = op.kind {
            dequeued[tensor] = true;
        }
    }
    dequeued
}

/// The TilingKeys a kernel tests (`TILING_KEY_IS(k)`), or `[0]`.
fn tiling_keys(stmts: &[KStmt]) -> Vec<i64> {
    fn visit(expr: &Expr, keys: &mut BTreeSet<i64>) {
        match expr {
            Expr::Binary(BinOp::Eq, a, b) if matches!(**a, Expr::TilingKey) => {
                if let Some(k) = b.as_const() {
                    keys.insert(k);
                }
            }
            Expr::Binary(_, a, b) => {
                visit(a, keys);
                visit(b, keys);
            }
            Expr::Unary(_, a) => visit(a, keys),
            Expr::Cond(parts) => parts.iter().for_each(|p| visit(p, keys)),
            _ => {}
        }
    }
    fn walk(stmts: &[KStmt], keys: &mut BTreeSet<i64>) {
        for stmt in stmts {
            match stmt {
                KStmt::If {
                    cond, then, otherwise, ..
                } => {
                    visit(cond, keys);
                    walk(then, keys);
                    walk(otherwise, keys);
                }
                KStmt::For { body, .. } => walk(body, keys),
                _ => {}
            }
        }
    }
    let mut keys = BTreeSet::new();
    walk(stmts, &mut keys);
    if keys.is_empty() {
        keys.insert(0);
    }
    keys.into_iter().collect()
}

fn params_in(expr: &Expr, out: &mut HashSet<ParamId>) {
    match expr {
        Expr::Param(id) => {
            out.insert(*id);
        }
        Expr::Unary(_, a) => params_in(a, out),
        Expr::Binary(_, a, b) => {
            params_in(a, out);
            params_in(b, out);
        }
        Expr::Cond(parts) => parts.iter().for_each(|p| params_in(p, out)),
        _ => {}
    }
}

/// Every expression of a kernel: its block count, buffer lengths, conditions, loop
/// bounds and the operands of its calls.
pub(crate) fn for_each_expr<'k>(kernel: &'k Kernel, visit: &mut dyn FnMut(&'k Expr)) {
    fn stmts<'k>(body: &'k [KStmt], visit: &mut dyn FnMut(&'k Expr)) {
        for stmt in body {
            match stmt {
                KStmt::If {
                    cond, then, otherwise, ..
                } => {
                    visit(cond);
                    stmts(then, visit);
                    stmts(otherwise, visit);
                }
                KStmt::For { start, end, body, .. } => {
                    visit(start);
                    visit(end);
                    stmts(body, visit);
                }
                KStmt::Op(_) | KStmt::Return(_) => {}
            }
        }
    }
    visit(&kernel.blocks);
    for buffer in &kernel.buffers {
        visit(&buffer.len);
    }
    for op in calls(kernel) {
        op_exprs(op, visit);
    }
    stmts(&kernel.body, visit);
}

fn op_exprs<'k>(op: &'k KOp, visit: &mut dyn FnMut(&'k Expr)) {
    let mut access = |a: &'k syncguard_model::kernel::Access| {
        visit(&a.offset);
        if let Some(len) = &a.len {
            visit(len);
        }
    };
    match &op.kind {
        KOpKind::Work { writes, reads, .. } => writes.iter().chain(reads).for_each(access),
        KOpKind::SetFlag { id, .. } | KOpKind::WaitFlag { id, .. } | KOpKind::ReleaseEventId { id, .. } => visit(id),
        KOpKind::CrossCoreSetFlag { flag, .. } | KOpKind::CrossCoreWaitFlag { flag, .. } => visit(flag),
        KOpKind::SyncAll {
            workspace: Some(workspace),
            ..
        } => access(workspace),
        _ => {}
    }
}

fn describe_launch(program: &Program, params: &[i64], mentioned: &HashSet<ParamId>) -> String {
    program
        .params
        .iter()
        .enumerate()
        .filter(|(i, _)| mentioned.contains(&ParamId(*i as u32)))
        .map(|(i, p)| format!("{} = {}", p.name, params[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The parameters a kernel's code mentions: the ones its launches vary.
fn mentioned_params(kernel: &Kernel) -> HashSet<ParamId> {
    let mut mentioned = HashSet::new();
    for_each_expr(kernel, &mut |expr| params_in(expr, &mut mentioned));
    mentioned
}

/// What the walks of one kernel share.
struct KernelWalk<'p> {
    index: usize,
    kernel: &'p Kernel,
    mentioned: HashSet<ParamId>,
    keys: Vec<i64>,
    dequeued: Vec<bool>,
    later_dequeue_loops: HashMap<Span, Vec<VarId>>,
    /// Instructions issued over all runs so far.
    walked: usize,
    /// Loops some run entered.
    entered: HashSet<VarId>,
    /// Loops some run iterated at least [`walk::REPEATS`] times.
    repeated: HashSet<VarId>,
    /// Arms of `if`s some run took.
    arms: HashSet<walk::ArmId>,
    /// Arms some run took with its enclosing loops run [`walk::REPEATS`] times.
    arms_repeated: HashSet<walk::ArmId>,
    /// Work instructions some run gave every length above zero, and some gave one at zero.
    work_done: HashSet<walk::WorkId>,
    work_empty: HashSet<walk::WorkId>,
}

/// A launch to walk: parameter values, the cores z3 asks for beside the sampled ones,
/// and whether it is z3's counterexample to a balance (said in the finding).
struct PlannedLaunch {
    params: Vec<i64>,
    cores: Vec<CoreIndex>,
    counterexample: bool,
    /// The TilingKey of a launch z3 chose to reach one loop or arm: only that key and
    /// the core z3 named are walked (every core of a launch at values up to 4096 costs
    /// seconds), and the launch is left out of the rules that compare the cores of a
    /// launch, whose balance z3 checks for every value (`core_counts`).
    focus: Option<i64>,
}

/// The sampled launches, then z3's where cross-core flags or SyncAll do not balance,
/// each with the cores it involves (walked like the sampled ones, so that they are
/// reported with their calls).
fn launches_to_walk(
    program: &Program,
    kernel: &Kernel,
    mentioned: &HashSet<ParamId>,
    keys: &[i64],
) -> Vec<PlannedLaunch> {
    let planned = |params: Vec<i64>| PlannedLaunch {
        params,
        cores: Vec::new(),
        counterexample: false,
        focus: None,
    };
    let mut launches: Vec<PlannedLaunch> =
        crate::analysis::assignments(program, |i| mentioned.contains(&ParamId(i as u32)))
            .into_iter()
            .map(planned)
            .collect();
    // Tiling fields come in groups (a tile count, a tile length, a tail): the sampled
    // combinations leave most of them at their smallest, where loops run once or not at
    // all. Every field at 1 to 4 at once gives the first, second and steady-state
    // iterations of every loop, and more tiles than a double-buffered queue has slots.
    // The reader's choices (a branch, a build type, an unknown loop's count: bounded
    // parameters) are taken at k too, and at their first value, so that raising the
    // fields does not always move every choice to its last arm.
    for k in 1..=UNIFORM_LAUNCHES {
        for choices_first in [false, true] {
            let params: Vec<i64> = program
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let value = match (mentioned.contains(&ParamId(i as u32)), p.max) {
                        (false, _) => p.min,
                        (true, Some(_)) if choices_first => p.min,
                        (true, _) => k,
                    };
                    value.clamp(p.min, p.max.unwrap_or(i64::MAX))
                })
                .collect();
            if !launches.iter().any(|known| known.params == params) {
                launches.push(planned(params));
            }
        }
    }
    let mut add = |found: crate::smt::properties::core_counts::UnbalancedLaunch, counterexample: bool| match launches
        .iter_mut()
        .find(|known| known.params == found.params)
    {
        Some(known) => {
            known.cores.extend(found.cores);
            known.counterexample |= counterexample;
        }
        None => launches.push(PlannedLaunch {
            params: found.params,
            cores: found.cores,
            counterexample,
            focus: None,
        }),
    };
    for found in crate::smt::properties::core_counts::unbalanced_launches(program, kernel, keys) {
        add(found, true);
    }
    launches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn unwalked(arm: Option<bool>, why: &str) -> Unwalked {
        Unwalked {
            span: Span::new(FileId(0), 10..40),
            arm,
            message: format!("{arm:?}: {why}"),
        }
    }

    /// A helper inlined twice has its `if` twice, and each copy can be given up for its
    /// own reason: the source's arm is said once, its loop and other arm still said.
    #[test]
    fn an_inlined_arm_unwalked_twice_is_said_once() {
        let facts = KernelFacts {
            unwalked: vec![
                unwalked(Some(true), "z3 found none"),
                unwalked(Some(true), "the questions were spent"),
                unwalked(Some(false), "z3 found none"),
                unwalked(None, "z3 found none"),
            ],
            ..KernelFacts::default()
        };
        let notes = facts.stop_notes();
        let messages: Vec<&str> = notes.iter().map(|note| note.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "Some(true): z3 found none",
                "Some(false): z3 found none",
                "None: z3 found none"
            ]
        );
    }
}
