//! The prover and the concrete runs check each other on random parametric programs over
//! `ranks N in 2..=4`, a range small enough that the concrete runs cover every value:
//! - a property z3 proves has no concrete finding of its rule at any N;
//! - a counterexample z3 finds is confirmed by the concrete runs: they report the same
//!   rule (z3 may add a finding for another call the runs folded into one finding).
//!
//! The shapes include peers that leave `0..N` (`up`, `down`), conditions that divide by
//! zero for some N, and notifies created inside a loop. `PROVER_VS_RUNS_CASES` sets
//! the number of programs (default 300; see BENCHMARKS.md for a long run).

use proptest::prelude::*;
use syncguard_analyzer::{Sources, check_sync_bytes};

const PRELUDE: &str = "ranks N in 2..=4;
let comm = HcclCommInitRootInfo(N, \"root\", rank);
let s = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 2);
let t2 = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 2);
let [next, prev] = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{ remoteRank: (rank + 1) % N, notifyNum: 2 }, { remoteRank: (rank + N - 1) % N, notifyNum: 2 }], 2);
let [up, down] = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{ remoteRank: rank + 1, notifyNum: 2 }, { remoteRank: rank - 1, notifyNum: 2 }], 2);
";

/// Programs per run: `PROVER_VS_RUNS_CASES`, or a count that keeps CI short.
fn cases() -> u32 {
    std::env::var("PROVER_VS_RUNS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn index() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "0",
        "1",
        "2",
        "N % 2",
        "rank % 2",
        "i",
        "i + 1",
        "N - 2",
        "(rank + i) % N % 3",
    ])
}

fn call() -> impl Strategy<Value = String> {
    let channel = prop::sample::select(vec!["next", "prev", "next", "prev", "up", "down"]);
    prop_oneof![
        (channel.clone(), index()).prop_map(|(c, i)| format!("HcommChannelNotifyRecordOnThread(t, {c}, {i});")),
        (channel, index()).prop_map(|(c, i)| format!("HcommChannelNotifyWaitOnThread(t, {c}, {i}, 1836);")),
        index().prop_map(|i| format!("HcommThreadNotifyRecordOnThread(t, t2, {i});")),
        index().prop_map(|i| format!("HcommThreadNotifyWaitOnThread(t2, {i}, 1836);")),
        (0..3i64, 0..3i64).prop_map(|(record, wait)| created_in_loop(record, wait)),
    ]
}

/// A notify created in every iteration, recorded in iteration `record` and waited on in
/// iteration `wait` (of 0 and 1; 2 is none).
fn created_in_loop(record: i64, wait: i64) -> String {
    format!(
        "for j in 0..2 {{
let n = aclrtCreateNotify(ACL_NOTIFY_DEFAULT);
if j == {record} {{ aclrtRecordNotify(n, s); }}
if j == {wait} {{ aclrtWaitAndResetNotify(n, s, 1836); }}
}}"
    )
}

fn statement() -> impl Strategy<Value = String> {
    call().prop_recursive(2, 16, 3, |inner| {
        let condition = prop::sample::select(vec![
            "rank == 0",
            "rank % 2 == 0",
            "N > 2",
            "rank + 1 < N",
            "rank % (N - 2) == 0",
            "4 / (N - 3) > rank",
        ]);
        let bound = prop::sample::select(vec!["N", "N - 1", "2", "rank"]);
        prop_oneof![
            3 => call(),
            1 => (condition, prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(c, body)| format!("if {c} {{\n{}\n}}", body.join("\n"))),
            1 => (bound, prop::collection::vec(inner, 1..3))
                .prop_map(|(b, body)| format!("for i in 0..{b} {{\n{}\n}}", body.join("\n"))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn proofs_and_counterexamples_agree_with_the_concrete_runs(body in prop::collection::vec(statement(), 1..8)) {
        let src = format!("{PRELUDE}{}\naclrtSynchronizeStream(s);\n", body.join("\n"));
        let checked = check_sync_bytes(&mut Sources::default(), "random.sync", src.as_bytes());
        for (property, code) in [("notify-balance", "SG301"), ("notify-index-in-range", "SG302")] {
            if checked.proofs.iter().any(|p| p.property == property) {
                prop_assert!(
                    checked.diagnostics.iter().all(|d| d.code != code),
                    "{property} is proved, yet a run reports {code}:\n{src}"
                );
            }
        }
        for diagnostic in &checked.diagnostics {
            let from_solver = diagnostic.notes.iter().any(|n| n.starts_with("smallest counterexample (z3)"));
            let confirmed = checked.diagnostics.iter().any(|d| {
                d.code == diagnostic.code && d.notes.iter().any(|n| n.starts_with("found with"))
            });
            prop_assert!(
                !from_solver || confirmed,
                "{} {:?}: no concrete run confirms it:\n{src}",
                diagnostic.code,
                diagnostic.notes
            );
        }
    }
}
