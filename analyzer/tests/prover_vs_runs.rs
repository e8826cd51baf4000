//! The prover and the concrete runs check each other on random parametric programs over
//! ranges small enough that the concrete runs cover every value:
//! - a property z3 proves has no concrete finding of its rule at any value;
//! - a counterexample z3 finds is confirmed by the concrete run at its own values: the
//!   finding that carries it (its rule, its call) is one that run reports.
//!
//! Host programs (`ranks N in 2..=4`) have peers that leave `0..N` (`up`, `down`),
//! `notifyNum` expressions in `rank` and `N`, conditions that divide by zero for some N,
//! early returns, loops over steps and notifies created inside a loop. SuperKernel
//! programs (`param K in 1..=3`) have sub-kernels with two TilingKeys, branches on the
//! core index, the core type, the key and `K`, loops and early returns. Programs from one
//! rank (`ranks N in 1..=3`) add channels to the rank itself, peers `(rank - k) % N` and
//! `notifyNum: N / 2` (0 at N = 1), acquired inside loops over the peers.
//! `PROVER_VS_RUNS_CASES` sets the number of programs of each kind (default 300; see
//! BENCHMARKS.md for a long run).

use proptest::prelude::*;
use syncguard_analyzer::rules::Check;
use syncguard_analyzer::{Sources, check_sync_bytes};

/// Communicator, threads and channels; `notify_num` is every channel's `notifyNum`.
fn prelude(notify_num: &str) -> String {
    format!(
        "{}
let comm = HcclCommInitRootInfo(N, \"root\", rank);
let s = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 2);
let t2 = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 2);
let [next, prev] = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{{ remoteRank: (rank + 1) % N, notifyNum: {notify_num} }}, {{ remoteRank: (rank + N - 1) % N, notifyNum: {notify_num} }}], 2);
let [up, down] = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{{ remoteRank: rank + 1, notifyNum: {notify_num} }}, {{ remoteRank: rank - 1, notifyNum: {notify_num} }}], 2);
",
        RANKS.declaration
    )
}

fn notify_num() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["2", "2", "3", "N - 1", "rank % 2 + 1", "N - rank"])
}

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
    call_on(vec!["next", "prev", "next", "prev", "up", "down"])
}

/// A notify call on one of `channels`, on the threads, or on an ACL notify.
fn call_on(channels: Vec<&'static str>) -> impl Strategy<Value = String> {
    let channel = prop::sample::select(channels);
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
            1 => (condition.clone(), prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(c, body)| format!("if {c} {{\n{}\n}}", body.join("\n"))),
            1 => condition.prop_map(|c| format!("if {c} {{ return; }}")),
            1 => (bound, prop::collection::vec(inner, 1..3))
                .prop_map(|(b, body)| format!("for i in 0..{b} {{\n{}\n}}", body.join("\n"))),
        ]
    })
}

/// Channels acquired in a loop over the peers, `(rank + k) % N` and `(rank - k) % N`
/// (negative before `%` for `rank < k`), with `notifyNum: N / 2`, used in the loop.
fn peer_loop() -> impl Strategy<Value = String> {
    let bound = prop::sample::select(vec!["N", "2", "N + 1"]);
    let body = prop::collection::vec(call_on(vec!["dst", "src", "next", "prev"]), 1..4);
    (bound, body).prop_map(|(bound, body)| {
        format!(
            "for k in 1..{bound} {{
let [dst, src] = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, [{{ remoteRank: (rank + k) % N, notifyNum: N / 2 }}, {{ remoteRank: (rank - k) % N, notifyNum: N / 2 }}], 2);
{}
}}",
            body.join("\n")
        )
    })
}

/// The host statements of programs from one rank: `statement`s and peer loops.
fn one_rank_statement() -> impl Strategy<Value = String> {
    prop_oneof![3 => statement(), 1 => peer_loop()]
}

/// Each property and the rules whose concrete findings refute it.
const PROPERTY_CODES: &[(&str, &[&str])] = &[
    ("notify-balance", &["SG301"]),
    ("notify-index-in-range", &["SG302"]),
    ("next-task-start-once", &["SG401", "SG402"]),
    ("wait-pre-task-end-once", &["SG406"]),
];

/// The one parameter of a generated program: its declaration's prefix, name and values.
struct Parameter {
    declaration: &'static str,
    name: &'static str,
    values: std::ops::RangeInclusive<i64>,
}

const RANKS: Parameter = Parameter {
    declaration: "ranks N in 2..=4;",
    name: "N",
    values: 2..=4,
};

const RANKS_FROM_ONE: Parameter = Parameter {
    declaration: "ranks N in 1..=3;",
    name: "N",
    values: 1..=3,
};

const K: Parameter = Parameter {
    declaration: "param K in 1..=3;",
    name: "K",
    values: 1..=3,
};

/// One finding of a concrete run: a rule it reports (its own or one it folds in), its
/// primary call, whether the rule is its own, and its message and notes.
struct Found {
    code: &'static str,
    primary: std::ops::Range<usize>,
    own: bool,
    text: String,
}

/// The findings one value of the parameter shows, checked on its own: the program with
/// the range narrowed to that value (the same length, so calls keep their offsets).
fn found_at(src: &str, parameter: &Parameter, value: i64) -> Vec<Found> {
    let narrowed = src.replacen(
        parameter.declaration,
        &parameter.declaration.replace(
            &format!("{}..={}", parameter.values.start(), parameter.values.end()),
            &format!("{value}..={value}"),
        ),
        1,
    );
    // A finding folded into its cause as a consequence is still a finding of that run.
    check_sync_bytes(&mut Sources::default(), "value.sync", narrowed.as_bytes())
        .diagnostics
        .into_iter()
        .flat_map(|d| {
            let text = std::iter::once(d.message.clone())
                .chain(d.notes.clone())
                .collect::<Vec<_>>()
                .join("\n");
            d.codes()
                .map(|code| Found {
                    code,
                    primary: d.primary.range.clone(),
                    own: code == d.code,
                    text: text.clone(),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The parameter's value in a counterexample note ("..., K = 2: ...").
fn value_in(note: &str, parameter: &Parameter) -> Option<i64> {
    let at = note.find(&format!("{} = ", parameter.name))? + parameter.name.len() + 3;
    let digits: String = note[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// Whether a finding's message is about the sub-kernel a proof covers (an early-start
/// proof's scope starts "sub-kernel a, ..."; host proofs cover everything).
fn covered_by(proof_scope: &str, message: &str) -> bool {
    let Some(name) = proof_scope
        .strip_prefix("sub-kernel ")
        .and_then(|rest| rest.split(',').next())
    else {
        return true;
    };
    let mention = format!("sub-kernel {name}");
    message
        .match_indices(&mention)
        .any(|(at, _)| !message[at + mention.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// A proved property no value violates, checked at each value on its own; a z3
/// counterexample is a finding of the same rule at its value.
fn proofs_agree_with_runs(src: &str, parameter: &Parameter) -> Result<(), TestCaseError> {
    let checked = check_sync_bytes(&mut Sources::default(), "random.sync", src.as_bytes());
    let at_each: Vec<(i64, Vec<Found>)> = parameter
        .values
        .clone()
        .map(|v| (v, found_at(src, parameter, v)))
        .collect();
    for proof in &checked.proofs {
        let codes = PROPERTY_CODES
            .iter()
            .find(|(property, _)| *property == proof.property)
            .map_or(&[][..], |(_, codes)| *codes);
        for (value, found) in &at_each {
            let violated = found
                .iter()
                .find(|f| codes.contains(&f.code) && covered_by(&proof.scope, &f.text))
                .map(|f| (f.code, &f.text));
            prop_assert!(
                violated.is_none(),
                "{} is proved for {}, yet {} = {value} reports {:?}:\n{src}",
                proof.property,
                proof.scope,
                parameter.name,
                violated
            );
        }
    }
    for diagnostic in &checked.diagnostics {
        for note in diagnostic.notes.iter().filter(|n| n.contains("counterexample (z3")) {
            let value = value_in(note, parameter).unwrap_or(*parameter.values.start());
            let confirmed = at_each.iter().any(|(v, found)| {
                *v == value
                    && found.iter().any(|f| {
                        f.own
                            && f.code == diagnostic.code
                            && (checked_once(f.code) || f.primary == diagnostic.primary.range)
                    })
            });
            prop_assert!(
                confirmed,
                "{} {note}: the run at {} = {value} does not report it:\n{src}",
                diagnostic.code,
                parameter.name
            );
        }
    }
    Ok(())
}

/// Whether `code`'s rule is checked on the Program itself (SuperKernel code paths): its
/// one finding covers every value, at the call of the first value that shows it.
fn checked_once(code: &str) -> bool {
    syncguard_analyzer::rules::find(code).is_some_and(|rule| matches!(rule.check, Check::Program(_)))
}

/// Kernel code: the early-start calls, a data move, an early return, and branches and
/// loops over what differs between cores, keys and parameter values.
fn kernel_statement() -> impl Strategy<Value = String> {
    let call = prop::sample::select(vec![
        "AscendC::SetNextTaskStart();",
        "AscendC::SetNextTaskStart();",
        "AscendC::WaitPreTaskEnd();",
        "AscendC::DataCopy(UB, x[0..256]);",
        "return;",
    ])
    .prop_map(String::from);
    call.prop_recursive(2, 12, 3, |inner| {
        let condition = prop::sample::select(vec![
            "GetBlockIdx() < 2",
            "GetBlockIdx() % 2 == 0",
            "TILING_KEY_IS(1)",
            "TILING_KEY_IS(2)",
            "ASCEND_IS_AIV",
            "K > 1",
            "GetBlockIdx() < K",
            "GetBlockIdx() + K == 3",
            "4 / (K - 1) > GetBlockIdx()",
        ]);
        let bound = prop::sample::select(vec!["K", "2", "K - 1"]);
        let block = prop::collection::vec(inner.clone(), 1..3).prop_map(|body| body.join("\n"));
        prop_oneof![
            3 => inner,
            1 => (condition, block.clone(), prop::option::of(block.clone())).prop_map(|(c, then, otherwise)| {
                match otherwise {
                    Some(otherwise) => format!("if {c} {{\n{then}\n}} else {{\n{otherwise}\n}}"),
                    None => format!("if {c} {{\n{then}\n}}"),
                }
            }),
            1 => (bound, block).prop_map(|(b, body)| format!("for i in 0..{b} {{\n{body}\n}}")),
        ]
    })
}

/// One or two sub-kernels with their own TilingKeys in a SuperKernel on AIC and AIV cores.
fn superkernel_program() -> impl Strategy<Value = String> {
    let subkernel = |name: &'static str, keys: &'static str| {
        prop::collection::vec(kernel_statement(), 1..6)
            .prop_map(move |body| format!("subkernel {name}(tiling_keys: {keys}) {{\n{}\n}}", body.join("\n")))
    };
    let cores = prop::sample::select(vec!["aiv: 2", "aic: 1, aiv: 2", "aic: 2, aiv: 4"]);
    (cores, subkernel("a", "[1, 2]"), prop::option::of(subkernel("b", "[1]"))).prop_map(|(cores, a, b)| {
        format!(
            "{}\nlet s = aclrtCreateStream();\nlet x = aclrtMalloc(64 KiB);\nsuperkernel sk(s, {cores}) {{\n{a}\n{}\n}}\naclrtSynchronizeStream(s);\n",
            K.declaration,
            b.unwrap_or_default()
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn host_proofs_and_counterexamples_agree_with_the_concrete_runs(
        notify_num in notify_num(),
        body in prop::collection::vec(statement(), 1..8),
    ) {
        let src = format!("{}{}\naclrtSynchronizeStream(s);\n", prelude(notify_num), body.join("\n"));
        proofs_agree_with_runs(&src, &RANKS)?;
    }

    #[test]
    fn one_rank_proofs_and_counterexamples_agree_with_the_concrete_runs(
        notify_num in prop::sample::select(vec!["2", "N / 2", "N", "N - 1"]),
        body in prop::collection::vec(one_rank_statement(), 1..6),
    ) {
        let src = format!(
            "{}{}\naclrtSynchronizeStream(s);\n",
            prelude(notify_num).replacen(RANKS.declaration, RANKS_FROM_ONE.declaration, 1),
            body.join("\n")
        );
        proofs_agree_with_runs(&src, &RANKS_FROM_ONE)?;
    }

    #[test]
    fn superkernel_proofs_and_counterexamples_agree_with_the_concrete_runs(src in superkernel_program()) {
        proofs_agree_with_runs(&src, &K)?;
    }
}
