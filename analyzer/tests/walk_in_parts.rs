//! A run whose ranks are walked in parts on several threads is exactly the run the walk
//! of one rank after another makes: every node, agent, instance and finding list, in
//! the same order with the same numbers. Checked on every fixture, example and trace of
//! the repository, and on random multi-rank programs whose processes share objects over
//! IPC and spawn threads.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use syncguard_analyzer::exec::{Execution, instantiate, instantiate_in_one_part, instantiate_in_parts};
use syncguard_analyzer::{FileId, Overrides, Program, Sources, check_sync_bytes, check_trace_file};

/// The run as text, its maps in key order (their iteration order depends on insertion).
fn described(mut exec: Execution) -> String {
    let mut elements: Vec<_> = std::mem::take(&mut exec.elements).into_iter().collect();
    elements.sort();
    let mut opened: Vec<_> = std::mem::take(&mut exec.ipc_opened).into_iter().collect();
    opened.sort();
    format!("{exec:#?}\nelements: {elements:?}\nipc_opened: {opened:?}")
}

/// Whether walking on `threads` threads gives the one-part run at `params`, and the
/// difference if not; `None` where the walk in parts is not taken (one rank).
fn parts_differ(program: &Program, params: Vec<i64>, threads: usize) -> Option<Option<String>> {
    let in_parts = described(instantiate_in_parts(program, params.clone(), threads)?);
    let in_one = described(instantiate_in_one_part(program, params));
    Some((in_parts != in_one).then(|| first_difference(&in_one, &in_parts)))
}

fn first_difference(expected: &str, found: &str) -> String {
    let at = expected.lines().zip(found.lines()).position(|(a, b)| a != b);
    let line = at.unwrap_or(expected.lines().count().min(found.lines().count()));
    let show = |text: &str| {
        text.lines()
            .skip(line.saturating_sub(8))
            .take(16)
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "first difference at line {line}:\n--- in one part\n{}\n--- in parts\n{}",
        show(expected),
        show(found)
    )
}

/// Every parameter at its least value, then at a few above it (ranks among them).
fn parameter_samples(program: &Program) -> Vec<Vec<i64>> {
    let least: Vec<i64> = program.params.iter().map(|p| p.min).collect();
    let more: Vec<i64> = program
        .params
        .iter()
        .map(|p| p.max.unwrap_or(i64::MAX).min(p.min.saturating_add(3)))
        .collect();
    vec![least, more]
}

fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "sync" || ext == "jsonl") {
            found.push(path);
        }
    }
}

fn program_of(path: &Path) -> Program {
    let mut sources = Sources::default();
    if path.extension().is_some_and(|ext| ext == "jsonl") {
        return check_trace_file(&mut sources, path, &Overrides::default())
            .expect("a readable trace")
            .program;
    }
    let bytes = std::fs::read(path).expect("a readable program");
    check_sync_bytes(&mut sources, path.display().to_string(), &bytes).program
}

#[test]
fn every_fixture_and_example_walks_the_same_in_parts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join("tests/fixtures"), &mut files);
    files_under(&root.join("../examples"), &mut files);
    files.sort();
    let mut several_ranks = 0;
    for path in &files {
        let program = program_of(path);
        for params in parameter_samples(&program) {
            match parts_differ(&program, params.clone(), 4) {
                None => {}
                Some(None) => several_ranks += 1,
                Some(Some(difference)) => panic!("{} at {params:?}: {difference}", path.display()),
            }
        }
    }
    // The fixtures hold dozens of multi-rank programs: the check above is not vacuous.
    assert!(
        several_ranks >= 50,
        "only {several_ranks} runs in parts among {} files",
        files.len()
    );
}

/// A program of more calls than the walk in one part keeps for itself: `instantiate`
/// walks it in parts on a machine of several cores, and gives the one-part run (its
/// nodes compared field by field: printing 24,000 of them is slow in a debug build).
#[test]
fn a_large_program_is_walked_in_parts_and_gives_the_same_run() {
    let calls: Vec<String> = (0..6_000)
        .map(|i| {
            let (stream, start) = (i % 2, i % 64);
            format!(
                "kernel(s{stream}, \"k\", writes: [buf[{start}..{}]]);\naclrtRecordEvent(e, s{stream});",
                start + 8
            )
        })
        .collect();
    let calls = calls.join("\n");
    let src = format!(
        "ranks 4;\nlet s0 = aclrtCreateStream();\nlet s1 = aclrtCreateStream();\nlet e = aclrtCreateEvent();\n\
         let buf = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);\nif rank < 2 {{\n{calls}\n}} else {{\n{calls}\n}}\n"
    );
    // Parsed and lowered only: the whole analysis of this program takes minutes in a
    // debug build.
    let parsed = syncguard_grammar::parse(&src);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors.first());
    let lowered = syncguard_grammar::lower::lower(&parsed.file, FileId(0), src.len());
    let program = lowered.program;
    assert!(program.op_count() > 20_000);
    let in_one = instantiate_in_one_part(&program, Vec::new());
    let taken = instantiate(&program, Vec::new());
    assert_eq!(in_one.nodes.len(), taken.nodes.len());
    for (index, (a, b)) in in_one.nodes.iter().zip(&taken.nodes).enumerate() {
        let same = a.agent == b.agent
            && std::ptr::eq(a.op, b.op)
            && a.action == b.action
            && a.host == b.host
            && a.issue == b.issue
            && a.issued_after() == b.issued_after();
        assert!(same, "node {index}: {a:?} in one part, {b:?} in parts");
    }
    assert_eq!(format!("{:?}", in_one.agents), format!("{:?}", taken.agents));
    assert_eq!(format!("{:?}", in_one.instances), format!("{:?}", taken.instances));
}

/// Seven processes that share an event, a notify and a buffer over IPC, open what the
/// others share, and run a worker thread. On two threads, a thread done with its own
/// ranks takes the other's last ones (ranks differ in size: `for` loops up to `rank`).
const PRELUDE: &str = "ranks 7;
let s = aclrtCreateStream();
let mine = aclrtCreateEventExWithFlag(ACL_EVENT_IPC);
let note = aclrtCreateNotify(ACL_NOTIFY_DEFAULT);
let buf = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
if rank == 0 {
    aclrtIpcGetEventHandle(mine, \"ev0\");
    aclrtIpcMemGetExportKey(buf, 4 KiB, \"buf0\");
    aclrtNotifyGetExportKey(note, \"note0\");
}
if rank == 2 {
    aclrtIpcGetEventHandle(mine, \"ev2\");
}
let theirs = aclrtIpcOpenEventHandle(\"ev0\");
let later = aclrtIpcOpenEventHandle(\"ev2\");
let shared = aclrtIpcMemImportByKey(\"buf0\");
let imported = aclrtNotifyImportByKey(\"note0\");
";

fn call() -> impl Strategy<Value = String> {
    let event = || prop::sample::select(vec!["mine", "theirs", "later"]);
    prop_oneof![
        event().prop_map(|e| format!("aclrtRecordEvent({e}, s);")),
        event().prop_map(|e| format!("aclrtStreamWaitEvent(s, {e});")),
        event().prop_map(|e| format!("aclrtSynchronizeEvent({e});")),
        Just("aclrtRecordNotify(imported, s);".to_string()),
        Just("aclrtWaitAndResetNotify(note, s, 0);".to_string()),
        Just("kernel(s, \"k\", reads: [shared[0..1 KiB]], writes: [buf[0..2 KiB]]);".to_string()),
        Just("aclrtSynchronizeStream(s);".to_string()),
        Just("aclrtSynchronizeDevice();".to_string()),
        Just("host_read(shared[0..16]);".to_string()),
        Just("aclrtDestroyEvent(mine);".to_string()),
    ]
}

fn statement() -> impl Strategy<Value = String> {
    call().prop_recursive(2, 16, 3, |inner| {
        prop_oneof![
            3 => call(),
            1 => (0u32..7, prop::collection::vec(inner.clone(), 1..3))
                .prop_map(|(rank, body)| format!("if rank == {rank} {{\n{}\n}}", body.join("\n"))),
            1 => prop::collection::vec(inner, 1..3)
                .prop_map(|body| format!("for i in 0..rank {{\n{}\n}}", body.join("\n"))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_processes_walk_the_same_in_parts(
        main in prop::collection::vec(statement(), 0..10),
        worker in prop::collection::vec(call(), 0..4),
    ) {
        let src = format!("{PRELUDE}{}\nthread w {{\n{}\n}}\n", main.join("\n"), worker.join("\n"));
        let checked = check_sync_bytes(&mut Sources::default(), "ipc.sync", src.as_bytes());
        prop_assert!(
            checked.diagnostics.iter().all(|d| d.code != "SG001" && d.code != "SG003"),
            "the generator writes well-formed programs: {:?}",
            checked.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
        );
        for threads in [2, 3] {
            match parts_differ(&checked.program, Vec::new(), threads) {
                Some(None) => {}
                Some(Some(difference)) => prop_assert!(false, "{}\n{}", src, difference),
                None => prop_assert!(false, "seven ranks are walked in parts"),
            }
        }
    }
}
