//! z3-backed verification: properties proved for every value of a Program's parameters
//! (`properties`), and execution orders that make a hazard happen (`schedule`).
//!
//! Every query runs under [`SmtOptions::timeout`]; an `unknown` answer is reported as
//! SG004 and the property falls back to the concrete runs, never to a silent pass. z3
//! objects are thread-local (`z3::Context::thread_local`), so they never leave the thread
//! that made them.

pub(crate) mod bounds;
/// The version of the z3 library this build is linked with (`4.8.12.0`).
pub fn z3_version() -> &'static str {
    z3::full_version()
}

mod encode;
mod paths;
pub(crate) mod properties;
pub(crate) mod schedule;
pub(crate) mod watchdog;

use std::cell::{Cell, OnceCell, RefCell};
use std::time::{Duration, Instant};

use z3::ast::{Bool, Int};
use z3::{Model, SatResult, Solver};

use crate::diagnostic::Diagnostic;
use crate::rules::SolverUnknown;
use crate::source::Span;

/// How the solver is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmtOptions {
    /// Wall-clock limit of each query.
    pub timeout: Duration,
    /// z3's resource limit for each check (`rlimit`), where an answer must not depend
    /// on the machine's load: a query that exhausts it is `unknown` on every machine.
    pub rlimit: Option<u32>,
    /// Track assertions so that proofs can say which calls they rest on (`--explain`).
    pub explain: bool,
    /// Attach to each finding the window of the execution it was found in
    /// (`Diagnostic::timeline`), for the HTML, Chrome trace and DOT renderers.
    pub timelines: bool,
}

impl Default for SmtOptions {
    fn default() -> Self {
        SmtOptions {
            timeout: Duration::from_secs(2),
            rlimit: None,
            explain: false,
            timelines: false,
        }
    }
}

/// A property that holds for every value in its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// Kebab-case property name, e.g. `notify-balance`.
    pub property: &'static str,
    /// The values it holds for, e.g. `N in 2..=1024`.
    pub scope: String,
    /// Where the property is about (the `ranks` declaration, a sub-kernel).
    pub span: Span,
    /// With `--explain`: the facts the proof rests on (z3's unsat core), by call.
    pub because: Vec<(Span, String)>,
}

/// A property the solver could not decide for every value: what the concrete runs
/// checked instead, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unproved {
    pub property: &'static str,
    pub reason: String,
    pub span: Span,
    /// The parameter values the concrete runs checked instead ("N = 2").
    pub checked: Vec<String>,
}

impl Unproved {
    /// The concrete runs fill in `checked` once they are done.
    pub(crate) fn new(property: &'static str, reason: String, span: Span) -> Self {
        Unproved {
            property,
            reason,
            span,
            checked: Vec::new(),
        }
    }
}

/// The answer to "is there a value that breaks the property?".
pub(crate) enum Answer<T> {
    /// No: the property holds. The tracked facts z3 needed, when explaining.
    Holds(Vec<usize>),
    /// Yes, with the smallest such value.
    Fails(T),
    /// z3 gave up (timeout, or a theory it cannot decide): the reason.
    Unknown(String),
}

/// One query: assertions, some tracked by a label for unsat cores.
///
/// Queries run on a solver kept per thread, in a scope of their own: making a solver
/// costs about 10 ms and a scope about 0.1 ms, and a program makes a query per notify
/// call. A kept solver is incremental, which gives up on some non-linear queries at
/// once ("incomplete"); such a query is replayed on a fresh, non-incremental solver
/// that searches until the deadline.
pub(crate) struct Query {
    /// The thread's kept solver, until the query is dropped.
    kept: Option<LimitedSolver>,
    /// The fresh solver, once the kept one gave up; from then on the query's solver.
    fresh: OnceCell<LimitedSolver>,
    /// What was asserted, by scope (the query's own, then each `push`), for the replay.
    facts: RefCell<Vec<Vec<Fact>>>,
    explain: bool,
    /// A label per tracked assertion (z3 needs one each), with the fact number it stands for.
    tracked: Vec<(Bool, usize)>,
    timeout: Duration,
    rlimit: Option<u32>,
    /// The last check answered `unknown` because the deadline passed.
    out_of_time: Cell<bool>,
    /// The last `solve` found its counterexample's smallest values (its search for
    /// smaller ones did not run out of time).
    minimized: Cell<bool>,
}

/// A solver and the resource limit last set on it.
///
/// `Z3_solver_set_params` on a solver in use is costly (z3 4.8.12 collects and
/// validates the descriptions of every solver and tactic parameter under a global lock
/// each time): setting it on every check was over half of the CPU time of a run over
/// many small kernels. It is set only where the limit changes, and on a new solver
/// before its first use. Both are exact: z3 reads the limit from the solver's
/// parameters at each check, and otherwise the call merges the parameters into the
/// solver's and has the solver read its configuration from them again, so setting the
/// same `rlimit` again leaves it as it was; on a solver not yet used (z3 builds it at
/// its first push, assertion or check), the call only records the parameters, and z3
/// builds the solver with them: the configuration it would have read from them later.
struct LimitedSolver {
    solver: Solver,
    /// The `rlimit` last set (0: none); `None` before it is first set.
    rlimit: Cell<Option<u32>>,
}

impl LimitedSolver {
    /// A new solver, limited to `rlimit` before its first use.
    fn new(rlimit: u32) -> Self {
        let solver = LimitedSolver {
            solver: Solver::new(),
            rlimit: Cell::new(None),
        };
        solver.limit(rlimit);
        solver
    }

    /// Set `rlimit` (0: no limit) unless it is the one set last.
    fn limit(&self, rlimit: u32) {
        if self.rlimit.get() == Some(rlimit) {
            return;
        }
        let mut params = z3::Params::new();
        params.set_u32("rlimit", rlimit);
        self.solver.set_params(&params);
        self.rlimit.set(Some(rlimit));
    }
}

#[derive(Clone)]
enum Fact {
    Plain(Bool),
    Tracked(Bool, Bool),
}

thread_local! {
    /// This thread's solver between queries.
    static KEPT_SOLVER: RefCell<Option<LimitedSolver>> = const { RefCell::new(None) };
    /// Whether this thread may have made its own z3 context: it made a query or a
    /// parameter space, or ran work in a context of its own here (see
    /// [`with_own_context`]).
    static THREAD_CONTEXT_USED: Cell<bool> = const { Cell::new(false) };
}

/// Note that this thread's z3 context is (or may be) made.
pub(crate) fn note_thread_context_used() {
    THREAD_CONTEXT_USED.with(|used| used.set(true));
}

/// Run `work` with z3 in a fresh context, and a solver, of its own: which model z3
/// gives depends on every term its context made and every query its solver ran before,
/// so work whose answers must not depend on what else the thread checked (and in what
/// order) runs in its own.
///
/// Switching this thread's context (`z3::with_z3_config`) first saves the thread's own
/// context, which makes one where the thread had none yet: two contexts, some 4,200
/// page faults each, where one is used (a small file's kernel and nothing else). The
/// first such work of a thread that has made no z3 context runs on a thread of its own
/// (a walk's stack, a few tens of microseconds to start) instead, whose thread-local
/// context, made at its first term from the same default configuration, is the fresh
/// context. Either way `work` sees a fresh context, so its answers are the same. Later
/// work switches the context in place: threads that each free a context's tables grow
/// the allocator's arenas.
pub fn with_own_context<R: Send + Sync>(work: impl FnOnce() -> R + Send + Sync) -> R {
    if THREAD_CONTEXT_USED.with(|used| used.replace(true)) {
        return with_own_context_here(work);
    }
    match on_a_new_thread(work) {
        Ok(result) => result,
        Err(work) => with_own_context_here(work),
    }
}

/// `work` on a new thread with a walk's stack (its z3 objects stay there), or `work`
/// back where no thread could be started.
fn on_a_new_thread<R: Send + Sync, W: FnOnce() -> R + Send + Sync>(work: W) -> Result<R, W> {
    // Taken back from the closure when the thread could not be started.
    let work = std::sync::Mutex::new(Some(work));
    let take = || work.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    let ran = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .stack_size(crate::exec::WALK_STACK)
            .spawn_scoped(scope, || {
                crate::pool::started_outside_pool();
                let result = take().map(|work| work());
                // The solver before the context it was made in (thread-locals drop in
                // no set order).
                KEPT_SOLVER.with(|kept| kept.borrow_mut().take());
                result
            });
        thread
            .ok()
            .map(|thread| thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    match (ran.flatten(), take()) {
        (Some(result), _) => Ok(result),
        (None, Some(work)) => Err(work),
        (None, None) => unreachable!("`work` ran on its thread or is still here"),
    }
}

/// [`with_own_context`] on this thread: the thread's kept solver waits outside
/// meanwhile (z3 objects of two contexts never meet).
fn with_own_context_here<R: Send + Sync>(work: impl FnOnce() -> R + Send + Sync) -> R {
    let outer = KEPT_SOLVER.with(|kept| kept.borrow_mut().take());
    let result = watchdog::in_own_context(|| {
        let result = work();
        KEPT_SOLVER.with(|kept| kept.borrow_mut().take());
        result
    });
    KEPT_SOLVER.with(|kept| *kept.borrow_mut() = outer);
    result
}

impl Drop for Query {
    /// Drops this query's scope and keeps the solver for the next query. One a replay
    /// left mid-way (a scope pushed for minimizing) is not kept.
    fn drop(&mut self) {
        if let Some(solver) = self.kept.take()
            && self.fresh.get().is_none()
        {
            solver.solver.pop(1);
            KEPT_SOLVER.with(|kept| *kept.borrow_mut() = Some(solver));
        }
    }
}

impl Query {
    pub fn new(options: &SmtOptions) -> Self {
        note_thread_context_used();
        // A nested query finds the kept solver in use and makes its own.
        let rlimit = options.rlimit.unwrap_or(0);
        let solver = KEPT_SOLVER
            .with(|kept| kept.borrow_mut().take())
            .unwrap_or_else(|| LimitedSolver::new(rlimit));
        solver.solver.push();
        Query {
            kept: Some(solver),
            fresh: OnceCell::new(),
            facts: RefCell::new(vec![Vec::new()]),
            explain: options.explain,
            tracked: Vec::new(),
            timeout: options.timeout,
            rlimit: options.rlimit,
            out_of_time: Cell::new(false),
            minimized: Cell::new(true),
        }
    }

    fn solver(&self) -> &Solver {
        &self.limited().solver
    }

    fn limited(&self) -> &LimitedSolver {
        self.fresh
            .get()
            .or(self.kept.as_ref())
            .expect("a query has its solver until dropped")
    }

    fn push(&self) {
        self.solver().push();
        self.facts.borrow_mut().push(Vec::new());
    }

    fn pop(&self) {
        self.solver().pop(1);
        self.facts.borrow_mut().pop();
    }

    fn add(&self, fact: Fact) {
        match &fact {
            Fact::Plain(fact) => self.solver().assert(fact),
            Fact::Tracked(fact, label) => self.solver().assert_and_track(fact.clone(), label),
        }
        let mut facts = self.facts.borrow_mut();
        facts.last_mut().expect("the query's own scope").push(fact);
    }

    /// `check` under the time limit, replayed on a fresh solver when the kept one gives
    /// up before the deadline.
    fn check(&self, deadline: Instant) -> SatResult {
        let result = self.check_on(self.limited(), deadline);
        if result != SatResult::Unknown || self.fresh.get().is_some() || self.ran_out() {
            return result;
        }
        let fresh = self.fresh.get_or_init(|| self.replay());
        self.check_on(fresh, deadline)
    }

    /// A fresh solver with every scope and assertion of this query.
    fn replay(&self) -> LimitedSolver {
        let limited = LimitedSolver::new(self.rlimit.unwrap_or(0));
        let solver = &limited.solver;
        for (level, facts) in self.facts.borrow().iter().enumerate() {
            if level > 0 {
                solver.push();
            }
            for fact in facts {
                match fact {
                    Fact::Plain(fact) => solver.assert(fact),
                    Fact::Tracked(fact, label) => solver.assert_and_track(fact.clone(), label),
                }
            }
        }
        limited
    }

    /// `check` on `solver`, interrupted at the deadline (see `watchdog`).
    fn check_on(&self, solver: &LimitedSolver, deadline: Instant) -> SatResult {
        if deadline.saturating_duration_since(Instant::now()).is_zero() {
            self.out_of_time.set(true);
            return SatResult::Unknown;
        }
        // The thread's kept solver keeps its parameters between queries, and 0 is z3's
        // "no limit".
        solver.limit(self.rlimit.unwrap_or(0));
        let result = watchdog::check_until(&solver.solver, deadline);
        self.out_of_time
            .set(result == SatResult::Unknown && Instant::now() >= deadline);
        result
    }

    pub fn assert(&self, fact: &Bool) {
        self.add(Fact::Plain(fact.clone()));
    }

    /// Assert `fact`, remembered as fact number `id` for the unsat core (several
    /// assertions may share a number).
    pub fn assert_tracked(&mut self, fact: &Bool, id: usize) {
        if !self.explain {
            return self.assert(fact);
        }
        let label = Bool::fresh_const("fact");
        self.add(Fact::Tracked(fact.clone(), label.clone()));
        self.tracked.push((label, id));
    }

    /// Is the conjunction satisfiable? On `sat`, the model minimizes `objectives` in
    /// order (lexicographically), each from its lower bound: the smallest counterexample.
    pub fn solve(&self, objectives: &[(Int, i64)]) -> Answer<Model> {
        let deadline = Instant::now() + self.timeout;
        match self.check(deadline) {
            SatResult::Unsat => Answer::Holds(self.core()),
            SatResult::Unknown => Answer::Unknown(self.reason()),
            SatResult::Sat => {
                let mut model = self.solver().get_model().expect("a sat answer has a model");
                self.minimized.set(true);
                for (objective, lowest) in objectives {
                    model = self.minimize(objective, *lowest, model, deadline);
                }
                Answer::Fails(model)
            }
        }
    }

    /// The smallest value of `objective` (at least `low`), which then stays fixed:
    /// galloping up from `low` (a counterexample is usually small, and each step on a
    /// huge range is a hard query), then a binary search below the first bound that
    /// holds. A step that times out keeps the best model found so far.
    fn minimize(&self, objective: &Int, mut low: i64, mut model: Model, deadline: Instant) -> Model {
        let value = |model: &Model| model.eval(objective, true).and_then(|v| v.as_i64());
        let Some(mut high) = value(&model) else {
            return model;
        };
        let mut step: i64 = 0;
        while low < high {
            // In i128 and rounded down, so that bounds of any sign neither overflow nor
            // make `mid` equal `high`.
            let middle = ((i128::from(low) + i128::from(high)).div_euclid(2)) as i64;
            let mid = low.saturating_add(step).min(middle);
            self.push();
            self.assert(&objective.le(mid));
            let result = self.check(deadline);
            if result == SatResult::Sat {
                model = self.solver().get_model().expect("a sat answer has a model");
                high = value(&model).unwrap_or(mid).min(mid);
            }
            self.pop();
            match result {
                SatResult::Sat => step = i64::MAX,
                SatResult::Unsat => {
                    low = mid + 1;
                    step = step.saturating_mul(2).saturating_add(1);
                }
                SatResult::Unknown => {
                    self.minimized.set(false);
                    break;
                }
            }
        }
        self.assert(&objective.eq(high));
        model
    }

    /// Whether the last `solve`'s counterexample has its smallest values.
    pub fn smallest(&self) -> bool {
        self.minimized.get()
    }

    fn core(&self) -> Vec<usize> {
        if !self.explain {
            return Vec::new();
        }
        let core = self.solver().get_unsat_core();
        let mut ids: Vec<usize> = self
            .tracked
            .iter()
            .filter(|(label, _)| core.contains(label))
            .map(|(_, id)| *id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Whether the last `unknown` was the deadline, not z3 giving up.
    fn ran_out(&self) -> bool {
        self.out_of_time.get()
    }

    fn reason(&self) -> String {
        match self.solver().get_reason_unknown() {
            Some(reason) if !self.ran_out() => format!("z3 cannot decide it ({reason})"),
            _ => format!("the query ran out of its {:?}", self.timeout),
        }
    }
}

/// The value of `ast` in `model` (completed: unconstrained names get a default).
pub(crate) fn value_of(model: &Model, ast: &Int) -> i64 {
    model.eval(ast, true).and_then(|v| v.as_i64()).unwrap_or(0)
}

/// The values of `asts` in `model`, or `None` where z3 evaluates one to no 64-bit
/// integer: a launch the walk then runs is never made of zeros read for what z3 did
/// not give (a counterexample whose minimizing ran out of time once read as a launch of
/// no block).
pub(crate) fn values_of<'a>(model: &Model, asts: impl IntoIterator<Item = &'a Int>) -> Option<Vec<i64>> {
    asts.into_iter()
        .map(|ast| model.eval(ast, true).and_then(|v| v.as_i64()))
        .collect()
}

/// SG004: z3 did not decide `property` within the timeout, so it is not proved.
pub(crate) fn solver_unknown(property: &str, span: Span, reason: &str, fallback: &str) -> Diagnostic {
    Diagnostic::new(
        &SolverUnknown::INFO,
        span,
        format!("`{property}` is not proved for every parameter value: {reason}"),
    )
    .with_label(format!("`{property}` is unproved here"))
    .with_note(fallback.to_string())
    .with_help("raise the limit (`--smt-timeout 10s`), or simplify the expressions the property depends on")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query that takes z3 some search: 37x + 91y + 113z = 100,003 in non-negative
    /// integers, with x odd.
    fn search(options: &SmtOptions) -> bool {
        let query = Query::new(options);
        let (x, y, z) = (Int::new_const("x"), Int::new_const("y"), Int::new_const("z"));
        let sum = Int::add(&[x.clone() * 37, y.clone() * 91, z.clone() * 113]);
        query.assert(&sum.eq(100_003));
        for var in [&x, &y, &z] {
            query.assert(&var.ge(0));
        }
        query.assert(&x.modulo(2).eq(1));
        matches!(query.solve(&[]), Answer::Unknown(_))
    }

    #[test]
    fn a_resource_limit_gives_up_the_same_way_on_every_run() {
        let limited = SmtOptions {
            rlimit: Some(1),
            ..SmtOptions::default()
        };
        let unlimited = SmtOptions {
            timeout: Duration::from_secs(20),
            ..SmtOptions::default()
        };
        assert!(!search(&unlimited));
        assert!(search(&limited));
        assert!(search(&limited));
        // The kept solver does not keep the limit for the next query.
        assert!(!search(&unlimited));
    }
}
