//! The dump readers: pickle (a tiny writer here makes what PyTorch's TorchScript
//! pickler writes; python3, where present, makes what Python's `pickle` writes) and
//! JSON, their bounds on bad input, and the comparison of rank dumps.

use syncguard_flight_recorder::dump::{self, State};
use syncguard_flight_recorder::{DumpInput, Format, check_run, pickle, sniff};
use syncguard_model::Sources;

/// A value to pickle.
enum P {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<P>),
    Tuple(Vec<P>),
    Dict(Vec<(P, P)>),
}

fn s(text: &str) -> P {
    P::Str(text.to_string())
}

/// Protocol 2 as `torch::jit::Pickler` writes it: memoized strings, MARK/SETITEMS,
/// MARK/APPENDS, MARK/TUPLE.
fn pickled(value: &P) -> Vec<u8> {
    fn put(value: &P, out: &mut Vec<u8>, memo: &mut u32) {
        match value {
            P::None => out.push(b'N'),
            P::Bool(b) => out.push(if *b { 0x88 } else { 0x89 }),
            P::Int(i) if (0..256).contains(i) => out.extend([b'K', *i as u8]),
            P::Int(i) if i32::try_from(*i).is_ok() => {
                out.push(b'J');
                out.extend((*i as i32).to_le_bytes());
            }
            P::Int(i) => {
                out.extend([0x8a, 8]);
                out.extend(i.to_le_bytes());
            }
            P::Float(f) => {
                out.push(b'G');
                out.extend(f.to_be_bytes());
            }
            P::Str(text) => {
                out.push(b'X');
                out.extend((text.len() as u32).to_le_bytes());
                out.extend(text.as_bytes());
                out.extend([b'q', (*memo % 256) as u8]);
                *memo += 1;
            }
            P::List(items) => {
                out.extend([b']', b'(']);
                items.iter().for_each(|item| put(item, out, memo));
                out.push(b'e');
            }
            P::Tuple(items) => {
                out.push(b'(');
                items.iter().for_each(|item| put(item, out, memo));
                out.push(b't');
            }
            P::Dict(pairs) => {
                out.push(b'}');
                if !pairs.is_empty() {
                    out.push(b'(');
                    for (k, v) in pairs {
                        put(k, out, memo);
                        put(v, out, memo);
                    }
                    out.push(b'u');
                }
            }
        }
    }
    let mut out = vec![0x80, 2];
    put(value, &mut out, &mut 0);
    out.push(b'.');
    out
}

struct E<'a> {
    record: i64,
    seq: i64,
    name: &'a str,
    state: &'a str,
    size: i64,
    dtype: &'a str,
    line: i64,
}

fn e(record: i64, seq: i64, name: &str) -> E<'_> {
    E {
        record,
        seq,
        name,
        state: "completed",
        size: 1024,
        dtype: "Float",
        line: 40,
    }
}

fn pickle_dump(ranks: &str, entries: &[E]) -> Vec<u8> {
    let entry = |x: &E| {
        P::Dict(vec![
            (
                s("frames"),
                P::List(vec![
                    P::Dict(vec![
                        (s("name"), s("all_reduce")),
                        (
                            s("filename"),
                            s("/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py"),
                        ),
                        (s("line"), P::Int(2501)),
                    ]),
                    P::Dict(vec![
                        (s("name"), s("train_step")),
                        (s("filename"), s("train.py")),
                        (s("line"), P::Int(x.line)),
                    ]),
                ]),
            ),
            (s("record_id"), P::Int(x.record)),
            (s("pg_id"), P::Int(0)),
            (s("process_group"), P::Tuple(vec![s("0"), s("default_pg")])),
            (s("collective_seq_id"), P::Int(x.seq)),
            (s("p2p_seq_id"), P::Int(0)),
            (s("op_id"), P::Int(x.seq)),
            (s("profiling_name"), s(x.name)),
            (s("time_created_ns"), P::Int(1_700_000_000_000_000_000 + x.record)),
            (s("duration_ms"), P::Float(0.25)),
            (s("input_sizes"), P::List(vec![P::List(vec![P::Int(x.size)])])),
            (s("input_dtypes"), P::List(vec![s(x.dtype)])),
            (s("output_sizes"), P::List(vec![P::List(vec![P::Int(x.size)])])),
            (s("output_dtypes"), P::List(vec![s(x.dtype)])),
            (s("state"), s(x.state)),
            (s("time_discovered_started_ns"), P::Int(1)),
            (
                s("time_discovered_completed_ns"),
                if x.state == "completed" { P::Int(2) } else { P::None },
            ),
            (s("retired"), P::Bool(x.state == "completed")),
            (s("timeout_ms"), P::Int(600_000)),
            (s("is_p2p"), P::Bool(false)),
        ])
    };
    pickled(&P::Dict(vec![
        (s("version"), s("2.10")),
        (
            s("pg_config"),
            P::Dict(vec![(
                s("0"),
                P::Dict(vec![
                    (s("name"), s("0")),
                    (s("desc"), s("default_pg")),
                    (s("ranks"), s(ranks)),
                ]),
            )]),
        ),
        (s("comm_lib_version"), s("2.21.5")),
        (s("pg_status"), P::Dict(vec![])),
        (s("entries"), P::List(entries.iter().map(entry).collect())),
    ]))
}

fn run(files: Vec<(&str, Vec<u8>)>) -> Vec<syncguard_model::Diagnostic> {
    let mut sources = Sources::default();
    let inputs = files
        .into_iter()
        .map(|(display, bytes)| DumpInput {
            display: display.to_string(),
            bytes,
        })
        .collect();
    check_run(&mut sources, inputs)
}

#[test]
fn a_torchscript_pickle_dump_is_read() {
    let bytes = pickle_dump("[0, 1]", &[e(0, 1, "nccl:all_reduce"), e(1, 2, "nccl:broadcast")]);
    assert_eq!(sniff(&bytes), Some(Format::Pickle));
    let dump = dump::read(&bytes).unwrap();
    assert_eq!(dump.version, "2.10");
    assert_eq!(dump.groups[0].ranks, Some(vec![0, 1]));
    assert_eq!(dump.groups[0].desc, "default_pg");
    assert_eq!(dump.entries.len(), 2);
    let second = &dump.entries[1];
    assert_eq!((second.record_id, second.collective_seq_id), (1, 2));
    assert_eq!(second.profiling_name, "nccl:broadcast");
    assert_eq!(second.op(), "broadcast");
    assert_eq!((second.pg_name.as_str(), second.pg_desc.as_str()), ("0", "default_pg"));
    assert_eq!(second.input_sizes, vec![vec![1024]]);
    assert_eq!(second.state, State::Completed);
    assert_eq!(second.frames[1].filename, "train.py");
}

#[test]
fn a_desync_in_pickle_dumps_names_the_culprit_and_its_python_line() {
    let agree = |line| {
        let mut x = e(1, 2, "nccl:all_reduce");
        x.state = "started";
        x.line = line;
        x
    };
    let mut odd = e(1, 2, "nccl:broadcast");
    odd.line = 44;
    let files = vec![
        (
            "dumps/nccl_trace_rank_0",
            pickle_dump("[0, 1, 2]", &[e(0, 1, "nccl:all_reduce"), agree(40)]),
        ),
        (
            "dumps/nccl_trace_rank_1",
            pickle_dump("[0, 1, 2]", &[e(0, 1, "nccl:all_reduce"), odd]),
        ),
        (
            "dumps/nccl_trace_rank_2",
            pickle_dump("[0, 1, 2]", &[e(0, 1, "nccl:all_reduce"), agree(40)]),
        ),
    ];
    let diagnostics = run(files);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    assert_eq!(d.code, "SG901");
    assert!(
        d.message
            .contains("collective #2 of process group `0` (default_pg) desyncs: rank 1 ran nccl:broadcast where ranks 0, 2 ran nccl:all_reduce"),
        "{}",
        d.message
    );
    assert!(d.label.contains("record 1"), "{}", d.label);
    assert!(
        d.notes
            .iter()
            .any(|n| n == "rank 1 called it (nccl:broadcast) at train.py:44 in train_step"),
        "{:?}",
        d.notes
    );
    assert_eq!(d.related.len(), 2);
}

#[test]
fn a_pickle_from_python_protocol_5_is_read() {
    // Python's own pickler: FRAME, MEMOIZE, SHORT_BINUNICODE, shared frames (BINGET).
    let script = r#"
import pickle, sys
frame = {"name": "step", "filename": "train.py", "line": 7}
entry = lambda rid, seq, name: {"record_id": rid, "pg_id": 0, "process_group": ("0", "default_pg"),
    "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq, "profiling_name": name,
    "time_created_ns": 1 << 62, "input_sizes": [[8, 128]], "input_dtypes": ["Float"],
    "output_sizes": [[8, 128]], "output_dtypes": ["Float"], "state": "scheduled",
    "time_discovered_started_ns": None, "time_discovered_completed_ns": None, "retired": False,
    "timeout_ms": 600000, "is_p2p": False, "frames": [frame, frame], "duration_ms": -1.5}
dump = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0]"}},
    "pg_status": {}, "entries": [entry(0, 1, "nccl:all_reduce"), entry(1, 2, "nccl:all_gather")]}
sys.stdout.buffer.write(pickle.dumps(dump, protocol=int(sys.argv[1])))
"#;
    for protocol in ["2", "4", "5"] {
        let Ok(output) = std::process::Command::new("python3")
            .args(["-c", script, protocol])
            .output()
        else {
            eprintln!("python3 is not installed: skipped");
            return;
        };
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let dump = dump::read(&output.stdout).unwrap_or_else(|e| panic!("protocol {protocol}: {e}"));
        assert_eq!(dump.entries.len(), 2);
        assert_eq!(dump.entries[1].profiling_name, "nccl:all_gather");
        assert_eq!(dump.entries[1].input_sizes, vec![vec![8, 128]]);
        assert_eq!(dump.entries[1].frames.len(), 2);
        assert_eq!(dump.entries[1].frames[1].line, 7);
        assert_eq!(dump.entries[0].state, State::Scheduled);
    }
}

#[test]
fn json_entries_keep_their_byte_ranges() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../analyzer/tests/fixtures/SG901/fail_desync/nccl_trace_rank_2.json"
    ))
    .unwrap();
    let dump = dump::read(text.as_bytes()).unwrap();
    assert_eq!(dump.entries.len(), 3);
    for entry in &dump.entries {
        let object = &text[entry.span.clone()];
        assert!(object.starts_with('{') && object.ends_with('}'));
        assert!(
            object.contains(&format!("\"record_id\": {}", entry.record_id)),
            "{object}"
        );
    }
}

#[test]
fn every_truncation_of_a_dump_is_an_error_never_a_crash() {
    let pickle = pickle_dump("[0, 1]", &[e(0, 1, "nccl:all_reduce"), e(1, 2, "nccl:all_reduce")]);
    let json = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../analyzer/tests/fixtures/SG905/fail_stuck/nccl_trace_rank_2.json"
    ))
    .unwrap();
    for bytes in [&pickle, &json] {
        // A JSON dump ends with a newline: without it, it is whole.
        let whole = bytes.trim_ascii_end().len();
        for cut in 0..whole {
            assert!(dump::read(&bytes[..cut]).is_err(), "a dump cut at {cut} was read");
            // And checking it says so.
            let diagnostics = run(vec![("nccl_trace_rank_0", bytes[..cut].to_vec())]);
            assert!(diagnostics.iter().all(|d| d.code == "SG900"));
        }
        assert!(dump::read(bytes).is_ok());
    }
}

#[test]
fn hostile_pickles_are_refused_within_bounds() {
    // Nested lists past the depth limit.
    let mut deep = vec![0x80, 2];
    deep.extend(std::iter::repeat_n(b']', 10_000));
    deep.extend(std::iter::repeat_n(b'a', 9_999));
    deep.push(b'.');
    assert!(pickle::read(&deep).unwrap_err().contains("deeper"));
    // A list that contains itself.
    let cycle = [0x80, 2, b']', b'q', 0, b'h', 0, b'a', b'.'];
    assert!(pickle::read(&cycle).is_err());
    // "Billion laughs": each list holds the previous one ten times, 30 levels.
    let mut laughs = vec![0x80, 2, b'N', b'q', 0];
    for level in 0..30u8 {
        laughs.extend([b']', b'(']);
        laughs.extend(std::iter::repeat_n([b'h', level], 10).flatten());
        laughs.extend([b'e', b'q', level + 1]);
    }
    laughs.push(b'.');
    let started = std::time::Instant::now();
    assert!(pickle::read(&laughs).unwrap_err().contains("more than"));
    assert!(started.elapsed().as_secs() < 20);
    // Opcodes no dump uses, stack underflow, a memo never stored, a huge length.
    for bad in [
        &[
            0x80, 2, b'c', b'o', b's', b'\n', b's', b'y', b's', b't', b'e', b'm', b'\n', b'.',
        ][..],
        &[0x80, 2, b'a', b'.'],
        &[0x80, 2, b'h', 9, b'.'],
        &[0x80, 5, 0x8d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, b'.'],
        &[0x80, 2, b'i', b'.'],
        &[0x80, 9, b'N', b'.'],
    ] {
        let _ = pickle::read(bad);
        assert!(dump::read(bad).is_err());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    #[test]
    fn garbage_never_crashes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
        let mut pickle = vec![0x80, 2];
        pickle.extend(&bytes);
        let _ = dump::read(&pickle);
        let _ = dump::read(&bytes);
        let _ = dump::entry_spans(&bytes);
        let _ = run(vec![("nccl_trace_rank_0", pickle), ("nccl_trace_rank_1", bytes)]);
    }

    #[test]
    fn mutated_dumps_never_crash(flips in proptest::collection::vec((0usize..4000, proptest::prelude::any::<u8>()), 1..8)) {
        let mut pickle = pickle_dump("[0, 1]", &[e(0, 1, "nccl:all_reduce"), e(1, 2, "nccl:all_reduce")]);
        for (at, byte) in flips {
            let len = pickle.len();
            pickle[at % len] = byte;
        }
        let _ = run(vec![("nccl_trace_rank_0", pickle.clone()), ("nccl_trace_rank_1", pickle)]);
    }
}

#[test]
fn the_rank_is_the_file_name_s_last_number() {
    assert_eq!(dump::rank_from_file_name("nccl_trace_rank_12"), Some(12));
    assert_eq!(dump::rank_from_file_name("rank_3.json"), Some(3));
    assert_eq!(dump::rank_from_file_name("trace.pkl"), None);
}

#[test]
fn one_dump_alone_says_what_it_was_still_in() {
    let mut stuck = e(2, 3, "nccl:all_reduce");
    stuck.state = "started";
    let mut later = e(3, 4, "nccl:all_reduce");
    later.state = "scheduled";
    let diagnostics = run(vec![(
        "nccl_trace_rank_5",
        pickle_dump(
            "[0, 1, 2, 3, 4, 5]",
            &[e(0, 1, "nccl:all_reduce"), e(1, 2, "nccl:all_reduce"), stuck, later],
        ),
    )]);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    assert_eq!((d.code, d.severity), ("SG905", syncguard_model::Severity::Warning));
    assert!(d.message.contains("rank 5 was still in collective #3"), "{}", d.message);
    assert!(d.notes.iter().any(|n| n.contains("cannot tell which peer")));
}

#[test]
fn sizes_that_differ_name_the_rank() {
    let mut big = e(0, 1, "nccl:all_reduce");
    big.size = 2048;
    let mut bf16 = e(1, 2, "nccl:all_reduce");
    bf16.dtype = "BFloat16";
    let diagnostics = run(vec![
        (
            "nccl_trace_rank_0",
            pickle_dump("[0, 1, 2]", &[e(0, 1, "nccl:all_reduce"), e(1, 2, "nccl:all_reduce")]),
        ),
        (
            "nccl_trace_rank_1",
            pickle_dump("[0, 1, 2]", &[e(0, 1, "nccl:all_reduce"), e(1, 2, "nccl:all_reduce")]),
        ),
        ("nccl_trace_rank_2", pickle_dump("[0, 1, 2]", &[big, bf16])),
    ]);
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["SG902", "SG903"], "{diagnostics:#?}");
    assert!(
        diagnostics[0]
            .message
            .contains("on rank 2: input [2048] output [2048] where rank 0 has input [1024]")
    );
    assert!(
        diagnostics[1]
            .message
            .contains("on rank 2: BFloat16 → BFloat16 where rank 0 has Float → Float")
    );
}

#[test]
fn ranks_whose_buffers_wrapped_are_named_in_one_note() {
    // Six ranks whose ring buffers lost their first records; rank 4 desyncs. The
    // finding names the wrapped ranks in one note, not one note each.
    let ranks = "[0, 1, 2, 3, 4, 5]";
    let dump = |rank: usize| {
        let name = if rank == 4 { "nccl:broadcast" } else { "nccl:all_reduce" };
        let first = 5 + rank as i64;
        pickle_dump(ranks, &[e(first, 6, "nccl:all_reduce"), e(first + 1, 7, name)])
    };
    let names: Vec<String> = (0..6).map(|rank| format!("dumps/nccl_trace_rank_{rank}")).collect();
    let diagnostics = run(names
        .iter()
        .enumerate()
        .map(|(rank, name)| (name.as_str(), dump(rank)))
        .collect());
    let desync = diagnostics.iter().find(|d| d.code == "SG901").expect("SG901");
    let wrap_notes: Vec<&String> = desync.notes.iter().filter(|n| n.contains("wrapped")).collect();
    assert_eq!(
        wrap_notes,
        [
            "the ring buffers of ranks 0-5 wrapped (their dumps start at records 5 to 10): what they ran before is unknown, and is not compared (TORCH_NCCL_TRACE_BUFFER_SIZE keeps more)"
        ],
        "{:#?}",
        desync.notes
    );
}
