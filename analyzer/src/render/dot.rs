//! The happens-before neighbourhood of each finding as a Graphviz graph (one `digraph`
//! per finding; `dot -Tsvg` draws them all): a cluster per lane in program order, match
//! and host-synchronize edges between lanes, the cycle in red.

use std::fmt::Write;

use super::json::position;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;
use crate::timeline::{EdgeKind, Role, Timeline};

pub fn render_dot(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    let mut out = String::new();
    for (number, diagnostic) in diagnostics.iter().enumerate() {
        if let Some(timeline) = &diagnostic.timeline {
            out.push_str(&graph(number, diagnostic, timeline, sources));
        }
    }
    out
}

fn graph(number: usize, diagnostic: &Diagnostic, timeline: &Timeline, sources: &Sources) -> String {
    let (file, line, _) = position(&diagnostic.primary, sources, false);
    let mut title = format!(
        "{} {} at {file}:{line}: {}",
        diagnostic.code, diagnostic.name, diagnostic.message
    );
    if timeline.omitted > 0 {
        let _ = write!(title, " ({} other ops omitted)", timeline.omitted);
    }
    let mut out = format!(
        "digraph finding_{number} {{\n  label={};\n  labelloc=t;\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f6f8fa\", fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n",
        quote(&title)
    );
    for (lane_index, lane) in timeline.lanes.iter().enumerate() {
        let _ = writeln!(
            out,
            "  subgraph cluster_{lane_index} {{\n    label={};\n    style=rounded;\n    color=\"#d1d9e0\";",
            quote(&lane.name)
        );
        let ops: Vec<usize> = (0..timeline.ops.len())
            .filter(|&i| timeline.ops[i].lane == lane_index)
            .collect();
        for &i in &ops {
            out.push_str(&node(timeline, i, sources));
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
            let _ = writeln!(out, "    op{} -> op{} [{style}];", pair[0], pair[1]);
        }
        out.push_str("  }\n");
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
            "  op{} -> op{} [label={}, {style}];",
            edge.from,
            edge.to,
            quote(edge.kind.as_str())
        );
    }
    out.push_str("}\n");
    out
}

fn node(timeline: &Timeline, index: usize, sources: &Sources) -> String {
    let op = &timeline.ops[index];
    let (file, line, _) = position(&op.span, sources, false);
    let mut label = op.label.clone();
    if let Some(number) = op.number {
        label = format!("{number}. {label}");
    }
    if let Some(object) = &op.object {
        let _ = write!(label, "\n{object}");
    }
    let _ = write!(label, "\n{file}:{line}");
    if !op.executed {
        label.push_str("\nnever runs");
    }
    let style = match op.role {
        Role::Cycle => ", color=\"#cf222e\", fillcolor=\"#ffebe9\", penwidth=2.5",
        Role::Involved => ", color=\"#bc4c00\", fillcolor=\"#fff1e5\", penwidth=2",
        Role::Context => "",
    };
    let dashed = if op.executed {
        ""
    } else {
        ", style=\"rounded,filled,dashed\""
    };
    format!(
        "    op{index} [label={}, tooltip={}{style}{dashed}];\n",
        quote(&label),
        quote(&format!("{file}:{line}"))
    )
}

/// A DOT string literal: quotes and backslashes escaped, newlines as `\n`.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
