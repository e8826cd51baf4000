//! The simulator's memory: a 4 GiB buffer that a kernel fills costs next to nothing
//! (this test binary has this one test, so that the process's peak is its own).

use std::path::Path;

use syncguard_analyzer::exec::{Action, Memory, instantiate};
use syncguard_analyzer::{Sources, check_sync_bytes};
use syncguard_runtime_bridge::sim::{Sim, SimOptions};
use syncguard_runtime_bridge::{Plan, run};

/// The process's peak resident memory (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("a VmHWM line");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number");
    kib << 10
}

#[test]
fn a_kernel_writing_a_4_gib_buffer_runs_in_little_memory() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/big-malloc.sync");
    let text = std::fs::read_to_string(path).expect("readable program");
    let checked = check_sync_bytes(&mut Sources::default(), "big-malloc.sync", text.as_bytes());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
    let exec = instantiate(&checked.program, Vec::new());
    let sim = Sim::new(&exec, SimOptions::default());
    let log = run(&Plan::new(&exec), &sim);
    assert!(log.faults.is_empty() && sim.observed().is_empty(), "{:?}", log.faults);
    assert_eq!(sim.memory_held(), 0, "a buffer filled whole is one run of one value");
    // The kernel's bytes are there: its node's fill byte at both ends of 4 GiB.
    let (kernel, buffer) = exec
        .nodes
        .iter()
        .enumerate()
        .find_map(|(index, node)| match &node.action {
            Action::Access(accesses) => Some((index as u8, accesses[0].memory)),
            _ => None,
        })
        .expect("the program has a kernel");
    assert!(matches!(buffer, Memory::Buffer(_)));
    assert_eq!(sim.bytes(buffer, 0, 1), [kernel]);
    assert_eq!(sim.bytes(buffer, (4 << 30) - 1, 4 << 30), [kernel]);
    let peak = peak_rss();
    assert!(peak < 256 << 20, "peak resident memory {} MiB", peak >> 20);
}
