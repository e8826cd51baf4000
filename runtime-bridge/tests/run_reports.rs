//! What the simulator reports when a program hangs, races or loses a signal: the
//! watchdog names every blocked agent and what it waits on, at the calls involved.
//! These programs are run without verification (the CLI never would), to see the
//! reports a disagreement between verifier and simulator would produce.

use std::path::Path;

use syncguard_analyzer::exec::instantiate;
use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Sources, check_sync_bytes};
use syncguard_runtime_bridge::sim::{Observed, Sim, SimOptions};
use syncguard_runtime_bridge::{Plan, report, run};

/// Runs `text` unverified under `seed`; the rendered findings and whether `wanted`
/// was observed.
fn run_unverified(name: &str, text: &str, seed: u64, wanted: fn(&Observed) -> bool) -> (String, bool) {
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, name, text.as_bytes());
    let exec = instantiate(&checked.program, Vec::new());
    let sim = Sim::new(
        &exec,
        SimOptions {
            seed,
            ..SimOptions::default()
        },
    );
    let log = run(&Plan::new(&exec), &sim);
    assert!(log.faults.is_empty(), "{:?}", log.faults);
    let seen = sim.observed().iter().any(wanted);
    let findings = report::sim_findings(&exec, &sim);
    (render_text(&findings, &sources, TextOptions { color: false }), seen)
}

fn example(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(path)).unwrap()
}

#[test]
fn a_cross_wait_deadlock_is_reported_with_every_blocked_agent() {
    let text = example("acl-event-sync/cross-wait-deadlock.sync");
    for seed in 0..5 {
        let (rendered, hung) = run_unverified("cross-wait-deadlock.sync", &text, seed, |o| {
            matches!(o, Observed::Hang(_))
        });
        assert!(hung, "seed {seed} did not hang");
        if seed == 0 {
            insta::assert_snapshot!("cross_wait_deadlock", rendered);
        }
    }
}

#[test]
fn an_unsynchronized_host_read_is_reported_as_a_race() {
    let text = "\
target A3;
let s = aclrtCreateStream();
let x = aclrtMalloc(4096, ACL_MEM_MALLOC_HUGE_FIRST);
kernel(s, \"fill\", writes: [x[0..1024]]);
host_read(x[512..2048]);
aclrtSynchronizeStream(s);
aclrtFree(x);
aclrtDestroyStream(s);
";
    let mut reports = Vec::new();
    for seed in 0..4 {
        let (rendered, raced) = run_unverified("host-read.sync", text, seed, |o| matches!(o, Observed::Race(_)));
        assert!(
            raced,
            "vector clocks see the race whichever access runs first (seed {seed})"
        );
        reports.push(rendered);
    }
    assert!(
        reports.windows(2).all(|w| w[0] == w[1]),
        "the report does not depend on the order"
    );
    insta::assert_snapshot!("host_read_race", reports[0]);
}

#[test]
fn a_lost_signal_and_the_hang_it_causes_are_reported() {
    let text = example("hccl-three-phase-write/lost-signal.sync");
    let lost = (0..64).find_map(|seed| {
        let (rendered, lost) = run_unverified("lost-signal.sync", &text, seed, |o| {
            matches!(o, Observed::LostSignal { .. })
        });
        lost.then_some(rendered)
    });
    let rendered = lost.expect("some seed lets both records land before the first wait");
    insta::assert_snapshot!("lost_signal", rendered);
}
