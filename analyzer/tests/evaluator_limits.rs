//! The evaluator and the instantiation never overflow silently, hang or blow up: each
//! input gives an answer quickly, and what cannot be evaluated is reported.

use std::time::{Duration, Instant};

use syncguard_analyzer::{Sources, check_sync_bytes};

/// The messages of every finding on `program`, checked within two seconds.
fn findings(program: &str) -> Vec<String> {
    let started = Instant::now();
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "case.sync", program.as_bytes());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    checked
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

fn refused_as_too_large(program: &str, estimate: &str) {
    let found = findings(program);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("too large to analyze, so it is not verified"),
        "{found:?}"
    );
    assert!(found[0].contains(estimate), "{found:?}");
}

#[test]
fn an_inclusive_loop_up_to_i64_max_runs_its_iteration() {
    let found = findings(include_str!("robustness_inputs/loop-inclusive-i64-max.sync"));
    assert!(found.iter().any(|f| f.starts_with("SG104")), "{found:?}");
}

#[test]
fn an_overflowing_condition_is_reported_not_skipped() {
    let found = findings(
        "let s = aclrtCreateStream();\nif 9223372036854775807 + 1 + rank > 0 { aclrtSynchronizeStream(s); }\n",
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("the condition of this `if` has no value")),
        "{found:?}"
    );
}

#[test]
fn an_overflowing_loop_bound_is_reported_not_skipped() {
    let found = findings(
        "let s = aclrtCreateStream();\nfor i in 0..9223372036854775807 + 1 + rank { aclrtSynchronizeStream(s); }\n",
    );
    assert!(
        found.iter().any(|f| f.contains("the bounds of this loop has no value")),
        "{found:?}"
    );
}

#[test]
fn a_thread_in_a_loop_sees_its_iteration_of_the_loop_variable() {
    let found = findings(include_str!("robustness_inputs/loop-var-in-thread.sync"));
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn an_empty_loop_of_10_to_the_12_iterations_is_refused_early() {
    refused_as_too_large(
        include_str!("robustness_inputs/empty-loop-1e12.sync"),
        "a loop of 1000000000000 iterations",
    );
}

#[test]
fn a_kernel_loop_of_10_to_the_12_iterations_is_refused_early() {
    refused_as_too_large(
        include_str!("robustness_inputs/kernel-loop-1e12.sync"),
        "1000000000000 calls in all",
    );
}

#[test]
fn a_billion_ranks_are_refused_early() {
    refused_as_too_large(
        include_str!("robustness_inputs/ranks-1e9.sync"),
        "runs on 1000000000 ranks",
    );
}

#[test]
fn a_doubling_let_chain_stays_small() {
    assert!(findings(include_str!("robustness_inputs/let-doubling-25.sync")).is_empty());
}

#[test]
fn ten_thousand_chained_lets_stay_small() {
    let mut program = String::from("let x0 = 1;\n");
    for i in 0..10_000 {
        program.push_str(&format!("let x{} = x{i} + 1;\n", i + 1));
    }
    assert!(findings(&program).is_empty());
}

#[test]
fn a_subkernel_loop_of_10_to_the_12_iterations_is_refused_early() {
    refused_as_too_large(
        include_str!("robustness_inputs/subkernel-loop-1e12.sync"),
        "this loop runs 1000000000000 iterations",
    );
}

#[test]
fn a_kernel_condition_with_no_value_on_a_core_is_reported() {
    // `4 / GetBlockIdx()` divides by zero on core 0: that core's path stops there.
    let found = findings(include_str!("robustness_inputs/kernel-undefined-condition.sync"));
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("SG007 the condition of this `if` (on AIV core 0 with tiling key 1) has no value")),
        "{found:?}"
    );
}

#[test]
fn a_notify_index_at_i64_max_is_out_of_range_and_nothing_else() {
    let program = "target A3;
ranks 2;
let comm = HcclCommInitRootInfo(2, \"root_info\", rank);
let s = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_AICPU_TS, s, 0);
let ch = HcclChannelAcquire(comm, COMM_ENGINE_AICPU_TS, { remoteRank: 1 - rank, notifyNum: 2 }, 1);
HcommChannelNotifyRecordOnThread(t, ch, 9223372036854775807);
aclrtSynchronizeStream(s);
";
    let found = findings(program);
    // One finding for both ranks' calls; no unbalanced signal from the rejected record.
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("SG302"), "{found:?}");
}

#[test]
fn a_negative_notify_count_is_said_plainly() {
    let program = "target A3;
ranks 2;
let comm = HcclCommInitRootInfo(2, \"root_info\", rank);
let s = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_AICPU_TS, s, 0);
let ch = HcclChannelAcquire(comm, COMM_ENGINE_AICPU_TS, { remoteRank: 1 - rank, notifyNum: -6 }, 1);
HcommChannelNotifyRecordOnThread(t, ch, 0);
HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
aclrtSynchronizeStream(s);
";
    let found = findings(program);
    assert!(
        !found.is_empty() && found.iter().all(|f| f.starts_with("SG302")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .all(|f| f.contains("has no notifies (notifyNum -6 is negative)")),
        "{found:?}"
    );
}

#[test]
fn the_smallest_counterexample_is_found_over_the_whole_i64_range() {
    // The binary search's first midpoint of a range this wide overflows i64.
    let program = "target A3;
ranks N in 2..=4;
param P in -9223372036854775807..=9223372036854775807;
let comm = HcclCommInitRootInfo(N, \"root_info\", rank);
let s = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_AICPU_TS, s, 0);
let ch = HcclChannelAcquire(comm, COMM_ENGINE_AICPU_TS, { remoteRank: (rank + 1) % N, notifyNum: 2 }, 1);
if P > 5 {
    HcommChannelNotifyRecordOnThread(t, ch, 1);
}
aclrtSynchronizeStream(s);
";
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "case.sync", program.as_bytes());
    let notes: Vec<&String> = checked.diagnostics.iter().flat_map(|d| &d.notes).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("smallest counterexample (z3): N = 2, P = 6")),
        "{notes:?}"
    );
}

#[test]
fn too_many_value_waits_to_match_are_said_not_skipped() {
    // 4,600 waits over 9,200 calls: past the matching's budget of graph walks.
    let program = "let s1 = aclrtCreateStream();\nlet s2 = aclrtCreateStream();\n\
        let flag = aclrtMalloc(8, ACL_MEM_MALLOC_HUGE_FIRST);\naclrtMemset(flag, 8, 0, 8);\n\
        for i in 0..4600 {\n    aclrtValueWrite(flag, i + 1, 0, s1);\n    \
        aclrtValueWait(flag, i + 1, ACL_VALUE_WAIT_GEQ, s2);\n}\n";
    let found = findings(program);
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("SG004") && f.contains("too many memory-value calls")),
        "{found:?}"
    );
}

#[test]
fn a_sync_all_counterexample_over_many_tiling_fields_is_found_at_their_least_values() {
    // z3's counterexample is minimized one parameter at a time. Searched from `i64::MIN`,
    // some 120 steps per parameter, 80 fields spent the query's 2 s deadline (ops-nn
    // `sparse_to_dense`, 77 fields: its SG855 came in half the runs); from each field's
    // least value it takes one step each.
    let mut program = String::from("target 950;\n");
    for i in 0..80 {
        program.push_str(&format!("param f{i} in 3..;\n"));
    }
    let uses: Vec<String> = (0..80).map(|i| format!("f{i} >= 3")).collect();
    program.push_str(&format!(
        "aicore skip_one(x, blocks: 100) {{\n    if GetBlockIdx() != 77 && {} {{\n        AscendC::SyncAll();\n    }}\n}}\n",
        uses.join(" && ")
    ));
    let found = findings(&program);
    let hang = found.iter().find(|f| f.starts_with("SG855")).expect("the SyncAll hang");
    assert!(hang.contains("z3's smallest counterexample"), "{hang}");
    let at_least = |i: usize| [",", ";"].iter().any(|end| hang.contains(&format!("f{i} = 3{end}")));
    assert!((0..80).all(at_least), "{hang}");
}
