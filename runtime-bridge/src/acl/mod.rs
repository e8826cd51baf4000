//! The ACL/HCCL backend: runs a verified program on Ascend NPUs through CANN.
//!
//! `libascendcl.so` and `libhccl.so` (plus `libhcomm.so` where CANN ships the channel
//! APIs separately) are opened at run time, so syncguard builds and runs everywhere else
//! without them; [`load`] explains what it tried when they are missing.
//!
//! Every backend call is the API call it models: streams, events, notifies, memory and
//! copies are `aclrt*` calls, channels, HCCL threads and transfers are `Hccl*` /
//! `Hcomm*OnThread` calls. Rank `r` is device `r` of this process: each host thread binds
//! its rank's device (`aclrtSetDevice`) before its first call, and all ranks' communicators
//! come from one `HcclCommInitAll` (single process, many devices). Two things have no host
//! API and are refused: GE group task lists and SuperKernel launches.

mod hccl;
pub mod loader;
mod runtime;

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use syncguard_analyzer::exec::{Access, InstId, NodeId};
use syncguard_analyzer::model::{EventCreator, EventSemantics};

use crate::backend::{
    Backend, BufferSpace, CopyVia, Fault, GroupTasks, Host, HostCall, ObjectSpec, Timeout, Work, fill_byte, lock,
    never_created,
};
use hccl::{ChannelHandle, Comm, Hccl, ThreadHandle};
use loader::Candidate;
pub use loader::LoadError;
use runtime::{ACL_EVENT_SYNC, Allocation, Event, EventCreation, Notify, Runtime, Span, Stream};

/// The loaded CANN libraries; [`AclBackend::new`] initialises the runtime.
pub struct Acl {
    runtime: Runtime,
    hccl: Hccl,
}

/// Loads CANN from `$ASCEND_HOME_PATH` (`lib64`, `runtime/lib64`), `$ASCEND_TOOLKIT_HOME`
/// (`lib64`), or the dynamic loader's search path, in that order.
pub fn load() -> Result<Acl, LoadError> {
    load_with(&|name| std::env::var_os(name))
}

/// [`load`] with the environment given (a variable's value by name), so that a caller,
/// such as a test pointing `ASCEND_HOME_PATH` at stand-in libraries, need not change the
/// process's environment.
pub fn load_with(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Acl, LoadError> {
    let open = |library, what| loader::open_first(library, what, candidates(env, library), runtime::HINT);
    let acl = open("libascendcl.so", "the Ascend CANN runtime, ACL")?;
    let hccl = open("libhccl.so", "the Ascend collective communication library, HCCL")?;
    // Recent CANN releases ship the channel and thread APIs in libhcomm.so; older ones
    // export them from libhccl.so. Symbols are looked up in that order.
    let hcomm = open("libhcomm.so", "the HCCL communication primitives, HCOMM").ok();
    Ok(Acl {
        runtime: Runtime::load(acl)?,
        hccl: Hccl::load(hcomm.into_iter().chain([hccl]).collect())?,
    })
}

/// Where `library` may be: the CANN directories named by the environment, then the bare
/// soname.
fn candidates(env: &dyn Fn(&str) -> Option<OsString>, library: &str) -> Vec<Candidate> {
    const DIRECTORIES: [(&str, &str); 3] = [
        ("ASCEND_HOME_PATH", "lib64"),
        ("ASCEND_HOME_PATH", "runtime/lib64"),
        ("ASCEND_TOOLKIT_HOME", "lib64"),
    ];
    let mut candidates: Vec<Candidate> = DIRECTORIES
        .iter()
        .filter_map(|&(variable, directory)| {
            let root = env(variable).filter(|root| !root.is_empty())?;
            Some(Candidate {
                path: Path::new(&root).join(directory).join(library).into_os_string(),
                origin: format!("from ${variable}/{directory}"),
            })
        })
        .collect();
    candidates.push(Candidate::soname(library));
    candidates
}

/// The engine of the HCCL threads this backend acquires. Every Hcomm call is issued by
/// a host thread, and `COMM_ENGINE_CPU_TS` is the engine whose threads the host drives
/// (the one `HcclThreadAcquireWithStream` and `HcclThreadAcquire` both accept).
const HOST_THREAD_ENGINE: &str = "COMM_ENGINE_CPU_TS";

thread_local! {
    /// The device this OS thread last bound with `aclrtSetDevice`.
    static BOUND_DEVICE: Cell<Option<i32>> = const { Cell::new(None) };
}

/// Runs programs through ACL and HCCL.
pub struct AclBackend {
    acl: Acl,
    objects: Mutex<Objects>,
    comms: Mutex<Communicators>,
    /// Memory the program released, freed once the devices are idle ([`Backend::finish`]):
    /// queued work may still use it when the host releases it.
    retired: Mutex<Vec<(u32, Allocation)>>,
    /// `aclrtSetDevice` calls per device, each undone by `aclrtResetDevice` at the end.
    device_refs: Mutex<BTreeMap<i32, u32>>,
}

impl AclBackend {
    /// Initialises ACL (`aclInit`; an earlier initialisation in this process is accepted).
    /// `aclFinalize` is left to process exit, so that one process can run several
    /// programs on one initialisation.
    pub fn new(acl: Acl) -> Result<Self, Fault> {
        acl.runtime.init()?;
        Ok(AclBackend {
            acl,
            objects: Mutex::default(),
            comms: Mutex::default(),
            retired: Mutex::default(),
            device_refs: Mutex::default(),
        })
    }

    fn objects(&self) -> MutexGuard<'_, Objects> {
        lock(&self.objects)
    }

    // Handle lookups. Each takes and releases the table lock itself, so a call can name
    // several objects in one expression without holding the lock during the API call.

    fn event(&self, inst: InstId) -> Result<Event, Fault> {
        self.objects().event(inst)
    }

    fn notify(&self, inst: InstId) -> Result<Notify, Fault> {
        self.objects().notify(inst)
    }

    fn channel(&self, inst: InstId) -> Result<ChannelHandle, Fault> {
        self.objects().channel(inst).map(|(handle, _)| handle)
    }

    fn thread(&self, inst: InstId) -> Result<ThreadHandle, Fault> {
        self.objects().thread(inst)
    }

    /// Makes `rank`'s device current on the calling thread, once per thread.
    fn bind(&self, rank: u32) -> Result<(), Fault> {
        let device = device_of(rank);
        if BOUND_DEVICE.get() == Some(device) {
            return Ok(());
        }
        self.set_device(device)
    }

    fn set_device(&self, device: i32) -> Result<(), Fault> {
        self.acl.runtime.set_device(device)?;
        *lock(&self.device_refs).entry(device).or_default() += 1;
        BOUND_DEVICE.set(Some(device));
        Ok(())
    }

    fn create_object(&self, rank: u32, spec: &ObjectSpec) -> Result<Object, Fault> {
        let runtime = &self.acl.runtime;
        Ok(match spec {
            ObjectSpec::Stream => Object::Stream(runtime.create_stream()?),
            ObjectSpec::DefaultStream => Object::Stream(Stream::DEFAULT),
            ObjectSpec::Event {
                semantics,
                creator,
                flags,
            } => Object::Event(runtime.create_event(event_creation(*semantics, *creator, *flags))?),
            ObjectSpec::Notify => Object::Notify(runtime.create_notify()?),
            ObjectSpec::Comm { ranks } => Object::Comm(self.create_comm(rank, *ranks)?),
            ObjectSpec::Channel {
                comm,
                remote_rank,
                notify_num,
                protocol,
                engine,
            } => {
                let comm = self.comm_for(rank, *comm)?;
                let engine = engine_code(engine)?;
                let protocol = hccl::protocol_code(protocol).ok_or_else(|| Fault::Unsupported {
                    what: format!("channel protocol `{protocol}`"),
                })?;
                let handle = {
                    // HcclChannelAcquire must not run concurrently on one communicator.
                    let _serialized = lock(&comm.acquiring);
                    self.acl
                        .hccl
                        .channel_acquire(comm.handle, engine, (*remote_rank, protocol, *notify_num))?
                };
                Object::Channel { handle, comm }
            }
            ObjectSpec::HcclThread {
                comm,
                stream,
                notify_num,
                ..
            } => self.create_thread(rank, *comm, *stream, *notify_num)?,
            ObjectSpec::Buffer { space, size } => self.create_buffer(rank, *space, *size)?,
        })
    }

    /// Rank `rank`'s communicator of the next `HcclCommInitAll` group: the k-th
    /// communicator a rank creates belongs with every other rank's k-th, as collective
    /// creation requires. The first rank to reach a group creates it for all.
    fn create_comm(&self, rank: u32, ranks: u32) -> Result<Arc<CommSlot>, Fault> {
        let mut comms = lock(&self.comms);
        let ordinal = comms.taken.get(&rank).copied().unwrap_or(0);
        while comms.groups.len() <= ordinal {
            let group = self.init_group(rank, ranks)?;
            comms.groups.push(group);
        }
        let group = &comms.groups[ordinal];
        let handle = group.get(rank as usize).copied().ok_or_else(|| Fault::Unsupported {
            what: format!("rank {rank} joining a communicator of {} ranks", group.len()),
        })?;
        let slot = Arc::new(CommSlot {
            handle,
            acquiring: Mutex::new(()),
        });
        *comms.taken.entry(rank).or_default() += 1;
        comms.latest.insert(rank, Arc::clone(&slot));
        Ok(slot)
    }

    /// `HcclCommInitAll` over devices `0..ranks`, each opened by this process first (as
    /// CANN's samples do), then the caller's own device bound again.
    fn init_group(&self, rank: u32, ranks: u32) -> Result<Vec<Comm>, Fault> {
        let devices: Vec<i32> = (0..ranks).map(device_of).collect();
        for &device in &devices {
            self.set_device(device)?;
        }
        self.set_device(device_of(rank))?;
        self.acl.hccl.comm_init_all(&devices)
    }

    /// The communicator a call names, or the rank's latest one for calls that name none.
    fn comm_for(&self, rank: u32, comm: Option<InstId>) -> Result<Arc<CommSlot>, Fault> {
        match comm {
            Some(inst) => self.objects().comm(inst),
            None => lock(&self.comms)
                .latest
                .get(&rank)
                .cloned()
                .ok_or_else(|| Fault::Unsupported {
                    what: format!("an HCCL call on rank {rank} before it created a communicator"),
                }),
        }
    }

    /// An HCCL thread of `comm`, on `stream` when one is given. Whatever engine the
    /// program named, the thread is acquired for the host-driven one: this process's
    /// host threads issue every call.
    fn create_thread(
        &self,
        rank: u32,
        comm: Option<InstId>,
        stream: Option<InstId>,
        notify_num: u32,
    ) -> Result<Object, Fault> {
        let comm = self.comm_for(rank, comm)?;
        let engine = engine_code(HOST_THREAD_ENGINE)?;
        let stream = stream.map(|inst| self.objects().stream(inst)).transpose()?;
        let handle = match stream {
            Some(stream) => self
                .acl
                .hccl
                .thread_acquire_with_stream(comm.handle, engine, stream, notify_num)?,
            None => self.acl.hccl.thread_acquire(comm.handle, engine, notify_num)?,
        };
        Ok(Object::Thread { handle, stream })
    }

    fn create_buffer(&self, rank: u32, space: BufferSpace, size: u64) -> Result<Object, Fault> {
        let (memory, owned) = match space {
            BufferSpace::Device => (self.acl.runtime.malloc(size)?, true),
            BufferSpace::Host => (self.acl.runtime.malloc_host(size)?, true),
            BufferSpace::HcclLocal => (self.acl.hccl.hccl_buffer(self.comm_for(rank, None)?.handle)?, false),
            BufferSpace::HcclPeer { channel } => {
                let (handle, comm) = self.objects().channel(channel)?;
                (self.acl.hccl.channel_hccl_buffer(comm.handle, handle)?, false)
            }
        };
        Ok(Object::Buffer { memory, owned })
    }

    /// Releases one object: the API's destroy call, or nothing for what HCCL owns
    /// (channels, threads, HCCL buffers: "callers must never free them").
    fn release(&self, rank: u32, object: Object) -> Result<(), Fault> {
        let runtime = &self.acl.runtime;
        match object {
            Object::Stream(stream) if stream != Stream::DEFAULT => runtime.destroy_stream(stream),
            Object::Event(event) => runtime.destroy_event(event),
            Object::Notify(notify) => runtime.destroy_notify(notify),
            Object::Comm(slot) => {
                lock(&self.comms).latest.retain(|_, latest| !Arc::ptr_eq(latest, &slot));
                self.acl.hccl.comm_destroy(slot.handle)
            }
            Object::Buffer { memory, owned: true } => {
                lock(&self.retired).push((rank, memory));
                Ok(())
            }
            // The default stream.
            Object::Stream(_)
            | Object::Channel { .. }
            | Object::Thread { .. }
            | Object::Buffer { owned: false, .. } => Ok(()),
        }
    }

    /// The bytes an access names, checked against its buffer.
    fn span(&self, access: &Access) -> Result<Span, Fault> {
        let memory = self.objects().buffer(access.buffer)?;
        memory.span(access.start, access.end).ok_or_else(|| Fault::Unsupported {
            what: format!(
                "an access to bytes {}..{} of a {}-byte buffer (the runtime's buffer is smaller than the program assumes)",
                access.start,
                access.end,
                memory.size()
            ),
        })
    }

    /// A kernel, run as `aclrtMemsetAsync` over each range it writes. ACL has no way to
    /// launch a kernel from its declared footprint (a real launch needs the compiled
    /// binary), so the backend reproduces what the verifier reasons about: the writes,
    /// in stream order. Each range is filled with the low byte of the call's node id, so
    /// a wrong ordering shows in the data.
    fn kernel(&self, queue: Queue, accesses: &[Access], node: NodeId) -> Result<(), Fault> {
        let stream = queue.stream("aclrtMemsetAsync")?;
        for access in accesses.iter().filter(|access| access.write) {
            self.acl
                .runtime
                .memset_async(self.span(access)?, fill_byte(node), stream)?;
        }
        Ok(())
    }

    fn copy(&self, queue: Queue, dst: &Access, src: &Access, via: CopyVia) -> Result<(), Fault> {
        let (dst, src) = (self.span(dst)?, self.span(src)?);
        let hccl = &self.acl.hccl;
        match via {
            CopyVia::Memcpy => self
                .acl
                .runtime
                .memcpy_async(dst, src, queue.stream("aclrtMemcpyAsync")?),
            CopyVia::Local => hccl.local_copy(queue.thread("HcommLocalCopyOnThread")?, dst, src),
            CopyVia::Write { channel, notify } => hccl.write(
                queue.thread("HcommWriteOnThread")?,
                self.channel(channel)?,
                (dst, src),
                notify,
            ),
            CopyVia::Read { channel } => {
                hccl.read(queue.thread("HcommReadOnThread")?, self.channel(channel)?, dst, src)
            }
        }
    }

    /// `HcommThreadSynchronize`; where this HCOMM lacks it, a thread bound to a stream is
    /// synchronized through that stream, as HCCL's own examples do.
    fn synchronize_thread(&self, thread: InstId) -> Result<(), Fault> {
        let Queue::Thread { handle, stream } = self.objects().queue(thread)? else {
            return Err(Fault::Unsupported {
                what: "HcommThreadSynchronize on a plain stream".into(),
            });
        };
        match stream {
            Some(stream) if !self.acl.hccl.has_thread_synchronize() => {
                self.acl.runtime.synchronize_stream(stream, None)
            }
            _ => self.acl.hccl.thread_synchronize(handle),
        }
    }

    /// A host read or write: direct for pinned host memory, `aclrtMemcpy` for device memory.
    fn host_access(&self, access: &Access, node: NodeId) -> Result<(), Fault> {
        let span = self.span(access)?;
        if access.write {
            self.acl.runtime.fill(span, fill_byte(node))
        } else {
            self.acl.runtime.read(span).map(drop)
        }
    }

    /// Waits for every device used, then releases every object and allocation left.
    fn drain(&self) -> Vec<Fault> {
        let mut faults = Vec::new();
        let devices: Vec<i32> = lock(&self.device_refs).keys().copied().collect();
        for &device in &devices {
            let synchronized = self
                .set_device(device)
                .and_then(|()| self.acl.runtime.synchronize_device());
            faults.extend(synchronized.err());
        }
        let mut leftovers: Vec<(InstId, Entry)> = self.objects().entries.drain().collect();
        leftovers.sort_by_key(|(inst, entry)| (entry.object.release_order(), *inst));
        for (_, entry) in leftovers {
            let released = self
                .bind(entry.rank)
                .and_then(|()| self.release(entry.rank, entry.object));
            faults.extend(released.err());
        }
        for (rank, memory) in std::mem::take(&mut *lock(&self.retired)) {
            faults.extend(self.bind(rank).and_then(|()| self.acl.runtime.free(memory)).err());
        }
        faults
    }

    /// Undoes every `aclrtSetDevice` of the run.
    fn reset_devices(&self) -> Vec<Fault> {
        let refs = std::mem::take(&mut *lock(&self.device_refs));
        BOUND_DEVICE.set(None);
        let resets = refs
            .into_iter()
            .flat_map(|(device, count)| (0..count).map(move |_| device));
        resets
            .filter_map(|device| self.acl.runtime.reset_device(device).err())
            .collect()
    }
}

impl Backend for AclBackend {
    fn create(&self, host: Host, inst: InstId, object: &ObjectSpec) -> Result<(), Fault> {
        self.bind(host.rank)?;
        let object = self.create_object(host.rank, object)?;
        self.objects().entries.insert(
            inst,
            Entry {
                rank: host.rank,
                object,
            },
        );
        Ok(())
    }

    fn destroy(&self, host: Host, inst: InstId) -> Result<(), Fault> {
        self.bind(host.rank)?;
        let entry = self
            .objects()
            .entries
            .remove(&inst)
            .ok_or_else(|| never_created("object", inst))?;
        self.release(entry.rank, entry.object)
    }

    fn enqueue(&self, host: Host, queue: InstId, work: &Work, node: NodeId) -> Result<(), Fault> {
        self.bind(host.rank)?;
        let queue = self.objects().queue(queue)?;
        let (runtime, hccl) = (&self.acl.runtime, &self.acl.hccl);
        match work {
            Work::RecordEvent(event) => runtime.record_event(self.event(*event)?, queue.stream("aclrtRecordEvent")?),
            Work::WaitEvent { event, timeout } => {
                let stream = queue.stream("aclrtStreamWaitEvent")?;
                runtime.stream_wait_event(stream, self.event(*event)?, timeout.map(|t| clamp_i32(t.value)))
            }
            Work::ResetEvent(event) => runtime.reset_event(self.event(*event)?, queue.stream("aclrtResetEvent")?),
            Work::RecordNotify(notify) => {
                runtime.record_notify(self.notify(*notify)?, queue.stream("aclrtRecordNotify")?)
            }
            Work::WaitNotify { notify, timeout } => {
                let stream = queue.stream("aclrtWaitAndResetNotify")?;
                runtime.wait_and_reset_notify(self.notify(*notify)?, stream, seconds(*timeout))
            }
            Work::ChannelRecord { channel, index } => {
                let thread = queue.thread("HcommChannelNotifyRecordOnThread")?;
                hccl.channel_notify_record(thread, self.channel(*channel)?, *index)
            }
            Work::ChannelWait {
                channel,
                index,
                timeout,
            } => {
                let thread = queue.thread("HcommChannelNotifyWaitOnThread")?;
                hccl.channel_notify_wait(thread, self.channel(*channel)?, *index, seconds(*timeout))
            }
            Work::ThreadRecord { target, index } => {
                let thread = queue.thread("HcommThreadNotifyRecordOnThread")?;
                hccl.thread_notify_record(thread, self.thread(*target)?, *index)
            }
            Work::ThreadWait { index, timeout } => {
                let thread = queue.thread("HcommThreadNotifyWaitOnThread")?;
                hccl.thread_notify_wait(thread, *index, seconds(*timeout))
            }
            Work::Fence { channel } => {
                let channel = channel.map(|channel| self.channel(channel)).transpose()?;
                hccl.fence(queue.thread("HcommFenceOnThread")?, channel)
            }
            Work::Kernel { accesses, .. } => self.kernel(queue, accesses, node),
            Work::Copy { dst, src, via } => self.copy(queue, dst, src, *via),
            Work::SuperKernel { name, .. } => Err(Fault::Unsupported {
                what: format!(
                    "launching SuperKernel `{name}` (it needs the kernel binary the Ascend C toolchain compiles; \
                     the runtime cannot run one from its declared footprint)"
                ),
            }),
        }
    }

    fn host_call(&self, host: Host, call: &HostCall) -> Result<(), Fault> {
        self.bind(host.rank)?;
        let runtime = &self.acl.runtime;
        match call {
            HostCall::SynchronizeStream { queue, timeout } => {
                let stream = self.objects().queue(*queue)?.stream("aclrtSynchronizeStream")?;
                runtime.synchronize_stream(stream, timeout.map(|t| clamp_i32(t.value)))
            }
            HostCall::SynchronizeThread { thread } => self.synchronize_thread(*thread),
            HostCall::SynchronizeEvent { event, timeout } => {
                runtime.synchronize_event(self.event(*event)?, timeout.map(|t| clamp_i32(t.value)))
            }
            HostCall::SynchronizeDevice => runtime.synchronize_device(),
            HostCall::QueryEvent { event, wait_status } => runtime.query_event(self.event(*event)?, *wait_status),
            HostCall::EventElapsedTime { start, end } => {
                runtime.event_elapsed_time(self.event(*start)?, self.event(*end)?)
            }
            HostCall::Copy { dst, src } => runtime.memcpy(self.span(dst)?, self.span(src)?),
            HostCall::Access(access) => self.host_access(access, host.node),
            HostCall::SetWaitTimeout { api, timeout } => {
                let seconds = seconds(Some(*timeout));
                match *api {
                    "HcommSetNotifyWaitTimeOut" => self.acl.hccl.set_notify_wait_timeout(seconds),
                    _ => runtime.set_op_wait_timeout(seconds),
                }
            }
        }
    }

    /// GE emits group Record/Wait tasks (`KernelLaunchInfo::CreateHcomRecordTask` /
    /// `CreateHcomWaitTask`) into a graph it compiles; no host API issues them.
    fn group_tasks(&self, tasks: GroupTasks<'_>) -> Result<(), Fault> {
        Err(Fault::Unsupported {
            what: format!(
                "running GE op `{}`'s task list on rank {} (GE emits group Record/Wait tasks when it compiles a \
                 graph; no host API issues them)",
                tasks.op.name, tasks.rank
            ),
        })
    }

    fn finish(&self) -> Result<(), Fault> {
        let mut faults = self.drain();
        faults.extend(self.reset_devices());
        faults.into_iter().next().map_or(Ok(()), Err)
    }
}

/// An object created on the runtime, with the rank whose device it belongs to.
struct Entry {
    rank: u32,
    object: Object,
}

enum Object {
    /// A stream, or the device's default stream (`Stream::DEFAULT`, never destroyed).
    Stream(Stream),
    Event(Event),
    Notify(Notify),
    Comm(Arc<CommSlot>),
    Channel {
        handle: ChannelHandle,
        comm: Arc<CommSlot>,
    },
    Thread {
        handle: ThreadHandle,
        /// The stream of `HcclThreadAcquireWithStream`.
        stream: Option<Stream>,
    },
    Buffer {
        memory: Allocation,
        /// Allocated by this backend (not an HCCL buffer, which the library owns).
        owned: bool,
    },
}

impl Object {
    /// Leftovers are released in this order: memory and sync objects before the streams
    /// they were used on, communicators last.
    fn release_order(&self) -> u8 {
        match self {
            Object::Buffer { .. } => 0,
            Object::Event(_) | Object::Notify(_) => 1,
            Object::Channel { .. } | Object::Thread { .. } => 2,
            Object::Stream(_) => 3,
            Object::Comm(_) => 4,
        }
    }
}

/// One rank's communicator.
struct CommSlot {
    handle: Comm,
    /// Held while a channel is acquired: `HcclChannelAcquire` is not concurrency-safe
    /// within one communicator.
    acquiring: Mutex<()>,
}

/// The `HcclCommInitAll` groups, and which of them each rank has joined.
#[derive(Default)]
struct Communicators {
    /// Group k holds every rank's k-th communicator.
    groups: Vec<Vec<Comm>>,
    taken: HashMap<u32, usize>,
    /// Each rank's most recent live communicator: the one calls that name none use.
    latest: HashMap<u32, Arc<CommSlot>>,
}

/// Where work is enqueued: a runtime stream, or an HCCL thread (bound to a stream or not).
#[derive(Clone, Copy)]
enum Queue {
    Stream(Stream),
    Thread {
        handle: ThreadHandle,
        stream: Option<Stream>,
    },
}

impl Queue {
    /// The runtime stream an `aclrt*` call `api` is issued on.
    fn stream(self, api: &str) -> Result<Stream, Fault> {
        match self {
            Queue::Stream(stream)
            | Queue::Thread {
                stream: Some(stream), ..
            } => Ok(stream),
            Queue::Thread { stream: None, .. } => Err(Fault::Unsupported {
                what: format!("{api} on an HCCL thread that has no runtime stream (acquired without one)"),
            }),
        }
    }

    /// The HCCL thread an `Hcomm*` call `api` is issued on.
    fn thread(self, api: &str) -> Result<ThreadHandle, Fault> {
        match self {
            Queue::Thread { handle, .. } => Ok(handle),
            Queue::Stream(_) => Err(Fault::Unsupported {
                what: format!("{api} on a runtime stream (Hcomm calls are issued on an HCCL thread)"),
            }),
        }
    }
}

/// Every live object, by instance.
#[derive(Default)]
struct Objects {
    entries: HashMap<InstId, Entry>,
}

impl Objects {
    fn get(&self, inst: InstId, kind: &str) -> Result<&Object, Fault> {
        self.entries
            .get(&inst)
            .map(|entry| &entry.object)
            .ok_or_else(|| never_created(kind, inst))
    }

    fn queue(&self, inst: InstId) -> Result<Queue, Fault> {
        match self.get(inst, "stream")? {
            Object::Stream(stream) => Ok(Queue::Stream(*stream)),
            Object::Thread { handle, stream } => Ok(Queue::Thread {
                handle: *handle,
                stream: *stream,
            }),
            _ => Err(never_created("stream or HCCL thread", inst)),
        }
    }

    fn stream(&self, inst: InstId) -> Result<Stream, Fault> {
        match self.get(inst, "stream")? {
            Object::Stream(stream) => Ok(*stream),
            _ => Err(never_created("stream", inst)),
        }
    }

    fn event(&self, inst: InstId) -> Result<Event, Fault> {
        match self.get(inst, "event")? {
            Object::Event(event) => Ok(*event),
            _ => Err(never_created("event", inst)),
        }
    }

    fn notify(&self, inst: InstId) -> Result<Notify, Fault> {
        match self.get(inst, "notify")? {
            Object::Notify(notify) => Ok(*notify),
            _ => Err(never_created("notify", inst)),
        }
    }

    fn comm(&self, inst: InstId) -> Result<Arc<CommSlot>, Fault> {
        match self.get(inst, "communicator")? {
            Object::Comm(slot) => Ok(Arc::clone(slot)),
            _ => Err(never_created("communicator", inst)),
        }
    }

    fn channel(&self, inst: InstId) -> Result<(ChannelHandle, Arc<CommSlot>), Fault> {
        match self.get(inst, "channel")? {
            Object::Channel { handle, comm } => Ok((*handle, Arc::clone(comm))),
            _ => Err(never_created("channel", inst)),
        }
    }

    fn thread(&self, inst: InstId) -> Result<ThreadHandle, Fault> {
        match self.get(inst, "HCCL thread")? {
            Object::Thread { handle, .. } => Ok(*handle),
            _ => Err(never_created("HCCL thread", inst)),
        }
    }

    fn buffer(&self, inst: InstId) -> Result<Allocation, Fault> {
        match self.get(inst, "buffer")? {
            Object::Buffer { memory, .. } => Ok(*memory),
            _ => Err(never_created("buffer", inst)),
        }
    }
}

/// The ACL creator for an event: the program's own creator and flags, and for a CUDA
/// event (whose flags are CUDA's) the ACL event with the same semantics. A capture-kind
/// event still needs `ACL_EVENT_SYNC` to be waited on.
fn event_creation(semantics: EventSemantics, creator: EventCreator, flags: u32) -> EventCreation {
    match (creator, semantics) {
        (EventCreator::AclCreateEvent, _) => EventCreation::Plain,
        (EventCreator::AclWithFlag, _) => EventCreation::WithFlag(flags),
        (EventCreator::AclExWithFlag | EventCreator::IpcOpen, _) => EventCreation::ExWithFlag(flags),
        (EventCreator::Cuda | EventCreator::Existing, EventSemantics::Sync) => EventCreation::WithFlag(ACL_EVENT_SYNC),
        (EventCreator::Cuda | EventCreator::Existing, EventSemantics::Capture) => {
            EventCreation::ExWithFlag(ACL_EVENT_SYNC)
        }
    }
}

fn engine_code(engine: &str) -> Result<i32, Fault> {
    hccl::engine_code(engine).ok_or_else(|| Fault::Unsupported {
        what: format!("communication engine `{engine}`"),
    })
}

/// Rank `rank` runs on device `rank` of this process.
fn device_of(rank: u32) -> i32 {
    i32::try_from(rank).unwrap_or(i32::MAX)
}

/// A timeout for the second-based waits (`uint32_t`, 0 = forever): none, or a negative
/// value, waits forever.
fn seconds(timeout: Option<Timeout>) -> u32 {
    timeout.map_or(0, |t| u32::try_from(t.value.max(0)).unwrap_or(u32::MAX))
}

fn clamp_i32(value: i64) -> i32 {
    value.clamp(i32::MIN.into(), i32::MAX.into()) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment where `ASCEND_HOME_PATH` is `root` and nothing else is set.
    fn ascend_home(root: &Path) -> impl Fn(&str) -> Option<OsString> + '_ {
        move |name| (name == "ASCEND_HOME_PATH").then(|| root.as_os_str().to_owned())
    }

    #[test]
    fn load_error_names_every_path_tried_and_how_to_fix_it() {
        let root = tempfile::tempdir().expect("temp dir");
        let error = match load_with(&ascend_home(root.path())) {
            Ok(_) => return eprintln!("skipped: a CANN runtime is on the loader's search path"),
            Err(error) => error,
        };
        let message = error.to_string();
        let root = root.path().display().to_string();
        assert!(message.starts_with("cannot load libascendcl.so (the Ascend CANN runtime, ACL). Tried:\n"));
        assert!(message.contains(&format!(
            "\n  {root}/lib64/libascendcl.so, from $ASCEND_HOME_PATH/lib64: "
        )));
        assert!(message.contains(&format!(
            "\n  {root}/runtime/lib64/libascendcl.so, from $ASCEND_HOME_PATH/runtime/lib64: "
        )));
        assert!(message.contains("\n  libascendcl.so, on the dynamic loader's search path"));
        assert!(message.contains("set ASCEND_HOME_PATH to the CANN install"));
        assert!(message.contains("LD_LIBRARY_PATH"));
        assert!(message.lines().count() >= 5, "one line per path tried:\n{message}");
    }

    #[test]
    fn candidates_follow_the_documented_order() {
        let env = |name: &str| match name {
            "ASCEND_HOME_PATH" => Some(OsString::from("/cann")),
            "ASCEND_TOOLKIT_HOME" => Some(OsString::from("/toolkit")),
            _ => None,
        };
        let paths: Vec<OsString> = candidates(&env, "libhccl.so").into_iter().map(|c| c.path).collect();
        let expected = [
            "/cann/lib64/libhccl.so",
            "/cann/runtime/lib64/libhccl.so",
            "/toolkit/lib64/libhccl.so",
            "libhccl.so",
        ];
        assert_eq!(paths, expected.map(OsString::from));
    }

    #[test]
    fn unset_or_empty_variables_leave_only_the_soname() {
        let empty = |_: &str| Some(OsString::new());
        let paths: Vec<OsString> = candidates(&empty, "libascendcl.so")
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(paths, [OsString::from("libascendcl.so")]);
    }

    #[test]
    fn timeouts_convert_to_the_api_argument() {
        let secs = |value| {
            Some(Timeout {
                value,
                unit: syncguard_analyzer::model::TimeUnit::Seconds,
            })
        };
        assert_eq!(seconds(None), 0);
        assert_eq!(seconds(secs(1836)), 1836);
        assert_eq!(seconds(secs(-5)), 0);
        assert_eq!(clamp_i32(i64::MAX), i32::MAX);
        assert_eq!(clamp_i32(-1), -1);
    }

    #[test]
    fn cuda_events_map_to_acl_creators_by_semantics() {
        assert_eq!(
            event_creation(EventSemantics::Capture, EventCreator::Cuda, 0x2),
            EventCreation::ExWithFlag(ACL_EVENT_SYNC)
        );
        assert_eq!(
            event_creation(EventSemantics::Sync, EventCreator::AclWithFlag, 0x9),
            EventCreation::WithFlag(0x9)
        );
        assert_eq!(
            event_creation(EventSemantics::Sync, EventCreator::AclCreateEvent, 0),
            EventCreation::Plain
        );
    }
}
