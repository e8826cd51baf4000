//! C/C++ sources: every source file of a run read together (a helper in one file is
//! inlined into the entry points of another), each entry point's extracted program
//! checked by the analyzer like a `.sync` file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use syncguard_analyzer::rules::{SolverUnknown, UnknownName};
use syncguard_analyzer::source::{FileId, Span, decode_utf8_lossless_offsets};
use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Severity, SourceFile, Sources, check_lowered};
use syncguard_cpp::{CompileDb, EntryProgram, Project, SourceText, read_project};
use syncguard_model::reading_rules::unchecked_return;

use super::inputs::{Input, report};

/// The sources of one run, read and registered.
pub struct ReadSources {
    pub project: Project,
    pub files: Vec<FileId>,
    pub failures: usize,
}

/// Read a compilation database: `path` is the file or the folder holding it.
pub fn load_compile_db(path: &Path) -> Result<CompileDb, String> {
    let file = if path.is_dir() {
        path.join(COMPILE_DB)
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).map_err(|err| format!("{}: {err}", file.display()))?;
    CompileDb::parse(&file, &text).map_err(|err| format!("{}: {err}", file.display()))
}

const COMPILE_DB: &str = "compile_commands.json";

/// The compilation database of the first source, as clangd finds one: in its folder or
/// a parent, or their `build/`.
fn discover_compile_db(inputs: &[&Input]) -> Option<PathBuf> {
    let first = std::path::absolute(&inputs.first()?.file).ok()?;
    first.ancestors().skip(1).find_map(|folder| {
        [folder.join(COMPILE_DB), folder.join("build").join(COMPILE_DB)]
            .into_iter()
            .find(|candidate| candidate.is_file())
    })
}

/// The database the options name, or the one found next to the sources (said on
/// stderr, as is one that cannot be read: then none is used).
fn compile_db_for(inputs: &[&Input], options: &mut syncguard_cpp::Options) {
    if options.compile_db.is_some() {
        return;
    }
    let Some(found) = discover_compile_db(inputs) else {
        return;
    };
    match load_compile_db(&found) {
        Ok(db) => {
            let listed = inputs
                .iter()
                .filter(|input| db.flags_for(&input.file).is_some())
                .count();
            eprintln!(
                "syncguard: note: preprocessor flags from {} ({listed} of {} source files listed; `#ifdef` of a name \
                 no command defines is false)",
                found.display(),
                inputs.len()
            );
            options.compile_db = Some(std::sync::Arc::new(db));
        }
        Err(err) => eprintln!("syncguard: warning: compilation database not used: {err}"),
    }
}

pub fn read_sources(sources: &mut Sources, inputs: &[&Input], mut options: syncguard_cpp::Options) -> ReadSources {
    compile_db_for(inputs, &mut options);
    let mut texts = Vec::new();
    let mut files = Vec::new();
    let mut failures = 0;
    for input in inputs {
        let bytes = match std::fs::read(&input.file) {
            Ok(bytes) => bytes,
            Err(err) => {
                failures += report(&input.file, &err);
                continue;
            }
        };
        let bytes = bytes.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(&bytes);
        let (text, _) = decode_utf8_lossless_offsets(bytes);
        files.push(sources.add(SourceFile::new(input.display.clone(), text.clone())));
        texts.push(SourceText {
            path: input.display.clone(),
            text,
        });
    }
    ReadSources {
        project: read_project(texts, options),
        files,
        failures,
    }
}

/// A finding of one entry point: its file and name's offset, the rule, where it is.
type FindingAt = (usize, usize, &'static str, Span);

/// What checking the sources found.
pub struct SourceFindings {
    pub checked: Vec<CheckedFile>,
    /// Entry points that call at least one synchronization API.
    pub entries_with_calls: usize,
    /// What the frontend could not follow in them (listed with `--explain`).
    pub unresolved: usize,
}

/// Check every entry point that does some synchronization. With `explain`, what the
/// frontend could not follow is listed as information (SG003); otherwise it is counted.
pub fn check_sources(read: &ReadSources, overrides: &Overrides, explain: bool) -> SourceFindings {
    let mut checked = Vec::new();
    let mut seen = HashSet::new();
    // SPMD code is checked once per rank count: a finding at the same call for
    // another count is the same problem, reported once, for the smallest count.
    let mut per_count: HashMap<FindingAt, (usize, usize, Vec<i64>)> = HashMap::new();
    let mut entries_with_calls = 0;
    let mut unresolved = 0;
    for entry in read.project.entries() {
        if entry.api_calls == 0 {
            continue;
        }
        if entry.ranks <= 1
            || !per_count
                .keys()
                .any(|key| (key.0, key.1) == (entry.source, entry.range.start))
        {
            entries_with_calls += 1;
            unresolved += entry.unresolved.len();
        }
        let reading = reading_diagnostics(&entry, &read.files, explain);
        let lowered = read.project.space().lower(&entry, &read.files);
        let mut result = check_lowered(lowered, reading, overrides);
        let position = checked.len();
        let mut kept = Vec::new();
        for diagnostic in result.diagnostics {
            let key = (
                entry.source,
                entry.range.start,
                diagnostic.code,
                diagnostic.primary.clone(),
            );
            if entry.ranks > 1
                && let Some((_, _, counts)) = per_count.get_mut(&key)
            {
                counts.push(entry.ranks);
                continue;
            }
            // A helper reached from two entry points reports its problem once.
            if !seen.insert((diagnostic.code, diagnostic.primary.clone(), diagnostic.message.clone())) {
                continue;
            }
            if entry.ranks > 1 {
                per_count.insert(key, (position, kept.len(), vec![entry.ranks]));
            }
            kept.push(diagnostic);
        }
        result.diagnostics = kept;
        checked.push(result);
    }
    for (at, index, counts) in per_count.into_values() {
        let Some(diagnostic) = checked.get_mut(at).and_then(|result| result.diagnostics.get_mut(index)) else {
            continue;
        };
        let others: Vec<String> = counts[1..].iter().map(i64::to_string).collect();
        let note = match others.as_slice() {
            [] => format!("found with {} ranks", counts[0]),
            _ => format!("found with {} ranks; also with {} ranks", counts[0], others.join(", ")),
        };
        diagnostic.notes.push(note);
    }
    SourceFindings {
        checked,
        entries_with_calls,
        unresolved,
    }
}

fn reading_diagnostics(entry: &EntryProgram, files: &[FileId], explain: bool) -> Vec<Diagnostic> {
    let span = |source: usize, range: &std::ops::Range<usize>| Span::new(files[source], range.clone());
    let mut diagnostics: Vec<Diagnostic> = entry
        .unchecked_returns
        .iter()
        .map(|(source, range, api)| unchecked_return(span(*source, range), api))
        .collect();
    if let Some(stop) = &entry.incomplete {
        diagnostics.push(
            Diagnostic::new(
                &SolverUnknown::INFO,
                span(stop.source, &stop.range),
                stop.message.clone(),
            )
            .with_label("the extraction stopped here")
            .with_related(
                span(entry.source, &entry.range),
                format!("entry point `{}`", entry.entry),
            )
            .with_help("split the entry point, or lower the loop bounds the code uses"),
        );
    }
    if explain {
        diagnostics.extend(entry.unresolved.iter().map(|item| {
            Diagnostic::new(&UnknownName::INFO, span(item.source, &item.range), item.message.clone())
                .with_severity(Severity::Info)
                .with_label("not followed")
                .with_related(
                    span(entry.source, &entry.range),
                    format!("entry point `{}`", entry.entry),
                )
        }));
    }
    diagnostics
}
