//! The verifier and the simulator check each other on random programs.
//!
//! Two generators. The first writes two-rank programs with 2–4 agents each (streams,
//! one HCCL thread), events of both kinds, channel notifies between the ranks, kernels
//! on overlapping buffer ranges and host accesses. The second (`threaded.rs`) writes
//! one- and two-rank programs with several host threads per rank, ACL notifies, event
//! and device synchronizes, copies, destroys and frees. Both build programs from
//! handshakes that are correct as generated and then randomly broken (a record dropped,
//! a reset dropped, an index changed, a wait moved, a synchronize instead of a wait).
//!
//! - every program the verifier accepts completes on the simulator, with no hang, race or
//!   lost signal, under every seed, and the call trace of each run reads back with the
//!   program's own findings;
//! - every program it reports as a deadlock (SG501, SG502, SG503, or SG104: a sync-kind
//!   event wait nothing records) hangs under at least one seed;
//! - every program whose only errors are races (SG601, SG602), beside findings the
//!   simulator cannot observe (a use after a destroy or free, SG106, SG603), shows a
//!   race under at least one seed;
//! - whatever a run executed, hang or not, is written as a trace the reader accepts
//!   (no SG00x);
//! - every run that neither hangs nor fails makes exactly the verified Execution's calls,
//!   per host thread and per stream (kernels are sometimes repeated by a loop, and
//!   sometimes memsets, so that loops and memsets are exercised too).
//!
//! Programs that once disagreed are kept in `tests/differential/` and run first.
//! `SYNCGUARD_DIFF_CASES` sets how many random programs of the first generator run
//! (default 2,000), `SYNCGUARD_DIFF_THREADED_CASES` how many of the second, with and
//! without streams private to each host thread (default 300 private, 100 shared; the
//! README gives the command for 5,000), and `SYNCGUARD_DIFF_FROM` the first case of all three (to
//! reproduce one: `FROM=286 CASES=1`).

#[path = "differential/threaded.rs"]
mod threaded;

mod common;

use std::fmt::Write as _;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use syncguard_analyzer::exec::{Execution, NodeId, instantiate};
use syncguard_analyzer::smt::SmtOptions;
use syncguard_analyzer::trace::write::write_trace;
use syncguard_analyzer::{Overrides, Severity, Sources, check_sync_bytes, check_trace_reader, findings_by_issue_order};
use syncguard_runtime_bridge::sim::{Observed, Sim, SimOptions};
use syncguard_runtime_bridge::{Plan, run, run_in_order};

/// Seeds every accepted program runs under.
const ACCEPTED_SEEDS: u64 = 3;
/// Seeds a program reported as hanging or racing may take to show it: enough for each
/// agent to be the slow one in turn (the simulator slows agent `seed mod agents`).
const REJECTED_SEEDS: u64 = 16;

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Deadlock,
    Race,
    /// Rejected for another reason (a lost record, a leak): not compared.
    Other,
    /// Verified in part (more issue orders than the analysis checks): not compared.
    PartlyChecked,
}

fn checked_program(text: &str) -> syncguard_analyzer::CheckedFile {
    check_sync_bytes(&mut Sources::default(), "random.sync", text.as_bytes())
}

/// The codes of the findings, sorted: not the informational ones, nor the warning that
/// not every issue order was checked (a run's trace spawns each thread at its first
/// call, which changes how many orders there are).
/// Whether the verifier found `diagnostic` only in some orders of the host threads'
/// calls (its note names the order).
fn only_in_some_orders(diagnostic: &syncguard_analyzer::Diagnostic) -> bool {
    diagnostic
        .notes
        .iter()
        .any(|note| note.starts_with("only when the host threads issue"))
}

fn codes(diagnostics: &[syncguard_analyzer::Diagnostic]) -> Vec<&'static str> {
    let mut codes: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info && d.code != "SG004")
        .flat_map(|d| d.codes())
        .collect();
    codes.sort();
    codes
}

fn verdict(text: &str) -> Verdict {
    let checked = checked_program(text);
    let errors: Vec<&str> = checked
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .flat_map(|d| d.codes())
        .collect();
    assert!(
        !errors.iter().any(|code| code.starts_with("SG00")),
        "the generator wrote an invalid program ({errors:?}):\n{text}"
    );
    if checked.diagnostics.iter().any(|d| d.code == "SG004") {
        // Not every issue order of the host threads was checked.
        Verdict::PartlyChecked
    } else if errors.is_empty() {
        Verdict::Accepted
    } else if errors.iter().any(|c| HANGS.contains(c)) {
        Verdict::Deadlock
    } else if errors.iter().all(|c| RACES.contains(c) || LIFETIMES.contains(c))
        && errors.iter().any(|c| RACES.contains(c))
    {
        // Only races: every run reaches both accesses (a program that can also hang or
        // lose a signal may stop before them, so it is not compared).
        Verdict::Race
    } else {
        Verdict::Other
    }
}

/// Findings that say a run blocks forever: a deadlock, a wait nothing satisfies, a host
/// synchronize that never returns, a sync-kind event wait with no record in its cycle.
const HANGS: [&str; 4] = ["SG501", "SG502", "SG503", "SG104"];
/// Two accesses with nothing between them: on two device agents or host threads
/// (SG601), or the host and the device (SG602).
const RACES: [&str; 2] = ["SG601", "SG602"];
/// A use after a destroy or free, or a free while work that uses the object is
/// pending. The simulator has no notion of lifetimes (a destroy frees nothing, a later
/// use still runs), so such a finding neither stops a run before a race nor shows in
/// it: beside races it does not make a program "other".
const LIFETIMES: [&str; 3] = ["SG106", "SG603", "SG604"];

/// What one simulated run showed.
#[derive(Clone, Debug, Default)]
struct Outcome {
    hang: bool,
    race: bool,
    other: Vec<String>,
    /// What ran, as a call trace.
    trace: String,
}

fn simulate(text: &str, seed: u64) -> Outcome {
    simulate_in_order(text, seed, None)
}

/// A run under `seed`, with the host threads issuing the calls of `order` in that order
/// when one is given.
fn simulate_in_order(text: &str, seed: u64, order: Option<&[NodeId]>) -> Outcome {
    let checked = checked_program(text);
    let exec = instantiate(&checked.program, Vec::new());
    let plan = Plan::new(&exec);
    let options = SimOptions {
        seed,
        jitter: Duration::from_micros(20),
        kernel_time: Duration::from_micros(10),
        ..SimOptions::default()
    };
    let sim = Sim::new(&exec, options);
    let log = match order {
        Some(order) => run_in_order(&plan, &sim, order),
        None => run(&plan, &sim),
    };
    let mut outcome = Outcome::default();
    let mut trace = Vec::new();
    write_trace(&exec, &log.calls, None, &mut trace).expect("writing to memory");
    outcome.trace = String::from_utf8(trace).expect("traces are UTF-8");
    for (_, fault) in &log.faults {
        outcome.other.push(fault.to_string());
    }
    let stopped = !log.faults.is_empty() || sim.observed().iter().any(|o| matches!(o, Observed::Hang(_)));
    if !stopped && let Some(difference) = common::executed_differs(&exec, &log, &sim) {
        outcome
            .other
            .push(format!("ran other calls than were verified: {difference}"));
    }
    for observed in sim.observed() {
        match observed {
            Observed::Hang(_) => outcome.hang = true,
            Observed::Race(_) => outcome.race = true,
            other => outcome.other.push(format!("{other:?}")),
        }
    }
    outcome
}

/// Checks one program; `Err` describes the disagreement.
fn compare(text: &str) -> Result<Verdict, String> {
    let verdict = verdict(text);
    let first = simulate(text, 0);
    // Whatever ran, hang or not, is written as lines the trace reader accepts.
    let unreadable = |d: &&syncguard_analyzer::Diagnostic| d.code.starts_with("SG00") && d.severity == Severity::Error;
    if let Some(bad) = read_back(&first.trace).iter().find(unreadable) {
        return Err(format!(
            "the trace reads back with {} {}\n{}",
            bad.code, bad.message, first.trace
        ));
    }
    let simulate = |seed| if seed == 0 { first.clone() } else { simulate(text, seed) };
    match verdict {
        Verdict::Accepted => {
            for seed in 0..ACCEPTED_SEEDS {
                let outcome = simulate(seed);
                if outcome.hang || outcome.race || !outcome.other.is_empty() {
                    return Err(format!("accepted, but seed {seed} showed {outcome:?}"));
                }
                let read_back = codes(&read_back(&outcome.trace));
                let program = checked_program(text).diagnostics;
                // A finding only some issue orders of the host threads show (a host
                // synchronize that can come before another thread's record) may or may
                // not be in the order the run took; every other finding is.
                let (in_some_orders, in_every_order): (Vec<_>, Vec<_>) =
                    program.into_iter().partition(only_in_some_orders);
                let every = codes(&in_every_order);
                let some = codes(&in_some_orders);
                let explained = read_back.iter().all(|code| every.contains(code) || some.contains(code));
                if !explained || !every.iter().all(|code| read_back.contains(code)) {
                    return Err(format!(
                        "accepted, but the trace of seed {seed} reads back with {read_back:?}\n{}",
                        outcome.trace
                    ));
                }
            }
        }
        Verdict::Deadlock => {
            if !(0..REJECTED_SEEDS).any(|seed| simulate(seed).hang) && !shown_in_its_order(text, &HANGS, |o| o.hang) {
                return Err(format!(
                    "reported as a deadlock, but no seed of {REJECTED_SEEDS} hung, nor a run in the issue order it was found in"
                ));
            }
        }
        Verdict::Race => {
            if !(0..REJECTED_SEEDS).any(|seed| simulate(seed).race) && !shown_in_its_order(text, &RACES, |o| o.race) {
                return Err(format!(
                    "reported as a race, but no seed of {REJECTED_SEEDS} raced, nor a run in the issue order it was found in"
                ));
            }
        }
        Verdict::Other | Verdict::PartlyChecked => {}
    }
    Ok(verdict)
}

/// Seeds a run in a forced issue order takes to show a finding: the order fixes which
/// thread issues first, the seed how fast each agent runs, and a finding can need one
/// agent slow (a record that executes late, behind another rank's signal, lands in the
/// next reset cycle of its event): each agent is the slow one in turn, as without an
/// order.
const ORDER_SEEDS: u64 = REJECTED_SEEDS;
/// Orders with the finding that are run, at most.
const ORDERS_TRIED: usize = 4;

/// Whether a run in one of the issue orders in which the verifier finds one of `codes`
/// shows it (a finding only some orders have needs a run in such an order, which the
/// OS may rarely schedule).
fn shown_in_its_order(text: &str, codes: &[&str], shows: impl Fn(&Outcome) -> bool) -> bool {
    let checked = checked_program(text);
    let exec = instantiate(&checked.program, Vec::new());
    let (orders, _) =
        findings_by_issue_order(&checked.program, &exec, &SmtOptions::default()).expect("a small execution");
    let mut tried: Vec<Vec<NodeId>> = orders
        .iter()
        // Errors only: SG104 is also a warning, for a capture-kind wait that binds to
        // no record and so waits for nothing.
        .filter(|order| {
            order
                .findings
                .iter()
                .any(|d| d.codes().any(|code| codes.contains(&code)) && d.severity == Severity::Error)
        })
        .take(ORDERS_TRIED)
        .map(|order| order.permuted.clone())
        .collect();
    tried.extend(queued_before_synchronize(&exec, &checked.diagnostics));
    tried.extend(host_access_before_queued(&exec, &checked.diagnostics));
    tried
        .iter()
        .any(|order| (0..ORDER_SEEDS).any(|seed| shows(&simulate_in_order(text, seed, Some(order)))))
}

/// For an SG503 that a synchronize can block on work another thread queues just before
/// it: the order that queues that work first, then makes the synchronize.
fn queued_before_synchronize(exec: &Execution, diagnostics: &[syncguard_analyzer::Diagnostic]) -> Vec<Vec<NodeId>> {
    let mut orders = Vec::new();
    for diagnostic in diagnostics.iter().filter(|d| d.code == "SG503") {
        if let [queued] = diagnostic.related.as_slice()
            && queued.message.starts_with("queued by")
        {
            orders.extend(across_threads(exec, &queued.span, &diagnostic.primary));
        }
    }
    orders.truncate(ORDERS_TRIED);
    orders
}

/// For an SG602 whose device access another host thread queues: the order in which
/// the host access comes first. Its thread's synchronize before it then returns
/// without waiting for that work (the synchronize takes no turn of its own, so an
/// order of the threads' queue calls alone can leave it after the work is queued).
fn host_access_before_queued(exec: &Execution, diagnostics: &[syncguard_analyzer::Diagnostic]) -> Vec<Vec<NodeId>> {
    let mut orders = Vec::new();
    for diagnostic in diagnostics.iter().filter(|d| d.code == "SG602") {
        if let Some(device) = diagnostic.related.first() {
            orders.extend(across_threads(exec, &diagnostic.primary, &device.span));
        }
    }
    orders.truncate(ORDERS_TRIED);
    orders
}

/// Orders `[a, b]` of the calls at `first` and `then` that two host threads of one rank
/// make.
fn across_threads(
    exec: &Execution,
    first: &syncguard_analyzer::source::Span,
    then: &syncguard_analyzer::source::Span,
) -> Vec<Vec<NodeId>> {
    let mut orders = Vec::new();
    for a in nodes_at(exec, first) {
        for b in nodes_at(exec, then) {
            let (na, nb) = (exec.node(a), exec.node(b));
            if na.rank(exec) == nb.rank(exec) && na.host != nb.host {
                orders.push(vec![a, b]);
            }
        }
    }
    orders
}

fn nodes_at(exec: &Execution, span: &syncguard_analyzer::source::Span) -> Vec<NodeId> {
    (0..exec.nodes.len() as u32)
        .map(NodeId)
        .filter(|&n| exec.node(n).op.span == *span)
        .collect()
}

fn read_back(trace: &str) -> Vec<syncguard_analyzer::Diagnostic> {
    let mut sources = Sources::default();
    check_trace_reader(&mut sources, "run.jsonl", trace.as_bytes(), None, &Overrides::default()).diagnostics
}

#[test]
fn regression_fixtures_agree() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the regression folder exists")
        .map(|entry| entry.expect("readable folder").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sync"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let disagreements: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).expect("readable fixture");
            compare(&text).err().map(|why| format!("{}: {why}", file.display()))
        })
        .collect();
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(default)
}

#[test]
fn verifier_and_simulator_agree_on_random_programs() {
    let (first, cases) = (
        setting("SYNCGUARD_DIFF_FROM", 0),
        setting("SYNCGUARD_DIFF_CASES", 2_000),
    );
    agree_on(first, cases, |case| Generator::new(case).program());
}

/// The threaded generator where any host thread may use any stream and event: the
/// verifier checks every order in which the threads can issue to them; a finding only
/// rare orders show is run in its order (the order given as a run can issue it). 100
/// programs by default: checking every issue order makes each cost about ten times one
/// of the private form, in a debug build.
#[test]
fn verifier_and_simulator_agree_on_threaded_programs() {
    let (first, cases) = (
        setting("SYNCGUARD_DIFF_FROM", 0),
        setting("SYNCGUARD_DIFF_THREADED_CASES", 100),
    );
    agree_on(first, cases, |case| {
        threaded::ThreadedGenerator::new(case, false).program()
    });
}

/// The threaded generator with no stream or capture-kind event shared between host
/// threads.
#[test]
fn verifier_and_simulator_agree_on_threaded_programs_with_private_streams() {
    let (first, cases) = (
        setting("SYNCGUARD_DIFF_FROM", 0),
        setting("SYNCGUARD_DIFF_THREADED_CASES", 300),
    );
    agree_on(first, cases, |case| {
        threaded::ThreadedGenerator::new(case, true).program()
    });
}

/// Compares cases `first..first + cases` of a generator.
fn agree_on(first: u64, cases: u64, generate: impl Fn(u64) -> String) {
    let mut counts = [0usize; 5];
    let mut disagreements = Vec::new();
    for case in first..first + cases {
        let text = generate(case);
        match compare(&text) {
            Ok(verdict) => {
                counts[match verdict {
                    Verdict::Accepted => 0,
                    Verdict::Deadlock => 1,
                    Verdict::Race => 2,
                    Verdict::Other => 3,
                    Verdict::PartlyChecked => 4,
                }] += 1
            }
            Err(why) => disagreements.push(format!("case {case}: {why}\n{text}")),
        }
    }
    eprintln!(
        "{cases} programs: {} accepted, {} deadlocks, {} races, {} other findings, {} not every issue order checked",
        counts[0], counts[1], counts[2], counts[3], counts[4]
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
    // The generator must exercise every verdict, or the comparison proves little; and
    // a program checked in part is compared with nothing.
    assert!(
        cases < 100 || counts[..4].iter().all(|&n| n > 0),
        "verdicts: {counts:?}"
    );
    assert!(
        counts[4] * 10 <= cases as usize,
        "{} of {cases} programs checked in part",
        counts[4]
    );
}

/// Random programs from handshakes, some broken on purpose.
struct Generator {
    rng: StdRng,
    /// Draws for loops and memsets, apart from `rng` so that they leave the rest of
    /// each case as it was before they were added.
    extras: StdRng,
    /// Streams per rank (the first carries the HCCL thread).
    streams: usize,
    bodies: [String; 2],
    kernels: usize,
}

const BUFFER_SIZE: u32 = 256;

impl Generator {
    fn new(case: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(case);
        let streams = rng.random_range(1..=3);
        Generator {
            rng,
            extras: StdRng::seed_from_u64(case.rotate_left(32) ^ 0x5EED),
            streams,
            bodies: [String::new(), String::new()],
            kernels: 0,
        }
    }

    fn program(mut self) -> String {
        let steps = self.rng.random_range(2..=6);
        for _ in 0..steps {
            match self.rng.random_range(0..10) {
                0..=2 => self.event_handoff(),
                3..=5 => self.notify_handoff(),
                6..=7 => self.kernel_on_random_rank(),
                8 => self.host_sync_and_access(),
                _ => self.notify_ping_pong(),
            }
        }
        let mut text = String::from("target A3;\nranks 2;\n\n");
        text.push_str("let comm = HcclCommInitRootInfo(2, \"root\", rank);\n");
        for s in 0..self.streams {
            let _ = writeln!(text, "let s{s} = aclrtCreateStream();");
        }
        text.push_str("let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_AICPU_TS, s0, 0);\n");
        text.push_str(
            "let ch = HcclChannelAcquire(comm, COMM_ENGINE_AICPU_TS, { remoteRank: 1 - rank, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }, 1);\n",
        );
        text.push_str("let sync_ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);\n");
        text.push_str("let capture_ev = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC);\n");
        let _ = writeln!(text, "let a = aclrtMalloc({BUFFER_SIZE}, ACL_MEM_MALLOC_HUGE_FIRST);");
        let _ = writeln!(text, "let b = aclrtMalloc({BUFFER_SIZE}, ACL_MEM_MALLOC_HUGE_FIRST);");
        let _ = write!(
            text,
            "\nif rank == 0 {{\n{}}} else {{\n{}}}\n\n",
            self.bodies[0], self.bodies[1]
        );
        for s in 0..self.streams {
            let _ = writeln!(text, "aclrtSynchronizeStream(s{s});");
        }
        text.push_str("aclrtDestroyEvent(sync_ev);\naclrtDestroyEvent(capture_ev);\n");
        text.push_str("aclrtFree(a);\naclrtFree(b);\nHcclCommDestroy(comm);\n");
        for s in 0..self.streams {
            let _ = writeln!(text, "aclrtDestroyStream(s{s});");
        }
        text
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    fn extra_chance(&mut self, percent: u32) -> bool {
        self.extras.random_range(0..100) < percent
    }

    fn stream(&mut self) -> String {
        format!("s{}", self.rng.random_range(0..self.streams))
    }

    fn emit(&mut self, rank: usize, line: &str) {
        self.bodies[rank].push_str("    ");
        self.bodies[rank].push_str(line);
        self.bodies[rank].push('\n');
    }

    /// A kernel on `stream` touching random, often overlapping, ranges of `a` and `b`;
    /// sometimes a memset of its written range instead, sometimes repeated by a loop.
    fn kernel(&mut self, rank: usize, stream: &str) {
        let range = |rng: &mut StdRng| {
            let buffer = if rng.random_range(0..2) == 0 { "a" } else { "b" };
            let start = rng.random_range(0..4) * 64;
            let end = rng.random_range(start / 64 + 1..=4) * 64;
            (buffer, start, end)
        };
        let (buffer, start, end) = range(&mut self.rng);
        let reads = format!("{buffer}[{start}..{end}]");
        let (buffer, start, end) = range(&mut self.rng);
        let writes = format!("{buffer}[{start}..{end}]");
        self.kernels += 1;
        let line = if self.extra_chance(15) {
            let count = end - start;
            format!("aclrtMemsetAsync({buffer} + {start}, {count}, 0, {count}, {stream});")
        } else {
            format!(
                "kernel({stream}, \"k{}\", reads: [{reads}], writes: [{writes}]);",
                self.kernels
            )
        };
        match self.extras.random_range(0..10) {
            0..=7 => self.emit(rank, &line),
            repeat => {
                self.emit(rank, &format!("for i in 0..{} {{", repeat - 6));
                self.emit(rank, &format!("    {line}"));
                self.emit(rank, "}");
            }
        }
    }

    fn kernel_on_random_rank(&mut self) {
        let rank = self.rng.random_range(0..2);
        let stream = self.stream();
        self.kernel(rank, &stream);
    }

    /// Producer kernel, record, wait on another stream, (reset), consumer kernel.
    fn event_handoff(&mut self) {
        let rank = self.rng.random_range(0..2);
        let (from, to) = (self.stream(), self.stream());
        let sync = self.chance(60);
        let event = if sync { "sync_ev" } else { "capture_ev" };
        self.kernel(rank, &from);
        let record = format!("aclrtRecordEvent({event}, {from});");
        let wait = format!("aclrtStreamWaitEvent({to}, {event});");
        let drop_record = self.chance(10);
        let wait_first = self.chance(15);
        if wait_first {
            self.emit(rank, &wait);
        }
        if !drop_record {
            self.emit(rank, &record);
        }
        if !wait_first {
            self.emit(rank, &wait);
        }
        if sync && !self.chance(10) {
            self.emit(rank, &format!("aclrtResetEvent({event}, {to});"));
        }
        self.kernel(rank, &to);
    }

    /// Rank `from` writes, records notify `index`; the peer waits on it and reads.
    fn notify_handoff(&mut self) {
        let from = self.rng.random_range(0..2);
        let index = self.rng.random_range(0..2);
        self.kernel(from, "s0");
        if !self.chance(10) {
            self.emit(from, &format!("HcommChannelNotifyRecordOnThread(t, ch, {index});"));
        }
        let wait_index = if self.chance(8) { 1 - index } else { index };
        if !self.chance(8) {
            self.emit(
                1 - from,
                &format!("HcommChannelNotifyWaitOnThread(t, ch, {wait_index}, 0);"),
            );
        }
        self.kernel(1 - from, "s0");
    }

    /// Both ranks record, then both wait: the classic pre-sync (cross-rank deadlock when
    /// a rank waits first).
    fn notify_ping_pong(&mut self) {
        for rank in 0..2 {
            let record = "HcommChannelNotifyRecordOnThread(t, ch, 0);";
            let wait = "HcommChannelNotifyWaitOnThread(t, ch, 0, 0);";
            if self.chance(15) {
                self.emit(rank, wait);
                self.emit(rank, record);
            } else {
                self.emit(rank, record);
                self.emit(rank, wait);
            }
        }
    }

    /// A host synchronize and a host read or write of a buffer a kernel may touch.
    fn host_sync_and_access(&mut self) {
        let rank = self.rng.random_range(0..2);
        let stream = self.stream();
        if !self.chance(15) {
            self.emit(rank, &format!("aclrtSynchronizeStream({stream});"));
        }
        let access = if self.chance(50) { "host_read" } else { "host_write" };
        let buffer = if self.chance(50) { "a" } else { "b" };
        if access == "host_write" && self.extra_chance(30) {
            self.emit(rank, &format!("aclrtMemset({buffer}, 64, 0, 64);"));
        } else {
            self.emit(rank, &format!("{access}({buffer}[0..64]);"));
        }
    }
}
