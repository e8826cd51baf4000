//! The ACL runtime (`libascendcl.so`): prototypes, handles, and one safe wrapper per call.
//!
//! Prototypes are those of `acl/acl_rt.h` as documented in CANN's runtime API reference
//! (`reference/ascend-apis.md` §1, `reference/cann-runtime-event-api.zh.md`). Every
//! wrapper checks the `aclError` it gets and turns a failure into [`Fault::Api`] with the
//! exact C name and, where the runtime offers one, its most recent error message.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use super::loader::{self, LoadError, Opened};
use crate::backend::Fault;

/// `aclError`: 0 is success.
type AclError = i32;
type RawHandle = *mut c_void;

/// The hint printed when the runtime cannot be found.
pub const HINT: &str = "set ASCEND_HOME_PATH to the CANN install (e.g. `source \
     /usr/local/Ascend/ascend-toolkit/set_env.sh`), or add its lib64 directory to LD_LIBRARY_PATH";

/// Declares opaque runtime handles. They are tokens the runtime hands out; it accepts them
/// from any host thread of the process, so they may cross threads.
macro_rules! handles {
    ($($(#[$meta:meta])* $name:ident),*) => {$(
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(RawHandle);
        // SAFETY: the handle is an opaque token; the runtime serialises access to the
        // object behind it and documents its calls as callable from any host thread.
        unsafe impl Send for $name {}
        // SAFETY: as above; the token itself is never dereferenced on the Rust side.
        unsafe impl Sync for $name {}
    )*};
}
pub(super) use handles;

impl Stream {
    /// The default stream: `NULL` as an `aclrtStream` argument.
    pub const DEFAULT: Stream = Stream(ptr::null_mut());
}

handles!(
    /// `aclrtStream`
    Stream,
    /// `aclrtEvent`
    Event,
    /// `aclrtNotify`
    Notify,
    /// An address in device or pinned host memory.
    DevicePtr
);

impl Stream {
    /// For the HCCL calls that take an `aclrtStream`.
    pub(super) fn raw(self) -> RawHandle {
        self.0
    }
}

impl DevicePtr {
    /// For the HCCL calls that take a buffer address.
    pub(super) fn raw(self) -> RawHandle {
        self.0
    }

    /// An address a runtime call returned.
    pub(super) fn from_raw(raw: RawHandle) -> Self {
        DevicePtr(raw)
    }

    /// The address `bytes` further on. Never dereferenced here: the runtime does.
    pub fn offset(self, bytes: u64) -> DevicePtr {
        DevicePtr(self.0.wrapping_byte_add(bytes as usize))
    }
}

/// How an event is created: the creator API and its flag bitmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventCreation {
    /// `aclrtCreateEvent`
    Plain,
    /// `aclrtCreateEventWithFlag`
    WithFlag(u32),
    /// `aclrtCreateEventExWithFlag`
    ExWithFlag(u32),
}

/// `ACL_EVENT_SYNC`: the event may be waited on by other streams.
pub const ACL_EVENT_SYNC: u32 = 0x1;
/// `ACL_NOTIFY_DEFAULT`
const ACL_NOTIFY_DEFAULT: u64 = 0x0;
/// `ACL_MEM_MALLOC_HUGE_FIRST`: huge pages when available, normal pages otherwise.
const ACL_MEM_MALLOC_HUGE_FIRST: i32 = 0;
/// `ACL_ERROR_REPEAT_INITIALIZE`: `aclInit` was already called in this process.
const ACL_ERROR_REPEAT_INITIALIZE: AclError = 100002;
/// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`
const ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: AclError = 507046;
/// `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT`
const ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: AclError = 507047;

/// The `acl_rt.h` functions the backend calls, resolved once when the library loads.
struct Functions {
    init: unsafe extern "C" fn(*const c_char) -> AclError,
    set_device: unsafe extern "C" fn(i32) -> AclError,
    reset_device: unsafe extern "C" fn(i32) -> AclError,
    synchronize_device: unsafe extern "C" fn() -> AclError,
    create_stream: unsafe extern "C" fn(*mut RawHandle) -> AclError,
    destroy_stream: unsafe extern "C" fn(RawHandle) -> AclError,
    synchronize_stream: unsafe extern "C" fn(RawHandle) -> AclError,
    synchronize_stream_with_timeout: unsafe extern "C" fn(RawHandle, i32) -> AclError,
    create_event: unsafe extern "C" fn(*mut RawHandle) -> AclError,
    create_event_with_flag: unsafe extern "C" fn(*mut RawHandle, u32) -> AclError,
    create_event_ex_with_flag: unsafe extern "C" fn(*mut RawHandle, u32) -> AclError,
    destroy_event: unsafe extern "C" fn(RawHandle) -> AclError,
    record_event: unsafe extern "C" fn(RawHandle, RawHandle) -> AclError,
    stream_wait_event: unsafe extern "C" fn(RawHandle, RawHandle) -> AclError,
    stream_wait_event_with_timeout: unsafe extern "C" fn(RawHandle, RawHandle, i32) -> AclError,
    reset_event: unsafe extern "C" fn(RawHandle, RawHandle) -> AclError,
    synchronize_event: unsafe extern "C" fn(RawHandle) -> AclError,
    synchronize_event_with_timeout: unsafe extern "C" fn(RawHandle, i32) -> AclError,
    query_event_status: unsafe extern "C" fn(RawHandle, *mut i32) -> AclError,
    query_event_wait_status: unsafe extern "C" fn(RawHandle, *mut i32) -> AclError,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, RawHandle, RawHandle) -> AclError,
    set_op_wait_timeout: unsafe extern "C" fn(u32) -> AclError,
    create_notify: unsafe extern "C" fn(*mut RawHandle, u64) -> AclError,
    destroy_notify: unsafe extern "C" fn(RawHandle) -> AclError,
    record_notify: unsafe extern "C" fn(RawHandle, RawHandle) -> AclError,
    wait_and_reset_notify: unsafe extern "C" fn(RawHandle, RawHandle, u32) -> AclError,
    malloc: unsafe extern "C" fn(*mut RawHandle, usize, i32) -> AclError,
    malloc_host: unsafe extern "C" fn(*mut RawHandle, usize) -> AclError,
    free: unsafe extern "C" fn(RawHandle) -> AclError,
    free_host: unsafe extern "C" fn(RawHandle) -> AclError,
    memcpy: unsafe extern "C" fn(RawHandle, usize, *const c_void, usize, i32) -> AclError,
    memcpy_async: unsafe extern "C" fn(RawHandle, usize, *const c_void, usize, i32, RawHandle) -> AclError,
    memset_async: unsafe extern "C" fn(RawHandle, usize, i32, usize, RawHandle) -> AclError,
    /// `aclGetRecentErrMsg`: the calling thread's last error text (not in every version).
    recent_error: Option<unsafe extern "C" fn() -> *const c_char>,
}

impl Functions {
    fn resolve(library: &Opened) -> Result<Self, LoadError> {
        let libraries = [library];
        // SAFETY: every type below is the documented C prototype of its symbol
        // (acl_rt.h: aclError is int, every handle is void*, enums are int).
        unsafe {
            Ok(Functions {
                init: loader::function(&libraries, "aclInit", HINT)?,
                set_device: loader::function(&libraries, "aclrtSetDevice", HINT)?,
                reset_device: loader::function(&libraries, "aclrtResetDevice", HINT)?,
                synchronize_device: loader::function(&libraries, "aclrtSynchronizeDevice", HINT)?,
                create_stream: loader::function(&libraries, "aclrtCreateStream", HINT)?,
                destroy_stream: loader::function(&libraries, "aclrtDestroyStream", HINT)?,
                synchronize_stream: loader::function(&libraries, "aclrtSynchronizeStream", HINT)?,
                synchronize_stream_with_timeout: loader::function(
                    &libraries,
                    "aclrtSynchronizeStreamWithTimeout",
                    HINT,
                )?,
                create_event: loader::function(&libraries, "aclrtCreateEvent", HINT)?,
                create_event_with_flag: loader::function(&libraries, "aclrtCreateEventWithFlag", HINT)?,
                create_event_ex_with_flag: loader::function(&libraries, "aclrtCreateEventExWithFlag", HINT)?,
                destroy_event: loader::function(&libraries, "aclrtDestroyEvent", HINT)?,
                record_event: loader::function(&libraries, "aclrtRecordEvent", HINT)?,
                stream_wait_event: loader::function(&libraries, "aclrtStreamWaitEvent", HINT)?,
                stream_wait_event_with_timeout: loader::function(&libraries, "aclrtStreamWaitEventWithTimeout", HINT)?,
                reset_event: loader::function(&libraries, "aclrtResetEvent", HINT)?,
                synchronize_event: loader::function(&libraries, "aclrtSynchronizeEvent", HINT)?,
                synchronize_event_with_timeout: loader::function(&libraries, "aclrtSynchronizeEventWithTimeout", HINT)?,
                query_event_status: loader::function(&libraries, "aclrtQueryEventStatus", HINT)?,
                query_event_wait_status: loader::function(&libraries, "aclrtQueryEventWaitStatus", HINT)?,
                event_elapsed_time: loader::function(&libraries, "aclrtEventElapsedTime", HINT)?,
                set_op_wait_timeout: loader::function(&libraries, "aclrtSetOpWaitTimeout", HINT)?,
                create_notify: loader::function(&libraries, "aclrtCreateNotify", HINT)?,
                destroy_notify: loader::function(&libraries, "aclrtDestroyNotify", HINT)?,
                record_notify: loader::function(&libraries, "aclrtRecordNotify", HINT)?,
                wait_and_reset_notify: loader::function(&libraries, "aclrtWaitAndResetNotify", HINT)?,
                malloc: loader::function(&libraries, "aclrtMalloc", HINT)?,
                malloc_host: loader::function(&libraries, "aclrtMallocHost", HINT)?,
                free: loader::function(&libraries, "aclrtFree", HINT)?,
                free_host: loader::function(&libraries, "aclrtFreeHost", HINT)?,
                memcpy: loader::function(&libraries, "aclrtMemcpy", HINT)?,
                memcpy_async: loader::function(&libraries, "aclrtMemcpyAsync", HINT)?,
                memset_async: loader::function(&libraries, "aclrtMemsetAsync", HINT)?,
                recent_error: loader::optional_function(&libraries, "aclGetRecentErrMsg"),
            })
        }
    }
}

/// The loaded ACL runtime.
pub struct Runtime {
    functions: Functions,
    /// Kept open for as long as the function pointers are used.
    _library: Opened,
}

impl Runtime {
    pub fn load(library: Opened) -> Result<Self, LoadError> {
        Ok(Runtime {
            functions: Functions::resolve(&library)?,
            _library: library,
        })
    }

    /// `Ok` for 0, else the fault for `api`, with the runtime's message for this thread.
    fn check(&self, api: &'static str, code: AclError) -> Result<(), Fault> {
        if code == 0 {
            return Ok(());
        }
        Err(Fault::Api {
            api: api.to_string(),
            code: code.into(),
            detail: self.recent_error(),
        })
    }

    /// Like [`Runtime::check`] for a call with a timeout: its timeout codes are timeouts.
    fn check_timed(&self, api: &'static str, code: AclError, timeout_ms: i32) -> Result<(), Fault> {
        match code {
            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT | ACL_ERROR_RT_EVENT_SYNC_TIMEOUT => Err(Fault::Timeout {
                what: format!("{api} ({timeout_ms} ms)"),
            }),
            _ => self.check(api, code),
        }
    }

    fn recent_error(&self) -> String {
        let Some(recent_error) = self.functions.recent_error else {
            return String::new();
        };
        // SAFETY: aclGetRecentErrMsg takes no arguments and returns NULL or a
        // NUL-terminated string owned by the runtime, valid until the thread's next call.
        let text = unsafe { recent_error() };
        if text.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL, NUL-terminated, and read before any other runtime call.
        unsafe { CStr::from_ptr(text) }.to_string_lossy().trim().to_string()
    }

    /// `aclInit(NULL)`; a second initialisation in the same process is not an error.
    pub fn init(&self) -> Result<(), Fault> {
        // SAFETY: a NULL config path is documented as "no configuration file".
        let code = unsafe { (self.functions.init)(ptr::null()) };
        if code == ACL_ERROR_REPEAT_INITIALIZE {
            return Ok(());
        }
        self.check("aclInit", code)
    }

    pub fn set_device(&self, device: i32) -> Result<(), Fault> {
        // SAFETY: plain integer argument.
        self.check("aclrtSetDevice", unsafe { (self.functions.set_device)(device) })
    }

    pub fn reset_device(&self, device: i32) -> Result<(), Fault> {
        // SAFETY: plain integer argument.
        self.check("aclrtResetDevice", unsafe { (self.functions.reset_device)(device) })
    }

    pub fn synchronize_device(&self) -> Result<(), Fault> {
        // SAFETY: no arguments; acts on the calling thread's current device.
        self.check("aclrtSynchronizeDevice", unsafe {
            (self.functions.synchronize_device)()
        })
    }

    pub fn create_stream(&self) -> Result<Stream, Fault> {
        let mut stream = ptr::null_mut();
        // SAFETY: `stream` is a valid out-pointer for the duration of the call.
        self.check("aclrtCreateStream", unsafe {
            (self.functions.create_stream)(&mut stream)
        })?;
        Ok(Stream(stream))
    }

    pub fn destroy_stream(&self, stream: Stream) -> Result<(), Fault> {
        // SAFETY: `stream` came from aclrtCreateStream and is destroyed once.
        self.check("aclrtDestroyStream", unsafe {
            (self.functions.destroy_stream)(stream.0)
        })
    }

    /// `aclrtSynchronizeStream`, or `…WithTimeout` (milliseconds, -1 = forever).
    pub fn synchronize_stream(&self, stream: Stream, timeout_ms: Option<i32>) -> Result<(), Fault> {
        match timeout_ms {
            // SAFETY: `stream` is a live stream handle.
            None => self.check("aclrtSynchronizeStream", unsafe {
                (self.functions.synchronize_stream)(stream.0)
            }),
            Some(ms) => self.check_timed(
                "aclrtSynchronizeStreamWithTimeout",
                // SAFETY: `stream` is a live stream handle; `ms` is a plain integer.
                unsafe { (self.functions.synchronize_stream_with_timeout)(stream.0, ms) },
                ms,
            ),
        }
    }

    pub fn create_event(&self, creation: EventCreation) -> Result<Event, Fault> {
        let mut event = ptr::null_mut();
        // SAFETY: `event` is a valid out-pointer for the duration of each call.
        let (api, code) = unsafe {
            match creation {
                EventCreation::Plain => ("aclrtCreateEvent", (self.functions.create_event)(&mut event)),
                EventCreation::WithFlag(flag) => (
                    "aclrtCreateEventWithFlag",
                    (self.functions.create_event_with_flag)(&mut event, flag),
                ),
                EventCreation::ExWithFlag(flag) => (
                    "aclrtCreateEventExWithFlag",
                    (self.functions.create_event_ex_with_flag)(&mut event, flag),
                ),
            }
        };
        self.check(api, code)?;
        Ok(Event(event))
    }

    pub fn destroy_event(&self, event: Event) -> Result<(), Fault> {
        // SAFETY: `event` came from an event creator and is destroyed once.
        self.check("aclrtDestroyEvent", unsafe { (self.functions.destroy_event)(event.0) })
    }

    pub fn record_event(&self, event: Event, stream: Stream) -> Result<(), Fault> {
        // SAFETY: both handles are live.
        self.check("aclrtRecordEvent", unsafe {
            (self.functions.record_event)(event.0, stream.0)
        })
    }

    /// `aclrtStreamWaitEvent`, or `…WithTimeout` (seconds per the current docs, 0 = never).
    pub fn stream_wait_event(&self, stream: Stream, event: Event, timeout: Option<i32>) -> Result<(), Fault> {
        match timeout {
            // SAFETY: both handles are live.
            None => self.check("aclrtStreamWaitEvent", unsafe {
                (self.functions.stream_wait_event)(stream.0, event.0)
            }),
            // SAFETY: both handles are live; `value` is a plain integer.
            Some(value) => self.check("aclrtStreamWaitEventWithTimeout", unsafe {
                (self.functions.stream_wait_event_with_timeout)(stream.0, event.0, value)
            }),
        }
    }

    pub fn reset_event(&self, event: Event, stream: Stream) -> Result<(), Fault> {
        // SAFETY: both handles are live.
        self.check("aclrtResetEvent", unsafe {
            (self.functions.reset_event)(event.0, stream.0)
        })
    }

    /// `aclrtSynchronizeEvent`, or `…WithTimeout` (milliseconds, -1 = forever).
    pub fn synchronize_event(&self, event: Event, timeout_ms: Option<i32>) -> Result<(), Fault> {
        match timeout_ms {
            // SAFETY: `event` is live.
            None => self.check("aclrtSynchronizeEvent", unsafe {
                (self.functions.synchronize_event)(event.0)
            }),
            Some(ms) => self.check_timed(
                "aclrtSynchronizeEventWithTimeout",
                // SAFETY: `event` is live; `ms` is a plain integer.
                unsafe { (self.functions.synchronize_event_with_timeout)(event.0, ms) },
                ms,
            ),
        }
    }

    /// `aclrtQueryEventStatus`, or `aclrtQueryEventWaitStatus`; the status is not needed.
    pub fn query_event(&self, event: Event, wait_status: bool) -> Result<(), Fault> {
        let mut status = 0i32;
        // SAFETY: `event` is live; `status` is a valid out-pointer to an enum (int).
        let (api, code) = unsafe {
            if wait_status {
                (
                    "aclrtQueryEventWaitStatus",
                    (self.functions.query_event_wait_status)(event.0, &mut status),
                )
            } else {
                (
                    "aclrtQueryEventStatus",
                    (self.functions.query_event_status)(event.0, &mut status),
                )
            }
        };
        self.check(api, code)
    }

    /// `aclrtEventElapsedTime`; the time is not needed.
    pub fn event_elapsed_time(&self, start: Event, end: Event) -> Result<(), Fault> {
        let mut ms = 0f32;
        // SAFETY: both events are live; `ms` is a valid out-pointer to a float.
        let code = unsafe { (self.functions.event_elapsed_time)(&mut ms, start.0, end.0) };
        self.check("aclrtEventElapsedTime", code)
    }

    /// `aclrtSetOpWaitTimeout` (seconds, 0 = no timeout).
    pub fn set_op_wait_timeout(&self, seconds: u32) -> Result<(), Fault> {
        // SAFETY: plain integer argument.
        self.check("aclrtSetOpWaitTimeout", unsafe {
            (self.functions.set_op_wait_timeout)(seconds)
        })
    }

    pub fn create_notify(&self) -> Result<Notify, Fault> {
        let mut notify = ptr::null_mut();
        // SAFETY: `notify` is a valid out-pointer for the duration of the call.
        let code = unsafe { (self.functions.create_notify)(&mut notify, ACL_NOTIFY_DEFAULT) };
        self.check("aclrtCreateNotify", code)?;
        Ok(Notify(notify))
    }

    pub fn destroy_notify(&self, notify: Notify) -> Result<(), Fault> {
        // SAFETY: `notify` came from aclrtCreateNotify and is destroyed once.
        self.check("aclrtDestroyNotify", unsafe {
            (self.functions.destroy_notify)(notify.0)
        })
    }

    pub fn record_notify(&self, notify: Notify, stream: Stream) -> Result<(), Fault> {
        // SAFETY: both handles are live.
        self.check("aclrtRecordNotify", unsafe {
            (self.functions.record_notify)(notify.0, stream.0)
        })
    }

    /// `aclrtWaitAndResetNotify`; `timeout` 0 waits forever.
    pub fn wait_and_reset_notify(&self, notify: Notify, stream: Stream, timeout: u32) -> Result<(), Fault> {
        // SAFETY: both handles are live; `timeout` is a plain integer.
        let code = unsafe { (self.functions.wait_and_reset_notify)(notify.0, stream.0, timeout) };
        self.check("aclrtWaitAndResetNotify", code)
    }

    /// `aclrtMalloc`
    pub fn malloc(&self, size: u64) -> Result<Allocation, Fault> {
        let mut memory = ptr::null_mut();
        // SAFETY: `memory` is a valid out-pointer; size and policy are plain values.
        let code = unsafe { (self.functions.malloc)(&mut memory, byte_count(size), ACL_MEM_MALLOC_HUGE_FIRST) };
        self.check("aclrtMalloc", code)?;
        Ok(Allocation::new(DevicePtr(memory), size, Place::Device))
    }

    /// `aclrtMallocHost`: pinned host memory, which the host reads and writes directly.
    pub fn malloc_host(&self, size: u64) -> Result<Allocation, Fault> {
        let mut memory = ptr::null_mut();
        // SAFETY: `memory` is a valid out-pointer; size is a plain value.
        let code = unsafe { (self.functions.malloc_host)(&mut memory, byte_count(size)) };
        self.check("aclrtMallocHost", code)?;
        Ok(Allocation::new(DevicePtr(memory), size, Place::Host))
    }

    /// `aclrtFree` or `aclrtFreeHost`, by where the allocation lives.
    pub fn free(&self, allocation: Allocation) -> Result<(), Fault> {
        // SAFETY: the allocation came from aclrtMalloc / aclrtMallocHost (the only
        // constructors that hand one out as owned) and is freed once, after the device
        // idled, so no queued work still uses it.
        match allocation.place {
            Place::Device => self.check("aclrtFree", unsafe { (self.functions.free)(allocation.base.0) }),
            Place::Host => self.check("aclrtFreeHost", unsafe {
                (self.functions.free_host)(allocation.base.0)
            }),
        }
    }

    /// `aclrtMemcpy`: all of `src` into `dst`, on the calling host thread.
    pub fn memcpy(&self, dst: Span, src: Span) -> Result<(), Fault> {
        let kind = MemcpyKind::between(src.place, dst.place);
        // SAFETY: both spans were bounds-checked against live allocations; the runtime
        // checks `count <= destMax` itself.
        let code = unsafe {
            (self.functions.memcpy)(
                dst.ptr.0,
                byte_count(dst.room),
                src.ptr.0,
                byte_count(src.len),
                kind as i32,
            )
        };
        self.check("aclrtMemcpy", code)
    }

    /// `aclrtMemcpyAsync`: all of `src` into `dst`, on `stream`.
    pub fn memcpy_async(&self, dst: Span, src: Span, stream: Stream) -> Result<(), Fault> {
        let kind = MemcpyKind::between(src.place, dst.place);
        // SAFETY: as for `memcpy`; the allocations outlive the queued copy because the
        // backend frees memory only once the device is idle.
        let code = unsafe {
            (self.functions.memcpy_async)(
                dst.ptr.0,
                byte_count(dst.room),
                src.ptr.0,
                byte_count(src.len),
                kind as i32,
                stream.0,
            )
        };
        self.check("aclrtMemcpyAsync", code)
    }

    /// `aclrtMemsetAsync`: every byte of `dst` set to `value`, on `stream`.
    pub fn memset_async(&self, dst: Span, value: u8, stream: Stream) -> Result<(), Fault> {
        // SAFETY: the span was bounds-checked against a live allocation, which outlives
        // the queued work.
        let code = unsafe {
            (self.functions.memset_async)(
                dst.ptr.0,
                byte_count(dst.room),
                value.into(),
                byte_count(dst.len),
                stream.0,
            )
        };
        self.check("aclrtMemsetAsync", code)
    }

    /// The bytes of `src`, copied to the host with `aclrtMemcpy` (host spans are read
    /// directly).
    pub fn read(&self, src: Span) -> Result<Vec<u8>, Fault> {
        if let Some(bytes) = src.read_host() {
            return Ok(bytes);
        }
        let mut bytes = vec![0u8; byte_count(src.len)];
        let kind = MemcpyKind::DeviceToHost;
        // SAFETY: `bytes` is `src.len` writable bytes of host memory for the whole
        // (synchronous) call; `src` was bounds-checked against a live allocation.
        let code = unsafe {
            (self.functions.memcpy)(
                bytes.as_mut_ptr().cast(),
                bytes.len(),
                src.ptr.0,
                bytes.len(),
                kind as i32,
            )
        };
        self.check("aclrtMemcpy", code)?;
        Ok(bytes)
    }

    /// Sets every byte of `dst` to `value`: directly for host spans, else by copying a
    /// filled host buffer with `aclrtMemcpy`.
    pub fn fill(&self, dst: Span, value: u8) -> Result<(), Fault> {
        if dst.fill_host(value) {
            return Ok(());
        }
        let bytes = vec![value; byte_count(dst.len)];
        let kind = MemcpyKind::HostToDevice;
        // SAFETY: `bytes` is readable for the whole (synchronous) call; `dst` was
        // bounds-checked against a live allocation and has `room` bytes of space.
        let code = unsafe {
            (self.functions.memcpy)(
                dst.ptr.0,
                byte_count(dst.room),
                bytes.as_ptr().cast(),
                bytes.len(),
                kind as i32,
            )
        };
        self.check("aclrtMemcpy", code)
    }
}

/// Where memory lives: what `aclrtMemcpyKind` a copy needs, and whether the host may touch
/// it directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Device,
    /// Pinned host memory (`aclrtMallocHost`).
    Host,
}

/// `aclrtMemcpyKind`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
enum MemcpyKind {
    HostToHost = 0,
    HostToDevice = 1,
    DeviceToHost = 2,
    DeviceToDevice = 3,
}

impl MemcpyKind {
    fn between(src: Place, dst: Place) -> Self {
        match (src, dst) {
            (Place::Host, Place::Host) => MemcpyKind::HostToHost,
            (Place::Host, Place::Device) => MemcpyKind::HostToDevice,
            (Place::Device, Place::Host) => MemcpyKind::DeviceToHost,
            (Place::Device, Place::Device) => MemcpyKind::DeviceToDevice,
        }
    }
}

/// A block of memory: one the backend allocated, or an HCCL buffer the library owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    base: DevicePtr,
    size: u64,
    place: Place,
}

impl Allocation {
    /// Only the allocators of this crate's ACL backend construct allocations, with the
    /// size the runtime gave them: that is what makes [`Allocation::span`]'s check sound.
    pub(super) fn new(base: DevicePtr, size: u64, place: Place) -> Self {
        Allocation { base, size, place }
    }

    /// Bytes `start..end`, or `None` when they are not inside the allocation.
    pub fn span(&self, start: u64, end: u64) -> Option<Span> {
        (start <= end && end <= self.size).then(|| Span {
            ptr: self.base.offset(start),
            len: end - start,
            room: self.size - start,
            place: self.place,
        })
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

/// A bounds-checked byte range of a live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub ptr: DevicePtr,
    pub len: u64,
    /// Bytes from `ptr` to the end of the allocation (`destMax`).
    pub room: u64,
    pub place: Place,
}

impl Span {
    /// The bytes of a host span, read directly; `None` for device memory.
    pub fn read_host(self) -> Option<Vec<u8>> {
        (self.place == Place::Host).then(|| {
            let len = byte_count(self.len);
            let mut bytes = vec![0u8; len];
            // SAFETY: a host span lies inside a live aclrtMallocHost allocation (checked
            // by `Allocation::span`), and `bytes` is a distinct buffer of the same length.
            unsafe { ptr::copy_nonoverlapping(self.ptr.0.cast::<u8>(), bytes.as_mut_ptr(), len) };
            bytes
        })
    }

    /// Sets every byte of a host span to `value`; `false` for device memory.
    pub fn fill_host(self, value: u8) -> bool {
        if self.place != Place::Host {
            return false;
        }
        // SAFETY: as in `read_host`: writable pinned host memory, bounds-checked.
        unsafe { ptr::write_bytes(self.ptr.0.cast::<u8>(), value, byte_count(self.len)) };
        true
    }
}

/// A byte count as `size_t`: ranges come from allocations this process made, so they fit.
fn byte_count(bytes: u64) -> usize {
    usize::try_from(bytes).unwrap_or(usize::MAX)
}
