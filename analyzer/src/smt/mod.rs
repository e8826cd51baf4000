//! z3-backed verification: properties proved for every value of a Program's parameters
//! (`properties`), and execution orders that make a hazard happen (`schedule`).
//!
//! Every query runs under [`SmtOptions::timeout`]; an `unknown` answer is reported as
//! SG004 and the property falls back to the concrete runs, never to a silent pass. z3
//! objects are thread-local (`z3::Context::thread_local`), so they never leave the thread
//! that made them.

mod encode;
mod paths;
pub(crate) mod properties;
pub(crate) mod schedule;

use std::sync::mpsc;
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
    /// Track assertions so that proofs can say which calls they rest on (`--explain`).
    pub explain: bool,
}

impl Default for SmtOptions {
    fn default() -> Self {
        SmtOptions {
            timeout: Duration::from_secs(2),
            explain: false,
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
pub(crate) struct Query {
    solver: Solver,
    explain: bool,
    /// A label per tracked assertion (z3 needs one each), with the fact number it stands for.
    tracked: Vec<(Bool, usize)>,
    timeout: Duration,
}

impl Query {
    pub fn new(options: &SmtOptions) -> Self {
        Query {
            solver: Solver::new(),
            explain: options.explain,
            tracked: Vec::new(),
            timeout: options.timeout,
        }
    }

    /// `check` under the time limit. z3's own `timeout` parameter is not used: its timer
    /// can deadlock in the z3 4.8.10-4.8.12 that Debian ships (Z3Prover/z3#5371). A
    /// watchdog thread interrupts the context instead; the z3 objects themselves never
    /// leave this thread.
    fn check(&self, deadline: Instant) -> SatResult {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return SatResult::Unknown;
        }
        let context = self.solver.get_context();
        let handle = context.handle();
        let (finished, watch) = mpsc::channel::<()>();
        std::thread::scope(|scope| {
            let handle = &handle;
            scope.spawn(move || {
                if watch.recv_timeout(remaining) == Err(mpsc::RecvTimeoutError::Timeout) {
                    handle.interrupt();
                }
            });
            let result = self.solver.check();
            // The watchdog may already be gone (it fired): nothing to tell it then.
            let _ = finished.send(());
            result
        })
    }

    pub fn assert(&self, fact: &Bool) {
        self.solver.assert(fact);
    }

    /// Assert `fact`, remembered as fact number `id` for the unsat core (several
    /// assertions may share a number).
    pub fn assert_tracked(&mut self, fact: &Bool, id: usize) {
        if !self.explain {
            self.solver.assert(fact);
            return;
        }
        let label = Bool::fresh_const("fact");
        self.solver.assert_and_track(fact.clone(), &label);
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
                let mut model = self.solver.get_model().expect("a sat answer has a model");
                for (objective, lowest) in objectives {
                    model = self.minimize(objective, *lowest, model, deadline);
                }
                Answer::Fails(model)
            }
        }
    }

    /// Binary search for the smallest value of `objective` (at least `low`), which then
    /// stays fixed. A step that times out keeps the best model found so far.
    fn minimize(&self, objective: &Int, mut low: i64, mut model: Model, deadline: Instant) -> Model {
        let value = |model: &Model| model.eval(objective, true).and_then(|v| v.as_i64());
        let Some(mut high) = value(&model) else {
            return model;
        };
        while low < high {
            // In i128 and rounded down, so that bounds of any sign neither overflow nor
            // make `mid` equal `high`.
            let mid = ((i128::from(low) + i128::from(high)).div_euclid(2)) as i64;
            self.solver.push();
            self.solver.assert(objective.le(mid));
            let result = self.check(deadline);
            if result == SatResult::Sat {
                model = self.solver.get_model().expect("a sat answer has a model");
                high = value(&model).unwrap_or(mid).min(mid);
            }
            self.solver.pop(1);
            match result {
                SatResult::Sat => {}
                SatResult::Unsat => low = mid + 1,
                SatResult::Unknown => break,
            }
        }
        self.solver.assert(objective.eq(high));
        model
    }

    fn core(&self) -> Vec<usize> {
        if !self.explain {
            return Vec::new();
        }
        let core = self.solver.get_unsat_core();
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

    fn reason(&self) -> String {
        match self.solver.get_reason_unknown() {
            Some(reason)
                if ["timeout", "canceled", "interrupted"]
                    .iter()
                    .any(|r| reason.contains(r)) =>
            {
                format!("the query ran out of its {:?}", self.timeout)
            }
            Some(reason) => format!("z3 cannot decide it ({reason})"),
            None => format!("the query ran out of its {:?}", self.timeout),
        }
    }
}

/// The value of `ast` in `model` (completed: unconstrained names get a default).
pub(crate) fn value_of(model: &Model, ast: &Int) -> i64 {
    model.eval(ast, true).and_then(|v| v.as_i64()).unwrap_or(0)
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
