//! Renderers: diagnostics to text (ariadne), one line each (concise, GitHub workflow
//! commands), JSON or SARIF. Each takes the run's `Sources` so that spans become file
//! names, lines and columns.

mod clip;
mod fingerprint;
mod json;
mod lines;
mod proofs;
mod sarif;
mod text;

pub use fingerprint::fingerprints;
pub use json::render_json;
pub use lines::{render_concise, render_github};
pub use proofs::render_proofs;
pub use sarif::{SarifTool, render_sarif};
pub use text::{TextOptions, render_text};
