//! What matching memory-value waits costs (`hb::values`): a producer stream hands
//! `n` chunks to a consumer stream through a counter word (`aclrtValueWrite` of `i + 1`,
//! `aclrtValueWait` for it with `ACL_VALUE_WAIT_GEQ`), against the same hand-off through
//! an event per chunk (`aclrtRecordEvent` / `aclrtStreamWaitEvent`), the baseline. Both
//! are correct, so every rule runs to completion.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench value_waits`

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use syncguard_analyzer::{Sources, check_sync_bytes};

fn program(chunks: usize, values: bool) -> String {
    let mut src = String::from(
        "let sp = aclrtCreateStream();\nlet sc = aclrtCreateStream();\n\
         let data = aclrtMalloc(64 MiB, ACL_MEM_MALLOC_HUGE_FIRST);\n\
         let flag = aclrtMalloc(8, ACL_MEM_MALLOC_HUGE_FIRST);\naclrtMemset(flag, 8, 0, 8);\n\
         let ev = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC);\n",
    );
    writeln!(src, "for i in 0..{chunks} {{").unwrap();
    src.push_str("    kernel(sp, \"produce\", writes: [data[i * 4 KiB..(i + 1) * 4 KiB]]);\n");
    if values {
        src.push_str("    aclrtValueWrite(flag, i + 1, 0, sp);\n");
        src.push_str("    aclrtValueWait(flag, i + 1, ACL_VALUE_WAIT_GEQ, sc);\n");
    } else {
        src.push_str("    aclrtRecordEvent(ev, sp);\n    aclrtStreamWaitEvent(sc, ev);\n");
    }
    src.push_str("    kernel(sc, \"consume\", reads: [data[i * 4 KiB..(i + 1) * 4 KiB]]);\n}\n");
    src.push_str("aclrtSynchronizeDevice();\naclrtDestroyEvent(ev);\n");
    src
}

/// The fastest of three checks of the program: the finding count and the time.
fn measure(text: &str) -> (usize, Duration) {
    let mut best = Duration::MAX;
    let mut findings = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let checked = check_sync_bytes(&mut Sources::default(), "bench.sync", text.as_bytes());
        best = best.min(start.elapsed());
        findings = checked.diagnostics.len();
    }
    (findings, best)
}

fn main() {
    println!(
        "{:>8} {:>10} {:>14} {:>16} {:>8}",
        "chunks", "findings", "value waits", "events (base)", "ratio"
    );
    // 2,000 chunks (8,000 calls) is near the matching's budget (`hb::values::affordable`).
    for chunks in [100, 500, 1_000, 2_000] {
        let (found_values, values) = measure(&program(chunks, true));
        let (found_events, events) = measure(&program(chunks, false));
        assert_eq!((found_values, found_events), (0, 0), "both hand-offs are correct");
        println!(
            "{chunks:>8} {found_values:>10} {:>14.2?} {:>16.2?} {:>7.1}x",
            values,
            events,
            values.as_secs_f64() / events.as_secs_f64()
        );
    }
}
