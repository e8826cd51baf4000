//! Turning command-line paths into the files to read.

use std::io::Read;
use std::path::{Path, PathBuf};

/// One input: its display path and its bytes.
pub struct Input {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Expand directories (recursively, sorted) to their `.sync` files and read every file.
/// Unreadable paths are reported on stderr and returned as failures; the rest are read.
pub fn read_inputs(paths: &[PathBuf]) -> (Vec<Input>, usize) {
    let mut inputs = Vec::new();
    let mut failures = 0;
    for path in paths {
        if path.as_os_str() == "-" {
            let mut bytes = Vec::new();
            match std::io::stdin().read_to_end(&mut bytes) {
                Ok(_) => inputs.push(Input {
                    path: "-".into(),
                    bytes,
                }),
                Err(err) => failures += report(path, &err),
            }
            continue;
        }
        let files = match sync_files(path) {
            Ok(files) => files,
            Err(err) => {
                failures += report(path, &err);
                continue;
            }
        };
        for file in files {
            match std::fs::read(&file) {
                Ok(bytes) => inputs.push(Input {
                    path: file.display().to_string(),
                    bytes,
                }),
                Err(err) => failures += report(&file, &err),
            }
        }
    }
    (inputs, failures)
}

fn report(path: &Path, err: &std::io::Error) -> usize {
    eprintln!("syncguard: cannot read {}: {err}", path.display());
    1
}

/// `path` itself if it is a file; every `.sync` file below it if it is a directory.
fn sync_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry_path = entry?.path();
            if entry_path.is_dir() {
                pending.push(entry_path);
            } else if entry_path.extension().is_some_and(|ext| ext == "sync") {
                files.push(entry_path);
            }
        }
    }
    files.sort();
    Ok(files)
}
