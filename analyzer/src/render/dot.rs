//! The happens-before neighbourhood of each finding as Graphviz. Graphviz reads one
//! graph per input (several concatenated `digraph`s make `dot -Tsvg` write invalid SVG,
//! and 2.43 aborts on them), so a run is one `digraph` with a cluster per finding
//! ([`render_dot`]), or one `digraph` per finding, each for a file of its own
//! ([`render_dot_graphs`]). Inside a finding: a cluster per lane in program order, match
//! and host-synchronize edges between lanes, the cycle in red.
//!
//! Every node and cluster name carries the finding's number (`f3_op0`,
//! `cluster_3_lane_1`): Graphviz has one namespace per graph, and the same name in two
//! findings would merge their nodes.

use std::fmt::Write;

use super::json::position;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;
use crate::timeline::{EdgeKind, Role, Timeline};

/// The attributes every graph starts with, in either form. `newrank` ranks all clusters
/// together: dot's default ranks each cluster on its own, and with many findings in
/// one graph that fails ("trouble in init_rank" in Graphviz 2.43, edges lost).
const DEFAULTS: &str = "  labelloc=t;\n  rankdir=LR;\n  newrank=true;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f6f8fa\", fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";

/// One finding drawn as a graph of its own (`check --format dot -o DIR/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FindingGraph {
    /// The finding's place in the report, from 1 (its cluster in [`render_dot`] has the
    /// same number).
    pub number: usize,
    /// Its rule: "SG501".
    pub code: &'static str,
    /// A whole `digraph`.
    pub dot: String,
}

/// Every finding in one `digraph`: each is `subgraph cluster_N` (N from 1, in report
/// order) labelled with its code and message.
pub fn render_dot(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    let label = match diagnostics.len() {
        0 => "syncguard: no findings".to_string(),
        1 => "syncguard: 1 finding".to_string(),
        n => format!("syncguard: {n} findings"),
    };
    let mut out = format!("digraph syncguard {{\n  label={};\n{DEFAULTS}", quote(&label));
    for (number, diagnostic) in numbered(diagnostics) {
        let _ = writeln!(
            out,
            "  subgraph cluster_{number} {{\n    label={};\n    style=rounded;\n    color=\"#57606a\";",
            quote(&title(diagnostic, sources))
        );
        out.push_str(&finding(number, diagnostic, sources, "    "));
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

/// Each finding as a `digraph` of its own, labelled with its code and message.
pub fn render_dot_graphs(diagnostics: &[Diagnostic], sources: &Sources) -> Vec<FindingGraph> {
    numbered(diagnostics)
        .map(|(number, diagnostic)| FindingGraph {
            number,
            code: diagnostic.code,
            dot: format!(
                "digraph finding_{number} {{\n  label={};\n{DEFAULTS}{}}}\n",
                quote(&title(diagnostic, sources)),
                finding(number, diagnostic, sources, "  ")
            ),
        })
        .collect()
}

/// The findings numbered from 1, as people count them and as the file names show.
fn numbered(diagnostics: &[Diagnostic]) -> impl Iterator<Item = (usize, &Diagnostic)> {
    diagnostics.iter().enumerate().map(|(index, d)| (index + 1, d))
}

/// "SG501 deadlock at a.sync:12: message", and how much of the execution is left out.
fn title(diagnostic: &Diagnostic, sources: &Sources) -> String {
    let (file, line, _) = position(&diagnostic.primary, sources, false);
    let mut title = format!(
        "{} {} at {file}:{line}: {}",
        diagnostic.code, diagnostic.name, diagnostic.message
    );
    if let Some(timeline) = &diagnostic.timeline
        && timeline.omitted > 0
    {
        let _ = write!(title, " ({} other ops omitted)", timeline.omitted);
    }
    title
}

/// The statements of one finding, each line starting with `pad`: its timeline, or the
/// call it points at when the rule found it without an execution (so that every
/// finding has its cluster, and Graphviz draws no empty one).
fn finding(number: usize, diagnostic: &Diagnostic, sources: &Sources, pad: &str) -> String {
    match &diagnostic.timeline {
        Some(timeline) => timeline_statements(number, timeline, sources, pad),
        None => {
            let (file, line, _) = position(&diagnostic.primary, sources, false);
            let mut label = format!("{file}:{line}");
            if !diagnostic.label.is_empty() {
                let _ = write!(label, "\n{}", diagnostic.label);
            }
            format!(
                "{pad}f{number}_primary [label={}, tooltip={}{}];\n",
                quote(&label),
                quote(&format!("{file}:{line}")),
                role_style(Role::Involved)
            )
        }
    }
}

/// A cluster per lane with its ops in program order, then the edges between lanes.
fn timeline_statements(number: usize, timeline: &Timeline, sources: &Sources, pad: &str) -> String {
    let mut out = String::new();
    for (lane_index, lane) in timeline.lanes.iter().enumerate() {
        let _ = writeln!(
            out,
            "{pad}subgraph cluster_{number}_lane_{lane_index} {{\n{pad}  label={};\n{pad}  style=rounded;\n{pad}  color=\"#d1d9e0\";",
            quote(&lane.name)
        );
        let ops: Vec<usize> = (0..timeline.ops.len())
            .filter(|&i| timeline.ops[i].lane == lane_index)
            .collect();
        for &i in &ops {
            let _ = writeln!(out, "{pad}  {}", node(number, timeline, i, sources));
        }
        // Program order: it holds the lane's ops in a row.
        for pair in ops.windows(2) {
            let on_cycle = timeline
                .edges
                .iter()
                .any(|e| e.on_cycle && e.kind == EdgeKind::Program && e.from == pair[0] && e.to == pair[1]);
            let style = if on_cycle {
                "color=\"#cf222e\", penwidth=2.5"
            } else {
                "color=\"#8c959f\""
            };
            let _ = writeln!(
                out,
                "{pad}  f{number}_op{} -> f{number}_op{} [{style}];",
                pair[0], pair[1]
            );
        }
        let _ = writeln!(out, "{pad}}}");
    }
    for edge in timeline.edges.iter().filter(|e| e.kind != EdgeKind::Program) {
        let style = match (edge.on_cycle, edge.kind) {
            (true, _) => "color=\"#cf222e\", penwidth=2.5",
            (false, EdgeKind::Match) => "color=\"#0969da\"",
            (false, EdgeKind::HostSync) => "color=\"#8250df\", style=dashed",
            _ => "color=\"#8c959f\", style=dotted",
        };
        let _ = writeln!(
            out,
            "{pad}f{number}_op{} -> f{number}_op{} [label={}, {style}];",
            edge.from,
            edge.to,
            quote(edge.kind.as_str())
        );
    }
    out
}

/// One op: its call, what it names, where it is, and whether it ever runs.
fn node(number: usize, timeline: &Timeline, index: usize, sources: &Sources) -> String {
    let op = &timeline.ops[index];
    let (file, line, _) = position(&op.span, sources, false);
    let mut label = op.label.clone();
    if let Some(step) = op.number {
        label = format!("{step}. {label}");
    }
    if let Some(object) = &op.object {
        let _ = write!(label, "\n{object}");
    }
    let _ = write!(label, "\n{file}:{line}");
    if !op.executed {
        label.push_str("\nnever runs");
    }
    let dashed = if op.executed {
        ""
    } else {
        ", style=\"rounded,filled,dashed\""
    };
    format!(
        "f{number}_op{index} [label={}, tooltip={}{}{dashed}];",
        quote(&label),
        quote(&format!("{file}:{line}")),
        role_style(op.role)
    )
}

/// The colours of an op by its part in the finding: the cycle red, involved calls orange.
fn role_style(role: Role) -> &'static str {
    match role {
        Role::Cycle => ", color=\"#cf222e\", fillcolor=\"#ffebe9\", penwidth=2.5",
        Role::Involved => ", color=\"#bc4c00\", fillcolor=\"#fff1e5\", penwidth=2",
        Role::Context => "",
    }
}

/// A DOT string literal: quotes and backslashes escaped, newlines as `\n` (a centred
/// line break in a label). Other control characters, which a kernel name or a trace's
/// argument can hold, become spaces: SVG is XML, and XML 1.0 cannot carry them.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quote_escapes_what_ends_or_bends_a_dot_string() {
        assert_eq!(quote(r#"a "b" \c\"#), r#""a \"b\" \\c\\""#);
        assert_eq!(quote("one\r\ntwo\tthree\u{1}"), r#""one\ntwo three ""#);
    }
}
