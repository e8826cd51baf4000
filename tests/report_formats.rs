//! `--format html|chrome-trace|dot`: the documents that draw each finding's execution.
//! The HTML page is self-contained (nothing it could load), draws every op of a
//! deadlock cycle highlighted, and links each op to its source line; the Chrome trace
//! loads back with consistent events and flows; the DOT output is one graph that marks
//! the cycle, read back here by a small lexer (CI has no Graphviz).
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
        // A flow leaves at the end of its signalling slice and never ends before it
        // leaves (unless the waiting slice is over before that).
        let flow_ts = |ph: &str, id: u64| {
            events
                .iter()
                .find(|e| e["ph"] == ph && e["id"] == id)
                .and_then(|e| e["ts"].as_f64())
                .unwrap()
        };
        for id in flows.keys() {
            let (leaves, arrives) = (flow_ts("s", *id), flow_ts("f", *id));
            let start = events.iter().find(|e| e["ph"] == "s" && e["id"] == *id).unwrap();
            let source = slices
                .iter()
                .find(|s| {
                    s["pid"] == start["pid"] && s["tid"] == start["tid"] && {
                        let begin = s["ts"].as_f64().unwrap();
                        (begin..begin + s["dur"].as_f64().unwrap()).contains(&leaves)
                    }
                })
                .unwrap();
            let end = source["ts"].as_f64().unwrap() + source["dur"].as_f64().unwrap();
            assert!(
                end - leaves <= source["dur"].as_f64().unwrap() * 0.05,
                "{path}: flow {id} leaves at its slice's end"
            );
            let target = events.iter().find(|e| e["ph"] == "f" && e["id"] == *id).unwrap();
            let target_end = slices
                .iter()
                .filter(|s| s["pid"] == target["pid"] && s["tid"] == target["tid"])
                .map(|s| s["ts"].as_f64().unwrap() + s["dur"].as_f64().unwrap())
                .find(|end| *end > arrives)
                .unwrap();
            assert!(
                arrives >= leaves || target_end <= leaves,
                "{path}: flow {id} ends before it starts"
            );
        }
    }
}

/// A token of DOT as the renderer writes it.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// A name or number: `digraph`, `f1_op0`, `2.5`.
    Id(String),
    /// A quoted string, its escapes decoded as Graphviz reads them (`\"`, `\\`, `\n`).
    Str(String),
    Arrow,
    Punct(char),
}

/// The tokens of `dot`; panics on a string that is not closed.
fn tokens(dot: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = dot.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut text = String::new();
                loop {
                    match chars.next().expect("a string literal is closed") {
                        '"' => break,
                        '\\' => match chars.next().expect("an escape is complete") {
                            'n' => text.push('\n'),
                            c @ ('"' | '\\') => text.push(c),
                            c => text.extend(['\\', c]),
                        },
                        '\n' => panic!("a raw newline in a string literal"),
                        c => text.push(c),
                    }
                }
                out.push(Token::Str(text));
            }
            '-' if chars.peek() == Some(&'>') => {
                chars.next();
                out.push(Token::Arrow);
            }
            c if c.is_alphanumeric() || c == '_' || c == '.' => {
                let mut id = String::from(c);
                while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_' || **c == '.') {
                    id.push(c);
                    chars.next();
                }
                out.push(Token::Id(id));
            }
            c if c.is_whitespace() => {}
            c => out.push(Token::Punct(c)),
        }
    }
    out
}

/// What a DOT document holds, read from its tokens.
#[derive(Debug, Default)]
struct DotGraph {
    /// The top-level `digraph`s (the document must be exactly one).
    graphs: usize,
    /// The clusters directly inside the graph (one per finding): name and label.
    clusters: Vec<(String, String)>,
    /// The label of the graph itself.
    label: Option<String>,
    /// Every node statement: its id, and the top-level cluster it is in.
    nodes: Vec<(String, Option<usize>)>,
    /// Every edge: its ends, and the top-level cluster it is in.
    edges: Vec<(String, String, Option<usize>)>,
}

/// Read `dot` back, checking that its braces and brackets nest and that nothing follows
/// the graph.
fn read_dot(dot: &str) -> DotGraph {
    let tokens = tokens(dot);
    let mut graph = DotGraph::default();
    // The open braces: `Some(index into graph.clusters)` for a finding's cluster.
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut in_attributes = false;
    let current = |open: &[Option<usize>]| open.iter().flatten().next().copied();
    for (at, token) in tokens.iter().enumerate() {
        let next = |n: usize| tokens.get(at + n);
        let prev = at.checked_sub(1).map(|i| &tokens[i]);
        match token {
            Token::Id(word) if word == "digraph" && open.is_empty() => {
                graph.graphs += 1;
                assert!(matches!(next(2), Some(Token::Punct('{'))), "digraph NAME {{");
            }
            Token::Id(word) if word == "subgraph" => {
                let Some(Token::Id(name)) = next(1) else {
                    panic!("a subgraph is named")
                };
                assert_eq!(next(2), Some(&Token::Punct('{')), "subgraph {name} {{");
                if open.len() == 1 {
                    assert!(name.starts_with("cluster_"), "{name} is drawn as a cluster");
                    graph.clusters.push((name.clone(), String::new()));
                }
            }
            Token::Punct('{') => {
                assert!(!in_attributes);
                let opens_cluster = open.len() == 1 && at >= 2 && tokens[at - 2] == Token::Id("subgraph".into());
                open.push(opens_cluster.then(|| graph.clusters.len() - 1));
            }
            Token::Punct('}') => {
                assert!(!in_attributes);
                open.pop().expect("a closing brace closes something");
                if open.is_empty() {
                    assert_eq!(
                        at + 1,
                        tokens.len(),
                        "nothing follows the graph: {:?}",
                        &tokens[at + 1..]
                    );
                }
            }
            Token::Punct('[') => {
                assert!(!in_attributes, "attribute lists do not nest");
                in_attributes = true;
            }
            Token::Punct(']') => {
                assert!(in_attributes);
                in_attributes = false;
            }
            Token::Id(word) if word == "label" && !in_attributes => {
                let Some(Token::Str(label)) = next(2) else {
                    panic!("label=\"...\"")
                };
                match open.len() {
                    1 => graph.label = Some(label.clone()),
                    2 if open[1].is_some() => graph.clusters.last_mut().unwrap().1 = label.clone(),
                    _ => {}
                }
            }
            Token::Arrow => {
                let (Some(Token::Id(from)), Some(Token::Id(to))) = (prev, next(1)) else {
                    panic!("an edge joins two node ids")
                };
                graph.edges.push((from.clone(), to.clone(), current(&open)));
            }
            Token::Id(id)
                if !in_attributes
                    && next(1) == Some(&Token::Punct('['))
                    && prev != Some(&Token::Arrow)
                    && !["node", "edge", "graph"].contains(&id.as_str()) =>
            {
                graph.nodes.push((id.clone(), current(&open)));
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "every brace is closed");
    assert_eq!(graph.graphs, 1, "exactly one top-level digraph: {dot}");
    graph
}

/// Node ids are unique over the whole graph, and each edge joins two of its nodes.
fn assert_edges_join_unique_nodes(graph: &DotGraph) {
    let mut ids = HashSet::new();
    for (id, _) in &graph.nodes {
        assert!(ids.insert(id), "node {id} is defined twice");
    }
    for (from, to, _) in &graph.edges {
        assert!(
            ids.contains(from) && ids.contains(to),
            "{from} -> {to} joins drawn nodes"
        );
    }
}

/// With a cluster per finding: each edge is in a finding's cluster, with both its nodes.
fn assert_edges_stay_in_their_finding(graph: &DotGraph) {
    let clusters: HashMap<&String, Option<usize>> = graph.nodes.iter().map(|(id, c)| (id, *c)).collect();
    for (from, to, cluster) in &graph.edges {
        assert!(cluster.is_some(), "{from} -> {to} is in a finding's cluster");
        assert_eq!(
            clusters[from], *cluster,
            "{from} -> {to}: {from} is in the edge's finding"
        );
        assert_eq!(clusters[to], *cluster, "{from} -> {to}: {to} is in the edge's finding");
    }
}

/// The findings of `path` as (code, message), in report order.
fn findings_of(path: &str) -> Vec<(String, String)> {
    let json: Value = serde_json::from_str(&stdout_of(&["check", "--format", "json", path])).unwrap();
    json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn dot_output_is_one_graph_with_a_cluster_per_finding() {
    let dot = stdout_of(&["check", "--format", "dot", "examples/"]);
    let graph = read_dot(&dot);
    let findings = findings_of("examples/");
    assert!(findings.len() > 20, "the examples find plenty: {}", findings.len());
    assert_eq!(graph.clusters.len(), findings.len(), "one cluster per finding");
    for (number, ((name, label), (code, message))) in graph.clusters.iter().zip(&findings).enumerate() {
        assert_eq!(name, &format!("cluster_{}", number + 1));
        assert!(
            label.starts_with(&format!("{code} ")) && label.contains(message.as_str()),
            "{name} is labelled with its finding, {code}: {message}; got {label}"
        );
    }
    assert_eq!(
        graph.label.as_deref(),
        Some(format!("syncguard: {} findings", findings.len()).as_str())
    );
    assert!(graph.nodes.len() > findings.len(), "the findings' ops are drawn");
    assert!(
        graph.nodes.iter().all(|(_, cluster)| cluster.is_some()),
        "every node is in a finding"
    );
    assert_edges_join_unique_nodes(&graph);
    assert_edges_stay_in_their_finding(&graph);
}

#[test]
fn dot_labels_escape_quotes_and_backslashes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.sync");
    // A kernel name with both characters that end or bend a DOT string.
    std::fs::write(
        &path,
        r#"target A3;
let s1 = aclrtCreateStream();
let s2 = aclrtCreateStream();
let buf = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
kernel(s1, "say \"hi\" \\ bye\\", writes: [buf]);
kernel(s2, "read", reads: [buf]);
aclrtSynchronizeStream(s1);
aclrtSynchronizeStream(s2);
aclrtFree(buf);
"#,
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let findings = findings_of(path);
    let (_, message) = findings
        .iter()
        .find(|(code, _)| code == "SG601")
        .expect("the kernels race");
    assert!(message.contains(r#"say "hi" \ bye\"#), "{message}");
    let dot = stdout_of(&["check", "--format", "dot", path]);
    assert!(dot.contains(r#"say \"hi\" \\ bye\\"#), "escaped as DOT: {dot}");
    let graph = read_dot(&dot);
    assert_eq!(graph.clusters.len(), findings.len());
    assert!(
        graph.clusters.iter().any(|(_, label)| label.contains(message.as_str())),
        "the label reads back as the message: {:?}",
        graph.clusters
    );
    assert_edges_join_unique_nodes(&graph);
    assert_edges_stay_in_their_finding(&graph);
}

#[test]
fn dot_output_to_a_directory_writes_a_graph_per_finding() {
    let findings = findings_of("examples/acl-event-sync");
    let existing = tempfile::tempdir().unwrap();
    let new = existing.path().join("graphs").join("deadlocks");
    let trailing_slash = format!("{}/", new.display());
    for dir in [existing.path().to_str().unwrap(), &trailing_slash] {
        let output = syncguard(&["check", "--format", "dot", "-o", dir, "examples/acl-event-sync"]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.stdout.is_empty());
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".dot"))
            .collect();
        names.sort();
        let expected: Vec<String> = findings
            .iter()
            .enumerate()
            .map(|(index, (code, _))| format!("{:03}-{code}.dot", index + 1))
            .collect();
        assert_eq!(names, expected, "one file per finding, in report order");
        for (name, (code, message)) in names.iter().zip(&findings) {
            let graph = read_dot(&std::fs::read_to_string(std::path::Path::new(dir).join(name)).unwrap());
            let label = graph.label.clone().expect("the graph is labelled");
            assert!(
                label.starts_with(&format!("{code} ")) && label.contains(message.as_str()),
                "{name}: {label}"
            );
            assert!(!graph.nodes.is_empty(), "{name} draws its finding");
            assert_edges_join_unique_nodes(&graph);
        }
    }
}

#[test]
fn dot_graph_marks_the_cycle() {
    let dot = stdout_of(&["check", "--format", "dot", DEADLOCK]);
    assert!(dot.starts_with("digraph syncguard {"), "{dot}");
    assert_eq!(read_dot(&dot).clusters.len(), 1, "{dot}");
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

/// A "browser" in `dir` that records what it was asked to open in `dir/opened`: its
/// path, for `$BROWSER`.
fn recording_browser(dir: &std::path::Path) -> std::path::PathBuf {
    let browser = dir.join("browser.sh");
    // Written whole, then renamed: the test never reads it half-written.
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\necho \"$1\" > {0}.part && mv {0}.part {0}\n",
            dir.join("opened").display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    browser
}

/// What the browser of [`recording_browser`] was asked to open (it runs detached:
/// waited for).
fn opened_by_browser(dir: &std::path::Path) -> String {
    let opened = dir.join("opened");
    for _ in 0..400 {
        if opened.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let said = std::fs::read_to_string(&opened).expect("the browser was started");
    said.trim().to_string()
}

#[test]
fn open_launches_the_browser_on_the_written_report() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let browser = recording_browser(dir.path());
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
    assert_eq!(opened_by_browser(dir.path()), file.to_str().unwrap());
}

#[test]
fn open_without_output_writes_the_report_to_a_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let browser = recording_browser(dir.path());
    let temporary = dir.path().join("tmp");
    std::fs::create_dir(&temporary).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "--format", "html", "--open", DEADLOCK])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("BROWSER", &browser)
        .env("TMPDIR", &temporary)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8(output.stdout).unwrap();
    let report = std::path::Path::new(printed.trim_end_matches('\n'));
    assert_eq!(
        printed.lines().count(),
        1,
        "only the report's path is printed: {printed}"
    );
    assert_eq!(report.parent(), Some(temporary.as_path()), "{printed}");
    let name = report.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("syncguard-report-") && name.ends_with(".html"),
        "{name}"
    );
    let html = std::fs::read_to_string(report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_self_contained(&html);
    assert_eq!(opened_by_browser(dir.path()), report.to_str().unwrap());
    // A second run gets a file of its own.
    let again = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "--format", "html", "--open", DEADLOCK])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("BROWSER", "true")
        .env("TMPDIR", &temporary)
        .output()
        .unwrap();
    let second = String::from_utf8(again.stdout).unwrap();
    assert_ne!(second, printed);
    assert!(std::path::Path::new(second.trim_end()).exists());
    // Still only for the HTML report.
    let refused = syncguard(&["check", "--format", "dot", "--open", DEADLOCK]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--open opens an HTML report"));
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

#[test]
fn html_report_lists_what_was_proved_for_every_parameter_value() {
    let html = html_of("examples/parametric-ring");
    assert_self_contained(&html);
    assert!(html.contains(r#"<section id="proofs">"#), "a proofs section");
    assert!(
        html.contains("proved <code>notify-balance</code> for N in 2..=1024"),
        "the proof as the text output says it"
    );
    let proof_link = html
        .split(r#"<section id="proofs">"#)
        .nth(1)
        .and_then(|proofs| proofs.split("href=\"#").nth(1))
        .and_then(|link| link.split('"').next())
        .unwrap();
    assert!(
        html.contains(&format!("id=\"{proof_link}\"")),
        "the proof links to its source line"
    );
}

#[test]
fn html_report_labels_a_traces_boxes_with_their_source_line_from_loc() {
    let html = html_of("tests/fixtures/traces/missing-reset-with-loc.jsonl");
    assert_self_contained(&html);
    let details: Vec<&str> = html
        .split(r#"class="op-detail""#)
        .skip(1)
        .filter_map(|rest| rest.split('>').nth(1)?.split('<').next())
        .collect();
    assert!(!details.is_empty());
    // Each box names the program's line (`loc`), not the trace's line.
    assert!(
        details
            .iter()
            .all(|detail| detail.contains("train.cpp:1") && !detail.contains("line ")),
        "{details:?}"
    );
    assert!(
        html.contains("in the source: src/train.cpp:1"),
        "the tooltip says the whole path"
    );
}

#[test]
fn html_report_puts_each_lanes_rank_where_no_name_cuts_it_and_tints_ranks_apart() {
    let html = html_of("examples/traces/hccl-write-before-ready.jsonl");
    let names = html.split(r#"<svg class="lane-names""#).nth(1).unwrap();
    let names = names.split("</svg>").next().unwrap();
    let kinds: Vec<&str> = names
        .split(r#"class="lane-kind""#)
        .skip(1)
        .filter_map(|rest| rest.split('>').nth(1)?.split('<').next())
        .collect();
    assert!(
        kinds.contains(&"HCCL thread · rank 0") && kinds.contains(&"HCCL thread · rank 1"),
        "{kinds:?}"
    );
    let lane_names: Vec<&str> = names
        .split(r#"class="lane-name""#)
        .skip(1)
        .filter_map(|rest| rest.split('>').nth(1)?.split('<').next())
        .collect();
    assert!(
        lane_names
            .iter()
            .all(|name| !name.contains("rank") && !name.contains('…')),
        "{lane_names:?}"
    );
    // The full name on hover, and one tint (and stripe) per rank.
    assert!(
        names.contains("<title>HCCL thread thread_0x55a0e100 (rank 0)</title>"),
        "{names}"
    );
    assert!(names.contains(r#"class="rank-stripe rank-0""#) && names.contains(r#"class="rank-stripe rank-1""#));
}

#[test]
fn html_report_draws_a_race_as_a_mark_between_its_two_accesses_with_a_title_naming_it() {
    let html = html_of(TRACE);
    assert_self_contained(&html);
    let race = html
        .split(r#"<g class="race""#)
        .nth(1)
        .and_then(|rest| rest.split("</g>").next())
        .expect("a race mark");
    let title = race
        .split("<title>")
        .nth(1)
        .and_then(|rest| rest.split("</title>").next())
        .unwrap();
    assert!(title.starts_with("data race: "), "{title}");
    assert!(
        title.contains("cudaMemcpyAsync") && title.contains("embedding_fwd"),
        "{title}"
    );
    assert!(race.contains(r#"class="race-line""#), "{race}");
    assert!(
        race.contains(&format!(r#"aria-label="{title}""#)),
        "screen readers read it too"
    );
}

#[test]
fn html_report_tells_apart_the_boxes_of_a_line_that_runs_twice() {
    // The loop runs its body twice: each line's two boxes say which run they are.
    let html = html_of("examples/acl-event-sync/missing-reset.sync");
    for figure in html.split(r#"<svg class="timeline""#).skip(1) {
        let figure = figure.split("</svg>").next().unwrap();
        let details: Vec<&str> = figure
            .split(r#"class="op-detail""#)
            .skip(1)
            .filter_map(|rest| rest.split('>').nth(1)?.split('<').next())
            .collect();
        let lanes_of = |detail: &str| details.iter().filter(|other| **other == detail).count();
        assert!(details.iter().any(|detail| detail.ends_with("#2")), "{details:?}");
        // Per lane a line's runs are numbered; two boxes alike are on different lanes.
        assert!(details.iter().all(|detail| lanes_of(detail) <= 2), "{details:?}");
    }
}

/// The card of the first finding of `code` in `html`.
fn card<'h>(html: &'h str, code: &str) -> &'h str {
    let card = &html[html
        .find(&format!("data-code=\"{code}\""))
        .unwrap_or_else(|| panic!("a {code} card"))..];
    &card[..card.find("</section>").unwrap()]
}

/// The `x` of the box of the op whose tooltip says `says`.
fn box_x(card: &str, says: &str) -> f64 {
    let op = card
        .split("<a class=\"op ")
        .skip(1)
        .find(|op| op.split("</title>").next().unwrap().contains(says))
        .unwrap_or_else(|| panic!("an op saying {says}"));
    attribute_values(op, "x")[0].parse().unwrap()
}

/// The text of the `<title>` of each mark of `class` (`<g class="ghost ...`).
fn mark_titles<'h>(card: &'h str, class: &str) -> Vec<&'h str> {
    card.split(&format!("<g class=\"{class}"))
        .skip(1)
        .map(|mark| mark.split("<title>").nth(1).unwrap().split("</title>").next().unwrap())
        .collect()
}

#[test]
fn html_report_draws_a_ghost_from_the_margin_into_a_wait_nothing_records() {
    let html = html_of("examples/pyacl-event/wait-never-recorded.sync");
    assert_self_contained(&html);
    let card = card(&html, "SG104");
    let titles = mark_titles(card, "ghost ghost-missing");
    assert_eq!(titles.len(), 1, "{card}");
    assert!(titles[0].contains("nothing records event ev"), "{}", titles[0]);
    assert!(
        card.contains(r#"<circle class="ghost-origin""#),
        "it starts at the lane's margin"
    );
    assert!(card.contains(">no record</text>"));
}

#[test]
fn html_report_draws_a_hung_synchronize_after_the_wait_it_blocks_on() {
    let html = html_of("examples/pyacl-event/wait-never-recorded.sync");
    let card = card(&html, "SG104");
    let sync = box_x(card, "acl.rt.synchronize_stream(s1)");
    let wait = box_x(card, "acl.rt.stream_wait_event(s1, ev)");
    let kernel = box_x(card, "kernel resnet50");
    assert!(
        sync > wait && sync > kernel,
        "sync at {sync}, wait at {wait}, kernel at {kernel}"
    );
    let titles = mark_titles(card, "hang\"");
    assert_eq!(titles.len(), 1, "{card}");
    assert!(
        titles[0].starts_with("acl.rt.synchronize_stream never returns: it waits for stream s1, which is stuck at acl.rt.stream_wait_event (line 23)"),
        "{}",
        titles[0]
    );
    assert!(card.contains(">never returns</text>"), "the synchronize is tagged");
}

#[test]
fn html_report_of_a_ring_shows_the_peer_a_wait_expects_and_where_its_record_went() {
    let html = html_of(PARAMETRIC);
    let card = card(&html, "SG502");
    let titles = mark_titles(card, "ghost ghost-wrong-peer");
    let rank_0 = titles
        .iter()
        .find(|title| title.contains("stream s (rank 0) expects rank 1 · notify 0"))
        .unwrap_or_else(|| panic!("rank 0's wait expects rank 1: {titles:?}"));
    assert!(
        rank_0.contains("on stream s (rank 1) goes to rank 2 · notify 0 instead"),
        "{rank_0}"
    );
    assert!(
        card.contains(">expects rank 1 · notify 0</text>"),
        "said on the picture"
    );
    assert!(
        card.contains(">sent to rank 2 · notify 0</text>"),
        "said on the picture"
    );
    // Each rank's synchronize waits behind its stuck stream: it is drawn after every op
    // of that stream (before, it stood where its host thread reached it, left of them).
    let hangs: Vec<&str> = card.split(r#"<g class="hang""#).skip(1).collect();
    assert!(hangs.len() >= 2, "{card}");
    for hang in hangs {
        let (stream_bottom, sync_left) = hang_geometry(hang);
        let stream_ops: Vec<(f64, f64)> = op_rects(card)
            .into_iter()
            .filter(|&(_, y, _)| y + 51.0 == stream_bottom)
            .map(|(x, _, width)| (x, width))
            .collect();
        assert!(stream_ops.len() >= 2, "{hang}");
        for (x, width) in stream_ops {
            assert!(
                x + width < sync_left,
                "an op at {x} after the synchronize at {sync_left}"
            );
        }
    }
}

/// A hang's bracket top (just under its stuck stream's boxes) and where its arrow ends
/// (the synchronize's left edge).
fn hang_geometry(hang: &str) -> (f64, f64) {
    // The numbers of the path of class `class`: not `data-kind="`'s tail, its ` d="`.
    let path = |class: &str| -> Vec<f64> {
        let rest = hang.split(&format!(r#"class="{class}""#)).nth(1).unwrap();
        let d = rest.split(r#" d=""#).nth(1).unwrap().split('"').next().unwrap();
        d.split(|c: char| !c.is_ascii_digit() && c != '.')
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap())
            .collect()
    };
    let bracket = path("hang-bracket");
    let arrow = path("edge edge-hang");
    (bracket[1], arrow[arrow.len() - 2])
}

/// The box of each op of a card: x, y and width.
fn op_rects(card: &str) -> Vec<(f64, f64, f64)> {
    card.split("<a class=\"op ")
        .skip(1)
        .map(|op| {
            let rect = op.split("<rect ").nth(1).unwrap();
            let number = |name: &str| attribute_values(rect, name)[0].parse::<f64>().unwrap();
            (number("x"), number("y"), number("width"))
        })
        .collect()
}

#[test]
fn html_report_draws_a_stale_match_as_a_ghost() {
    let html = html_of("examples/acl-event-sync/missing-reset.sync");
    let card = card(&html, "SG102");
    let titles = mark_titles(card, "ghost ghost-stale");
    assert_eq!(titles.len(), 1, "{card}");
    assert!(
        titles[0].contains("ev is still set by this earlier record"),
        "{}",
        titles[0]
    );
    assert!(card.contains(">stale: still set</text>"));
}
