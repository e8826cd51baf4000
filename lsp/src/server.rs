//! The server: the protocol loop on the main thread (requests are answered from the
//! open documents and the latest check), and a checker thread that runs checks off it.
//! Edits are coalesced: the edits of a document that arrive while a check runs are
//! checked once, on the latest text. A check whose document changed meanwhile is
//! cancelled (source checks stop between entry points) and not published: a newer
//! one follows.

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, LogMessage,
    Notification as _, Progress, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest, References,
    Request as _, SemanticTokensFullRequest, WorkDoneProgressCreate,
};
use lsp_types::*;

use crate::analysis::{Analysis, Indexing, Setup, Watch, Workspace, analyze};
use crate::documents::{Document, Kind, Snapshot};
use crate::positions::LineIndex;
use syncguard_analyzer::FileId;

/// What `syncguard lsp` is started with (the editor's `syncguard.args`).
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// `--config FILE`: this configuration file for every file, as `check --config`.
    pub config: Option<PathBuf>,
    /// `--isolated`: no configuration file, as `check --isolated`.
    pub isolated: bool,
}

/// Serve on standard input and output until the client exits.
pub fn serve_stdio(options: ServerOptions) -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    serve_with(connection, options)?;
    io_threads.join().map_err(|err| err.to_string())
}

/// Serve on `connection` until the client shuts the server down.
pub fn serve(connection: Connection) -> Result<(), String> {
    serve_with(connection, ServerOptions::default())
}

/// Where the rules' documentation is written: the user's cache folder
/// (`$XDG_CACHE_HOME`, else `~/.cache`, else `%LOCALAPPDATA%`), per version, so that
/// each user's links point at files of their own that outlive a reboot; the temporary
/// folder only where no cache folder is known.
fn rule_docs_folder(var: impl Fn(&str) -> Option<String>) -> std::path::PathBuf {
    let set = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(std::path::PathBuf::from)
    };
    let cache = set("XDG_CACHE_HOME")
        .or_else(|| set("HOME").map(|home| home.join(".cache")))
        .or_else(|| set("LOCALAPPDATA"));
    let version = format!("rules-{}", env!("CARGO_PKG_VERSION"));
    match cache {
        Some(cache) => cache.join("syncguard").join(version),
        None => std::env::temp_dir().join(format!("syncguard-{version}")),
    }
}

/// [`serve`] with `options`.
pub fn serve_with(connection: Connection, options: ServerOptions) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|err| err.to_string())?;
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let initialized = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "syncguard".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    connection
        .initialize_finish(id, serde_json::to_value(initialized).expect("results serialize"))
        .map_err(|err| err.to_string())?;
    crate::diagnostics::RULE_DOCS
        .get_or_init(|| crate::diagnostics::RuleDocs::write(rule_docs_folder(|name| std::env::var(name).ok())));
    let shared = Arc::new(Shared::default());
    let (jobs, queue) = crossbeam_channel::unbounded();
    let checker = {
        let setup = Setup {
            roots: workspace_roots(&params),
            config: options.config,
            isolated: options.isolated,
        };
        let (sender, shared) = (connection.sender.clone(), shared.clone());
        let shows_progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false);
        std::thread::spawn(move || check_loop(&queue, &sender, &shared, &setup, shows_progress))
    };
    let mut server = Server {
        documents: HashMap::new(),
        generation: 0,
        jobs,
        shared,
        sender: connection.sender.clone(),
    };
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection.handle_shutdown(&request).map_err(|err| err.to_string())? {
                    break;
                }
                server.request(request);
            }
            Message::Notification(notification) => server.notification(notification),
            Message::Response(_) => {}
        }
    }
    drop(server);
    checker.join().map_err(|_| "the checker thread panicked".to_string())
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..TextDocumentSyncOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, crate::actions::fix_all_kind()]),
            ..CodeActionOptions::default()
        })),
        document_formatting_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions::default()),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: crate::sync_editing::TOKEN_TYPES.to_vec(),
                    token_modifiers: Vec::new(),
                },
                full: Some(SemanticTokensFullOptions::Bool(true)),
                ..SemanticTokensOptions::default()
            },
        )),
        ..ServerCapabilities::default()
    }
}

/// The client's workspace folders (or its root), where projects are looked for.
#[allow(deprecated)] // `root_uri` and `root_path`: older clients send only those.
fn workspace_roots(params: &InitializeParams) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|folder| folder.uri.to_file_path().ok())
        .collect();
    if roots.is_empty() {
        roots.extend(params.root_uri.as_ref().and_then(|uri| uri.to_file_path().ok()));
    }
    roots
}

/// A check, and the version of the document it read (`None`: read from disk).
type Checked = (Arc<Analysis>, Option<i32>);

/// What the checker shares with the protocol loop.
#[derive(Default)]
struct Shared {
    /// The latest check covering each file, and the version of the document it read.
    analyses: Mutex<HashMap<Url, Checked>>,
    /// The latest generation scheduled per document: older checks are stale.
    latest: Mutex<HashMap<Url, u64>>,
}

impl Shared {
    fn is_stale(&self, job: &Job) -> bool {
        lock(&self.latest)
            .get(&job.target)
            .is_some_and(|&latest| latest > job.generation)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A check to run: `target` in the editor's state `documents`.
struct Job {
    target: Url,
    documents: Snapshot,
    generation: u64,
}

struct Server {
    documents: HashMap<Url, Document>,
    generation: u64,
    jobs: Sender<Job>,
    shared: Arc<Shared>,
    sender: Sender<Message>,
}

impl Server {
    fn schedule(&mut self, target: Url) {
        self.generation += 1;
        lock(&self.shared.latest).insert(target.clone(), self.generation);
        let documents = Arc::new(self.documents.clone());
        let _ = self.jobs.send(Job {
            target,
            documents,
            generation: self.generation,
        });
    }

    fn notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(params) = notification.extract::<DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD) {
                    let document = params.text_document;
                    self.documents.insert(
                        document.uri.clone(),
                        Document {
                            text: Arc::new(document.text),
                            version: document.version,
                            language_id: document.language_id,
                        },
                    );
                    self.schedule(document.uri);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(params) = notification.extract::<DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD)
                    && let Some(document) = self.documents.get_mut(&params.text_document.uri)
                    && let Some(change) = params.content_changes.into_iter().last()
                {
                    document.text = Arc::new(change.text);
                    document.version = params.text_document.version;
                    self.schedule(params.text_document.uri);
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Ok(params) = notification.extract::<DidSaveTextDocumentParams>(DidSaveTextDocument::METHOD)
                    && self.documents.contains_key(&params.text_document.uri)
                {
                    self.schedule(params.text_document.uri);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(params) = notification.extract::<DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD) {
                    let uri = params.text_document.uri;
                    let kind = self
                        .documents
                        .remove(&uri)
                        .and_then(|document| Kind::of(&uri, &document.language_id));
                    // A source file's findings stay: its project is still checked from disk.
                    if matches!(kind, Some(Kind::Sync | Kind::Trace | Kind::Record)) {
                        lock(&self.shared.analyses).remove(&uri);
                        publish(&self.sender, &uri, Vec::new(), None);
                    }
                }
            }
            _ => {}
        }
    }

    /// Answer a request; a panic in a handler is an error response, and the server goes on.
    fn request(&mut self, request: Request) {
        let (id, method) = (request.id.clone(), request.method.clone());
        let result = catch_unwind(AssertUnwindSafe(|| self.answer(request)));
        let response = match result {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(panic) => {
                let message = format!("syncguard: internal error in {method}: {}", panic_text(&panic));
                log(&self.sender, MessageType::ERROR, &message);
                Response::new_err(id, ErrorCode::InternalError as i32, message)
            }
        };
        let _ = self.sender.send(Message::Response(response));
    }

    fn answer(&self, request: Request) -> Result<serde_json::Value, (ErrorCode, String)> {
        let to_json = |value: serde_json::Value| Ok(value);
        match request.method.as_str() {
            HoverRequest::METHOD => to_json(json(self.hover(params(request)?))),
            CodeActionRequest::METHOD => to_json(json(self.code_actions(params(request)?))),
            Formatting::METHOD => {
                let params: DocumentFormattingParams = params(request)?;
                to_json(json(
                    self.sync_text(&params.text_document.uri)
                        .and_then(crate::sync_editing::format),
                ))
            }
            GotoDefinition::METHOD => {
                let params: GotoDefinitionParams = params(request)?;
                let at = params.text_document_position_params;
                let found = self.sync_offset(&at).and_then(|(text, offset)| {
                    let range = crate::sync_editing::definition(text, offset)?;
                    Some(GotoDefinitionResponse::Scalar(Location::new(
                        at.text_document.uri.clone(),
                        LineIndex::new(text).range(range),
                    )))
                });
                to_json(json(found))
            }
            References::METHOD => {
                let params: ReferenceParams = params(request)?;
                let at = params.text_document_position;
                let found = self
                    .sync_offset(&at)
                    .map(|(text, offset)| crate::sync_editing::references(text, offset, &at.text_document.uri));
                to_json(json(found))
            }
            DocumentSymbolRequest::METHOD => {
                let params: DocumentSymbolParams = params(request)?;
                let found = self
                    .sync_text(&params.text_document.uri)
                    .map(|text| DocumentSymbolResponse::Nested(crate::sync_editing::symbols(text)));
                to_json(json(found))
            }
            SemanticTokensFullRequest::METHOD => {
                let params: SemanticTokensParams = params(request)?;
                let found = self.sync_text(&params.text_document.uri).map(|text| {
                    SemanticTokensResult::Tokens(SemanticTokens {
                        result_id: None,
                        data: crate::sync_editing::semantic_tokens(text),
                    })
                });
                to_json(json(found))
            }
            Completion::METHOD => {
                let params: CompletionParams = params(request)?;
                let found = self
                    .sync_text(&params.text_document_position.text_document.uri)
                    .map(|_| CompletionResponse::Array(crate::sync_editing::completions()));
                to_json(json(found))
            }
            other => Err((ErrorCode::MethodNotFound, format!("syncguard does not handle {other}"))),
        }
    }

    /// The text of an open `.sync` document.
    fn sync_text(&self, uri: &Url) -> Option<&str> {
        let document = self.documents.get(uri)?;
        (Kind::of(uri, &document.language_id) == Some(Kind::Sync)).then_some(document.text.as_str())
    }

    fn sync_offset(&self, at: &TextDocumentPositionParams) -> Option<(&str, usize)> {
        let text = self.sync_text(&at.text_document.uri)?;
        Some((text, LineIndex::new(text).offset(at.position)))
    }

    fn hover(&self, params: HoverParams) -> Option<Hover> {
        let at = params.text_document_position_params;
        let document = self.documents.get(&at.text_document.uri)?;
        let text = document.text.as_str();
        let offset = LineIndex::new(text).offset(at.position);
        let (_, word) = crate::hover::word_at(text, offset)?;
        let markdown = crate::hover::for_word(word).or_else(|| {
            let kind = Kind::of(&at.text_document.uri, &document.language_id)?;
            (kind == Kind::Sync)
                .then(|| crate::hover::for_handle(text, offset))
                .flatten()
        })?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }),
            range: None,
        })
    }

    fn code_actions(&self, params: CodeActionParams) -> Option<Vec<CodeAction>> {
        let uri = params.text_document.uri;
        let (analysis, version) = lock(&self.shared.analyses).get(&uri).cloned()?;
        let document = self.documents.get(&uri);
        // Edits computed on an older text would land in the wrong place.
        if version.is_some() && document.map(|document| document.version) != version {
            return Some(Vec::new());
        }
        let kind = Kind::of(&uri, document.map_or("", |document| document.language_id.as_str()))?;
        let only = params.context.only.unwrap_or_default();
        let mut actions = Vec::new();
        if only.is_empty() || only.iter().any(|wanted| wanted.as_str().starts_with("quickfix")) {
            actions.extend(crate::actions::for_range(&analysis, &uri, kind, params.range));
        }
        let fix_all = crate::actions::fix_all_kind();
        if only.is_empty() || only.iter().any(|wanted| fix_all.as_str().starts_with(wanted.as_str())) {
            actions.extend(crate::actions::fix_all(&analysis, &uri, kind));
        }
        Some(actions)
    }
}

fn params<P: serde::de::DeserializeOwned>(request: Request) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(request.params).map_err(|err| (ErrorCode::InvalidParams, err.to_string()))
}

fn json(value: impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(value).expect("protocol types serialize")
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

fn log(sender: &Sender<Message>, kind: MessageType, message: &str) {
    let params = LogMessageParams {
        typ: kind,
        message: message.to_string(),
    };
    let _ = sender.send(Message::Notification(Notification::new(
        LogMessage::METHOD.to_string(),
        params,
    )));
}

fn publish(sender: &Sender<Message>, uri: &Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
    let params = PublishDiagnosticsParams::new(uri.clone(), diagnostics, version);
    let _ = sender.send(Message::Notification(Notification::new(
        PublishDiagnostics::METHOD.to_string(),
        params,
    )));
}

/// Run checks as they come, a burst of edits once, until the protocol loop ends.
fn check_loop(queue: &Receiver<Job>, sender: &Sender<Message>, shared: &Shared, setup: &Setup, shows_progress: bool) {
    let mut published = Published::default();
    let mut said: HashSet<String> = HashSet::new();
    let mut workspace = Workspace::default();
    while let Ok(first) = queue.recv() {
        let mut pending: Vec<Job> = vec![first];
        while let Ok(job) = queue.try_recv() {
            pending.retain(|queued| queued.target != job.target);
            pending.push(job);
        }
        for job in pending {
            if shared.is_stale(&job) {
                continue;
            }
            let report = IndexReport::new(sender, shows_progress, job.generation);
            let watch = Watch {
                cancelled: &|| shared.is_stale(&job),
                indexing: &|event| report.send(event),
            };
            match catch_unwind(AssertUnwindSafe(|| {
                analyze(&job.target, &job.documents, setup, &watch, &mut workspace)
            })) {
                Ok(Some(analysis)) if !shared.is_stale(&job) => {
                    if let Some(err) = &analysis.config_error
                        && said.insert(err.clone())
                    {
                        show(sender, &format!("syncguard: {err} (the defaults are used)"));
                    }
                    publish_analysis(sender, shared, &job, analysis, &mut published);
                }
                Ok(_) => {}
                Err(panic) => log(
                    sender,
                    MessageType::ERROR,
                    &format!(
                        "syncguard: internal error checking {}: {}",
                        job.target,
                        panic_text(&panic)
                    ),
                ),
            }
        }
    }
}

/// `$/progress` for a project's first check, in a client that shows progress.
struct IndexReport<'a> {
    sender: &'a Sender<Message>,
    shown: bool,
    token: NumberOrString,
    /// The percentage last reported.
    percent: std::sync::atomic::AtomicUsize,
}

impl<'a> IndexReport<'a> {
    fn new(sender: &'a Sender<Message>, shown: bool, generation: u64) -> Self {
        IndexReport {
            sender,
            shown,
            token: NumberOrString::String(format!("syncguard/index/{generation}")),
            percent: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn send(&self, event: Indexing) {
        if !self.shown {
            return;
        }
        let progress = match event {
            Indexing::Begin { files } => {
                let create = WorkDoneProgressCreateParams {
                    token: self.token.clone(),
                };
                let id = RequestId::from(format!("syncguard/progress/{}", token_text(&self.token)));
                let request = Request::new(id, WorkDoneProgressCreate::METHOD.to_string(), create);
                let _ = self.sender.send(Message::Request(request));
                WorkDoneProgress::Begin(WorkDoneProgressBegin {
                    title: "syncguard: checking the project".to_string(),
                    cancellable: Some(false),
                    message: Some(format!("reading {files} files")),
                    percentage: Some(0),
                })
            }
            Indexing::Checked { done, total } => {
                let percent = done * 100 / total.max(1);
                // One report per 5%: a project has thousands of entry points.
                let before = self.percent.fetch_max(percent, std::sync::atomic::Ordering::Relaxed);
                if percent / 5 == before / 5 {
                    return;
                }
                WorkDoneProgress::Report(WorkDoneProgressReport {
                    cancellable: Some(false),
                    message: Some(format!("{done} of {total} entry points checked")),
                    percentage: Some(percent.min(100) as u32),
                })
            }
            Indexing::End => WorkDoneProgress::End(WorkDoneProgressEnd { message: None }),
        };
        let params = ProgressParams {
            token: self.token.clone(),
            value: ProgressParamsValue::WorkDone(progress),
        };
        let _ = self.sender.send(Message::Notification(Notification::new(
            Progress::METHOD.to_string(),
            params,
        )));
    }
}

fn token_text(token: &NumberOrString) -> String {
    match token {
        NumberOrString::Number(number) => number.to_string(),
        NumberOrString::String(text) => text.clone(),
    }
}

fn show(sender: &Sender<Message>, message: &str) {
    let params = ShowMessageParams {
        typ: MessageType::WARNING,
        message: message.to_string(),
    };
    let _ = sender.send(Message::Notification(Notification::new(
        ShowMessage::METHOD.to_string(),
        params,
    )));
}

/// What the client was last sent, and what the latest checks found, per file.
#[derive(Default)]
struct Published {
    /// Files whose findings the client shows.
    shown: HashSet<Url>,
    /// The findings of each file a check covered, as the latest check covering it found them.
    found: HashMap<Url, Vec<lsp_types::Diagnostic>>,
}

/// Publish the findings of the files the check is about: the open ones, those an open
/// file's entry points found findings in (the helpers they call), those whose findings
/// the client shows (they may clear), and those whose findings the edit changed. The other files of the project are checked but not published: a project's
/// fixtures and libraries are not the user's work in progress. Keep the check for code
/// actions.
fn publish_analysis(
    sender: &Sender<Message>,
    shared: &Shared,
    job: &Job,
    analysis: Analysis,
    published: &mut Published,
) {
    let analysis = Arc::new(analysis);
    let from_open = found_from_open(&analysis, job);
    let mut analyses = lock(&shared.analyses);
    for (file, uri) in &analysis.files {
        let version = job.documents.get(uri).map(|document| document.version);
        analyses.insert(uri.clone(), (analysis.clone(), version));
        let diagnostics = crate::diagnostics::for_file(&analysis, uri);
        // A file's first check is its project's index: it is not news.
        let before = published.found.insert(uri.clone(), diagnostics.clone());
        let changed = before.is_some_and(|before| before != diagnostics);
        let wanted = version.is_some() || published.shown.contains(uri) || changed || from_open.contains(file);
        if !wanted {
            continue;
        }
        if diagnostics.is_empty() {
            published.shown.remove(uri);
        } else {
            published.shown.insert(uri.clone());
        }
        publish(sender, uri, diagnostics, version);
    }
}

/// The files an entry point in an open file found something in (the helpers it calls).
fn found_from_open(analysis: &Analysis, job: &Job) -> HashSet<FileId> {
    let open = |entry: &FileId| {
        analysis
            .url_of(*entry)
            .is_some_and(|url| job.documents.contains_key(url))
    };
    analysis
        .found_from
        .iter()
        .filter(|(_, entries)| entries.iter().any(open))
        .map(|(file, _)| *file)
        .collect()
}

/// A request id for tests and benchmarks that drive the server in memory.
pub fn request_id(id: i32) -> RequestId {
    RequestId::from(id)
}

#[cfg(test)]
mod tests {
    use super::rule_docs_folder;
    use std::path::PathBuf;

    fn folder(vars: &[(&str, &str)]) -> PathBuf {
        rule_docs_folder(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn rule_docs_go_to_the_users_cache_folder() {
        let version = format!("rules-{}", env!("CARGO_PKG_VERSION"));
        let xdg = folder(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")]);
        assert_eq!(xdg, PathBuf::from("/c/syncguard").join(&version));
        assert_eq!(
            folder(&[("HOME", "/h")]),
            PathBuf::from("/h/.cache/syncguard").join(&version)
        );
        assert_eq!(
            folder(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]),
            PathBuf::from("/h/.cache/syncguard").join(&version)
        );
        assert!(folder(&[]).starts_with(std::env::temp_dir()));
    }
}
