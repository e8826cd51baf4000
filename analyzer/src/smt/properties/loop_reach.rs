//! Launches that run each loop of a kernel: the sampled tiling values (each field at 1
//! to 4) leave a loop whose trip count divides by a constant (`seqLength / blockDim /
//! 32` tiles) at zero trips, and its body is never walked. For each such loop, z3 looks for
//! the smallest tiling values, core index and TilingKey under which the loop's
//! enclosing conditions hold and it runs three times (first, second, and a reuse of a
//! double-buffered slot), or failing that once; the concrete walk adds that launch. The
//! same for each arm of an `if` no sampled launch took (`if (isElementWise)` at 0 in
//! every sampled launch): a launch under which the arm's conditions hold.

use std::time::{Duration, Instant};

use z3::ast::{Bool, Int};

use super::core_counts::{UnbalancedLaunch, cores_of, launch};
use crate::model::Program;
use crate::smt::encode::{Encoder, Scope};
use crate::smt::{Answer, Query, SmtOptions, value_of};
use syncguard_model::kernel::{CoreType, KStmt, Kernel};

/// Most loops and arms asked about per kernel, over its core types.
const MAX_TARGETS: usize = 12;
/// Deepest nesting followed.
const MAX_DEPTH: usize = 32;
/// Each question is small; a loop z3 cannot answer within this much of its own work
/// (z3's `rlimit`, the same on every machine and under any load) is left to the
/// sampling. Most questions take a few thousand; 30,000 keeps the slowest operator
/// folders of ops-nn at about the time a 100 ms wall-clock limit gave them.
const RLIMIT: u32 = 30_000;
/// Wall-clock guards only, far above what the resource limit lets a question or a
/// kernel take here: never what decides an answer on a working machine.
const TIMEOUT: Duration = Duration::from_secs(1);
const BUDGET: Duration = Duration::from_secs(5);
/// Largest tiling value looked at: enough for a tile count divided down by block and
/// tile sizes, small enough that the walk of the launch stays short.
const MAX_VALUES: [i64; 3] = [16, 256, 4096];

/// Launches (with the core that runs the loop or arm) that run each loop and take each
/// arm in `wanted`.
pub(crate) fn loop_launches(
    program: &Program,
    kernel: &Kernel,
    keys: &[i64],
    wanted: &crate::kernel::Unreached,
) -> Vec<UnbalancedLaunch> {
    let Some(launch) = launch(program, kernel, keys) else {
        return Vec::new();
    };
    let options = SmtOptions {
        timeout: TIMEOUT,
        rlimit: Some(RLIMIT),
        ..SmtOptions::default()
    };
    let mut search = Search {
        launch: &launch,
        wanted,
        unbounded: program.params.iter().map(|param| param.max.is_none()).collect(),
        options: &options,
        found: Vec::new(),
        asked: 0,
        deadline: Instant::now() + BUDGET,
    };
    for core in kernel.kind.cores() {
        let index = Int::new_const("block");
        let mut facts = launch.domain.clone();
        facts.push(index.ge(0));
        facts.push(index.lt(cores_of(kernel, &launch.blocks, core)));
        let mut scope = Scope {
            params: launch.params.clone(),
            block_idx: Some(index.clone()),
            tiling_key: Some(launch.key.clone()),
            is_aiv: Some(Bool::from_bool(core == CoreType::Aiv)),
            ..Scope::default()
        };
        // Every value the walk computes outside loops has one (no division by a zero
        // block count): a launch that stops the walk elsewhere would check nothing.
        facts.extend(defined_everywhere(kernel, &scope));
        search.block(&kernel.body, &mut scope, &mut facts, (core, &index), 0);
    }
    search.found.dedup();
    search.found
}

/// The definedness of each of the kernel's expressions that names no loop variable.
fn defined_everywhere(kernel: &Kernel, scope: &Scope) -> Vec<Bool> {
    let mut defined = Vec::new();
    crate::kernel::for_each_expr(kernel, &mut |expr| {
        let mut encoder = Encoder::new(scope);
        if encoder.int(expr).is_ok() {
            defined.push(encoder.definedness());
        }
    });
    defined
}

struct Search<'a> {
    launch: &'a super::core_counts::Launch,
    wanted: &'a crate::kernel::Unreached,
    /// Per parameter: a tiling value (no upper bound), not a choice or a case.
    unbounded: Vec<bool>,
    options: &'a SmtOptions,
    found: Vec<UnbalancedLaunch>,
    asked: usize,
    deadline: Instant,
}

impl Search<'_> {
    /// `path`: the launch's domain and the conditions that lead here.
    fn block(
        &mut self,
        stmts: &[KStmt],
        scope: &mut Scope,
        path: &mut Vec<Bool>,
        core: (CoreType, &Int),
        depth: usize,
    ) {
        if depth > MAX_DEPTH || self.asked >= MAX_TARGETS {
            return;
        }
        for stmt in stmts {
            match stmt {
                KStmt::If {
                    cond,
                    then,
                    otherwise,
                    span,
                } => {
                    let mut encoder = Encoder::new(scope);
                    let Ok(cond) = encoder.bool(cond) else { continue };
                    let defined = encoder.definedness();
                    for (arm, holds, is_then) in [(then, cond.clone(), true), (otherwise, cond.not(), false)] {
                        path.extend([defined.clone(), holds]);
                        if self.wanted.arms.contains(&(span.clone(), is_then)) {
                            self.ask_first(std::slice::from_ref(path), core);
                        }
                        self.block(arm, scope, path, core, depth + 1);
                        path.truncate(path.len() - 2);
                    }
                }
                KStmt::For {
                    var, start, end, body, ..
                } => {
                    let mut encoder = Encoder::new(scope);
                    let (Ok(start), Ok(end)) = (encoder.int(start), encoder.int(end)) else {
                        continue;
                    };
                    path.push(encoder.definedness());
                    if self.wanted.loops.contains(var) {
                        // Three trips (first, second, and a reuse of a double-buffered
                        // slot), else one.
                        let trips = Int::sub(&[end.clone(), start.clone()]);
                        let with = |n: i64| [path.as_slice(), &[trips.ge(n)]].concat();
                        self.ask_first(&[with(3), with(1)], core);
                    }
                    // The body, at some iteration of this loop.
                    let counter = Int::new_const(format!("loop_{}", var.0));
                    scope.vars.insert(*var, counter.clone());
                    path.extend([counter.ge(&start), counter.lt(&end)]);
                    self.block(body, scope, path, core, depth + 1);
                    path.truncate(path.len() - 3);
                    scope.vars.remove(var);
                }
                KStmt::Op(_) | KStmt::Return(_) => {}
            }
        }
    }

    /// The smallest launch where the first of `alternatives` that can hold holds, small
    /// values first.
    fn ask_first(&mut self, alternatives: &[Vec<Bool>], core: (CoreType, &Int)) {
        if self.asked >= MAX_TARGETS || Instant::now() > self.deadline {
            return;
        }
        self.asked += 1;
        for cap in MAX_VALUES {
            for facts in alternatives {
                if let Some(found) = self.smallest(facts, core, cap) {
                    self.found.push(found);
                    return;
                }
            }
        }
    }

    /// The launch with the smallest sum of values (and core index) where `facts` hold:
    /// one objective, so that every other loop of the walk stays short too.
    fn smallest(&self, facts: &[Bool], core: (CoreType, &Int), cap: i64) -> Option<UnbalancedLaunch> {
        let query = Query::new(self.options);
        for fact in facts {
            query.assert(fact);
        }
        for (param, unbounded) in self.launch.params.iter().zip(&self.unbounded) {
            query.assert(&param.le(cap));
            // A tiling size of zero describes no data (a tile of capacity 0 that still
            // computes one element): the sampled launches cover zeros; z3's do not.
            if *unbounded {
                query.assert(&param.ge(1));
            }
        }
        let mut terms = self.launch.params.clone();
        terms.push(core.1.clone());
        let total = Int::add(&terms);
        match query.solve(&[(total, 0)]) {
            Answer::Fails(model) => Some(UnbalancedLaunch {
                params: self.launch.params.iter().map(|p| value_of(&model, p)).collect(),
                cores: vec![(core.0, value_of(&model, core.1))],
            }),
            Answer::Holds(_) | Answer::Unknown(_) => None,
        }
    }
}
