//! The msprof `.db` reader on the SQL fixtures of `tests/fixtures/profiles/ascend_db/`
//! (`schema.sql` plus one file of rows per rank and case), turned into SQLite files in a
//! temporary folder at test time: the same findings as the `trace_view.json` fixtures of
//! the same cases, every reading limit said, and no bytes make the reader panic.

mod common;

use std::path::{Path, PathBuf};

use common::ascend_cluster;
use rusqlite::Connection;
use syncguard_analyzer::{Diagnostic, Overrides, Severity, Sources};
use syncguard_profiles::{Format, TimelineInput, check_ascend_cluster, msprof_db, profile_format, sniff};

fn fixture_sql(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/profiles/ascend_db")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// A `.db` at `path` made of the schema, the given SQL files, then `extra` SQL.
fn make_db(path: &Path, files: &[&str], extra: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let connection = Connection::open(path).unwrap();
    connection.execute_batch(&fixture_sql("schema.sql")).unwrap();
    for file in files {
        connection.execute_batch(&fixture_sql(file)).unwrap();
    }
    connection.execute_batch(extra).unwrap();
}

/// Where rank `rank`'s export goes in a cluster folder, as torch_npu lays it out.
fn rank_db(root: &Path, rank: u32) -> PathBuf {
    root.join(format!(
        "node{rank}_{rank}_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"
    ))
}

/// A two-rank cluster of `.db` exports for `case`, with `extra` SQL run on each.
fn db_cluster(root: &Path, case: &str, extra: &str) -> Vec<TimelineInput> {
    (0..2)
        .map(|rank| {
            let path = rank_db(root, rank);
            make_db(&path, &[&format!("{case}_rank{rank}.sql")], extra);
            TimelineInput {
                display: path.display().to_string(),
                path,
                unsaved: None,
            }
        })
        .collect()
}

fn check(inputs: &[TimelineInput]) -> (Sources, Vec<Diagnostic>) {
    let mut sources = Sources::default();
    let (checked, failures) = check_ascend_cluster(&mut sources, inputs, &Overrides::default());
    assert!(failures.is_empty(), "{failures:?}");
    (sources, checked.diagnostics)
}

fn primary_text(sources: &mut Sources, diagnostic: &Diagnostic) -> String {
    sources.load_deferred();
    sources.get(diagnostic.primary.file).text[diagnostic.primary.range.clone()].to_string()
}

fn messages(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

#[test]
fn a_wait_no_rank_records_for_names_that_wait_row_on_its_rank() {
    let dir = tempfile::tempdir().unwrap();
    let (mut sources, diagnostics) = check(&db_cluster(dir.path(), "fail_wait_without_record", ""));
    let hang = diagnostics.iter().find(|d| d.code == "SG502").expect("SG502");
    assert!(hang.message.contains("(rank 1)"), "{}", hang.message);
    let text = primary_text(&mut sources, hang);
    assert!(
        text.contains("name=\"Notify_Wait\"") && text.contains("startNs=1735689600000161000"),
        "{text}"
    );
    assert!(sources.get(hang.primary.file).path.contains("node1_1_"));
}

#[test]
fn the_db_and_the_json_timeline_of_a_case_give_the_same_findings() {
    // The same cases as `ascend/*/trace_view.json`: the same rule findings, word for word.
    for case in ["fail_wait_without_record", "pass_matched_notifies"] {
        let dir = tempfile::tempdir().unwrap();
        let (_, from_db) = check(&db_cluster(dir.path(), case, ""));
        let (_, from_json) = check(&ascend_cluster(case));
        let rules = |diagnostics: &[Diagnostic]| {
            let mut found: Vec<String> = messages(diagnostics)
                .into_iter()
                .filter(|m| !m.starts_with("SG002"))
                .collect();
            found.sort();
            found
        };
        assert_eq!(rules(&from_db), rules(&from_json), "{case}");
    }
}

#[test]
fn matched_notifies_pass_and_rows_not_modeled_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (_, diagnostics) = check(&db_cluster(dir.path(), "pass_matched_notifies", ""));
    let said = messages(&diagnostics);
    assert!(diagnostics.iter().all(|d| d.severity == Severity::Info), "{said:#?}");
    let has = |needle: &str| said.iter().any(|m| m.contains(needle));
    assert!(has("1 EVENT_RECORD / EVENT_WAIT task(s) are not checked"), "{said:#?}");
    assert!(has("1 other HCCL task(s) (Memcpy ×1)"), "{said:#?}");
    // Rank 0 has 6 TASK rows: 3 notify tasks, the Memcpy (said above), 1 event task and
    // the kernel; rank 1 none but notify and event tasks.
    assert!(has("1 other device task(s) of TASK"), "{said:#?}");
}

#[test]
fn a_cut_or_damaged_db_is_a_reading_finding_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole/msprof_20250101.db");
    make_db(&whole, &["fail_wait_without_record_rank1.sql"], "");
    let bytes = std::fs::read(&whole).unwrap();
    let mut damaged = bytes.clone();
    for byte in damaged.iter_mut().skip(100) {
        *byte ^= 0x5a;
    }
    let header_only = msprof_db::SQLITE_HEADER.to_vec();
    for (name, cut) in [
        ("cut.db", bytes[..bytes.len() / 2].to_vec()),
        ("damaged.db", damaged),
        ("header_only.db", header_only),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &cut).unwrap();
        let export = msprof_db::read(&path, None);
        let findings = export.findings(syncguard_model::source::FileId(0));
        assert!(
            findings
                .iter()
                .any(|d| d.code == "SG002" && d.severity == Severity::Error),
            "{name}: {:?}",
            messages(&findings)
        );
        // The user's file is read, never written.
        assert_eq!(std::fs::read(&path).unwrap(), cut, "{name}");
    }
}

#[test]
fn a_db_without_its_task_table_says_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let (_, diagnostics) = check(&db_cluster(dir.path(), "fail_wait_without_record", "DROP TABLE TASK;"));
    let lacking: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.code == "SG002" && d.message.contains("lacks the table TASK"))
        .collect();
    assert_eq!(lacking.len(), 2, "{:#?}", messages(&diagnostics));
    assert!(lacking.iter().all(|d| d.severity == Severity::Error));
    assert!(!diagnostics.iter().any(|d| d.code == "SG502"));
}

#[test]
fn a_db_without_communication_tasks_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("msprof_1.db");
    make_db(&path, &[], "DROP TABLE COMMUNICATION_TASK_INFO;");
    let findings = msprof_db::read(&path, None).findings(syncguard_model::source::FileId(0));
    let note = findings
        .iter()
        .find(|d| d.message.contains("lacks the table COMMUNICATION_TASK_INFO"))
        .expect("the missing table is said");
    assert_eq!(note.severity, Severity::Info);
}

#[test]
fn a_missing_column_and_a_string_id_not_in_string_ids_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_stream.db");
    make_db(&path, &[], "ALTER TABLE TASK DROP COLUMN streamId;");
    let findings = msprof_db::read(&path, None).findings(syncguard_model::source::FileId(0));
    assert!(
        findings.iter().any(|d| d.message.contains("the column TASK.streamId")),
        "{:?}",
        messages(&findings)
    );
    let path = dir.path().join("unknown_name.db");
    make_db(
        &path,
        &["fail_wait_without_record_rank0.sql"],
        "INSERT INTO TASK VALUES (1735689600000200000, 1735689600000201000, 0, 1, 9, 100, 10, 0, 12, 9, 0);
         INSERT INTO COMMUNICATION_TASK_INFO VALUES (99, 9, 2, 0, 7, 5, 65535, 0, 1, 0, 0, 65535, 1, 1, 1, 0);",
    );
    let export = msprof_db::read(&path, None);
    let findings = export.findings(syncguard_model::source::FileId(0));
    let unknown = findings
        .iter()
        .find(|d| d.message.contains("STRING_IDS does not hold"))
        .unwrap_or_else(|| panic!("{:?}", messages(&findings)));
    assert_eq!(unknown.severity, Severity::Warning);
    assert!(export.listing[unknown.primary.range.clone()].contains("99 (not in STRING_IDS)"));
    assert_eq!(export.notify_tasks(), 1);
    assert_eq!(export.rank, Some(0));
}

#[test]
fn a_notify_row_without_a_rank_is_said_as_the_json_timeline_says_it() {
    // The case of `ascend/warn_notify_without_rank`: rank 0's second record (globalTaskId
    // 3) lacks its `dstRank`. Both readers count it in one warning, by the same code.
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<TimelineInput> = (0..2)
        .map(|rank| {
            let path = rank_db(dir.path(), rank);
            let extra = match rank {
                0 => "UPDATE COMMUNICATION_TASK_INFO SET dstRank = NULL WHERE globalTaskId = 3;",
                _ => "",
            };
            make_db(&path, &[&format!("pass_matched_notifies_rank{rank}.sql")], extra);
            TimelineInput {
                display: path.display().to_string(),
                path,
                unsaved: None,
            }
        })
        .collect();
    let (mut sources, from_db) = check(&inputs);
    let warning = from_db
        .iter()
        .find(|d| {
            d.message
                .contains("notify task(s) lack a `notifyId`, `srcRank` or `dstRank`")
        })
        .unwrap_or_else(|| panic!("{:#?}", messages(&from_db)));
    assert_eq!(warning.severity, Severity::Warning);
    assert!(warning.message.starts_with("1 notify task(s)"), "{}", warning.message);
    let row = primary_text(&mut sources, warning);
    assert!(row.contains("globalTaskId=3") && row.contains("dstRank=null"), "{row}");
    let (_, from_json) = check(&ascend_cluster("warn_notify_without_rank"));
    let shape = |diagnostics: &[Diagnostic]| {
        let mut found: Vec<(String, Severity)> = diagnostics
            .iter()
            .filter(|d| d.code != "SG002" || d.message.contains("notify task(s) lack"))
            .map(|d| {
                (
                    d.message.replace(
                        "`notifyId`, `srcRank` or `dstRank`",
                        "`notify_id`, `src rank` or `dst rank`",
                    ),
                    d.severity,
                )
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    };
    assert_eq!(shape(&from_db), shape(&from_json));
}

#[test]
fn a_rank_folder_with_both_exports_reads_the_db_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = db_cluster(dir.path(), "fail_wait_without_record", "");
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../tests/fixtures/profiles/ascend/fail_wait_without_record/node1_1_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    );
    let beside = rank_db(dir.path(), 1).with_file_name("trace_view.json");
    std::fs::copy(json, &beside).unwrap();
    inputs.insert(
        1,
        TimelineInput {
            display: beside.display().to_string(),
            path: beside,
            unsaved: None,
        },
    );
    let (sources, diagnostics) = check(&inputs);
    let note = diagnostics
        .iter()
        .find(|d| d.message.contains("the .db export is read and that timeline is not"))
        .expect("the choice is said");
    assert!(
        sources
            .get(note.primary.file)
            .path
            .ends_with("ascend_pytorch_profiler_1.db")
    );
    // One SG502, from the .db; no second timeline of rank 1.
    assert_eq!(diagnostics.iter().filter(|d| d.code == "SG502").count(), 1);
    assert!(!diagnostics.iter().any(|d| d.message.contains("a second timeline")));
}

#[test]
fn sqlite_exports_are_recognized_by_content_and_other_databases_are_not() {
    assert_eq!(sniff(b"SQLite format 3\0\x10\x00"), Some(Format::AscendDb));
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("profile.db");
    make_db(&export, &[], "");
    assert_eq!(profile_format(&export), Some(Format::AscendDb));
    let other = dir.path().join("app.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE users (id INTEGER, name TEXT);")
        .unwrap();
    assert_eq!(profile_format(&other), None);
    // Named as msprof names its exports: a profile even when it cannot be read.
    let cut = dir.path().join("msprof_20250101.db");
    std::fs::write(&cut, msprof_db::SQLITE_HEADER).unwrap();
    assert_eq!(profile_format(&cut), Some(Format::AscendDb));
    assert_eq!(
        msprof_db::rank_of_file_name(Path::new("ascend_pytorch_profiler_3.db")),
        Some(3)
    );
}

#[test]
fn a_read_only_export_is_read_without_writing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ascend_pytorch_profiler_1.db");
    make_db(&path, &["fail_wait_without_record_rank1.sql"], "");
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&path, permissions).unwrap();
    let before: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let export = msprof_db::read(&path, None);
    assert_eq!(export.notify_tasks(), 3);
    assert_eq!(export.rank, Some(1));
    let after: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after);
}

/// A random SQLite value for a column.
fn value_strategy() -> impl proptest::strategy::Strategy<Value = rusqlite::types::Value> {
    use proptest::prelude::*;
    use rusqlite::types::Value;
    prop_oneof![
        Just(Value::Null),
        (-3i64..16).prop_map(Value::Integer),
        any::<i64>().prop_map(Value::Integer),
        any::<f64>().prop_map(Value::Real),
        "[a-zA-Z_ 0-9]{0,12}".prop_map(Value::Text),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(Value::Blob),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Random bytes after a valid SQLite header, and a real export cut anywhere, read
    /// without a panic.
    #[test]
    fn no_bytes_after_an_sqlite_header_make_the_reader_panic(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048),
        cut in 0usize..20_000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("msprof_0.db");
        let mut file = msprof_db::SQLITE_HEADER.to_vec();
        file.extend_from_slice(&bytes);
        std::fs::write(&path, &file).unwrap();
        let _ = msprof_db::read(&path, Some(0)).findings(syncguard_model::source::FileId(0));
        let whole = dir.path().join("whole.db");
        make_db(&whole, &["pass_matched_notifies_rank0.sql"], "");
        let mut real = std::fs::read(&whole).unwrap();
        real.truncate(cut.min(real.len()).max(16));
        std::fs::write(&path, &real).unwrap();
        let _ = msprof_db::read(&path, Some(0)).findings(syncguard_model::source::FileId(0));
    }

    /// Random contents in every column the reader looks at, checked as a cluster.
    #[test]
    fn no_table_contents_make_the_reader_panic(
        strings in proptest::collection::vec((value_strategy(), value_strategy()), 0..12),
        tasks in proptest::collection::vec(proptest::collection::vec(value_strategy(), 11), 0..12),
        communication in proptest::collection::vec(proptest::collection::vec(value_strategy(), 16), 0..12),
        ranks in proptest::collection::vec(value_strategy(), 0..3),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = rank_db(dir.path(), 0);
        // The schema's names stay: small random ids name notify and event tasks.
        make_db(&path, &[], "");
        {
            let connection = Connection::open(&path).unwrap();
            for (id, value) in &strings {
                let _ = connection.execute("INSERT OR IGNORE INTO STRING_IDS VALUES (?1, ?2)", [id, value]);
            }
            for row in &tasks {
                connection
                    .execute("INSERT INTO TASK VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", rusqlite::params_from_iter(row))
                    .unwrap();
            }
            for row in &communication {
                connection
                    .execute(
                        "INSERT INTO COMMUNICATION_TASK_INFO VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                        rusqlite::params_from_iter(row),
                    )
                    .unwrap();
            }
            for rank in &ranks {
                connection.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?1, 0)", [rank]).unwrap();
            }
        }
        let other = rank_db(dir.path(), 1);
        make_db(&other, &["pass_matched_notifies_rank1.sql"], "");
        let inputs: Vec<TimelineInput> = [path, other]
            .into_iter()
            .map(|path| TimelineInput {
                display: path.display().to_string(),
                path,
                unsaved: None,
            })
            .collect();
        let mut sources = Sources::default();
        let _ = check_ascend_cluster(&mut sources, &inputs, &Overrides::default());
    }
}
