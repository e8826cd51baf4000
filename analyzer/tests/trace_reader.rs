//! The trace reader never crashes and never loses its place: arbitrary bytes and
//! arbitrary JSON values per line always yield diagnostics that name a line of the
//! file; and converting a trace to `.sync` keeps what checking it reports.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use syncguard_analyzer::{Overrides, Sources, check_sync_bytes, check_trace_reader, convert_trace};

fn check(bytes: &[u8]) -> (Sources, Vec<syncguard_analyzer::Diagnostic>) {
    let mut sources = Sources::default();
    let checked = check_trace_reader(&mut sources, "t.jsonl", bytes, None, &Overrides::default());
    (sources, checked.diagnostics)
}

/// Every diagnostic points at a line that exists.
fn assert_located(bytes: &[u8]) {
    let (sources, diagnostics) = check(bytes);
    let lines = bytes.split(|&b| b == b'\n').count().max(1);
    for diagnostic in &diagnostics {
        let file = sources.get(diagnostic.primary.file);
        let (line, column) = file.line_col(diagnostic.primary.range.start);
        assert!(
            line >= 1 && line <= lines,
            "{diagnostic:?} is on line {line} of {lines}"
        );
        assert!(column >= 1);
    }
}

/// Keys and values of real trace lines, so that generated lines reach the lowering.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0i64..8).prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "s1",
            "ev1",
            "0x7f00",
            "ACL_EVENT_SYNC",
            "t0",
            "ch0",
            "c0",
            "0",
            "NULL",
            "group",
            "b0",
        ])
        .prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "rank",
        "thread",
        "api",
        "args",
        "ret",
        "ts",
        "loc",
        "event",
        "stream",
        "flag",
        "buf",
        "off",
        "len",
        "comm",
        "threads",
        "channels",
        "channelDescs",
        "remoteRank",
        "notifyNum",
        "thread",
        "channel",
        "dst",
        "src",
        "syncguard_trace",
        "world_size",
        "type",
        "attrs",
        "group_name",
        "stream_id",
    ])
    .prop_map(str::to_string)
}

fn api() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        "aclrtCreateStream",
        "aclrtCreateEventWithFlag",
        "aclrtRecordEvent",
        "aclrtStreamWaitEvent",
        "aclrtResetEvent",
        "aclrtDestroyEvent",
        "aclrtMalloc",
        "kernel",
        "host_read",
        "HcclCommInitRootInfo",
        "HcclThreadAcquire",
        "HcclChannelAcquire",
        "HcommChannelNotifyRecordOnThread",
        "HcommWriteOnThread",
        "ge.op",
        "KernelLaunchInfo::CreateHcomWaitTask",
        "cudaEventRecord",
        "acl.rt.record_event",
        "AscendC::DataCopy",
        "no_such_api",
    ])
    .prop_map(Value::from)
}

/// A line that is an object with a real `api`, a small rank and arbitrary args.
fn call_line() -> impl Strategy<Value = Value> {
    (api(), 0i64..3, prop::collection::vec((key(), value()), 0..6)).prop_map(|(api, rank, args)| {
        let args: Map<String, Value> = args.into_iter().collect();
        json!({"rank": rank, "thread": 0, "api": api, "args": args})
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        assert_located(&bytes);
    }

    #[test]
    fn arbitrary_json_lines_never_panic(lines in prop::collection::vec(prop_oneof![value(), call_line()], 0..12)) {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert_located(text.as_bytes());
    }

    #[test]
    fn calls_with_arbitrary_arguments_never_panic(lines in prop::collection::vec(call_line(), 1..16)) {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert_located(text.as_bytes());
    }
}

#[test]
fn a_broken_line_is_reported_and_the_rest_is_checked() {
    let trace = concat!(
        r#"{"api": "aclrtCreateStream", "args": {"stream": "s1"}}"#,
        "\n{not json\n",
        r#"{"api": "aclrtCreateEventWithFlag", "args": {"event": "e", "flag": "ACL_EVENT_SYNC"}}"#,
        "\n",
        r#"{"api": "aclrtStreamWaitEvent", "args": {"stream": "s1", "event": "e"}}"#,
        "\n",
    );
    let (sources, diagnostics) = check(trace.as_bytes());
    let found: Vec<(&str, usize)> = diagnostics
        .iter()
        .map(|d| (d.code, sources.get(d.primary.file).line_col(d.primary.range.start).0))
        .collect();
    assert!(found.contains(&("SG002", 2)), "{found:?}");
    assert!(
        found.iter().any(|(code, line)| *code == "SG104" && *line == 4),
        "{found:?}"
    );
}

#[test]
fn invalid_utf8_is_reported_at_the_byte() {
    let (sources, diagnostics) = check(b"{\"api\": \"aclrtCreateStream\", \"args\": {\"stream\": \"s\xff\"}}\n");
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].code, "SG002");
    assert_eq!(
        sources
            .get(diagnostics[0].primary.file)
            .line_col(diagnostics[0].primary.range.start),
        (1, 51)
    );
}

#[test]
fn an_unknown_api_is_one_warning_per_name() {
    let line = r#"{"api": "aclrtFrobnicate", "args": {}}"#;
    let (_, diagnostics) = check(format!("{line}\n{line}\n{line}\n").as_bytes());
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].severity, syncguard_analyzer::Severity::Warning);
}

#[test]
fn a_failed_call_has_no_effect() {
    let trace = concat!(
        r#"{"api": "aclrtCreateEventWithFlag", "args": {"event": "e", "flag": "ACL_EVENT_SYNC"}}"#,
        "\n",
        r#"{"api": "aclrtRecordEvent", "args": {"event": "e", "stream": null}, "ret": 507011}"#,
        "\n",
        r#"{"api": "aclrtStreamWaitEvent", "args": {"stream": 0, "event": "e"}}"#,
        "\n",
        r#"{"api": "aclrtDestroyEvent", "args": {"event": "e"}}"#,
        "\n",
    );
    let (_, diagnostics) = check(trace.as_bytes());
    let codes: Vec<&str> = diagnostics.iter().flat_map(|d| d.codes()).collect();
    assert_eq!(codes, ["SG104"], "the failed record must not satisfy the wait");
}

#[test]
fn pointers_inside_a_buffer_resolve_to_it() {
    // Two kernels on unordered streams touch bytes 0x100.. of one allocation, one
    // through its base handle and an offset, one through a raw address.
    let trace = concat!(
        r#"{"api": "aclrtMalloc", "args": {"devPtr": "0x1000", "size": 4096, "policy": "ACL_MEM_MALLOC_HUGE_FIRST"}}"#,
        "\n",
        r#"{"api": "kernel", "args": {"stream": "s1", "name": "a", "writes": [{"buf": "0x1000", "off": 256, "len": 16}]}}"#,
        "\n",
        r#"{"api": "kernel", "args": {"stream": "s2", "name": "b", "reads": [{"buf": "0x1108", "len": 4}]}}"#,
        "\n",
    );
    let (_, diagnostics) = check(trace.as_bytes());
    let codes: Vec<&str> = diagnostics.iter().flat_map(|d| d.codes()).collect();
    assert_eq!(codes, ["SG601"]);
}

/// Codes and messages, as a multiset: spans differ between a trace and its `.sync`.
fn findings(diagnostics: &[syncguard_analyzer::Diagnostic]) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for d in diagnostics {
        *out.entry((d.code.to_string(), d.message.clone())).or_insert(0) += 1;
    }
    out
}

fn trace_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [root.join("tests/fixtures"), root.join("../examples")] {
        let mut pending = vec![dir];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn converting_a_trace_keeps_its_findings() {
    let files = trace_files();
    assert!(!files.is_empty(), "no trace fixtures found");
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let (_, from_trace) = check(&bytes);
        if from_trace.iter().any(|d| ["SG002", "SG003", "SG101"].contains(&d.code)) {
            // Lines the reader left out (malformed, or naming a handle no line has
            // created yet) are left out of the conversion too, by design.
            continue;
        }
        let opens_ipc_event = String::from_utf8_lossy(&bytes).contains("aclrtIpcOpenEventHandle");
        if opens_ipc_event && from_trace.iter().any(|d| d.code == "SG104") {
            // The trace shows one process waiting before the other recorded; a program
            // leaves the processes' timing open and takes the documented hand-over
            // (record, then open and wait), so the two differ by design (SYNC.md, IPC).
            continue;
        }
        let converted = convert_trace(&mut Sources::default(), "t.jsonl", &bytes[..], None);
        let checked = check_sync_bytes(&mut Sources::default(), "t.sync", converted.text.as_bytes());
        let mut from_program = findings(&checked.diagnostics);
        let spawns_threads = converted
            .text
            .lines()
            .any(|line| line.trim_start().starts_with("thread ") && line.ends_with('{'));
        if spawns_threads {
            // A trace is one observed run: another host thread's use that came before a
            // destroy was ordered by a join or lock the trace cannot show. The program
            // stands for every run, so it also reports the destroy racing that use.
            from_program.retain(|(code, message), _| {
                !(["SG106", "SG603"].contains(&code.as_str()) && message.contains("can run before"))
            });
        }
        assert_eq!(
            findings(&from_trace),
            from_program,
            "{}: converted program:\n{}",
            path.display(),
            converted.text
        );
    }
}

#[test]
fn a_thread_sees_objects_created_after_it_started() {
    // Thread 2 starts (ts 2) before thread 1 creates the event (ts 3), then waits on it.
    let trace = concat!(
        r#"{"thread": 1, "api": "aclrtCreateStream", "args": {"stream": "s1"}, "ts": 1}"#,
        "\n",
        r#"{"thread": 2, "api": "aclrtSetDevice", "args": {"deviceId": 0}, "ts": 2}"#,
        "\n",
        r#"{"thread": 1, "api": "aclrtCreateEventWithFlag", "args": {"event": "e", "flag": "ACL_EVENT_SYNC"}, "ts": 3}"#,
        "\n",
        r#"{"thread": 1, "api": "aclrtRecordEvent", "args": {"event": "e", "stream": "s1"}, "ts": 4}"#,
        "\n",
        r#"{"thread": 2, "api": "aclrtSynchronizeEvent", "args": {"event": "e"}, "ts": 5}"#,
        "\n",
        r#"{"thread": 1, "api": "aclrtSynchronizeDevice", "args": {}, "ts": 6}"#,
        "\n",
        r#"{"thread": 1, "api": "aclrtDestroyEvent", "args": {"event": "e"}, "ts": 7}"#,
        "\n",
    );
    let (_, diagnostics) = check(trace.as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn the_hccl_buffer_size_a_trace_reports_bounds_transfers() {
    // HCCL reports a 1 MiB buffer; writing 1 MiB at offset 512 KiB runs past its end.
    let trace = concat!(
        r#"{"api": "HcclCommInitRootInfo", "args": {"nRanks": 1, "rootInfo": "r", "rank": 0, "comm": "c"}}"#,
        "\n",
        r#"{"api": "HcclThreadAcquire", "args": {"comm": "c", "engine": "COMM_ENGINE_AICPU_TS", "threadNum": 1, "notifyNumPerThread": 1, "threads": ["t"]}}"#,
        "\n",
        r#"{"api": "HcclGetHcclBuffer", "args": {"comm": "c", "buffer": "0x1000000", "size": 1048576}}"#,
        "\n",
        r#"{"api": "HcclGetHcclBuffer", "args": {"comm": "c", "buffer": "0x2000000", "size": 1048576}}"#,
        "\n",
        r#"{"api": "HcommLocalCopyOnThread", "args": {"thread": "t", "dst": {"buf": "0x2000000", "off": 524288}, "src": "0x1000000", "len": 1048576}}"#,
        "\n",
        r#"{"api": "HcommThreadSynchronize", "args": {"thread": "t"}}"#,
        "\n",
    );
    let (_, diagnostics) = check(trace.as_bytes());
    let codes: Vec<&str> = diagnostics.iter().flat_map(|d| d.codes()).collect();
    assert_eq!(codes, ["SG306"]);
}

#[test]
fn engines_are_read_by_name_or_by_their_commengine_value() {
    let acquire = |engine: &str| {
        format!(
            "{}\n{}\n",
            r#"{"api": "HcclCommInitRootInfo", "args": {"nRanks": 1, "rootInfo": "r", "rank": 0, "comm": "c"}}"#,
            format_args!(
                r#"{{"api": "HcclThreadAcquire", "args": {{"comm": "c", "engine": {engine}, "threadNum": 1, "notifyNumPerThread": 1, "threads": ["t"]}}}}"#
            )
        )
    };
    for engine in [
        "\"COMM_ENGINE_AICPU\"",
        "\"CommEngine::COMM_ENGINE_AICPU_TS\"",
        "3",
        "5",
    ] {
        let (_, diagnostics) = check(acquire(engine).as_bytes());
        assert!(diagnostics.is_empty(), "{engine}: {diagnostics:?}");
    }
    let (_, diagnostics) = check(acquire("6").as_bytes());
    assert!(
        diagnostics[0].message.contains("an engine (name or 0..=5)"),
        "{diagnostics:?}"
    );
}

#[test]
fn exported_thread_handles_name_the_same_threads() {
    let trace = |exported: &str| {
        [
            r#"{"api": "HcclCommInitRootInfo", "args": {"nRanks": 1, "rootInfo": "r", "rank": 0, "comm": "c"}}"#,
            r#"{"api": "aclrtCreateStream", "args": {"stream": "s"}}"#,
            r#"{"api": "HcclThreadAcquireWithStream", "args": {"comm": "c", "engine": 1, "stream": "s", "notifyNum": 1, "thread": "cpu"}}"#,
            r#"{"api": "HcclThreadAcquire", "args": {"comm": "c", "engine": 3, "threadNum": 1, "notifyNumPerThread": 1, "threads": ["aicpu"]}}"#,
            &format!(
                r#"{{"api": "HcclThreadExportToCommEngine", "args": {{"comm": "c", "threadNum": 1, "threads": ["aicpu"], "dstCommEngine": 1, "exportedThreads": {exported}}}}}"#
            ),
            r#"{"api": "HcommThreadNotifyRecordOnThread", "args": {"thread": "cpu", "dstThread": "0x9001", "dstNotifyIdx": 0}}"#,
            r#"{"api": "HcommThreadNotifyWaitOnThread", "args": {"thread": "aicpu", "notifyIdx": 0, "timeOut": 1}}"#,
            r#"{"api": "aclrtSynchronizeStream", "args": {"stream": "s"}}"#,
        ]
        .join("\n")
    };
    // The record through the exported handle is the one the AICPU thread's wait consumes.
    let (_, diagnostics) = check(trace(r#"["0x9001"]"#).as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    // Without a handle for each thread, the export is reported and its handle unknown.
    let (_, diagnostics) = check(trace("[]").as_bytes());
    let codes: Vec<&str> = diagnostics.iter().flat_map(|d| d.codes()).collect();
    assert!(codes.contains(&"SG002"), "{codes:?}");
    assert!(
        diagnostics[0].message.contains("one handle for each"),
        "{diagnostics:?}"
    );
}

#[test]
fn the_main_thread_sees_objects_a_worker_created() {
    // A worker thread (started first) creates the stream and event the main thread uses.
    let trace = concat!(
        r#"{"thread": "main", "api": "aclrtSetDevice", "args": {"deviceId": 0}, "ts": 1}"#,
        "\n",
        r#"{"thread": "worker", "api": "aclrtCreateStream", "args": {"stream": "s1"}, "ts": 2}"#,
        "\n",
        r#"{"thread": "worker", "api": "aclrtCreateEventWithFlag", "args": {"event": "e", "flag": "ACL_EVENT_SYNC"}, "ts": 3}"#,
        "\n",
        r#"{"thread": "main", "api": "aclrtRecordEvent", "args": {"event": "e", "stream": "s1"}, "ts": 4}"#,
        "\n",
        r#"{"thread": "main", "api": "aclrtSynchronizeEvent", "args": {"event": "e"}, "ts": 5}"#,
        "\n",
        r#"{"thread": "worker", "api": "aclrtDestroyEvent", "args": {"event": "e"}, "ts": 6}"#,
        "\n",
    );
    let (_, diagnostics) = check(trace.as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn objects_in_use_before_the_trace_are_declared_once_before_their_first_use() {
    // A stream created in the trace, and a buffer the trace never allocates.
    let trace = br#"{"api":"aclrtCreateStream","args":{"stream":"s1"}}
{"api":"kernel","args":{"stream":"s1","name":"k","writes":[{"buf":"a","off":0,"len":4096}]}}
{"api":"aclrtSynchronizeStream","args":{"stream":"s1"}}
"#;
    let converted = convert_trace(&mut Sources::default(), "t.jsonl", &trace[..], None);
    let lines: Vec<&str> = converted.text.lines().collect();
    let position = |prefix: &str| lines.iter().position(|line| line.starts_with(prefix));
    assert_eq!(
        lines.iter().filter(|line| line.starts_with("kernel(")).count(),
        1,
        "{}",
        converted.text
    );
    let declared = position("let a = aclrtMalloc(").expect("the buffer is declared");
    assert!(declared < position("kernel(").unwrap(), "{}", converted.text);
    assert!(position("let s1 = aclrtCreateStream()").unwrap() < position("kernel(").unwrap());
    let checked = check_sync_bytes(&mut Sources::default(), "t.sync", converted.text.as_bytes());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
}

/// What a trace line says that the `.sync` reader would reject is reported on that line,
/// so that the converted program always reads back.
fn format_errors(trace: &str) -> Vec<String> {
    let (_, diagnostics) = check(trace.as_bytes());
    let converted = convert_trace(&mut Sources::default(), "t.jsonl", trace.as_bytes(), None);
    let read_back = check_sync_bytes(&mut Sources::default(), "t.sync", converted.text.as_bytes());
    let syntax: Vec<_> = read_back.diagnostics.iter().filter(|d| d.code == "SG001").collect();
    assert!(syntax.is_empty(), "{syntax:#?}\n{}", converted.text);
    diagnostics
        .iter()
        .filter(|d| d.code == "SG002")
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn a_buffer_size_that_is_not_positive_is_reported_and_ignored() {
    let trace = concat!(
        r#"{"api": "HcclCommInitRootInfo", "args": {"nRanks": 1, "rootInfo": "r", "rank": 0, "comm": "c"}}"#,
        "\n",
        r#"{"api": "HcclGetHcclBuffer", "args": {"comm": "c", "buffer": "b", "size": 0}}"#,
        "\n",
    );
    assert_eq!(
        format_errors(trace),
        ["`size` of `HcclGetHcclBuffer` must be a positive byte count"]
    );
}

#[test]
fn a_negative_thread_count_is_reported() {
    let trace = concat!(
        r#"{"api": "HcclCommInitRootInfo", "args": {"nRanks": 1, "rootInfo": "r", "rank": 0, "comm": "c"}}"#,
        "\n",
        r#"{"api": "HcclThreadAcquire", "args": {"comm": "c", "engine": "COMM_ENGINE_AICPU_TS", "threadNum": -11, "notifyNumPerThread": 0, "threads": ["t"]}}"#,
        "\n",
    );
    assert_eq!(
        format_errors(trace),
        ["`threadNum` must be a count (an integer, 0 or more)"]
    );
}

#[test]
fn op_attributes_named_like_keywords_convert() {
    let trace = concat!(
        r#"{"api": "ge.op", "args": {"type": "MatmulAllReduce", "attrs": ["group", "return", "ranks", "attrs"]}}"#,
        "\n",
        r#"{"api": "KernelLaunchInfo::CreateHcomWaitTask", "args": {"group_name": "ranks", "stream_id": 1}}"#,
        "\n",
        r#"{"api": "ge.op", "args": {"type": "Other", "attrs": ["NULL"]}}"#,
        "\n",
    );
    assert_eq!(
        format_errors(trace),
        ["`attrs` must be an array of attribute names (identifiers)"]
    );
}
