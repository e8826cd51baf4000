//! Analysis throughput: a generated, correct program over 64 streams (kernels with
//! memory footprints, record/wait in a ring), from 10k to 1M ops. Each size runs in a
//! child process so that its peak memory is its own.
//!
//! Run: `cargo bench -p syncguard-analyzer --bench analyze`

mod peak_memory;

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

use syncguard_analyzer::model::{
    BufferInfo, EventCreator, EventInfo, EventSemantics, Expr, KernelLaunch, MemRange, MemorySpace, ObjId, Object,
    ObjectKind, Op, OpKind, Program, Stmt,
};
use syncguard_analyzer::source::{FileId, Span};
use syncguard_analyzer::{Sources, check_sync_bytes, exec, hb};

const STREAMS: usize = 64;
const SIZES: [usize; 4] = [10_000, 100_000, 300_000, 1_000_000];

/// A flat program of about `ops` calls: each round, every stream reads its
/// predecessor's buffer and writes its own, then signals its successor.
fn generate(ops: usize) -> String {
    let mut src = String::with_capacity(ops * 48);
    for i in 0..STREAMS {
        writeln!(src, "let s{i} = aclrtCreateStream();").unwrap();
        writeln!(src, "let e{i} = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC);").unwrap();
        writeln!(src, "let b{i} = aclrtMalloc(64 KiB, ACL_MEM_MALLOC_HUGE_FIRST);").unwrap();
    }
    let rounds = ops.saturating_sub(3 * STREAMS) / (3 * STREAMS);
    for round in 0..rounds {
        let slice = (round % 16) * 4096;
        for i in 0..STREAMS {
            let (prev, next) = ((i + STREAMS - 1) % STREAMS, (i + 1) % STREAMS);
            writeln!(
                src,
                "kernel(s{i}, \"k\", reads: [b{prev}[{slice}..{}]], writes: [b{i}[{slice}..{}]]);",
                slice + 4096,
                slice + 4096
            )
            .unwrap();
            writeln!(src, "aclrtRecordEvent(e{i}, s{i});").unwrap();
            writeln!(src, "aclrtStreamWaitEvent(s{next}, e{i});").unwrap();
        }
    }
    writeln!(src, "aclrtSynchronizeDevice();").unwrap();
    for i in 0..STREAMS {
        writeln!(src, "aclrtDestroyEvent(e{i});").unwrap();
    }
    src
}

/// The same workload built directly as a Program, so that the analysis is measured
/// without the parser's memory.
fn generate_program(ops: usize) -> Program {
    let span = || Span::new(FileId(0), 0..0);
    let mut program = Program::new(span());
    let object = |program: &mut Program, name: String, kind: ObjectKind| {
        program.objects.push(Object {
            name,
            written: None,
            kind,
            span: span(),
            created_by: Some("bench".into()),
            array: None,
            ipc_key: None,
        });
        ObjId(program.objects.len() as u32 - 1)
    };
    let op = |kind: OpKind| {
        Stmt::Op(Op {
            api: "bench",
            kind,
            span: span(),
        })
    };
    let mut body = Vec::with_capacity(ops);
    let mut streams = Vec::new();
    let mut events = Vec::new();
    let mut buffers = Vec::new();
    for i in 0..STREAMS {
        let event = EventInfo {
            semantics: EventSemantics::Capture,
            creator: EventCreator::AclExWithFlag,
            flags: 1,
        };
        let buffer = BufferInfo {
            space: MemorySpace::Device,
            size: Expr::Int(64 << 10),
        };
        streams.push(object(
            &mut program,
            format!("s{i}"),
            ObjectKind::Stream(syncguard_analyzer::model::StreamSync::Independent),
        ));
        events.push(object(&mut program, format!("e{i}"), ObjectKind::Event(event)));
        buffers.push(object(&mut program, format!("b{i}"), ObjectKind::Buffer(buffer)));
        for id in [streams[i], events[i], buffers[i]] {
            body.push(op(OpKind::Create(id)));
        }
    }
    let range = |buffer: ObjId, start: i64| MemRange {
        buffer,
        offset: Expr::Int(start),
        len: Expr::Int(4096),
        span: span(),
    };
    let rounds = ops.saturating_sub(3 * STREAMS) / (3 * STREAMS);
    for round in 0..rounds {
        let slice = (round % 16) as i64 * 4096;
        for i in 0..STREAMS {
            let (prev, next) = ((i + STREAMS - 1) % STREAMS, (i + 1) % STREAMS);
            body.push(op(OpKind::Kernel {
                stream: streams[i],
                launch: Box::new(KernelLaunch {
                    name: "k".into(),
                    reads: vec![range(buffers[prev], slice)],
                    writes: vec![range(buffers[i], slice)],
                    cores: None,
                }),
            }));
            body.push(op(OpKind::EventRecord {
                event: events[i],
                stream: streams[i],
            }));
            body.push(op(OpKind::EventWait {
                stream: streams[next],
                event: events[i],
                timeout: None,
            }));
        }
    }
    body.push(op(OpKind::DeviceSynchronize));
    body.extend(events.iter().map(|&e| op(OpKind::Destroy(e))));
    program.threads[0].body = body;
    program
}

/// One size, in this process: prints a result line. `analysis` runs only the analysis
/// of a directly built Program; otherwise only the `.sync` front end.
fn measure(ops: usize, analysis: bool) {
    if !analysis {
        let src = generate(ops);
        let start = Instant::now();
        let mut sources = Sources::default();
        let checked = check_sync_bytes(&mut sources, "bench.sync", src.as_bytes());
        let total = start.elapsed();
        assert!(
            checked.diagnostics.is_empty(),
            "correct program: {:?}",
            checked.diagnostics.first()
        );
        println!(
            "| `.sync` parse + lower + analyze | {:>9} | {:>7.3} | {:>10.0} |",
            checked.program.op_count(),
            total.as_secs_f64(),
            peak_memory::peak_rss_mib()
        );
        return;
    }
    let program = generate_program(ops);
    let start = Instant::now();
    let execution = exec::instantiate(&program, Vec::new());
    let instantiate = start.elapsed();
    let start = Instant::now();
    let graph = hb::HappensBefore::build(&execution).expect("the clocks fit");
    let happens_before = start.elapsed();
    let (nodes, agents) = (execution.nodes.len(), execution.agents.len());
    drop(graph);
    drop(execution);
    let start = Instant::now();
    let diagnostics = syncguard_analyzer::analyze(&program);
    let analyze = start.elapsed();
    assert!(diagnostics.is_empty(), "correct program: {:?}", diagnostics.first());
    println!(
        "| {nodes:>9} | {agents:>6} | {:>13.3} | {:>16.3} | {:>9.3} | {:>8.0} |",
        instantiate.as_secs_f64(),
        happens_before.as_secs_f64(),
        analyze.as_secs_f64(),
        peak_memory::peak_rss_mib()
    );
}

fn run_children(mode: &str) {
    let exe = std::env::current_exe().expect("the bench binary");
    for size in SIZES {
        let status = Command::new(&exe)
            .env("SYNCGUARD_BENCH_SIZE", size.to_string())
            .env("SYNCGUARD_BENCH_MODE", mode)
            .status()
            .expect("the bench re-runs itself");
        assert!(status.success());
    }
}

fn main() {
    if let Ok(size) = std::env::var("SYNCGUARD_BENCH_SIZE") {
        let analysis = std::env::var("SYNCGUARD_BENCH_MODE").as_deref() == Ok("analysis");
        measure(size.parse().expect("a size"), analysis);
        return;
    }
    println!("Analysis of a generated Program ({STREAMS} streams + 1 host thread + the default stream):\n");
    println!("| ops       | agents | instantiate s | happens-before s | analyze s | peak MiB |");
    println!("|-----------|--------|---------------|------------------|-----------|----------|");
    run_children("analysis");
    println!("\nThe whole `.sync` path on the same workload written as text:\n");
    println!("| stage                           | ops       | total s | peak MiB   |");
    println!("|---------------------------------|-----------|---------|------------|");
    run_children("frontend");
}
