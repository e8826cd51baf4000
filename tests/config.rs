//! Configuration files: discovery (`syncguard.toml`, `[tool.syncguard]` in
//! `pyproject.toml`), `--config` and `--isolated`, precedence of the command line, and
//! errors that name the file and line.

use std::path::Path;
use std::process::Command;

/// A host buffer freed while the copy into it may still be running (SG604).
const FREE_WHILE_PENDING: &str = "let s = aclrtCreateStream();
let host = aclrtMallocHost(4096);
let dev = aclrtMalloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY);
aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s);
aclrtFreeHost(host);
aclrtSynchronizeStream(s);
aclrtFree(dev);
aclrtDestroyStream(s);
";

fn check(dir: &Path, args: &[&str]) -> (Vec<(String, String)>, Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args([&["check", "--format", "json"], args].concat())
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let found = serde_json::from_slice::<serde_json::Value>(&output.stdout)
        .ok()
        .and_then(|json| json["diagnostics"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (found, output.status.code(), stderr)
}

fn project(config_name: &str, config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ops/vendor")).unwrap();
    std::fs::write(dir.path().join(config_name), config).unwrap();
    std::fs::write(dir.path().join("ops/p.sync"), FREE_WHILE_PENDING).unwrap();
    std::fs::write(dir.path().join("ops/vendor/v.sync"), FREE_WHILE_PENDING).unwrap();
    dir
}

#[test]
fn a_config_file_is_found_above_the_checked_path() {
    let dir = project(
        "syncguard.toml",
        "exclude = [\"ops/vendor/**\"]\n[lint.severity]\nSG604 = \"warning\"\n",
    );
    let (found, status, _) = check(dir.path(), &["ops"]);
    assert_eq!(
        found,
        [("SG604".into(), "warning".into())],
        "vendor/ excluded, severity lowered"
    );
    assert_eq!(status, Some(0));
    // From a subfolder, the file above is found too; named explicitly, vendor is checked.
    let (found, _, _) = check(&dir.path().join("ops"), &["vendor/v.sync"]);
    assert_eq!(found, [("SG604".into(), "warning".into())]);
    let (found, status, _) = check(dir.path(), &["--isolated", "ops"]);
    assert_eq!((found.len(), status), (2, Some(1)), "--isolated reads no file");
}

#[test]
fn pyproject_tool_section_and_command_line_precedence() {
    let dir = project(
        "pyproject.toml",
        "[project]\nname = \"ops\"\n\n[tool.syncguard.lint]\nignore = [\"SG6\"]\nper-file-ignores = { \"ops/vendor/*\" = [\"SG604\"] }\n",
    );
    let (found, status, _) = check(dir.path(), &["ops"]);
    assert_eq!((found.len(), status), (0, Some(0)));
    // The command line's --select replaces the file's; its ignore still applies.
    let (found, _, _) = check(dir.path(), &["ops", "--select", "SG604"]);
    assert!(found.is_empty());
    let other = dir.path().join("other.toml");
    std::fs::write(
        &other,
        "[lint]\nper-file-ignores = { \"ops/vendor/*\" = [\"SG604\"] }\n",
    )
    .unwrap();
    let (found, status, _) = check(dir.path(), &["ops", "--config", "other.toml"]);
    assert_eq!(
        (found.len(), status),
        (1, Some(1)),
        "--config names the file: {found:?}"
    );
}

#[test]
fn mistakes_in_a_config_file_name_its_line() {
    let dir = project(
        "syncguard.toml",
        "target = \"A3\"\n\n[lint]\nselect = [\"SG1\"]\nignroe = [\"SG107\"]\n",
    );
    let (_, status, stderr) = check(dir.path(), &["ops"]);
    assert_eq!(status, Some(2));
    assert!(
        stderr.contains("syncguard.toml:5") && stderr.contains("ignroe"),
        "{stderr}"
    );
    std::fs::write(dir.path().join("syncguard.toml"), "target = \"B9\"\n").unwrap();
    let (_, status, stderr) = check(dir.path(), &["ops"]);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("`target`") && stderr.contains("A2, A3"), "{stderr}");
}
