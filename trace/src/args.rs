//! A trace line's `args` to model values: arguments by the C prototype's parameter
//! names, handles to objects per rank, pointers to places in buffers.

use std::borrow::Cow;

use super::json::{Args, Json};
use super::lower::{Target, TraceLowerer};
use smallvec::SmallVec;
use syncguard_model::api::{Api, ArgKind, Creates, Effect, EnumFamily, FLAG_CONSTANTS, Param};
use syncguard_model::calls::{self, Address, ArgValue, CallArgs, ChannelDesc, Copy3D, Pitched};
use syncguard_model::diagnostic::with_article;
use syncguard_model::model::{BufferInfo, Expr, MemRange, MemorySpace, ObjId, Object, ObjectKind, OpKind, Timeout};
use syncguard_model::source::Span;

/// Stream handles that mean the stream `0`.
const DEFAULT_STREAM_NAMES: [&str; 5] = ["0", "0x0", "NULL", "null", "nullptr"];
/// Names with a meaning of their own in `.sync` besides the keywords: handles never
/// become them.
const RESERVED: [&str; 2] = ["rank", "context"];
/// The handle of the one space all raw pointers outside the trace's allocations are in.
pub(super) const UNKNOWN_MEMORY: &str = "memory_before_trace";

/// Why an argument has no value: SG002, with this message.
struct Problem(String);

impl TraceLowerer {
    /// Every argument of `api` from `args`; `None` (after reporting) if any is missing
    /// or unusable.
    pub(super) fn resolve_args(&mut self, rank: usize, api: &Api, args: &Args, span: &Span) -> Option<CallArgs> {
        // A host access's one argument is the whole `args` object.
        let whole = matches!(api.effect, Effect::HostAccess { .. }).then(|| args.to_json());
        // Each parameter's value, looked up once: the lookups compare names.
        let given: SmallVec<[Option<&Json>; 16]> = api
            .params
            .iter()
            .map(|param| match &whole {
                Some(whole) => Some(whole),
                None => argument(param, args),
            })
            .collect();
        let missing: Vec<&str> = api
            .params
            .iter()
            .zip(&given)
            .filter(|(p, value)| !p.optional && p.kind != ArgKind::GenTaskContext && value.is_none())
            .map(|(p, _)| p.name)
            .collect();
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|name| format!("`{name}`")).collect();
            let message = format!(
                "`{}` needs argument{} {} ({})",
                api.name,
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                api.signature()
            );
            self.format_error(span, message, "the call is skipped");
            return None;
        }
        let mut values = std::mem::take(&mut self.spare_args);
        values.reserve(api.params.len());
        let mut ok = true;
        for (param, value) in api.params.iter().zip(given) {
            let Some(value) = value else {
                values.push(None);
                continue;
            };
            match self.arg_value(rank, param, value, span) {
                Ok(value) => values.push(Some(value)),
                Err(Problem(problem)) => {
                    let message = format!("argument `{}` of `{}`: {problem}", param.name, api.name);
                    self.format_error(span, message, "the call is skipped");
                    ok = false;
                }
            }
        }
        ok.then_some(CallArgs { values })
    }

    fn arg_value(&mut self, rank: usize, param: &Param, value: &Json, span: &Span) -> Result<ArgValue, Problem> {
        Ok(match param.kind {
            ArgKind::Stream
            | ArgKind::Context
            | ArgKind::Graph
            | ArgKind::GraphExec
            | ArgKind::Event
            | ArgKind::Notify
            | ArgKind::Comm
            | ArgKind::Channel
            | ArgKind::Thread => ArgValue::Object(self.object(rank, param.kind, value, span)?),
            ArgKind::Ptr => ArgValue::Address(self.address(rank, value, span)?),
            ArgKind::Ranges => ArgValue::Ranges(self.ranges(rank, value, span)?),
            ArgKind::Int => ArgValue::Int(Expr::Int(int(value)?)),
            ArgKind::Timeout(unit) => {
                let seconds = match value {
                    Json::Float(v) if v.is_finite() => v.round() as i64,
                    other => int(other)?,
                };
                ArgValue::Timeout(Timeout {
                    value: Expr::Int(seconds),
                    unit,
                    span: span.clone(),
                })
            }
            ArgKind::Flags => ArgValue::Flags(flags(value)?),
            ArgKind::Enum(family) => ArgValue::Enum(constant(value, family)?),
            ArgKind::Str => match value {
                Json::Str(text) => ArgValue::Str(text.to_string(), span.clone()),
                other => return Err(expected("a string", other)),
            },
            ArgKind::Strs => ArgValue::Strs(strings(value)?),
            ArgKind::Threads => {
                let handles = match value {
                    Json::Array(items) => items.iter().collect(),
                    single => vec![single],
                };
                let threads = handles
                    .into_iter()
                    .map(|handle| self.object(rank, ArgKind::Thread, handle, span))
                    .collect::<Result<_, _>>()?;
                ArgValue::Objects(threads)
            }
            ArgKind::ChannelDescs => ArgValue::ChannelDescs(channel_descs(value)?),
            ArgKind::PitchedPtr => ArgValue::Pitched(self.pitched(rank, value, span)?),
            ArgKind::Extent => ArgValue::Extent(triple(value, ["width", "height", "depth"], false)?),
            ArgKind::Memcpy3DParms => ArgValue::Copy3D(Box::new(self.copy3d(rank, value, span)?)),
            ArgKind::GenTaskContext | ArgKind::Opaque => ArgValue::Opaque,
            ArgKind::Function => match value {
                Json::Str(text) => ArgValue::Str(text.to_string(), span.clone()),
                _ => ArgValue::Str("kernel".to_string(), span.clone()),
            },
            ArgKind::CoreMem => return Err(Problem("core-local memory has no place in a host trace".into())),
        })
    }

    /// The object a handle names on this rank. A handle no line has created names an
    /// object that existed before the trace began (a CUDA stream from before is taken
    /// as blocking, which orders it against the legacy default stream: no false alarm;
    /// no ACL stream is ordered so).
    fn object(&mut self, rank: usize, kind: ArgKind, value: &Json, span: &Span) -> Result<ObjId, Problem> {
        let key = handle_key(value).ok_or_else(|| expected("a handle (string or integer)", value))?;
        if kind == ArgKind::Stream {
            if DEFAULT_STREAM_NAMES.contains(&key.as_ref()) {
                return Ok(self.program.default_stream());
            }
            // A tracer prints CUDA's handle values: `cudaStreamLegacy` is
            // `(cudaStream_t)0x1`, `cudaStreamPerThread` is `(cudaStream_t)0x2`.
            let name = match key.as_ref() {
                "0x1" => "cudaStreamLegacy",
                "0x2" => "cudaStreamPerThread",
                other => other,
            };
            if let Some(stream) = syncguard_model::model::Program::cuda_stream(name) {
                return Ok(stream);
            }
        }
        let noun = kind.noun();
        if let Some(&id) = self.ranks[rank].handles.get(key.as_ref()) {
            let object = self.program.object(id);
            if kind.names(&object.kind) {
                if !self.before_trace.is_empty() {
                    self.used_before(id, span);
                }
                return Ok(id);
            }
            return Err(Problem(format!(
                "expected {}, but `{key}` is {} ({})",
                with_article(noun),
                with_article(object.kind.noun()),
                created_where(object)
            )));
        }
        if kind == ArgKind::Stream {
            let stream = ObjectKind::Stream(syncguard_model::model::StreamSync::Blocking);
            return Ok(self.implicit(rank, &key, stream, "aclrtCreateStream", None, span));
        }
        if kind == ArgKind::Context {
            // Most likely the context current when the rank started (from
            // `aclrtSetDevice`), taken with `aclrtGetCurrentContext` before the capture.
            let context = ObjectKind::Context { current: true };
            return Ok(self.implicit(rank, &key, context, "aclrtGetCurrentContext", None, span));
        }
        self.existing(rank, &key, kind, span)
            .ok_or_else(|| Problem(format!("`{key}` is no handle of {}", with_article(noun))))
    }

    /// A pointer: a buffer handle, an address inside a known buffer, or
    /// `{"buf": handle-or-address, "off": n, "len": m}`.
    fn address(&mut self, rank: usize, value: &Json, span: &Span) -> Result<Address, Problem> {
        let (base, offset, len) = match value {
            Json::Object(_) => {
                let base = value
                    .get("buf")
                    .ok_or_else(|| Problem("a memory range needs `buf`".into()))?;
                let offset = value.get("off").map(int).transpose()?.unwrap_or(0);
                let len = value.get("len").map(int).transpose()?;
                (base, offset, len)
            }
            other => (other, 0, None),
        };
        let (buffer, base_offset) = self.buffer(rank, base, span)?;
        Ok(Address {
            buffer,
            offset: Expr::Int(base_offset.saturating_add(offset)),
            len: len.map(Expr::Int),
            span: span.clone(),
        })
    }

    /// `{"ptr": pointer, "pitch": n, "xsize": n, "ysize": n}`.
    fn pitched(&mut self, rank: usize, value: &Json, span: &Span) -> Result<Pitched, Problem> {
        let field = |name: &str| {
            value
                .get(name)
                .ok_or_else(|| Problem(format!("a cudaPitchedPtr needs `{name}`")))
        };
        Ok(Pitched {
            address: self.address(rank, field("ptr")?, span)?,
            pitch: Expr::Int(int(field("pitch")?)?),
            ysize: Expr::Int(int(field("ysize")?)?),
        })
    }

    /// A `cudaMemcpy3DParms` as a tracer prints it: `srcPtr`, `dstPtr` (pitched
    /// pointers), `srcPos`, `dstPos` (`{x, y, z}`, 0 when left out), `extent`, `kind`.
    fn copy3d(&mut self, rank: usize, value: &Json, span: &Span) -> Result<Copy3D, Problem> {
        let field = |name: &str| {
            value
                .get(name)
                .ok_or_else(|| Problem(format!("a cudaMemcpy3DParms needs `{name}`")))
        };
        let position = |name: &str| match value.get(name) {
            Some(pos) => triple(pos, ["x", "y", "z"], true),
            None => Ok([Expr::Int(0), Expr::Int(0), Expr::Int(0)]),
        };
        Ok(Copy3D {
            src: self.pitched(rank, field("srcPtr")?, span)?,
            src_pos: position("srcPos")?,
            dst: self.pitched(rank, field("dstPtr")?, span)?,
            dst_pos: position("dstPos")?,
            extent: triple(field("extent")?, ["width", "height", "depth"], false)?,
            kind: constant(field("kind")?, EnumFamily::MemcpyKind)?,
        })
    }

    /// The buffer a base pointer falls in, and its offset there.
    fn buffer(&mut self, rank: usize, base: &Json, span: &Span) -> Result<(ObjId, i64), Problem> {
        let key = handle_key(base).ok_or_else(|| expected("a buffer handle or address", base))?;
        if let Some(&id) = self.ranks[rank].handles.get(key.as_ref()) {
            let object = self.program.object(id);
            if matches!(object.kind, ObjectKind::Buffer(_)) {
                return Ok((id, 0));
            }
            return Err(Problem(format!(
                "expected a buffer, but `{key}` is {} ({})",
                with_article(object.kind.noun()),
                created_where(object)
            )));
        }
        let Some(address) = super::json::parse_int(&key).and_then(|a| u64::try_from(a).ok()) else {
            return Ok((self.implicit_buffer(rank, &key, span), 0));
        };
        let state = &self.ranks[rank];
        let inside = state.buffers.range(..=address).next_back().filter(|&(&start, &id)| {
            let size = match &self.program.object(id).kind {
                ObjectKind::Buffer(info) => info.size.as_const().unwrap_or(0),
                _ => 0,
            };
            address - start < size.max(1) as u64
        });
        if let Some((&start, &id)) = inside {
            return Ok((id, (address - start) as i64));
        }
        // All memory from outside the trace is one space per rank, at its raw addresses,
        // so overlapping raw pointers still overlap in the model.
        let unknown = self
            .memory_before(rank, None, span)
            .ok_or_else(|| Problem("no model of memory from before".into()))?;
        Ok((unknown, address as i64))
    }

    fn implicit_buffer(&mut self, rank: usize, key: &str, span: &Span) -> ObjId {
        if let Some(&id) = self.ranks[rank].handles.get(key) {
            return id;
        }
        let kind = ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::Device,
            size: Expr::Int(calls::EXISTING_MEMORY_SIZE),
        });
        self.implicit(rank, key, kind, "aclrtMalloc", None, span)
    }

    /// An object that existed before the trace began, created at the start of the rank
    /// by `api`.
    pub(super) fn implicit(
        &mut self,
        rank: usize,
        key: &str,
        kind: ObjectKind,
        api: &'static str,
        created_by: Option<&str>,
        span: &Span,
    ) -> ObjId {
        let id = self.new_object(rank, key, kind, created_by, span);
        self.ranks[rank]
            .implicit
            .push(syncguard_model::model::Stmt::Op(syncguard_model::model::Op {
                api,
                kind: OpKind::Create(id),
                span: span.clone(),
            }));
        id
    }

    pub(super) fn new_object(
        &mut self,
        rank: usize,
        key: &str,
        kind: ObjectKind,
        api: Option<&str>,
        span: &Span,
    ) -> ObjId {
        let id = ObjId(self.program.objects.len() as u32);
        let name = object_name(key, kind.noun());
        let is_buffer = matches!(kind, ObjectKind::Buffer(_));
        self.program.objects.push(Object {
            name,
            written: None,
            kind,
            span: span.clone(),
            created_by: api.map(str::to_string),
            array: None,
            ipc_key: None,
        });
        let state = &mut self.ranks[rank];
        state.handles.insert(key.into(), id);
        if is_buffer && let Some(address) = super::json::parse_int(key).and_then(|a| u64::try_from(a).ok()) {
            state.buffers.insert(address, id);
        }
        id
    }

    fn ranges(&mut self, rank: usize, value: &Json, span: &Span) -> Result<Vec<MemRange>, Problem> {
        let items = match value {
            Json::Array(items) => items.as_slice(),
            single => std::slice::from_ref(single),
        };
        let mut ranges = Vec::with_capacity(items.len());
        for item in items {
            let address = self.address(rank, item, span)?;
            ranges.push(address.range(None, &self.program));
        }
        Ok(ranges)
    }

    /// The objects a creating call makes, named by its output parameter.
    pub(super) fn create(
        &mut self,
        rank: usize,
        api: &'static Api,
        args: &CallArgs,
        json: &Args,
        span: &Span,
    ) -> Vec<ObjId> {
        let Some(keys) = output_handles(api, json).filter(|keys| !keys.is_empty()) else {
            let message = format!(
                "`{}` must carry the created handle in `{}` (its output parameter)",
                api.name, api.output
            );
            self.format_error(span, message, format!("missing or invalid \"{}\"", api.output));
            return Vec::new();
        };
        if let Some(problem) = count_problem(api, args, keys.len()) {
            self.format_error(span, problem, "the call is skipped");
            return Vec::new();
        }
        let Some(mut kinds) = calls::created_objects(api, args, keys.len(), &self.program) else {
            return Vec::new();
        };
        // The size HCCL reports is the HCCL_BUFFSIZE the run used: the smallest seen is
        // what every rank can rely on.
        let reported_size = match json.get("size") {
            Some(size) if matches!(api.creates, Creates::HcclLocalBuffer | Creates::HcclPeerBuffer) => {
                let positive = size.as_int().filter(|&s| s > 0);
                if positive.is_none() {
                    let message = format!("`size` of `{}` must be a positive byte count", api.name);
                    self.format_error(span, message, "the size is ignored");
                }
                positive
            }
            _ => None,
        };
        if let Some(size) = reported_size.map(|s| s as u64)
            && let Some(ObjectKind::Buffer(info)) = kinds.first_mut()
        {
            info.size = Expr::Int(size as i64);
            let settings = &mut self.program.settings;
            settings.hccl_buffer_size = match self.hccl_size_seen {
                true => settings.hccl_buffer_size.min(size),
                false => size,
            };
            self.hccl_size_seen = true;
        }
        let mut created = Vec::with_capacity(keys.len());
        for (key, kind) in keys.iter().zip(kinds) {
            let previous = self.ranks[rank].handles.get(key.as_ref()).copied();
            let id = self.new_object(rank, key, kind, Some(api.name), span);
            self.program.objects[id.index()].ipc_key = calls::ipc_key(api, args);
            // Creations go on the main thread, in file order: host threads are walked one
            // after another, and a handle one thread creates may be used by any other
            // thread after it.
            self.push(Target::Main(rank), api, OpKind::Create(id), span);
            if let Some(previous) = previous {
                self.report_used_before(key, previous, id, api);
            }
            created.push(id);
        }
        created
    }
}

fn argument<'j, 'a>(param: &Param, args: &'j Args<'a>) -> Option<&'j Json<'a>> {
    args.get(param.name)
        // `null` is a value for a stream (the default one) and for opaque data (`cfg`).
        .filter(|value| !matches!(value, Json::Null) || matches!(param.kind, ArgKind::Stream | ArgKind::Opaque))
}

/// `threads` and `channels` must list as many handles as the call creates.
fn count_problem(api: &Api, args: &CallArgs, handles: usize) -> Option<String> {
    let Some(expected) = calls::created_count(api, args) else {
        return Some(match api.creates {
            Creates::HcclThreads => "`threadNum` must be a count (an integer, 0 or more)".into(),
            _ => format!("`{}` cannot say how many handles it creates", api.name),
        });
    };
    match api.creates {
        Creates::HcclThreads | Creates::Channels if expected != handles => Some(format!(
            "`{}` lists {handles} handle(s) but the call creates {expected}",
            api.output
        )),
        Creates::Channels if args.int(3).and_then(|n| n.as_const()) != Some(expected as i64) => Some(format!(
            "`channelNum` must equal the number of channel descriptors ({expected})"
        )),
        Creates::HcclThreads | Creates::Channels => None,
        _ if handles != 1 => Some(format!("`{}` is one handle, not a list", api.output)),
        _ => None,
    }
}

/// A handle as text: strings as written, integers in decimal.
/// The handles a call returns in its output parameter: one, or a list.
pub(super) fn output_handles<'j>(api: &Api, json: &'j Args) -> Option<Vec<Cow<'j, str>>> {
    match json.get(api.output)? {
        Json::Array(items) => items.iter().map(handle_key).collect(),
        value => handle_key(value).map(|key| vec![key]),
    }
}

fn handle_key<'j>(value: &'j Json) -> Option<Cow<'j, str>> {
    match value {
        Json::Str(text) => Some(Cow::Borrowed(super::json::trimmed(text))),
        Json::Int(id) => Some(Cow::Owned(id.to_string())),
        Json::Null => Some(Cow::Borrowed("NULL")),
        _ => None,
    }
}

/// Whether `text` is a `.sync` (and C) identifier.
pub(super) fn is_identifier(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A `.sync`-compatible name for a handle: the handle itself when it is a plain
/// identifier, else `event_0x7f3a` and the like.
pub(super) fn object_name(handle: &str, noun: &str) -> String {
    let is_ident = is_identifier(handle);
    let reserved = RESERVED.contains(&handle) || syncguard_grammar::lexer::Keyword::is_keyword(handle);
    if is_ident && !reserved && !handle.starts_with("ACL_") && !handle.starts_with("COMM_") {
        return handle.to_string();
    }
    let prefix = match noun {
        "HCCL thread" => "thread",
        "communicator" => "comm",
        "executable graph" => "graph_exec",
        other => other,
    };
    let cleaned: String = handle
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{prefix}_{cleaned}")
}

fn created_where(object: &Object) -> String {
    match &object.created_by {
        Some(api) if !object.existed_before() => format!("created by `{api}`"),
        _ => "in use before the trace began".into(),
    }
}

fn expected(what: &str, found: &Json) -> Problem {
    Problem(format!("expected {what}, found {}", found.describe()))
}

/// Three integer fields of an object (`cudaExtent`, `cudaPos`); with `optional`, a field
/// left out is 0.
fn triple(value: &Json, names: [&str; 3], optional: bool) -> Result<[Expr; 3], Problem> {
    let mut values = [Expr::Int(0), Expr::Int(0), Expr::Int(0)];
    for (slot, name) in values.iter_mut().zip(names) {
        match value.get(name) {
            Some(field) => *slot = Expr::Int(int(field)?),
            None if optional => {}
            None => return Err(Problem(format!("expected `{name}` in {}", value.describe()))),
        }
    }
    Ok(values)
}

fn int(value: &Json) -> Result<i64, Problem> {
    value.as_int().ok_or_else(|| expected("an integer", value))
}

/// `"ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE"` or an integer.
fn flags(value: &Json) -> Result<u32, Problem> {
    if let Some(bits) = value.as_int() {
        return u32::try_from(bits).map_err(|_| Problem("flags do not fit in 32 bits".into()));
    }
    let Json::Str(text) = value else {
        return Err(expected("flag names or an integer", value));
    };
    let mut bits = 0;
    for name in text.split('|').map(str::trim) {
        match FLAG_CONSTANTS.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => bits |= value,
            None => {
                let close = syncguard_model::suggest::closest(name, FLAG_CONSTANTS.iter().map(|(n, _)| *n));
                let hint = close.map_or(String::new(), |c| format!("; did you mean `{c}`?"));
                return Err(Problem(format!("unknown flag `{name}`{hint}")));
            }
        }
    }
    Ok(bits)
}

/// A constant by name (`"ACL_MEMCPY_DEVICE_TO_DEVICE"`), or a memcpy kind by value.
fn constant(value: &Json, family: EnumFamily) -> Result<&'static str, Problem> {
    let constants = family.constants();
    match value {
        Json::Str(text) => {
            let name = text.rsplit("::").next().unwrap_or(text);
            constants.iter().find(|c| **c == name).copied().ok_or_else(|| {
                let close = syncguard_model::suggest::closest(name, constants.iter().copied());
                let hint = close.map_or(String::new(), |c| format!("; did you mean `{c}`?"));
                Problem(format!("unknown constant `{name}`{hint}"))
            })
        }
        // ACL and CUDA number their memcpy kinds alike: host-to-host 0 ... default 4; a
        // `CommEngine` is CPU 0 ... CCU 5; a `cudaStreamCaptureMode` global 0 ... relaxed
        // 2. A tracer prints the number.
        other
            if matches!(
                family,
                EnumFamily::MemcpyKind | EnumFamily::Engine | EnumFamily::CaptureMode
            ) =>
        {
            other
                .as_int()
                .and_then(|v| usize::try_from(v).ok())
                .and_then(|v| constants.get(v).copied())
                .ok_or_else(|| {
                    let what = match family {
                        EnumFamily::Engine => "an engine (name or 0..=5)",
                        EnumFamily::CaptureMode => "a capture mode (name or 0..=2)",
                        _ => "a memcpy kind (name or 0..=4)",
                    };
                    expected(what, other)
                })
        }
        other => Err(expected(&format!("a constant such as `{}`", constants[0]), other)),
    }
}

fn strings(value: &Json) -> Result<Vec<String>, Problem> {
    match value {
        Json::Str(text) => Ok(vec![text.to_string()]),
        Json::Array(items) => items
            .iter()
            .map(|item| match item {
                Json::Str(text) => Ok(text.to_string()),
                other => Err(expected("a string", other)),
            })
            .collect(),
        other => Err(expected("an array of strings", other)),
    }
}

/// `[{"remoteRank": 1, "channelProtocol": "COMM_PROTOCOL_HCCS", "notifyNum": 3}, ...]`
fn channel_descs(value: &Json) -> Result<Vec<ChannelDesc>, Problem> {
    let items = match value {
        Json::Array(items) => items.as_slice(),
        single => std::slice::from_ref(single),
    };
    items
        .iter()
        .map(|item| {
            if !matches!(item, Json::Object(_)) {
                return Err(expected("an HcclChannelDesc object", item));
            }
            let remote = item
                .get("remoteRank")
                .ok_or_else(|| Problem("an HcclChannelDesc needs `remoteRank`".into()))?;
            let protocol = match item.get("channelProtocol") {
                None => "COMM_PROTOCOL_HCCS".to_string(),
                Some(Json::Str(name)) if is_identifier(name) => name.to_string(),
                Some(other) => return Err(expected("a protocol name such as \"COMM_PROTOCOL_HCCS\"", other)),
            };
            Ok(ChannelDesc {
                remote_rank: Expr::Int(int(remote)?),
                protocol,
                notify_num: Expr::Int(item.get("notifyNum").map(int).transpose()?.unwrap_or(0)),
            })
        })
        .collect()
}
