//! Where a trace check's memory goes: resident memory after reading the trace into the
//! Program, after instantiating its execution, and after building the happens-before
//! graph with its clocks (the peak of `syncguard check` is about the last line).
//!
//! Run: `cargo run --release -p syncguard-analyzer --example trace_memory -- TRACE.jsonl`

use std::time::Instant;

use syncguard_analyzer::Sources;
use syncguard_analyzer::exec::instantiate;
use syncguard_analyzer::hb::HappensBefore;

/// Resident memory now, in MiB (Linux).
fn resident_mib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    (pages * 4096) >> 20
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: trace_memory TRACE.jsonl");
        std::process::exit(2);
    };
    let file = std::fs::File::open(&path).unwrap_or_else(|err| panic!("{path}: {err}"));
    let start = Instant::now();
    let phase = |name: &str, detail: String| {
        println!(
            "{name:<16} {:>6} MiB  {:>6.1} s  {detail}",
            resident_mib(),
            start.elapsed().as_secs_f64()
        );
    };
    let mut sources = Sources::default();
    let read = syncguard_trace::read_trace(&mut sources, path.clone(), file, None, false, false);
    let program = read.into_read(None, None).program;
    phase("read", String::new());
    let exec = instantiate(&program, Vec::new());
    phase(
        "execution",
        format!("{} calls, {} agents", exec.nodes.len(), exec.agents.len()),
    );
    match HappensBefore::build(&exec) {
        Ok(hb) => phase("happens-before", format!("{} edges", hb.graph.edge_count())),
        Err(_) => phase("happens-before", "too large to analyze".to_string()),
    }
}
