//! `syncguard trace` end to end, without a device: small fake `libascendcl.so`,
//! `libhccl.so` and `libcudart.so` (tests/capture/*.c, the real prototypes, doing nothing
//! but returning handles) and programs linked against them with a planted bug are run
//! under `syncguard trace`, and `syncguard check` on what they wrote must report the bug.
//! The same programs without the bug must check clean. Needs `cc`; `python3` for the
//! ctypes tests and `make` for the example folder, which are skipped without them unless
//! `SYNCGUARD_TEST_REQUIRE_TOOLS=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod optional_tools;

fn python3(test: &str) -> Option<String> {
    let found = optional_tools::optional_tool(&["python3"], test, "Debian package `python3`")?;
    Some(found.to_string_lossy().into_owned())
}

const SYNCGUARD: &str = env!("CARGO_BIN_EXE_syncguard");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/capture")
}

/// The fake libraries and test programs, built into a fresh folder.
struct Built {
    dir: tempfile::TempDir,
}

impl Built {
    fn new() -> Built {
        let dir = tempfile::tempdir().unwrap();
        let built = Built { dir };
        std::fs::create_dir(built.lib()).unwrap();
        for (library, source) in [
            ("libascendcl.so", "fake_acl.c"),
            ("libhccl.so", "fake_hccl.c"),
            ("libcudart.so", "fake_cudart.c"),
        ] {
            built.cc(&["-shared", "-fPIC"], source, &built.lib().join(library), &[]);
        }
        built.program("reset_before_wait", &["-lascendcl"]);
        built.program("rank_order_deadlock", &["-lascendcl", "-lhccl"]);
        built.program("channel_notify_index", &["-lhccl"]);
        built.program("forked_helper", &["-lascendcl", "-lhccl"]);
        built.program("cuda_stream_race", &["-lcudart"]);
        built.program("threads", &["-lascendcl", "-lpthread"]);
        built
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn lib(&self) -> PathBuf {
        self.path("lib")
    }

    fn program(&self, name: &str, libraries: &[&str]) {
        let lib = self.lib();
        let mut link = vec![format!("-L{}", lib.display()), format!("-Wl,-rpath,{}", lib.display())];
        link.extend(libraries.iter().map(|l| l.to_string()));
        let link: Vec<&str> = link.iter().map(String::as_str).collect();
        self.cc(&["-g"], &format!("{name}.c"), &self.path(name), &link);
    }

    fn cc(&self, flags: &[&str], source: &str, out: &Path, link: &[&str]) {
        let status = Command::new("cc")
            .args(flags)
            .arg(format!("-I{}", fixtures().display()))
            .arg("-o")
            .arg(out)
            .arg(fixtures().join(source))
            .args(link)
            .status()
            .expect("the tests need a C compiler (`cc`)");
        assert!(status.success(), "cc failed on {source}");
    }

    /// `syncguard trace --out OUT -- ARGS...`, run in the build folder.
    fn trace(&self, out: &str, args: &[&str]) -> Output {
        Command::new(SYNCGUARD)
            .current_dir(self.dir.path())
            .args(["trace", "--out", out, "--"])
            .args(args)
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env_remove("RANK")
            .env_remove("RANK_ID")
            .output()
            .unwrap()
    }

    /// `syncguard check --format json` on `paths`: the report, and what it said on stderr.
    fn check_json(&self, paths: &[&str]) -> (serde_json::Value, String) {
        let output = Command::new(SYNCGUARD)
            .current_dir(self.dir.path())
            .args(["check", "--format", "json"])
            .args(paths)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("not JSON: {stderr}"));
        (json, stderr)
    }

    /// The finding codes of `syncguard check` on `paths`, by severity.
    fn check(&self, paths: &[&str]) -> Findings {
        let (json, _) = self.check_json(paths);
        let mut findings = Findings::default();
        for diagnostic in json["diagnostics"].as_array().unwrap() {
            let code = diagnostic["code"].as_str().unwrap().to_string();
            let message = diagnostic["message"].as_str().unwrap().to_string();
            match diagnostic["severity"].as_str().unwrap() {
                "error" => findings.errors.push((code, message)),
                _ => findings.others.push((code, message)),
            }
        }
        findings
    }

    /// The rank files `syncguard trace` wrote into `out`, one per process.
    fn trace_files(&self, out: &str) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.path(out))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| !is_merged(path))
            .collect();
        files.sort();
        files
    }

    /// The merge of the run's rank files that `syncguard trace` wrote beside them.
    fn merged_file(&self, out: &str) -> PathBuf {
        let merged: Vec<PathBuf> = std::fs::read_dir(self.path(out))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| is_merged(path))
            .collect();
        assert_eq!(merged.len(), 1, "one merged file: {merged:?}");
        merged[0].clone()
    }
}

fn is_merged(path: &Path) -> bool {
    path.file_name().unwrap().to_string_lossy().starts_with("run-")
}

/// A place a finding names: file, line, and the related label's message (empty for the
/// primary place).
type Place = (String, u64, String);

/// Every finding of a report with its code, and each place it names, the primary first.
fn places(json: &serde_json::Value) -> Vec<(String, Vec<Place>)> {
    let place = |value: &serde_json::Value, message: &str| {
        (
            value["file"].as_str().unwrap().to_string(),
            value["line"].as_u64().unwrap(),
            message.to_string(),
        )
    };
    json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|diagnostic| {
            let mut places = vec![place(diagnostic, "")];
            for related in diagnostic["related"].as_array().unwrap() {
                places.push(place(related, related["message"].as_str().unwrap()));
            }
            (diagnostic["code"].as_str().unwrap().to_string(), places)
        })
        .collect()
}

/// The 1-based line of `file` that contains `text`.
fn line_of(file: &Path, text: &str) -> u64 {
    let content = std::fs::read_to_string(file).unwrap();
    content
        .lines()
        .position(|line| line.contains(text))
        .unwrap_or_else(|| panic!("{text} is not in {}", file.display())) as u64
        + 1
}

#[derive(Debug, Default)]
struct Findings {
    errors: Vec<(String, String)>,
    others: Vec<(String, String)>,
}

impl Findings {
    fn error_codes(&self) -> Vec<&str> {
        let mut codes: Vec<&str> = self.errors.iter().map(|(code, _)| code.as_str()).collect();
        codes.sort();
        codes.dedup();
        codes
    }

    fn has(&self, code: &str, text: &str) -> bool {
        self.errors
            .iter()
            .chain(&self.others)
            .any(|(c, message)| c == code && message.contains(text))
    }
}

fn succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_reset_before_the_second_wait_is_found_in_a_traced_c_program() {
    let built = Built::new();
    succeeded(&built.trace("bug", &["./reset_before_wait"]));
    assert_eq!(built.check(&["bug"]).error_codes(), ["SG103"]);
    succeeded(&built.trace("fixed", &["./reset_before_wait", "fixed"]));
    assert_eq!(built.check(&["fixed"]).error_codes(), Vec::<&str>::new());
}

#[test]
fn a_trace_line_names_the_arguments_outputs_and_caller() {
    let built = Built::new();
    succeeded(&built.trace("out", &["./reset_before_wait"]));
    let files = built.trace_files("out");
    assert_eq!(files.len(), 1, "one process, one file");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(".jsonl") && name.contains('-'), "{name}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["syncguard_trace"], 1);
    assert!(lines[0]["run"].is_string() && lines[0]["pid"].is_u64());
    let create = lines.iter().find(|l| l["api"] == "aclrtCreateEventWithFlag").unwrap();
    assert_eq!(create["args"]["flag"], 1);
    assert!(create["args"]["event"].as_str().unwrap().starts_with("0x"));
    assert_eq!(create["ret"], 0);
    assert!(create["ts"].is_u64() && create["thread"].is_u64());
    assert!(
        create["caller"]["object"]
            .as_str()
            .unwrap()
            .ends_with("reset_before_wait")
    );
    // With debug information, addr2line gives the call's source line.
    let source = std::fs::read_to_string(fixtures().join("reset_before_wait.c")).unwrap();
    let reset_line = source
        .lines()
        .position(|l| l.contains("aclrtResetEvent(ready, first)"))
        .unwrap()
        + 1;
    let reset = lines.iter().find(|l| l["api"] == "aclrtResetEvent").unwrap();
    assert!(
        reset["loc"]["file"].as_str().unwrap().ends_with("reset_before_wait.c"),
        "{reset}"
    );
    assert_eq!(reset["loc"]["line"].as_u64(), Some(reset_line as u64), "{reset}");
    // The failing call: its error reaches the program (which exits 4 otherwise) and the trace.
    let failed = lines
        .iter()
        .find(|l| l["api"] == "aclrtDestroyStream" && l["args"]["stream"] == "0x0")
        .unwrap();
    assert_eq!(failed["ret"], 100000);
    let end = lines.last().unwrap();
    assert_eq!(end["syncguard_capture_end"], 1);
    assert_eq!(end["calls"].as_u64().unwrap() as usize, lines.len() - 2);
}

#[test]
fn a_rank_order_deadlock_across_two_processes_is_found() {
    let built = Built::new();
    std::fs::create_dir(built.path("keys")).unwrap();
    let both = "./rank_order_deadlock 0 keys & ./rank_order_deadlock 1 keys; wait";
    succeeded(&built.trace("run", &["sh", "-c", both]));
    assert_eq!(built.trace_files("run").len(), 2, "one file per process");
    let findings = built.check(&["run"]);
    assert!(
        findings.has("SG501", "rank 0") && findings.has("SG501", "rank 1"),
        "{findings:?}"
    );
    // The two files named one by one are the same run.
    let files: Vec<String> = built
        .trace_files("run")
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    let named = built.check(&[&files[0], &files[1]]);
    assert!(named.has("SG501", "deadlock"), "{named:?}");
}

#[test]
fn channel_descriptors_are_captured_with_their_notify_counts() {
    let built = Built::new();
    let both = |fixed: &str| format!("./channel_notify_index 0 {fixed} & ./channel_notify_index 1 {fixed}; wait");
    succeeded(&built.trace("bug", &["sh", "-c", &both("")]));
    let line = std::fs::read_to_string(&built.trace_files("bug")[0]).unwrap();
    let acquire = line
        .lines()
        .find(|l| l.contains("\"HcclChannelAcquire\""))
        .expect("HcclChannelAcquire is traced");
    assert!(
        acquire.contains("\"channelProtocol\":\"COMM_PROTOCOL_HCCS\",\"notifyNum\":1}"),
        "{acquire}"
    );
    let findings = built.check(&["bug"]);
    assert_eq!(findings.error_codes(), ["SG302"], "{findings:?}");
    assert!(
        findings.has("SG302", "uses notify index 1, but channel"),
        "{findings:?}"
    );
    succeeded(&built.trace("fixed", &["sh", "-c", &both("fixed")]));
    assert_eq!(built.check(&["fixed"]).error_codes(), Vec::<&str>::new());
    // A descriptor whose header does not give its size is not guessed at: reported.
    succeeded(&built.trace("unknown", &["sh", "-c", &both("uninitialized")]));
    let findings = built.check(&["unknown"]);
    assert!(
        findings.has(
            "SG002",
            "HcclChannelDesc object, found the string \"unreadable: header.size 0\""
        ),
        "{findings:?}"
    );
}

#[test]
fn a_forked_helper_does_not_claim_its_parents_rank() {
    let built = Built::new();
    succeeded(&built.trace("run", &["./forked_helper"]));
    assert_eq!(built.trace_files("run").len(), 2, "the helper writes a file of its own");
    let findings = built.check(&["run"]);
    assert_eq!(findings.error_codes(), Vec::<&str>::new(), "{findings:?}");
    assert!(
        findings.has("SG002", "3 calls of a process forked from pid") && findings.has("SG002", "(rank 0)"),
        "{findings:?}"
    );
}

#[test]
fn a_missing_rank_is_reported_and_the_run_is_not_checked() {
    let built = Built::new();
    std::fs::create_dir(built.path("keys")).unwrap();
    // Rank 1's key is there already; only rank 0 runs under the tracer.
    std::fs::write(built.path("keys/key1"), "notify-of-rank-1").unwrap();
    succeeded(&built.trace("half", &["./rank_order_deadlock", "0", "keys"]));
    let findings = built.check(&["half"]);
    assert!(findings.has("SG002", "rank 1 of 2 has no trace file"), "{findings:?}");
    assert_eq!(findings.error_codes(), ["SG002"], "no deadlock guessed: {findings:?}");
}

#[test]
fn a_python_program_calling_acl_through_ctypes_is_traced() {
    let Some(python) = python3("the ctypes trace test") else {
        return;
    };
    let built = Built::new();
    let script = fixtures().join("reset_before_wait.py");
    let library = built.lib().join("libascendcl.so");
    let (script_path, library) = (script.to_str().unwrap(), library.to_str().unwrap());
    succeeded(&built.trace("bug", &[&python, script_path, library]));
    assert_eq!(built.check(&["bug"]).error_codes(), ["SG103"]);
    succeeded(&built.trace("fixed", &[&python, script_path, library, "fixed"]));
    assert_eq!(built.check(&["fixed"]).error_codes(), Vec::<&str>::new());
}

#[test]
fn a_call_from_python_is_located_at_the_scripts_line() {
    // The C caller of a ctypes call is libffi: the location comes from the Python stack.
    let Some(python) = python3("the Python location test") else {
        return;
    };
    let built = Built::new();
    let script = fixtures().join("reset_before_wait.py");
    let library = built.lib().join("libascendcl.so");
    succeeded(&built.trace("bug", &[&python, script.to_str().unwrap(), library.to_str().unwrap()]));
    let text = std::fs::read_to_string(&built.trace_files("bug")[0]).unwrap();
    let calls: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|line: &serde_json::Value| line["api"].is_string())
        .collect();
    assert_eq!(calls.len(), 18, "{text}");
    let source = std::fs::read_to_string(&script).unwrap();
    let source: Vec<&str> = source.lines().collect();
    // Streams and the event are made in `new`, by `create(...)`: the innermost frame.
    let made_in_new = line_of(&script, "check(create(ctypes.byref(handle), *args))");
    for call in &calls {
        let api = call["api"].as_str().unwrap();
        assert_eq!(call["loc"]["file"].as_str(), Some(script.to_str().unwrap()), "{call}");
        let line = call["loc"]["line"].as_u64().unwrap();
        if api.starts_with("aclrtCreate") {
            assert_eq!(line, made_in_new, "{call}");
        } else {
            let called = format!("acl.{api}(");
            assert!(source[line as usize - 1].contains(&called), "{call}: line {line}");
        }
    }
    let reset_line = line_of(&script, "acl.aclrtResetEvent(ready, first)");
    let reset = calls.iter().find(|call| call["api"] == "aclrtResetEvent").unwrap();
    assert_eq!(reset["loc"]["line"].as_u64(), Some(reset_line), "{reset}");
    // The finding is placed on the script's line, the trace line goes with it.
    let (json, _) = built.check_json(&["bug"]);
    let findings = places(&json);
    assert_eq!(findings.len(), 1, "{json}");
    let (code, places) = &findings[0];
    assert_eq!(code, "SG103");
    assert_eq!(places[0].0, script.to_str().unwrap(), "{json}");
    assert_eq!(places[0].1, reset_line, "{json}");
    assert!(
        places
            .iter()
            .any(|(file, _, message)| is_merged(Path::new(file)) && message == "the call, in the trace"),
        "{json}"
    );
}

#[test]
fn the_merged_trace_is_written_beside_the_rank_files_and_checked_once() {
    let built = Built::new();
    succeeded(&built.trace("bug", &["./reset_before_wait"]));
    let rank = built.trace_files("bug")[0].clone();
    let merged = built.merged_file("bug");
    let header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&merged).unwrap().lines().next().unwrap()).unwrap();
    let rank_header: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&rank).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["run"], rank_header["run"]);
    assert_eq!(
        merged.file_name().unwrap().to_string_lossy(),
        format!("run-{}.jsonl", rank_header["run"].as_str().unwrap())
    );
    assert_eq!(
        header["merged"]["0"].as_str(),
        Some(&*rank.file_name().unwrap().to_string_lossy())
    );
    // The folder holds both: the run is checked once, and every place named exists.
    let (json, _) = built.check_json(&["bug"]);
    assert_eq!(json["summary"]["files"], 1, "{json}");
    let findings = places(&json);
    assert_eq!(findings.len(), 1, "{json}");
    let (code, places) = &findings[0];
    assert_eq!(code, "SG103");
    for (file, ..) in places {
        assert!(built.path(file).is_file(), "{file} does not exist: {json}");
    }
    let in_trace = places
        .iter()
        .find(|(.., message)| message == "the call, in the trace")
        .expect("the trace line is named");
    assert_eq!(built.path(&in_trace.0), merged);
    assert_eq!(in_trace.1, line_of(&merged, "\"aclrtResetEvent\""));
    // Named one by one, the rank file and its merge are one run too.
    let named = [rank.to_str().unwrap(), merged.to_str().unwrap()];
    assert_eq!(built.check(&named).errors.len(), 1);
    // Alone, the merged file is an ordinary trace.
    assert_eq!(built.check(&[merged.to_str().unwrap()]).error_codes(), ["SG103"]);
}

#[test]
fn rank_files_without_their_merge_are_named_line_by_line() {
    let built = Built::new();
    succeeded(&built.trace("bug", &["./reset_before_wait"]));
    let rank = built.trace_files("bug")[0].clone();
    // Copied elsewhere without the merged file: findings point at the rank file's lines.
    std::fs::create_dir(built.path("copied")).unwrap();
    let copy = built.path("copied").join(rank.file_name().unwrap());
    std::fs::copy(&rank, &copy).unwrap();
    let reset_line = line_of(&copy, "\"aclrtResetEvent\"");
    let (json, _) = built.check_json(&["copied"]);
    let findings = places(&json);
    assert_eq!(findings.len(), 1, "{json}");
    for (file, ..) in &findings[0].1 {
        assert!(built.path(file).is_file(), "{file} does not exist: {json}");
    }
    let in_trace = findings[0]
        .1
        .iter()
        .find(|(.., message)| message == "the call, in the trace")
        .expect("the trace line is named");
    assert_eq!((built.path(&in_trace.0), in_trace.1), (copy.clone(), reset_line));
    assert_eq!(
        std::fs::read_dir(built.path("copied")).unwrap().count(),
        1,
        "check writes nothing"
    );
    // What merging reports is on the rank file's own header.
    let mut cut = std::fs::read_to_string(&copy).unwrap();
    cut.truncate(cut.trim_end().rfind('\n').unwrap() + 1);
    std::fs::write(&copy, cut).unwrap();
    let (json, _) = built.check_json(&["copied"]);
    let unclosed = places(&json)
        .into_iter()
        .find(|(code, places)| code == "SG002" && places[0].0.starts_with("copied/"))
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(unclosed.1[0].1, 1, "{json}");
    // A merge its rank files no longer match is skipped, not checked beside them.
    let merged = built.merged_file("bug");
    let text = std::fs::read_to_string(&merged).unwrap();
    let without_last: Vec<&str> = text.lines().collect();
    std::fs::write(&merged, without_last[..without_last.len() - 1].join("\n") + "\n").unwrap();
    let (json, stderr) = built.check_json(&["bug"]);
    let findings = places(&json);
    assert_eq!(findings.len(), 1, "{json}");
    assert!(stderr.contains("is not the merge of run"), "{stderr}");
    let in_trace = findings[0]
        .1
        .iter()
        .find(|(.., message)| message == "the call, in the trace")
        .unwrap();
    assert_eq!(built.path(&in_trace.0), rank);
}

#[test]
fn a_race_between_cuda_streams_is_found() {
    let built = Built::new();
    succeeded(&built.trace("bug", &["./cuda_stream_race"]));
    assert_eq!(built.check(&["bug"]).error_codes(), ["SG601"]);
    succeeded(&built.trace("fixed", &["./cuda_stream_race", "fixed"]));
    assert_eq!(built.check(&["fixed"]).error_codes(), Vec::<&str>::new());
}

#[test]
fn a_program_ended_by_sigterm_keeps_its_calls_and_exit_status() {
    let built = Built::new();
    let output = built.trace("term", &["./reset_before_wait", "term"]);
    assert_eq!(
        output.status.code(),
        Some(128 + 15),
        "the program's status: killed by SIGTERM"
    );
    let text = std::fs::read_to_string(&built.trace_files("term")[0]).unwrap();
    assert!(
        text.contains("aclrtSynchronizeStream"),
        "the last calls before the signal: {text}"
    );
    assert!(text.lines().last().unwrap().contains("syncguard_capture_end"));
    assert_eq!(built.check(&["term"]).error_codes(), ["SG103"]);
}

#[test]
fn a_file_cut_mid_line_is_reported_not_dropped() {
    let built = Built::new();
    succeeded(&built.trace("cut", &["./reset_before_wait"]));
    let file = &built.trace_files("cut")[0];
    let text = std::fs::read_to_string(file).unwrap();
    // As if the process died while its last buffer was being written.
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[..lines.len() - 2].join("\n") + "\n" + &lines[lines.len() - 2][..20];
    std::fs::write(file, kept).unwrap();
    let findings = built.check(&["cut"]);
    assert!(findings.has("SG002", "did not close its trace"), "{findings:?}");
    assert!(findings.has("SG002", "not valid JSON"), "{findings:?}");
    assert!(findings.has("SG103", "wait forever"), "{findings:?}");
}

#[test]
fn every_call_of_every_thread_is_written_whole() {
    let built = Built::new();
    // 2 + 4 threads x 2,000 calls: several buffers' worth per thread.
    succeeded(&built.trace("traced", &["./threads", "4", "2000"]));
    let text = std::fs::read_to_string(&built.trace_files("traced")[0]).unwrap();
    let mut per_thread: std::collections::BTreeMap<u64, usize> = Default::default();
    for line in text.lines().skip(1) {
        let line: serde_json::Value = serde_json::from_str(line).expect("a whole JSON line");
        if let Some(thread) = line["thread"].as_u64() {
            *per_thread.entry(thread).or_default() += 1;
        }
    }
    let counts: Vec<usize> = per_thread.values().copied().collect();
    assert_eq!(counts.len(), 5, "the main thread and four others: {counts:?}");
    assert_eq!(
        counts.iter().filter(|&&n| n == 6 + (2000 - 6) / 4 * 4).count(),
        4,
        "{counts:?}"
    );
    assert_eq!(built.check(&["traced"]).error_codes(), Vec::<&str>::new());
}

#[test]
fn the_rank_comes_from_the_environment_without_hccl() {
    let built = Built::new();
    let output = Command::new(SYNCGUARD)
        .current_dir(built.dir.path())
        .args(["trace", "--out", "env", "--", "./reset_before_wait"])
        .env("XDG_CACHE_HOME", built.path("cache"))
        .env("RANK_ID", "2")
        .env("RANK_SIZE", "3")
        .output()
        .unwrap();
    succeeded(&output);
    let header = std::fs::read_to_string(&built.trace_files("env")[0]).unwrap();
    assert!(
        header
            .lines()
            .next()
            .unwrap()
            .contains("\"rank\": 2, \"world_size\": 3"),
        "{header}"
    );
    let findings = built.check(&["env"]);
    assert!(
        findings.has("SG002", "ranks 0, 1 of 3 have no trace file"),
        "{findings:?}"
    );
}

#[test]
fn the_exit_status_is_the_programs() {
    let built = Built::new();
    let output = built.trace("out", &["sh", "-c", "exit 7"]);
    assert_eq!(output.status.code(), Some(7));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no trace was written"));
    let missing = built.trace("out", &["./no-such-program"]);
    assert_eq!(missing.status.code(), Some(2));
}

// The list the interposer is generated from, read as build.rs reads it.
#[allow(dead_code)]
#[path = "../capture/spec.rs"]
mod spec;

/// What differs between the intercepted functions and the API catalogue: each recorded
/// function must be a catalogue API, written with the catalogue's parameter names, in its
/// order, and its output parameter.
fn catalogue_mismatches(wrappers: &[spec::Wrapper]) -> Vec<String> {
    use syncguard_model::api;
    let mut problems = Vec::new();
    for wrapper in wrappers.iter().filter(|w| !w.untraced) {
        let at = format!("capture/apis.list:{} ({})", wrapper.line, wrapper.symbol);
        let Some(api) = api::lookup(&wrapper.api) else {
            problems.push(format!("{at}: `{}` is not in the catalogue", wrapper.api));
            continue;
        };
        let recorded = wrapper.params.iter().filter(|p| p.recorded);
        let (outputs, inputs): (Vec<&spec::CParam>, Vec<&spec::CParam>) =
            recorded.partition(|p| p.ty.is_output() && p.name == api.output);
        let names: Vec<&str> = inputs.iter().map(|p| p.name.as_str()).collect();
        let expected: Vec<&str> = api.positional_params().map(|p| p.name).collect();
        if names != expected {
            problems.push(format!(
                "{at}: parameters {names:?}, the catalogue has {}",
                api.signature()
            ));
        }
        let output: Vec<&str> = outputs.iter().map(|p| p.name.as_str()).collect();
        let expected_output: Vec<&str> = [api.output].into_iter().filter(|o| !o.is_empty()).collect();
        if output != expected_output {
            problems.push(format!(
                "{at}: output {output:?}, the catalogue has {expected_output:?}"
            ));
        }
        if !["acl", "hccl", "cudart", "cuda"].contains(&wrapper.library.as_str()) {
            problems.push(format!("{at}: unknown library `{}`", wrapper.library));
        }
    }
    problems
}

#[test]
fn every_intercepted_function_matches_the_api_catalogue() {
    let list = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("capture/apis.list")).unwrap();
    let wrappers = spec::parse(&list).unwrap();
    assert!(wrappers.len() > 50);
    let mut symbols: Vec<&str> = wrappers.iter().map(|w| w.symbol.as_str()).collect();
    symbols.sort();
    symbols.dedup();
    assert_eq!(symbols.len(), wrappers.len(), "a symbol is intercepted twice");
    assert_eq!(catalogue_mismatches(&wrappers), Vec::<String>::new());
}

#[test]
fn a_drifted_prototype_is_caught() {
    let drifted = "acl aclrtRecordEvent(handle evt, handle stream)\n\
                   acl aclrtCreateEvent(handle_out ev)\n\
                   acl aclrtStreamWaitEvent(handle event, handle stream)\n\
                   acl aclrtMadeUp()\n";
    let problems = catalogue_mismatches(&spec::parse(drifted).unwrap());
    // aclrtCreateEvent is wrong twice: `ev` is no parameter, and its output is missing.
    assert_eq!(problems.len(), 5, "{problems:#?}");
}

#[test]
fn the_example_folder_traces_and_checks_without_a_device() {
    // What its README says: `make check` builds the fake libraries and the two
    // programs, traces each with its bug and with `fixed`, and checks the traces
    // (the buggy ones must fail, the fixed ones pass).
    let Some(make) = optional_tools::optional_tool(
        &["make"],
        "the trace-without-device example test",
        "Debian package `make`",
    ) else {
        return;
    };
    let build = tempfile::tempdir().unwrap();
    let output = Command::new(make)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/trace-without-device"))
        .arg("check")
        .arg(format!("SYNCGUARD={SYNCGUARD}"))
        .arg(format!("BUILD={}", build.path().display()))
        .output()
        .expect("the example needs `make`");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("[SG103"), "{said}");
    assert!(said.contains("[SG601 data-race]"), "{said}");
    assert_eq!(said.matches("checked 1 file: 0 errors").count(), 2, "{said}");
}
