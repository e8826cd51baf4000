//! Reading a PyTorch profiler (Kineto) trace post mortem: `syncguard check TRACE.json`
//! end to end on a generated trace of N events, against Python's `json.load` of the
//! same file, in one paired run (alternating, so both see the same machine state).
//!
//! ```sh
//! cargo bench --bench profile_read                      # 1,000,000 events, 3 runs each
//! cargo bench --bench profile_read -- --events 200000 --runs 5
//! cargo bench --bench profile_read -- --keep /tmp/rank0.pt.trace.json   # keep the trace
//! ```
//!
//! The trace is what a training step's profile holds: per step a launch and its kernel,
//! a copy, an event record (`cuda_event`), a wait on another stream (`cuda_sync`), CPU
//! ops and flow events that are read and skipped. The goal is under 0.35x of
//! `json.load` (which only parses). The binary is `target/release/syncguard` (built by
//! `cargo bench`); `SYNCGUARD_BENCH_BIN=PATH` times another one; `PYTHON` names the
//! interpreter (default `python3`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let mut events = 1_000_000usize;
    let mut runs = 3usize;
    let mut keep: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--events" => events = value().parse().expect("--events N"),
            "--runs" => runs = value().parse().expect("--runs N"),
            "--keep" => keep = Some(PathBuf::from(value())),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let binary = std::env::var_os("SYNCGUARD_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_syncguard")));
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let dir = tempfile::tempdir().expect("a temporary folder");
    let trace = keep.unwrap_or_else(|| dir.path().join("rank0.pt.trace.json"));
    let bytes = write_trace(&trace, events);
    println!(
        "{events} events, {:.1} MiB; {runs} paired runs; binary {}",
        bytes as f64 / (1 << 20) as f64,
        binary.display()
    );
    let mut syncguard = Vec::new();
    let mut json_load = Vec::new();
    for _ in 0..runs {
        syncguard.push(time(
            Command::new(&binary).args(["check", "--format", "concise"]).arg(&trace),
        ));
        json_load.push(time(
            Command::new(&python)
                .args(["-c", "import json, sys; json.load(open(sys.argv[1]))"])
                .arg(&trace),
        ));
    }
    let (ours, theirs) = (median(&mut syncguard), median(&mut json_load));
    println!("syncguard check: median {ours:.3} s");
    println!("python json.load: median {theirs:.3} s");
    println!("ratio: {:.2}x (goal < 0.35x)", ours / theirs);
}

/// Seconds one run of `command` took; its output is discarded, its failure to start is not.
fn time(command: &mut Command) -> f64 {
    let start = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the command starts");
    // `check` exits 1 on findings; anything past that is a crash.
    assert!(status.code().is_some_and(|code| code <= 1), "{command:?}: {status}");
    start.elapsed().as_secs_f64()
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Write a Kineto trace of about `events` events; returns its size.
fn write_trace(path: &Path, events: usize) -> usize {
    let mut text = String::with_capacity(events * 260);
    text.push_str("{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0}, \"traceEvents\": [\n");
    // Ten events per step.
    let steps = events.div_ceil(10);
    let mut first = true;
    let mut event = |text: &mut String, body: std::fmt::Arguments| {
        if !first {
            text.push_str(",\n");
        }
        first = false;
        let _ = text.write_fmt(body);
    };
    for step in 0..steps {
        let ts = step as f64 * 10.0;
        let c = step * 4;
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 1, \"tid\": 1, \"ts\": {ts:.3}, \"dur\": 5, \"args\": {{\"External id\": {c}, \"Record function id\": {c}, \"Sequence number\": {step}}}}}"
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": {:.3}, \"dur\": 2, \"args\": {{\"External id\": {c}, \"cbid\": 211, \"correlation\": {c}}}}}",
                ts + 1.0
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float> >(int)\", \"pid\": 0, \"tid\": 7, \"ts\": {:.3}, \"dur\": 3, \"args\": {{\"External id\": {c}, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": {c}, \"registers per thread\": 16, \"shared memory\": 0, \"grid\": [128, 1, 1], \"block\": [128, 1, 1]}}}}",
                ts + 2.0
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"f\", \"id\": {c}, \"pid\": 0, \"tid\": 7, \"ts\": {:.3}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}}",
                ts + 2.0
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"pid\": 1, \"tid\": 1, \"ts\": {:.3}, \"dur\": 1, \"args\": {{\"cbid\": 135, \"correlation\": {}}}}}",
                ts + 4.0,
                c + 1
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cuda_event\", \"name\": \"cudaEvent\", \"pid\": 0, \"tid\": 7, \"ts\": {:.3}, \"dur\": 0, \"args\": {{\"event_id\": {}, \"stream\": 7, \"correlation\": {}, \"device\": 0}}}}",
                ts + 4.5,
                step % 64,
                c + 1
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamWaitEvent\", \"pid\": 1, \"tid\": 1, \"ts\": {:.3}, \"dur\": 1, \"args\": {{\"cbid\": 147, \"correlation\": {}}}}}",
                ts + 5.0,
                c + 2
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", \"pid\": 0, \"tid\": 20, \"ts\": {:.3}, \"dur\": 0, \"args\": {{\"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": {}, \"wait_on_cuda_event_id\": {}, \"stream\": 20, \"correlation\": {}, \"device\": 0}}}}",
                ts + 5.5,
                c + 1,
                step % 64,
                c + 2
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 1, \"tid\": 1, \"ts\": {:.3}, \"dur\": 2, \"args\": {{\"cbid\": 41, \"correlation\": {}}}}}",
                ts + 6.0,
                c + 3
            ),
        );
        event(
            &mut text,
            format_args!(
                "{{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> Device)\", \"pid\": 0, \"tid\": 20, \"ts\": {:.3}, \"dur\": 1, \"args\": {{\"device\": 0, \"stream\": 20, \"correlation\": {}, \"bytes\": 4096}}}}",
                ts + 7.0,
                c + 3
            ),
        );
    }
    text.push_str("\n]}\n");
    std::fs::write(path, &text).expect("the trace is written");
    text.len()
}
