//! syncguard's analyzer: the Program model, the lowering of `.sync` files into it,
//! the rule catalogue, diagnostics and their renderers.

pub mod api;
pub mod diagnostic;
mod frontend;
mod lower;
pub mod model;
pub mod render;
pub mod rules;
pub mod source;
mod suggest;

pub use diagnostic::{Diagnostic, Related, Severity};
pub use frontend::{CheckedFile, check_sync_bytes, check_sync_file};
pub use model::Program;
pub use source::decode_utf8_lossless_offsets;
pub use source::{FileId, SourceFile, Sources};
