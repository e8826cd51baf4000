//! syncguard's analyzer: it checks what the frontends read (`.sync` files through
//! `syncguard_grammar`, call traces through `syncguard_trace`) with concrete executions,
//! the happens-before graph and the prover, and holds the rule catalogue and the
//! renderers. The model itself is the `syncguard-model` crate.

pub mod analysis;
mod consequences;
pub mod exec;
mod frontend;
pub mod hb;
pub mod kernel;
pub mod pool;
pub mod render;
pub mod rules;
pub mod smt;
mod suppress;
pub mod trace;
mod unfollowed;
mod window;

// The shared model, under the paths the analyzer has always given it.
pub use syncguard_model::{api, calls, diagnostic, model, source, suggest, timeline};

pub use analysis::{Analyzed, OrderFindings, analyze, analyze_assignment, analyze_with, findings_by_issue_order};
pub use diagnostic::{Diagnostic, Related, Severity};
pub use frontend::{CheckedFile, Overrides, check_lowered, check_sync_bytes, check_sync_bytes_with, check_sync_file};
pub use model::Program;
pub use source::decode_utf8_lossless_offsets;
pub use source::{FileId, SourceFile, Sources};
pub use suppress::apply_suppressions;
pub use trace::{Converted, convert_trace};
pub use trace::{check_merged_run, check_trace_file, check_trace_reader};
pub use unfollowed::{Unfollowed, set_aside_dependent_findings, set_aside_kernel_findings_after_stop};
pub use window::run_timeline;
