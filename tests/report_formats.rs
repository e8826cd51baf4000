//! `--format html|chrome-trace|dot`: the documents that draw each finding's execution.
//! The HTML page is self-contained (nothing it could load), draws every op of a
//! deadlock cycle highlighted, and links each op to its source line; the Chrome trace
//! loads back with consistent events and flows; the DOT graphs mark the cycle.
//! (tests/report_in_browser.rs opens the pages in Chromium.)

use std::collections::{HashMap, HashSet};
use std::process::Command;

use serde_json::Value;

fn syncguard(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let output = syncguard(args);
    assert!(
        output.status.code() == Some(1),
        "findings fail the run: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

const DEADLOCK: &str = "examples/acl-event-sync/cross-wait-deadlock.sync";
const RESET_RACE: &str = "examples/acl-event-sync/reset-before-second-wait.sync";
const PARAMETRIC: &str = "examples/parametric-ring/off-by-one-peer.sync";
const HCCL: &str = "examples/hccl-three-phase-write/lost-signal.sync";
/// A call trace with `ts` on every line.
const TRACE: &str = "examples/traces/cuda-stream-race.jsonl";

fn html_of(path: &str) -> String {
    stdout_of(&["check", "--format", "html", path])
}

/// Every value of attribute `name` in `html` (`src="..."`, `href='...'`).
fn attribute_values<'h>(html: &'h str, name: &str) -> Vec<&'h str> {
    let mut values = Vec::new();
    for quote in ['"', '\''] {
        let pattern = format!("{name}={quote}");
        let mut rest = html;
        while let Some(at) = rest.find(&pattern) {
            rest = &rest[at + pattern.len()..];
            let end = rest.find(quote).unwrap_or(rest.len());
            values.push(&rest[..end]);
        }
    }
    values
}

/// Nothing in the page can reach the network: its policy forbids loading anything, no
/// attribute names a remote resource, and no markup that fetches is used.
fn assert_self_contained(html: &str) {
    assert!(
        html.contains(r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none';"#),
        "the page carries its policy"
    );
    for attribute in ["src", "href", "action", "xlink:href", "srcset", "poster", "data"] {
        for value in attribute_values(html, attribute) {
            let remote = value.contains("://") || value.starts_with("//");
            assert!(!remote, "{attribute}=\"{value}\" names a remote resource");
        }
    }
    for fetching in [
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "@import",
        "url(http",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!html.contains(fetching), "the page uses {fetching}");
    }
}

/// The SVG boxes of the ops with `data-role="{role}"`, as their ids.
fn ops_with_role(html: &str, role: &str) -> Vec<String> {
    html.split("<a class=\"op ")
        .skip(1)
        .filter(|op| op.contains(&format!("data-role=\"{role}\"")))
        .map(|op| attribute_values(op, "id")[0].to_string())
        .collect()
}

/// How many ops the text output's cycle note names ("cycle: a -> b -> back to the first").
fn cycle_length(path: &str) -> usize {
    let json: Value = serde_json::from_str(&stdout_of(&["check", "--format", "json", path])).unwrap();
    let deadlock = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "SG501")
        .expect("the example deadlocks");
    let note = deadlock["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|note| note.starts_with("cycle: "))
        .expect("the cycle is spelled out");
    let length = note.matches(" -> ").count();
    assert!(length >= 2, "{note}");
    length
}

#[test]
fn html_report_draws_every_op_of_the_deadlock_cycle_in_red() {
    let html = html_of(DEADLOCK);
    assert_self_contained(&html);
    let cycle_length = cycle_length(DEADLOCK);
    let cycle = ops_with_role(&html, "cycle");
    assert_eq!(
        cycle.len(),
        cycle_length,
        "every op of the cycle is drawn, highlighted: {cycle:?}"
    );
    let mut numbers: Vec<usize> = html
        .split("<text class=\"step-number\"")
        .skip(1)
        .map(|rest| {
            let text = &rest[rest.find('>').unwrap() + 1..];
            text[..text.find('<').unwrap()].parse().unwrap()
        })
        .collect();
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (1..=cycle_length).collect::<Vec<_>>(),
        "each step of the cycle is numbered once"
    );
    let cycle_edges = html.matches("class=\"edge edge-cycle\"").count();
    assert_eq!(
        cycle_edges, cycle_length,
        "each step of the cycle, the closing one included, is an arrow"
    );
    assert!(html.contains("class=\"op op-cycle op-stuck\""), "the cycle never runs");
    assert!(
        html.contains("stream s1") && html.contains("stream s2"),
        "one lane per stream"
    );
    assert!(
        html.contains("<strong>Fix:</strong> break the cycle"),
        "the help is shown"
    );
}

#[test]
fn html_report_links_each_op_to_its_source_line_with_the_line_as_tooltip() {
    let html = html_of(DEADLOCK);
    let source = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DEADLOCK)).unwrap();
    let ops: Vec<&str> = html.split("<a class=\"op ").skip(1).collect();
    assert!(ops.len() >= 4);
    for op in ops {
        let href = attribute_values(op, "href")[0];
        let (_, line) = href.rsplit_once('-').unwrap();
        let line: usize = line.parse().unwrap();
        assert!(
            html.contains(&format!("<tr id=\"{}\"", &href[1..])),
            "{href} is a row of the source listing"
        );
        let title = &op[op.find("<title>").unwrap() + 7..op.find("</title>").unwrap()];
        let text = source.lines().nth(line - 1).unwrap().trim();
        let escaped = text.replace('&', "&amp;").replace('"', "&quot;");
        assert!(
            title.contains(&escaped),
            "the tooltip {title:?} shows line {line}: {text}"
        );
    }
}

#[test]
fn html_report_summarizes_findings_per_file_and_rule() {
    let html = stdout_of(&["check", "--format", "html", "examples/acl-event-sync"]);
    assert_self_contained(&html);
    let json: Value =
        serde_json::from_str(&stdout_of(&["check", "--format", "json", "examples/acl-event-sync"])).unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    let rows: HashSet<(String, String)> = diagnostics
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let table = &html[html.find("<table class=\"summary\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(
        table.matches("<tr><td>").count(),
        rows.len(),
        "one row per file and rule"
    );
    for (file, code) in &rows {
        assert!(table.contains(&format!("<td><code>{file}</code></td><td><code>{code}</code>")));
    }
    assert_eq!(html.matches("<section class=\"finding ").count(), diagnostics.len());
    let drawn = html.matches("<svg class=\"timeline\"").count();
    assert!(drawn >= diagnostics.len() / 2, "most findings have a timeline: {drawn}");
}

#[test]
fn html_report_numbers_the_witness_order_of_a_reset_race() {
    let html = html_of(RESET_RACE);
    assert_self_contained(&html);
    assert!(html.contains("an execution order where it happens (z3)"));
    let involved = ops_with_role(&html, "involved");
    assert!(
        involved.len() >= 3,
        "record, reset and wait are highlighted: {involved:?}"
    );
    assert!(
        html.matches("class=\"step step-witness\"").count() >= 3,
        "the witness is numbered"
    );
    assert!(html.contains("aclrtResetEvent"));
}

#[test]
fn html_report_of_a_parametric_counterexample_says_its_values() {
    let html = html_of(PARAMETRIC);
    assert_self_contained(&html);
    assert!(
        html.contains("run with N = 3"),
        "the timeline is the run at the counterexample"
    );
    assert!(html.contains("(rank 2)"), "one lane per rank's queue");
    assert!(html.contains("data-executed=\"false\""), "the stuck wait is drawn");
}

#[test]
fn html_report_of_an_hccl_three_phase_bug_draws_the_ranks_threads() {
    let html = html_of(HCCL);
    assert_self_contained(&html);
    assert!(
        html.contains("HCCL thread") || html.contains("stream"),
        "lanes are named by kind"
    );
    assert!(html.contains("(rank 1)"), "both ranks are drawn");
    assert!(
        html.contains("class=\"edge edge-match\""),
        "notify record → wait across ranks"
    );
}

#[test]
fn large_executions_are_windowed_with_the_omitted_count() {
    // A ring of 64 ranks: far more ops than a window holds.
    let dir = tempfile::tempdir().unwrap();
    let program = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PARAMETRIC))
        .unwrap()
        .replace("ranks N in 2..=1024;", "ranks N in 64..=64;");
    let path = dir.path().join("ring.sync");
    std::fs::write(&path, program).unwrap();
    let html = html_of(path.to_str().unwrap());
    let caption = &html[html.find("<figcaption>").unwrap()..];
    let caption = &caption[..caption.find("</figcaption>").unwrap()];
    let shown: usize = caption.split(' ').next().unwrap()[12..].parse().unwrap();
    assert!(shown <= 64, "{caption}");
    let omitted: usize = caption
        .split("; ")
        .find_map(|part| part.strip_suffix(" other ops of the execution omitted"))
        .expect("the omitted ops are counted")
        .parse()
        .unwrap();
    assert!(omitted > 500, "{caption}");
    assert!(html.len() < 2_000_000, "the page stays small: {} bytes", html.len());
}

#[test]
fn chrome_trace_loads_back_with_consistent_events_and_flows() {
    for path in [DEADLOCK, RESET_RACE, PARAMETRIC, HCCL, TRACE] {
        let trace: Value = serde_json::from_str(&stdout_of(&["check", "--format", "chrome-trace", path])).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        assert!(!events.is_empty(), "{path}");
        // Every slice is on a named thread of a named process.
        let mut threads = HashSet::new();
        let mut processes = HashSet::new();
        for event in events.iter().filter(|e| e["ph"] == "M") {
            match event["name"].as_str().unwrap() {
                "thread_name" => assert!(threads.insert((event["pid"].as_u64(), event["tid"].as_u64()))),
                "process_name" => assert!(processes.insert(event["pid"].as_u64())),
                _ => {}
            }
        }
        let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert!(!slices.is_empty());
        for slice in &slices {
            assert!(
                threads.contains(&(slice["pid"].as_u64(), slice["tid"].as_u64())),
                "{slice}"
            );
            assert!(processes.contains(&slice["pid"].as_u64()));
            assert!(slice["ts"].as_f64().is_some() && slice["dur"].as_f64().unwrap() > 0.0);
            let source = slice["args"]["source"].as_str().unwrap();
            assert!(source.starts_with(path), "{source}");
        }
        // Each flow id starts once and ends once, inside a slice on its own thread.
        let mut flows: HashMap<u64, (usize, usize)> = HashMap::new();
        for event in events.iter().filter(|e| e["ph"] == "s" || e["ph"] == "f") {
            let entry = flows.entry(event["id"].as_u64().unwrap()).or_default();
            if event["ph"] == "s" {
                entry.0 += 1;
            } else {
                entry.1 += 1;
                assert_eq!(event["bp"], "e");
            }
            let (ts, pid, tid) = (event["ts"].as_f64().unwrap(), &event["pid"], &event["tid"]);
            let enclosing = slices.iter().any(|s| {
                &s["pid"] == pid && &s["tid"] == tid && {
                    let start = s["ts"].as_f64().unwrap();
                    (start..start + s["dur"].as_f64().unwrap()).contains(&ts)
                }
            });
            assert!(enclosing, "{path}: flow event {event} is inside a slice");
        }
        if [DEADLOCK, RESET_RACE, HCCL].contains(&path) {
            // (The off-by-one ring matches no record with any wait, and the race is two
            // unordered accesses: they have no flow.)
            assert!(!flows.is_empty(), "{path}: matches are flows");
        }
        for (id, ends) in &flows {
            assert_eq!(*ends, (1, 1), "{path}: flow {id} starts once and ends once");
        }
    }
}

#[test]
fn dot_graph_marks_the_cycle() {
    let dot = stdout_of(&["check", "--format", "dot", DEADLOCK]);
    assert!(dot.starts_with("digraph finding_0 {"), "{dot}");
    assert_eq!(dot.matches('{').count(), dot.matches('}').count(), "balanced: {dot}");
    let red_nodes = dot.matches("color=\"#cf222e\", fillcolor=\"#ffebe9\"").count();
    let red_edges = dot.matches("color=\"#cf222e\", penwidth=2.5]").count();
    let length = cycle_length(DEADLOCK);
    assert_eq!(red_nodes, length, "every op of the cycle: {dot}");
    assert_eq!(red_edges, length, "every step of the cycle, the closing one too: {dot}");
}

#[test]
fn output_writes_the_report_to_a_file_and_refuses_line_formats() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let output = syncguard(&["check", "--format", "html", "-o", file.to_str().unwrap(), DEADLOCK]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("<!DOCTYPE html>"));
    let refused = syncguard(&["check", "--format", "concise", "-o", file.to_str().unwrap(), DEADLOCK]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--output writes a whole document"));
    let refused = syncguard(&[
        "check",
        "--format",
        "json",
        "--open",
        "-o",
        file.to_str().unwrap(),
        DEADLOCK,
    ]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn open_launches_the_browser_on_the_written_report() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let opened = dir.path().join("opened");
    // A "browser" that records what it was asked to open.
    let browser = dir.path().join("browser.sh");
    // Written whole, then renamed: the test never reads it half-written.
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\necho \"$1\" > {0}.part && mv {0}.part {0}\n",
            opened.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args([
            "check",
            "--format",
            "html",
            "--open",
            "-o",
            file.to_str().unwrap(),
            DEADLOCK,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("BROWSER", &browser)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for _ in 0..400 {
        if opened.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let said = std::fs::read_to_string(&opened).expect("the browser was started");
    assert_eq!(said.trim(), file.to_str().unwrap());
}

#[test]
fn verify_then_run_writes_the_report_with_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.html");
    let output = syncguard(&[
        "verify-then-run",
        "--format",
        "html",
        "-o",
        file.to_str().unwrap(),
        "examples/acl-event-sync/correct.sync",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(&file).unwrap();
    assert_self_contained(&html);
    assert!(
        html.contains("<h2>Run</h2>") && html.contains("ran on sim (seed 0)"),
        "{html}"
    );
    let run = &html[html.find("<h2>Run</h2>").unwrap()..html.find("id=\"summary\"").unwrap()];
    assert!(run.contains("<svg class=\"timeline\""), "what ran is drawn: {run}");
    assert!(run.contains("data-executed=\"true\""), "{run}");
    let refused = syncguard(&[
        "verify-then-run",
        "--format",
        "html",
        "-o",
        file.to_str().unwrap(),
        DEADLOCK,
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.contains("not run: the program did not verify"));
    assert!(html.contains("data-role=\"cycle\""), "what would hang is drawn");
}

#[test]
fn chrome_trace_of_a_call_trace_uses_its_times_and_no_lane_overlaps_itself() {
    let trace: Value = serde_json::from_str(&stdout_of(&["check", "--format", "chrome-trace", TRACE])).unwrap();
    assert!(
        trace["otherData"]["time"]
            .as_str()
            .unwrap()
            .starts_with("the trace's ts")
    );
    let source = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(TRACE)).unwrap();
    let ts_of_line = |line: usize| -> f64 {
        let json: Value = serde_json::from_str(source.lines().nth(line - 1).unwrap()).unwrap();
        json["ts"].as_f64().unwrap()
    };
    let slices: Vec<&Value> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    assert!(slices.len() >= 2);
    // Times are the trace's, relative to the first op of the window, in microseconds.
    let line_of = |slice: &Value| -> usize {
        let source = slice["args"]["source"].as_str().unwrap();
        source.split(':').nth(1).unwrap().parse().unwrap()
    };
    let first = slices
        .iter()
        .map(|s| ts_of_line(line_of(s)))
        .fold(f64::INFINITY, f64::min);
    for slice in &slices {
        let expected = (ts_of_line(line_of(slice)) - first) / 1000.0;
        assert!((slice["ts"].as_f64().unwrap() - expected).abs() < 1e-9, "{slice}");
    }
    for a in &slices {
        for b in &slices {
            let same_lane = a["pid"] == b["pid"] && a["tid"] == b["tid"];
            let (start_a, start_b) = (a["ts"].as_f64().unwrap(), b["ts"].as_f64().unwrap());
            if same_lane && start_a < start_b {
                assert!(start_a + a["dur"].as_f64().unwrap() <= start_b, "{a} overlaps {b}");
            }
        }
    }
}

#[test]
fn html_report_of_a_data_race_highlights_its_two_accesses() {
    let html = html_of(TRACE);
    assert_self_contained(&html);
    let finding = &html[html.find("data-code=\"SG601\"").expect("the trace races")..];
    let finding = &finding[..finding.find("</section>").unwrap()];
    let involved = ops_with_role(finding, "involved");
    assert_eq!(involved.len(), 2, "the two unordered accesses: {involved:?}");
}
