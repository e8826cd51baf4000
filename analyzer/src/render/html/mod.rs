//! One self-contained HTML page: a summary of the findings per file and rule, then each
//! finding with its timeline (inline SVG), the calls it involves and its fix, then the
//! source lines they point at. Styles and the small script are inline and the page
//! loads nothing (its Content-Security-Policy forbids it), so it works offline.

mod source_lines;
mod svg;

use std::collections::BTreeMap;
use std::fmt::Write;

use source_lines::SourceIndex;

use crate::diagnostic::{Diagnostic, Severity};
use crate::smt::{Proof, Unproved};
use crate::source::Sources;
use crate::timeline::{Highlight, Timeline};

/// Findings drawn with their timelines; past it they are listed without one, so that a
/// report of thousands of findings stays a page a browser opens.
pub const MAX_TIMELINES: usize = 200;

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("report.js");
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// What the page is about, besides the findings.
#[derive(Clone, Debug, Default)]
pub struct HtmlReport {
    /// "syncguard check examples/": the page title.
    pub title: String,
    pub files_checked: usize,
    /// `verify-then-run`: what the run did.
    pub run: Option<RunSection>,
    /// What z3 proved for every parameter value, and what it left to the concrete runs.
    pub proofs: Vec<Proof>,
    pub unproved: Vec<Unproved>,
}

/// A run's outcome: its summary line, and the failed calls (a wait that timed out is
/// where it hung).
#[derive(Clone, Debug, Default)]
pub struct RunSection {
    pub summary: String,
    pub faults: Vec<String>,
    /// The run's ops, with where each lane stopped.
    pub timeline: Option<Timeline>,
}

/// The whole page.
pub fn render_html(diagnostics: &[Diagnostic], sources: &Sources, report: &HtmlReport) -> String {
    let index = SourceIndex::new(sources);
    let mut body = String::new();
    body.push_str(&header(diagnostics, report));
    if let Some(run) = &report.run {
        body.push_str(&run_section(run, &index));
    }
    body.push_str(&summary_table(diagnostics, &index));
    body.push_str(&finder(diagnostics, &index));
    body.push_str(&legend());
    for (number, diagnostic) in diagnostics.iter().enumerate() {
        body.push_str(&finding(diagnostic, number, &index));
    }
    body.push_str(&proofs_section(&report.proofs, &report.unproved, &index));
    let listing = index.listing();
    if !listing.is_empty() {
        let _ = write!(
            body,
            r#"<section id="sources"><h2>Source lines</h2>{listing}</section>"#
        );
    }
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="syncguard {version}">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
{markers}
<main>
{body}
</main>
<div id="tooltip" role="tooltip" hidden></div>
<script>{SCRIPT}</script>
</body>
</html>
"#,
        version = env!("CARGO_PKG_VERSION"),
        title = escape(&report.title),
        markers = svg::markers(),
    )
}

/// What was proved for every parameter value (with the facts a proof rests on, where
/// `--explain` asked for them), and what was only checked with some values.
fn proofs_section(proofs: &[Proof], unproved: &[Unproved], index: &SourceIndex) -> String {
    if proofs.is_empty() && unproved.is_empty() {
        return String::new();
    }
    let place = |span: &crate::source::Span| {
        let location = index.location(span);
        format!(
            r##"<a href="#{}">{}:{}</a>"##,
            location.anchor(),
            escape(&location.path),
            location.line
        )
    };
    let mut out = String::from(r#"<section id="proofs"><h2>Proofs</h2><ul class="proofs">"#);
    for proof in proofs {
        let _ = write!(
            out,
            r#"<li class="proved">proved <code>{}</code> for {} ({})"#,
            proof.property,
            escape(&proof.scope),
            place(&proof.span)
        );
        if !proof.because.is_empty() {
            out.push_str(r#"<ul class="because">"#);
            for (span, why) in &proof.because {
                let _ = write!(out, "<li>because {}: {}</li>", place(span), escape(why));
            }
            out.push_str("</ul>");
        }
        out.push_str("</li>");
    }
    for entry in unproved {
        let checked = crate::render::proofs::checked_only_with(&entry.checked);
        let _ = write!(
            out,
            r#"<li class="unproved">not proved <code>{}</code> ({}): {}{}</li>"#,
            entry.property,
            place(&entry.span),
            escape(&entry.reason),
            escape(&checked)
        );
    }
    out.push_str("</ul></section>");
    out
}

fn header(diagnostics: &[Diagnostic], report: &HtmlReport) -> String {
    let count = |severity| diagnostics.iter().filter(|d| d.severity == severity).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        r#"<header><h1>syncguard report</h1><p class="subtitle">{title}</p><p class="counts"><span class="badge badge-error">{errors}</span> <span class="badge badge-warning">{warnings}</span> <span class="badge badge-info">{infos}</span> in {files}</p></header>"#,
        title = escape(&report.title),
        errors = plural(count(Severity::Error), "error"),
        warnings = plural(count(Severity::Warning), "warning"),
        infos = plural(count(Severity::Info), "note"),
        files = plural(report.files_checked, "file"),
    )
}

/// Filters for a page of many findings (rule, severity, file, text), grouping them (by
/// file, rule or location) and collapsing the cards: hidden until the script runs,
/// since only the script can act on them.
fn finder(diagnostics: &[Diagnostic], index: &SourceIndex) -> String {
    if diagnostics.len() < 2 {
        return String::new();
    }
    let options = |values: std::collections::BTreeSet<String>| -> String {
        values
            .iter()
            .map(|value| format!(r#"<option value="{0}">{0}</option>"#, escape(value)))
            .collect()
    };
    let rules = diagnostics.iter().map(|d| format!("{} {}", d.code, d.name)).collect();
    let severities = diagnostics.iter().map(|d| d.severity.as_str().to_string()).collect();
    let files = diagnostics.iter().map(|d| index.location(&d.primary).path).collect();
    format!(
        r#"<section id="finder" aria-label="filter findings" hidden><input type="search" id="finder-text" placeholder="Search messages, calls, notes" aria-label="search findings"> <select id="finder-rule" aria-label="rule"><option value="">every rule</option>{rules}</select> <select id="finder-severity" aria-label="severity"><option value="">every severity</option>{severities}</select> <select id="finder-file" aria-label="file"><option value="">every file</option>{files}</select> <select id="finder-group" aria-label="group by"><option value="">no grouping</option><option value="file">group by file</option><option value="rule">group by rule</option><option value="location">group by location</option></select> <button type="button" id="finder-collapse">Collapse all</button> <button type="button" id="finder-expand">Expand all</button> <span id="finder-count" aria-live="polite"></span></section>"#,
        rules = options(rules),
        severities = options(severities),
        files = options(files),
    )
}

/// One row per file and rule, linking to its first finding.
fn summary_table(diagnostics: &[Diagnostic], index: &SourceIndex) -> String {
    if diagnostics.is_empty() {
        return r#"<section id="summary"><h2>Findings</h2><p class="clean">No findings.</p></section>"#.into();
    }
    let mut rows: BTreeMap<(String, &str), (usize, usize, &Diagnostic)> = BTreeMap::new();
    for (number, diagnostic) in diagnostics.iter().enumerate() {
        let path = index.location(&diagnostic.primary).path;
        rows.entry((path, diagnostic.code))
            .and_modify(|row| row.0 += 1)
            .or_insert((1, number, diagnostic));
    }
    let mut out = String::from(
        r#"<section id="summary"><h2>Findings</h2><table class="summary"><thead><tr><th>File</th><th>Rule</th><th>Severity</th><th>Count</th><th>First finding</th></tr></thead><tbody>"#,
    );
    for ((path, code), (count, first, diagnostic)) in &rows {
        let _ = write!(
            out,
            r##"<tr><td><code>{path}</code></td><td><code>{code}</code> {name}</td><td><span class="sev sev-{severity}">{severity}</span></td><td class="number">{count}</td><td><a href="#finding-{first}">{message}</a></td></tr>"##,
            path = escape(path),
            name = escape(diagnostic.name),
            severity = diagnostic.severity.as_str(),
            message = escape(&diagnostic.message),
        );
    }
    out.push_str("</tbody></table></section>");
    out
}

fn legend() -> String {
    r#"<section class="legend" aria-label="legend"><span><svg width="30" height="16"><rect class="swatch op-context" x="1" y="1" width="28" height="14" rx="3"/></svg>op</span><span><svg width="30" height="16"><rect class="swatch op-involved" x="1" y="1" width="28" height="14" rx="3"/></svg>call the finding names</span><span><svg width="30" height="16"><rect class="swatch op-cycle" x="1" y="1" width="28" height="14" rx="3"/></svg>op on the deadlock cycle</span><span><svg width="30" height="16"><rect class="swatch op-stuck" x="1" y="1" width="28" height="14" rx="3"/></svg>never runs</span><span><svg width="34" height="16"><line class="edge-match" x1="2" y1="8" x2="32" y2="8"/></svg>record → wait</span><span><svg width="34" height="16"><line class="edge-sync" x1="2" y1="8" x2="32" y2="8"/></svg>host synchronize</span><span><svg width="34" height="16"><line class="edge-cycle" x1="2" y1="8" x2="32" y2="8"/></svg>cycle step</span><span><svg width="34" height="16"><line class="ghost-line" x1="2" y1="8" x2="32" y2="8"/></svg>signal a wait lacks or reads stale (ghost)</span><span><svg width="34" height="16"><line class="edge-hang" x1="2" y1="8" x2="32" y2="8"/></svg>host call that never returns</span><span><svg width="34" height="22"><line class="race-line" x1="2" y1="11" x2="32" y2="11"/><circle class="race-dot" cx="17" cy="11" r="8"/><text class="race-text" x="17" y="16" text-anchor="middle">≠</text></svg>accesses nothing orders (race)</span><span><svg width="22" height="22"><circle class="step step-witness" cx="11" cy="11" r="9"/></svg>order in which it happens (z3 witness / cycle)</span></section>"#.into()
}

/// One finding: headline, location, timeline, related calls, notes and help.
fn finding(diagnostic: &Diagnostic, number: usize, index: &SourceIndex) -> String {
    let primary = index.location(&diagnostic.primary);
    let mut out = format!(
        r##"<section class="finding sev-border-{severity}" id="finding-{number}" data-code="{code}" data-name="{name}" data-severity="{severity}" data-file="{path}" data-location="{path}:{line}"><h2><span class="sev sev-{severity}">{severity}</span> <code>{code}</code> {name}</h2><p class="message">{message}</p><p class="where"><a href="#{anchor}">{path}:{line}:{column}</a> <code class="snippet">{text}</code></p>"##,
        severity = diagnostic.severity.as_str(),
        code = diagnostic.code,
        name = escape(diagnostic.name),
        message = escape(&diagnostic.message),
        anchor = primary.anchor(),
        path = escape(&primary.path),
        line = primary.line,
        column = primary.column,
        text = escape(primary.text.trim()),
    );
    if !diagnostic.label.is_empty() {
        let _ = write!(out, r#"<p class="label">{}</p>"#, escape(&diagnostic.label));
    }
    match &diagnostic.timeline {
        Some(timeline) if number < MAX_TIMELINES => {
            out.push_str(&timeline_figure(timeline, index, &format!("f{number}")))
        }
        Some(_) => {
            out.push_str(r#"<p class="no-timeline">Timeline left out: the report draws the first 200 findings.</p>"#)
        }
        None => {}
    }
    if !diagnostic.related.is_empty() {
        out.push_str(r#"<h3>Involved calls</h3><ul class="related">"#);
        for related in &diagnostic.related {
            let location = index.location(&related.span);
            let _ = write!(
                out,
                r##"<li><a href="#{}">{}:{}</a> {} <code class="snippet">{}</code></li>"##,
                location.anchor(),
                escape(&location.path),
                location.line,
                escape(&related.message),
                escape(location.text.trim()),
            );
        }
        out.push_str("</ul>");
    }
    if !diagnostic.notes.is_empty() {
        out.push_str(r#"<ul class="notes">"#);
        for note in &diagnostic.notes {
            let _ = write!(out, "<li>{}</li>", escape(note));
        }
        out.push_str("</ul>");
    }
    if let Some(help) = &diagnostic.help {
        let _ = write!(out, r#"<p class="help"><strong>Fix:</strong> {}</p>"#, escape(help));
    }
    out.push_str("</section>");
    out
}

fn timeline_figure(timeline: &Timeline, index: &SourceIndex, id: &str) -> String {
    let shown = timeline.ops.len();
    let what = match timeline.highlight {
        _ if id == RUN_ID => "dashed: ops the run never called; highlighted: the calls that failed",
        Highlight::Cycle => "the deadlock cycle in red, numbered in cycle order",
        Highlight::Witness => "numbered: an execution order where it happens (z3)",
        Highlight::Involved => "the calls the finding names highlighted",
    };
    let mut caption = format!("{shown} ops in happens-before order; {what}");
    if timeline.omitted > 0 {
        let _ = write!(caption, "; {} other ops of the execution omitted", timeline.omitted);
    }
    if let Some(assignment) = &timeline.assignment {
        let _ = write!(caption, "; run with {assignment}");
    }
    format!(
        r#"<figure class="timeline-figure">{}<figcaption>{}</figcaption></figure>"#,
        svg::timeline_svg(timeline, index, id),
        escape(&caption)
    )
}

fn run_section(run: &RunSection, index: &SourceIndex) -> String {
    let mut out = format!(
        r#"<section id="run" class="run"><h2>Run</h2><p class="run-summary">{}</p>"#,
        escape(&run.summary)
    );
    if !run.faults.is_empty() {
        out.push_str(r#"<ul class="faults">"#);
        for fault in &run.faults {
            let _ = write!(out, "<li>{}</li>", escape(fault));
        }
        out.push_str("</ul>");
    }
    if let Some(timeline) = &run.timeline {
        out.push_str(&timeline_figure(timeline, index, RUN_ID));
    }
    out.push_str("</section>");
    out
}

/// The element id prefix of the run's timeline.
const RUN_ID: &str = "run";

/// Text for HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
