//! The CUDA driver API (`libcuda.so.1`): the few prototypes the backend calls, declared
//! here from `cuda.h` so that nothing of the CUDA toolkit is needed to build.
//!
//! `cuda.h` maps several names to versioned symbols (`cuMemAlloc` is `cuMemAlloc_v2`);
//! the versioned symbol is the one resolved, and errors name the API as documented.
//! Every wrapper checks its `CUresult`; a failure is [`Fault::Api`] with the API name, the
//! code, and `cuGetErrorName`'s text.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use crate::acl::loader::{self, LoadError, Opened};
use crate::backend::Fault;

type CuResult = i32;
type RawHandle = *mut c_void;
/// `CUdeviceptr`
pub type DevicePtr = u64;

/// `CUDA_ERROR_NOT_READY`: a query found work still pending.
const CUDA_ERROR_NOT_READY: CuResult = 600;
/// `CU_STREAM_NON_BLOCKING`: no implicit synchronization with the legacy default stream,
/// which the backend's synchronous copies use.
const CU_STREAM_NON_BLOCKING: u32 = 0x1;
/// `CU_EVENT_DISABLE_TIMING`: the events only order work.
const CU_EVENT_DISABLE_TIMING: u32 = 0x2;
/// `CU_STREAM_WAIT_VALUE_EQ`
const CU_STREAM_WAIT_VALUE_EQ: u32 = 0x1;
/// `CU_STREAM_WRITE_VALUE_DEFAULT`: the write is ordered after earlier work's memory.
const CU_STREAM_WRITE_VALUE_DEFAULT: u32 = 0x0;

/// The hint printed when the driver cannot be found.
pub const HINT: &str = "install the NVIDIA driver (it provides libcuda.so.1), or add the directory holding \
     libcuda.so.1 to LD_LIBRARY_PATH";

/// Declares opaque driver handles: tokens the driver accepts from any host thread whose
/// current context is the one they belong to.
macro_rules! handles {
    ($($(#[$meta:meta])* $name:ident),*) => {$(
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(RawHandle);
        // SAFETY: the handle is an opaque token, never dereferenced on the Rust side; the
        // driver is thread-safe and every calling thread makes the context current first.
        unsafe impl Send for $name {}
        // SAFETY: as above.
        unsafe impl Sync for $name {}
    )*};
}

handles!(
    /// `CUcontext`
    Context,
    /// `CUstream`
    Stream,
    /// `CUevent`
    Event
);

impl Context {
    /// An identity for "is this context current on this thread" checks.
    pub fn id(self) -> usize {
        self.0 as usize
    }
}

/// The driver functions, resolved once when the library loads.
struct Functions {
    init: unsafe extern "C" fn(u32) -> CuResult,
    device_get: unsafe extern "C" fn(*mut i32, i32) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut RawHandle, i32) -> CuResult,
    primary_ctx_release: unsafe extern "C" fn(i32) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(RawHandle) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    stream_create: unsafe extern "C" fn(*mut RawHandle, u32) -> CuResult,
    stream_destroy: unsafe extern "C" fn(RawHandle) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(RawHandle) -> CuResult,
    stream_query: unsafe extern "C" fn(RawHandle) -> CuResult,
    stream_wait_event: unsafe extern "C" fn(RawHandle, RawHandle, u32) -> CuResult,
    stream_write_value32: unsafe extern "C" fn(RawHandle, DevicePtr, u32, u32) -> CuResult,
    stream_wait_value32: unsafe extern "C" fn(RawHandle, DevicePtr, u32, u32) -> CuResult,
    event_create: unsafe extern "C" fn(*mut RawHandle, u32) -> CuResult,
    event_destroy: unsafe extern "C" fn(RawHandle) -> CuResult,
    event_record: unsafe extern "C" fn(RawHandle, RawHandle) -> CuResult,
    event_synchronize: unsafe extern "C" fn(RawHandle) -> CuResult,
    event_query: unsafe extern "C" fn(RawHandle) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut DevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(DevicePtr) -> CuResult,
    mem_alloc_host: unsafe extern "C" fn(*mut RawHandle, usize) -> CuResult,
    mem_free_host: unsafe extern "C" fn(RawHandle) -> CuResult,
    mem_host_get_device_pointer: unsafe extern "C" fn(*mut DevicePtr, RawHandle, u32) -> CuResult,
    memcpy: unsafe extern "C" fn(DevicePtr, DevicePtr, usize) -> CuResult,
    memcpy_async: unsafe extern "C" fn(DevicePtr, DevicePtr, usize, RawHandle) -> CuResult,
    memcpy_dtod_async: unsafe extern "C" fn(DevicePtr, DevicePtr, usize, RawHandle) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(RawHandle, DevicePtr, usize) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(DevicePtr, *const c_void, usize) -> CuResult,
    memset_d8_async: unsafe extern "C" fn(DevicePtr, u8, usize, RawHandle) -> CuResult,
    memset_d32_async: unsafe extern "C" fn(DevicePtr, u32, usize, RawHandle) -> CuResult,
    error_name: Option<unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult>,
}

/// Resolves the first of `symbols` the library exports (newest version first).
macro_rules! resolve {
    ($libraries:expr, $symbol:literal $(, $older:literal)*) => {
        loader::function($libraries, $symbol, HINT)
            $(.or_else(|_| loader::function($libraries, $older, HINT)))*?
    };
}

impl Functions {
    fn resolve(library: &Opened) -> Result<Self, LoadError> {
        let libraries: &[&Opened] = &[library];
        // SAFETY: every type below is the C prototype of its symbol in cuda.h (CUresult,
        // CUdevice and the enums are int, handles are pointers, CUdeviceptr is 64 bits).
        unsafe {
            Ok(Functions {
                init: resolve!(libraries, "cuInit"),
                device_get: resolve!(libraries, "cuDeviceGet"),
                primary_ctx_retain: resolve!(libraries, "cuDevicePrimaryCtxRetain"),
                primary_ctx_release: resolve!(libraries, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
                ctx_set_current: resolve!(libraries, "cuCtxSetCurrent"),
                ctx_synchronize: resolve!(libraries, "cuCtxSynchronize"),
                stream_create: resolve!(libraries, "cuStreamCreate"),
                stream_destroy: resolve!(libraries, "cuStreamDestroy_v2"),
                stream_synchronize: resolve!(libraries, "cuStreamSynchronize"),
                stream_query: resolve!(libraries, "cuStreamQuery"),
                stream_wait_event: resolve!(libraries, "cuStreamWaitEvent"),
                stream_write_value32: resolve!(libraries, "cuStreamWriteValue32_v2", "cuStreamWriteValue32"),
                stream_wait_value32: resolve!(libraries, "cuStreamWaitValue32_v2", "cuStreamWaitValue32"),
                event_create: resolve!(libraries, "cuEventCreate"),
                event_destroy: resolve!(libraries, "cuEventDestroy_v2"),
                event_record: resolve!(libraries, "cuEventRecord"),
                event_synchronize: resolve!(libraries, "cuEventSynchronize"),
                event_query: resolve!(libraries, "cuEventQuery"),
                mem_alloc: resolve!(libraries, "cuMemAlloc_v2"),
                mem_free: resolve!(libraries, "cuMemFree_v2"),
                mem_alloc_host: resolve!(libraries, "cuMemAllocHost_v2"),
                mem_free_host: resolve!(libraries, "cuMemFreeHost"),
                mem_host_get_device_pointer: resolve!(libraries, "cuMemHostGetDevicePointer_v2"),
                memcpy: resolve!(libraries, "cuMemcpy"),
                memcpy_async: resolve!(libraries, "cuMemcpyAsync"),
                memcpy_dtod_async: resolve!(libraries, "cuMemcpyDtoDAsync_v2"),
                memcpy_dtoh: resolve!(libraries, "cuMemcpyDtoH_v2"),
                memcpy_htod: resolve!(libraries, "cuMemcpyHtoD_v2"),
                memset_d8_async: resolve!(libraries, "cuMemsetD8Async"),
                memset_d32_async: resolve!(libraries, "cuMemsetD32Async"),
                error_name: loader::optional_function(libraries, "cuGetErrorName"),
            })
        }
    }
}

/// The loaded CUDA driver.
pub struct Driver {
    functions: Functions,
    /// Kept open for as long as the function pointers are used.
    _library: Opened,
}

impl Driver {
    pub fn load(library: Opened) -> Result<Self, LoadError> {
        Ok(Driver {
            functions: Functions::resolve(&library)?,
            _library: library,
        })
    }

    fn check(&self, api: &'static str, code: CuResult) -> Result<(), Fault> {
        if code == 0 {
            return Ok(());
        }
        Err(Fault::Api {
            api: api.to_string(),
            code: code.into(),
            detail: self.error_name(code),
        })
    }

    fn error_name(&self, code: CuResult) -> String {
        let Some(error_name) = self.functions.error_name else {
            return String::new();
        };
        let mut name = ptr::null();
        // SAFETY: `name` is a valid out-pointer; the driver stores a static string or
        // leaves it NULL for an unknown code.
        if unsafe { error_name(code, &mut name) } != 0 || name.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL, NUL-terminated, static.
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    }

    /// `cuInit`, `cuDeviceGet(0)`, `cuDevicePrimaryCtxRetain`: device 0's primary context.
    pub fn primary_context(&self) -> Result<(i32, Context), Fault> {
        // SAFETY: flags must be 0.
        self.check("cuInit", unsafe { (self.functions.init)(0) })?;
        let mut device = 0;
        // SAFETY: `device` is a valid out-pointer.
        self.check("cuDeviceGet", unsafe { (self.functions.device_get)(&mut device, 0) })?;
        let mut context = ptr::null_mut();
        // SAFETY: `context` is a valid out-pointer; `device` came from cuDeviceGet.
        let code = unsafe { (self.functions.primary_ctx_retain)(&mut context, device) };
        self.check("cuDevicePrimaryCtxRetain", code)?;
        Ok((device, Context(context)))
    }

    pub fn release_primary_context(&self, device: i32) -> Result<(), Fault> {
        // SAFETY: `device` retained its primary context in `primary_context`.
        let code = unsafe { (self.functions.primary_ctx_release)(device) };
        self.check("cuDevicePrimaryCtxRelease", code)
    }

    pub fn set_current(&self, context: Context) -> Result<(), Fault> {
        // SAFETY: `context` is a retained primary context.
        self.check("cuCtxSetCurrent", unsafe {
            (self.functions.ctx_set_current)(context.0)
        })
    }

    pub fn synchronize_context(&self) -> Result<(), Fault> {
        // SAFETY: no arguments; acts on the current context.
        self.check("cuCtxSynchronize", unsafe { (self.functions.ctx_synchronize)() })
    }

    pub fn create_stream(&self) -> Result<Stream, Fault> {
        let mut stream = ptr::null_mut();
        // SAFETY: `stream` is a valid out-pointer.
        let code = unsafe { (self.functions.stream_create)(&mut stream, CU_STREAM_NON_BLOCKING) };
        self.check("cuStreamCreate", code)?;
        Ok(Stream(stream))
    }

    pub fn destroy_stream(&self, stream: Stream) -> Result<(), Fault> {
        // SAFETY: `stream` came from cuStreamCreate and is destroyed once.
        self.check("cuStreamDestroy", unsafe { (self.functions.stream_destroy)(stream.0) })
    }

    pub fn synchronize_stream(&self, stream: Stream) -> Result<(), Fault> {
        // SAFETY: `stream` is live.
        self.check("cuStreamSynchronize", unsafe {
            (self.functions.stream_synchronize)(stream.0)
        })
    }

    /// `cuStreamQuery`: whether everything issued to `stream` has run.
    pub fn stream_idle(&self, stream: Stream) -> Result<bool, Fault> {
        // SAFETY: `stream` is live.
        let code = unsafe { (self.functions.stream_query)(stream.0) };
        self.ready("cuStreamQuery", code)
    }

    pub fn stream_wait_event(&self, stream: Stream, event: Event) -> Result<(), Fault> {
        // SAFETY: both handles are live; flags must be 0.
        let code = unsafe { (self.functions.stream_wait_event)(stream.0, event.0, 0) };
        self.check("cuStreamWaitEvent", code)
    }

    /// `cuStreamWriteValue32`: `stream` stores `value` at `flag` once earlier work is done.
    pub fn write_flag(&self, stream: Stream, flag: DevicePtr, value: u32) -> Result<(), Fault> {
        // SAFETY: `flag` is a 4-byte word of a live device allocation (the flag pool's).
        let code =
            unsafe { (self.functions.stream_write_value32)(stream.0, flag, value, CU_STREAM_WRITE_VALUE_DEFAULT) };
        self.check("cuStreamWriteValue32", code)
    }

    /// `cuStreamWaitValue32(…, CU_STREAM_WAIT_VALUE_EQ)`: `stream` waits until `flag`
    /// holds `value`.
    pub fn wait_flag(&self, stream: Stream, flag: DevicePtr, value: u32) -> Result<(), Fault> {
        // SAFETY: `flag` is a 4-byte word of a live device allocation (the flag pool's).
        let code = unsafe { (self.functions.stream_wait_value32)(stream.0, flag, value, CU_STREAM_WAIT_VALUE_EQ) };
        self.check("cuStreamWaitValue32", code)
    }

    pub fn create_event(&self) -> Result<Event, Fault> {
        let mut event = ptr::null_mut();
        // SAFETY: `event` is a valid out-pointer.
        let code = unsafe { (self.functions.event_create)(&mut event, CU_EVENT_DISABLE_TIMING) };
        self.check("cuEventCreate", code)?;
        Ok(Event(event))
    }

    pub fn destroy_event(&self, event: Event) -> Result<(), Fault> {
        // SAFETY: `event` came from cuEventCreate and is destroyed once.
        self.check("cuEventDestroy", unsafe { (self.functions.event_destroy)(event.0) })
    }

    pub fn record_event(&self, event: Event, stream: Stream) -> Result<(), Fault> {
        // SAFETY: both handles are live.
        self.check("cuEventRecord", unsafe {
            (self.functions.event_record)(event.0, stream.0)
        })
    }

    pub fn synchronize_event(&self, event: Event) -> Result<(), Fault> {
        // SAFETY: `event` is live.
        self.check("cuEventSynchronize", unsafe {
            (self.functions.event_synchronize)(event.0)
        })
    }

    /// `cuEventQuery`: whether the event's captured work has run.
    pub fn event_done(&self, event: Event) -> Result<bool, Fault> {
        // SAFETY: `event` is live.
        let code = unsafe { (self.functions.event_query)(event.0) };
        self.ready("cuEventQuery", code)
    }

    fn ready(&self, api: &'static str, code: CuResult) -> Result<bool, Fault> {
        if code == CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.check(api, code).map(|()| true)
    }

    /// `cuMemAlloc`; an empty buffer still gets an address (the driver rejects 0 bytes).
    pub fn alloc(&self, size: u64) -> Result<Allocation, Fault> {
        let mut memory = 0;
        // SAFETY: `memory` is a valid out-pointer.
        let code = unsafe { (self.functions.mem_alloc)(&mut memory, byte_count(size.max(1))) };
        self.check("cuMemAlloc", code)?;
        Ok(Allocation {
            device: memory,
            host: None,
            size,
        })
    }

    /// `cuMemAllocHost`: pinned host memory, mapped for the device.
    pub fn alloc_host(&self, size: u64) -> Result<Allocation, Fault> {
        let mut host = ptr::null_mut();
        // SAFETY: `host` is a valid out-pointer.
        let code = unsafe { (self.functions.mem_alloc_host)(&mut host, byte_count(size.max(1))) };
        self.check("cuMemAllocHost", code)?;
        let mut device = 0;
        // SAFETY: `host` came from cuMemAllocHost; `device` is a valid out-pointer; flags 0.
        let code = unsafe { (self.functions.mem_host_get_device_pointer)(&mut device, host, 0) };
        self.check("cuMemHostGetDevicePointer", code)?;
        Ok(Allocation {
            device,
            host: Some(HostPtr(host)),
            size,
        })
    }

    /// `cuMemFree` or `cuMemFreeHost`.
    pub fn free(&self, allocation: Allocation) -> Result<(), Fault> {
        match allocation.host {
            // SAFETY: the allocation came from cuMemAllocHost and is freed once, after the
            // context was synchronized.
            Some(host) => self.check("cuMemFreeHost", unsafe { (self.functions.mem_free_host)(host.0) }),
            // SAFETY: the allocation came from cuMemAlloc and is freed once, after the
            // context was synchronized.
            None => self.check("cuMemFree", unsafe { (self.functions.mem_free)(allocation.device) }),
        }
    }

    /// `cuMemcpyDtoDAsync` between device memory, `cuMemcpyAsync` (unified addressing)
    /// when either side is pinned host memory.
    pub fn copy_async(&self, dst: Span, src: Span, stream: Stream) -> Result<(), Fault> {
        let count = byte_count(src.len.min(dst.len));
        if dst.host.is_none() && src.host.is_none() {
            // SAFETY: both spans were bounds-checked against live allocations, which are
            // freed only once the context is idle.
            let code = unsafe { (self.functions.memcpy_dtod_async)(dst.device, src.device, count, stream.0) };
            return self.check("cuMemcpyDtoDAsync", code);
        }
        // SAFETY: as above.
        let code = unsafe { (self.functions.memcpy_async)(dst.device, src.device, count, stream.0) };
        self.check("cuMemcpyAsync", code)
    }

    /// `cuMemcpy` (unified addressing): a copy on the calling host thread.
    pub fn copy(&self, dst: Span, src: Span) -> Result<(), Fault> {
        let count = byte_count(src.len.min(dst.len));
        // SAFETY: both spans were bounds-checked against live allocations.
        self.check("cuMemcpy", unsafe {
            (self.functions.memcpy)(dst.device, src.device, count)
        })
    }

    /// `cuMemsetD8Async`: every byte of `dst` set to `value`, on `stream`.
    pub fn fill_async(&self, dst: Span, value: u8, stream: Stream) -> Result<(), Fault> {
        // SAFETY: the span was bounds-checked against a live allocation.
        let code = unsafe { (self.functions.memset_d8_async)(dst.device, value, byte_count(dst.len), stream.0) };
        self.check("cuMemsetD8Async", code)
    }

    /// `cuMemsetD32Async`: `words` 32-bit words at `dst` set to `value`, on `stream`.
    pub fn fill_words_async(&self, dst: DevicePtr, value: u32, words: usize, stream: Stream) -> Result<(), Fault> {
        // SAFETY: `dst` is the start of a live allocation of at least `words` words (the
        // flag pool's chunks).
        let code = unsafe { (self.functions.memset_d32_async)(dst, value, words, stream.0) };
        self.check("cuMemsetD32Async", code)
    }

    /// The 32-bit word at `flag`, read with a synchronous `cuMemcpyDtoH` (on the legacy
    /// stream, which the backend's non-blocking streams do not wait for).
    pub fn read_flag(&self, flag: DevicePtr) -> Result<u32, Fault> {
        let mut value = 0u32;
        // SAFETY: `value` is 4 writable bytes; `flag` a word of a live device allocation.
        let code = unsafe { (self.functions.memcpy_dtoh)((&raw mut value).cast(), flag, size_of::<u32>()) };
        self.check("cuMemcpyDtoH", code)?;
        Ok(value)
    }

    /// The bytes of `src`: read directly from pinned host memory, else copied with
    /// `cuMemcpyDtoH`.
    pub fn read(&self, src: Span) -> Result<Vec<u8>, Fault> {
        let len = byte_count(src.len);
        let mut bytes = vec![0u8; len];
        match src.host {
            // SAFETY: a host span lies inside a live cuMemAllocHost allocation (checked by
            // `Allocation::span`); `bytes` is a distinct buffer of the same length.
            Some(host) => unsafe { ptr::copy_nonoverlapping(host.0.cast::<u8>(), bytes.as_mut_ptr(), len) },
            None => {
                // SAFETY: `bytes` is `len` writable bytes; `src` a checked device span.
                let code = unsafe { (self.functions.memcpy_dtoh)(bytes.as_mut_ptr().cast(), src.device, len) };
                self.check("cuMemcpyDtoH", code)?;
            }
        }
        Ok(bytes)
    }

    /// Sets every byte of `dst` to `value`: directly in pinned host memory, else with a
    /// `cuMemcpyHtoD` from a filled host buffer.
    pub fn fill(&self, dst: Span, value: u8) -> Result<(), Fault> {
        let len = byte_count(dst.len);
        if let Some(host) = dst.host {
            // SAFETY: a host span lies inside a live cuMemAllocHost allocation.
            unsafe { ptr::write_bytes(host.0.cast::<u8>(), value, len) };
            return Ok(());
        }
        let bytes = vec![value; len];
        // SAFETY: `bytes` is `len` readable bytes for the whole (synchronous) call; `dst`
        // is a checked device span.
        let code = unsafe { (self.functions.memcpy_htod)(dst.device, bytes.as_ptr().cast(), len) };
        self.check("cuMemcpyHtoD", code)
    }
}

/// A host address of pinned memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPtr(RawHandle);
// SAFETY: pinned host memory may be accessed from any thread; accesses are bounds-checked
// and ordered by the program's synchronization.
unsafe impl Send for HostPtr {}
// SAFETY: as above.
unsafe impl Sync for HostPtr {}

/// A block of device memory, or of pinned host memory mapped for the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    device: DevicePtr,
    host: Option<HostPtr>,
    size: u64,
}

impl Allocation {
    /// Bytes `start..end`, or `None` when they are not inside the allocation.
    pub fn span(&self, start: u64, end: u64) -> Option<Span> {
        (start <= end && end <= self.size).then(|| Span {
            device: self.device + start,
            host: self
                .host
                .map(|host| HostPtr(host.0.wrapping_byte_add(byte_count(start)))),
            len: end - start,
        })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn device_ptr(&self) -> DevicePtr {
        self.device
    }
}

/// A bounds-checked byte range of a live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    device: DevicePtr,
    host: Option<HostPtr>,
    len: u64,
}

fn byte_count(bytes: u64) -> usize {
    usize::try_from(bytes).unwrap_or(usize::MAX)
}
