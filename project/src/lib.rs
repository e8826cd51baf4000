//! A syncguard project: the files a run checks (found as `git` sees a tree), the
//! configuration that applies to them (`syncguard.toml`, `[tool.syncguard]`), which
//! findings are reported, and the checking of C/C++ and Python sources, whose files are
//! read together. The command line and the language server both check through it.

mod choices;
pub mod config;
pub mod incremental;
pub mod inputs;
pub mod progress;
mod reader_limits;
pub mod selection;
pub mod sources;

pub use config::Config;
pub use progress::Progress;
pub use selection::Selection;
pub use sources::{Language, SourceOptions};

use syncguard_analyzer::{Diagnostic, Sources, apply_suppressions};

/// Keep the findings a project reports: those the selection and the configuration's
/// per-file ignores let through, less those suppressed in the code.
pub fn reported(diagnostics: &mut Vec<Diagnostic>, sources: &Sources, selection: &Selection, config: &Config) {
    selection.apply(diagnostics);
    config.apply(diagnostics, sources);
    apply_suppressions(diagnostics, sources);
}
