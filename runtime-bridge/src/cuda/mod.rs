//! The CUDA backend: runs a verified program on one NVIDIA GPU through the driver API.
//!
//! `libcuda.so.1` is opened at run time and its few prototypes are declared in
//! [`driver`], so the backend builds with no GPU and no CUDA toolkit. Every rank runs on
//! device 0's primary context: a rank's streams, HCCL threads (a stream each) and buffers
//! are its own, and its HCCL buffer is one allocation per (communicator, rank) that the
//! rank's peers reach through their channels.
//!
//! CUDA events give capture-kind events; sync-kind events, ACL notifies and HCCL channel
//! and thread notifies are flag words in device memory ([`flags`]). Kernels are
//! `cuMemsetD8Async` over the ranges they write; transfers are asynchronous copies on
//! the issuing stream. GE group task lists and SuperKernel launches have no CUDA
//! counterpart and are refused.

mod driver;
mod flags;

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use syncguard_analyzer::exec::{Access, InstId, NodeId};
use syncguard_analyzer::model::EventSemantics;

use crate::acl::loader::{self, Candidate, LoadError};
use crate::backend::{
    Backend, BufferSpace, CopyVia, Fault, GroupTasks, Host, HostCall, ObjectSpec, Timeout, Work, fill_byte, lock,
    never_created,
};
use driver::{Allocation, Context, Driver, Event, Span, Stream};
use flags::{Flag, Flags, NotifyBank};

/// The loaded CUDA driver; [`CudaBackend::new`] opens the device.
pub struct Cuda {
    driver: Driver,
}

/// Loads the NVIDIA driver library (`libcuda.so.1`, then `libcuda.so`) from the dynamic
/// loader's search path.
pub fn load() -> Result<Cuda, LoadError> {
    load_from(vec![Candidate::soname("libcuda.so.1"), Candidate::soname("libcuda.so")])
}

fn load_from(candidates: Vec<Candidate>) -> Result<Cuda, LoadError> {
    let library = loader::open_first("libcuda.so.1", "the NVIDIA CUDA driver", candidates, driver::HINT)?;
    Ok(Cuda {
        driver: Driver::load(library)?,
    })
}

/// How often a host wait with no blocking driver call (a flag, a timeout) looks again.
const POLL_INTERVAL: Duration = Duration::from_micros(100);

thread_local! {
    /// The context this OS thread last made current (`Context::id`), 0 for none.
    static CURRENT_CONTEXT: Cell<usize> = const { Cell::new(0) };
}

/// Runs programs on a CUDA GPU.
pub struct CudaBackend {
    driver: Driver,
    device: i32,
    context: Context,
    /// The private stream that zeroes new flag words (see [`flags::Flags`]).
    zeroing: Stream,
    objects: Mutex<HashMap<InstId, Entry>>,
    flags: Mutex<Flags>,
    comms: Mutex<Communicators>,
    /// HCCL buffers, by (communicator, rank).
    hccl_buffers: Mutex<HashMap<(usize, u32), Allocation>>,
    /// Memory the program released, freed once the device is idle: queued work may still
    /// use it, and `cuMemFree` would synchronize the device under a stream that waits for
    /// a host record not yet issued.
    retired: Mutex<Vec<Allocation>>,
}

impl CudaBackend {
    /// `cuInit`, device 0's primary context, and the private zeroing stream.
    pub fn new(cuda: Cuda) -> Result<Self, Fault> {
        let driver = cuda.driver;
        let (device, context) = driver.primary_context()?;
        driver.set_current(context)?;
        CURRENT_CONTEXT.set(context.id());
        let zeroing = driver.create_stream()?;
        Ok(CudaBackend {
            driver,
            device,
            context,
            zeroing,
            objects: Mutex::default(),
            flags: Mutex::default(),
            comms: Mutex::default(),
            hccl_buffers: Mutex::default(),
            retired: Mutex::default(),
        })
    }

    /// Makes the context current on the calling thread, once per thread.
    fn bind(&self) -> Result<(), Fault> {
        if CURRENT_CONTEXT.get() == self.context.id() {
            return Ok(());
        }
        self.driver.set_current(self.context)?;
        CURRENT_CONTEXT.set(self.context.id());
        Ok(())
    }

    fn objects(&self) -> MutexGuard<'_, HashMap<InstId, Entry>> {
        lock(&self.objects)
    }

    /// The object `inst` names, copied out so that no lock is held during a driver call.
    fn object(&self, inst: InstId, kind: &str) -> Result<Object, Fault> {
        self.objects()
            .get(&inst)
            .map(|entry| entry.object.clone())
            .ok_or_else(|| never_created(kind, inst))
    }

    fn stream(&self, inst: InstId) -> Result<Stream, Fault> {
        match self.object(inst, "stream")? {
            Object::Stream(stream) | Object::Thread { stream, .. } => Ok(stream),
            _ => Err(never_created("stream or HCCL thread", inst)),
        }
    }

    fn event(&self, inst: InstId) -> Result<EventObject, Fault> {
        match self.object(inst, "event")? {
            Object::CaptureEvent(event) => Ok(EventObject::Capture(event)),
            Object::SyncEvent(flag) => Ok(EventObject::Sync(flag)),
            _ => Err(never_created("event", inst)),
        }
    }

    fn notify(&self, inst: InstId) -> Result<Flag, Fault> {
        match self.object(inst, "notify")? {
            Object::Notify(flag) => Ok(flag),
            _ => Err(never_created("notify", inst)),
        }
    }

    fn channel(&self, inst: InstId) -> Result<Channel, Fault> {
        match self.object(inst, "channel")? {
            Object::Channel(channel) => Ok(channel),
            _ => Err(never_created("channel", inst)),
        }
    }

    /// Notify `index` of HCCL thread `inst`.
    fn thread_notify(&self, inst: InstId, index: u32) -> Result<Flag, Fault> {
        let Object::Thread { notifies, .. } = self.object(inst, "HCCL thread")? else {
            return Err(never_created("HCCL thread", inst));
        };
        notifies.get(index as usize).copied().ok_or_else(|| Fault::Unsupported {
            what: format!("notify {index} of an HCCL thread with {} notifies", notifies.len()),
        })
    }

    fn buffer(&self, inst: InstId) -> Result<Allocation, Fault> {
        match self.object(inst, "buffer")? {
            Object::Buffer { memory, .. } => Ok(memory),
            _ => Err(never_created("buffer", inst)),
        }
    }

    /// The bytes an access names, checked against its buffer.
    fn span(&self, access: &Access) -> Result<Span, Fault> {
        let memory = self.buffer(access.buffer)?;
        memory.span(access.start, access.end).ok_or_else(|| Fault::Unsupported {
            what: format!(
                "an access to bytes {}..{} of a {}-byte buffer",
                access.start,
                access.end,
                memory.size()
            ),
        })
    }

    fn new_flags(&self, count: u32) -> Result<Vec<Flag>, Fault> {
        lock(&self.flags).take_many(count, &self.driver, self.zeroing)
    }

    fn create_object(&self, rank: u32, spec: &ObjectSpec) -> Result<Object, Fault> {
        Ok(match spec {
            // The model gives the default stream no implicit synchronization with other
            // streams, so it is an ordinary (non-blocking) stream here.
            ObjectSpec::Stream | ObjectSpec::DefaultStream => Object::Stream(self.driver.create_stream()?),
            ObjectSpec::Event {
                semantics: EventSemantics::Capture,
                ..
            } => Object::CaptureEvent(self.driver.create_event()?),
            ObjectSpec::Event {
                semantics: EventSemantics::Sync,
                ..
            } => Object::SyncEvent(self.new_flags(1)?[0]),
            ObjectSpec::Notify => Object::Notify(self.new_flags(1)?[0]),
            ObjectSpec::Comm { .. } => Object::Comm {
                ordinal: lock(&self.comms).join(rank),
            },
            ObjectSpec::Channel {
                comm,
                remote_rank,
                notify_num,
                protocol,
                engine,
            } => Object::Channel(Channel {
                comm: self.comm_ordinal(rank, *comm)?,
                protocol: protocol.clone(),
                engine: engine.clone(),
                local: rank,
                remote: *remote_rank,
                notify_num: *notify_num,
            }),
            ObjectSpec::HcclThread { stream, notify_num, .. } => {
                let (stream, owned) = match stream {
                    Some(stream) => (self.stream(*stream)?, false),
                    None => (self.driver.create_stream()?, true),
                };
                let notifies = self.new_flags(*notify_num)?;
                Object::Thread {
                    stream,
                    owned,
                    notifies,
                }
            }
            ObjectSpec::Buffer { space, size } => self.create_buffer(rank, *space, *size)?,
        })
    }

    /// The communicator a call names, or the rank's latest one for calls that name none.
    fn comm_ordinal(&self, rank: u32, comm: Option<InstId>) -> Result<usize, Fault> {
        match comm {
            Some(inst) => match self.object(inst, "communicator")? {
                Object::Comm { ordinal } => Ok(ordinal),
                _ => Err(never_created("communicator", inst)),
            },
            None => lock(&self.comms)
                .latest
                .get(&rank)
                .copied()
                .ok_or_else(|| Fault::Unsupported {
                    what: format!("an HCCL call on rank {rank} before it created a communicator"),
                }),
        }
    }

    fn create_buffer(&self, rank: u32, space: BufferSpace, size: u64) -> Result<Object, Fault> {
        let (memory, owned) = match space {
            BufferSpace::Device => (self.driver.alloc(size)?, true),
            BufferSpace::Host => (self.driver.alloc_host(size)?, true),
            BufferSpace::HcclLocal => (self.hccl_buffer(self.comm_ordinal(rank, None)?, rank, size)?, false),
            BufferSpace::HcclPeer { channel } => {
                let channel = self.channel(channel)?;
                (self.hccl_buffer(channel.comm, channel.remote, size)?, false)
            }
        };
        Ok(Object::Buffer { memory, owned })
    }

    /// `rank`'s HCCL buffer of communicator `comm`, allocated by whichever end asks first
    /// (the rank itself, or a peer through its channel).
    fn hccl_buffer(&self, comm: usize, rank: u32, size: u64) -> Result<Allocation, Fault> {
        let mut buffers = lock(&self.hccl_buffers);
        if let Some(buffer) = buffers.get(&(comm, rank)) {
            return Ok(*buffer);
        }
        let buffer = self.driver.alloc(size)?;
        buffers.insert((comm, rank), buffer);
        Ok(buffer)
    }

    /// Notify `index` of the bank a channel's records or waits use, within the channel's
    /// `notifyNum` as HCCL requires.
    fn channel_notify(&self, channel: &Channel, index: u32, bank: NotifyBank) -> Result<Flag, Fault> {
        if index >= channel.notify_num {
            return Err(Fault::Unsupported {
                what: format!("notify {index} of a channel with notifyNum {}", channel.notify_num),
            });
        }
        lock(&self.flags).channel_notify(&bank, index, &self.driver, self.zeroing)
    }

    /// Sets `flag` once the stream's earlier work is done.
    fn record(&self, stream: Stream, flag: Flag) -> Result<(), Fault> {
        self.driver.write_flag(stream, flag.address(), 1)
    }

    /// Waits for `flag`, then consumes it: a notify wait.
    fn wait_and_consume(&self, stream: Stream, flag: Flag) -> Result<(), Fault> {
        self.driver.wait_flag(stream, flag.address(), 1)?;
        self.driver.write_flag(stream, flag.address(), 0)
    }

    fn record_event(&self, stream: Stream, event: InstId) -> Result<(), Fault> {
        match self.event(event)? {
            EventObject::Capture(event) => self.driver.record_event(event, stream),
            EventObject::Sync(flag) => self.record(stream, flag),
        }
    }

    /// An event wait. The flag waits of sync-kind events have no timeout in CUDA, so the
    /// program's wait timeout does not apply.
    fn wait_event(&self, stream: Stream, event: InstId) -> Result<(), Fault> {
        match self.event(event)? {
            EventObject::Capture(event) => self.driver.stream_wait_event(stream, event),
            EventObject::Sync(flag) => self.driver.wait_flag(stream, flag.address(), 1),
        }
    }

    fn reset_event(&self, stream: Stream, event: InstId) -> Result<(), Fault> {
        match self.event(event)? {
            EventObject::Sync(flag) => self.driver.write_flag(stream, flag.address(), 0),
            EventObject::Capture(_) => Err(Fault::Unsupported {
                what: "resetting a capture-kind event (CUDA events have no reset)".into(),
            }),
        }
    }

    /// A kernel, run as `cuMemsetD8Async` over each range it writes: the verifier reasons
    /// about a kernel's declared footprint, not its code, and that is what runs. Each
    /// range is filled with the low byte of the call's node id.
    fn kernel(&self, stream: Stream, accesses: &[Access], node: NodeId) -> Result<(), Fault> {
        for access in accesses.iter().filter(|access| access.write) {
            self.driver.fill_async(self.span(access)?, fill_byte(node), stream)?;
        }
        Ok(())
    }

    /// A copy on the issuing stream; a write with notify then sets the peer's notify
    /// behind it, as `HcommWriteWithNotifyOnThread` does.
    fn copy(&self, stream: Stream, dst: &Access, src: &Access, via: CopyVia) -> Result<(), Fault> {
        self.driver.copy_async(self.span(dst)?, self.span(src)?, stream)?;
        match via {
            CopyVia::Write {
                channel,
                notify: Some(index),
            } => {
                let channel = self.channel(channel)?;
                self.record(stream, self.channel_notify(&channel, index, channel.outgoing())?)
            }
            _ => Ok(()),
        }
    }

    /// `cuStreamSynchronize`, or polling `cuStreamQuery` until the timeout.
    fn synchronize_stream(&self, stream: Stream, timeout: Option<Timeout>) -> Result<(), Fault> {
        match deadline(timeout) {
            None => self.driver.synchronize_stream(stream),
            Some(deadline) => poll("stream synchronize", Some(deadline), || self.driver.stream_idle(stream)),
        }
    }

    fn synchronize_event(&self, event: InstId, timeout: Option<Timeout>) -> Result<(), Fault> {
        match (self.event(event)?, deadline(timeout)) {
            (EventObject::Capture(event), None) => self.driver.synchronize_event(event),
            (EventObject::Capture(event), deadline) => {
                poll("event synchronize", deadline, || self.driver.event_done(event))
            }
            // The host waits for the flag itself: the record may not even be issued yet.
            (EventObject::Sync(flag), deadline) => poll("event synchronize", deadline, || {
                Ok(self.driver.read_flag(flag.address())? == 1)
            }),
        }
    }

    /// Every stream of the rank (its streams and HCCL threads): what synchronizing a
    /// rank's device means when all ranks share one GPU.
    fn synchronize_rank(&self, rank: u32) -> Result<(), Fault> {
        let streams: Vec<Stream> = self
            .objects()
            .values()
            .filter(|entry| entry.rank == rank)
            .filter_map(|entry| match entry.object {
                Object::Stream(stream) | Object::Thread { stream, .. } => Some(stream),
                _ => None,
            })
            .collect();
        streams
            .into_iter()
            .try_for_each(|stream| self.driver.synchronize_stream(stream))
    }

    fn query_event(&self, event: InstId) -> Result<(), Fault> {
        match self.event(event)? {
            EventObject::Capture(event) => self.driver.event_done(event).map(drop),
            EventObject::Sync(flag) => self.driver.read_flag(flag.address()).map(drop),
        }
    }

    /// A host read or write: direct for pinned host memory, a synchronous copy otherwise.
    fn host_access(&self, access: &Access, node: NodeId) -> Result<(), Fault> {
        let span = self.span(access)?;
        if access.write {
            self.driver.fill(span, fill_byte(node))
        } else {
            self.driver.read(span).map(drop)
        }
    }

    /// Releases an object: its destroy call, or nothing for flags (never reused) and
    /// HCCL objects (library-owned); owned memory is retired until the device is idle.
    fn release(&self, object: Object) -> Result<(), Fault> {
        match object {
            Object::Stream(stream)
            | Object::Thread {
                stream, owned: true, ..
            } => self.driver.destroy_stream(stream),
            Object::CaptureEvent(event) => self.driver.destroy_event(event),
            Object::Comm { ordinal } => {
                lock(&self.comms).latest.retain(|_, latest| *latest != ordinal);
                Ok(())
            }
            Object::Buffer { memory, owned: true } => {
                lock(&self.retired).push(memory);
                Ok(())
            }
            Object::SyncEvent(_)
            | Object::Notify(_)
            | Object::Channel(_)
            | Object::Thread { owned: false, .. }
            | Object::Buffer { owned: false, .. } => Ok(()),
        }
    }

    /// Frees every allocation of the run; the device must be idle.
    fn free_memory(&self) -> Vec<Fault> {
        let retired = std::mem::take(&mut *lock(&self.retired));
        let hccl: Vec<Allocation> = lock(&self.hccl_buffers).drain().map(|(_, buffer)| buffer).collect();
        let pool = std::mem::take(&mut *lock(&self.flags)).into_allocations();
        let all = retired.into_iter().chain(hccl).chain(pool);
        all.filter_map(|memory| self.driver.free(memory).err()).collect()
    }

    /// The bytes an access names, read back to the host.
    #[cfg(test)]
    fn read(&self, access: &Access) -> Result<Vec<u8>, Fault> {
        self.bind()?;
        self.driver.read(self.span(access)?)
    }
}

impl Drop for CudaBackend {
    /// Gives back the private stream and the primary context. Errors cannot be reported
    /// from here, and the process keeps running either way.
    fn drop(&mut self) {
        if self.bind().is_ok() {
            let _ = self.driver.destroy_stream(self.zeroing);
        }
        let _ = self.driver.release_primary_context(self.device);
        CURRENT_CONTEXT.set(0);
    }
}

impl Backend for CudaBackend {
    fn create(&self, host: Host, inst: InstId, object: &ObjectSpec) -> Result<(), Fault> {
        self.bind()?;
        let object = self.create_object(host.rank, object)?;
        self.objects().insert(
            inst,
            Entry {
                rank: host.rank,
                object,
            },
        );
        Ok(())
    }

    fn destroy(&self, _host: Host, inst: InstId) -> Result<(), Fault> {
        self.bind()?;
        let entry = self
            .objects()
            .remove(&inst)
            .ok_or_else(|| never_created("object", inst))?;
        self.release(entry.object)
    }

    fn enqueue(&self, _host: Host, queue: InstId, work: &Work, node: NodeId) -> Result<(), Fault> {
        self.bind()?;
        let stream = self.stream(queue)?;
        match work {
            Work::RecordEvent(event) => self.record_event(stream, *event),
            Work::WaitEvent { event, .. } => self.wait_event(stream, *event),
            Work::ResetEvent(event) => self.reset_event(stream, *event),
            Work::RecordNotify(notify) => self.record(stream, self.notify(*notify)?),
            Work::WaitNotify { notify, .. } => self.wait_and_consume(stream, self.notify(*notify)?),
            Work::ChannelRecord { channel, index } => {
                let channel = self.channel(*channel)?;
                self.record(stream, self.channel_notify(&channel, *index, channel.outgoing())?)
            }
            Work::ChannelWait { channel, index, .. } => {
                let channel = self.channel(*channel)?;
                self.wait_and_consume(stream, self.channel_notify(&channel, *index, channel.incoming())?)
            }
            Work::ThreadRecord { target, index } => self.record(stream, self.thread_notify(*target, *index)?),
            Work::ThreadWait { index, .. } => self.wait_and_consume(stream, self.thread_notify(queue, *index)?),
            Work::Kernel { accesses, .. } => self.kernel(stream, accesses, node),
            Work::Copy { dst, src, via } => self.copy(stream, dst, src, *via),
            // A stream runs its copies in order: everything issued before the fence has
            // landed before anything issued after it starts.
            Work::Fence { .. } => Ok(()),
            Work::SuperKernel { name, .. } => Err(Fault::Unsupported {
                what: format!("launching SuperKernel `{name}` (an Ascend C kernel binary; CUDA cannot run it)"),
            }),
        }
    }

    fn host_call(&self, host: Host, call: &HostCall) -> Result<(), Fault> {
        self.bind()?;
        match call {
            HostCall::SynchronizeStream { queue, timeout } => self.synchronize_stream(self.stream(*queue)?, *timeout),
            HostCall::SynchronizeThread { thread } => self.driver.synchronize_stream(self.stream(*thread)?),
            HostCall::SynchronizeEvent { event, timeout } => self.synchronize_event(*event, *timeout),
            HostCall::SynchronizeDevice => self.synchronize_rank(host.rank),
            HostCall::QueryEvent { event, .. } => self.query_event(*event),
            // A timing read orders nothing, and sync-kind events are flags here, not CUDA
            // events: it is not replayed.
            HostCall::EventElapsedTime { .. } => Ok(()),
            HostCall::Copy { dst, src } => self.driver.copy(self.span(dst)?, self.span(src)?),
            HostCall::Access(access) => self.host_access(access, host.node),
            // The waits this backend issues (flag waits, event waits) take no timeout in
            // CUDA, so a process-wide wait timeout has nothing to set.
            HostCall::SetWaitTimeout { .. } => Ok(()),
        }
    }

    fn group_tasks(&self, tasks: GroupTasks<'_>) -> Result<(), Fault> {
        Err(Fault::Unsupported {
            what: format!(
                "running GE op `{}`'s task list on rank {} (GE group tasks exist only in a graph GE compiles)",
                tasks.op.name, tasks.rank
            ),
        })
    }

    fn finish(&self) -> Result<(), Fault> {
        self.bind()?;
        let mut faults: Vec<Fault> = self.driver.synchronize_context().err().into_iter().collect();
        let leftovers: Vec<Entry> = self.objects().drain().map(|(_, entry)| entry).collect();
        faults.extend(
            leftovers
                .into_iter()
                .filter_map(|entry| self.release(entry.object).err()),
        );
        faults.extend(self.free_memory());
        faults.into_iter().next().map_or(Ok(()), Err)
    }
}

/// An object created on the driver, with its rank.
struct Entry {
    rank: u32,
    object: Object,
}

#[derive(Clone)]
enum Object {
    Stream(Stream),
    CaptureEvent(Event),
    /// A sync-kind event: a flag a record sets, a reset clears, and waits block on.
    SyncEvent(Flag),
    Notify(Flag),
    /// The rank's `ordinal`-th communicator; it pairs with every rank's `ordinal`-th.
    Comm {
        ordinal: usize,
    },
    Channel(Channel),
    Thread {
        stream: Stream,
        /// Created for the thread (`HcclThreadAcquire`), not the program's own stream.
        owned: bool,
        notifies: Vec<Flag>,
    },
    Buffer {
        memory: Allocation,
        owned: bool,
    },
}

enum EventObject {
    Capture(Event),
    Sync(Flag),
}

/// One rank's end of a channel.
#[derive(Clone, Debug)]
struct Channel {
    comm: usize,
    protocol: String,
    engine: String,
    local: u32,
    remote: u32,
    notify_num: u32,
}

impl Channel {
    /// The notifies this end waits on.
    fn incoming(&self) -> NotifyBank {
        self.bank(self.local, self.remote)
    }

    /// The peer's notifies, which this end records into.
    fn outgoing(&self) -> NotifyBank {
        self.bank(self.remote, self.local)
    }

    fn bank(&self, waiter: u32, signaller: u32) -> NotifyBank {
        NotifyBank {
            comm: self.comm,
            protocol: self.protocol.clone(),
            engine: self.engine.clone(),
            waiter,
            signaller,
        }
    }
}

/// Which communicators each rank has created: the k-th of every rank form one group.
#[derive(Default)]
struct Communicators {
    taken: HashMap<u32, usize>,
    /// Each rank's most recent live communicator: the one calls that name none use.
    latest: HashMap<u32, usize>,
}

impl Communicators {
    /// The ordinal of `rank`'s next communicator.
    fn join(&mut self, rank: u32) -> usize {
        let taken = self.taken.entry(rank).or_default();
        let ordinal = *taken;
        *taken += 1;
        self.latest.insert(rank, ordinal);
        ordinal
    }
}

fn deadline(timeout: Option<Timeout>) -> Option<Instant> {
    timeout
        .and_then(Timeout::duration)
        .map(|duration| Instant::now() + duration)
}

/// Checks `done` until it holds, or fails with a timeout past `deadline`.
fn poll(what: &str, deadline: Option<Instant>, mut done: impl FnMut() -> Result<bool, Fault>) -> Result<(), Fault> {
    loop {
        if done()? {
            return Ok(());
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(Fault::Timeout { what: what.to_string() });
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

#[cfg(test)]
mod tests {
    use syncguard_analyzer::exec::{AgentId, Memory};
    use syncguard_analyzer::model::EventCreator;

    use super::*;

    #[test]
    fn load_error_points_at_the_driver() {
        let missing = Candidate {
            path: "/nonexistent/libcuda.so.1".into(),
            origin: "from the test".into(),
        };
        let Err(error) = load_from(vec![missing]) else {
            panic!("a library at a nonexistent path loaded");
        };
        let message = error.to_string();
        assert!(message.starts_with("cannot load libcuda.so.1 (the NVIDIA CUDA driver). Tried:\n"));
        assert!(message.contains("\n  /nonexistent/libcuda.so.1, from the test: "));
        assert!(message.contains("NVIDIA driver"));
        assert!(message.contains("LD_LIBRARY_PATH"));
    }

    fn host(node: u32) -> Host {
        Host {
            rank: 0,
            agent: AgentId(0),
            node: NodeId(node),
        }
    }

    fn whole(buffer: u32, len: u64, write: bool) -> Access {
        Access {
            memory: Memory::Buffer(InstId(buffer)),
            buffer: InstId(buffer),
            start: 0,
            end: len,
            write,
        }
    }

    fn event(semantics: EventSemantics) -> ObjectSpec {
        ObjectSpec::Event {
            semantics,
            creator: EventCreator::Cuda,
            flags: 0,
        }
    }

    /// A kernel writes `a` on one stream; a sync-kind event orders a copy of `a` into `b`
    /// on another; a notify and a capture-kind event bring the first stream after it;
    /// the host then finds the kernel's bytes in `b`.
    #[test]
    fn runs_a_small_program_on_a_gpu() {
        let backend = match load()
            .map_err(|e| e.to_string())
            .and_then(|cuda| CudaBackend::new(cuda).map_err(|fault| fault.to_string()))
        {
            Ok(backend) => backend,
            Err(why) => return eprintln!("skipped: no usable CUDA device: {why}"),
        };
        let (first, second, a, b, ready, done, finished) = (0, 1, 2, 3, 4, 5, 6);
        let len = 256;
        let buffer = ObjectSpec::Buffer {
            space: BufferSpace::Device,
            size: len,
        };
        let created = [
            (first, ObjectSpec::Stream),
            (second, ObjectSpec::Stream),
            (a, buffer.clone()),
            (b, buffer),
            (ready, event(EventSemantics::Sync)),
            (done, ObjectSpec::Notify),
            (finished, event(EventSemantics::Capture)),
        ];
        for (inst, spec) in &created {
            backend.create(host(0), InstId(*inst), spec).expect("create");
        }
        let kernel_node = 42;
        let work = [
            (
                first,
                Work::Kernel {
                    name: "pack".into(),
                    accesses: vec![whole(a, len, true)],
                },
            ),
            (first, Work::RecordEvent(InstId(ready))),
            (
                second,
                Work::WaitEvent {
                    event: InstId(ready),
                    timeout: None,
                },
            ),
            (
                second,
                Work::Copy {
                    dst: whole(b, len, true),
                    src: whole(a, len, false),
                    via: CopyVia::Memcpy,
                },
            ),
            (second, Work::ResetEvent(InstId(ready))),
            (second, Work::RecordNotify(InstId(done))),
            (
                first,
                Work::WaitNotify {
                    notify: InstId(done),
                    timeout: None,
                },
            ),
            (first, Work::RecordEvent(InstId(finished))),
        ];
        for (queue, work) in &work {
            backend
                .enqueue(host(1), InstId(*queue), work, NodeId(kernel_node))
                .expect("enqueue");
        }
        let sync = HostCall::SynchronizeEvent {
            event: InstId(finished),
            timeout: None,
        };
        backend.host_call(host(2), &sync).expect("synchronize");
        let copied = backend.read(&whole(b, len, false)).expect("read back");
        assert!(copied.iter().all(|&byte| byte == kernel_node as u8), "{copied:?}");
        backend
            .host_call(host(3), &HostCall::SynchronizeDevice)
            .expect("synchronize device");
        backend.finish().expect("finish");
    }
}
