//! The C/C++ frontend: operator source (host ACL/HCCL code, CUDA, Ascend C) to
//! `.sync` programs, one per entry point, lowered to the Program model by the `.sync`
//! lowering with spans that point into the C/C++ files.
//!
//! tree-sitter's types stay inside this crate. Reading never fails: what does not
//! parse or cannot be followed is reported as unresolved.

mod compile_db;
mod extract;
mod extract_cache;
mod fields;
mod index;
mod macros;
mod mask;
mod program;
mod reach;
mod scope;
mod type_tables;

pub use compile_db::{BuildFlags, CompileDb};
pub use index::EXTENSIONS;
pub use program::{
    EntryProgram, ExtractCache, Options, ParseCache, Project, SourceText, Unresolved, parse_rank_counts, read_project,
    read_project_cached,
};
