//! Handles a trace uses but never creates: objects that existed before the trace began
//! (a capture started after the communicator, its threads and channels, and the
//! operator's events existed). Each becomes an `existing_*` object created at the start
//! of its rank, whose unknown state the analysis treats without false alarms; the trace
//! gets one note listing them.

use super::lower::{Target, TraceLowerer};
use syncguard_model::api::{self, Api, ArgKind, Effect, Existing};
use syncguard_model::calls::{self, ArgValue, CallArgs};
use syncguard_model::diagnostic::{Diagnostic, Severity, UsedBeforeCreation};
use syncguard_model::model::{Expr, MemorySpace, ObjId, ObjectKind, OpKind, RankCount};
use syncguard_model::reading_rules::UnknownName;
use syncguard_model::source::Span;

/// Uses kept per handle, for the report if a later line creates it after all.
const MAX_USES_KEPT: usize = 16;
/// Objects from before named one by one in the trace's note.
const MAX_LISTED: usize = 8;
/// The handle of a rank's communicator from before, which its threads and channels
/// from before belong to.
const COMM_BEFORE_TRACE: &str = "comm_before_trace";

/// A handle first used with no line having created it.
pub(super) struct BeforeTrace {
    rank: usize,
    handle: Box<str>,
    noun: &'static str,
    uses: Vec<Span>,
    /// A line destroyed it: a later creation of the same handle is a new object.
    destroyed: bool,
}

impl TraceLowerer {
    /// The object from before the trace that an unknown handle names.
    pub(super) fn existing(&mut self, rank: usize, key: &str, kind: ArgKind, span: &Span) -> Option<ObjId> {
        let existing = match kind {
            ArgKind::Event => Existing::Event,
            ArgKind::Notify => Existing::Notify,
            ArgKind::Comm => Existing::Comm,
            ArgKind::Thread | ArgKind::Threads => Existing::Thread,
            ArgKind::Channel => Existing::Channel,
            _ => return None,
        };
        let api = api::lookup(existing.api())?;
        let mut values = Vec::new();
        if matches!(existing, Existing::Thread | Existing::Channel) {
            values.push(Some(ArgValue::Object(self.comm_before_trace(rank, span))));
        }
        let args = CallArgs { values };
        let object = calls::created_objects(api, &args, 1, &self.program)?.pop()?;
        let id = self.implicit(rank, key, object, api.name, Some(api.name), span);
        self.before_trace.insert(
            id,
            BeforeTrace {
                rank,
                handle: key.into(),
                noun: kind.noun(),
                uses: vec![span.clone()],
                destroyed: false,
            },
        );
        Some(id)
    }

    fn comm_before_trace(&mut self, rank: usize, span: &Span) -> ObjId {
        if let Some(&id) = self.ranks[rank].handles.get(COMM_BEFORE_TRACE) {
            return id;
        }
        let api = Existing::Comm.api();
        self.implicit(rank, COMM_BEFORE_TRACE, ObjectKind::Comm, api, Some(api), span)
    }

    /// The rank's memory from before the trace (`existing_memory()`), or with a channel,
    /// the peer's (`existing_peer_memory(channel)`): where raw pointers outside the
    /// trace's allocations point.
    pub(super) fn memory_before(&mut self, rank: usize, channel: Option<ObjId>, span: &Span) -> Option<ObjId> {
        let key = match channel {
            None => super::args::UNKNOWN_MEMORY.to_string(),
            Some(channel) => format!("peer_memory_of_{}", self.program.object(channel).name),
        };
        if let Some(&id) = self.ranks[rank].handles.get(key.as_str()) {
            return Some(id);
        }
        let (existing, values) = match channel {
            None => (Existing::Memory, Vec::new()),
            Some(channel) => (Existing::PeerMemory, vec![Some(ArgValue::Object(channel))]),
        };
        let api = api::lookup(existing.api())?;
        let kind = calls::created_objects(api, &CallArgs { values }, 1, &self.program)?.pop()?;
        if channel.is_none() {
            return Some(self.implicit(rank, &key, kind, api.name, Some(api.name), span));
        }
        // The peer's memory is reached through a channel the trace may create: it is
        // taken where first used, after the channel.
        let id = self.new_object(rank, &key, kind, Some(api.name), span);
        self.push(Target::Main(rank), api, OpKind::Create(id), span);
        Some(id)
    }

    /// A transfer's remote pointer outside the trace's allocations is into the peer's
    /// memory from before, not this rank's.
    pub(super) fn reach_peer_memory(&mut self, rank: usize, api: &Api, args: &mut CallArgs, span: &Span) {
        let remote = match api.effect {
            Effect::RemoteWrite { .. } => "dst",
            Effect::RemoteRead { .. } => "src",
            _ => return,
        };
        let own = self.ranks[rank].handles.get(super::args::UNKNOWN_MEMORY).copied();
        let (Some(index), Some(channel)) = (api.params.iter().position(|p| p.name == remote), args.object(1)) else {
            return;
        };
        if let Some(Some(calls::ArgValue::Address(address))) = args.values.get(index)
            && Some(address.buffer) == own
            && let Some(peer) = self.memory_before(rank, Some(channel), span)
            && let Some(Some(calls::ArgValue::Address(address))) = args.values.get_mut(index)
        {
            address.buffer = peer;
        }
    }

    /// Another use of `id`, if it is an object from before.
    pub(super) fn used_before(&mut self, id: ObjId, span: &Span) {
        if let Some(before) = self.before_trace.get_mut(&id)
            && before.uses.len() < MAX_USES_KEPT
        {
            before.uses.push(span.clone());
        }
    }

    /// A line destroyed `id`: if it is from before, its handle may be created again.
    pub(super) fn destroyed_before(&mut self, id: ObjId) {
        if let Some(before) = self.before_trace.get_mut(&id) {
            before.destroyed = true;
        }
    }

    /// A line creates `key`, which named `previous` until now. If that is an object from
    /// before that no line destroyed, the earlier lines used the handle before its
    /// creation: they are reported (SG101 for events), and the handle is not listed as
    /// from before.
    pub(super) fn report_used_before(&mut self, key: &str, previous: ObjId, created: ObjId, api: &api::Api) {
        if self.before_trace.get(&previous).is_none_or(|b| b.destroyed) {
            return;
        }
        let Some(before) = self.before_trace.remove(&previous) else {
            return;
        };
        let object = self.program.object(created);
        let (name, create_span) = (object.name.clone(), object.span.clone());
        for span in before.uses {
            if before.noun == "event" {
                self.used_before_creation.push(UsedBeforeCreation {
                    use_span: span,
                    name: name.clone(),
                    create_span: create_span.clone(),
                    api: api.name.to_string(),
                    help: Some(format!(
                        "the `{}` call must come before the first use of `{key}`",
                        api.name
                    )),
                });
                continue;
            }
            let diagnostic = Diagnostic::new(
                &UnknownName::INFO,
                span,
                format!("{} `{key}` is used before the line that creates it", before.noun),
            )
            .with_label("the handle names no object yet: the call acts on an unknown one")
            .with_related(create_span.clone(), format!("`{key}` is created only here, later"));
            self.report(diagnostic);
        }
    }

    /// The one note on the objects from before, once the rank count is known; channels
    /// from before get their peer where the trace has two ranks.
    pub(super) fn finish_before_trace(&mut self) -> Option<Diagnostic> {
        let two_ranks = self.program.settings.ranks == RankCount::Fixed(2);
        let mut peer_unknown = false;
        for (id, before) in &self.before_trace {
            if let ObjectKind::Channel(info) = &mut self.program.objects[id.index()].kind {
                if two_ranks {
                    info.remote_rank = Some(Expr::Int(1 - before.rank as i64));
                } else {
                    peer_unknown = true;
                }
            }
        }
        let mut listed: Vec<(&ObjId, &BeforeTrace)> = self.before_trace.iter().collect();
        listed.sort_by_key(|(id, b)| (b.uses[0].range.start, **id));
        let (_, first) = listed.first()?;
        let primary = first.uses[0].clone();
        let count = listed.len();
        let message = match count {
            1 => format!(
                "{} `{}` is used but never created: taken as one that existed before the trace began",
                first.noun, first.handle
            ),
            n => {
                format!("{n} handles are used but never created: taken as objects that existed before the trace began")
            }
        };
        let several_ranks = self.ranks.len() > 1;
        let label = |before: &BeforeTrace| match several_ranks {
            true => format!(
                "{} `{}` of rank {}: first used here",
                before.noun, before.handle, before.rank
            ),
            false => format!("{} `{}`: first used here", before.noun, before.handle),
        };
        let mut diagnostic = Diagnostic::new(&UnknownName::INFO, primary, message)
            .with_severity(Severity::Info)
            .with_label(label(first));
        for (_, before) in listed.iter().skip(1).take(MAX_LISTED) {
            diagnostic = diagnostic.with_related(before.uses[0].clone(), label(before));
        }
        if count > MAX_LISTED + 1 {
            diagnostic = diagnostic.with_note(format!("and {} more", count - MAX_LISTED - 1));
        }
        let has = |noun: &str| listed.iter().any(|(_, b)| b.noun == noun);
        if has("event") {
            diagnostic = diagnostic.with_note(
                "an event from before has unknown creation flags: a wait issued before the trace records it passes (as on a record from before the trace), and its resets, the event limit and leaks are not checked",
            );
        }
        if has("notify") || has("HCCL thread") || has("channel") {
            diagnostic = diagnostic.with_note(
                "a notify of an object from before may already be set: where a flag has one wait more than the trace records, the first wait is taken as consuming a record from before",
            );
        }
        if has("HCCL thread") || has("channel") {
            diagnostic = diagnostic.with_note(
                "HCCL threads and channels from before belong to a communicator from before and may use any notify index (up to 65535)",
            );
        }
        let peer_memory = self.program.objects.iter().any(|object| {
            matches!(&object.kind, ObjectKind::Buffer(info) if matches!(info.space, MemorySpace::BeforePeer(_)))
        });
        if peer_memory {
            diagnostic = diagnostic.with_note(
                "a transfer's remote pointer that no `HcclChannelGetHcclBuffer` line returned is into peer memory the trace cannot relate to the peer's own accesses (the peer sees it at other addresses): such transfers are checked only against each other, so capture the buffer calls to check them against the peer",
            );
        }
        if peer_unknown {
            diagnostic = diagnostic.with_note(
                "the peer of a channel from before is known only in a two-rank trace: here its notifies order nothing, and the peer memory behind it is checked only against itself",
            );
        }
        Some(diagnostic.with_help(
            "this is expected for a capture started around an operator; capture from process start to check how these objects were created",
        ))
    }
}
