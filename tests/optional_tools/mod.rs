//! Tools some tests need and the build does not (Chromium, Neovim, make, python3). A
//! test whose tool is missing is skipped and says so on stderr; with
//! `SYNCGUARD_TEST_REQUIRE_TOOLS=1` (which `.ci/run` sets) a missing tool fails the test
//! instead, so CI never skips one silently.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The first of `candidates` (a path, or a name looked up on `PATH`) that exists, else
/// `None` after saying that `test` is skipped; a panic when tools are required.
pub fn optional_tool(candidates: &[&str], test: &str, install: &str) -> Option<PathBuf> {
    if let Some(found) = candidates.iter().find_map(|candidate| find(candidate)) {
        return Some(found);
    }
    let missing = format!("{test} needs {} ({install})", candidates.join(" or "));
    if std::env::var("SYNCGUARD_TEST_REQUIRE_TOOLS").is_ok_and(|value| value == "1") {
        panic!("{missing}, and SYNCGUARD_TEST_REQUIRE_TOOLS=1 requires it");
    }
    // Straight to the process's stderr: the test harness captures `eprintln!` of a
    // passing test, and a skip must be seen.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {missing}; none is installed");
    None
}

fn find(candidate: &str) -> Option<PathBuf> {
    if candidate.contains('/') {
        return Path::new(candidate).is_file().then(|| candidate.into());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(candidate))
        .find(|path| path.is_file())
}
