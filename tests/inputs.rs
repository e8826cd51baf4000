//! Input robustness at the command line: option values, files and folders, odd bytes.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longer than any of these runs needs: past it, the run hangs.
const HANG: Duration = Duration::from_secs(60);

fn syncguard(args: &[&str]) -> Output {
    syncguard_os(args.iter().map(OsStr::new), None)
}

/// Runs syncguard with `stdin` as standard input, killing it if it hangs.
fn syncguard_os<'a>(args: impl IntoIterator<Item = &'a OsStr>, stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    // Read while waiting: a child blocked on a full pipe would look hung.
    let stdout = read_in_background(child.stdout.take().unwrap());
    let stderr = read_in_background(child.stderr.take().unwrap());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            child.kill().unwrap();
            panic!("syncguard hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).unwrap();
        bytes
    })
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn out_of_range_smt_timeouts_are_usage_errors() {
    for value in [
        "1e20s",
        "1e300",
        "-1s",
        "0",
        "NaNs",
        "infms",
        "1e-12s",
        "1e-10ms",
        "100000000s",
    ] {
        let output = syncguard(&["check", &format!("--smt-timeout={value}"), "tests/cli/clean.sync"]);
        assert_eq!(output.status.code(), Some(2), "{value}: {}", stderr(&output));
        let message = stderr(&output);
        assert!(message.contains("--smt-timeout"), "{value}: {message}");
        assert!(!message.contains("panicked"), "{value}: {message}");
    }
    for value in ["2s", "500ms", "1.5", "86400s"] {
        let output = syncguard(&["check", "--smt-timeout", value, "tests/cli/clean.sync"]);
        assert_eq!(output.status.code(), Some(0), "{value}: {}", stderr(&output));
    }
}

/// A fresh, empty folder for one test.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inputs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const CLEAN: &str = "let s = aclrtCreateStream();\naclrtSynchronizeStream(s);\n";
/// Fails with SG003 (a handle nothing created), so that a run shows whether it checked
/// the file.
const UNKNOWN_NAME: &str = "aclrtSynchronizeStream(s);\n";

fn check_dir(dir: &Path) -> Output {
    syncguard(&["check", dir.to_str().unwrap()])
}

#[test]
fn symlink_loops_end_and_each_file_is_checked_once() {
    let dir = scratch_dir("loops");
    std::fs::write(dir.join("a.sync"), CLEAN).unwrap();
    symlink(".", dir.join("a")).unwrap();
    symlink(".", dir.join("b")).unwrap();
    let output = check_dir(&dir);
    assert_eq!(
        stdout(&output),
        "checked 1 file: 0 errors, 0 warnings\n",
        "{}",
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let fmt = syncguard(&["fmt", "--check", dir.to_str().unwrap()]);
    assert_eq!(fmt.status.code(), Some(0), "{}", stderr(&fmt));
}

#[test]
fn a_self_link_checks_the_folder_once() {
    let dir = scratch_dir("self-link");
    std::fs::write(dir.join("a.sync"), CLEAN).unwrap();
    symlink(".", dir.join("self")).unwrap();
    let output = check_dir(&dir);
    assert_eq!(
        stdout(&output),
        "checked 1 file: 0 errors, 0 warnings\n",
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_file_reached_through_two_links_or_named_twice_is_checked_once() {
    let root = scratch_dir("two-links");
    let shared = root.join("shared");
    let dir = root.join("project");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(shared.join("c.sync"), UNKNOWN_NAME).unwrap();
    symlink("../shared", dir.join("x")).unwrap();
    symlink("../shared", dir.join("y")).unwrap();
    let output = check_dir(&dir);
    assert!(
        stdout(&output).ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{}",
        stdout(&output)
    );

    let file = shared.join("c.sync");
    let file = file.to_str().unwrap();
    let output = syncguard(&["check", file, file, dir.join("x/c.sync").to_str().unwrap()]);
    assert!(
        stdout(&output).ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn ignored_files_are_skipped_in_folders_but_checked_when_named() {
    let dir = scratch_dir("gitignore");
    std::fs::write(dir.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::write(dir.join("build/generated.sync"), UNKNOWN_NAME).unwrap();
    std::fs::write(dir.join("a.sync"), CLEAN).unwrap();
    let output = check_dir(&dir);
    assert_eq!(stdout(&output), "checked 1 file: 0 errors, 0 warnings\n");

    let named = dir.join("build/generated.sync");
    let output = syncguard(&["check", named.to_str().unwrap()]);
    assert!(
        stdout(&output).ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{}",
        stdout(&output)
    );
}

/// Runs as root in CI, where no permission bits make a folder unreadable: the entries
/// that cannot be read here are a link to nowhere and a link to itself (which fails
/// with "too many levels of symbolic links" for root too).
#[test]
fn links_to_nothing_in_a_folder_are_skipped_with_a_note() {
    // As a submodule that was not checked out leaves them: nothing to read, and nothing
    // wrong with the run.
    let dir = scratch_dir("unreadable");
    std::fs::write(dir.join("a.sync"), UNKNOWN_NAME).unwrap();
    symlink("nowhere", dir.join("dangling.sync")).unwrap();
    symlink("nowhere", dir.join("rules.cmake")).unwrap();
    symlink("itself", dir.join("itself")).unwrap();
    let output = check_dir(&dir);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stdout(&output).ends_with("checked 1 file: 1 error, 0 warnings\n"),
        "{}",
        stdout(&output)
    );
    let message = stderr(&output);
    assert!(!message.contains("cannot read"), "{message}");
    assert!(message.contains("skipped 3 links"), "{message}");
    for name in ["dangling.sync", "itself", "rules.cmake"] {
        assert!(
            message.contains(&dir.join(name).display().to_string()),
            "{name}: {message}"
        );
    }
    // Named on the command line, a link to nothing is an input that cannot be read.
    let named = syncguard(&["check", dir.join("dangling.sync").to_str().unwrap()]);
    assert_eq!(named.status.code(), Some(2), "{}", stderr(&named));
    assert!(stderr(&named).contains("cannot read"), "{}", stderr(&named));
}

#[test]
fn a_fifo_in_a_folder_is_reported_not_read() {
    let dir = scratch_dir("fifo");
    std::fs::write(dir.join("a.sync"), CLEAN).unwrap();
    let fifo = dir.join("pipe.sync");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let output = check_dir(&dir);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(stdout(&output), "checked 1 file: 0 errors, 0 warnings\n");
    assert!(stderr(&output).contains(&format!("cannot read {}: not a regular file", fifo.display())));
}

#[test]
fn fmt_rewrites_a_file_whose_name_is_not_utf8_in_place() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch_dir("non-utf8-name");
    let file = dir.join(OsStr::from_bytes(b"caf\xe9.sync"));
    std::fs::write(&file, "let   s = aclrtCreateStream( );\n").unwrap();
    let output = syncguard_os([OsStr::new("fmt"), file.as_os_str()], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "let s = aclrtCreateStream();\n"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(names, [file], "no file with a mangled name is written");
}

#[test]
fn fmt_of_standard_input_always_prints_the_program() {
    let formatted = "let s = aclrtCreateStream();\n";
    let output = syncguard_os(["fmt", "-"].map(OsStr::new), Some(formatted));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), formatted);

    let output = syncguard_os(["fmt", "-"].map(OsStr::new), Some("let   s = aclrtCreateStream();"));
    assert_eq!(stdout(&output), formatted);
}

#[test]
fn fmt_refuses_a_named_trace_and_skips_traces_in_folders() {
    let output = syncguard(&["fmt", "--check", "tests/cli/missing-reset.jsonl"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("cannot format tests/cli/missing-reset.jsonl"),
        "{message}"
    );
    assert!(message.contains("syncguard convert"), "{message}");

    let dir = scratch_dir("fmt-folder-with-trace");
    std::fs::write(dir.join("a.sync"), CLEAN).unwrap();
    std::fs::copy("tests/cli/missing-reset.jsonl", dir.join("t.jsonl")).unwrap();
    let output = syncguard(&["fmt", "--check", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn convert_reads_a_folder_of_sources_together() {
    // The kernel class is in the header: read alone, the entry file has no program.
    let output = syncguard(&["convert", "tests/fixtures/kernel-folder"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let printed = stdout(&output);
    assert!(
        printed.contains("aicore scale_kernel(x, y, type: AIV_ONLY)"),
        "{printed}"
    );
    assert!(
        printed.contains("let xIn = TQue::DeQue(inQueue); // scale_kernel.h:19"),
        "{printed}"
    );
    let alone = syncguard(&["convert", "tests/fixtures/kernel-folder/scale_kernel.cpp"]);
    assert!(!stdout(&alone).contains("aicore"), "{}", stdout(&alone));
}

#[test]
fn code_that_synchronizes_where_no_entry_point_reaches_is_said_not_called_clean() {
    // The kernel class calls SetFlag, but only a framework macro the files do not define
    // dispatches it: nothing was checked, and that is not "no synchronization here".
    let output = syncguard(&["check", "tests/fixtures/unreached-kernel"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains(
            "warning: tests/fixtures/unreached-kernel/scale_impl.h:15 calls `SetFlag`, but no entry point of the 2 C/C++ files reaches"
        ),
        "{said}"
    );
    assert!(
        !said.contains("calls a synchronization API that syncguard knows"),
        "{said}"
    );
}

#[test]
fn convert_says_why_it_refuses_a_folder() {
    let empty = scratch_dir("convert-empty");
    let full = scratch_dir("convert-full");
    for name in ["one.jsonl", "two.jsonl"] {
        std::fs::copy("tests/cli/missing-reset.jsonl", full.join(name)).unwrap();
    }
    for dir in [empty, full] {
        let output = syncguard(&["convert", dir.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(stdout(&output), "");
        let message = stderr(&output);
        let expected = format!(
            "cannot convert {}: a folder is converted only for its C/C++ and Python sources",
            dir.display()
        );
        assert!(message.contains(&expected), "{message}");
        assert!(message.contains("one trace file"), "{message}");
    }
}

/// The reported case itself, a folder without read permission. Root reads it anyway, so
/// where the tests run as root this only checks that the folder's files are checked.
#[test]
fn an_unreadable_subfolder_is_reported_and_the_rest_is_checked() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("unreadable-subfolder");
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::write(locked.join("hidden.sync"), UNKNOWN_NAME).unwrap();
    std::fs::write(dir.join("a.sync"), UNKNOWN_NAME).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let permissions_apply = std::fs::read_dir(&locked).is_err();
    let output = check_dir(&dir);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    if permissions_apply {
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(&format!("cannot read {}", locked.display())));
        assert!(
            stdout(&output).ends_with("checked 1 file: 1 error, 0 warnings\n"),
            "{}",
            stdout(&output)
        );
    } else {
        assert!(
            stdout(&output).ends_with("checked 2 files: 2 errors, 0 warnings\n"),
            "{}",
            stdout(&output)
        );
    }
}

#[test]
fn too_deep_programs_are_syntax_errors_in_check_and_fmt() {
    let dir = scratch_dir("too-deep");
    let programs = [
        ("terms.sync", format!("let x = {}1;\n", "{}+".repeat(48_000))),
        ("chain.sync", format!("if 1 {{}} {}\n", "else if 1 {} ".repeat(30_000))),
    ];
    for (name, program) in programs {
        let path = dir.join(name);
        std::fs::write(&path, &program).unwrap();
        let path = path.to_str().unwrap();
        let check = syncguard(&["check", path]);
        assert_eq!(check.status.code(), Some(1), "{name}: {}", stderr(&check));
        assert!(stdout(&check).contains("nested too deeply"), "{name}");
        let fmt = syncguard(&["fmt", path]);
        assert_eq!(fmt.status.code(), Some(1), "{name}: {}", stderr(&fmt));
        assert!(stderr(&fmt).contains("nested too deeply"), "{name}");
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            program,
            "{name} is left untouched"
        );
    }
}

#[test]
fn a_byte_order_mark_and_old_mac_line_endings_are_read() {
    for name in ["bom.sync", "cr-only-line-endings.sync"] {
        let path = format!("tests/encodings/{name}");
        let output = syncguard(&["check", &path]);
        assert_eq!(stdout(&output), "checked 1 file: 0 errors, 0 warnings\n", "{name}");
        let source = std::fs::read_to_string(&path).unwrap();
        let formatted = syncguard_os(["fmt", "-"].map(OsStr::new), Some(&source));
        assert_eq!(
            stdout(&formatted),
            source.trim_start_matches('\u{FEFF}').replace('\r', "\n"),
            "{name}"
        );
    }
}

#[test]
fn positions_after_a_byte_order_mark_or_a_lone_carriage_return_are_right() {
    let json = |path: &str| -> serde_json::Value {
        let output = syncguard(&["check", "--format", "json", path]);
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let position = |value: &serde_json::Value| (value["line"].as_u64(), value["column"].as_u64());
    let bom = json("tests/malformed/bom-then-unknown-names.sync");
    assert_eq!(position(&bom["diagnostics"][0]), (Some(1), Some(18)));
    let cr = json("tests/malformed/cr-only-line-endings-unknown-names.sync");
    assert_eq!(position(&cr["diagnostics"][0]), (Some(4), Some(18)));
}
