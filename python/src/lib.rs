//! The Python frontend: pyACL and torch_npu host code to `.sync` programs, one per
//! entry point, lowered to the Program model by the `.sync` lowering with spans that
//! point into the Python files.
//!
//! tree-sitter's types stay inside this crate. Reading never fails: what does not
//! parse or cannot be followed is reported as unresolved.

mod extract_cache;
mod index;
mod program;
mod value;
mod walk;

pub use index::EXTENSIONS;
pub use program::{
    EntryProgram, ExtractCache, Options, ParseCache, Project, SourceText, Unresolved, read_project, read_project_cached,
};
