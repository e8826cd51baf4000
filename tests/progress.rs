//! The progress bar of long runs: on a terminal only, never in CI or through a pipe.
//! A terminal is given by `script` (util-linux), which runs the command on a
//! pseudo-terminal and copies what it shows.

use std::path::Path;
use std::process::Command;

/// The bundled examples take well over the bar's delay to check in any build.
fn examples() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .display()
        .to_string()
}

/// What a terminal shows of `check --format concise EXAMPLES`, with `CI` set to `ci`.
fn on_a_terminal(ci: Option<&str>) -> String {
    let command = format!(
        "{} check --format concise {}",
        env!("CARGO_BIN_EXE_syncguard"),
        examples()
    );
    let mut script = Command::new("script");
    script.args(["-qec", &command, "/dev/null"]);
    match ci {
        Some(value) => script.env("CI", value),
        None => script.env_remove("CI"),
    };
    let output = script
        .output()
        .expect("`script` (util-linux) runs a command on a pseudo-terminal");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const BAR: &str = "checking [";

#[test]
fn a_long_run_on_a_terminal_shows_a_progress_bar_and_then_clears_it() {
    let shown = on_a_terminal(None);
    assert!(shown.contains(BAR), "no progress bar:\n{shown}");
    let last_bar = shown.rfind(BAR).unwrap();
    let last_finding = shown.rfind(": SG").expect("findings are printed");
    assert!(
        last_bar < last_finding,
        "the bar is cleared before the findings are printed:\n{shown}"
    );
}

#[test]
fn ci_jobs_get_no_progress_bar_even_on_a_pseudo_terminal() {
    let shown = on_a_terminal(Some("true"));
    assert!(shown.contains(": SG"), "findings are printed:\n{shown}");
    assert!(!shown.contains(BAR), "a bar in a CI log:\n{shown}");
}

#[test]
fn piped_output_gets_no_progress_bar() {
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "--format", "concise", &examples()])
        .env_remove("CI")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(BAR), "a bar on a pipe:\n{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains(": SG"));
}
