//! Checking what an editor shows: one `.sync` file or trace on its own, or a source
//! file with the other sources of its language in its project (a helper in one file
//! is inlined into the entry points of another), unsaved buffers as they are.
//! The project's configuration (`syncguard.toml`, `[tool.syncguard]`) and the
//! suppressions in the code apply as on the command line. A `.jsonl` file that is not
//! a call trace (a dataset) is not checked, as `check DIR` skips it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use lsp_types::Url;
use syncguard_analyzer::{
    Diagnostic, FileId, Overrides, SourceFile, Sources, check_sync_bytes_with, check_trace_reader,
};
use syncguard_project::incremental::Incremental;
use syncguard_project::inputs::{InputKind, collect_inputs, is_call_trace_text};
use syncguard_project::progress::Progress;
use syncguard_project::sources::{SourceDocument, decode_text};
use syncguard_project::{Config, Language, Selection, SourceOptions};

use crate::documents::{Document, Kind, Snapshot, display_of, path_of};
use crate::records::Record;

/// A project with more source files than this is checked by the target's folder only:
/// a check runs on every edit.
pub const MAX_PROJECT_FILES: usize = 1000;

/// What one check found.
pub struct Analysis {
    pub sources: Sources,
    /// Reported findings: selection, per-file ignores and suppressions applied.
    pub diagnostics: Vec<Diagnostic>,
    /// The files checked together, with their URLs.
    pub files: Vec<(FileId, Url)>,
    /// Files with findings, and the files of the entry points that found them (a
    /// helper's finding belongs to the file whose entry point calls it too).
    pub found_from: HashMap<FileId, HashSet<FileId>>,
    /// The configuration could not be read: said, and the defaults used.
    pub config_error: Option<String>,
}

impl Analysis {
    pub fn url_of(&self, file: FileId) -> Option<&Url> {
        self.files.iter().find(|(id, _)| *id == file).map(|(_, url)| url)
    }

    pub fn file_of(&self, url: &Url) -> Option<FileId> {
        self.files.iter().find(|(_, at)| at == url).map(|(id, _)| *id)
    }

    /// `target` covered with no findings: published, it clears what an earlier check
    /// of the document showed (a trace edited into a dataset).
    fn not_checked(target: &Url, document: &Document) -> Analysis {
        let mut sources = Sources::default();
        let file = sources.add(SourceFile::new(display_of(target), document.text.to_string()));
        Analysis {
            sources,
            diagnostics: Vec::new(),
            files: vec![(file, target.clone())],
            found_from: HashMap::new(),
            config_error: None,
        }
    }
}

/// Where the server looks for projects and their configuration.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// The editor's workspace folders.
    pub roots: Vec<PathBuf>,
    /// `syncguard lsp --config FILE`: this configuration file for every file.
    pub config: Option<PathBuf>,
    /// `syncguard lsp --isolated`: no configuration file.
    pub isolated: bool,
}

/// Check `target` as it is open in the editor (`documents`); `setup.roots` are the editor's
/// workspace folders. `None` when `target` is not a file syncguard reads.
/// `watch` says when the result is no longer wanted (a source check then stops early
/// and its incomplete result must be dropped) and hears how a project's first check
/// (its index) goes.
pub fn analyze(
    target: &Url,
    documents: &Snapshot,
    setup: &Setup,
    watch: &Watch,
    workspace: &mut Workspace,
) -> Option<Analysis> {
    let document = documents.get(target)?;
    let kind = Kind::of(target, &document.language_id)?;
    if kind == Kind::Trace && !is_call_trace_text(document.text.as_bytes()) {
        return Some(Analysis::not_checked(target, document));
    }
    let path = path_of(target);
    let (config, config_error) =
        match syncguard_project::config::load(setup.config.as_deref(), setup.isolated, path.as_deref()) {
            Ok(config) => (config, None),
            Err(err) => (Config::default(), Some(err)),
        };
    let mut overrides = Overrides::default();
    let mut options = SourceOptions::default();
    let config_error = config_error.or_else(|| config.settle(&mut overrides, &mut options).err());
    let mut sources = Sources::default();
    let mut found_from = HashMap::new();
    let (diagnostics, files) = match kind {
        Kind::Sync => {
            let checked = check_sync_bytes_with(&mut sources, display_of(target), document.text.as_bytes(), &overrides);
            (checked.diagnostics, vec![(checked_file(&sources), target.clone())])
        }
        Kind::Trace => {
            let display = display_of(target);
            let checked = check_trace_reader(
                &mut sources,
                display.clone(),
                document.text.as_bytes(),
                None,
                &overrides,
            );
            let file = checked_file(&sources);
            // A trace is streamed: keep its text for positions and snippets.
            *sources.get_mut(file) = SourceFile::new(display, document.text.to_string());
            (checked.diagnostics, vec![(file, target.clone())])
        }
        Kind::Record => {
            // JSON that is no record of a run (a config, a dataset) is not checked.
            let Some(record) = Record::of(&document.text) else {
                return Some(Analysis::not_checked(target, document));
            };
            let checked = crate::records::check(target, record, documents, &overrides, &mut sources);
            found_from = checked.found_from;
            // Other ranks' files on disk are read again for positions.
            sources.load_deferred();
            (checked.diagnostics, checked.files)
        }
        Kind::Source(language) => {
            let (scope, group) = source_group(target, language, documents, &setup.roots, &config);
            let project = workspace.project(scope, language);
            check_group(
                &mut sources,
                project,
                group,
                (&options, &overrides),
                watch,
                &mut found_from,
            )
        }
    };
    let mut diagnostics = diagnostics;
    let selection = Selection {
        select: config.select.clone(),
        extend_select: config.extend_select.clone(),
        ignore: config.ignore.clone(),
    };
    syncguard_project::reported(&mut diagnostics, &sources, &selection, &config);
    Some(Analysis {
        sources,
        diagnostics,
        files,
        found_from,
        config_error,
    })
}

/// The one file a `.sync` or trace check registered.
fn checked_file(sources: &Sources) -> FileId {
    sources.iter().last().map_or(FileId(0), |(id, _)| id)
}

/// A source file to check, and where its text comes from.
struct Member {
    url: Url,
    language: Language,
    path: Option<PathBuf>,
    /// The editor's text; `None`: read from disk.
    open: Option<Document>,
}

/// The sources checked with `target`: those of its language in its project (the
/// configuration file's folder, else the workspace folder holding it), as the command
/// line finds them, with the editor's unsaved text where a file is open. A file
/// outside any project is checked with the open documents of its folder.
fn source_group(
    target: &Url,
    language: Language,
    documents: &Snapshot,
    roots: &[PathBuf],
    config: &Config,
) -> (Option<PathBuf>, Vec<Member>) {
    let path = path_of(target);
    let root = project_root(path.as_deref(), roots, config);
    let mut members = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |url: Url, path: Option<PathBuf>| {
        if seen.insert(url.clone()) {
            let open = documents.get(&url).cloned();
            members.push(Member {
                url,
                language,
                path,
                open,
            });
        }
    };
    add(target.clone(), path.clone());
    let on_disk = root
        .as_deref()
        .map(|root| project_sources(root, language, config))
        .unwrap_or_default();
    let too_many = on_disk.len() > MAX_PROJECT_FILES;
    if too_many {
        eprintln!(
            "syncguard lsp: {} holds {} {} files, more than {MAX_PROJECT_FILES}: checking {} with the files of its folder only",
            root.as_deref().unwrap_or(Path::new("")).display(),
            on_disk.len(),
            language.noun(),
            display_of(target)
        );
    }
    let folder = path.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    let scope = if too_many {
        folder.clone()
    } else {
        root.clone().or(folder)
    };
    for file in on_disk {
        if too_many && file.parent() != scope.as_deref() {
            continue;
        }
        if let Ok(url) = Url::from_file_path(&file) {
            add(url, Some(file));
        }
    }
    for (url, document) in documents.iter() {
        let open_path = path_of(url);
        let in_scope = match (&open_path, &scope) {
            (Some(open), Some(scope)) => open.starts_with(scope),
            _ => false,
        };
        if in_scope && Kind::of(url, &document.language_id) == Some(Kind::Source(language)) {
            add(url.clone(), open_path);
        }
    }
    (scope, members)
}

/// The folder a file's project is: its configuration file's, else the innermost
/// workspace folder holding it.
fn project_root(path: Option<&Path>, roots: &[PathBuf], config: &Config) -> Option<PathBuf> {
    if let Some(parent) = config.path.as_deref().and_then(Path::parent) {
        return Some(parent.to_path_buf());
    }
    let path = path?;
    roots
        .iter()
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.components().count())
        .cloned()
}

/// How long a folder search of a project is reused: a check runs on every edit, and a
/// search of a large tree costs more than checking a file. Files created meanwhile are
/// seen once it expires.
const SEARCH_REUSED_FOR: Duration = Duration::from_secs(10);

/// The source files of `language` below `root`, as `check ROOT` finds them.
fn project_sources(root: &Path, language: Language, config: &Config) -> Vec<PathBuf> {
    type Searches = HashMap<(PathBuf, Language), (Instant, Arc<Vec<PathBuf>>)>;
    static SEARCHES: OnceLock<Mutex<Searches>> = OnceLock::new();
    let searches = SEARCHES.get_or_init(Mutex::default);
    let key = (root.to_path_buf(), language);
    let cached = searches
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(&key)
        .filter(|(searched, _)| searched.elapsed() < SEARCH_REUSED_FOR)
        .map(|(_, files)| files.clone());
    let files = cached.unwrap_or_else(|| {
        let (inputs, _) = collect_inputs(&[root.to_path_buf()]);
        let files: Arc<Vec<PathBuf>> = Arc::new(
            inputs
                .into_iter()
                .filter(|input| input.kind == InputKind::Source && Language::of(&input.file) == Some(language))
                .map(|input| std::fs::canonicalize(&input.file).unwrap_or(input.file))
                .collect(),
        );
        searches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(key, (Instant::now(), files.clone()));
        files
    });
    files.iter().filter(|file| !config.excludes(file)).cloned().collect()
}

fn untitled_path(language: Language) -> PathBuf {
    PathBuf::from(match language {
        Language::Cpp => "untitled.cpp",
        Language::Python => "untitled.py",
    })
}

fn check_group(
    sources: &mut Sources,
    project: &mut ProjectCache,
    group: Vec<Member>,
    (options, overrides): (&SourceOptions, &Overrides),
    watch: &Watch,
    found_from: &mut HashMap<FileId, HashSet<FileId>>,
) -> (Vec<Diagnostic>, Vec<(FileId, Url)>) {
    let mut documents = Vec::new();
    let mut urls = Vec::new();
    let mut on_disk = HashMap::new();
    for member in group {
        let text = match (&member.open, &member.path) {
            (Some(open), _) => open.text.to_string(),
            (None, Some(path)) => match project.disk_text(path) {
                Some(text) => {
                    on_disk.insert(path.clone(), text.clone());
                    text
                }
                None => continue,
            },
            (None, None) => continue,
        };
        let language = member.language;
        documents.push(SourceDocument {
            // An unsaved buffer has no path: its language gives its extension.
            file: member.path.clone().unwrap_or_else(|| untitled_path(language)),
            display: display_of(&member.url),
            text,
        });
        urls.push(member.url);
    }
    // Only the files of this check are kept: memory follows the project.
    project.disk = std::mem::take(&mut project.disk)
        .into_iter()
        .filter(|(path, _)| on_disk.contains_key(path))
        .collect();
    let first = !project.indexed;
    if first {
        (watch.indexing)(Indexing::Begin { files: documents.len() });
    }
    let progress = Watched {
        watch,
        first,
        total: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
    };
    let read = project.incremental.read(sources, documents, options);
    let checked = project.incremental.check(&read, sources, overrides, &progress);
    if first {
        (watch.indexing)(Indexing::End);
        project.indexed = !(watch.cancelled)();
    }
    let files = read
        .groups
        .iter()
        .flat_map(|group| group.files.iter().copied())
        .zip(urls)
        .collect();
    let mut diagnostics = Vec::new();
    for entry in checked.checked {
        // A checked program's main thread is its entry point.
        let entry_file = entry.program.threads.first().map(|main| main.span.file);
        for diagnostic in &entry.diagnostics {
            found_from
                .entry(diagnostic.primary.file)
                .or_default()
                .extend(entry_file);
        }
        diagnostics.extend(entry.diagnostics);
    }
    (diagnostics, files)
}

/// What the server keeps between checks: per project and language, the files read
/// from disk and what [`Incremental`] keeps.
#[derive(Default)]
pub struct Workspace {
    projects: HashMap<(Option<PathBuf>, Language), ProjectCache>,
}

/// Projects kept at once: a session that visits more starts over.
const MAX_PROJECTS: usize = 16;

impl Workspace {
    fn project(&mut self, scope: Option<PathBuf>, language: Language) -> &mut ProjectCache {
        let key = (scope, language);
        if !self.projects.contains_key(&key) && self.projects.len() >= MAX_PROJECTS {
            self.projects.clear();
        }
        self.projects.entry(key).or_default()
    }
}

/// One project's files as last read, and its parses and results.
#[derive(Default)]
pub struct ProjectCache {
    /// Files read from disk: the text, kept while the file's size and modification
    /// time are those it was read at.
    disk: HashMap<PathBuf, (Option<std::time::SystemTime>, u64, String)>,
    incremental: Incremental,
    /// A check of it has run to the end.
    indexed: bool,
}

impl ProjectCache {
    fn disk_text(&mut self, path: &Path) -> Option<String> {
        let metadata = std::fs::metadata(path).ok()?;
        let stamp = (metadata.modified().ok(), metadata.len());
        if let Some((modified, len, text)) = self.disk.get(path)
            && (*modified, *len) == stamp
        {
            return Some(text.clone());
        }
        let text = decode_text(&std::fs::read(path).ok()?);
        self.disk.insert(path.to_path_buf(), (stamp.0, stamp.1, text.clone()));
        Some(text)
    }
}

/// What a check tells its caller, and asks it.
pub struct Watch<'a> {
    /// Whether the result is still wanted.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// How a project's first check (reading and checking all of it) goes.
    pub indexing: &'a (dyn Fn(Indexing) + Sync),
}

/// A project's first check: begun (with its files), entry points done, ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indexing {
    Begin { files: usize },
    Checked { done: usize, total: usize },
    End,
}

/// Checking that stops between entry points once its result is no longer wanted, and
/// says how far a first check is.
struct Watched<'a> {
    watch: &'a Watch<'a>,
    first: bool,
    total: AtomicUsize,
    done: AtomicUsize,
}

impl Progress for Watched<'_> {
    fn add_work(&self, entries: usize) {
        self.total.fetch_add(entries, Ordering::Relaxed);
    }
    fn start(&self, _: &str) {}
    fn finish_one(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.first {
            let total = self.total.load(Ordering::Relaxed);
            (self.watch.indexing)(Indexing::Checked { done, total });
        }
    }
    fn cancelled(&self) -> bool {
        (self.watch.cancelled)()
    }
}
