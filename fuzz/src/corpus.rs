//! The seed corpus: every `.sync`, `.jsonl`, C/C++ and Python file under the repo's examples, the rule
//! fixtures and tests, and `fuzz/corpus/` (minimized inputs of reported problems).

use std::path::{Path, PathBuf};

#[derive(Default)]
pub struct Corpus {
    pub programs: Vec<Vec<u8>>,
    pub traces: Vec<Vec<u8>>,
    /// C/C++ sources.
    pub sources: Vec<Vec<u8>>,
    /// Python sources.
    pub python: Vec<Vec<u8>>,
}

/// The folders searched, relative to the workspace root.
const FOLDERS: &[&str] = &[
    "examples",
    "analyzer/tests",
    "tests",
    "runtime-bridge/tests",
    "fuzz/corpus",
    "cpp/tests",
    "python/tests",
];

impl Corpus {
    /// Load from the workspace at `root` (files over 1 MiB are skipped).
    pub fn load(root: &Path) -> Corpus {
        let mut corpus = Corpus::default();
        for folder in FOLDERS {
            let mut pending: Vec<PathBuf> = vec![root.join(folder)];
            while let Some(dir) = pending.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let path = entry.path();
                    let Ok(kind) = entry.file_type() else { continue };
                    if kind.is_dir() {
                        pending.push(path);
                    } else if kind.is_file() {
                        corpus.add(&path);
                    }
                }
            }
        }
        corpus
    }

    fn add(&mut self, path: &Path) {
        let list = match path.extension().and_then(|e| e.to_str()) {
            Some("sync") => &mut self.programs,
            Some("jsonl") => &mut self.traces,
            Some(ext) if syncguard_cpp::EXTENSIONS.contains(&ext) => &mut self.sources,
            Some(ext) if syncguard_python::EXTENSIONS.contains(&ext) => &mut self.python,
            _ => return,
        };
        if let Ok(bytes) = std::fs::read(path)
            && bytes.len() <= 1 << 20
        {
            list.push(bytes);
        }
    }

    /// The workspace root of this crate's sources.
    pub fn workspace_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }
}
