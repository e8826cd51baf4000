//! Source files (C/C++, Python): every source file of a run read together by its
//! language's frontend (a helper in one file is inlined into the entry points of
//! another), each entry point's extracted program checked by the analyzer like a
//! `.sync` file. Every frontend hands over the same thing, a byte space of its files
//! and the programs of its entry points, and is checked the same way.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use syncguard_analyzer::rules::{SolverUnknown, UnknownName};
use syncguard_analyzer::source::{FileId, Span, decode_utf8_lossless_offsets};
use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Severity, SourceFile, Sources, check_lowered};
use syncguard_cpp::CompileDb;
use syncguard_grammar::extracted::{EntryProgram, SourceSpace, SourceText};
use syncguard_model::reading_rules::unchecked_return;

use crate::inputs::{Input, report};
use crate::progress::Progress;
use crate::{choices, reader_limits};

/// How the sources of a run are read, per language.
#[derive(Clone, Debug, Default)]
pub struct SourceOptions {
    pub cpp: syncguard_cpp::Options,
    pub python: syncguard_python::Options,
}

/// The source languages syncguard reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    Cpp,
    Python,
}

impl Language {
    /// The language of a source file, by its extension.
    pub fn of(path: &std::path::Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        if syncguard_cpp::EXTENSIONS.contains(&ext) {
            Some(Language::Cpp)
        } else if syncguard_python::EXTENSIONS.contains(&ext) {
            Some(Language::Python)
        } else {
            None
        }
    }

    /// How messages name it.
    pub fn noun(self) -> &'static str {
        match self {
            Language::Cpp => "C/C++",
            Language::Python => "Python",
        }
    }
}

/// One language's files of a run, parsed by its frontend.
pub enum Project {
    Cpp(Box<syncguard_cpp::Project>),
    Python(syncguard_python::Project),
}

impl Project {
    pub fn space(&self) -> &SourceSpace {
        match self {
            Project::Cpp(project) => project.space(),
            Project::Python(project) => project.space(),
        }
    }

    /// Every entry point's program.
    pub fn entries(&self) -> Vec<EntryProgram> {
        match self {
            Project::Cpp(project) => project.entries(),
            Project::Python(project) => project.entries(),
        }
    }

    /// [`Project::entries`], reusing what `caches` kept where the frontend can.
    pub fn entries_cached(&self, caches: &mut FrontendCaches) -> Vec<EntryProgram> {
        match self {
            Project::Cpp(project) => project.entries_cached(&mut caches.cpp_programs),
            Project::Python(project) => project.entries_cached(&mut caches.python_programs),
        }
    }

    /// The programs that make a synchronization call (`api_calls > 0`), the only ones
    /// checking reads: the C/C++ frontend does not even walk the entry points that
    /// cannot reach one (`syncguard_cpp::Project::synchronizing_entries`).
    pub fn synchronizing_entries(&self) -> Vec<EntryProgram> {
        match self {
            Project::Cpp(project) => project.synchronizing_entries(),
            Project::Python(project) => with_calls(project.entries()),
        }
    }

    /// [`Project::synchronizing_entries`], reusing what `caches` kept where the frontend can.
    pub fn synchronizing_entries_cached(&self, caches: &mut FrontendCaches) -> Vec<EntryProgram> {
        match self {
            Project::Cpp(project) => project.synchronizing_entries_cached(&mut caches.cpp_programs),
            Project::Python(project) => with_calls(project.entries_cached(&mut caches.python_programs)),
        }
    }
}

fn with_calls(mut entries: Vec<EntryProgram>) -> Vec<EntryProgram> {
    entries.retain(|entry| entry.api_calls > 0);
    entries
}

/// The files of one language, read and registered.
pub struct ReadGroup {
    pub language: Language,
    pub project: Project,
    /// `files[k]`: the id the k-th file of the project was registered as.
    pub files: Vec<FileId>,
}

/// The sources of one run, read and registered, one group per language.
pub struct ReadSources {
    pub groups: Vec<ReadGroup>,
    pub failures: usize,
}

impl ReadSources {
    /// Files read, all languages together.
    pub fn file_count(&self) -> usize {
        self.groups.iter().map(|group| group.files.len()).sum()
    }
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
fn discover_compile_db(files: &[PathBuf]) -> Option<PathBuf> {
    let first = std::path::absolute(files.first()?).ok()?;
    first.ancestors().skip(1).find_map(|folder| {
        [folder.join(COMPILE_DB), folder.join("build").join(COMPILE_DB)]
            .into_iter()
            .find(|candidate| candidate.is_file())
    })
}

/// The database the options name, or the one found next to the C/C++ sources (said on
/// stderr, as is one that cannot be read: then none is used).
fn compile_db_for(files: &[PathBuf], options: &mut syncguard_cpp::Options) {
    if options.compile_db.is_some() {
        return;
    }
    let Some(found) = discover_compile_db(files) else {
        return;
    };
    match load_compile_db(&found) {
        Ok(db) => {
            let listed = files.iter().filter(|file| db.flags_for(file).is_some()).count();
            eprintln!(
                "syncguard: note: preprocessor flags from {} ({listed} of {} C/C++ files listed; `#ifdef` of a name \
                 no command defines is false)",
                found.display(),
                files.len()
            );
            options.compile_db = Some(std::sync::Arc::new(db));
        }
        Err(err) => eprintln!("syncguard: warning: compilation database not used: {err}"),
    }
}

pub fn read_sources(sources: &mut Sources, inputs: &[&Input], options: &SourceOptions) -> ReadSources {
    let mut failures = 0;
    let mut documents = Vec::new();
    for input in inputs {
        match std::fs::read(&input.file) {
            Ok(bytes) => documents.push(SourceDocument {
                file: input.file.clone(),
                display: input.display.clone(),
                text: decode_text(&bytes),
            }),
            Err(err) => failures += report(&input.file, &err),
        }
    }
    let mut read = read_documents(sources, documents, options);
    read.failures += failures;
    read
}

/// Ascend C's own synchronization calls, which kernels make as methods or templates
/// (`que.EnQue(x)`, `SetFlag<HardEvent::MTE2_V>(id)`): not in the host API catalogue.
const KERNEL_SYNC_CALLS: &[&str] = &[
    "SetFlag",
    "WaitFlag",
    "PipeBarrier",
    "CrossCoreSetFlag",
    "CrossCoreWaitFlag",
    "SyncAll",
    "EnQue",
    "DeQue",
    "SetNextTaskStart",
    "WaitPreTaskEnd",
];

/// The first call of a synchronization API the files' text shows (`file`, byte offset,
/// name): for saying so when no entry point reached one, instead of "nothing to check".
pub fn first_sync_call_written(sources: &Sources, read: &ReadSources) -> Option<(FileId, usize, &'static str)> {
    let known: HashMap<&str, &'static str> = syncguard_model::api::APIS
        .iter()
        .map(|api| api.name)
        // Not `malloc`/`free` and the `.sync` pseudo-calls: the C library is no
        // synchronization, and those names are common words in any code.
        .filter(|name| name.contains('.') || name.chars().any(|c| c.is_ascii_uppercase()))
        .chain(KERNEL_SYNC_CALLS.iter().copied())
        .map(|name| (name, name))
        .collect();
    let files = read.groups.iter().flat_map(|group| group.files.iter().copied());
    files.into_iter().find_map(|file| {
        let text = &sources.get(file).text;
        let bytes = text.as_bytes();
        let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
        let mut at = 0;
        while at < bytes.len() {
            if !is_name(bytes[at]) {
                at += 1;
                continue;
            }
            // Names are ASCII: their ends are character boundaries.
            let start = at;
            while at < bytes.len() && is_name(bytes[at]) {
                at += 1;
            }
            let after = text[at..].trim_start();
            if let Some(&name) = known.get(&text[start..at])
                && (after.starts_with('(') || after.starts_with('<'))
            {
                return Some((file, start, name));
            }
        }
        None
    })
}

/// A source file's text as a file's bytes are read: without a byte order mark,
/// invalid UTF-8 replaced in place (offsets kept).
pub fn decode_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(bytes);
    decode_utf8_lossless_offsets(bytes).0
}

/// A source file to read: from disk, or an editor's unsaved buffer.
pub struct SourceDocument {
    /// Where it is (its language and compilation flags go by it).
    pub file: PathBuf,
    /// Its name in findings.
    pub display: String,
    pub text: String,
}

/// Register `documents` in `sources` and parse them, one group per language.
pub fn read_documents(sources: &mut Sources, documents: Vec<SourceDocument>, options: &SourceOptions) -> ReadSources {
    read_documents_cached(sources, documents, options, &mut FrontendCaches::default())
}

/// What the frontends keep from one read of a project to the next: each one's parses
/// and extracted programs.
#[derive(Default)]
pub struct FrontendCaches {
    cpp: syncguard_cpp::ParseCache,
    python: syncguard_python::ParseCache,
    python_programs: syncguard_python::ExtractCache,
    cpp_programs: syncguard_cpp::ExtractCache,
}

/// [`read_documents`], parsing only what `caches` does not hold with the same text.
pub fn read_documents_cached(
    sources: &mut Sources,
    documents: Vec<SourceDocument>,
    options: &SourceOptions,
    caches: &mut FrontendCaches,
) -> ReadSources {
    let mut groups = Vec::new();
    let mut documents: Vec<(Language, SourceDocument)> = documents
        .into_iter()
        .map(|document| (Language::of(&document.file).unwrap_or(Language::Cpp), document))
        .collect();
    for language in [Language::Cpp, Language::Python] {
        let (of_language, rest): (Vec<_>, Vec<_>) = documents.into_iter().partition(|(of, _)| *of == language);
        documents = rest;
        if of_language.is_empty() {
            continue;
        }
        let paths: Vec<PathBuf> = of_language.iter().map(|(_, document)| document.file.clone()).collect();
        let mut files = Vec::new();
        let mut texts = Vec::new();
        for (_, document) in of_language {
            files.push(sources.add(SourceFile::new(document.display.clone(), document.text.clone())));
            texts.push(SourceText {
                path: document.display,
                text: document.text,
            });
        }
        let project = match language {
            Language::Cpp => {
                let mut cpp = options.cpp.clone();
                compile_db_for(&paths, &mut cpp);
                Project::Cpp(Box::new(syncguard_cpp::read_project_cached(
                    texts,
                    cpp,
                    &mut caches.cpp,
                )))
            }
            Language::Python => Project::Python(syncguard_python::read_project_cached(
                texts,
                options.python.clone(),
                &mut caches.python,
            )),
        };
        groups.push(ReadGroup {
            language,
            project,
            files,
        });
    }
    ReadSources { groups, failures: 0 }
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
    /// Findings set aside because they rest on what was not followed (listed with
    /// `--explain`).
    pub undecided: usize,
}

/// Check every entry point that does some synchronization. With `explain`, what the
/// frontend could not follow is listed as information (SG003); otherwise it is counted.
pub fn check_sources(
    read: &ReadSources,
    overrides: &Overrides,
    explain: bool,
    progress: &dyn Progress,
) -> SourceFindings {
    let mut findings = SourceFindings {
        checked: Vec::new(),
        entries_with_calls: 0,
        unresolved: 0,
        undecided: 0,
    };
    for group in &read.groups {
        let entries = group.project.synchronizing_entries();
        progress.add_work(entries.len());
        let found = check_entries(
            group.language,
            group.project.space(),
            &group.files,
            entries,
            overrides,
            explain,
            progress,
        );
        findings.checked.extend(found.checked);
        findings.entries_with_calls += found.entries_with_calls;
        findings.unresolved += found.unresolved;
        findings.undecided += found.undecided;
    }
    findings
}

/// The API calls of a folder's entry points from which they are checked on every core.
const ENTRIES_IN_PARALLEL_FROM: usize = 200;

/// Check the programs of one frontend's entry points, laid out in `space`, whose
/// files were registered as `files`.
pub fn check_entries(
    language: Language,
    space: &SourceSpace,
    files: &[FileId],
    entries: Vec<EntryProgram>,
    overrides: &Overrides,
    explain: bool,
    progress: &dyn Progress,
) -> SourceFindings {
    let (entries, idle): (Vec<EntryProgram>, Vec<EntryProgram>) =
        entries.into_iter().partition(|entry| entry.api_calls > 0);
    for _ in &idle {
        progress.finish_one();
    }
    // Entry points are checked in parallel; what they found is merged in order. A few
    // small ones stay on one thread: on each other thread, the first z3 term creates a
    // context (some 4,000 page faults, several ms of system time), more than a small
    // entry point's whole check.
    let check_one = |entry: &EntryProgram| {
        if progress.cancelled() {
            return None;
        }
        progress.start(&entry.entry);
        let checked = check_entry(language, space, files, entry, overrides, explain);
        progress.finish_one();
        Some(checked)
    };
    let calls: usize = entries.iter().map(|entry| entry.api_calls).sum();
    let results: Vec<Option<EntryChecked>> = if calls < ENTRIES_IN_PARALLEL_FROM {
        entries.iter().map(check_one).collect()
    } else {
        entries.par_iter().map(check_one).collect()
    };
    merge_entries(&entries, results)
}

/// What checking one entry point found.
pub(crate) struct EntryChecked {
    pub result: CheckedFile,
    /// Calls the lowering could not take.
    pub not_lowered: usize,
    /// Findings set aside because they rest on what was not followed.
    pub set_aside: usize,
}

/// Check one entry point that does some synchronization.
pub(crate) fn check_entry(
    language: Language,
    space: &SourceSpace,
    files: &[FileId],
    entry: &EntryProgram,
    overrides: &Overrides,
    explain: bool,
) -> EntryChecked {
    let reading = reading_diagnostics(language, entry, files, explain);
    let mut lowered = space.lower(entry, files);
    let limits = reader_limits::take_lowering_failures(&mut lowered, entry, space, files);
    let not_lowered = limits.notes.len();
    let mut result = check_lowered(lowered, reading, overrides);
    let set_aside = reader_limits::apply(&mut result, limits, explain);
    choices::in_source_terms(&mut result, language, space, files);
    EntryChecked {
        result,
        not_lowered,
        set_aside,
    }
}

/// The findings of `entries` (each checked, `None` where checking was cancelled), in
/// order: a problem two entry points reach is reported once, and an SPMD entry point's
/// finding once, for its smallest rank count.
pub(crate) fn merge_entries(entries: &[EntryProgram], results: Vec<Option<EntryChecked>>) -> SourceFindings {
    let mut checked = Vec::new();
    let mut seen = HashSet::new();
    // SPMD code is checked once per rank count: a finding at the same call for
    // another count is the same problem, reported once, for the smallest count.
    let mut per_count: HashMap<FindingAt, (usize, usize, Vec<i64>)> = HashMap::new();
    let mut entries_with_calls = 0;
    let mut unresolved = 0;
    let mut undecided = 0;
    for (entry, result) in entries.iter().zip(results) {
        let Some(EntryChecked {
            mut result,
            not_lowered,
            set_aside,
        }) = result
        else {
            break;
        };
        if entry.ranks <= 1
            || !per_count
                .keys()
                .any(|key| (key.0, key.1) == (entry.source, entry.range.start))
        {
            entries_with_calls += 1;
            unresolved += entry.unresolved.len() + not_lowered;
            undecided += set_aside;
        }
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
        undecided,
    }
}

fn reading_diagnostics(language: Language, entry: &EntryProgram, files: &[FileId], explain: bool) -> Vec<Diagnostic> {
    let span = |source: usize, range: &std::ops::Range<usize>| Span::new(files[source], range.clone());
    let mut diagnostics: Vec<Diagnostic> = entry
        .unchecked_returns
        .iter()
        .map(|(source, range, api)| {
            let diagnostic = unchecked_return(span(*source, range), api);
            match language {
                Language::Cpp => diagnostic,
                // pyACL returns the code (last, after any handle): it is checked by
                // reading it.
                Language::Python => diagnostic.with_help(format!(
                    "bind the code and check it (`ret = {}(...)`, then `if ret != ACL_SUCCESS: raise ...` or a check helper); \
                     a code assigned again before it is read, or bound to `_`, is discarded too",
                    api.name
                )),
            }
        })
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
                .with_label(if item.assumption {
                    "checked every way"
                } else {
                    "not followed"
                })
                .with_related(
                    span(entry.source, &entry.range),
                    format!("entry point `{}`", entry.entry),
                )
        }));
    }
    diagnostics
}
