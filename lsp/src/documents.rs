//! The documents an editor has open, with their unsaved text.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use lsp_types::Url;
use syncguard_project::Language;

#[derive(Clone, Debug)]
pub struct Document {
    pub text: Arc<String>,
    pub version: i32,
    /// The editor's language id (`sync`, `cpp`, `python`, ...).
    pub language_id: String,
}

/// What a document holds, and so how it is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sync,
    Trace,
    Source(Language),
    /// JSON that may be a record of a run (a profiler timeline, a Flight Recorder
    /// dump): its content decides ([`crate::records::Record::of`]).
    Record,
}

impl Kind {
    /// By the file's extension, else by the editor's language id.
    pub fn of(url: &Url, language_id: &str) -> Option<Kind> {
        let path = url.path();
        let extension = path.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
        match extension {
            "sync" => return Some(Kind::Sync),
            "jsonl" | "ndjson" => return Some(Kind::Trace),
            "json" => return Some(Kind::Record),
            _ => {}
        }
        if let Some(language) = Language::of(std::path::Path::new(path)) {
            return Some(Kind::Source(language));
        }
        match language_id {
            "sync" => Some(Kind::Sync),
            "jsonl" => Some(Kind::Trace),
            "json" | "jsonc" => Some(Kind::Record),
            "c" | "cpp" | "cuda-cpp" | "cuda" => Some(Kind::Source(Language::Cpp)),
            "python" => Some(Kind::Source(Language::Python)),
            // PyTorch names a dump by the rank it ends in (`nccl_trace_rank_3`).
            _ if url.scheme() == "file" && is_rank_numbered(path) => Some(Kind::Record),
            _ => None,
        }
    }

    /// The comment that starts a suppression in this kind of file.
    pub fn comment(self) -> Option<&'static str> {
        match self {
            Kind::Sync | Kind::Source(Language::Cpp) => Some("//"),
            Kind::Source(Language::Python) => Some("#"),
            Kind::Trace | Kind::Record => None,
        }
    }
}

/// A file name without extension that ends in a number, as a Flight Recorder dump's.
fn is_rank_numbered(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    !name.contains('.') && name.ends_with(|c: char| c.is_ascii_digit())
}

/// The open documents, shared with the checker as an immutable snapshot.
pub type Snapshot = Arc<HashMap<Url, Document>>;

/// The path of a `file:` URL; `None` for an unsaved buffer (`untitled:`).
pub fn path_of(url: &Url) -> Option<PathBuf> {
    (url.scheme() == "file").then(|| url.to_file_path().ok()).flatten()
}

/// How a document is named in findings and in `Sources`: its path, else its URL.
pub fn display_of(url: &Url) -> String {
    path_of(url).map_or_else(|| url.to_string(), |path| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(url: &str, language_id: &str) -> Option<Kind> {
        Kind::of(&Url::parse(url).unwrap(), language_id)
    }

    #[test]
    fn json_and_rank_numbered_files_may_be_records_and_untitled_buffers_keep_their_language() {
        assert_eq!(kind("file:///run/rank0.pt.trace.json", "json"), Some(Kind::Record));
        assert_eq!(kind("file:///run/fr/nccl_trace_rank_3", "text"), Some(Kind::Record));
        assert_eq!(
            kind("untitled:Untitled-1", "python"),
            Some(Kind::Source(Language::Python))
        );
        assert_eq!(kind("untitled:Untitled-2", "plaintext"), None);
        assert_eq!(kind("file:///src/Makefile", "make"), None);
    }
}
