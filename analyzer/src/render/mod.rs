//! Renderers: diagnostics to text (ariadne) or JSON. Each takes the run's `Sources`
//! so that spans become file names, lines and columns.

mod clip;
mod json;
mod proofs;
mod text;

pub use json::render_json;
pub use proofs::render_proofs;
pub use text::{TextOptions, render_text};
