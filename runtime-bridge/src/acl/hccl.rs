//! HCCL and HCOMM (`libhccl.so`, and `libhcomm.so` where CANN ships it separately):
//! communicators, channels, HCCL threads and the one-sided data plane.
//!
//! Prototypes are those of `hccl.h`, `hccl_res.h` and `hcomm_primitives.h` as documented
//! in `reference/ascend-apis.md` §3 and `reference/hcomm-api.zh/`. `HcclResult` and the
//! Hcomm calls' `int32_t` share one code space (0 = `HCCL_SUCCESS`); a failure becomes
//! [`Fault::Api`] with the exact C name and `HcclGetErrorString`'s text.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use super::loader::{self, LoadError, Opened};
use super::runtime::{Allocation, DevicePtr, Place, Span, Stream, handles};
use crate::backend::Fault;

type HcclResult = i32;
type RawHandle = *mut c_void;

/// The hint printed when a communication symbol is missing.
pub const HINT: &str = "the channel and thread APIs (HcclChannelAcquire, Hcomm*OnThread) come with CANN's HCOMM \
     library; point ASCEND_HOME_PATH (or LD_LIBRARY_PATH) at a CANN install that ships them";

handles!(
    /// `HcclComm`
    Comm
);

/// `ChannelHandle` (`uint64_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelHandle(u64);

/// `ThreadHandle` (`uint64_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadHandle(u64);

/// `CommEngine`, from its constant's name (`COMM_ENGINE_CPU_TS`, or qualified
/// `CommEngine::COMM_ENGINE_CPU_TS`).
pub fn engine_code(name: &str) -> Option<i32> {
    let code = match unqualified(name) {
        "COMM_ENGINE_CPU" => 0,
        "COMM_ENGINE_CPU_TS" => 1,
        "COMM_ENGINE_AICPU" => 2,
        "COMM_ENGINE_AICPU_TS" => 3,
        "COMM_ENGINE_AIV" => 4,
        "COMM_ENGINE_CCU" => 5,
        _ => return None,
    };
    Some(code)
}

/// `CommProtocol`, from its constant's name.
pub fn protocol_code(name: &str) -> Option<i32> {
    let code = match unqualified(name) {
        "COMM_PROTOCOL_HCCS" => 0,
        "COMM_PROTOCOL_ROCE" => 1,
        "COMM_PROTOCOL_PCIE" => 2,
        "COMM_PROTOCOL_SIO" => 3,
        "COMM_PROTOCOL_UB_CTP" | "COMM_PROTOCOL_UBC_CTP" => 4,
        "COMM_PROTOCOL_UBC_TP" => 5,
        "COMM_PROTOCOL_UB_MEM" => 6,
        "COMM_PROTOCOL_UBOE" => 7,
        "COMM_PROTOCOL_HCCS_ONLY" => 8,
        "COMM_PROTOCOL_UB_RTP" | "COMM_PROTOCOL_UBG" => 9,
        _ => return None,
    };
    Some(code)
}

fn unqualified(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name).trim()
}

/// `CommAbiHeader`
#[repr(C)]
struct AbiHeader {
    version: u32,
    magic_word: u32,
    size: u32,
    reserved: u32,
}

/// A C union's storage: `raws[N]` with the alignment of its widest member (`uint32_t`).
#[repr(C, align(4))]
struct Raw<const N: usize>([u8; N]);

/// `CommAddr`: the address type and a 36-byte union.
#[repr(C)]
struct CommAddr {
    kind: i32,
    raws: Raw<36>,
}

/// `EndpointLoc`: the location type and a 60-byte union.
#[repr(C)]
struct EndpointLoc {
    kind: i32,
    raws: Raw<60>,
}

/// `EndpointDesc`
#[repr(C)]
struct EndpointDesc {
    protocol: i32,
    addr: CommAddr,
    loc: EndpointLoc,
    raws: Raw<52>,
}

/// `HcclChannelDesc` (hccl_res.h).
#[repr(C)]
struct ChannelDesc {
    header: AbiHeader,
    remote_rank: u32,
    channel_protocol: i32,
    local_endpoint: EndpointDesc,
    remote_endpoint: EndpointDesc,
    notify_num: u32,
    mem_handles: *mut RawHandle,
    mem_handle_num: u32,
    attrs: Raw<128>,
}

// The layout the library reads: offsets of the fields set here, and the total size that
// `header.size` carries (checked against the C declaration on LP64).
const _: () = {
    assert!(size_of::<EndpointDesc>() == 160);
    assert!(std::mem::offset_of!(ChannelDesc, notify_num) == 344);
    assert!(std::mem::offset_of!(ChannelDesc, mem_handles) == 352);
    assert!(size_of::<ChannelDesc>() == 496);
};

/// `HCCL_CHANNEL_VERSION` and `HCCL_CHANNEL_MAGIC_WORD`.
const CHANNEL_VERSION: u32 = 1;
const CHANNEL_MAGIC_WORD: u32 = 0x0f0f_0f0f;
/// The `*_RESERVED` value of every enum in the descriptor: "not set".
const RESERVED: i32 = -1;

impl EndpointDesc {
    /// What `EndpointDescInit` produces: all bytes 0xFF, the enum fields "reserved".
    fn unset() -> Self {
        EndpointDesc {
            protocol: RESERVED,
            addr: CommAddr {
                kind: RESERVED,
                raws: Raw([0xFF; 36]),
            },
            loc: EndpointLoc {
                kind: RESERVED,
                raws: Raw([0xFF; 60]),
            },
            raws: Raw([0xFF; 52]),
        }
    }
}

impl ChannelDesc {
    /// What `HcclChannelDescInit` produces, with the three fields a caller sets.
    /// `HcclChannelDescInit` is a `static inline` function of hccl_res.h, not an exported
    /// symbol, so its initialisation is reproduced here.
    fn new(remote_rank: u32, protocol: i32, notify_num: u32) -> Self {
        ChannelDesc {
            header: AbiHeader {
                version: CHANNEL_VERSION,
                magic_word: CHANNEL_MAGIC_WORD,
                size: size_of::<ChannelDesc>() as u32,
                reserved: 0,
            },
            remote_rank,
            channel_protocol: protocol,
            local_endpoint: EndpointDesc::unset(),
            remote_endpoint: EndpointDesc::unset(),
            notify_num,
            mem_handles: ptr::null_mut(),
            mem_handle_num: 0,
            attrs: Raw([0xFF; 128]),
        }
    }
}

/// The functions the backend calls, resolved once when the libraries load.
struct Functions {
    comm_init_all: unsafe extern "C" fn(u32, *mut i32, *mut RawHandle) -> HcclResult,
    comm_destroy: unsafe extern "C" fn(RawHandle) -> HcclResult,
    channel_acquire: unsafe extern "C" fn(RawHandle, i32, *const ChannelDesc, u32, *mut u64) -> HcclResult,
    thread_acquire: unsafe extern "C" fn(RawHandle, i32, u32, u32, *mut u64) -> HcclResult,
    thread_acquire_with_stream: unsafe extern "C" fn(RawHandle, i32, RawHandle, u32, *mut u64) -> HcclResult,
    get_hccl_buffer: unsafe extern "C" fn(RawHandle, *mut RawHandle, *mut u64) -> HcclResult,
    channel_get_hccl_buffer: unsafe extern "C" fn(RawHandle, u64, *mut RawHandle, *mut u64) -> HcclResult,
    channel_notify_record: unsafe extern "C" fn(u64, u64, u32) -> i32,
    channel_notify_wait: unsafe extern "C" fn(u64, u64, u32, u32) -> i32,
    thread_notify_record: unsafe extern "C" fn(u64, u64, u32) -> i32,
    thread_notify_wait: unsafe extern "C" fn(u64, u32, u32) -> i32,
    write: unsafe extern "C" fn(u64, u64, RawHandle, *const c_void, u64) -> i32,
    read: unsafe extern "C" fn(u64, u64, RawHandle, *const c_void, u64) -> i32,
    local_copy: unsafe extern "C" fn(u64, RawHandle, *const c_void, u64) -> i32,
    channel_fence: unsafe extern "C" fn(u64, u64) -> i32,
    fence: unsafe extern "C" fn(u64) -> i32,
    /// Marked experimental in hcomm_primitives.h: not every version exports it.
    write_with_notify: Option<unsafe extern "C" fn(u64, u64, RawHandle, *const c_void, u64, u32) -> i32>,
    /// Marked experimental in hcomm_primitives.h: not every version exports it.
    thread_synchronize: Option<unsafe extern "C" fn(u64) -> i32>,
    /// Newer than the channel APIs.
    set_notify_wait_timeout: Option<unsafe extern "C" fn(f32) -> i32>,
    error_string: Option<unsafe extern "C" fn(HcclResult) -> *const c_char>,
}

impl Functions {
    fn resolve(libraries: &[&Opened]) -> Result<Self, LoadError> {
        // SAFETY: every type below is the documented C prototype of its symbol
        // (HcclComm and aclrtStream are void*, the handles uint64_t, enums int).
        unsafe {
            Ok(Functions {
                comm_init_all: loader::function(libraries, "HcclCommInitAll", HINT)?,
                comm_destroy: loader::function(libraries, "HcclCommDestroy", HINT)?,
                channel_acquire: loader::function(libraries, "HcclChannelAcquire", HINT)?,
                thread_acquire: loader::function(libraries, "HcclThreadAcquire", HINT)?,
                thread_acquire_with_stream: loader::function(libraries, "HcclThreadAcquireWithStream", HINT)?,
                get_hccl_buffer: loader::function(libraries, "HcclGetHcclBuffer", HINT)?,
                channel_get_hccl_buffer: loader::function(libraries, "HcclChannelGetHcclBuffer", HINT)?,
                channel_notify_record: loader::function(libraries, "HcommChannelNotifyRecordOnThread", HINT)?,
                channel_notify_wait: loader::function(libraries, "HcommChannelNotifyWaitOnThread", HINT)?,
                thread_notify_record: loader::function(libraries, "HcommThreadNotifyRecordOnThread", HINT)?,
                thread_notify_wait: loader::function(libraries, "HcommThreadNotifyWaitOnThread", HINT)?,
                write: loader::function(libraries, "HcommWriteOnThread", HINT)?,
                read: loader::function(libraries, "HcommReadOnThread", HINT)?,
                local_copy: loader::function(libraries, "HcommLocalCopyOnThread", HINT)?,
                channel_fence: loader::function(libraries, "HcommChannelFenceOnThread", HINT)?,
                fence: loader::function(libraries, "HcommFenceOnThread", HINT)?,
                write_with_notify: loader::optional_function(libraries, "HcommWriteWithNotifyOnThread"),
                thread_synchronize: loader::optional_function(libraries, "HcommThreadSynchronize"),
                set_notify_wait_timeout: loader::optional_function(libraries, "HcommSetNotifyWaitTimeOut"),
                error_string: loader::optional_function(libraries, "HcclGetErrorString"),
            })
        }
    }
}

/// The loaded HCCL/HCOMM libraries.
pub struct Hccl {
    functions: Functions,
    /// Kept open for as long as the function pointers are used.
    _libraries: Vec<Opened>,
}

impl Hccl {
    /// Resolves every symbol in `libraries`, searched in order.
    pub fn load(libraries: Vec<Opened>) -> Result<Self, LoadError> {
        let searched: Vec<&Opened> = libraries.iter().collect();
        Ok(Hccl {
            functions: Functions::resolve(&searched)?,
            _libraries: libraries,
        })
    }

    fn check(&self, api: &'static str, code: i32) -> Result<(), Fault> {
        if code == 0 {
            return Ok(());
        }
        Err(Fault::Api {
            api: api.to_string(),
            code: code.into(),
            detail: self.error_text(code),
        })
    }

    fn error_text(&self, code: HcclResult) -> String {
        let Some(error_string) = self.functions.error_string else {
            return String::new();
        };
        // SAFETY: HcclGetErrorString takes any code and returns NULL or a static
        // NUL-terminated string.
        let text = unsafe { error_string(code) };
        if text.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL and NUL-terminated, with static lifetime.
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }

    /// `HcclCommInitAll`: one communicator per device, in `devices` order (rank i is
    /// `devices[i]`), all in this process.
    pub fn comm_init_all(&self, devices: &[i32]) -> Result<Vec<Comm>, Fault> {
        let mut devices = devices.to_vec();
        let mut comms = vec![ptr::null_mut(); devices.len()];
        let count = devices.len() as u32;
        // SAFETY: `devices` holds `count` ints and `comms` room for `count` handles, both
        // alive for the whole (synchronous) call.
        let code = unsafe { (self.functions.comm_init_all)(count, devices.as_mut_ptr(), comms.as_mut_ptr()) };
        self.check("HcclCommInitAll", code)?;
        Ok(comms.into_iter().map(Comm).collect())
    }

    pub fn comm_destroy(&self, comm: Comm) -> Result<(), Fault> {
        // SAFETY: `comm` came from HcclCommInitAll and is destroyed once.
        self.check("HcclCommDestroy", unsafe { (self.functions.comm_destroy)(comm.0) })
    }

    /// `HcclChannelAcquire` of one channel to `remote_rank`.
    pub fn channel_acquire(
        &self,
        comm: Comm,
        engine: i32,
        (remote_rank, protocol, notify_num): (u32, i32, u32),
    ) -> Result<ChannelHandle, Fault> {
        let desc = ChannelDesc::new(remote_rank, protocol, notify_num);
        let mut channel = 0u64;
        // SAFETY: `desc` is one fully initialised HcclChannelDesc (the layout is checked
        // at compile time) and `channel` room for one handle, both alive for the call.
        let code = unsafe { (self.functions.channel_acquire)(comm.0, engine, &desc, 1, &mut channel) };
        self.check("HcclChannelAcquire", code)?;
        Ok(ChannelHandle(channel))
    }

    /// `HcclThreadAcquire` of one thread with `notify_num` notifies.
    pub fn thread_acquire(&self, comm: Comm, engine: i32, notify_num: u32) -> Result<ThreadHandle, Fault> {
        let mut thread = 0u64;
        // SAFETY: `thread` is room for the one handle requested.
        let code = unsafe { (self.functions.thread_acquire)(comm.0, engine, 1, notify_num, &mut thread) };
        self.check("HcclThreadAcquire", code)?;
        Ok(ThreadHandle(thread))
    }

    /// `HcclThreadAcquireWithStream`: a thread that runs on `stream`.
    pub fn thread_acquire_with_stream(
        &self,
        comm: Comm,
        engine: i32,
        stream: Stream,
        notify_num: u32,
    ) -> Result<ThreadHandle, Fault> {
        let mut thread = 0u64;
        // SAFETY: `stream` is live; `thread` is a valid out-pointer.
        let code = unsafe {
            (self.functions.thread_acquire_with_stream)(comm.0, engine, stream.raw(), notify_num, &mut thread)
        };
        self.check("HcclThreadAcquireWithStream", code)?;
        Ok(ThreadHandle(thread))
    }

    /// `HcclGetHcclBuffer`: this rank's HCCL buffer (library-owned device memory).
    pub fn hccl_buffer(&self, comm: Comm) -> Result<Allocation, Fault> {
        let (mut buffer, mut size) = (ptr::null_mut(), 0u64);
        // SAFETY: both out-pointers are valid for the call.
        let code = unsafe { (self.functions.get_hccl_buffer)(comm.0, &mut buffer, &mut size) };
        self.check("HcclGetHcclBuffer", code)?;
        Ok(Allocation::new(device_ptr(buffer), size, Place::Device))
    }

    /// `HcclChannelGetHcclBuffer`: the HCCL buffer of the peer at the far end of `channel`.
    pub fn channel_hccl_buffer(&self, comm: Comm, channel: ChannelHandle) -> Result<Allocation, Fault> {
        let (mut buffer, mut size) = (ptr::null_mut(), 0u64);
        // SAFETY: both out-pointers are valid for the call.
        let code = unsafe { (self.functions.channel_get_hccl_buffer)(comm.0, channel.0, &mut buffer, &mut size) };
        self.check("HcclChannelGetHcclBuffer", code)?;
        Ok(Allocation::new(device_ptr(buffer), size, Place::Device))
    }

    pub fn channel_notify_record(&self, thread: ThreadHandle, channel: ChannelHandle, index: u32) -> Result<(), Fault> {
        // SAFETY: plain handle and integer arguments.
        let code = unsafe { (self.functions.channel_notify_record)(thread.0, channel.0, index) };
        self.check("HcommChannelNotifyRecordOnThread", code)
    }

    /// `timeout` in seconds, 0 = wait forever.
    pub fn channel_notify_wait(
        &self,
        thread: ThreadHandle,
        channel: ChannelHandle,
        index: u32,
        timeout: u32,
    ) -> Result<(), Fault> {
        // SAFETY: plain handle and integer arguments.
        let code = unsafe { (self.functions.channel_notify_wait)(thread.0, channel.0, index, timeout) };
        self.check("HcommChannelNotifyWaitOnThread", code)
    }

    pub fn thread_notify_record(&self, thread: ThreadHandle, target: ThreadHandle, index: u32) -> Result<(), Fault> {
        // SAFETY: plain handle and integer arguments.
        let code = unsafe { (self.functions.thread_notify_record)(thread.0, target.0, index) };
        self.check("HcommThreadNotifyRecordOnThread", code)
    }

    /// `timeout` in seconds, 0 = wait forever.
    pub fn thread_notify_wait(&self, thread: ThreadHandle, index: u32, timeout: u32) -> Result<(), Fault> {
        // SAFETY: plain handle and integer arguments.
        let code = unsafe { (self.functions.thread_notify_wait)(thread.0, index, timeout) };
        self.check("HcommThreadNotifyWaitOnThread", code)
    }

    /// `HcommWriteOnThread`, or `HcommWriteWithNotifyOnThread` when `notify` is given:
    /// `src` (local) into `dst` (the peer's HCCL buffer).
    pub fn write(
        &self,
        thread: ThreadHandle,
        channel: ChannelHandle,
        (dst, src): (Span, Span),
        notify: Option<u32>,
    ) -> Result<(), Fault> {
        let Some(index) = notify else {
            // SAFETY: both spans were bounds-checked against live HCCL buffers, which the
            // library owns for the communicator's lifetime.
            let code = unsafe { (self.functions.write)(thread.0, channel.0, dst.ptr.raw(), src.ptr.raw(), src.len) };
            return self.check("HcommWriteOnThread", code);
        };
        let write_with_notify = self.functions.write_with_notify.ok_or_else(|| Fault::Unsupported {
            what: "HcommWriteWithNotifyOnThread (not exported by this HCOMM library)".into(),
        })?;
        // SAFETY: as above; `index` is a plain integer.
        let code = unsafe { write_with_notify(thread.0, channel.0, dst.ptr.raw(), src.ptr.raw(), src.len, index) };
        self.check("HcommWriteWithNotifyOnThread", code)
    }

    /// `HcommReadOnThread`: `src` (the peer's HCCL buffer) into `dst` (local).
    pub fn read(&self, thread: ThreadHandle, channel: ChannelHandle, dst: Span, src: Span) -> Result<(), Fault> {
        // SAFETY: both spans were bounds-checked against live HCCL buffers.
        let code = unsafe { (self.functions.read)(thread.0, channel.0, dst.ptr.raw(), src.ptr.raw(), src.len) };
        self.check("HcommReadOnThread", code)
    }

    /// `HcommLocalCopyOnThread`
    pub fn local_copy(&self, thread: ThreadHandle, dst: Span, src: Span) -> Result<(), Fault> {
        // SAFETY: both spans were bounds-checked against live allocations, which outlive
        // the queued copy.
        let code = unsafe { (self.functions.local_copy)(thread.0, dst.ptr.raw(), src.ptr.raw(), src.len) };
        self.check("HcommLocalCopyOnThread", code)
    }

    /// `HcommChannelFenceOnThread`, or `HcommFenceOnThread` without a channel.
    pub fn fence(&self, thread: ThreadHandle, channel: Option<ChannelHandle>) -> Result<(), Fault> {
        match channel {
            // SAFETY: plain handle arguments.
            Some(channel) => self.check("HcommChannelFenceOnThread", unsafe {
                (self.functions.channel_fence)(thread.0, channel.0)
            }),
            // SAFETY: plain handle argument.
            None => self.check("HcommFenceOnThread", unsafe { (self.functions.fence)(thread.0) }),
        }
    }

    /// Whether `HcommThreadSynchronize` is exported.
    pub fn has_thread_synchronize(&self) -> bool {
        self.functions.thread_synchronize.is_some()
    }

    /// `HcommThreadSynchronize`: blocks until everything issued to `thread` has run.
    pub fn thread_synchronize(&self, thread: ThreadHandle) -> Result<(), Fault> {
        let thread_synchronize = self.functions.thread_synchronize.ok_or_else(|| Fault::Unsupported {
            what: "HcommThreadSynchronize (not exported by this HCOMM library)".into(),
        })?;
        // SAFETY: plain handle argument.
        self.check("HcommThreadSynchronize", unsafe { thread_synchronize(thread.0) })
    }

    /// `HcommSetNotifyWaitTimeOut` (seconds, 0 = forever), when exported. It only sets
    /// the timeout of the `*WithDefaultTimeout` waits, so a library without it changes
    /// nothing this backend issues.
    pub fn set_notify_wait_timeout(&self, seconds: u32) -> Result<(), Fault> {
        let Some(set_timeout) = self.functions.set_notify_wait_timeout else {
            return Ok(());
        };
        // SAFETY: plain float argument (the docs accept whole seconds only).
        self.check("HcommSetNotifyWaitTimeOut", unsafe { set_timeout(seconds as f32) })
    }
}

/// A buffer address the library returned.
fn device_ptr(raw: RawHandle) -> DevicePtr {
    DevicePtr::from_raw(raw)
}
