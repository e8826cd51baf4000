//! The Python frontend through the command line: every fixture in
//! `python/tests/fixtures` gets the codes its `.sync` twin gets (plus SG701, which
//! only the Python can show) and that its `# expect:` line names, and so does every
//! example in `examples/python`; findings point into the Python files.

mod common;

use common::{codes, expected_codes, syncguard};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The fixture folders of the shapes the frontend reads.
const SHAPES: [&str; 9] = [
    "python/tests/fixtures/pyacl",
    "python/tests/fixtures/torch",
    "python/tests/fixtures/vllm",
    "python/tests/fixtures/tensors",
    "python/tests/fixtures/branches",
    "python/tests/fixtures/received",
    "python/tests/fixtures/threads",
    "python/tests/fixtures/devices",
    "python/tests/fixtures/graphs",
];

/// Codes the frontend reports from the Python alone: a `.sync` program has no return
/// codes to discard.
const SOURCE_ONLY: [&str; 1] = ["SG701"];

/// The `# expect:` line of a Python file.
fn expected(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("# expect:"))
        .unwrap_or_else(|| panic!("{} has no `# expect:` line", path.display()));
    expected_codes(line)
}

fn python_files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_gets_the_codes_of_its_sync_twin() {
    let mut checked = 0;
    for shape in SHAPES {
        for source in python_files(shape) {
            let twin = source.with_extension("sync");
            let from_source = codes(&source);
            let comparable: BTreeSet<String> = from_source
                .iter()
                .filter(|code| !SOURCE_ONLY.contains(&code.as_str()))
                .cloned()
                .collect();
            assert_eq!(comparable, codes(&twin), "{} and its twin", source.display());
            assert_eq!(from_source, expected(&source), "{}", source.display());
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} fixtures");
}

#[test]
fn every_fixture_shape_has_a_failing_and_a_passing_twin() {
    for shape in SHAPES {
        let names: Vec<String> = python_files(shape)
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("pass_")),
            "{shape} has no passing fixture"
        );
        for name in names.iter().filter_map(|n| n.strip_prefix("fail_")) {
            assert!(
                names.contains(&format!("pass_{name}")),
                "{shape}: fail_{name} has no pass_ twin"
            );
        }
    }
}

#[test]
fn every_python_example_reports_what_it_expects() {
    let examples = python_files("examples/python");
    assert!(examples.len() >= 4);
    for example in examples {
        assert_eq!(codes(&example), expected(&example), "{}", example.display());
    }
}

#[test]
fn a_race_between_torch_streams_points_at_the_python_lines() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "python/tests/fixtures/torch/fail_wait_stream.py",
    ]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_discarded_pyacl_return_code_is_reported() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "python/tests/fixtures/pyacl/fail_checked_returns.py",
    ]);
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_host_read_of_a_pending_copy_is_reported() {
    let output = syncguard(&[
        "check",
        "--color",
        "never",
        "python/tests/fixtures/tensors/fail_nonblocking_copy.py",
    ]);
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn convert_prints_the_extracted_program_with_source_lines() {
    let output = syncguard(&["convert", "python/tests/fixtures/pyacl/pass_wait_recorded.py"]);
    assert!(output.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

fn scratch(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path.to_str().unwrap().to_string())
}

/// Two entry points: `leaky` never destroys its event, `clean` does.
const TWO_ENTRIES: &str = "import acl

def leaky():
    ev, ret = acl.rt.create_event()
    assert ret == 0

def clean():
    ev, ret = acl.rt.create_event()
    assert ret == 0
    assert acl.rt.destroy_event(ev) == 0
";

#[test]
fn entry_selects_the_functions_checked() {
    let (_dir, path) = scratch("ops.py", TWO_ENTRIES);
    let all = syncguard(&["check", "--format", "json", &path]);
    assert!(String::from_utf8_lossy(&all.stdout).contains("SG107"));
    for entry in ["clean", "ops:clean"] {
        let only = syncguard(&["check", "--format", "json", "--entry", entry, &path]);
        let text = String::from_utf8_lossy(&only.stdout);
        assert!(!text.contains("SG107"), "--entry {entry}: {text}");
        assert_eq!(only.status.code(), Some(0));
    }
    let leaky = syncguard(&["check", "--entry", "ops:leaky", &path]);
    assert!(String::from_utf8_lossy(&leaky.stdout).contains("SG107"));
}

#[test]
fn a_helper_in_another_file_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("helpers.py"),
        "import acl\n\ndef make_event():\n    ev, ret = acl.rt.create_event()\n    assert ret == 0\n    return ev\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("main.py"),
        "from helpers import make_event\n\ndef main():\n    ev = make_event()\n",
    )
    .unwrap();
    let output = syncguard(&["check", "--color", "never", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SG107"), "{text}");
    assert!(text.contains("helpers.py:4"), "{text}");
}

#[test]
fn python_without_sync_calls_says_so() {
    let (_dir, path) = scratch("math_utils.py", "def add(a, b):\n    return a + b\n");
    let output = syncguard(&["check", &path]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Python file calls a synchronization API"), "{stderr}");
}

#[test]
fn unknown_conditions_become_choices() {
    let (_dir, path) = scratch(
        "branchy.py",
        "import torch\n\ndef run(flag):\n    s = torch.npu.Stream()\n    x = torch.zeros(8, device='npu')\n    if flag:\n        s.wait_stream(torch.npu.current_stream())\n    with torch.npu.stream(s):\n        y = x * 2\n    s.synchronize()\n",
    );
    let output = syncguard(&["check", "--color", "never", &path]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SG601"), "{text}");
    // The choice the race needs, in the code's terms: without the wait, `flag` is false.
    assert!(
        text.contains("Note: found when the condition at branchy.py:6 is false"),
        "{text}"
    );
    assert!(!text.contains("branch_branchy"), "{text}");
    let converted = syncguard(&["convert", &path]);
    let program = String::from_utf8_lossy(&converted.stdout);
    assert!(program.contains("param branch_branchy_L6 in 0..=1;"), "{program}");
}

#[test]
fn unreadable_python_never_fails_the_run() {
    let (_dir, path) = scratch(
        "broken.py",
        "import acl\ndef main(:\n    s, ret = acl.rt.create_stream(\n    x = ((((((((((1\n",
    );
    let output = syncguard(&["check", &path]);
    assert_ne!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A pyACL sample that polls its event before reading the copied result.
const POLLING: &str = "import time
import acl

ACL_EVENT_RECORDED_STATUS_COMPLETE = 1


def main():
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    done, ret = acl.rt.create_event()
    assert ret == 0
    host, ret = acl.rt.malloc_host(4096)
    assert ret == 0
    dev, ret = acl.rt.malloc(4096, 0)
    assert ret == 0
    ret = acl.rt.memcpy_async(host, 4096, dev, 4096, 2, stream)
    assert ret == 0
    ret = acl.rt.record_event(done, stream)
    assert ret == 0
    while True:
        status, ret = acl.rt.query_event_status(done)
        if status == ACL_EVENT_RECORDED_STATUS_COMPLETE:
            break
        time.sleep(0.001)
    data = acl.util.ptr_to_numpy(host, (1024,), 11)
    assert acl.rt.destroy_event(done) == 0
    return data
";

#[test]
fn a_polling_loop_orders_what_follows() {
    let (_dir, path) = scratch("poll.py", POLLING);
    let output = syncguard(&["check", "--format", "json", &path]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let converted = syncguard(&["convert", &path]);
    let program = String::from_utf8_lossy(&converted.stdout);
    assert!(
        program.contains("while acl.rt.query_event_status(done) != ACL_EVENT_RECORDED_STATUS_COMPLETE {"),
        "{program}"
    );
    // Without the loop, the host reads the copy while it may still run.
    let (_dir, path) = scratch("no_poll.py", &POLLING.replace("    while True:", "    while False:"));
    let output = syncguard(&["check", "--format", "json", &path]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("SG602"));
}

#[test]
fn streams_kept_in_a_dict_are_followed() {
    let (_dir, path) = scratch(
        "micro_batches.py",
        "import torch

class Streams:
    def __init__(self):
        self.streams = {\"mb0\": torch.npu.Stream(), \"mb1\": torch.npu.Stream()}

    def get(self, name):
        return self.streams[name]

def overlap():
    ctx = Streams()
    x = torch.empty(16, device=\"npu\")
    with torch.npu.stream(ctx.get(\"mb0\")):
        y = x @ x
    with torch.npu.stream(ctx.get(\"mb1\")):
        z = y + 1
    for stream in ctx.streams.values():
        stream.synchronize()
",
    );
    let output = syncguard(&["check", "--color", "never", &path]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SG601"), "{text}");
    // Named as the code writes them where it makes them.
    assert!(
        text.contains("kernel `matmul` on stream self.streams[\"mb0\"]"),
        "{text}"
    );
    assert!(text.contains("kernel `add` on stream self.streams[\"mb1\"]"), "{text}");
}

#[test]
fn a_helper_called_through_its_module_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("events.py"),
        "import acl\n\ndef make_event():\n    ev, ret = acl.rt.create_event()\n    assert ret == 0\n    return ev\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "import os\nimport events\n\ndef main():\n    ev = events.make_event()\n    path = os.path.join(\"a\", \"b\")\n    return path\n",
    )
    .unwrap();
    let output = syncguard(&["check", "--color", "never", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SG107"), "{text}");
    assert!(text.contains("events.py:4"), "{text}");
}

/// A helper's result, a tuple's streams, an unnamed product: findings name them as the
/// Python does (`x`, `side`, `matmul`), not as the helper or the extraction did.
const NAMED: &str = "import torch

def make_input():
    t = torch.randn(64, device='npu')
    return t * 2

def step(w):
    side, other = torch.npu.Stream(), torch.npu.Stream()
    x = make_input()
    with torch.npu.stream(side):
        y = torch.relu(x @ w)
    return y
";

#[test]
fn findings_name_the_python_values() {
    let (_dir, path) = scratch("named.py", NAMED);
    let output = syncguard(&["check", "--format", "concise", &path]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("buffer x "), "{text}");
    assert!(text.contains("on stream side"), "{text}");
    assert!(!text.contains("out"), "{text}");
    let converted = syncguard(&["convert", &path]);
    let program = String::from_utf8_lossy(&converted.stdout);
    assert!(program.contains("let matmul = "), "{program}");
    assert!(program.contains("let other = acl.rt.create_stream();"), "{program}");
}

/// A tensor passed as two parameters (an in-place operation's input and output):
/// distinct by default, one object with `--alias`.
#[test]
fn aliased_parameters_are_one_object() {
    let (_dir, path) = scratch(
        "inplace.py",
        "import torch\nimport torch_npu\n\n\ndef run(x, y, side):\n    z = torch.relu(x)\n    with torch.npu.stream(side):\n        y.mul_(2)\n    side.synchronize()\n    return z\n",
    );
    let codes_with = |extra: &[&str]| {
        let mut args = vec!["check", "--isolated", "--format", "concise"];
        args.extend_from_slice(extra);
        args.push(&path);
        String::from_utf8_lossy(&syncguard(&args).stdout).into_owned()
    };
    assert!(!codes_with(&[]).contains("SG601"), "{}", codes_with(&[]));
    let aliased = codes_with(&["--alias", "x,y"]);
    assert!(aliased.contains("SG601 [error] data race on buffer x"), "{aliased}");
}

/// A Python name that is a `.sync` keyword is renamed, so what `convert` prints reads back.
#[test]
fn python_names_spelled_as_sync_keywords_are_renamed() {
    let (_dir, path) = scratch(
        "keywords.py",
        "import torch\n\ndef main():\n    aicore = torch.npu.Stream()\n    mut = torch.npu.Event()\n    with torch.npu.stream(aicore):\n        mut.record()\n    mut.synchronize()\n",
    );
    let converted = syncguard(&["convert", &path]);
    assert!(converted.status.success());
    let program = String::from_utf8_lossy(&converted.stdout).to_string();
    assert!(program.contains("let aicore_ ="), "{program}");
    assert!(program.contains("let mut_ ="), "{program}");
    let (_sync_dir, sync_path) = scratch("keywords.sync", &program);
    let checked = syncguard(&["check", &sync_path]);
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "{report}");
    assert!(report.contains("0 errors, 0 warnings"), "{report}");
}
