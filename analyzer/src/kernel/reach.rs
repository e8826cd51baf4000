//! Loops and `if` arms the sampled launches did not walk: z3's launch for each, one at a
//! time (a launch walked reaches whatever lies on its way), and those left unwalked said,
//! the outermost of each, as code that is not checked. Arms no launch can take are dead
//! code and not said. A loop is asked about until some launch runs it three times: a race
//! between one iteration and the next needs two, a double-buffered slot's reuse three.
//! Then the work instructions every walk ran at a length of zero, and the unordered
//! pairs on one memory no walk gave bytes together: a launch that moves bytes, in
//! which a race they hid shows.

use std::collections::{HashMap, HashSet};

use super::walk::{WorkId, arm_id, work_id};
use super::{KernelFacts, KernelWalk, PlannedLaunch, Seen};
use crate::model::Program;
use crate::smt::properties::loop_reach::{Reach, ReachSearch, Target};
use crate::source::Span;
use syncguard_model::kernel::KStmt;

const UNDECIDED: &str = "z3 found none with tiling values up to 4,096";
const WALK_STOPPED: &str = "the walk of z3's launch for it did not get there";
const SPENT: &str = "the kernel's questions to z3 were spent before this one";
const NOT_ENCODED: &str = "z3 could not be asked (the launch's block count has no encoding)";

impl<'p> KernelFacts<'p> {
    /// Walk z3's launch for each target the walks so far left unreached, then say the
    /// ones still left. `domain`: the launches' values (cases and divisors narrowed).
    pub(super) fn reach_the_rest(
        &mut self,
        program: &'p Program,
        domain: &Program,
        walk: &mut KernelWalk<'p>,
        seen: &mut Seen,
    ) {
        let targets = targets_in_order(&walk.kernel.body);
        if next_question((&targets, &seen.hidden_pairs), walk, &HashSet::new()).is_some() {
            // A context of the kernel's own (a few milliseconds to make): the launches z3
            // finds, and the values findings name, are the same whatever else the run
            // checked, and in whatever order.
            crate::smt::with_own_context(|| self.ask_and_walk(program, domain, (walk, &targets), seen));
        } else {
            self.ask_and_walk(program, domain, (walk, &targets), seen);
        }
    }

    fn ask_and_walk(
        &mut self,
        program: &'p Program,
        domain: &Program,
        (walk, targets): (&mut KernelWalk<'p>, &[Target]),
        seen: &mut Seen,
    ) {
        let kernel = walk.kernel;
        let mut asked = HashSet::new();
        let mut dead = HashSet::new();
        // Targets asked about that no walk reached, with why.
        let mut given_up = HashMap::new();
        // Why the targets never asked about were not.
        let mut why = UNDECIDED;
        let mut search = None;
        while let Some(target) = next_question((targets, &seen.hidden_pairs), walk, &asked) {
            let search = match &mut search {
                Some(search) => search,
                None => match ReachSearch::new(domain, kernel, &walk.keys) {
                    Some(found) => search.insert(found),
                    None => {
                        why = NOT_ENCODED;
                        break;
                    }
                },
            };
            if search.exhausted() {
                why = SPENT;
                break;
            }
            asked.insert(target);
            match search.reach(&target) {
                Reach::Launch(found) => {
                    let planned = PlannedLaunch {
                        params: found.params,
                        cores: vec![found.core],
                        counterexample: false,
                        focus: Some(found.key),
                    };
                    let stops = self.stops.len();
                    if !self.walk_launch(program, walk, planned, seen) {
                        return; // said as a stop
                    }
                    // z3 asks only the conditions on the way: the values it chose may
                    // stop the walk elsewhere (a division by a field at zero). That is
                    // the choice's limit, not the kernel's; what it left is said below.
                    self.stops.truncate(stops);
                    if !reached(walk, &target) {
                        given_up.insert(target, WALK_STOPPED);
                    }
                }
                Reach::Never => {
                    dead.insert(target);
                }
                Reach::Undecided => {
                    given_up.insert(target, UNDECIDED);
                }
            }
        }
        let why = |target: &Target| given_up.get(target).copied().unwrap_or(why);
        let mut said = Vec::new();
        outermost_unwalked(&kernel.body, walk, &dead, &why, &mut said);
        self.unwalked.extend(said);
    }
}

/// The next target to ask z3 about: loops and arms first (`targets`, outermost first),
/// then the work instructions the walks so far ran only at a length of zero, then the
/// pairs of unordered work instructions on one memory that no walk gave bytes together
/// (`hidden`: a race a zero length hid); none walked enough or `asked` already.
fn next_question(
    (targets, hidden): (&[Target], &[(WorkId, WorkId)]),
    walk: &KernelWalk,
    asked: &HashSet<Target>,
) -> Option<Target> {
    let fresh = |target: &Target| !walked_enough(walk, target) && !asked.contains(target);
    targets
        .iter()
        .copied()
        .find(fresh)
        .or_else(|| empty_work_in_order(&walk.kernel.body, walk).into_iter().find(fresh))
        .or_else(|| hidden.iter().map(|&(a, b)| Target::Pair(a, b)).find(fresh))
}

/// Whether some walk took the arm, entered the loop, or ran the work instruction with
/// its lengths above zero.
fn reached(walk: &KernelWalk, target: &Target) -> bool {
    match target {
        Target::Loop(var) => walk.entered.contains(var),
        Target::Arm(arm) => walk.arms.contains(arm),
        Target::Work(work) => walk.work_done.contains(work),
        Target::Pair(first, second) => walk.work_done.contains(first) && walk.work_done.contains(second),
    }
}

/// Whether no question is needed: the loop run three times, the arm taken with the
/// loops around it run three times (a slot reused in it).
fn walked_enough(walk: &KernelWalk, target: &Target) -> bool {
    match target {
        Target::Loop(var) => walk.repeated.contains(var),
        Target::Arm(arm) => walk.arms_repeated.contains(arm),
        Target::Work(..) => reached(walk, target),
        // Both run with bytes by some walks, not known to be by one: asked once.
        Target::Pair(..) => false,
    }
}

/// The work instructions some walk ran, but only with a length at zero, in program
/// order: their accesses moved no byte, so no race on them was looked for.
fn empty_work_in_order(stmts: &[KStmt], walk: &KernelWalk) -> Vec<Target> {
    let mut out = Vec::new();
    for stmt in stmts {
        match stmt {
            KStmt::Op(op) => {
                let work = work_id(op);
                if walk.work_empty.contains(&work) && !walk.work_done.contains(&work) {
                    out.push(Target::Work(work));
                }
            }
            KStmt::If { then, otherwise, .. } => {
                out.extend(empty_work_in_order(then, walk));
                out.extend(empty_work_in_order(otherwise, walk));
            }
            KStmt::For { body, .. } => out.extend(empty_work_in_order(body, walk)),
            KStmt::Return(_) => {}
        }
    }
    out
}

/// The kernel's loops and the arms of its `if`s that hold a statement, outer before
/// inner, in program order.
fn targets_in_order(stmts: &[KStmt]) -> Vec<Target> {
    let mut targets = Vec::new();
    collect_targets(stmts, &mut targets);
    targets
}

fn collect_targets(stmts: &[KStmt], out: &mut Vec<Target>) {
    for stmt in stmts {
        match stmt {
            KStmt::If { then, otherwise, .. } => {
                for (arm, is_then) in [(then, true), (otherwise, false)] {
                    if !arm.is_empty() {
                        out.push(Target::Arm(arm_id(stmt, is_then)));
                    }
                    collect_targets(arm, out);
                }
            }
            KStmt::For { var, body, .. } => {
                out.push(Target::Loop(*var));
                collect_targets(body, out);
            }
            KStmt::Op(_) | KStmt::Return(_) => {}
        }
    }
}

/// A loop or an arm no launch reached, said.
#[derive(Clone, Debug)]
pub struct Unwalked {
    pub span: Span,
    /// The arm (`then` is true) of an `if`; `None` for a loop.
    pub arm: Option<bool>,
    pub message: String,
}

/// The unwalked loops and arms whose enclosing ones were walked, with why.
fn outermost_unwalked(
    stmts: &[KStmt],
    walk: &KernelWalk,
    dead: &HashSet<Target>,
    why: &dyn Fn(&Target) -> &'static str,
    out: &mut Vec<Unwalked>,
) {
    for stmt in stmts {
        match stmt {
            KStmt::If {
                then, otherwise, span, ..
            } => {
                for (arm, is_then) in [(then, true), (otherwise, false)] {
                    let target = Target::Arm(arm_id(stmt, is_then));
                    if arm.is_empty() || dead.contains(&target) {
                        continue;
                    }
                    if reached(walk, &target) {
                        outermost_unwalked(arm, walk, dead, why, out);
                        continue;
                    }
                    let which = if is_then { "`then`" } else { "`else`" };
                    out.push(Unwalked {
                        span: span.clone(),
                        arm: Some(is_then),
                        message: format!(
                            "no launch of the kernel takes the {which} arm of this `if`: the sampled tiling values \
                             do not, and {}; the calls in it are not checked",
                            why(&target)
                        ),
                    });
                }
            }
            KStmt::For { var, body, span, .. } => {
                let target = Target::Loop(*var);
                if dead.contains(&target) {
                    continue;
                }
                if reached(walk, &target) {
                    outermost_unwalked(body, walk, dead, why, out);
                    continue;
                }
                out.push(Unwalked {
                    span: span.clone(),
                    arm: None,
                    message: format!(
                        "no launch of the kernel enters this loop: the sampled tiling values give it no \
                         iteration, and {}; the calls in it are not checked",
                        why(&target)
                    ),
                });
            }
            KStmt::Op(_) | KStmt::Return(_) => {}
        }
    }
}
