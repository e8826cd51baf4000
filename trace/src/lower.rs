//! Trace lines to the Program. Each rank's calls become an `if rank == r { ... }` block
//! of one SPMD program; the first thread seen on a rank is its main thread and every
//! other thread is spawned where its first call falls in the main thread's calls (by
//! `ts` when both carry it, else by file order). Handles become objects per rank.

use std::collections::{BTreeMap, HashMap, HashSet};

use rustc_hash::FxHashMap;

use super::args::is_identifier;

/// A GE op type or attribute name: an identifier; `.sync` keywords other than `NULL`
/// are fine there.
fn is_op_name(text: &str) -> bool {
    is_identifier(text) && !matches!(text, "NULL" | "nullptr")
}
use super::json::{Args, HeaderFields, Json, Line};
use super::locations::SourceLocation;
use syncguard_model::api::{self, Api, Effect, Place};
use syncguard_model::calls::{self, CallArgs};
use syncguard_model::diagnostic::{Diagnostic, Severity, UsedBeforeCreation};
use syncguard_model::model::{
    BinOp, Block, DefaultStream, Expr, GeOp, GeTask, HostThread, ObjId, Op, OpKind, Program, RankCount, Stmt, ThreadId,
};
use syncguard_model::reading_rules::TraceFormatError;
use syncguard_model::reading_rules::unknown_api;
use syncguard_model::source::{FileId, Span};

/// More malformed lines than this are counted, not shown one by one.
const MAX_SHOWN_FORMAT_ERRORS: usize = 100;
/// Rank ids above this are taken for garbage rather than a real world size.
const MAX_RANKS: i64 = 1 << 16;

/// Streams trace lines into a Program.
pub struct TraceLowerer {
    pub(super) file: FileId,
    pub(super) program: Program,
    diagnostics: Vec<Diagnostic>,
    pub(super) ranks: Vec<RankState>,
    world_size: Option<u32>,
    seen_call: bool,
    /// The header line, once read: a second one is reported, not applied.
    header: Option<Span>,
    unknown_apis: HashSet<String>,
    format_errors: usize,
    first_hidden: Option<Span>,
    /// Whether a line has told the HCCL buffer size.
    pub(super) hccl_size_seen: bool,
    /// `loc` of the lines that have one, by line start.
    locs: HashMap<usize, SourceLocation>,
    /// Record each call's `ts` in `Program::call_times` (for timelines).
    pub keep_times: bool,
    /// Events used before the line that creates them (SG101, reported by the analyzer).
    pub(super) used_before_creation: Vec<UsedBeforeCreation>,
    /// Each call's resolved arguments by line start, for `syncguard convert`.
    pub(super) calls: Option<HashMap<usize, RecordedCall>>,
    /// Objects from before the trace, by the handle's first use.
    pub(super) before_trace: FxHashMap<ObjId, super::before::BeforeTrace>,
    /// The last call's argument list, emptied, for the next call to fill: one list
    /// allocated and freed per call cost as much as resolving the arguments in it.
    pub(super) spare_args: Vec<Option<calls::ArgValue>>,
    /// The trace's length in bytes, when known before reading: op lists grow to the
    /// length it projects for them (`grow_by_projection`).
    pub expected_bytes: Option<u64>,
}

/// A trace read into the model: its Program, what reading found (including the events
/// used before their creation, which the analyzer reports as SG101), and the `loc` of
/// the lines that carry one, for the analyzer's notes.
pub struct ReadTrace {
    pub file: FileId,
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
    pub used_before_creation: Vec<UsedBeforeCreation>,
    pub locs: HashMap<usize, SourceLocation>,
    /// Each call's resolved arguments by line start, when kept (for `convert`).
    pub calls: Option<HashMap<usize, RecordedCall>>,
}

/// A host call as `syncguard convert` prints it.
pub struct RecordedCall {
    pub api: &'static Api,
    pub args: CallArgs,
    pub created: Vec<ObjId>,
}

/// What one rank did.
#[derive(Default)]
pub(super) struct RankState {
    /// The main thread's calls, and their `ts` while every one has it.
    pub(super) main: Block,
    main_ts: Vec<u64>,
    /// Objects used before any line created them: they existed before the trace began.
    pub(super) implicit: Block,
    threads: Vec<TraceThread>,
    /// Live handle → object; a handle created again names a new object.
    pub(super) handles: FxHashMap<Box<str>, ObjId>,
    /// Buffers by base address, to resolve pointers into them.
    pub(super) buffers: BTreeMap<u64, ObjId>,
    ge_op: Option<usize>,
}

struct TraceThread {
    key: Box<str>,
    id_key: Option<i64>,
    /// `None` for the rank's main thread.
    id: Option<ThreadId>,
    /// Where the spawn goes in the main thread: its length at the thread's first call.
    spawn_at: usize,
    first_ts: Option<u64>,
}

/// A line's `thread`: an id or a name.
#[derive(Clone, Copy)]
enum ThreadKey<'a> {
    Id(i64),
    Name(&'a str),
}

impl ThreadKey<'_> {
    /// As the thread's name shows it; built only for a thread's first call.
    fn text(self) -> Box<str> {
        match self {
            ThreadKey::Id(id) => id.to_string().into(),
            ThreadKey::Name(name) => name.into(),
        }
    }

    fn id(self) -> Option<i64> {
        match self {
            ThreadKey::Id(id) => Some(id),
            ThreadKey::Name(_) => None,
        }
    }
}

impl TraceThread {
    fn is(&self, key: ThreadKey) -> bool {
        match key {
            ThreadKey::Id(id) => self.id_key == Some(id),
            ThreadKey::Name(name) => self.id_key.is_none() && &*self.key == name,
        }
    }
}

/// Which op list a call goes to.
#[derive(Clone, Copy)]
pub(super) enum Target {
    Main(usize),
    Thread(ThreadId),
}

impl TraceLowerer {
    pub fn new(file: FileId, keep_calls: bool) -> Self {
        TraceLowerer {
            file,
            program: Program::new(Span::new(file, 0..0)),
            diagnostics: Vec::new(),
            ranks: Vec::new(),
            world_size: None,
            seen_call: false,
            header: None,
            unknown_apis: HashSet::new(),
            format_errors: 0,
            first_hidden: None,
            hccl_size_seen: false,
            locs: HashMap::new(),
            used_before_creation: Vec::new(),
            calls: keep_calls.then(HashMap::new),
            keep_times: false,
            before_trace: FxHashMap::default(),
            spare_args: Vec::new(),
            expected_bytes: None,
        }
    }

    /// Report a diagnostic; SG002 errors beyond the first hundred are only counted.
    pub(super) fn report(&mut self, diagnostic: Diagnostic) {
        if diagnostic.code == TraceFormatError::INFO.code && diagnostic.severity == Severity::Error {
            self.format_errors += 1;
            if self.format_errors > MAX_SHOWN_FORMAT_ERRORS {
                self.first_hidden.get_or_insert(diagnostic.primary);
                return;
            }
        }
        self.diagnostics.push(diagnostic);
    }

    pub(super) fn format_error(&mut self, span: &Span, message: impl Into<String>, label: impl Into<String>) {
        let diagnostic = Diagnostic::new(&TraceFormatError::INFO, span.clone(), message).with_label(label);
        self.report(diagnostic);
    }

    /// Lower one parsed line.
    pub(super) fn parsed_line(&mut self, line: &Line, span: Span) {
        if let Some(header) = &line.header {
            if header.syncguard_trace.is_some() {
                self.header(header, &span);
                return;
            }
            if header.syncguard_capture_end.is_some() {
                return; // what the capture counted: nothing to check
            }
        }
        let Some(api_name) = line.api.as_ref() else {
            self.format_error(&span, "the line has no `api`: which call is it?", "missing \"api\"");
            return;
        };
        let Json::Str(api_name) = api_name else {
            let message = format!("`api` must be a string, found {}", api_name.describe());
            self.format_error(&span, message, "skipped");
            return;
        };
        let Some(rank) = self.rank_of(line.rank.as_ref(), &span) else {
            return;
        };
        let thread = match &line.thread {
            None | Some(Json::Null) => ThreadKey::Id(0),
            Some(Json::Int(id)) => ThreadKey::Id(*id),
            Some(Json::Str(name)) => ThreadKey::Name(name.as_ref()),
            Some(other) => {
                let message = format!("`thread` must be an integer or a string, found {}", other.describe());
                self.format_error(&span, message, "skipped");
                return;
            }
        };
        self.seen_call = true;
        if !succeeded(line.ret.as_ref()) {
            return; // a failed call had no effect
        }
        if let Some(loc) = line.loc.as_ref().and_then(SourceLocation::from_json) {
            self.locs.insert(span.range.start, loc);
        }
        let ts = line
            .ts
            .as_ref()
            .and_then(Json::as_int)
            .and_then(|t| u64::try_from(t).ok());
        let empty = Args::default();
        let args = line.args.as_ref().unwrap_or(&empty);
        if let Some(ts) = ts.filter(|_| self.keep_times) {
            self.program.call_times.insert(span.range.start, ts);
        }
        let target = self.thread_target(rank, thread, ts, &span);
        if api_name == "ge.op" {
            self.ge_op(rank, args, &span);
            return;
        }
        let Some(api) = api::lookup(api_name) else {
            self.unknown_api(api_name, &span);
            return;
        };
        match api.place {
            Place::Core => {
                let message = format!("`{}` runs on AI cores; a host call trace cannot contain it", api.name);
                self.format_error(&span, message, "skipped");
            }
            Place::GenTask => self.ge_task(rank, api, args, &span),
            Place::Host => self.host_call(rank, target, api, args, &span),
        }
    }

    fn header(&mut self, line: &HeaderFields, span: &Span) {
        if self.seen_call {
            self.format_error(
                span,
                "the header must be the first line of the trace; this one is ignored",
                "header after calls",
            );
            return;
        }
        if let Some(first) = &self.header {
            let diagnostic = Diagnostic::new(
                &TraceFormatError::INFO,
                span.clone(),
                "a second trace header: a trace has one, and the first one applies",
            )
            .with_label("this header is ignored")
            .with_related(first.clone(), "the header that applies")
            .with_help("remove one of the headers (two traces concatenated into one file must be split)");
            self.report(diagnostic);
            return;
        }
        self.header = Some(span.clone());
        let version = line.syncguard_trace.as_ref().and_then(Json::as_int);
        if version != Some(1) {
            let message = "unsupported trace version: syncguard reads `\"syncguard_trace\": 1`";
            self.format_error(span, message, "the rest is read as version 1");
        }
        if let Some(size) = &line.world_size {
            match size.as_int().filter(|n| (1..=MAX_RANKS).contains(n)) {
                Some(n) => self.world_size = Some(n as u32),
                None => self.format_error(
                    span,
                    format!("`world_size` must be a rank count from 1 to {MAX_RANKS}"),
                    "ignored",
                ),
            }
        }
        if let Some(target) = &line.target {
            let name = match target {
                Json::Str(name) => name.to_string(),
                other => other.as_int().map(|n| n.to_string()).unwrap_or_default(),
            };
            match syncguard_model::model::Target::from_name(&name) {
                Some(target) => self.program.settings.target = target,
                None => self.format_error(span, format!("unknown target `{name}` (A2, A3, 950, 310P)"), "ignored"),
            }
        }
        match line.cann.as_ref() {
            None => {}
            Some(Json::Str(policy)) if policy == "legacy" => {
                self.program.settings.cann = syncguard_model::model::CannPolicy::Legacy
            }
            Some(Json::Str(policy)) if policy == "current" => {
                self.program.settings.cann = syncguard_model::model::CannPolicy::Current
            }
            Some(_) => self.format_error(span, "`cann` is \"current\" or \"legacy\"", "ignored"),
        }
        if let Some(value) = &line.default_stream {
            let mode = match value {
                Json::Str(name) => DefaultStream::from_name(name),
                _ => None,
            };
            match mode {
                Some(mode) => self.program.settings.default_stream = mode,
                None => self.format_error(span, "`default_stream` is \"legacy\" or \"per-thread\"", "ignored"),
            }
        }
    }

    fn rank_of(&mut self, rank: Option<&Json>, span: &Span) -> Option<usize> {
        let rank = match rank {
            None | Some(Json::Null) => 0,
            Some(value) => match value.as_int().filter(|r| (0..MAX_RANKS).contains(r)) {
                Some(rank) => rank,
                None => {
                    let message = format!("`rank` must be an integer from 0 to 65535, found {}", value.describe());
                    self.format_error(span, message, "skipped");
                    return None;
                }
            },
        };
        if let Some(size) = self.world_size
            && rank >= size as i64
        {
            let message = format!("rank {rank} is outside the header's `world_size` of {size}");
            self.format_error(span, message, "skipped");
            return None;
        }
        let rank = rank as usize;
        if self.ranks.len() <= rank {
            self.ranks.resize_with(rank + 1, RankState::default);
        }
        Some(rank)
    }

    /// The op list of `(rank, thread)`, spawning the thread at its first call.
    fn thread_target(&mut self, rank: usize, key: ThreadKey, ts: Option<u64>, span: &Span) -> Target {
        let state = &mut self.ranks[rank];
        if state.threads.is_empty() {
            state.threads.push(TraceThread {
                key: key.text(),
                id_key: key.id(),
                id: None,
                spawn_at: 0,
                first_ts: ts,
            });
        }
        let target = match state.threads.iter().find(|t| t.is(key)) {
            Some(thread) => thread.id.map_or(Target::Main(rank), Target::Thread),
            None => {
                let id = ThreadId(self.program.threads.len() as u32);
                let text = key.text();
                self.program.threads.push(HostThread {
                    name: format!("rank {rank} thread {text}"),
                    body: Vec::new(),
                    span: span.clone(),
                });
                let spawn_at = state.main.len();
                state.threads.push(TraceThread {
                    key: text,
                    id_key: key.id(),
                    id: Some(id),
                    spawn_at,
                    first_ts: ts,
                });
                Target::Thread(id)
            }
        };
        if let Target::Main(_) = target {
            match ts {
                Some(ts) if state.main_ts.len() == state.main.len() => {
                    grow_by_projection(&mut state.main_ts, span.range.start, self.expected_bytes);
                    state.main_ts.push(ts);
                }
                _ => state.main_ts.clear(),
            }
        }
        target
    }

    pub(super) fn push(&mut self, target: Target, api: &'static Api, kind: OpKind, span: &Span) {
        let op = Stmt::Op(Op {
            api: api.name,
            kind,
            span: span.clone(),
        });
        let list = match target {
            Target::Main(rank) => &mut self.ranks[rank].main,
            Target::Thread(id) => &mut self.program.threads[id.index()].body,
        };
        grow_by_projection(list, span.range.start, self.expected_bytes);
        list.push(op);
    }

    fn unknown_api(&mut self, name: &str, span: &Span) {
        if !self.unknown_apis.insert(name.to_string()) {
            return;
        }
        let note = "reported once: every line calling it is left out";
        self.report(unknown_api(span.clone(), name, Some(note)));
    }

    fn host_call(&mut self, rank: usize, target: Target, api: &'static Api, args: &Args, span: &Span) {
        let Some(mut resolved) = self.resolve_args(rank, api, args, span) else {
            return;
        };
        self.reach_peer_memory(rank, api, &mut resolved, span);
        let mut created = Vec::new();
        if api.creates != api::Creates::Nothing {
            created = self.create(rank, api, &resolved, args, span);
            if created.is_empty() {
                return;
            }
        } else if api.effect == Effect::NotifyId {
            self.alias_notify(rank, api, &resolved, span);
        } else if api.effect == Effect::ThreadAlias {
            self.alias_threads(rank, api, &resolved, args, span);
        } else if api.effect == Effect::Destroy && self.frees_unknown_memory(rank, &resolved) {
            let message = format!(
                "`{}` frees memory that no line allocated: it existed before the trace began, and the trace does not say which bytes the allocation spans, so the free is left out of the analysis",
                api.name
            );
            let diagnostic = Diagnostic::new(&TraceFormatError::INFO, span.clone(), message)
                .with_severity(Severity::Warning)
                .with_label("allocation unknown to the trace")
                .with_help(
                    "start the capture before this memory is allocated, so that uses after the free are checked",
                );
            self.report(diagnostic);
        } else if let Some(kind) = observed_completion(api, &resolved, args) {
            self.push(target, api, kind, span);
        } else if let Some(kind) = calls::effect_op(api, &resolved, &self.program) {
            if let OpKind::Destroy(id) = kind {
                self.destroyed_before(id);
            }
            self.push(target, api, kind, span);
        }
        match &mut self.calls {
            Some(calls) => {
                let call = RecordedCall {
                    api,
                    args: resolved,
                    created,
                };
                calls.insert(span.range.start, call);
            }
            None => {
                let mut values = resolved.values;
                values.clear();
                self.spare_args = values;
            }
        }
    }

    /// Whether a free names a raw pointer inside no allocation of the trace: all such
    /// memory is one space in the model, which this free must not end.
    fn frees_unknown_memory(&self, rank: usize, args: &CallArgs) -> bool {
        let Some(calls::ArgValue::Address(address)) = args.get(0) else {
            return false;
        };
        self.ranks[rank].handles.get(super::args::UNKNOWN_MEMORY) == Some(&address.buffer)
    }

    /// `HcclThreadExportToCommEngine`: each exported handle names its thread from now on.
    fn alias_threads(&mut self, rank: usize, api: &Api, resolved: &CallArgs, args: &Args, span: &Span) {
        let Some(calls::ArgValue::Objects(threads)) = resolved.get(2) else {
            return;
        };
        let exported = super::args::output_handles(api, args);
        let count = resolved.int(1).and_then(|n| n.as_const());
        match exported {
            Some(exported) if exported.len() == threads.len() && count.is_none_or(|n| n == threads.len() as i64) => {
                for (key, &thread) in exported.into_iter().zip(threads) {
                    self.ranks[rank].handles.insert(key.into(), thread);
                }
            }
            _ => {
                let message = format!(
                    "`{}` needs `exportedThreads`, one handle for each of the `threadNum` threads",
                    api.name
                );
                self.format_error(span, message, "the exported handles do not match the threads");
            }
        }
    }

    /// `aclrtGetNotifyId(notify, notifyId)`: the id names the notify from now on.
    fn alias_notify(&mut self, rank: usize, api: &Api, args: &CallArgs, span: &Span) {
        let (Some(notify), Some(id)) = (args.object(0), args.int(1).and_then(|e| e.as_const())) else {
            let message = format!("`{}` needs the returned `notifyId` to name the notify", api.name);
            self.format_error(span, message, "missing \"notifyId\"");
            return;
        };
        self.ranks[rank].handles.insert(id.to_string().into(), notify);
    }

    fn ge_op(&mut self, rank: usize, args: &Args, span: &Span) {
        let Some(Json::Str(name)) = args.get("type").filter(|t| matches!(t, Json::Str(n) if is_op_name(n))) else {
            self.format_error(
                span,
                "`ge.op` needs `type`, the op's type name (an identifier)",
                "skipped",
            );
            return;
        };
        let attrs = match args.get("attrs") {
            None => Vec::new(),
            Some(Json::Array(items)) if items.iter().all(|i| matches!(i, Json::Str(a) if is_op_name(a))) => items
                .iter()
                .filter_map(|item| match item {
                    Json::Str(attr) => Some((attr.to_string(), span.clone())),
                    _ => None,
                })
                .collect(),
            Some(_) => {
                self.format_error(
                    span,
                    "`attrs` must be an array of attribute names (identifiers)",
                    "skipped",
                );
                return;
            }
        };
        self.ranks[rank].ge_op = Some(self.program.ge_ops.len());
        self.program.ge_ops.push(GeOp {
            name: name.to_string(),
            attrs,
            tasks: Vec::new(),
            span: span.clone(),
        });
    }

    fn ge_task(&mut self, rank: usize, api: &'static Api, args: &Args, span: &Span) {
        let Some(index) = self.ranks[rank].ge_op else {
            let message = format!(
                "`{}` is not inside a GE op: a `ge.op` line must open its task list",
                api.name
            );
            self.format_error(span, message, "skipped");
            return;
        };
        let Some(resolved) = self.resolve_args(rank, api, args, span) else {
            return;
        };
        let Some(stream_id) = calls::ge_stream_id(api, &resolved) else {
            self.format_error(span, "`stream_id` must be a non-negative integer", "skipped");
            return;
        };
        let tasks = &mut self.program.ge_ops[index].tasks;
        if api.effect == Effect::GeSetStreamId {
            match tasks.last_mut() {
                Some(task) => task.stream_id = stream_id,
                None => self.format_error(span, "`SetStreamId` needs a task created before it", "no task yet"),
            }
            return;
        }
        if let Some(kind) = calls::ge_task_kind(api, &resolved, span) {
            tasks.push(GeTask {
                api: api.name,
                kind,
                stream_id,
                span: span.clone(),
            });
            if let Some(calls) = &mut self.calls {
                let call = RecordedCall {
                    api,
                    args: resolved,
                    created: Vec::new(),
                };
                calls.insert(span.range.start, call);
            }
        }
    }

    /// The Program and what reading found, without analysis; `target` and `cann`
    /// replace what the trace's header says (command-line policies).
    pub fn into_read(
        mut self,
        target: Option<syncguard_model::model::Target>,
        cann: Option<syncguard_model::model::CannPolicy>,
    ) -> ReadTrace {
        if let Some(span) = self.first_hidden.take() {
            let hidden = self.format_errors - MAX_SHOWN_FORMAT_ERRORS;
            let diagnostic = Diagnostic::new(
                &TraceFormatError::INFO,
                span,
                format!("{hidden} more malformed lines are not shown"),
            )
            .with_label("the first of them")
            .with_note("each was skipped; the rest of the trace was checked");
            self.diagnostics.push(diagnostic);
        }
        if !self.seen_call && self.diagnostics.is_empty() {
            let message = "the trace has no calls: nothing to verify";
            self.format_error(
                &Span::new(self.file, 0..0),
                message,
                "expected one JSON object per call",
            );
        }
        let rank_count = self.world_size.unwrap_or(self.ranks.len().max(1) as u32);
        self.program.settings.ranks = RankCount::Fixed(rank_count);
        if let Some(note) = self.finish_before_trace() {
            self.diagnostics.push(note);
        }
        self.program.settings.observed_run = true;
        let ranks = std::mem::take(&mut self.ranks);
        let multi_rank = rank_count > 1;
        let mut main = Vec::new();
        for (rank, state) in ranks.into_iter().enumerate() {
            let body = state.into_body(&self.program.threads);
            if body.is_empty() {
                continue;
            }
            if !multi_rank {
                main = body;
                break;
            }
            main.push(Stmt::If {
                cond: Box::new(Expr::Binary(
                    BinOp::Eq,
                    Box::new(Expr::Rank),
                    Box::new(Expr::Int(rank as i64)),
                )),
                then: body,
                otherwise: Vec::new(),
                span: Span::new(self.file, 0..0),
            });
        }
        self.program.threads[Program::MAIN_THREAD.index()].body = main;
        if self.program.calls_cuda() {
            let mut main = std::mem::take(&mut self.program.threads[Program::MAIN_THREAD.index()].body);
            created_before_by_cuda(&self.program, &mut main);
            self.program.threads[Program::MAIN_THREAD.index()].body = main;
        }
        if let Some(target) = target {
            self.program.settings.target = target;
        }
        if let Some(cann) = cann {
            self.program.settings.cann = cann;
        }
        ReadTrace {
            file: self.file,
            program: self.program,
            diagnostics: self.diagnostics,
            used_before_creation: self.used_before_creation,
            locs: self.locs,
            calls: self.calls,
        }
    }
}

/// Past this many bytes into a trace, an op list's share of the lines read so far is
/// taken to hold for the rest.
const PROJECT_AFTER_BYTES: usize = 1 << 20;
/// The shortest line a call can take: no list is projected past a call per this many
/// bytes of the trace.
const MIN_CALL_BYTES: u64 = 16;

/// Before `list` grows past its capacity at byte `offset` of an `expected`-byte trace:
/// room for the length it projects to by the end, plus an eighth. Doubling copies the
/// list about as many times as it doubles: at 64 ranks (a list of 1.4 MB each per
/// million calls, too small for `realloc` to move by remapping), those copies and the
/// page faults behind them were a fifth of the lowering thread's time. A projection that
/// falls short, or a trace of unknown length, leaves the list to doubling; one too long
/// reserves address space that is never touched, and one the system refuses (a limit on
/// address space, or no overcommit) is not taken.
fn grow_by_projection<T>(list: &mut Vec<T>, offset: usize, expected: Option<u64>) {
    let Some(expected) = expected else { return };
    if list.len() < list.capacity() || offset < PROJECT_AFTER_BYTES {
        return;
    }
    let projected = list.len() as u128 * u128::from(expected) / offset as u128;
    let wanted = (projected + projected / 8).min(u128::from(expected / MIN_CALL_BYTES));
    let wanted = usize::try_from(wanted).unwrap_or(usize::MAX);
    if wanted > list.capacity().saturating_mul(2) {
        // Refused, the list doubles as it would have.
        let _ = list.try_reserve_exact(wanted - list.len());
    }
}

impl RankState {
    /// The rank's main-thread ops: objects from before the trace, then its calls with
    /// each other thread spawned where it started.
    fn into_body(self, threads: &[HostThread]) -> Block {
        if self.implicit.is_empty() && self.threads.iter().all(|t| t.id.is_none()) {
            return self.main;
        }
        let mut body = self.implicit;
        let mut spawns: Vec<(usize, ThreadId, Span)> = Vec::new();
        let timed = self.main_ts.len() == self.main.len();
        for thread in &self.threads {
            let Some(id) = thread.id else { continue };
            let at = match (timed, thread.first_ts) {
                (true, Some(ts)) => self.main_ts.partition_point(|&main_ts| main_ts <= ts),
                _ => thread.spawn_at,
            };
            spawns.push((at, id, threads[id.index()].span.clone()));
        }
        spawns.sort_by_key(|(at, id, _)| (*at, *id));
        let mut spawns = spawns.into_iter().peekable();
        body.reserve(self.main.len() + spawns.len());
        for (index, stmt) in self.main.into_iter().enumerate() {
            while let Some((_, id, span)) = spawns.next_if(|(at, ..)| *at == index) {
                body.push(spawn(id, span));
            }
            body.push(stmt);
        }
        body.extend(spawns.map(|(_, id, span)| spawn(id, span)));
        body
    }
}

fn spawn(thread: ThreadId, span: Span) -> Stmt {
    Stmt::Op(Op {
        api: "thread",
        kind: OpKind::Spawn(thread),
        span,
    })
}

/// In a CUDA trace, the streams from before the trace are CUDA streams: their
/// creation (which a converted program writes out) says so. They are taken as blocking.
fn created_before_by_cuda(program: &Program, block: &mut Block) {
    for stmt in block {
        match stmt {
            Stmt::Op(op) => {
                if let OpKind::Create(id) = op.kind
                    && program.object(id).created_by.is_none()
                    && matches!(program.object(id).kind, syncguard_model::model::ObjectKind::Stream(_))
                {
                    op.api = "cudaStreamCreate";
                }
            }
            Stmt::If { then, .. } => created_before_by_cuda(program, then),
            _ => {}
        }
    }
}

/// A query that saw the work done ([`api::QueryCompletion`]; a failed line, such as
/// `cudaErrorNotReady`, is no call) orders what the host does next after that work (a
/// busy-wait loop on a query is correct code): it is the synchronize it stands for.
fn observed_completion(api: &Api, resolved: &calls::CallArgs, args: &Args) -> Option<OpKind> {
    let complete = match api.query? {
        api::QueryCompletion::Succeeds => true,
        api::QueryCompletion::Status { name, value } => match args.get("status") {
            Some(Json::Str(status)) => status == name,
            Some(other) => value.is_some_and(|v| other.as_int() == Some(v)),
            None => false,
        },
    };
    if !complete {
        return None;
    }
    calls::completion_synchronize(api, resolved)
}

/// Whether `ret` says the call succeeded (absent, `null`, 0 or a `*SUCCESS` name).
fn succeeded(ret: Option<&Json>) -> bool {
    match ret {
        None | Some(Json::Null) => true,
        Some(Json::Str(name)) if name.ends_with("SUCCESS") || name.ends_with("Success") => true,
        Some(value) => value.as_int() == Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    /// A list with no room left.
    fn full(len: usize) -> Vec<u8> {
        let list = vec![0; len];
        assert_eq!(list.capacity(), len);
        list
    }

    #[test]
    fn a_full_list_grows_to_its_projected_length_and_an_eighth() {
        // 1,000 entries in the first 2 MiB of a 64 MiB trace: 32,000 by the end.
        let mut list = full(1000);
        grow_by_projection(&mut list, 2 * MIB, Some(64 * MIB as u64));
        assert_eq!(list.capacity(), 36_000);
    }

    #[test]
    fn a_list_with_room_an_early_line_or_an_unknown_length_is_left_to_doubling() {
        let mut roomy = Vec::<u8>::with_capacity(2000);
        roomy.resize(1000, 0);
        grow_by_projection(&mut roomy, 2 * MIB, Some(64 * MIB as u64));
        assert_eq!(roomy.capacity(), 2000);
        let mut early = full(1000);
        grow_by_projection(&mut early, MIB - 1, Some(64 * MIB as u64));
        assert_eq!(early.capacity(), 1000);
        let mut unknown = full(1000);
        grow_by_projection(&mut unknown, 2 * MIB, None);
        assert_eq!(unknown.capacity(), 1000);
    }

    #[test]
    fn a_projection_within_doubling_is_left_to_doubling() {
        // Half the trace read: 2,000 projected, 2,250 with the eighth, past doubling.
        let mut half = full(1000);
        grow_by_projection(&mut half, 32 * MIB, Some(64 * MIB as u64));
        assert_eq!(half.capacity(), 2250);
        // Near the end: 1,200 wanted, which doubling covers.
        let mut late = full(1000);
        grow_by_projection(&mut late, 60 * MIB, Some(64 * MIB as u64));
        assert_eq!(late.capacity(), 1000);
    }

    #[test]
    fn a_projection_past_what_can_be_allocated_leaves_the_list_as_it_was() {
        // 2 MiB of entries in the first 2 MiB of a trace said to be 16 EiB long: room for
        // more bytes than an address space holds, refused without a panic.
        let mut list = full(2 * MIB);
        grow_by_projection(&mut list, 2 * MIB, Some(u64::MAX));
        assert_eq!(list.capacity(), 2 * MIB);
        let mut words = vec![0u64; 2 * MIB];
        grow_by_projection(&mut words, 2 * MIB, Some(u64::MAX));
        assert_eq!(words.capacity(), 2 * MIB);
    }

    #[test]
    fn no_projection_passes_a_call_per_sixteen_bytes() {
        // Every line so far in this list, at a million entries per MiB: more calls than
        // the trace can hold.
        let mut list = full(2 * MIB);
        grow_by_projection(&mut list, 2 * MIB, Some(256 * MIB as u64));
        assert_eq!(list.capacity(), 16 * MIB);
    }
}
