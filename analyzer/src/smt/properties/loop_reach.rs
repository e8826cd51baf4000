//! Launches that reach each loop and `if` arm of a kernel no sampled launch reached: the
//! sampled tiling values (each field at 1 to 4, every choice at its first or last value)
//! leave a loop whose trip count divides by a constant (`seqLength / blockDim / 32`
//! tiles) at zero trips, an `if (isNeoxStyle == 0)` at its `else`, and the build an
//! `#if ... #elif ... #elif` chain makes from mixed choices unwalked. For one such target
//! at a time, z3 looks for small tiling values, a core index and a TilingKey under
//! which its enclosing conditions hold, preferring the enclosing loops (and a target
//! loop) at three trips, for the first, the second and a reuse of a double-buffered
//! slot; the walk adds that launch, which reaches whatever else lies on its way. A
//! target no launch can reach is dead code; one z3 answers neither way for is left
//! unwalked and said (`crate::kernel::reach`).

use std::time::{Duration, Instant};

use z3::ast::{Bool, Int};

use super::core_counts::{Launch, cores_of, launch};
use crate::kernel::walk::{ArmId, WorkId, arm_id, work_id};
use crate::model::{Program, VarId};
use crate::smt::encode::{Encoder, Scope};
use crate::smt::{Answer, Query, SmtOptions, values_of};
use syncguard_model::kernel::{CoreType, KOp, KOpKind, KStmt, Kernel};

/// Most targets asked about per kernel, over its core types: a launch reaches a whole
/// subtree, so one question is usually enough for a build or a TilingKey's branch.
const MAX_QUESTIONS: usize = 96;
/// Deepest nesting followed.
const MAX_DEPTH: usize = 32;
/// Each question is small; a target z3 cannot answer within this much of its own work
/// (z3's `rlimit`, the same on every machine and under any load) is said unwalked. Most
/// questions take a few thousand; 30,000 keeps the slowest operator folders of ops-nn at
/// about the time a 100 ms wall-clock limit gave them.
const RLIMIT: u32 = 30_000;
/// Wall-clock guards only, far above what the resource limit lets a question or a
/// kernel take here: never what decides an answer on a working machine. A kernel's
/// questions and walks took up to 10 s on two cores shared with three other jobs, where
/// a 10 s guard cut them short (16 arms left unwalked in `layer_norm_grad_v3` instead of
/// 6): 30 s keeps a loaded CI machine's answers those of an idle one.
const TIMEOUT: Duration = Duration::from_secs(1);
const BUDGET: Duration = Duration::from_secs(30);
/// Largest tiling value looked at: enough for a tile count divided down by block and
/// tile sizes, small enough that the walk of the launch stays short.
const MAX_VALUES: [i64; 3] = [16, 256, 4096];

/// A loop, by its variable, an arm of an `if`, a work instruction run with every length
/// it has above zero, or two of them run so in one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    Loop(VarId),
    Arm(ArmId),
    Work(WorkId),
    Pair(WorkId, WorkId),
}

/// Tiling values, with the core and the TilingKey that run a target under them.
pub(crate) struct ReachLaunch {
    pub params: Vec<i64>,
    pub core: (CoreType, i64),
    pub key: i64,
}

/// What z3 answered for one target.
pub(crate) enum Reach {
    /// A launch, and the core and TilingKey, that reach it.
    Launch(ReachLaunch),
    /// No launch reaches it: the conditions on the way never hold together.
    Never,
    /// No launch within the values looked at, and no proof that none exists; or the
    /// conditions on the way could not be encoded.
    Undecided,
}

/// z3's questions about one kernel's unreached targets.
pub(crate) struct ReachSearch<'a> {
    kernel: &'a Kernel,
    launch: Launch,
    /// Per parameter: a tiling value (no upper bound), not a choice or a case.
    unbounded: Vec<bool>,
    options: SmtOptions,
    asked: usize,
    deadline: Instant,
}

impl<'a> ReachSearch<'a> {
    pub fn new(program: &Program, kernel: &'a Kernel, keys: &[i64]) -> Option<Self> {
        Some(ReachSearch {
            kernel,
            launch: launch(program, kernel, keys)?,
            unbounded: program.params.iter().map(|param| param.max.is_none()).collect(),
            options: SmtOptions {
                timeout: TIMEOUT,
                rlimit: Some(RLIMIT),
                ..SmtOptions::default()
            },
            asked: 0,
            deadline: Instant::now() + BUDGET,
        })
    }

    /// Whether the question budget is spent.
    pub fn exhausted(&self) -> bool {
        self.asked >= MAX_QUESTIONS || Instant::now() > self.deadline
    }

    /// A launch that reaches `target` on some core type.
    pub fn reach(&mut self, target: &Target) -> Reach {
        self.asked += 1;
        let mut never = true;
        for core in self.kernel.kind.cores() {
            let index = Int::new_const("block");
            let mut facts = self.launch.domain.clone();
            facts.push(index.ge(0));
            facts.push(index.lt(cores_of(self.kernel, &self.launch.blocks, core)));
            let mut scope = Scope {
                params: self.launch.params.clone(),
                block_idx: Some(index.clone()),
                tiling_key: Some(self.launch.key.clone()),
                is_aiv: Some(Bool::from_bool(core == CoreType::Aiv)),
                ..Scope::default()
            };
            let mut path_to = |target| path_to(&self.kernel.body, &mut scope, (&mut facts, &mut Vec::new()), target, 0);
            let alternatives = match target {
                Target::Pair(first, second) => path_to(&Target::Work(*first))
                    .zip(path_to(&Target::Work(*second)))
                    .map(|(first, second)| together(&first, &second)),
                _ => path_to(target),
            };
            let Some(alternatives) = alternatives else {
                never = false;
                continue;
            };
            // Small values first; an alternative z3 cannot decide at one cap is not asked
            // again at a larger one (a question past its resource limit stays so).
            let mut undecided = vec![false; alternatives.len()];
            for cap in MAX_VALUES {
                for (facts, undecided) in alternatives.iter().zip(undecided.iter_mut()) {
                    if *undecided {
                        continue;
                    }
                    match self.within(facts, (core, &index), cap) {
                        Answer::Fails(found) => return Reach::Launch(found),
                        Answer::Unknown(_) => *undecided = true,
                        Answer::Holds(_) => {}
                    }
                }
            }
            if undecided.contains(&true) {
                never = false;
                continue;
            }
            // The weakest alternative at any value, zeros included: unsatisfiable only
            // where nothing reaches the target.
            let query = Query::new(&self.options);
            for fact in alternatives.last().into_iter().flatten() {
                query.assert(fact);
            }
            if !matches!(query.solve(&[]), Answer::Holds(_)) {
                never = false;
            }
        }
        if never { Reach::Never } else { Reach::Undecided }
    }

    /// A launch where `facts` hold with every tiling value at most `cap` and the fewest
    /// tiling fields at zero. A tiling size of zero describes no data (a tile of capacity
    /// 0 that still computes one element), but a field that is a flag (`isNeoxStyle ==
    /// 0`) must be zero to take its arm: the sampled launches cover zeros, z3's take them
    /// only where the target needs them. The values are not minimized further: a walk of
    /// one core is short at any value up to the cap, and minimizing a sum of every
    /// tiling field cost a second per target in the largest operator folders.
    fn within(&self, facts: &[Bool], core: (CoreType, &Int), cap: i64) -> Answer<ReachLaunch> {
        let query = Query::new(&self.options);
        for fact in facts {
            query.assert(fact);
        }
        let mut zeros = Vec::new();
        for (param, unbounded) in self.launch.params.iter().zip(&self.unbounded) {
            query.assert(&param.le(cap));
            if *unbounded {
                zeros.push(param.eq(0).ite(&Int::from_i64(1), &Int::from_i64(0)));
            }
        }
        // z3 makes no sum of nothing.
        let zeros = if zeros.is_empty() {
            Int::from_i64(0)
        } else {
            Int::add(&zeros)
        };
        match query.solve(&[(zeros, 0)]) {
            Answer::Fails(model) => {
                let found = values_of(&model, &self.launch.params).zip(values_of(&model, [core.1, &self.launch.key]));
                match found {
                    Some((params, other)) => Answer::Fails(ReachLaunch {
                        params,
                        core: (core.0, other[0]),
                        key: other[1],
                    }),
                    None => Answer::Unknown("z3's launch has a value it gives no integer for".into()),
                }
            }
            Answer::Holds(core) => Answer::Holds(core),
            Answer::Unknown(reason) => Answer::Unknown(reason),
        }
    }
}

/// The facts under which `target` runs, strongest first, each with `path`, the
/// conditions that lead into `stmts`: every enclosing loop run three times (a race
/// between iterations needs two, a double-buffered slot's reuse three) and, for a loop,
/// three trips of its own; then as the path alone allows; a loop, last, entered once.
/// `repeats`: the enclosing loops' three trips. `None` when the target is not in
/// `stmts` or a condition on the way could not be encoded.
fn path_to(
    stmts: &[KStmt],
    scope: &mut Scope,
    (path, repeats): (&mut Vec<Bool>, &mut Vec<Bool>),
    target: &Target,
    depth: usize,
) -> Option<Vec<Vec<Bool>>> {
    if depth > MAX_DEPTH {
        return None;
    }
    for stmt in stmts {
        let found = match stmt {
            KStmt::If {
                cond, then, otherwise, ..
            } => {
                let mut encoder = Encoder::new(scope);
                let Ok(cond) = encoder.bool(cond) else { continue };
                let defined = encoder.definedness();
                [(then, cond.clone(), true), (otherwise, cond.not(), false)]
                    .into_iter()
                    .find_map(|(arm, holds, is_then)| {
                        path.extend([defined.clone(), holds]);
                        let found = if *target == Target::Arm(arm_id(stmt, is_then)) {
                            Some(strongest_first(path, repeats, None))
                        } else {
                            path_to(arm, scope, (&mut *path, &mut *repeats), target, depth + 1)
                        };
                        path.truncate(path.len() - 2);
                        found
                    })
            }
            KStmt::For {
                var, start, end, body, ..
            } => {
                let mut encoder = Encoder::new(scope);
                let (Ok(start), Ok(end)) = (encoder.int(start), encoder.int(end)) else {
                    continue;
                };
                path.push(encoder.definedness());
                let trips = Int::sub(&[end.clone(), start.clone()]);
                let found = if *target == Target::Loop(*var) {
                    Some(strongest_first(path, repeats, Some(&trips)))
                } else {
                    // The body, at some iteration of this loop.
                    let counter = Int::new_const(format!("loop_{}", var.0));
                    scope.vars.insert(*var, counter.clone());
                    path.extend([counter.ge(&start), counter.lt(&end)]);
                    repeats.push(trips.ge(3));
                    let found = path_to(body, scope, (&mut *path, &mut *repeats), target, depth + 1);
                    repeats.pop();
                    path.truncate(path.len() - 2);
                    scope.vars.remove(var);
                    found
                };
                path.pop();
                found
            }
            KStmt::Op(op) if *target == Target::Work(work_id(op)) => {
                let lengths = lengths_above_zero(op, scope);
                path.extend(lengths.iter().cloned());
                let found = Some(strongest_first(path, repeats, None));
                path.truncate(path.len() - lengths.len());
                found
            }
            KStmt::Op(_) | KStmt::Return(_) => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// That every length of a work instruction's accesses is above zero, with what makes
/// them defined; a length that cannot be encoded is left out.
fn lengths_above_zero(op: &KOp, scope: &mut Scope) -> Vec<Bool> {
    let KOpKind::Work { writes, reads, .. } = &op.kind else {
        return Vec::new();
    };
    let mut facts = Vec::new();
    for len in writes.iter().chain(reads).filter_map(|access| access.len.as_ref()) {
        let mut encoder = Encoder::new(scope);
        if let Ok(len) = encoder.int(len) {
            facts.extend([encoder.definedness(), len.gt(0)]);
        }
    }
    facts
}

/// Two targets' alternatives (see `path_to`) in one launch: the strongest of each
/// together, then the weaker ones.
fn together(first: &[Vec<Bool>], second: &[Vec<Bool>]) -> Vec<Vec<Bool>> {
    let at = |alternatives: &[Vec<Bool>], i: usize| alternatives[i.min(alternatives.len() - 1)].clone();
    (0..first.len().max(second.len()))
        .map(|i| [at(first, i), at(second, i)].concat())
        .collect()
}

/// A target's alternatives (see `path_to`); `trips`: the target loop's own.
fn strongest_first(path: &[Bool], repeats: &[Bool], trips: Option<&Int>) -> Vec<Vec<Bool>> {
    let own = |n: i64| trips.map(|trips| trips.ge(n));
    let mut alternatives = vec![[path, repeats, own(3).as_slice()].concat()];
    if !repeats.is_empty() {
        alternatives.push([path, own(3).as_slice()].concat());
    }
    if trips.is_some() {
        alternatives.push([path, own(1).as_slice()].concat());
    }
    alternatives
}
