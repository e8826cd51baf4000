//! The profile readers on the fixtures of `tests/fixtures/profiles/` (written for these
//! tests: a Kineto trace per case, an msprof cluster folder per case): each finding names
//! the culprit call's event; plain, gzipped and cut files; random bytes never panic.

mod common;

use std::io::Write;

use common::{ascend_cluster, fixture};
use syncguard_analyzer::{Diagnostic, Overrides, Sources};
use syncguard_model::source::FileId;
use syncguard_profiles::{TimelineInput, check_ascend_cluster, check_kineto, read_profile, sniff};

/// The text of the event a finding's primary span covers.
fn primary_text(sources: &mut Sources, diagnostic: &Diagnostic) -> String {
    sources.load_deferred();
    let file = sources.get(diagnostic.primary.file);
    file.text[diagnostic.primary.range.clone()].to_string()
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<&str> {
    diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn a_wait_on_the_recording_stream_names_the_wait_call() {
    let mut sources = Sources::default();
    let path = fixture("kineto/fail_wait_on_recording_stream.json");
    let checked = check_kineto(&mut sources, "fail.json", &path, None, &Overrides::default()).unwrap();
    let finding = checked.diagnostics.iter().find(|d| d.code == "SG109").expect("SG109");
    let text = primary_text(&mut sources, finding);
    assert!(text.contains("\"cudaStreamWaitEvent\""), "{text}");
    assert!(text.contains("\"correlation\": 3"), "{text}");
    // The event is from before the profile: its fix is spelled as the trace's other
    // handles were made, by CUDA's name.
    let help = finding.help.as_deref().unwrap_or("");
    assert!(help.contains("call cudaStreamWaitEvent on that stream"), "{help}");
}

#[test]
fn a_record_then_a_wait_on_another_stream_passes() {
    let mut sources = Sources::default();
    let path = fixture("kineto/pass_record_then_wait.json");
    let checked = check_kineto(&mut sources, "pass.json", &path, None, &Overrides::default()).unwrap();
    let serious: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.severity != syncguard_analyzer::Severity::Info)
        .collect();
    assert!(serious.is_empty(), "{:?}", codes(&checked.diagnostics));
}

#[test]
fn a_wait_whose_record_is_not_in_the_profile_is_a_note_on_that_wait() {
    // The record may precede the profiling window: the event is one from before, named
    // in a note at the wait, never an error.
    let mut sources = Sources::default();
    let path = fixture("kineto/note_wait_never_recorded.json");
    let checked = check_kineto(&mut sources, "note.json", &path, None, &Overrides::default()).unwrap();
    assert!(
        checked
            .diagnostics
            .iter()
            .all(|d| d.severity == syncguard_analyzer::Severity::Info),
        "{:?}",
        codes(&checked.diagnostics)
    );
    let note = checked.diagnostics.iter().find(|d| d.code == "SG003").expect("SG003");
    let wait = note
        .related
        .iter()
        .map(|related| related.span.clone())
        .chain(std::iter::once(note.primary.clone()))
        .map(|span| {
            sources.load_deferred();
            sources.get(span.file).text[span.range].to_string()
        })
        .find(|text| text.contains("cudaStreamWaitEvent"));
    assert!(wait.is_some(), "the note names the wait: {note:?}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn a_gzipped_trace_reports_the_same_finding_on_its_gunzipped_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rank0.pt.trace.json.gz");
    let plain = std::fs::read(fixture("kineto/fail_wait_on_recording_stream.json")).unwrap();
    std::fs::write(&path, gzip(&plain)).unwrap();
    assert_eq!(
        syncguard_profiles::profile_format(&path),
        Some(syncguard_profiles::Format::Kineto)
    );
    let mut sources = Sources::default();
    let checked = check_kineto(
        &mut sources,
        "rank0.pt.trace.json.gz",
        &path,
        None,
        &Overrides::default(),
    )
    .unwrap();
    let finding = checked.diagnostics.iter().find(|d| d.code == "SG109").expect("SG109");
    assert!(primary_text(&mut sources, finding).contains("cudaStreamWaitEvent"));
}

#[test]
fn a_cut_trace_is_read_up_to_its_last_complete_event_and_says_where() {
    let plain = std::fs::read(fixture("kineto/fail_wait_on_recording_stream.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut_at = plain.len() * 3 / 4;
    for (name, bytes) in [
        ("cut.json", plain[..cut_at].to_vec()),
        ("cut.json.gz", gzip(&plain)[..gzip(&plain).len() - 20].to_vec()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let mut sources = Sources::default();
        let checked = check_kineto(&mut sources, name, &path, None, &Overrides::default()).unwrap();
        let stopped = checked
            .diagnostics
            .iter()
            .find(|d| d.code == "SG002" && d.message.contains("stops being readable"))
            .unwrap_or_else(|| panic!("{name}: {:?}", codes(&checked.diagnostics)));
        assert_eq!(stopped.severity, syncguard_analyzer::Severity::Warning);
        // The wait comes before the cut: still found.
        assert!(codes(&checked.diagnostics).contains(&"SG109"), "{name}");
    }
}

#[test]
fn kineto_events_of_a_modeled_kind_that_cannot_be_used_are_counted() {
    // Each of these was dropped unsaid: a launch whose kernel the trace lacks, a kernel
    // without a stream, device events without a correlation or whose call is not in the
    // trace, a `cuda_event` without its event id, a wait under a name not lowered. A
    // synchronize without a correlation is still lowered (its name says what it does).
    let text = br#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 2, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "k_without_stream", "ts": 3, "args": {"correlation": 2, "device": 0}},
  {"ph": "X", "cat": "kernel", "name": "k_without_correlation", "ts": 4, "args": {"stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k_of_an_earlier_call", "ts": 5, "args": {"stream": 7, "correlation": 99}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "tid": 1, "ts": 6, "args": {"correlation": 3}},
  {"ph": "X", "cat": "cuda_event", "name": "cudaEvent", "ts": 6, "args": {"stream": 7, "correlation": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent_ptsz", "tid": 1, "ts": 7, "args": {"correlation": 4}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": 7, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 8, "wait_on_cuda_event_id": 1, "correlation": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "tid": 1, "ts": 8},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 9, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "args": {"stream": 7, "correlation": 5, "device": 0}}
]}"#;
    let read = syncguard_profiles::kineto::read(text, FileId(0), None);
    // The one launch with its kernel and the synchronize.
    assert_eq!(read.trace.len(), 2, "{}", read.trace.text());
    assert!(
        read.trace.text().contains("cudaDeviceSynchronize"),
        "{}",
        read.trace.text()
    );
    let note = read
        .reading
        .iter()
        .find(|d| d.message.contains("what it does not show is listed here"))
        .expect("the note");
    let said = note.notes.join("\n");
    for needle in [
        "2 launch, copy or set call(s) have no `kernel`, `gpu_memcpy` or `gpu_memset` event",
        "1 `kernel` event(s) have no `args.stream`",
        "1 `kernel` event(s) have no `args.correlation`",
        "1 `cuda_event` event(s) have no `args.event_id` or `args.stream`",
        "1 `cudaEventRecord` call(s) name neither",
        "1 call(s) with a `cuda_sync` or `cuda_event` event are of a kind this reader does not lower (`cudaStreamWaitEvent_ptsz` ×1)",
        "1 device event(s) have a correlation no runtime or driver call of the trace has",
    ] {
        assert!(said.contains(needle), "{needle}\n--\n{said}");
    }
}

#[test]
fn a_wait_no_rank_records_for_names_that_wait_on_its_rank() {
    let mut sources = Sources::default();
    let (checked, failures) = check_ascend_cluster(
        &mut sources,
        &ascend_cluster("fail_wait_without_record"),
        &Overrides::default(),
    );
    assert!(failures.is_empty());
    let hang = checked.diagnostics.iter().find(|d| d.code == "SG502").expect("SG502");
    assert!(hang.message.contains("(rank 1)"), "{}", hang.message);
    let text = primary_text(&mut sources, hang);
    assert!(
        text.contains("Notify_Wait") && text.contains("\"ts\": \"161.000\""),
        "{text}"
    );
    let file = &sources.get(hang.primary.file).path;
    assert!(file.contains("node1_1_"), "{file}");
}

#[test]
fn matched_notifies_pass_and_event_tasks_are_said_not_paired() {
    let mut sources = Sources::default();
    let (checked, _) = check_ascend_cluster(
        &mut sources,
        &ascend_cluster("pass_matched_notifies"),
        &Overrides::default(),
    );
    assert!(
        checked
            .diagnostics
            .iter()
            .all(|d| d.severity == syncguard_analyzer::Severity::Info),
        "{:?}",
        checked.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    assert!(
        checked
            .diagnostics
            .iter()
            .any(|d| d.message.contains("EVENT_RECORD / EVENT_WAIT task(s) are not checked"))
    );
}

#[test]
fn a_notify_task_without_a_rank_of_its_link_is_counted_and_said() {
    let mut sources = Sources::default();
    let (checked, _) = check_ascend_cluster(
        &mut sources,
        &ascend_cluster("warn_notify_without_rank"),
        &Overrides::default(),
    );
    let said = checked
        .diagnostics
        .iter()
        .find(|d| d.message.contains("lack a `notify_id`, `src rank` or `dst rank`"))
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                checked.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
            )
        });
    assert_eq!(said.code, "SG002");
    assert_eq!(said.severity, syncguard_analyzer::Severity::Warning);
    assert!(said.message.starts_with("1 notify task(s)"), "{}", said.message);
    // It points at the task left out: rank 0's record at 120 us.
    let text = primary_text(&mut sources, said);
    assert!(
        text.contains("Notify_Record") && text.contains("\"ts\": \"120.000\""),
        "{text}"
    );
}

#[test]
fn a_notify_task_without_args_is_counted_too() {
    let text = br#"[{"name": "Notify Wait", "ph": "X", "ts": 3}, {"name": "Notify_Record", "ph": "X", "ts": 4, "args": {"notify_id": "x", "src rank": 0, "dst rank": 1}}]"#;
    let timeline = syncguard_profiles::ascend::RankTimeline {
        file: FileId(0),
        text,
        rank: Some(0),
    };
    let (trace, reading) =
        syncguard_profiles::ascend::read(&[timeline], syncguard_model::source::Span::new(FileId(0), 0..0));
    assert!(trace.is_empty());
    assert!(
        reading.iter().any(|d| d.message.starts_with("2 notify task(s) lack")),
        "{:?}",
        reading.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
}

#[test]
fn a_timeline_without_its_rank_in_a_cluster_is_left_out_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for rank in 0..2 {
        let folder = dir.path().join(format!("node{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("trace_view.json");
        std::fs::write(
            &path,
            b"[{\"ph\": \"M\", \"name\": \"process_name\", \"args\": {\"name\": \"HCCL\"}}]",
        )
        .unwrap();
        inputs.push(TimelineInput {
            display: format!("rank{rank}"),
            path,
            unsaved: None,
        });
    }
    let mut sources = Sources::default();
    let (checked, _) = check_ascend_cluster(&mut sources, &inputs, &Overrides::default());
    let unknown = checked
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("rank of this timeline is unknown"));
    assert_eq!(unknown.count(), 2);
}

#[test]
fn profiles_are_recognized_by_content() {
    assert_eq!(
        sniff(br#"{"schemaVersion": 1, "traceEvents": [{"cat": "cuda_runtime"}]}"#),
        Some(syncguard_profiles::Format::Kineto)
    );
    assert_eq!(
        sniff(br#"[{"name": "process_name", "ph": "M", "args": {"name": "Ascend Hardware"}}]"#),
        Some(syncguard_profiles::Format::AscendTimeline)
    );
    assert_eq!(
        sniff(br#"[{"name": "EVENT_WAIT_7", "ph": "X", "tid": "stream3", "args": {"Task Id": 0, "Task Type": "EVENT_WAIT"}}]"#),
        Some(syncguard_profiles::Format::GraphTasks)
    );
    assert_eq!(sniff(br#"{"entries": [], "version": "2.4"}"#), None);
    assert_eq!(sniff(br#"{"name": "package", "traceEvents": 3}"#), None);
    assert_eq!(sniff(b"[1, 2, 3]"), None);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Random bytes, and a real fixture cut or damaged anywhere, read without a panic.
    #[test]
    fn no_bytes_make_a_reader_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
                                     cut in 0usize..4000, flip in 0usize..4000, byte in proptest::prelude::any::<u8>()) {
        let _ = sniff(&bytes);
        let _ = syncguard_profiles::kineto::read(&bytes, FileId(0), None);
        let timeline = syncguard_profiles::ascend::RankTimeline { file: FileId(0), text: &bytes, rank: Some(0) };
        let _ = syncguard_profiles::ascend::read(&[timeline], syncguard_model::source::Span::new(FileId(0), 0..0));
        for case in ["kineto/fail_wait_on_recording_stream.json",
                     "ascend/fail_wait_without_record/node1_1_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"] {
            let mut text = std::fs::read(fixture(case)).unwrap();
            text.truncate(cut.min(text.len()));
            if !text.is_empty() {
                let at = flip % text.len();
                text[at] = byte;
            }
            let _ = syncguard_profiles::kineto::read(&text, FileId(0), None);
            let timeline = syncguard_profiles::ascend::RankTimeline { file: FileId(0), text: &text, rank: Some(1) };
            let _ = syncguard_profiles::ascend::read(&[timeline], syncguard_model::source::Span::new(FileId(0), 0..0));
        }
        let _ = syncguard_profiles::graph_tasks::read(&bytes, FileId(0));
        // A graph dump cut or damaged anywhere, checked whole: its numbers reach the
        // analyzer (the cores a kernel claims, the handles).
        let mut text = std::fs::read(fixture("graph/fail_collectives_ready_together.json")).unwrap();
        text.truncate(cut.min(text.len()));
        if !text.is_empty() {
            let at = flip % text.len();
            text[at] = byte;
        }
        let text = syncguard_profiles::ProfileText::unsaved(&String::from_utf8_lossy(&text));
        let mut sources = Sources::default();
        let path = std::path::Path::new("graph_1.json");
        let _ = syncguard_profiles::check_graph_tasks_text(&mut sources, "graph_1.json", path, &text, &Overrides::default());
    }
}

#[test]
fn a_gzip_bomb_is_bounded_by_the_size_limit_not_by_memory_at_hand() {
    // Not 4 GiB here: the reader takes at most `MAX_PROFILE_BYTES + 1` bytes, which the
    // type states; a small stream shows the limit is checked after gunzip.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zeros.json.gz");
    std::fs::write(&path, gzip(&vec![b' '; 1 << 20])).unwrap();
    let text = read_profile(&path).unwrap();
    assert_eq!(text.bytes.len(), 1 << 20);
    assert!(!text.is_file_bytes && text.cut.is_none());
}

/// A Kineto trace of `launches` kernel launches on stream 7, then a record and a wait
/// on that same stream (SG109), the wait's correlation being `launches + 2`.
fn many_launches_then_a_wait_on_the_recording_stream(launches: usize) -> String {
    let mut events = Vec::new();
    for n in 1..=launches {
        let ts = n as f64 * 10.0;
        events.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 2, "args": {{"correlation": {n}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "k{n}", "pid": 0, "tid": 7, "ts": {}, "dur": 1, "args": {{"device": 0, "stream": 7, "correlation": {n}}}}}"#,
            ts + 5.0
        ));
    }
    let (record, wait) = (launches + 1, launches + 2);
    let ts = (launches + 1) as f64 * 10.0;
    events.push(format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1, "args": {{"correlation": {record}}}}}"#
    ));
    events.push(format!(
        r#"{{"ph": "X", "cat": "cuda_event", "name": "cudaEvent", "pid": 0, "tid": 7, "ts": {ts}, "dur": 0, "args": {{"event_id": 3, "stream": 7, "device": 0, "correlation": {record}}}}}"#
    ));
    events.push(format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"correlation": {wait}}}}}"#,
        ts + 5.0
    ));
    events.push(format!(
        r#"{{"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": {}, "dur": 0, "args": {{"cuda_sync_kind": "Stream Wait Event", "stream": 7, "wait_on_stream": 7, "wait_on_cuda_event_id": 3, "wait_on_cuda_event_record_corr_id": {record}, "device": 0, "correlation": {wait}}}}}"#,
        ts + 5.0
    ));
    format!(
        "{{\"schemaVersion\": 1, \"traceEvents\": [\n{}\n]}}\n",
        events.join(",\n")
    )
}

#[test]
fn a_trace_written_in_parallel_runs_keeps_every_call_in_order_and_on_its_event() {
    // More calls than one run of the parallel lowering writes: the runs are read as
    // one trace, in order, and the finding lands on the wait's own event.
    let launches = 40_000;
    let text = many_launches_then_a_wait_on_the_recording_stream(launches);
    let read = syncguard_profiles::kineto::read(text.as_bytes(), FileId(0), None);
    assert_eq!(read.trace.len(), launches + 2);
    let lowered = read.trace.text();
    let times: Vec<u64> = lowered
        .lines()
        .skip(1)
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["ts"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "calls out of order");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.json");
    std::fs::write(&path, &text).unwrap();
    let mut sources = Sources::default();
    let checked = check_kineto(&mut sources, "many.json", &path, None, &Overrides::default()).unwrap();
    let finding = checked.diagnostics.iter().find(|d| d.code == "SG109").expect("SG109");
    let event = primary_text(&mut sources, finding);
    assert!(event.contains(&format!("\"correlation\": {}", launches + 2)), "{event}");
}

#[test]
fn correlation_ids_spread_far_apart_are_joined_as_dense_ones_are() {
    // Kineto numbers correlations densely; ids far apart take the hashed path and must
    // give the same findings, and count a device event no call has the same way.
    let text = std::fs::read_to_string(fixture("kineto/fail_wait_on_recording_stream.json")).unwrap();
    let orphan = r#"{"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 1.0, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 99}},"#;
    let with_orphan = text.replacen("\"traceEvents\": [", &format!("\"traceEvents\": [\n  {orphan}"), 1);
    let spread = (1..=99u64).rev().fold(with_orphan.clone(), |text, id| {
        let far = id * 1_000_000_007;
        text.replace(
            &format!("\"correlation\": {id}}}"),
            &format!("\"correlation\": {far}}}"),
        )
        .replace(&format!("\"correlation\": {id},"), &format!("\"correlation\": {far},"))
        .replace(
            &format!("\"wait_on_cuda_event_record_corr_id\": {id},"),
            &format!("\"wait_on_cuda_event_record_corr_id\": {},", id * 1_000_000_007),
        )
    });
    assert_ne!(spread, with_orphan);
    let findings = |text: &str| {
        let read = syncguard_profiles::kineto::read(text.as_bytes(), FileId(0), None);
        let notes: Vec<String> = read.reading.iter().flat_map(|d| d.notes.clone()).collect();
        (read.trace.text().lines().count(), notes)
    };
    let (dense, spread) = (findings(&with_orphan), findings(&spread));
    assert_eq!(dense, spread);
    assert!(
        dense
            .1
            .iter()
            .any(|note| note.starts_with("1 device event(s) have a correlation no runtime")),
        "{:?}",
        dense.1
    );
}
