//! Turning command-line paths into the files to check.

use std::io::Read;
use std::path::{Path, PathBuf};

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A `.sync` program.
    Sync,
    /// A JSONL call trace.
    Trace,
}

/// One input: how to show it, where to read it, what it is.
pub struct Input {
    pub display: String,
    pub file: PathBuf,
    pub kind: InputKind,
    /// Standard input, saved so that a trace can be streamed and re-read for rendering.
    _spool: Option<tempfile::NamedTempFile>,
}

/// Expand directories (recursively, sorted) to their `.sync` and `.jsonl` files; `-`
/// is standard input. Unusable paths are reported on stderr and counted as failures.
pub fn collect_inputs(paths: &[PathBuf]) -> (Vec<Input>, usize) {
    let mut inputs = Vec::new();
    let mut failures = 0;
    for path in paths {
        if path.as_os_str() == "-" {
            match spool_stdin() {
                Ok(input) => inputs.push(input),
                Err(err) => failures += report(path, &err),
            }
            continue;
        }
        match input_files(path) {
            Ok(files) => inputs.extend(files.into_iter().map(|file| Input {
                display: file.display().to_string(),
                kind: kind_of(&file),
                file,
                _spool: None,
            })),
            Err(err) => failures += report(path, &err),
        }
    }
    (inputs, failures)
}

pub fn report(path: &Path, err: &std::io::Error) -> usize {
    eprintln!("syncguard: cannot read {}: {err}", path.display());
    1
}

fn spool_stdin() -> std::io::Result<Input> {
    let mut spool = tempfile::NamedTempFile::new()?;
    std::io::copy(&mut std::io::stdin().lock(), &mut spool)?;
    let kind = sniff(spool.path())?;
    Ok(Input {
        display: "-".into(),
        file: spool.path().to_path_buf(),
        kind,
        _spool: Some(spool),
    })
}

/// By extension; a file with neither extension is a trace if it starts with `{`.
fn kind_of(path: &Path) -> InputKind {
    match path.extension().and_then(|ext| ext.to_str()) {
        Some("jsonl" | "ndjson") => InputKind::Trace,
        Some("sync") => InputKind::Sync,
        _ => sniff(path).unwrap_or(InputKind::Sync),
    }
}

fn sniff(path: &Path) -> std::io::Result<InputKind> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)?.read(&mut head)?;
    let first = head[..n].iter().find(|b| !b.is_ascii_whitespace());
    Ok(if first == Some(&b'{') {
        InputKind::Trace
    } else {
        InputKind::Sync
    })
}

/// `path` itself if it is a file; every `.sync` and `.jsonl` file below it if it is a
/// directory.
fn input_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
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
            } else if entry_path
                .extension()
                .is_some_and(|ext| ext == "sync" || ext == "jsonl")
            {
                files.push(entry_path);
            }
        }
    }
    files.sort();
    Ok(files)
}
