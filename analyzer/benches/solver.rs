//! What one z3 query costs: a new solver per query (as the prover did) against a scope
//! on a solver kept per thread (as `smt::Query` does now), measured in one run on the
//! same query, a linear bound check of the shape `notify-index-in-range` asks.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench solver`

use std::time::{Duration, Instant};

use z3::ast::Int;
use z3::{SatResult, Solver};

const QUERIES: u32 = 300;

/// "Can `index = rank + 1` reach `notifyNum = N` for a rank in `0..N`?" (it can).
fn ask(solver: &Solver) {
    let (rank, n) = (Int::fresh_const("rank"), Int::fresh_const("N"));
    solver.assert(rank.ge(0));
    solver.assert(rank.lt(&n));
    solver.assert(n.ge(2));
    solver.assert(n.le(1024));
    solver.assert((&rank + 1).ge(&n));
    assert_eq!(solver.check(), SatResult::Sat);
}

fn per_query(run: impl Fn()) -> Duration {
    let start = Instant::now();
    for _ in 0..QUERIES {
        run();
    }
    start.elapsed() / QUERIES
}

fn main() {
    let fresh = per_query(|| ask(&Solver::new()));
    let kept = Solver::new();
    let scoped = per_query(|| {
        kept.push();
        ask(&kept);
        kept.pop(1);
    });
    println!("{QUERIES} queries each");
    println!("new solver per query:    {fresh:>10.2?} per query");
    println!("scope on a kept solver:  {scoped:>10.2?} per query");
    println!("ratio: {:.0}x", fresh.as_secs_f64() / scoped.as_secs_f64());
}
