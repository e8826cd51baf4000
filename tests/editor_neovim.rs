//! The language server in a real editor: headless Neovim with editors/nvim/syncguard.lua
//! opens a buggy `.sync` file and a buggy C++ file, waits for the diagnostics, applies
//! the quick fix, and the fixed text is checked, as is that the finding is gone.
//! Needs `nvim` (Debian package `neovim`; CI installs it): skipped without it, unless
//! `SYNCGUARD_TEST_REQUIRE_TOOLS=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod optional_tools;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Lua both scripts start with: the plugin set up, `file` open, `found()` the finding of
/// `code`, `say` a line of the report.
const PRELUDE: &str = r#"
local file, code, report, fixed = FILE, CODE, REPORT, FIXED
local lines = {}
local function say(text) table.insert(lines, text) end
package.path = EDITORS .. "/?.lua;" .. package.path
require("syncguard").setup({ cmd = { SYNCGUARD, "lsp" } })
vim.cmd("filetype on")
vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
local function found()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then return d end
  end
end
-- The finding, once the server published it; nil (and said) if it never came.
local function wait_for_finding()
  if vim.wait(60000, function() return found() ~= nil end, 50) then return found() end
  say("no diagnostic " .. code)
end
"#;

/// Lua run inside Neovim: open `file`, wait for a finding of `code`, apply the quick
/// fix whose title starts with "Insert", wait for the finding to go, and write what
/// happened to `report` and the buffer to `fixed`.
const SCRIPT: &str = r#"local d = wait_for_finding()
if d then
  say("found " .. code .. " at " .. (d.lnum + 1) .. ":" .. (d.col + 1))
  local client = vim.lsp.get_active_clients()[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    context = { diagnostics = {} },
  }
  local answer = client.request_sync("textDocument/codeAction", params, 30000, buf)
  for _, action in ipairs((answer and answer.result) or {}) do
    say("action " .. action.title)
    if action.title:match("^Insert") then
      vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
      say("applied " .. action.title)
    end
  end
  if vim.wait(60000, function() return found() == nil end, 50) then
    say("gone " .. code)
  else
    say("still there " .. code)
  end
end
vim.fn.writefile(lines, report)
vim.fn.writefile(vim.api.nvim_buf_get_lines(buf, 0, -1, false), fixed)
vim.cmd("qall!")
"#;

fn lua_string(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

/// Lua run inside Neovim: open `file`, wait for a finding of `code`, write its float's
/// lines and the quickfix list `:SyncguardRelated` makes to `report`.
const RELATED_SCRIPT: &str = r#"local d = wait_for_finding()
if d then
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local float_buf = vim.diagnostic.open_float(buf, { scope = "cursor" })
  for _, line in ipairs(vim.api.nvim_buf_get_lines(float_buf, 0, -1, false)) do
    say("float " .. line)
  end
  vim.cmd("SyncguardRelated")
  for _, item in ipairs(vim.fn.getqflist()) do
    say("quickfix " .. vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ":t") .. ":" .. item.lnum .. " " .. item.text)
  end
end
vim.fn.writefile(lines, report)
vim.fn.writefile(vim.api.nvim_buf_get_lines(buf, 0, -1, false), fixed)
vim.cmd("qall!")
"#;

/// Run the editing script on a copy of `fixture` (with the fixtures' configuration
/// next to it); the report's lines and the buffer's text afterwards.
fn edit_in_neovim(fixture: &str, code: &str) -> Option<(Vec<String>, String)> {
    run_in_neovim(SCRIPT, fixture, code)
}

/// Run `script` on a copy of `fixture` (a path below `tests/fixtures`), as [`edit_in_neovim`] does; `None` when there is
/// no Neovim (the test is skipped).
fn run_in_neovim(script: &str, fixture: &str, code: &str) -> Option<(Vec<String>, String)> {
    let nvim = optional_tools::optional_tool(&["nvim"], "the Neovim test", "Debian package `neovim`")?;
    let work = tempfile::tempdir().unwrap();
    let fixtures = root().join("tests/fixtures");
    let fixture = fixtures.join(fixture);
    for path in [fixture.as_path(), &fixtures.join("editor/syncguard.toml")] {
        std::fs::copy(path, work.path().join(path.file_name().unwrap())).unwrap();
    }
    let fixture = fixture.file_name().unwrap();
    let report = work.path().join("report.txt");
    let fixed = work.path().join("fixed.txt");
    let script = format!("{PRELUDE}{script}")
        .replace(
            "FILE, CODE, REPORT, FIXED",
            &format!(
                "{}, {:?}, {}, {}",
                lua_string(&work.path().join(fixture)),
                code,
                lua_string(&report),
                lua_string(&fixed)
            ),
        )
        .replace("EDITORS", &lua_string(&root().join("editors/nvim")))
        .replace("SYNCGUARD", &lua_string(Path::new(env!("CARGO_BIN_EXE_syncguard"))));
    let script_file: PathBuf = work.path().join("test.lua");
    std::fs::write(&script_file, script).unwrap();
    // A script that fails leaves Neovim waiting for input: stopped after two minutes,
    // it fails the test instead of the run's time limit.
    let output = Command::new("timeout")
        .args(["--kill-after=5", "120"])
        .arg(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n"])
        .arg("-c")
        .arg(format!("luafile {}", script_file.display()))
        .current_dir(work.path())
        .output()
        .expect("`nvim` runs (Debian package `neovim`)");
    let report = std::fs::read_to_string(&report).unwrap_or_else(|_| {
        panic!(
            "Neovim wrote no report: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    Some((
        report.lines().map(str::to_string).collect(),
        std::fs::read_to_string(fixed).unwrap(),
    ))
}

#[test]
fn neovim_shows_the_missing_reset_in_a_sync_file_and_applies_the_fix() {
    let Some((report, text)) = edit_in_neovim("editor/pipeline.sync", "SG102") else {
        return;
    };
    assert_eq!(
        report.first().map(String::as_str),
        Some("found SG102 at 11:5"),
        "{report:#?}"
    );
    assert!(
        report.contains(&"applied Insert aclrtResetEvent(handed, consumer) after the wait".to_string()),
        "{report:#?}"
    );
    assert!(report.contains(&"gone SG102".to_string()), "{report:#?}");
    assert!(
        text.contains("    aclrtStreamWaitEvent(consumer, handed);\n    aclrtResetEvent(handed, consumer);\n"),
        "{text}"
    );
}

#[test]
fn neovim_shows_the_missing_reset_in_a_cpp_file_and_applies_the_fix_as_the_code_is_written() {
    let Some((report, text)) = edit_in_neovim("editor/prefetch.cpp", "SG102") else {
        return;
    };
    assert_eq!(
        report.first().map(String::as_str),
        Some("found SG102 at 16:15"),
        "{report:#?}"
    );
    assert!(report.contains(&"gone SG102".to_string()), "{report:#?}");
    assert!(
        text.contains(
            "        CHECK(aclrtStreamWaitEvent(compute, loaded));\n        CHECK(aclrtResetEvent(loaded, compute));\n"
        ),
        "{text}"
    );
}

#[test]
fn neovim_shows_a_findings_involved_calls_in_its_float_and_in_the_quickfix_list() {
    let Some((report, _)) = run_in_neovim(RELATED_SCRIPT, "editor/pipeline.sync", "SG102") else {
        return;
    };
    let float: Vec<&String> = report.iter().filter(|line| line.starts_with("float ")).collect();
    // Neovim 0.7's own float shows the message alone: each involved call follows it.
    assert!(
        float
            .iter()
            .any(|line| line.contains("pipeline.sync:") && line.trim_start_matches("float ").starts_with("  ")),
        "{report:#?}"
    );
    let quickfix: Vec<&String> = report.iter().filter(|line| line.starts_with("quickfix ")).collect();
    assert!(quickfix.len() >= 2, "the finding and its calls: {report:#?}");
    assert!(quickfix[0].contains("SG102"), "{report:#?}");
    assert!(
        quickfix[1..]
            .iter()
            .all(|line| line.starts_with("quickfix pipeline.sync:")),
        "{report:#?}"
    );
}

/// Lua run inside Neovim: open `file`, wait for a finding of `code`, say where it is.
const FIND_SCRIPT: &str = r#"local d = wait_for_finding()
if d then
  say("found " .. code .. " at " .. (d.lnum + 1) .. ":" .. (d.col + 1))
end
vim.fn.writefile(lines, report)
vim.fn.writefile(vim.api.nvim_buf_get_lines(buf, 0, -1, false), fixed)
vim.cmd("qall!")
"#;

#[test]
fn neovim_shows_a_finding_of_a_profiler_trace_on_its_event() {
    let fixture = "profiles/kineto/fail_wait_on_recording_stream.json";
    let Some((report, _)) = run_in_neovim(FIND_SCRIPT, fixture, "SG109") else {
        return;
    };
    // Line 9 is the `cudaStreamWaitEvent` event the finding is about.
    assert_eq!(report, ["found SG109 at 9:3"], "{report:#?}");
}
