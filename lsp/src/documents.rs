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
}

impl Kind {
    /// By the file's extension, else by the editor's language id.
    pub fn of(url: &Url, language_id: &str) -> Option<Kind> {
        let path = url.path();
        let extension = path.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
        match extension {
            "sync" => return Some(Kind::Sync),
            "jsonl" | "ndjson" => return Some(Kind::Trace),
            _ => {}
        }
        if let Some(language) = Language::of(std::path::Path::new(path)) {
            return Some(Kind::Source(language));
        }
        match language_id {
            "sync" => Some(Kind::Sync),
            "jsonl" => Some(Kind::Trace),
            "c" | "cpp" | "cuda-cpp" | "cuda" => Some(Kind::Source(Language::Cpp)),
            "python" => Some(Kind::Source(Language::Python)),
            _ => None,
        }
    }

    /// The comment that starts a suppression in this kind of file.
    pub fn comment(self) -> Option<&'static str> {
        match self {
            Kind::Sync | Kind::Source(Language::Cpp) => Some("//"),
            Kind::Source(Language::Python) => Some("#"),
            Kind::Trace => None,
        }
    }
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
