//! The C/C++ frontend through the command line: every fixture in `cpp/tests/fixtures`
//! and every example in `examples/cpp` (a file, or a folder whose files are read
//! together) gets the codes its `.sync` twin gets and that its `// expect:` line names;
//! findings point into the C/C++ files.

mod common;

use common::{codes, expected_codes, syncguard};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The fixture folders of the shapes the frontend reads, and the examples (one of each
/// shape, which the README's first command runs).
const SHAPES: [&str; 6] = [
    "cpp/tests/fixtures/host",
    "cpp/tests/fixtures/cuda",
    "cpp/tests/fixtures/hccl",
    "cpp/tests/fixtures/gentask",
    "cpp/tests/fixtures/kernels",
    "examples/cpp",
];

/// The `// expect:` line of a C/C++ file, or of the first file of a folder that has one.
fn expected(path: &Path) -> BTreeSet<String> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let line = files
        .iter()
        .filter_map(|file| std::fs::read_to_string(file).ok())
        .find_map(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("// expect:").map(str::to_string))
        })
        .unwrap_or_else(|| panic!("{} has no `// expect:` line", path.display()));
    expected_codes(&line)
}

/// Fixtures and examples: C/C++ files and folders, sorted.
fn sources_in(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.is_dir() || path.extension().is_some_and(|ext| ext != "sync" && ext != "md"))
        // Kernels read as `aicore` blocks, without `.sync` twins (`kernels_print_their_aicore_blocks`).
        .filter(|path| !path.ends_with("aicore"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_gets_the_codes_of_its_sync_twin() {
    let mut checked = 0;
    for shape in SHAPES {
        for source in sources_in(shape) {
            let twin = source.with_extension("sync");
            let from_source = codes(&source);
            assert_eq!(from_source, codes(&twin), "{} and its twin", source.display());
            assert_eq!(from_source, expected(&source), "{}", source.display());
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} fixtures");
}

#[test]
fn every_fixture_shape_has_a_failing_and_a_passing_twin() {
    for shape in SHAPES {
        let names: Vec<String> = sources_in(shape)
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        for name in names.iter().filter_map(|n| n.strip_prefix("fail_")) {
            assert!(
                names.contains(&format!("pass_{name}")),
                "{shape}: fail_{name} has no pass_ twin"
            );
        }
    }
}

#[test]
fn a_finding_points_at_the_cpp_lines() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "cpp/tests/fixtures/host/fail_stream_vector_handoff.cpp",
    ]);
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_helper_in_another_file_is_reported_where_it_is_written() {
    let output = syncguard(&["check", "--color", "never", "examples/cpp/fail_stage_events"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("helpers.cpp:"), "{text}");
    assert!(text.contains("SG107"), "{text}");
}

/// Every Ascend C kernel prints its per-core pipe program, and it lowers and checks
/// (`cpp/tests/aicore.rs` snapshots the printed blocks).
#[test]
fn kernels_print_their_aicore_blocks() {
    for source in std::fs::read_dir("cpp/tests/fixtures/kernels/aicore").unwrap() {
        let path = source.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "cpp") {
            continue;
        }
        let path = path.to_str().unwrap();
        let converted = syncguard(&["convert", path]);
        assert!(converted.status.success(), "{path}");
        assert!(String::from_utf8_lossy(&converted.stdout).contains("aicore "), "{path}");
        let checked = syncguard(&["check", "--color", "never", path]);
        assert!(
            checked.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&checked.stdout)
        );
    }
}

/// A kernel that divides by its tiling's block and tile counts is read to its end (the
/// counts taken from 1, said in a note, not a launch that divides by zero and stops the
/// walk), and a launch wrapper's `void *stream` parameter is the launch's stream.
#[test]
fn a_kernel_dividing_by_tiling_counts_is_read_to_its_end() {
    let path = "cpp/tests/fixtures/kernels/aicore/scale_tiling_divisors.cpp";
    let checked = syncguard(&["check", "--explain", "--color", "never", path]);
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert!(
        stdout.contains("divides by `tilingData_blockDim`, `tilingData_tileNum`: it is checked for values from 1"),
        "{stdout}"
    );
    assert!(!stdout.contains("walk stopped"), "{stdout}");
    assert!(!stdout.contains("left out"), "{stdout}");
    let converted = syncguard(&["convert", path]);
    let program = String::from_utf8_lossy(&converted.stdout);
    assert!(program.contains("let stream = aclrtCreateStream();"), "{program}");
    assert!(program.contains("kernel(stream, \"scale_custom\""), "{program}");
}

#[test]
fn convert_prints_the_extracted_program_with_source_lines() {
    let output = syncguard(&["convert", "examples/cpp/fail_copy_compute_streams.cu"]);
    assert!(output.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_folder_of_sources_without_sync_calls_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("math.cpp"), "int add(int a, int b) { return a + b; }\n").unwrap();
    let output = syncguard(&["check", dir.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("calls a synchronization API"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("checked 1 file"));
}

#[test]
fn unresolved_handles_are_listed_with_explain() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("op.cpp");
    std::fs::write(
        &source,
        "void Run() {\n  aclrtEvent ev;\n  aclrtCreateEvent(&ev);\n  Register(ev);\n  aclrtDestroyEvent(ev);\n}\n",
    )
    .unwrap();
    let output = syncguard(&["check", "--explain", source.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("`Register` is neither a catalogued API"), "{stdout}");
    let quiet = syncguard(&["check", source.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("Register"));
}

#[test]
fn an_entry_point_whose_calls_are_all_left_out_is_listed_not_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("wait.cpp");
    std::fs::write(
        &source,
        "int WaitFlag(CUstream s, CUdeviceptr flag, cuuint32_t expected) {\n  \
         return cuStreamWaitValue32(s, flag, expected, CU_STREAM_WAIT_VALUE_GEQ);\n}\n",
    )
    .unwrap();
    let output = syncguard(&["check", "--explain", source.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("`cuStreamWaitValue32` is left out: its `value` (`expected`) has no value"),
        "{stdout}"
    );
    assert!(!stderr.contains("calls a synchronization API"), "{stderr}");
    let converted = syncguard(&["convert", source.to_str().unwrap()]);
    assert!(
        !String::from_utf8_lossy(&converted.stdout).contains("1099511627776"),
        "no made-up value to wait for"
    );
}

#[test]
fn the_c_library_alone_is_no_synchronization() {
    // `free` is catalogued so that host buffers are followed; a function that only
    // frees what it cannot follow does no synchronization to check.
    let (_dir, path) = scratch_source(
        "pool.c",
        "void *Take(int slot);\nvoid Release(int slot) {\n  void *buf = Take(slot);\n  free(buf);\n}\n",
    );
    let output = syncguard(&["check", &path]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("calls a synchronization API"), "{stderr}");
}

/// A runtime repository implements the ACL API its examples call: the example's call
/// is the API, not a helper to inline (the implementation's own internals are the
/// library's), and the implementation is no entry point.
#[test]
fn a_library_api_the_files_implement_is_not_inlined() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "include/acl/acl_rt.h",
        "aclError aclrtRecycleStream(aclrtStream stream);\n",
    );
    write(
        "src/stream.cpp",
        "#include \"acl/acl_rt.h\"\naclError aclrtRecycleStream(aclrtStream stream) {\n  \
         (void)aclrtSynchronizeStream(stream);\n  return aclrtDestroyStream(stream);\n}\n",
    );
    write(
        "example/main.cpp",
        "#include \"acl/acl_rt.h\"\nint main() {\n  aclrtStream s = nullptr;\n  \
         if (aclrtCreateStream(&s) != ACL_SUCCESS) { return 1; }\n  \
         if (aclrtRecycleStream(s) != ACL_SUCCESS) { return 1; }\n  \
         if (aclrtSynchronizeStream(s) != ACL_SUCCESS) { return 1; }\n  \
         (void)aclrtDestroyStream(s);\n  return 0;\n}\n",
    );
    let output = syncguard(&[
        "check",
        "--isolated",
        "--explain",
        "--format",
        "concise",
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("SG603"), "the implementation was inlined: {stdout}");
    assert!(
        stdout.contains("`aclrtRecycleStream` is a library API"),
        "the call is listed: {stdout}"
    );
    assert!(!stdout.contains("entry point `aclrtRecycleStream`"), "{stdout}");
}

/// A host thread runs its function with its arguments: its calls up to its first
/// synchronize where it starts, the rest where it is joined.
#[test]
fn host_threads_run_where_they_start_and_join() {
    let (_dir, path) = scratch_source(
        "threads.cpp",
        "struct Args { aclrtStream stream; aclrtEvent done; };\n\
         static void *Producer(void *arg) {\n  Args *args = static_cast<Args *>(arg);\n  \
         aclrtRecordEvent(args->done, args->stream);\n  aclrtSynchronizeStream(args->stream);\n  return nullptr;\n}\n\
         int main() {\n  Args args;\n  aclrtCreateStream(&args.stream);\n  aclrtCreateEvent(&args.done);\n  \
         pthread_t tid;\n  pthread_create(&tid, nullptr, Producer, &args);\n  aclrtQueryEventStatus(args.done, nullptr);\n  \
         pthread_join(tid, nullptr);\n  std::thread waiter([&] { aclrtSynchronizeEvent(args.done); });\n  \
         waiter.join();\n  aclrtDestroyEvent(args.done);\n  aclrtDestroyStream(args.stream);\n  return 0;\n}\n",
    );
    let output = syncguard(&["convert", &path]);
    let text = String::from_utf8_lossy(&output.stdout);
    let order: Vec<usize> = [
        "aclrtRecordEvent(args_done, args_stream); // threads.cpp:4",
        "aclrtQueryEventStatus(args_done, 0); // threads.cpp:14",
        "aclrtSynchronizeStream(args_stream); // threads.cpp:5",
        "aclrtSynchronizeEvent(args_done); // threads.cpp:16",
        "aclrtDestroyEvent(args_done); // threads.cpp:18",
    ]
    .iter()
    .map(|line| text.find(line).unwrap_or_else(|| panic!("{line} in {text}")))
    .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
}

/// Rule fixtures written in C/C++ (`analyzer/tests/fixtures/<CODE>/{fail,pass}_*.cpp`):
/// the source frontend's own rules (SG701, the opt-in SG703: each fixture is checked
/// with its rule selected) and rules whose cases are clearest in C++.
#[test]
fn cpp_rule_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("analyzer/tests/fixtures");
    let mut checked = 0;
    for rule in std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()) {
        let code = rule.file_name().unwrap().to_string_lossy().into_owned();
        let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&rule)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|ext| ext == "cpp" || ext == "cu"))
            .collect();
        fixtures.sort();
        for fixture in fixtures {
            let name = fixture.file_stem().unwrap().to_string_lossy().into_owned();
            let relative = fixture.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
            let checked_with = |format: &str| {
                syncguard(&[
                    "check",
                    "--color",
                    "never",
                    "--extend-select",
                    &code,
                    "--format",
                    format,
                    relative.to_str().unwrap(),
                ])
            };
            let json: serde_json::Value = serde_json::from_slice(&checked_with("json").stdout).unwrap();
            let found: BTreeSet<String> = json["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| matches!(d["severity"].as_str(), Some("error" | "warning")))
                .map(|d| d["code"].as_str().unwrap().to_string())
                .collect();
            if name.starts_with("fail") {
                assert!(
                    found.contains(&code),
                    "{} does not report {code}: {found:?}",
                    fixture.display()
                );
            } else {
                assert!(!found.contains(&code), "{} reports {code}", fixture.display());
            }
            let output = checked_with("text");
            insta::assert_snapshot!(format!("{code}__{name}"), String::from_utf8_lossy(&output.stdout));
            checked += 1;
        }
    }
    assert!(checked >= 3);
}

fn scratch_source(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path.to_str().unwrap().to_string())
}

/// An event created, recorded and waited on; the record's failure branch leaks it.
const LEAK_ON_ERROR: &str = "int Run(aclrtStream s1, aclrtStream s2) {
    aclrtEvent ev;
    if (aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC) != ACL_SUCCESS) { return -1; }
#ifdef WITH_WAIT
    if (aclrtRecordEvent(ev, s1) != ACL_SUCCESS) { return -2; }
    if (aclrtStreamWaitEvent(s2, ev) != ACL_SUCCESS) { return -3; }
    if (aclrtResetEvent(ev, s2) != ACL_SUCCESS) { return -4; }
#endif
    (void)aclrtDestroyEvent(ev);
    return 0;
}
int Other(aclrtStream s) {
    aclrtEvent ev;
    if (aclrtCreateEvent(&ev) != ACL_SUCCESS) { return -1; }
    return 0;
}
";

#[test]
fn entry_selects_the_functions_checked() {
    let (_dir, path) = scratch_source("op.cpp", LEAK_ON_ERROR);
    assert!(codes(Path::new(&path)).contains("SG107"), "Other leaks its event");
    let output = syncguard(&["check", "--format", "json", "--entry", "Run", "-D", "WITH_WAIT", &path]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), 0, "{json}");
}

#[test]
fn error_paths_check_the_branches_of_failing_calls() {
    let (_dir, path) = scratch_source("op.cpp", LEAK_ON_ERROR);
    let quiet = syncguard(&["check", "--entry", "Run", "-D", "WITH_WAIT", &path]);
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("SG107"));
    let output = syncguard(&["check", "--entry", "Run", "-D", "WITH_WAIT", "--error-paths", &path]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("SG107"),
        "a failed record returns without destroying the event: {text}"
    );
    // In the code's terms, not the extracted program's choice names.
    assert!(
        text.contains("Note: found when the condition at op.cpp:") && !text.contains("branch_op_"),
        "the finding names the branch it needs: {text}"
    );
}

#[test]
fn an_undefined_macro_checks_both_preprocessor_branches() {
    let (_dir, path) = scratch_source("op.cpp", LEAK_ON_ERROR);
    let output = syncguard(&["check", "--explain", "--entry", "Run", &path]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("a preprocessor condition the analyzed files and flags do not decide"),
        "{text}"
    );
}

/// An upload on a copy stream consumed on the compute stream: the `USE_EVENT_SYNC`
/// build records the event but forgets the wait (a race); the other synchronizes.
const UPLOAD_BY_BUILD: &str = "extern \"C\" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y);
int Upload(aclrtStream compute, aclrtStream copy, void *host, void *devIn, void *devOut, size_t size) {
    aclrtEvent done;
    ACL_CHECK(aclrtCreateEvent(&done));
    ACL_CHECK(aclrtMemcpyAsync(devIn, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE, copy));
#ifdef USE_EVENT_SYNC
    ACL_CHECK(aclrtRecordEvent(done, copy));
#else
    ACL_CHECK(aclrtSynchronizeStream(copy));
#endif
    scale<<<8, nullptr, compute>>>(devIn, devOut);
    ACL_CHECK(aclrtSynchronizeStream(compute));
    ACL_CHECK(aclrtDestroyEvent(done));
    return 0;
}
";

fn race_count(args: &[&str]) -> (usize, String) {
    let output = syncguard(&[&["check", "--format", "json"], args].concat());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let races: Vec<&serde_json::Value> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "SG601")
        .collect();
    (
        races.len(),
        format!("{json} {}", String::from_utf8_lossy(&output.stderr)),
    )
}

#[test]
fn undecided_preprocessor_branches_are_alternatives() {
    // Run one after the other, the `#else` synchronize would hide the race of the
    // `#ifdef` build.
    let (_dir, path) = scratch_source("upload.cpp", UPLOAD_BY_BUILD);
    let (races, json) = race_count(&[&path]);
    assert_eq!(races, 1, "{json}");
    assert!(
        json.contains("found when the `#if` at upload.cpp:6 takes arm 1") && !json.contains("preproc_upload"),
        "the finding names its build: {json}"
    );
}

fn with_compile_db(command: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("op/build")).unwrap();
    let source = dir.path().join("op/upload.cpp");
    std::fs::write(&source, UPLOAD_BY_BUILD).unwrap();
    let db = serde_json::json!([{
        "directory": dir.path().join("op/build"),
        "file": "../upload.cpp",
        "command": command,
    }]);
    std::fs::write(dir.path().join("op/build/compile_commands.json"), db.to_string()).unwrap();
    (dir, source.to_str().unwrap().to_string())
}

#[test]
fn a_compile_commands_json_decides_the_preprocessor_branches() {
    let (_dir, path) = with_compile_db("ccec -O2 -DUSE_EVENT_SYNC -I../inc -c ../upload.cpp");
    let (races, json) = race_count(&[&path]);
    assert_eq!(races, 1, "{json}");
    assert!(!json.contains("preproc_upload"), "decided by the database: {json}");
    assert!(
        json.contains("preprocessor flags from"),
        "the database used is named: {json}"
    );

    // The build that does not define it synchronizes: no race, nothing undecided.
    let (_dir, path) = with_compile_db("ccec -O2 -I../inc -c ../upload.cpp");
    let (races, json) = race_count(&[&path]);
    assert_eq!(races, 0, "{json}");
}

#[test]
fn compile_commands_names_a_database_explicitly() {
    let (dir, _) = with_compile_db("ccec -DUSE_EVENT_SYNC -c ../upload.cpp");
    // The source checked from elsewhere: not found next to it.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("upload.cpp");
    std::fs::copy(dir.path().join("op/upload.cpp"), &copy).unwrap();
    let (races, json) = race_count(&[copy.to_str().unwrap()]);
    assert!(
        json.contains("found when the `#if` at upload.cpp:6 takes arm 1"),
        "undecided without a database: {json}"
    );
    assert_eq!(races, 1, "{json}");
    let db = dir.path().join("op/build");
    let (races, json) = race_count(&[
        "--compile-commands",
        db.to_str().unwrap(),
        &dir.path().join("op/upload.cpp").to_string_lossy(),
    ]);
    assert_eq!(races, 1, "{json}");
    assert!(!json.contains("preproc_upload"), "{json}");
    let missing = syncguard(&[
        "check",
        "--compile-commands",
        "/nonexistent/compile_commands.json",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn ranks_on_the_command_line_choose_the_rank_counts() {
    let fixture = "examples/cpp/fail_mesh_allgather.cpp";
    let with = |ranks: &str| {
        let output = syncguard(&["check", "--format", "json", "--ranks", ranks, fixture]);
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        json["summary"]["errors"].as_u64().unwrap()
    };
    assert_eq!(
        with("2"),
        0,
        "one worker thread reports on notify 0, which is right for 2 ranks"
    );
    assert!(with("3") > 0);
    let bad = syncguard(&["check", "--ranks", "0..=100", fixture]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A macro whose body is one API call: its return is the macro's.
const RECORD_MACRO: &str = "#define RECORD(ev, s) aclrtRecordEvent(ev, s)
#define CHECK(x) do { if ((x) != ACL_SUCCESS) { return -1; } } while (0)
int Signal(aclrtStream s1, aclrtStream s2) {
    aclrtEvent ready;
    aclrtEvent done;
    CHECK(aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC));
    CHECK(aclrtCreateEventWithFlag(&done, ACL_EVENT_SYNC));
    CHECK(RECORD(ready, s1));
    CHECK(aclrtStreamWaitEvent(s2, ready));
    RECORD(done, s2);
    CHECK(aclrtSynchronizeEvent(done));
    CHECK(aclrtDestroyEvent(ready));
    CHECK(aclrtDestroyEvent(done));
    return 0;
}
";

#[test]
fn a_macro_expands_at_its_call_site() {
    let (_dir, path) = scratch_source("signal.cpp", RECORD_MACRO);
    let output = syncguard(&["check", "--format", "json", &path]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let found: Vec<(&str, u64)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["line"].as_u64().unwrap()))
        .collect();
    // Line 8 checks the macro's value; line 10 discards it.
    assert_eq!(found, [("SG701", 10)], "{json}");
    let converted = syncguard(&["convert", &path]);
    let text = String::from_utf8_lossy(&converted.stdout);
    assert!(text.contains("aclrtRecordEvent(ready, s1); // signal.cpp:8"), "{text}");
    assert!(text.contains("aclrtRecordEvent(done, s2); // signal.cpp:10"), "{text}");
}

/// An in-place call passes one buffer as two parameters: distinct by default, one
/// object with `--alias`, or with `aliases` in the configuration.
#[test]
fn aliased_parameters_are_one_object() {
    let (dir, path) = scratch_source(
        "inplace.cpp",
        "int Run(void *in, void *out, void *staging, aclrtStream a, aclrtStream b)
{
    if (aclrtMemsetAsync(out, 4096, 0, 4096, a) != ACL_SUCCESS) { return 1; }
    if (aclrtMemcpyAsync(staging, 4096, in, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, b) != ACL_SUCCESS) { return 1; }
    if (aclrtSynchronizeStream(a) != ACL_SUCCESS) { return 1; }
    if (aclrtSynchronizeStream(b) != ACL_SUCCESS) { return 1; }
    return 0;
}
",
    );
    let (races, json) = race_count(&["--isolated", &path]);
    assert_eq!(races, 0, "{json}");
    let (races, json) = race_count(&["--isolated", "--alias", "in,out", &path]);
    assert_eq!(races, 1, "{json}");
    std::fs::write(dir.path().join("syncguard.toml"), "aliases = [[\"out\", \"in\"]]\n").unwrap();
    let (races, json) = race_count(&[&path]);
    assert_eq!(races, 1, "{json}");
    let refused = syncguard(&["check", "--alias", "in", &path]);
    assert_eq!(refused.status.code(), Some(2), "one name is no group");
}
