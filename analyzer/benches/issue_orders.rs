//! What checking every issue order costs: host threads that each queue `calls` kernels
//! on one shared stream (every interleaving is a different FIFO order), against the
//! same program with a stream per thread (one order), the baseline.
//!
//! Then a program a fuzz run found (`fuzz/found/sync/shared-event-many-orders.sync`):
//! two host threads share a stream and an event, so hundreds of orders each confirm
//! their hazards' schedules, the cost the happens-before decision of schedules removed.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench issue_orders`

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use syncguard_analyzer::exec::{instantiate, issue_orders};
use syncguard_analyzer::{Sources, check_sync_bytes};

/// Two worker threads, each queueing `calls` kernels and then signalling the main
/// thread, which waits for both and synchronizes.
fn program(calls: usize, shared: bool) -> String {
    let mut src = String::from("let sj = aclrtCreateStream();\nlet b = aclrtMalloc(4096);\n");
    for w in 0..2 {
        writeln!(
            src,
            "let s{w} = aclrtCreateStream();\nlet done{w} = aclrtCreateNotify();"
        )
        .unwrap();
    }
    for w in 0..2 {
        let stream = if shared { "s0".to_string() } else { format!("s{w}") };
        writeln!(src, "thread w{w} {{").unwrap();
        for k in 0..calls {
            let at = (w * calls + k) * 16;
            writeln!(src, "    kernel({stream}, \"k\", writes: [b[{at}..{}]]);", at + 16).unwrap();
        }
        writeln!(src, "    aclrtRecordNotify(done{w}, {stream});\n}}").unwrap();
    }
    for w in 0..2 {
        writeln!(src, "aclrtWaitAndResetNotify(done{w}, sj, 0);").unwrap();
    }
    src.push_str("aclrtSynchronizeStream(sj);\naclrtDestroyNotify(done0);\naclrtDestroyNotify(done1);\n");
    src
}

fn measure(text: &str) -> (usize, Duration) {
    let (checked, elapsed) = timed_check(text);
    assert!(
        checked.diagnostics.iter().all(|d| d.code != "SG001"),
        "{:?}",
        checked.diagnostics
    );
    let exec = instantiate(&checked.program, Vec::new());
    (issue_orders(&exec).orders.len().max(1), elapsed)
}

fn timed_check(text: &str) -> (syncguard_analyzer::CheckedFile, Duration) {
    let start = Instant::now();
    let checked = check_sync_bytes(&mut Sources::default(), "bench.sync", text.as_bytes());
    (checked, start.elapsed())
}

fn main() {
    println!(
        "{:>14} {:>8} {:>12} {:>14} {:>12}",
        "calls/thread", "orders", "shared", "private (base)", "ratio"
    );
    for calls in [1, 2, 4, 6, 8, 10] {
        let (orders, shared) = measure(&program(calls, true));
        let (_, private) = measure(&program(calls, false));
        println!(
            "{calls:>14} {orders:>8} {:>12.2?} {:>14.2?} {:>11.1}x",
            shared,
            private,
            shared.as_secs_f64() / private.as_secs_f64()
        );
    }
    let found =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/found/sync/shared-event-many-orders.sync");
    let text = std::fs::read_to_string(&found).expect("the fuzz input is in the repository");
    let mut times: Vec<Duration> = (0..5).map(|_| timed_check(&text).1).collect();
    times.sort();
    println!("\nshared-event-many-orders.sync: median of 5 checks {:.2?}", times[2]);
}
