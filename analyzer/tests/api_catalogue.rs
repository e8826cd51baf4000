//! The catalogue's later rows (`api.rs`) lower to the ops their documentation describes:
//! each family is checked on a small `.sync` program that is clean and on one that
//! breaks it, against the exact set of codes reported.

use std::collections::BTreeSet;

use syncguard_analyzer::{Overrides, Sources, check_sync_bytes, check_trace_reader};

fn codes(src: &str) -> BTreeSet<&'static str> {
    let mut sources = Sources::default();
    check_sync_bytes(&mut sources, "t.sync", src.as_bytes())
        .diagnostics
        .iter()
        .flat_map(|d| d.codes())
        .collect()
}

fn trace_codes(trace: &str) -> BTreeSet<&'static str> {
    let mut sources = Sources::default();
    check_trace_reader(&mut sources, "t.jsonl", trace.as_bytes(), None, &Overrides::default())
        .diagnostics
        .iter()
        .flat_map(|d| d.codes())
        .collect()
}

fn set(codes: &[&'static str]) -> BTreeSet<&'static str> {
    codes.iter().copied().collect()
}

#[track_caller]
fn assert_codes(src: &str, expected: &[&'static str]) {
    assert_eq!(codes(src), set(expected), "program:\n{src}");
}

/// Rewrites every `token(args)` in `body` as `name(args extra)`.
fn expand(body: &str, token: &str, name: &str, extra: &str) -> String {
    let open = format!("{token}(");
    let mut out = String::new();
    let mut rest = body;
    while let Some(start) = rest.find(&open) {
        let args_start = start + open.len();
        let close = args_start + rest[args_start..].find(')').expect("a closing parenthesis");
        out.push_str(&rest[..start]);
        out.push_str(&format!("{name}({}{extra})", &rest[args_start..close]));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------------------
// ACL events: aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag

/// Record and wait spellings: (record API, its extra arguments, wait API, its extra arguments).
const ACL_FORMS: &[(&str, &str, &str, &str)] = &[
    ("aclrtRecordEvent", "", "aclrtStreamWaitEvent", ""),
    (
        "aclrtRecordEventWithFlag",
        ", 0",
        "aclrtStreamWaitEventWithFlag",
        ", 0, 0",
    ),
    ("aclrtRecordEventWithFlag", "", "aclrtStreamWaitEventWithFlag", ", 1836"),
];

/// `body`, whose `record(event, stream)` and `wait(stream, event)` are written in `form`.
fn acl_event_program(body: &str, form: &(&str, &str, &str, &str)) -> String {
    let (record, record_extra, wait, wait_extra) = *form;
    let body = expand(body, "record", record, record_extra);
    let body = expand(&body, "wait", wait, wait_extra);
    format!(
        "let s1 = aclrtCreateStream();
         let s2 = aclrtCreateStream();
         let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
         let x = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
         {body}
         aclrtSynchronizeDevice();
         aclrtDestroyEvent(ev);"
    )
}

#[track_caller]
fn assert_acl_event_forms(body: &str, expected: &[&'static str]) {
    for form in ACL_FORMS {
        assert_codes(&acl_event_program(body, form), expected);
    }
}

#[test]
fn acl_record_and_wait_with_flag_order_like_the_plain_forms() {
    assert_acl_event_forms(
        "kernel(s1, \"producer\", writes: [x]);
         record(ev, s1);
         wait(s2, ev);
         aclrtResetEvent(ev, s2);
         kernel(s2, \"consumer\", reads: [x]);",
        &[],
    );
    // Without the wait nothing orders the consumer after the producer.
    assert_acl_event_forms(
        "kernel(s1, \"producer\", writes: [x]);
         record(ev, s1);
         kernel(s2, \"consumer\", reads: [x]);",
        &["SG601"],
    );
}

#[test]
fn acl_wait_with_flag_on_a_never_recorded_event_hangs() {
    assert_acl_event_forms("wait(s2, ev);", &["SG104", "SG503"]);
}

#[test]
fn acl_event_rules_see_the_with_flag_forms() {
    assert_acl_event_forms("record(ev, s1); wait(s1, ev);", &["SG109"]);
    assert_acl_event_forms(
        "record(ev, s1); record(ev, s1); wait(s2, ev); aclrtResetEvent(ev, s2);",
        &["SG105"],
    );
    assert_acl_event_forms(
        "record(ev, s1); wait(s2, ev); record(ev, s1); wait(s2, ev); aclrtResetEvent(ev, s2);",
        &["SG102"],
    );
    // The sync-kind cross wait of semantics.rs: each stream waits for the other's record,
    // so the final aclrtSynchronizeDevice never returns either.
    assert_acl_event_forms(
        "let e2 = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
         wait(s1, e2);
         kernel(s1, \"consumer\", reads: [x]);
         record(ev, s1);
         kernel(s2, \"producer\", writes: [x]);
         wait(s2, ev);
         record(e2, s2);
         aclrtDestroyEvent(e2);",
        &["SG501", "SG503"],
    );
}

#[test]
fn acl_wait_with_flag_needs_its_timeout() {
    let src = acl_event_program("record(ev, s1); aclrtStreamWaitEventWithFlag(s2, ev);", &ACL_FORMS[0]);
    assert_codes(&src, &["SG001"]);
}

// ---------------------------------------------------------------------------------------
// CUDA: cudaEventRecordWithFlags

/// `body` with non-blocking streams `s1`, `s2` (the legacy default stream does not
/// order them), an event `ev` and a device buffer `x`.
fn cuda_program(body: &str) -> String {
    format!(
        "let s1 = cudaStreamCreateWithFlags(cudaStreamNonBlocking);
         let s2 = cudaStreamCreateWithFlags(cudaStreamNonBlocking);
         let ev = cudaEventCreateWithFlags(cudaEventDisableTiming);
         let x = cudaMalloc(4 KiB);
         {body}
         cudaDeviceSynchronize();
         cudaEventDestroy(ev);"
    )
}

#[test]
fn cuda_record_with_flags_is_a_capture_kind_record() {
    for record in ["cudaEventRecord(ev, s1);", "cudaEventRecordWithFlags(ev, s1, 0);"] {
        let clean = format!(
            "kernel(s1, \"producer\", writes: [x]);
             {record}
             cudaStreamWaitEvent(s2, ev, 0);
             kernel(s2, \"consumer\", reads: [x]);"
        );
        assert_codes(&cuda_program(&clean), &[]);
        // A capture-kind wait binds at issue time: issued before the record, it is a no-op.
        let early = format!(
            "kernel(s1, \"producer\", writes: [x]);
             cudaStreamWaitEvent(s2, ev, 0);
             {record}
             kernel(s2, \"consumer\", reads: [x]);"
        );
        assert_codes(&cuda_program(&early), &["SG104", "SG601"]);
        // Capture kind: a second record overwrites the first, nothing is lost (no SG105).
        let twice = format!(
            "kernel(s1, \"producer\", writes: [x]);
             {record}
             {record}
             cudaStreamWaitEvent(s2, ev);
             kernel(s2, \"consumer\", reads: [x]);"
        );
        assert_codes(&cuda_program(&twice), &[]);
    }
}

#[test]
fn cuda_record_with_flags_defaults_to_the_default_stream() {
    let captured = "kernel(NULL, \"producer\", writes: [x]);
                    cudaEventRecordWithFlags(ev);
                    cudaStreamWaitEvent(s2, ev);
                    kernel(s2, \"consumer\", reads: [x]);";
    assert_codes(&cuda_program(captured), &[]);
    let too_early = "cudaEventRecordWithFlags(ev);
                     kernel(NULL, \"producer\", writes: [x]);
                     cudaStreamWaitEvent(s2, ev);
                     kernel(s2, \"consumer\", reads: [x]);";
    assert_codes(&cuda_program(too_early), &["SG601"]);
}

#[test]
fn cuda_host_alloc_is_host_memory() {
    let copy_back = |sync: &str| {
        format!(
            "let s1 = cudaStreamCreate();
             let x = cudaMalloc(4 KiB);
             let h = cudaHostAlloc(4 KiB, 0);
             cudaMemcpyAsync(h, x, 4 KiB, cudaMemcpyDeviceToHost, s1);
             {sync}
             host_read(h);
             cudaFreeHost(h);
             cudaFree(x);"
        )
    };
    assert_codes(&copy_back("cudaStreamSynchronize(s1);"), &[]);
    assert_codes(&copy_back(""), &["SG602"]);
    assert_codes(
        "let h = cudaHostAlloc(4 KiB);
         let x = cudaMalloc(4 KiB);
         cudaMemcpy(x, h, 8 KiB, cudaMemcpyHostToDevice);
         cudaFreeHost(h);
         cudaFree(x);",
        &["SG306"],
    );
}

// ---------------------------------------------------------------------------------------
// Memset: the async forms write on a stream, the sync forms write from the host

#[test]
fn acl_memset_async_is_a_device_write_on_its_stream() {
    let program = |body: &str| acl_event_program(body, &ACL_FORMS[0]);
    assert_codes(
        &program(
            "aclrtMemsetAsync(x, 4 KiB, 0, 4 KiB, s1);
             kernel(s2, \"consumer\", reads: [x]);",
        ),
        &["SG601"],
    );
    assert_codes(
        &program(
            "aclrtMemsetAsync(x, 4 KiB, 0, 4 KiB, s1);
             aclrtRecordEvent(ev, s1);
             aclrtStreamWaitEvent(s2, ev);
             aclrtResetEvent(ev, s2);
             kernel(s2, \"consumer\", reads: [x]);",
        ),
        &[],
    );
    // Only `count` bytes are written: the upper half does not race.
    assert_codes(
        &program(
            "aclrtMemsetAsync(x, 4 KiB, 0, 2 KiB, s1);
             kernel(s2, \"consumer\", reads: [x[2 KiB..4 KiB]]);",
        ),
        &[],
    );
    // Same stream: FIFO order.
    assert_codes(
        &program(
            "aclrtMemsetAsync(x, 4 KiB, 0, 4 KiB, s1);
             kernel(s1, \"consumer\", reads: [x]);",
        ),
        &[],
    );
    assert_codes(
        &program("aclrtMemsetAsync(x, 4 KiB, 0, 4 KiB, s1); host_read(x);"),
        &["SG602"],
    );
    assert_codes(&program("aclrtMemsetAsync(x, 8 KiB, 0, 8 KiB, s1);"), &["SG306"]);
}

#[test]
fn acl_memset_is_a_host_write() {
    let program = |body: &str| acl_event_program(body, &ACL_FORMS[0]);
    assert_codes(
        &program("kernel(s1, \"producer\", writes: [x]); aclrtMemset(x, 4 KiB, 0, 4 KiB);"),
        &["SG602"],
    );
    assert_codes(
        &program(
            "kernel(s1, \"producer\", writes: [x]);
             aclrtSynchronizeStream(s1);
             aclrtMemset(x, 4 KiB, 0, 4 KiB);",
        ),
        &[],
    );
    // It has finished when the call returns: a later kernel is ordered after it.
    assert_codes(
        &program("aclrtMemset(x, 4 KiB, 0, 4 KiB); kernel(s1, \"consumer\", reads: [x]);"),
        &[],
    );
}

#[test]
fn cuda_memset_async_and_memset() {
    assert_codes(
        &cuda_program("cudaMemsetAsync(x, 0, 4 KiB, s1); kernel(s2, \"consumer\", reads: [x]);"),
        &["SG601"],
    );
    assert_codes(
        &cuda_program(
            "cudaMemsetAsync(x, 0, 4 KiB, s1);
             cudaEventRecord(ev, s1);
             cudaStreamWaitEvent(s2, ev);
             kernel(s2, \"consumer\", reads: [x]);",
        ),
        &[],
    );
    // Without a stream it runs on the default stream, in order with the default stream's work.
    assert_codes(
        &cuda_program("cudaMemsetAsync(x, 0, 4 KiB); kernel(NULL, \"consumer\", reads: [x]);"),
        &[],
    );
    assert_codes(&cuda_program("cudaMemsetAsync(x, 0, 8 KiB);"), &["SG306"]);
    // `cudaMemset` is work on the default stream, which may still run when it returns
    // (CUDA's "API synchronization behavior"): racing a non-blocking stream's kernel is
    // a race between two device accesses.
    assert_codes(
        &cuda_program("kernel(s1, \"producer\", writes: [x]); cudaMemset(x, 0, 4 KiB);"),
        &["SG601"],
    );
    assert_codes(
        &cuda_program(
            "kernel(s1, \"producer\", writes: [x]);
             cudaStreamSynchronize(s1);
             cudaMemset(x, 0, 4 KiB);",
        ),
        &[],
    );
}

// ---------------------------------------------------------------------------------------
// CUDA's legacy default stream synchronizes with blocking streams

/// `body` with a blocking stream `b` (`cudaStreamCreate`), a non-blocking stream `nb`,
/// device buffers `x`, `y` and pinned host memory `h`.
fn legacy_program(settings: &str, body: &str) -> String {
    format!(
        "{settings}
         let b = cudaStreamCreate();
         let nb = cudaStreamCreateWithFlags(cudaStreamNonBlocking);
         let x = cudaMalloc(4 KiB);
         let y = cudaMalloc(4 KiB);
         let h = cudaMallocHost(4 KiB);
         {body}
         cudaDeviceSynchronize();"
    )
}

#[test]
fn the_legacy_default_stream_orders_blocking_streams_both_ways() {
    let chain = |producer: &str, consumer: &str| {
        legacy_program(
            "",
            &format!(
                "kernel({producer}, \"produce\", writes: [x]);
                 kernel(NULL, \"transform\", reads: [x], writes: [y]);
                 kernel({consumer}, \"consume\", reads: [y]);"
            ),
        )
    };
    assert_codes(&chain("b", "b"), &[]);
    assert_codes(&chain("nb", "b"), &["SG601"]);
    assert_codes(&chain("b", "nb"), &["SG601"]);
    // Blocking streams are not ordered among themselves.
    let siblings = legacy_program(
        "let b2 = cudaStreamCreate();",
        "kernel(b, \"produce\", writes: [x]); kernel(b2, \"consume\", reads: [x]);",
    );
    assert_codes(&siblings, &["SG601"]);
    // `cudaStreamLegacy` names the legacy stream, `0` too.
    assert_codes(
        &legacy_program(
            "",
            "kernel(b, \"produce\", writes: [x]); kernel(cudaStreamLegacy, \"consume\", reads: [x]);",
        ),
        &[],
    );
}

#[test]
fn synchronous_copies_and_stream_zero_synchronize_wait_for_blocking_streams() {
    let copy_back = |stream: &str, then: &str| {
        legacy_program(
            "",
            &format!(
                "kernel({stream}, \"produce\", writes: [x]);
                 {then}
                 host_read(h);"
            ),
        )
    };
    let memcpy = "cudaMemcpy(h, x, 4 KiB, cudaMemcpyDeviceToHost);";
    assert_codes(&copy_back("b", memcpy), &[]);
    assert_codes(&copy_back("nb", memcpy), &["SG602"]);
    let async_then_sync_zero = "cudaMemcpyAsync(h, x, 4 KiB, cudaMemcpyDeviceToHost, b);
                                cudaStreamSynchronize(0);";
    assert_codes(&copy_back("b", async_then_sync_zero), &[]);
    let async_on_nb = "cudaMemcpyAsync(h, x, 4 KiB, cudaMemcpyDeviceToHost, nb);
                       cudaStreamSynchronize(0);";
    assert_codes(&copy_back("nb", async_on_nb), &["SG602"]);
}

#[test]
fn two_dimensional_copies_and_memsets_touch_their_rows() {
    // 4 rows of 256 bytes, 1 KiB apart: bytes 0..3328 of `x`.
    let copy = "cudaMemcpy2DAsync(x, 1024, y, 1024, 256, 4, cudaMemcpyDeviceToDevice, nb);";
    let reader = |range: &str| format!("kernel(b, \"read\", reads: [x[{range}]]);");
    assert_codes(
        &legacy_program("", &format!("{copy}\n{}", reader("3072..3328"))),
        &["SG601"],
    );
    assert_codes(&legacy_program("", &format!("{copy}\n{}", reader("3328..4096"))), &[]);
    let memset = "cudaMemset2DAsync(y, 512, 0, 64, 3, nb);";
    let writer = |range: &str| format!("kernel(b, \"write\", writes: [y[{range}]]);");
    assert_codes(
        &legacy_program("", &format!("{memset}\n{}", writer("1024..1088"))),
        &["SG601"],
    );
    assert_codes(&legacy_program("", &format!("{memset}\n{}", writer("1088..4096"))), &[]);
}

#[test]
fn a_host_function_is_ordered_on_its_stream() {
    // The callback is queued on `nb` after the copy (a known call, not an unknown API
    // skipped); the host thread does not wait for it, so only a synchronize orders the
    // host's read after the copy.
    let body = |then: &str| {
        format!(
            "cudaMemcpyAsync(h, x, 4 KiB, cudaMemcpyDeviceToHost, nb);
             cudaLaunchHostFunc(nb, on_done, NULL);
             {then}
             host_read(h);"
        )
    };
    assert_codes(&legacy_program("", &body("")), &["SG602"]);
    assert_codes(&legacy_program("", &body("cudaStreamSynchronize(nb);")), &[]);
}

#[test]
fn a_per_thread_default_stream_is_an_ordinary_stream() {
    let chain = |settings: &str, zero: &str| {
        legacy_program(
            settings,
            &format!(
                "kernel(b, \"produce\", writes: [x]);
                 kernel({zero}, \"consume\", reads: [x]);"
            ),
        )
    };
    assert_codes(&chain("", "0"), &[]);
    assert_codes(&chain("default_stream per_thread;", "0"), &["SG601"]);
    assert_codes(&chain("", "cudaStreamPerThread"), &["SG601"]);
    assert_codes(&chain("default_stream per_thread;", "cudaStreamLegacy"), &[]);
    // Each host thread has its own: a kernel on one thread's is unordered with the other's.
    let two_threads = legacy_program(
        "default_stream per_thread;",
        "thread worker { kernel(0, \"consume\", reads: [x]); }
         kernel(0, \"produce\", writes: [x]);",
    );
    assert_codes(&two_threads, &["SG601"]);
}

#[test]
fn legacy_work_of_another_host_thread_is_ordered_in_every_issue_order() {
    // Whichever thread issues first, the blocking stream's kernel and the legacy
    // stream's are ordered one way or the other; a non-blocking stream's is not.
    let threaded = |stream: &str| {
        legacy_program(
            "",
            &format!(
                "thread worker {{ kernel({stream}, \"produce\", writes: [x]); }}
                 kernel(0, \"consume\", writes: [x]);"
            ),
        )
    };
    assert_codes(&threaded("b"), &[]);
    assert_codes(&threaded("nb"), &["SG601"]);
}

// ---------------------------------------------------------------------------------------
// HCCL reduce transfers: the length is count x sizeof(dataType)

/// Two ranks, one HCCL thread on stream `s`, one channel with 3 notifies, 64 KiB HCCL
/// buffers; `rank0` and `rank1` are each rank's data plane.
fn two_ranks(rank0: &str, rank1: &str) -> String {
    format!(
        "ranks 2;
         hccl_buffer_size 64 KiB;
         let comm = HcclCommInitRootInfo(2, \"root_info\", rank);
         let s = aclrtCreateStream();
         let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 0);
         let ch = HcclChannelAcquire(
             comm,
             COMM_ENGINE_CPU_TS,
             {{ remoteRank: 1 - rank, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 3 }},
             1,
         );
         let local = HcclGetHcclBuffer(comm);
         let remote = HcclChannelGetHcclBuffer(comm, ch);
         if rank == 0 {{
             {rank0}
         }} else {{
             {rank1}
         }}
         aclrtSynchronizeStream(s);
         HcclCommDestroy(comm);
         aclrtDestroyStream(s);"
    )
}

/// Rank 0 reduce-writes `count` elements of `data_type` into rank 1's buffer, in the
/// three-phase protocol; rank 1 consumes the whole buffer.
fn write_reduce(count: u64, data_type: &str) -> String {
    two_ranks(
        &format!(
            "HcommChannelNotifyRecordOnThread(t, ch, 0);
             HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
             HcommWriteReduceOnThread(t, ch, remote, local, {count}, {data_type}, HCOMM_REDUCE_SUM);
             HcommChannelNotifyRecordOnThread(t, ch, 1);
             HcommChannelNotifyWaitOnThread(t, ch, 2, 1836);"
        ),
        "HcommChannelNotifyRecordOnThread(t, ch, 0);
         HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
         HcommChannelNotifyWaitOnThread(t, ch, 1, 1836);
         kernel(s, \"unpack\", reads: [local]);
         HcommChannelNotifyRecordOnThread(t, ch, 2);",
    )
}

#[test]
fn write_reduce_length_is_count_times_the_element_size() {
    let cases = [
        ("HCOMM_DATA_TYPE_INT8", 65536),
        ("HCOMM_DATA_TYPE_UINT8", 65536),
        ("HCOMM_DATA_TYPE_FP16", 32768),
        ("HCOMM_DATA_TYPE_BFP16", 32768),
        ("HCOMM_DATA_TYPE_INT16", 32768),
        ("HCOMM_DATA_TYPE_FP32", 16384),
        ("HCOMM_DATA_TYPE_UINT32", 16384),
        ("HCOMM_DATA_TYPE_INT64", 8192),
        ("HCOMM_DATA_TYPE_FP64", 8192),
    ];
    for (data_type, fits) in cases {
        // Exactly the 64 KiB buffer, then one element more.
        assert_codes(&write_reduce(fits, data_type), &[]);
        assert_codes(&write_reduce(fits + 1, data_type), &["SG306"]);
    }
    assert_codes(&write_reduce(16, "HCOMM_DATA_TYPE_BOGUS"), &["SG003"]);
}

#[test]
fn write_reduce_with_notify_records_the_peers_flag() {
    let rank0 = "HcommChannelNotifyRecordOnThread(t, ch, 0);
                 HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
                 HcommWriteReduceWithNotifyOnThread(
                     t, ch, remote, local, 1024, HCOMM_DATA_TYPE_FP32, HCOMM_REDUCE_SUM, 1,
                 );
                 HcommChannelNotifyWaitOnThread(t, ch, 2, 1836);";
    let rank1 = |data_phase: &str| {
        format!(
            "HcommChannelNotifyRecordOnThread(t, ch, 0);
             HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
             {data_phase}
             HcommChannelNotifyRecordOnThread(t, ch, 2);"
        )
    };
    let consume = "kernel(s, \"unpack\", reads: [local[0..4 KiB]]);";
    let wait = "HcommChannelNotifyWaitOnThread(t, ch, 1, 1836);";
    // The peer's wait on idx 1 is what the write's notify satisfies.
    assert_codes(&two_ranks(rank0, &rank1(&format!("{wait} {consume}"))), &[]);
    // No wait: the record is unbalanced and the data is read before it has landed.
    assert_codes(&two_ranks(rank0, &rank1(consume)), &["SG301", "SG305"]);
    // The wait after the use does not order it.
    assert_codes(&two_ranks(rank0, &rank1(&format!("{consume} {wait}"))), &["SG305"]);
    // One notify, two waits: the second hangs.
    assert_codes(
        &two_ranks(rank0, &rank1(&format!("{wait} {wait}"))),
        &["SG301", "SG502", "SG503"],
    );
    // remoteNotifyIdx must be below notifyNum (3); and with the record going to idx 3,
    // nothing records the idx 1 the peer waits on, so that wait hangs.
    let out_of_range = rank0.replace("HCOMM_REDUCE_SUM, 1,", "HCOMM_REDUCE_SUM, 3,");
    assert_ne!(out_of_range, rank0);
    assert_codes(
        &two_ranks(&out_of_range, &rank1(wait)),
        &["SG301", "SG302", "SG502", "SG503"],
    );
}

#[test]
fn read_reduce_and_local_reduce() {
    let rank0 = "kernel(s, \"pack\", writes: [local[0..4 KiB]]);
                 HcommChannelNotifyRecordOnThread(t, ch, 0);
                 HcommChannelNotifyWaitOnThread(t, ch, 2, 1836);";
    let rank1 = |body: &str| format!("{body} HcommChannelNotifyRecordOnThread(t, ch, 2);");
    let ready = "HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);";
    let read = |count: u64| {
        format!("HcommReadReduceOnThread(t, ch, local, remote, {count}, HCOMM_DATA_TYPE_FP32, HCOMM_REDUCE_SUM);")
    };
    assert_codes(&two_ranks(rank0, &rank1(&format!("{ready} {}", read(1024)))), &[]);
    assert_codes(
        &two_ranks(rank0, &rank1(&format!("{} {ready}", read(1024)))),
        &["SG304"],
    );
    assert_codes(
        &two_ranks(rank0, &rank1(&format!("{ready} {}", read(16385)))),
        &["SG306"],
    );
    let local_reduce = |offset: &str, count: u64| {
        format!(
            "{ready}
             HcommLocalReduceOnThread(
                 t, local[{offset}..64 KiB], local[0..4 KiB], {count}, HCOMM_DATA_TYPE_FP32, HCOMM_REDUCE_SUM,
             );"
        )
    };
    assert_codes(&two_ranks(rank0, &rank1(&local_reduce("60 KiB", 1024))), &[]);
    assert_codes(&two_ranks(rank0, &rank1(&local_reduce("60 KiB", 2048))), &["SG306"]);
}

// ---------------------------------------------------------------------------------------
// ACL notifies from HCCL threads: HcommAclrtNotifyRecordOnThread / WaitOnThread

/// One rank, two HCCL threads and an ACL notify; `body` runs on them.
fn threads_with_notify(body: &str) -> String {
    format!(
        "let comm = HcclCommInitRootInfo(1, \"root_info\", 0);
         let [t0, t1] = HcclThreadAcquire(comm, COMM_ENGINE_AICPU_TS, 2, 1);
         let n = aclrtCreateNotify(ACL_NOTIFY_DEFAULT);
         let buf = aclrtMalloc(4 KiB);
         {body}
         HcommThreadSynchronize(t0);
         HcommThreadSynchronize(t1);
         aclrtDestroyNotify(n);
         HcclCommDestroy(comm);"
    )
}

const COPY_ON_T0: &str = "HcommLocalCopyOnThread(t0, buf[0..2 KiB], buf[2 KiB..4 KiB], 2 KiB);";
const COPY_ON_T1: &str = "HcommLocalCopyOnThread(t1, buf[2 KiB..4 KiB], buf[0..2 KiB], 2 KiB);";

#[test]
fn aclrt_notify_on_threads_pairs_record_and_wait() {
    let paired = format!(
        "{COPY_ON_T0}
         aclrtGetNotifyId(n);
         HcommAclrtNotifyRecordOnThread(t0, n);
         HcommAclrtNotifyWaitOnThread(t1, n, 1836);
         {COPY_ON_T1}"
    );
    assert_codes(&threads_with_notify(&paired), &[]);
    // Without the notify the two copies race.
    assert_codes(&threads_with_notify(&format!("{COPY_ON_T0} {COPY_ON_T1}")), &["SG601"]);
}

#[test]
fn aclrt_notify_wait_on_thread_with_no_record_hangs() {
    let unpaired = format!("{COPY_ON_T0} HcommAclrtNotifyWaitOnThread(t1, n, 1836); {COPY_ON_T1}");
    // The wait never passes, so the host's HcommThreadSynchronize(t1) never returns.
    assert_codes(&threads_with_notify(&unpaired), &["SG301", "SG502", "SG503"]);
    // The same as a stream's aclrtWaitAndResetNotify with no record.
    assert_codes(
        "let s = aclrtCreateStream();
         let n = aclrtCreateNotify();
         aclrtWaitAndResetNotify(n, s, 1836);
         aclrtSynchronizeStream(s);
         aclrtDestroyNotify(n);",
        &["SG301", "SG502", "SG503"],
    );
}

#[test]
fn aclrt_notify_on_threads_is_a_binary_flag() {
    let twice = "HcommAclrtNotifyRecordOnThread(t0, n);
                 HcommAclrtNotifyRecordOnThread(t0, n);
                 HcommAclrtNotifyWaitOnThread(t1, n, 1836);
                 HcommAclrtNotifyWaitOnThread(t1, n, 1836);";
    assert_codes(&threads_with_notify(twice), &["SG303"]);
    // A thread waiting for a record it queues behind the wait itself.
    let self_wait = "HcommAclrtNotifyWaitOnThread(t1, n, 1836); HcommAclrtNotifyRecordOnThread(t1, n);";
    assert_codes(&threads_with_notify(self_wait), &["SG501", "SG503"]);
}

#[test]
fn aclrt_notify_links_a_stream_and_a_thread() {
    let program = |wait: &str| {
        format!(
            "let comm = HcclCommInitRootInfo(1, \"root_info\", 0);
             let s = aclrtCreateStream();
             let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 0);
             let s2 = aclrtCreateStream();
             let n = aclrtCreateNotify();
             let buf = aclrtMalloc(4 KiB);
             kernel(s2, \"producer\", writes: [buf]);
             aclrtRecordNotify(n, s2);
             {wait}
             kernel(s, \"consumer\", reads: [buf]);
             aclrtSynchronizeStream(s);
             aclrtSynchronizeStream(s2);
             aclrtDestroyNotify(n);"
        )
    };
    // The thread runs on `s`: its wait orders the consumer on `s` after the producer.
    assert_codes(&program("HcommAclrtNotifyWaitOnThread(t, n, 0);"), &[]);
    assert_codes(&program(""), &["SG301", "SG601"]);
}

/// `aclrtGetNotifyId` in a trace: the returned id names the notify.
fn notify_id_trace(skip: &str) -> String {
    [
        r#"{"rank": 0, "thread": 0, "api": "HcclCommInitRootInfo", "args": {"nRanks": 1, "rootInfo": "r", "rank": 0, "comm": "c0"}}"#,
        r#"{"rank": 0, "thread": 0, "api": "HcclThreadAcquire", "args": {"comm": "c0", "engine": "COMM_ENGINE_AICPU_TS", "threadNum": 2, "notifyNumPerThread": 1, "threads": ["t0", "t1"]}}"#,
        r#"{"rank": 0, "thread": 0, "api": "aclrtCreateNotify", "args": {"flag": 0, "notify": "n0"}}"#,
        r#"{"rank": 0, "thread": 0, "api": "aclrtGetNotifyId", "args": {"notify": "n0", "notifyId": 17}}"#,
        r#"{"rank": 0, "thread": 0, "api": "HcommAclrtNotifyRecordOnThread", "args": {"thread": "t0", "dstNotifyId": 17}}"#,
        r#"{"rank": 0, "thread": 0, "api": "HcommAclrtNotifyWaitOnThread", "args": {"thread": "t1", "notifyId": 17, "timeOut": 1836}}"#,
        r#"{"rank": 0, "thread": 0, "api": "HcommThreadJoin", "args": {"thread": "t1", "timeout": 1836}}"#,
        r#"{"rank": 0, "thread": 0, "api": "aclrtDestroyNotify", "args": {"notify": "n0"}}"#,
    ]
    .iter()
    .filter(|line| skip.is_empty() || !line.contains(skip))
    .map(|line| format!("{line}\n"))
    .collect()
}

#[test]
fn trace_notify_id_names_the_notify() {
    assert_eq!(trace_codes(&notify_id_trace("")), set(&[]));
    assert_eq!(
        trace_codes(&notify_id_trace("NotifyRecordOnThread")),
        set(&["SG301", "SG502", "SG503"])
    );
    // Without aclrtGetNotifyId the id names nothing.
    assert_eq!(trace_codes(&notify_id_trace("aclrtGetNotifyId")), set(&["SG003"]));
}

// ---------------------------------------------------------------------------------------
// HcommThreadJoin and HcommChannelDrainOnThread

fn joined(sync: &str) -> String {
    format!(
        "let comm = HcclCommInitRootInfo(1, \"root_info\", 0);
         let [t0] = HcclThreadAcquire(comm, COMM_ENGINE_AICPU_TS, 1, 1);
         let buf = aclrtMalloc(4 KiB);
         HcommLocalCopyOnThread(t0, buf[0..2 KiB], buf[2 KiB..4 KiB], 2 KiB);
         {sync}
         host_read(buf[0..2 KiB]);
         HcclCommDestroy(comm);"
    )
}

#[test]
fn thread_join_waits_for_the_thread_like_thread_synchronize() {
    assert_codes(&joined("HcommThreadJoin(t0, 1836);"), &[]);
    assert_codes(&joined("HcommThreadSynchronize(t0);"), &[]);
    assert_codes(&joined(""), &["SG602"]);
    // A join on a thread that never finishes blocks the host.
    let hang = threads_with_notify("HcommAclrtNotifyWaitOnThread(t1, n, 1836); HcommThreadJoin(t1, 1836);");
    assert_codes(&hang, &["SG301", "SG502", "SG503"]);
}

#[test]
fn drain_and_fence_do_not_synchronize_the_host() {
    let drain = two_ranks(
        "HcommChannelNotifyRecordOnThread(t, ch, 0);
         HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
         HcommWriteOnThread(t, ch, remote, local, 4 KiB);
         HcommChannelDrainOnThread(t, ch);
         HcommChannelNotifyRecordOnThread(t, ch, 1);",
        "HcommChannelNotifyRecordOnThread(t, ch, 0);
         HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
         HcommChannelNotifyWaitOnThread(t, ch, 1, 1836);
         kernel(s, \"unpack\", reads: [local[0..4 KiB]]);",
    );
    assert_codes(&drain, &[]);
    assert_codes(&joined("HcommFenceOnThread(t0);"), &["SG602"]);
    assert_codes(&two_ranks("HcommChannelDrainOnThread(t, nope);", ""), &["SG003"]);
}

// ---------------------------------------------------------------------------------------
// GE: KernelLaunchInfo::SetStreamId and CreateFusionTask

fn ge_op(tasks: &str) -> String {
    format!("op MatmulAllReduce attrs(group) {{ {tasks} }}")
}

#[test]
fn set_stream_id_moves_the_task_created_before_it() {
    let tasks = |record_stream: u32| {
        format!(
            "KernelLaunchInfo::CreateHcomWaitTask(context, \"group\");
             KernelLaunchInfo::SetStreamId(1);
             KernelLaunchInfo::CreateAicpuKfcTask(context, \"libccl_kernel.so\", \"RunAicpuKfcSrvLaunch\");
             KernelLaunchInfo::SetStreamId(1);
             KernelLaunchInfo::CreateHcomRecordTask(context, \"group\");
             KernelLaunchInfo::SetStreamId({record_stream});
             KernelLaunchInfo::LoadFromData(context, \"matmul_all_reduce\");"
        )
    };
    assert_codes(&ge_op(&tasks(0)), &[]);
    assert_codes(&ge_op(&tasks(1)), &["SG204"]);
    // It overrides `stream_id:`.
    assert_codes(
        &ge_op(
            "KernelLaunchInfo::CreateHcomWaitTask(context, \"group\", stream_id: 1);
             KernelLaunchInfo::SetStreamId(0);
             KernelLaunchInfo::CreateHcomRecordTask(context, \"group\", stream_id: 0);",
        ),
        &["SG204"],
    );
    assert_codes(
        &ge_op(
            "KernelLaunchInfo::CreateHcomWaitTask(context, \"group\", stream_id: 0);
             KernelLaunchInfo::SetStreamId(1);
             KernelLaunchInfo::CreateHcomRecordTask(context, \"group\", stream_id: 1);
             KernelLaunchInfo::SetStreamId(0);",
        ),
        &[],
    );
}

#[test]
fn set_stream_id_needs_a_task_in_an_op() {
    assert_codes(
        &ge_op(
            "KernelLaunchInfo::SetStreamId(1);
             KernelLaunchInfo::CreateHcomWaitTask(context, \"group\");
             KernelLaunchInfo::CreateHcomRecordTask(context, \"group\", stream_id: 1);",
        ),
        &["SG001"],
    );
    assert_codes("KernelLaunchInfo::SetStreamId(1);", &["SG001"]);
}

#[test]
fn fusion_task_is_a_task_of_its_own() {
    // SetStreamId after the fusion task moves the fusion task, not the wait before it.
    let tasks = |fusion_stream: u32| {
        ge_op(&format!(
            "KernelLaunchInfo::CreateHcomWaitTask(context, \"group\");
             KernelLaunchInfo::CreateFusionTask(context, sub_tasks);
             KernelLaunchInfo::SetStreamId({fusion_stream});
             KernelLaunchInfo::CreateHcomRecordTask(context, \"group\");"
        ))
    };
    assert_codes(&tasks(0), &["SG204"]);
    assert_codes(&tasks(1), &["SG204"]);
    assert_codes(
        &ge_op(
            "KernelLaunchInfo::CreateHcomWaitTask(context, \"group\", stream_id: 1);
             KernelLaunchInfo::CreateFusionTask(context, sub_tasks);
             KernelLaunchInfo::SetStreamId(0);
             KernelLaunchInfo::CreateHcomRecordTask(context, \"group\");",
        ),
        &[],
    );
    assert_codes("KernelLaunchInfo::CreateFusionTask(context, sub_tasks);", &["SG001"]);
}

// ---------------------------------------------------------------------------------------
// Calls with no effect on the model

#[test]
fn no_effect_calls_are_accepted() {
    assert_codes(
        "aclInit();
         aclInit(\"acl.json\");
         aclrtSetDevice(0);
         let s = aclrtCreateStream();
         let start = aclrtCreateEventWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE);
         let end = aclrtCreateEventWithFlag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE);
         let n = aclrtCreateNotify(ACL_NOTIFY_DEFAULT);
         aclrtGetNotifyId(n);
         aclrtGetNotifyId(n, 7);
         aclrtRecordEvent(start, s);
         aclrtRecordEvent(end, s);
         aclrtStreamQuery(s);
         aclrtSynchronizeStream(s);
         aclrtEventElapsedTime(start, end);
         aclrtDestroyEvent(start);
         aclrtDestroyEvent(end);
         aclrtDestroyNotify(n);
         aclrtDestroyStream(s);
         aclrtResetDevice(0);
         aclFinalize();",
        &[],
    );
    assert_codes(
        "cudaSetDevice(0);
         let s = cudaStreamCreate();
         let a = cudaEventCreate();
         let b = cudaEventCreate();
         cudaEventRecord(a, s);
         cudaEventRecord(b, s);
         cudaStreamQuery(s);
         cudaEventSynchronize(b);
         cudaEventElapsedTime(a, b);
         cudaGetLastError();
         cudaEventDestroy(a);
         cudaEventDestroy(b);
         cudaStreamDestroy(s);",
        &[],
    );
}

#[test]
fn queries_do_not_synchronize() {
    let program = |query: &str| {
        acl_event_program(
            &format!("kernel(s1, \"producer\", writes: [x]); {query} host_read(x);"),
            &ACL_FORMS[0],
        )
    };
    assert_codes(&program("aclrtSynchronizeStream(s1);"), &[]);
    assert_codes(&program("aclrtStreamQuery(s1);"), &["SG602"]);
    // Reading the time orders nothing (SG602), and `ev` has no record to time (SG111).
    assert_codes(&program("aclrtEventElapsedTime(ev, ev);"), &["SG111", "SG602"]);
    assert_codes(
        &cuda_program("kernel(s1, \"producer\", writes: [x]); cudaStreamQuery(s1); cudaGetLastError(); host_read(x);"),
        &["SG602"],
    );
}

#[test]
fn no_effect_calls_still_check_their_arguments() {
    assert_codes("aclrtStreamQuery(nope);", &["SG003"]);
    assert_codes("aclrtSetDevice();", &["SG001"]);
    assert_codes("cudaGetLastError(0);", &["SG001"]);
    assert_codes(
        "let e = cudaEventCreate(); cudaEventElapsedTime(e); cudaEventDestroy(e);",
        &["SG001"],
    );
    assert_codes("op X attrs(group) { aclrtSetDevice(0); }", &["SG001"]);
}

#[test]
fn channel_desc_init_leaves_notify_num_zero() {
    let src = "ranks 2;
               let comm = HcclCommInitRootInfo(2, \"root_info\", rank);
               let s = aclrtCreateStream();
               let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 0);
               HcclChannelDescInit();
               let ch = HcclChannelAcquire(
                   comm,
                   COMM_ENGINE_CPU_TS,
                   { remoteRank: 1 - rank, channelProtocol: COMM_PROTOCOL_HCCS },
                   1,
               );
               HcommChannelNotifyRecordOnThread(t, ch, 0);
               HcommChannelNotifyWaitOnThread(t, ch, 0, 1836);
               aclrtSynchronizeStream(s);";
    assert_codes(src, &["SG302"]);
    assert_codes("HcclChannelDescInit(descs, 2);", &[]);
}

#[test]
fn record_and_wait_flags_are_known_by_name() {
    let program = "let s1 = aclrtCreateStream();
let s2 = aclrtCreateStream();
let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
aclrtRecordEventWithFlag(ev, s1, ACL_EVENT_RECORD_DEFAULT);
aclrtStreamWaitEventWithFlag(s2, ev, 0, ACL_EVENT_WAIT_DEFAULT);
aclrtResetEvent(ev, s2);
aclrtSynchronizeDevice();
aclrtDestroyEvent(ev);";
    assert_codes(program, &[]);
    assert_codes(
        &program.replace("ACL_EVENT_RECORD_DEFAULT", "ACL_EVENT_RECORD_DEFALT"),
        &["SG003"],
    );
}
