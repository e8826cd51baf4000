//! Renderers: diagnostics to text (ariadne), one line each (concise, GitHub workflow
//! commands), JSON or SARIF; with their execution windows, to an HTML page of timelines,
//! Chrome Trace Event JSON or Graphviz. Each takes the run's `Sources` so that spans become file
//! names, lines and columns.

mod chrome_trace;
mod clip;
mod dot;
mod fingerprint;
mod html;
mod json;
mod lines;
mod proofs;
mod sarif;
mod text;

pub use chrome_trace::render_chrome_trace;
pub use dot::{FindingGraph, render_dot, render_dot_graphs};
pub use fingerprint::fingerprints;
pub use html::{HtmlReport, MAX_TIMELINES, RunSection, render_html};
pub use json::render_json;
pub use lines::{render_concise, render_github};
pub use proofs::render_proofs;
pub use sarif::{SarifTool, render_sarif};
pub use text::{TextOptions, render_text};
