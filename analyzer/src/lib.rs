//! syncguard's analyzer: the Program model, the lowering of `.sync` files into it,
//! the rule catalogue, diagnostics and their renderers.

pub mod analysis;
pub mod api;
pub mod calls;
mod consequences;
pub mod diagnostic;
pub mod exec;
mod frontend;
pub mod hb;
mod lower;
pub mod model;
pub mod render;
pub mod rules;
pub mod smt;
pub mod source;
mod suggest;
pub mod trace;

pub use analysis::{Analyzed, OrderFindings, analyze, analyze_assignment, analyze_with, findings_by_issue_order};
pub use diagnostic::{Diagnostic, Related, Severity};
pub use frontend::{CheckedFile, Overrides, check_sync_bytes, check_sync_bytes_with, check_sync_file};
pub use model::Program;
pub use source::decode_utf8_lossless_offsets;
pub use source::{FileId, SourceFile, Sources};
pub use trace::convert::{Converted, convert_trace};
pub use trace::{check_trace_file, check_trace_reader};
