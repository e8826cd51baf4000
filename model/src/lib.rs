//! The model every syncguard frontend lowers into and the analyzer checks: the
//! Program (`model`), the API catalogue (`api`) and the lowering of one call that all
//! frontends share (`calls`), source files and spans (`source`), diagnostics
//! (`diagnostic`) and the execution windows drawn with them (`timeline`). It knows no syntax and no analysis.

pub mod api;
pub mod calls;
pub mod diagnostic;
pub mod kernel;
pub mod model;
pub mod reading_rules;
pub mod source;
pub mod suggest;
pub mod timeline;

pub use diagnostic::{Diagnostic, Related, Rule, Severity};
pub use model::Program;
pub use source::{FileId, SourceFile, Sources};
