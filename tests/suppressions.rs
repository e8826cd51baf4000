//! Inline suppressions through the command line: a suppressed error no longer fails
//! the run, in `.sync` and C/C++ alike; `ignore-file` covers a whole file; what
//! suppresses nothing is reported (SG005).

use std::process::Command;

fn check(dir: &std::path::Path, file: &str) -> (Vec<(String, u64)>, Option<i32>) {
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "--format", "json", file])
        .current_dir(dir)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let found = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["line"].as_u64().unwrap()))
        .collect();
    (found, output.status.code())
}

/// A host buffer freed while the copy into it may still be running (SG604 on line 5).
const FREE_WHILE_PENDING: &str = "let s = aclrtCreateStream();
let host = aclrtMallocHost(4096);
let dev = aclrtMalloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY);
aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s);
aclrtFreeHost(host);
aclrtSynchronizeStream(s);
aclrtFree(dev);
aclrtDestroyStream(s);
";

#[test]
fn a_suppressed_error_does_not_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.sync"), FREE_WHILE_PENDING).unwrap();
    let (found, status) = check(dir.path(), "p.sync");
    assert_eq!(found, [("SG604".to_string(), 5)]);
    assert_eq!(status, Some(1));

    let same_line = FREE_WHILE_PENDING.replace(
        "aclrtFreeHost(host);",
        "aclrtFreeHost(host); // syncguard: ignore[SG604]",
    );
    std::fs::write(dir.path().join("p.sync"), same_line).unwrap();
    assert_eq!(check(dir.path(), "p.sync"), (vec![], Some(0)));

    let line_above = FREE_WHILE_PENDING.replace(
        "aclrtFreeHost(host);",
        "// syncguard: ignore[SG701, SG604]\naclrtFreeHost(host);",
    );
    std::fs::write(dir.path().join("p.sync"), line_above).unwrap();
    let (found, status) = check(dir.path(), "p.sync");
    assert_eq!(found, [("SG005".to_string(), 5)], "SG701 is unused there");
    assert_eq!(status, Some(0), "an unused suppression is a warning");

    let file_level = format!("// syncguard: ignore-file[SG604]\n{FREE_WHILE_PENDING}");
    std::fs::write(dir.path().join("p.sync"), file_level).unwrap();
    assert_eq!(check(dir.path(), "p.sync"), (vec![], Some(0)));
}

#[test]
fn suppressions_work_in_cpp_sources() {
    let dir = tempfile::tempdir().unwrap();
    let source = "int Signal(aclrtStream s1, aclrtStream s2) {
    aclrtEvent ready;
    ACL_CHECK(aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC));
    aclrtRecordEvent(ready, s1); // syncguard: ignore[SG701] the stream is known good here
    ACL_CHECK(aclrtStreamWaitEvent(s2, ready));
    ACL_CHECK(aclrtSynchronizeStream(s2));
    ACL_CHECK(aclrtDestroyEvent(ready));
    return 0;
}
";
    std::fs::write(dir.path().join("op.cpp"), source).unwrap();
    assert_eq!(check(dir.path(), "op.cpp"), (vec![], Some(0)));
    std::fs::write(
        dir.path().join("op.cpp"),
        source.replace(" // syncguard: ignore[SG701] the stream is known good here", ""),
    )
    .unwrap();
    assert_eq!(check(dir.path(), "op.cpp").0, [("SG701".to_string(), 4)]);
}
