//! Writes a correct multi-rank JSONL call trace for benchmarks and manual testing: HCCL
//! ring transfers with the three-phase protocol, kernels and sync-kind events over three
//! streams per rank (see `benches/trace_gen/mod.rs` for the workload).
//!
//! Run: `cargo run --release -p syncguard-analyzer --example gen_trace -- --calls 1000000 --ranks 8 [--out FILE]`
//! (stdout without `--out`).

#[path = "../benches/trace_gen/mod.rs"]
mod trace_gen;

use std::io::BufWriter;
use std::process::ExitCode;

const USAGE: &str = "usage: gen_trace [--calls N (default 1000000)] [--ranks R >= 2 (default 8)] [--out FILE]";

fn main() -> ExitCode {
    let (mut calls, mut ranks, mut out) = (1_000_000usize, 8usize, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next();
        let parsed = match (flag.as_str(), &value) {
            ("--calls", Some(v)) => v.parse().map(|n| calls = n).is_ok(),
            ("--ranks", Some(v)) => v.parse().map(|n| ranks = n).is_ok_and(|_| ranks >= 2),
            ("--out", Some(v)) => {
                out = Some(v.clone());
                true
            }
            _ => false,
        };
        if !parsed {
            eprintln!("gen_trace: bad argument `{flag}`\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let result = match &out {
        Some(path) => {
            std::fs::File::create(path).and_then(|file| trace_gen::write_trace(BufWriter::new(file), calls, ranks))
        }
        None => trace_gen::write_trace(BufWriter::new(std::io::stdout().lock()), calls, ranks),
    };
    match result {
        Ok(written) => {
            if let Some(path) = out {
                eprintln!("gen_trace: {written} calls over {ranks} ranks written to {path}");
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("gen_trace: {err}");
            ExitCode::from(1)
        }
    }
}
