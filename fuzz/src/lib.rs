//! Fuzz targets for every reader syncguard has, on stable Rust: the `.sync` parser and
//! lowering with the whole analysis, the formatter, the trace reader, `convert`, and the
//! planning step of `verify-then-run`.
//!
//! Inputs come from two sources, half each: byte mutations of a corpus kept in the repo
//! (the examples, the rule fixtures, `fuzz/corpus/` with every reported bad input), and
//! structure-aware generation from the grammar and the trace format, so that most
//! inputs get past the parser into lowering and analysis. Each target checks its
//! invariants (see [`targets`]); a panic is caught and reported with the input. Aborts,
//! hangs and memory blow-ups are caught by the supervisor in `main.rs`, which runs the
//! targets in a child process.

pub mod corpus;
pub mod generate;
pub mod kernel_mutants;
pub mod mutate;
pub mod rng;
pub mod targets;

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

pub use targets::Target;

/// One input that broke an invariant.
#[derive(Debug)]
pub struct Failure {
    pub target: Target,
    pub input: Vec<u8>,
    pub what: String,
}

/// How a run went.
#[derive(Debug, Default)]
pub struct Summary {
    pub inputs: u64,
    pub failures: Vec<Failure>,
    /// The slowest input and how long it took.
    pub slowest: Duration,
}

/// Feed `count` inputs (from `seed` on) to `target`. `before_each` sees every input
/// before it runs (the supervisor's worker saves it, so that an abort names it).
/// `per_input` is the time one input may take.
pub fn fuzz(
    target: Target,
    corpus: &corpus::Corpus,
    seed: u64,
    count: u64,
    per_input: Duration,
    mut before_each: impl FnMut(&[u8]),
) -> Summary {
    let mut rng = rng::Rng::new(seed ^ (target as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut summary = Summary::default();
    for _ in 0..count {
        let input = next_input(target, corpus, &mut rng);
        before_each(&input);
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| targets::run(target, &input)));
        let elapsed = started.elapsed();
        summary.inputs += 1;
        summary.slowest = summary.slowest.max(elapsed);
        let what = match outcome {
            Ok(Ok(())) if elapsed <= per_input => continue,
            Ok(Ok(())) => format!("took {elapsed:?}, more than {per_input:?}"),
            Ok(Err(violation)) => violation,
            Err(panic) => format!("panicked: {}", panic_message(&panic)),
        };
        summary.failures.push(Failure { target, input, what });
    }
    summary
}

/// A mutated corpus entry or a generated input, half and half (C/C++ and Python
/// sources are always mutated corpus files: real host code is the best seed).
fn next_input(target: Target, corpus: &corpus::Corpus, rng: &mut rng::Rng) -> Vec<u8> {
    let (entries, tokens) = match target {
        Target::Cpp => (&corpus.sources, generate::CPP_TOKENS),
        Target::Python => (&corpus.python, generate::PYTHON_TOKENS),
        target if target.reads_traces() => (&corpus.traces, generate::TRACE_TOKENS),
        _ => (&corpus.programs, generate::SYNC_TOKENS),
    };
    let from_sources = matches!(target, Target::Cpp | Target::Python);
    let generated = !from_sources && (rng.chance(1, 2) || entries.is_empty());
    if generated || entries.is_empty() {
        return if target.reads_traces() {
            generate::trace(rng).into_bytes()
        } else {
            generate::program(rng).into_bytes()
        };
    }
    let base = &entries[rng.below(entries.len())];
    let donor = &entries[rng.below(entries.len())];
    mutate::mutate(base, donor, rng, tokens)
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".into()
    }
}
