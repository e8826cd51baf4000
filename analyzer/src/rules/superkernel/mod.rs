//! SG4xx: SuperKernel early start (`SetNextTaskStart` / `WaitPreTaskEnd`).
//!
//! The path-based rules (SG401, SG402, SG403, SG406) walk every core's code path
//! (`exec::walk_core`) for every core and TilingKey of a sub-kernel (`exec::core_envs`),
//! once per *launch context*: an assignment of the parameters that kernel code mentions
//! (and of `rank`, when it does), enumerated as the concrete runs of `analysis.rs` do
//! (small domains fully, larger ones by their three smallest values). Within one launch
//! context, parameters and `rank` are the same on every core, so a branch on them is
//! taken identically by all cores: only `GetBlockIdx()`, the core type and the TilingKey
//! make paths diverge. Uniformity is thus decided by enumeration, not symbolically.
//!
//! `SetNextTaskStart` and `WaitPreTaskEnd` take effect on Atlas A3 and Ascend 950 only;
//! on A2 and 310P they are compiled and ignored. The hang and race rules still report
//! there, as warnings, because the same kernel built for A3 hangs.

pub mod invalid_pipe;
pub mod next_task_start_before_last_transfer;
pub mod next_task_start_no_effect;
pub mod next_task_start_not_on_all_paths;
pub mod next_task_start_repeated;
pub mod wait_pre_task_end_mismatch;

use std::collections::HashSet;

use crate::diagnostic::{Diagnostic, Severity};
use crate::exec::{CoreEnd, CoreEnv, Env, MAX_CORE_STEPS, StopReason, core_envs, walk_core};
use crate::model::{
    Block, BufferInfo, CopyDirection, Expr, MemorySpace, ObjId, Op, OpKind, ParamId, Program, RankCount, Stmt,
    SubKernel, SuperKernel, Target,
};
use crate::rules::RuleInfo;
use crate::source::Span;

/// Whether the product runs `SetNextTaskStart` / `WaitPreTaskEnd` (else compile-only).
fn effective(target: Target) -> bool {
    matches!(target, Target::A3 | Target::Ascend950)
}

/// "SuperKernel sk hangs" (or, where the target ignores early start, that it would).
fn hangs(program: &Program, superkernel: &SuperKernel) -> String {
    if effective(program.settings.target) {
        format!("SuperKernel {} hangs", superkernel.name)
    } else {
        format!("SuperKernel {} would hang on A3 and Ascend 950", superkernel.name)
    }
}

/// On a target that ignores early start, a latent finding: a warning with a note.
fn for_target(program: &Program, diagnostic: Diagnostic) -> Diagnostic {
    let target = program.settings.target;
    if effective(target) {
        return diagnostic;
    }
    let severity = diagnostic.severity.max(Severity::Warning);
    diagnostic.with_severity(severity).with_note(format!(
        "target {} only compiles SetNextTaskStart and WaitPreTaskEnd (no effect): this goes wrong when the same kernel is built for A3 or Ascend 950",
        target.name()
    ))
}

/// One launch context: parameter values (by `ParamId`) and the rank.
struct Launch {
    params: Vec<i64>,
    rank: i64,
    /// "EMPTY_GROUP_LIST = 0, rank = 1": the values kernel code depends on, if any.
    label: Option<String>,
}

impl Launch {
    fn note(&self, diagnostic: Diagnostic) -> Diagnostic {
        match &self.label {
            Some(label) => diagnostic.with_note(format!("found with {label}")),
            None => diagnostic,
        }
    }
}

/// Most launch contexts per SuperKernel.
const MAX_LAUNCHES: usize = crate::analysis::MAX_ASSIGNMENTS;

/// Most ranks enumerated when kernel code reads `rank`.
const MAX_RANKS: i64 = 8;

/// The launch contexts of a SuperKernel: every combination of the values of the
/// parameters its kernel code mentions (the others keep their smallest value), and of
/// `rank` if it is mentioned.
fn launches(program: &Program, superkernel: &SuperKernel) -> Vec<Launch> {
    let mut mentioned = Mentions::default();
    for sub in &superkernel.subkernels {
        mentioned.block(&sub.body);
    }
    let all = crate::analysis::assignments(program, |index| mentioned.params.contains(&ParamId(index as u32)));
    let mut out = Vec::new();
    for params in all {
        let ranks = if mentioned.rank {
            let count = match program.settings.ranks {
                RankCount::Fixed(n) => i64::from(n),
                RankCount::Param(id) => params.get(id.index()).copied().unwrap_or(1),
            };
            count.clamp(1, MAX_RANKS)
        } else {
            1
        };
        for rank in 0..ranks {
            let mut parts: Vec<String> = program
                .params
                .iter()
                .enumerate()
                .filter(|(i, _)| mentioned.params.contains(&ParamId(*i as u32)))
                .map(|(i, p)| format!("{} = {}", p.name, params[i]))
                .collect();
            if mentioned.rank {
                parts.push(format!("rank = {rank}"));
            }
            out.push(Launch {
                params: params.clone(),
                rank,
                label: (!parts.is_empty()).then(|| parts.join(", ")),
            });
            if out.len() >= MAX_LAUNCHES {
                return out;
            }
        }
    }
    out
}

/// Which parameters (and whether `rank`) kernel code reads.
#[derive(Default)]
struct Mentions {
    params: HashSet<ParamId>,
    rank: bool,
}

impl Mentions {
    fn block(&mut self, block: &Block) {
        for stmt in block {
            match stmt {
                Stmt::Op(op) => {
                    if let OpKind::DataCopy { range, .. } = &op.kind {
                        self.expr(&range.offset);
                        self.expr(&range.len);
                    }
                }
                Stmt::If {
                    cond, then, otherwise, ..
                } => {
                    self.expr(cond);
                    self.block(then);
                    self.block(otherwise);
                }
                Stmt::For { start, end, body, .. } => {
                    self.expr(start);
                    self.expr(end);
                    self.block(body);
                }
                Stmt::While { cond, body, .. } => {
                    self.expr(cond);
                    self.block(body);
                }
                Stmt::Assign { value, .. } => self.expr(value),
                Stmt::QueryBranch { done, pending, .. } => {
                    self.block(done);
                    self.block(pending);
                }
                Stmt::Return(_) => {}
            }
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Param(id) => {
                self.params.insert(*id);
            }
            Expr::Rank => self.rank = true,
            Expr::Unary(_, e) => self.expr(e),
            Expr::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::Cond(parts) => parts.iter().for_each(|e| self.expr(e)),
            _ => {}
        }
    }
}

/// A global-memory region as kernel code names it. Every `HcclGetHcclBuffer` handle
/// is this rank's one HCCL buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Region {
    Buffer(ObjId),
    HcclLocal,
}

fn region(program: &Program, buffer: ObjId) -> Region {
    match &program.object(buffer).kind {
        crate::model::ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::HcclLocal,
            ..
        }) => Region::HcclLocal,
        _ => Region::Buffer(buffer),
    }
}

/// A `DataCopy` as one core executes it: which bytes of which buffer.
#[derive(Clone, Copy)]
struct GmCopy<'p> {
    op: &'p Op,
    buffer: ObjId,
    region: Region,
    start: i64,
    end: i64,
    /// GM is written (`DataCopy(y[...], UB)`), else read.
    write: bool,
}

impl GmCopy<'_> {
    /// "y[512..1024]"
    fn bytes(&self, program: &Program) -> String {
        format!("{}[{}..{}]", program.object(self.buffer).shown(), self.start, self.end)
    }

    fn verb(&self) -> &'static str {
        if self.write { "writes" } else { "reads" }
    }
}

/// One early-start relevant event on a core's path.
#[derive(Clone, Copy)]
enum Step<'p> {
    Start(&'p Op),
    Wait(&'p Op),
    Copy(GmCopy<'p>),
}

/// One core's path through a sub-kernel.
struct CorePath<'p> {
    core: CoreEnv,
    steps: Vec<Step<'p>>,
    /// How the path ended: an early `return`, or a condition with no value (reported
    /// by the concrete run) that stops it.
    end: CoreEnd,
}

impl<'p> CorePath<'p> {
    /// Why the path may miss a call: `returned` after an early return, `stopped` where
    /// a condition has no value, else nothing.
    fn why_not(&self, returned: &'static str, stopped: &'static str) -> &'static str {
        match self.end {
            CoreEnd::Returned => returned,
            CoreEnd::Stopped(_) => stopped,
            CoreEnd::Ran => "",
        }
    }

    /// Where the core first calls `SetNextTaskStart`, as an index into `steps`.
    fn first_start(&self) -> Option<(usize, &'p Op)> {
        self.steps.iter().enumerate().find_map(|(i, s)| match s {
            Step::Start(op) => Some((i, *op)),
            _ => None,
        })
    }
}

/// Every core's path through `sub` in one launch context, in `core_envs` order.
/// `None` when the cores take more steps than a launch may (the concrete run reports
/// it as too large): a truncated path would be a false divergence.
fn core_paths<'p>(program: &'p Program, sub: &'p SubKernel, launch: &Launch) -> Option<Vec<CorePath<'p>>> {
    let mut budget = MAX_CORE_STEPS;
    let paths: Vec<CorePath> = core_envs(sub.tiling_keys.iter().copied(), sub.aiv_cores, sub.aic_cores)
        .map(|core| {
            let mut env = Env {
                params: launch.params.clone(),
                rank: launch.rank,
                vars: vec![None; program.vars.len()],
                core: Some(core),
            };
            let mut steps = Vec::new();
            let end = walk_core(&sub.body, &mut env, &mut budget, &mut |op, env| match &op.kind {
                OpKind::SetNextTaskStart { .. } => steps.push(Step::Start(op)),
                OpKind::WaitPreTaskEnd { .. } => steps.push(Step::Wait(op)),
                OpKind::DataCopy { direction, range } => {
                    let (Ok(start), Ok(len)) = (env.eval(&range.offset), env.eval(&range.len)) else {
                        return;
                    };
                    let Some(end) = start.checked_add(len) else { return };
                    if len > 0 {
                        steps.push(Step::Copy(GmCopy {
                            op,
                            buffer: range.buffer,
                            region: region(program, range.buffer),
                            start,
                            end,
                            write: *direction == CopyDirection::Out,
                        }));
                    }
                }
                _ => {}
            });
            CorePath { core, steps, end }
        })
        .collect();
    let cut =
        |p: &CorePath| matches!(&p.end, CoreEnd::Stopped(stop) if !matches!(stop.reason, StopReason::Undefined { .. }));
    (!paths.iter().any(cut)).then_some(paths)
}

/// "AIV core 3 with tiling key 2"
fn core_name(core: &CoreEnv) -> String {
    format!("{} with tiling key {}", core_only(core), core.tiling_key)
}

/// "AIV core 3"
fn core_only(core: &CoreEnv) -> String {
    let kind = if core.is_aiv { "AIV" } else { "AIC" };
    format!("{kind} core {}", core.block_idx)
}

/// "AIV cores 40-47, AIC core 3" for a set of cores of one tiling key.
fn core_set(cores: &[&CoreEnv]) -> String {
    let mut parts = Vec::new();
    for (aiv, kind) in [(true, "AIV"), (false, "AIC")] {
        let mut indices: Vec<i64> = cores.iter().filter(|c| c.is_aiv == aiv).map(|c| c.block_idx).collect();
        indices.sort_unstable();
        if indices.is_empty() {
            continue;
        }
        let mut ranges: Vec<(i64, i64)> = Vec::new();
        for i in indices {
            match ranges.last_mut() {
                Some((_, hi)) if *hi + 1 == i => *hi = i,
                _ => ranges.push((i, i)),
            }
        }
        let plural = ranges.len() > 1 || ranges[0].0 != ranges[0].1;
        let text: Vec<String> = ranges
            .iter()
            .map(|(lo, hi)| if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") })
            .collect();
        parts.push(format!(
            "{kind} core{} {}",
            if plural { "s" } else { "" },
            text.join(", ")
        ));
    }
    parts.join(" and ")
}

/// Which early-start call an exactly-once rule is about.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    SetNextTaskStart,
    WaitPreTaskEnd,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::SetNextTaskStart => "SetNextTaskStart",
            Call::WaitPreTaskEnd => "WaitPreTaskEnd",
        }
    }

    /// This call's ops on a core's path, in execution order.
    fn ops<'p>(self, path: &CorePath<'p>) -> Vec<&'p Op> {
        path.steps
            .iter()
            .filter_map(|s| match (self, s) {
                (Call::SetNextTaskStart, Step::Start(op)) | (Call::WaitPreTaskEnd, Step::Wait(op)) => Some(*op),
                _ => None,
            })
            .collect()
    }
}

/// Exactly-once across cores (SG401, SG406): in every launch context, either every core
/// of the sub-kernel, on every tiling key, calls `call`, or none does. Reports each
/// sub-kernel once, for the first launch context where some cores call it and others
/// do not.
fn check_all_paths(program: &Program, rule: &'static RuleInfo, call: Call, out: &mut Vec<Diagnostic>) {
    for superkernel in &program.superkernels {
        let launches = launches(program, superkernel);
        for sub in &superkernel.subkernels {
            for launch in &launches {
                let Some(paths) = core_paths(program, sub, launch) else {
                    continue;
                };
                if let Some(diagnostic) = divergence(program, superkernel, sub, &paths, rule, call) {
                    out.push(for_target(program, launch.note(diagnostic)));
                    break;
                }
            }
        }
    }
}

fn divergence(
    program: &Program,
    superkernel: &SuperKernel,
    sub: &SubKernel,
    paths: &[CorePath],
    rule: &'static RuleInfo,
    call: Call,
) -> Option<Diagnostic> {
    let calls = |p: &CorePath| !call.ops(p).is_empty();
    if paths.iter().all(calls) || !paths.iter().any(calls) {
        return None;
    }
    let name = call.name();
    let keys: Vec<i64> = sub.tiling_keys.clone();
    let of_key = |key: i64| paths.iter().filter(move |p| p.core.tiling_key == key);
    // A tiling key on which no core calls it while another key does: the branch on the
    // tiling key is the divergence. Otherwise some cores of one key skip it.
    let silent_key = keys.iter().copied().find(|&k| !of_key(k).any(calls));
    let (skipper, caller, what) = match silent_key {
        Some(key) => {
            let skipper = of_key(key).next()?;
            let caller = paths
                .iter()
                .filter(|p| calls(p))
                .find(|p| p.core.block_idx == skipper.core.block_idx && p.core.is_aiv == skipper.core.is_aiv)
                .or_else(|| paths.iter().find(|p| calls(p)))?;
            let what = format!(
                "on tiling key {key} no core calls {name} (e.g. {}{}), while on tiling key {} {} does",
                core_only(&skipper.core),
                skipper.why_not(
                    ", whose path returns early",
                    ", whose path stops at a value it cannot compute"
                ),
                caller.core.tiling_key,
                core_only(&caller.core),
            );
            (skipper, caller, what)
        }
        None => {
            let key = keys.iter().copied().find(|&k| of_key(k).any(|p| !calls(p)))?;
            let skippers: Vec<&CorePath> = of_key(key).filter(|p| !calls(p)).collect();
            let skipper = skippers[0];
            let caller = of_key(key).find(|p| calls(p))?;
            let cores: Vec<&CoreEnv> = skippers.iter().map(|p| &p.core).collect();
            let what = format!(
                "on tiling key {key}, {} never call{} {name}{} while {} does",
                core_set(&cores),
                if cores.len() == 1 { "s" } else { "" },
                skipper.why_not(
                    " (their path returns early)",
                    " (their path stops at a value it cannot compute)"
                ),
                core_only(&caller.core),
            );
            (skipper, caller, what)
        }
    };
    let primary = *call.ops(caller).first()?;
    let diagnostic = Diagnostic::new(
        rule,
        primary.span.clone(),
        format!(
            "{}: in sub-kernel {}, {what}: every core must call {name} exactly once on every tiling key, or the inter-task sync counts do not match",
            hangs(program, superkernel),
            sub.name
        ),
    )
    .with_label(format!(
        "reached by {}, skipped by {}",
        core_name(&caller.core),
        core_name(&skipper.core)
    ))
    .with_related(
        sub.span.clone(),
        format!("sub-kernel {} runs on every core with tiling keys {:?}", sub.name, sub.tiling_keys),
    )
    .with_help(format!(
        "call {name} once on every path: move it out of branches on GetBlockIdx(), TILING_KEY_IS() or the core type, and out of code skipped by an early return that not every core takes (an early return on a kernel argument, taken by all cores alike, is fine)"
    ));
    Some(diagnostic)
}

/// More than once on one core (SG402, SG406): one finding per call site that runs a
/// second time on some core, for the first launch context and core where it does.
fn check_repeated(program: &Program, rule: &'static RuleInfo, call: Call, out: &mut Vec<Diagnostic>) {
    let mut reported: HashSet<Span> = HashSet::new();
    for superkernel in &program.superkernels {
        let launches = launches(program, superkernel);
        for sub in &superkernel.subkernels {
            for launch in &launches {
                let Some(paths) = core_paths(program, sub, launch) else {
                    continue;
                };
                let calls: Vec<Vec<&Op>> = paths.iter().map(|p| call.ops(p)).collect();
                for (path, ops) in paths.iter().zip(&calls) {
                    if ops.len() < 2 || !reported.insert(ops[1].span.clone()) {
                        continue;
                    }
                    let everywhere = calls.iter().all(|o| o.len() >= 2 && o[1].span == ops[1].span);
                    let repeat = Repeat {
                        sub,
                        path,
                        ops,
                        everywhere,
                    };
                    out.push(for_target(
                        program,
                        launch.note(repeat.diagnostic(program, superkernel, rule, call)),
                    ));
                }
            }
        }
    }
}

/// A core path that runs one call more than once.
struct Repeat<'a, 'p> {
    sub: &'p SubKernel,
    path: &'a CorePath<'p>,
    ops: &'a [&'p Op],
    /// Every core path of the sub-kernel repeats it the same way.
    everywhere: bool,
}

impl Repeat<'_, '_> {
    fn diagnostic(
        &self,
        program: &Program,
        superkernel: &SuperKernel,
        rule: &'static RuleInfo,
        call: Call,
    ) -> Diagnostic {
        let name = call.name();
        let ops = self.ops;
        let times = match ops.len() {
            2 => "twice".to_string(),
            n => format!("{n} times"),
        };
        let in_loop = ops[0].span == ops[1].span;
        let core = core_only(&self.path.core);
        let cores = if self.everywhere {
            format!(
                "on every core of sub-kernel {} (e.g. {})",
                self.sub.name,
                core_name(&self.path.core)
            )
        } else {
            format!("on {} of sub-kernel {}", core_name(&self.path.core), self.sub.name)
        };
        let diagnostic = Diagnostic::new(
            rule,
            ops[1].span.clone(),
            format!(
                "{}: {name} runs {times}{} {cores}, where each core must call it exactly once: the extra sync instructions do not match the count the SuperKernel expects",
                hangs(program, superkernel),
                if in_loop { " (it is inside a loop)" } else { "" },
            ),
        );
        if in_loop {
            diagnostic
                .with_label(format!("runs {times} on {core}"))
                .with_help(match call {
                    Call::SetNextTaskStart => format!("call {name} once, after the loop"),
                    Call::WaitPreTaskEnd => format!("call {name} once, before the loop"),
                })
        } else {
            diagnostic
                .with_label(format!("a second call on {core}"))
                .with_related(ops[0].span.clone(), format!("first call on {core}"))
                .with_help(format!("keep one {name} call per core and remove the others"))
        }
    }
}

/// Every early-start call in a block, reachable or not, in text order.
fn calls_in<'p>(block: &'p Block, out: &mut Vec<&'p Op>) {
    crate::model::for_each_op(block, &mut |op| {
        if matches!(op.kind, OpKind::SetNextTaskStart { .. } | OpKind::WaitPreTaskEnd { .. }) {
            out.push(op);
        }
    });
}
