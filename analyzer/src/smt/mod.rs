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
    kept: Option<Solver>,
    /// The fresh solver, once the kept one gave up; from then on the query's solver.
    fresh: OnceCell<Solver>,
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

#[derive(Clone)]
enum Fact {
    Plain(Bool),
    Tracked(Bool, Bool),
}

thread_local! {
    /// This thread's solver between queries.
    static KEPT_SOLVER: RefCell<Option<Solver>> = const { RefCell::new(None) };
}

/// Run `work` with z3 in a fresh context, and a solver, of its own: which model z3
/// gives depends on every term its context made and every query its solver ran before,
/// so work whose answers must not depend on what else the thread checked (and in what
/// order) runs in its own. The thread's kept solver waits outside meanwhile (z3
/// objects of two contexts never meet).
pub fn with_own_context<R: Send + Sync>(work: impl FnOnce() -> R + Send + Sync) -> R {
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
            solver.pop(1);
            KEPT_SOLVER.with(|kept| *kept.borrow_mut() = Some(solver));
        }
    }
}

impl Query {
    pub fn new(options: &SmtOptions) -> Self {
        // A nested query finds the kept solver in use and makes its own.
        let solver = KEPT_SOLVER.with(|kept| kept.borrow_mut().take()).unwrap_or_default();
        solver.push();
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
        let result = self.check_on(self.solver(), deadline);
        if result != SatResult::Unknown || self.fresh.get().is_some() || self.ran_out() {
            return result;
        }
        let fresh = self.fresh.get_or_init(|| self.replay());
        self.check_on(fresh, deadline)
    }

    /// A fresh solver with every scope and assertion of this query.
    fn replay(&self) -> Solver {
        let solver = Solver::new();
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
        solver
    }

    /// `check` on `solver`, interrupted at the deadline (see `watchdog`).
    fn check_on(&self, solver: &Solver, deadline: Instant) -> SatResult {
        if deadline.saturating_duration_since(Instant::now()).is_zero() {
            self.out_of_time.set(true);
            return SatResult::Unknown;
        }
        // Set on every check: the thread's kept solver keeps its parameters between
        // queries, and 0 is z3's "no limit".
        let mut params = z3::Params::new();
        params.set_u32("rlimit", self.rlimit.unwrap_or(0));
        solver.set_params(&params);
        let result = watchdog::check_until(solver, deadline);
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
