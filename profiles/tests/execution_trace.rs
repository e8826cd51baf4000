//! A Kineto trace with the PyTorch execution trace of the same run
//! (`tests/fixtures/profiles/kineto_et/`): launches get their operator's tensors, a race
//! between streams is found and an ordered pair is not; the footprints are withheld
//! where an ordering could not be lowered; each profile takes its own execution trace.

mod common;

use std::path::{Path, PathBuf};

use common::fixture;
use syncguard_analyzer::{Diagnostic, Overrides, Severity, Sources};
use syncguard_model::source::FileId;
use syncguard_profiles::{check_kineto, pair_execution_traces};

fn check(case: &str) -> (Vec<Diagnostic>, Sources) {
    let folder = fixture(&format!("kineto_et/{case}"));
    let mut sources = Sources::default();
    let checked = check_kineto(
        &mut sources,
        "rank0.pt.trace.json",
        &folder.join("rank0.pt.trace.json"),
        Some(&folder.join("rank0_et.json")),
        &Overrides::default(),
    )
    .unwrap();
    (checked.diagnostics, sources)
}

fn note_of(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .find(|d| d.code == "SG002")
        .map(|d| d.notes.join("\n"))
        .unwrap_or_default()
}

#[test]
fn a_tensor_written_on_one_stream_and_read_on_another_unordered_is_a_race() {
    let (diagnostics, mut sources) = check("fail_race_across_streams");
    let race = diagnostics.iter().find(|d| d.code == "SG601").expect("SG601");
    assert!(race.message.contains("cuda0_storage3"), "{}", race.message);
    assert!(race.message.contains("add_kernel (aten::add)"), "{}", race.message);
    sources.load_deferred();
    let primary = &sources.get(race.primary.file).text[race.primary.range.clone()];
    assert!(primary.contains("\"correlation\": 2"), "the reading launch: {primary}");
    assert!(
        note_of(&diagnostics).contains("2 of 2 launch"),
        "{}",
        note_of(&diagnostics)
    );
}

#[test]
fn the_same_accesses_ordered_by_an_event_pass() {
    let (diagnostics, _) = check("pass_ordered_by_event");
    let serious: Vec<_> = diagnostics.iter().filter(|d| d.severity != Severity::Info).collect();
    assert!(serious.is_empty(), "{serious:#?}");
    assert!(
        note_of(&diagnostics).contains("2 of 2 launch"),
        "{}",
        note_of(&diagnostics)
    );
}

#[test]
fn a_wait_the_profile_cannot_show_withholds_the_tensors_rather_than_report_a_race() {
    // The ordered case with its wait's `cuda_sync` event lost: the wait is left out, so
    // the two launches would look unordered. The tensors are not used, and that is said.
    let folder = fixture("kineto_et/pass_ordered_by_event");
    let text = std::fs::read_to_string(folder.join("rank0.pt.trace.json")).unwrap();
    let without_sync: String = text
        .lines()
        .filter(|line| !line.contains("\"Stream Wait Event\""))
        .map(|line| format!("{line}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("rank0.pt.trace.json");
    std::fs::write(&profile, without_sync).unwrap();
    let mut sources = Sources::default();
    let checked = check_kineto(
        &mut sources,
        "rank0.pt.trace.json",
        &profile,
        Some(&folder.join("rank0_et.json")),
        &Overrides::default(),
    )
    .unwrap();
    assert!(!checked.diagnostics.iter().any(|d| d.code == "SG601"));
    let note = note_of(&checked.diagnostics);
    assert!(note.contains("tensors are not used: 1 wait"), "{note}");
}

#[test]
fn an_unreadable_execution_trace_is_a_warning_and_the_profile_is_still_checked() {
    let folder = fixture("kineto_et/fail_race_across_streams");
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("rank0_et.json");
    std::fs::write(&broken, r#"{"schema": "1.0.1", "nodes": [{"rf_id": "#).unwrap();
    let mut sources = Sources::default();
    let checked = check_kineto(
        &mut sources,
        "rank0.pt.trace.json",
        &folder.join("rank0.pt.trace.json"),
        Some(&broken),
        &Overrides::default(),
    )
    .unwrap();
    let warning = checked
        .diagnostics
        .iter()
        .find(|d| d.code == "SG002" && d.severity == Severity::Warning)
        .expect("a warning on the execution trace");
    assert!(warning.message.contains("cannot be read"), "{}", warning.message);
    assert!(
        checked.diagnostics.iter().any(|d| d.code == "SG004"),
        "launches without memory"
    );
}

fn touch(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn each_profile_takes_the_execution_trace_naming_its_pid() {
    let dir = tempfile::tempdir().unwrap();
    let et = |pid: u32| format!(r#"{{"schema": "1.0.1", "pid": {pid}, "nodes": []}}"#);
    let profile = |pid: u32| format!(r#"{{"traceEvents": [{{"ph": "X", "cat": "cpu_op", "pid": {pid}, "tid": 1}}]}}"#);
    let rank0 = touch(dir.path(), "rank0.json", &profile(11));
    let rank1 = touch(dir.path(), "rank1.json", &profile(22));
    let et1 = touch(dir.path(), "et_rank1.json", &et(22));
    let et0 = touch(dir.path(), "et_rank0.json", &et(11));
    let stray = touch(dir.path(), "et_other.json", &et(33));
    let (paired, unpaired) = pair_execution_traces(&[rank0, rank1], &[et1.clone(), et0.clone(), stray.clone()]);
    assert_eq!(paired, [Some(et0), Some(et1)]);
    assert_eq!(unpaired, [stray]);
    // One profile and one execution trace in a folder belong together, whatever pids.
    let alone = tempfile::tempdir().unwrap();
    let profile = touch(alone.path(), "trace.json", &profile(1));
    let execution = touch(alone.path(), "et.json", &et(2));
    assert_eq!(
        pair_execution_traces(&[profile], std::slice::from_ref(&execution)).0,
        [Some(execution)]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Random bytes, and the execution-trace fixture cut or damaged anywhere, read
    /// without a panic, alone and joined to its profile.
    #[test]
    fn no_bytes_make_the_execution_trace_reader_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
                                                      cut in 0usize..3000, flip in 0usize..3000, byte in proptest::prelude::any::<u8>()) {
        let _ = syncguard_profiles::execution_trace::read(&bytes);
        let _ = syncguard_profiles::execution_trace::sniff(&bytes);
        let folder = fixture("kineto_et/fail_race_across_streams");
        let mut text = std::fs::read(folder.join("rank0_et.json")).unwrap();
        text.truncate(cut.min(text.len()));
        if !text.is_empty() {
            let at = flip % text.len();
            text[at] = byte;
        }
        if let Ok(execution) = syncguard_profiles::execution_trace::read(&text) {
            let profile = std::fs::read(folder.join("rank0.pt.trace.json")).unwrap();
            let _ = syncguard_profiles::kineto::read(&profile, FileId(0), Some(&execution));
        }
    }
}
