//! The simulator's overhead per synchronization op on a large program.
//!
//! `cargo bench -p syncguard-runtime-bridge --bench simulate -- [--steps N]`
//!
//! The program: two ranks, two streams each; every step hands a buffer from s0 to s1
//! with one sync-kind event and back with another (record, wait, reset each), runs a
//! producer and a consumer kernel, and meets the peer rank with a channel notify
//! barrier (record and wait, alternating indices). Timing perturbation is off for the
//! overhead figure (every op runs as soon as it can), then on (the defaults, as
//! `verify-then-run` uses them) for comparison.

use std::time::{Duration, Instant};

use syncguard_analyzer::exec::{Action, instantiate};
use syncguard_analyzer::trace::write::write_trace;
use syncguard_analyzer::{Severity, Sources, check_sync_bytes};
use syncguard_runtime_bridge::sim::{Sim, SimOptions};
use syncguard_runtime_bridge::{Plan, run};

fn program(steps: u64) -> String {
    format!(
        "\
target A3;
ranks 2;
let comm = HcclCommInitRootInfo(2, \"root\", rank);
let s0 = aclrtCreateStream();
let s1 = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_AICPU_TS, s1, 0);
let ch = HcclChannelAcquire(comm, COMM_ENGINE_AICPU_TS, {{ remoteRank: 1 - rank, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }}, 1);
let ready = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
let done = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
let a = aclrtMalloc(4096, ACL_MEM_MALLOC_HUGE_FIRST);
let b = aclrtMalloc(4096, ACL_MEM_MALLOC_HUGE_FIRST);
for step in 0..{steps} {{
    kernel(s0, \"produce\", writes: [a[0..256]]);
    aclrtRecordEvent(ready, s0);
    aclrtStreamWaitEvent(s1, ready);
    aclrtResetEvent(ready, s1);
    kernel(s1, \"consume\", reads: [a[0..256]], writes: [b[0..256]]);
    HcommChannelNotifyRecordOnThread(t, ch, step % 2);
    HcommChannelNotifyWaitOnThread(t, ch, step % 2, 0);
    aclrtRecordEvent(done, s1);
    aclrtStreamWaitEvent(s0, done);
    aclrtResetEvent(done, s0);
}}
aclrtSynchronizeStream(s0);
aclrtSynchronizeStream(s1);
aclrtDestroyEvent(ready);
aclrtDestroyEvent(done);
aclrtFree(a);
aclrtFree(b);
HcclCommDestroy(comm);
aclrtDestroyStream(s0);
aclrtDestroyStream(s1);
"
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let steps = args
        .iter()
        .position(|a| a == "--steps")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000);
    let text = program(steps);

    let started = Instant::now();
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "bench.sync", text.as_bytes());
    let verify = started.elapsed();
    assert!(
        checked.diagnostics.iter().all(|d| d.severity != Severity::Error),
        "the benchmark program must verify: {:?}",
        checked.diagnostics.first().map(|d| &d.message)
    );

    let exec = instantiate(&checked.program, Vec::new());
    let plan = Plan::new(&exec);
    let sync_ops = exec
        .nodes
        .iter()
        .filter(|n| n.agent != n.host && !matches!(n.action, Action::Access(_) | Action::Other))
        .count();
    println!(
        "program: 2 ranks x {steps} steps: {} host calls, {} device ops ({sync_ops} of them synchronization); verified in {:.2} s",
        plan.call_count(),
        exec.nodes.iter().filter(|n| n.agent != n.host).count(),
        verify.as_secs_f64()
    );

    let quiet = SimOptions {
        seed: 0,
        jitter: Duration::ZERO,
        kernel_time: Duration::ZERO,
        ..SimOptions::default()
    };
    for (label, options) in [
        ("no perturbation", quiet),
        ("default perturbation", SimOptions::default()),
    ] {
        let sim = Sim::new(&exec, options);
        let started = Instant::now();
        let log = run(&plan, &sim);
        let elapsed = started.elapsed();
        assert!(
            log.faults.is_empty() && sim.observed().is_empty(),
            "the run must complete cleanly"
        );
        let executed = sim.executed();
        println!(
            "sim, {label}: {executed} device ops in {:.3} s = {:.0} device ops/s, {:.0} sync ops/s ({:.2} us per device op)",
            elapsed.as_secs_f64(),
            executed as f64 / elapsed.as_secs_f64(),
            sync_ops as f64 / elapsed.as_secs_f64(),
            elapsed.as_secs_f64() * 1e6 / executed as f64,
        );
        if label == "no perturbation" {
            let started = Instant::now();
            let mut trace = Vec::new();
            write_trace(&exec, &log.calls, Some(&sources), &mut trace).expect("in memory");
            println!(
                "trace: {} lines, {:.1} MiB written in {:.3} s",
                trace.iter().filter(|&&b| b == b'\n').count(),
                trace.len() as f64 / (1 << 20) as f64,
                started.elapsed().as_secs_f64()
            );
        }
    }
}
