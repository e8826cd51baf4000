//! How much of real Ascend C kernels the C/C++ frontend follows: for each folder named
//! on stdin (one per line, an operator's `op_kernel`), its C/C++ files are read
//! together and every kernel entry point extracted and lowered. Prints one line per
//! folder (kernels, `aicore` blocks with instructions, lowering errors, milliseconds)
//! and, at the end, the totals and the most frequent notes on what was not followed.
//!
//! `find repo -type d -name op_kernel | cargo run --release -p syncguard-cpp --example kernel_survey`

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use syncguard_cpp::{EXTENSIONS, Options, SourceText, read_project};
use syncguard_grammar::ast;
use syncguard_model::source::FileId;

/// Files read per folder at most (the largest operators have a few hundred headers).
const MAX_FILES: usize = 400;

fn sources(dir: &Path, headers: &HashMap<String, Vec<PathBuf>>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                // Unit tests of the kernels are no kernels.
                if !path.ends_with("tests") {
                    stack.push(path);
                }
            } else if is_source(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    // The build's include paths: the quoted includes, found in the repository as the
    // file of that path sharing the longest folder with the includer.
    let mut at = 0;
    while at < out.len() && out.len() < MAX_FILES {
        let text = std::fs::read_to_string(&out[at]).unwrap_or_default();
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("#include") else {
                continue;
            };
            let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) else {
                continue;
            };
            let file = name.rsplit('/').next().unwrap_or(name);
            let suffix = name.trim_start_matches("./").trim_start_matches("../");
            // The build installs some headers elsewhere than the sources keep them
            // (`../foreach_utils/arch35/x.h` is `foreach_utils/op_kernel/arch35/x.h`):
            // failing the path, the file of that name nearest the includer.
            let includer = out[at].clone();
            let best = headers.get(file).and_then(|paths| {
                paths
                    .iter()
                    .filter(|p| p.to_string_lossy().ends_with(suffix))
                    .max_by_key(|p| shared(p, &includer))
                    .or_else(|| paths.iter().max_by_key(|p| shared(p, &includer)))
            });
            if let Some(best) = best
                && !out.contains(best)
            {
                out.push(best.clone());
            }
        }
        at += 1;
    }
    out.truncate(MAX_FILES);
    out
}

fn shared(a: &Path, b: &Path) -> usize {
    a.components().zip(b.components()).take_while(|(x, y)| x == y).count()
}

fn is_source(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| EXTENSIONS.contains(&ext.to_string_lossy().as_ref()))
}

/// The headers of a repository by file name.
fn header_index(root: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut index: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with(".git") && !path.ends_with("tests") {
                    stack.push(path);
                }
            } else if is_source(&path) {
                let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
                index.entry(name).or_default().push(path);
            }
        }
    }
    index
}

/// A note without the names it quotes: `\`op.Init\` is ...` → `\`…\` is ...`.
fn reason(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars() {
        if c == '`' {
            if !quoted {
                out.push_str("`…");
            } else {
                out.push('`');
            }
            quoted = !quoted;
        } else if !quoted {
            out.push(c);
        }
    }
    out
}

/// `aicore` blocks, and those holding at least one kernel call.
fn has_aicore(stmts: &[ast::Stmt]) -> (usize, usize) {
    let mut blocks = 0;
    let mut filled = 0;
    for stmt in stmts {
        if let ast::StmtKind::AiCore { body, .. } = &stmt.kind {
            blocks += 1;
            if calls(&body.stmts) {
                filled += 1;
            }
        }
    }
    (blocks, filled)
}

fn calls(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|stmt| {
        matches!(stmt.kind, ast::StmtKind::Call(_)) || stmt.blocks().into_iter().any(|block| calls(&block.stmts))
    })
}

fn main() {
    let mut reasons: HashMap<String, usize> = HashMap::new();
    let mut callees: HashMap<String, usize> = HashMap::new();
    let (mut folders, mut kernels, mut filled, mut clean, mut failed, mut followed) = (0, 0, 0, 0, 0, 0);
    let mut times = Vec::new();
    let mut indexes: HashMap<PathBuf, HashMap<String, Vec<PathBuf>>> = HashMap::new();
    // `SURVEY_PRINT=1`: also print each program and its notes.
    let print = std::env::var_os("SURVEY_PRINT").is_some();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let dir = PathBuf::from(line.trim());
        if !dir.is_dir() {
            continue;
        }
        // The repository: the folder above the first one with a `.git`, or four up.
        let root = dir
            .ancestors()
            .find(|a| a.join(".git").exists())
            .or_else(|| dir.ancestors().nth(4))
            .unwrap_or(&dir)
            .to_path_buf();
        let headers = indexes.entry(root.clone()).or_insert_with(|| header_index(&root));
        let texts: Vec<SourceText> = sources(&dir, headers)
            .into_iter()
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).ok()?;
                Some(SourceText {
                    path: path.to_string_lossy().into_owned(),
                    text,
                })
            })
            .collect();
        let files: Vec<FileId> = (0..texts.len() as u32).map(FileId).collect();
        let texts_by_source: Vec<(String, String)> = if print {
            texts.iter().map(|t| (t.path.clone(), t.text.clone())).collect()
        } else {
            Vec::new()
        };
        let started = Instant::now();
        let project = read_project(texts, Options::default());
        let entries = project.entries();
        let (mut k, mut f, mut c) = (0, 0, 0);
        for entry in &entries {
            let (blocks, with_body) = has_aicore(&entry.syntax.stmts);
            if blocks == 0 {
                continue;
            }
            k += blocks;
            f += with_body;
            if print {
                println!("{}", project.space().to_sync(entry));
                for item in &entry.unresolved {
                    let (path, text) = &texts_by_source[item.source];
                    let line = text[..item.range.start.min(text.len())].matches('\n').count() + 1;
                    println!("// not followed: {path}:{line}: {}", item.message);
                }
            }
            let lowered = project.space().lower(entry, &files);
            if lowered.diagnostics.is_empty() {
                c += blocks;
            } else {
                failed += 1;
                for d in &lowered.diagnostics {
                    eprintln!("lowering {}: {}: {}", dir.display(), entry.entry, d.message);
                }
            }
            if entry.unresolved.is_empty() && entry.incomplete.is_none() {
                followed += blocks;
            }
            for item in entry.unresolved.iter().chain(&entry.incomplete) {
                *reasons.entry(reason(&item.message)).or_default() += 1;
                if let Some(name) = item.message.split('`').nth(1) {
                    let simple = name.rsplit(['.', ':', '>']).next().unwrap_or(name);
                    *callees.entry(simple.to_string()).or_default() += 1;
                }
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        times.push(ms);
        folders += 1;
        kernels += k;
        filled += f;
        clean += c;
        println!("{}\tkernels {k}\twith_body {f}\tlowered {c}\t{ms:.0} ms", dir.display());
    }
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let max = times.last().copied().unwrap_or(0.0);
    println!(
        "\nfolders {folders}, kernels {kernels}, aicore with instructions {filled}, lowered cleanly {clean}, \
         entries with lowering errors {failed}, kernels with nothing left out {followed}; median {median:.0} ms, max {max:.0} ms per folder"
    );
    let mut sorted: Vec<(String, usize)> = reasons.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("\nmost frequent notes:");
    for (message, count) in sorted.iter().take(25) {
        println!("{count:6}  {message}");
    }
    let mut sorted: Vec<(String, usize)> = callees.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("\nmost frequent names in notes:");
    for (name, count) in sorted.iter().take(40) {
        println!("{count:6}  {name}");
    }
}
