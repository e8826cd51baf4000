//! When a CUDA copy returns, by where its memory lives (the CUDA runtime's "API
//! synchronization behavior"). Pageable host memory (`malloc`, memory from before the
//! code that the copy's `kind` says is host memory) is staged through page-locked memory
//! by the driver, which changes what the host may do once the call returns; page-locked
//! memory (`cudaMallocHost`, `cudaHostAlloc`, a `cudaHostRegister`ed range) is not.

/// Where one side of a copy lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Device,
    PageLocked,
    Pageable,
    /// Memory from before the code, which a `*Default` kind does not place.
    Unknown,
}

/// How the copy runs, relative to the host thread that calls it and the stream it is
/// issued to (the default stream for `cudaMemcpy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyTiming {
    /// Work of the stream; the call returns at once.
    OnStream,
    /// Work of the stream that the call waits for: it returns once the copy is done.
    UntilDone,
    /// The host reads the pageable source into a staging buffer before the call returns
    /// (after the stream's earlier work where `synchronize_first`); the write of the
    /// destination is work of the stream that may still run.
    StagedSource { synchronize_first: bool },
}

/// `asynchronous`: `cudaMemcpyAsync` and the other `*Async` copies.
pub fn timing(asynchronous: bool, src: Side, dst: Side) -> CopyTiming {
    use Side::*;
    let host = |side| matches!(side, PageLocked | Pageable);
    match (asynchronous, src, dst) {
        // "For transfers from any host memory to any host memory, the function is fully
        // synchronous with respect to the host."
        _ if host(src) && host(dst) => CopyTiming::UntilDone,
        // Async: "For transfers from device memory to pageable host memory, the function
        // will return only once the copy has completed"; pageable memory staged to
        // pinned memory is copied before the call returns.
        (true, Device, Pageable) => CopyTiming::UntilDone,
        (true, Pageable, Device) => CopyTiming::StagedSource {
            synchronize_first: false,
        },
        (true, ..) => CopyTiming::OnStream,
        // Sync: "For transfers from device memory to device memory, no host-side
        // synchronization is performed."
        (false, Device, Device) => CopyTiming::OnStream,
        // Sync, pageable to device: "a stream sync is performed before the copy is
        // initiated. The function will return once the pageable buffer has been copied to
        // the staging memory for DMA transfer to device memory, but the DMA to final
        // destination may not have completed."
        (false, Pageable, Device) => CopyTiming::StagedSource {
            synchronize_first: true,
        },
        (false, ..) => CopyTiming::UntilDone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asynchronous_copies_by_memory() {
        use CopyTiming::*;
        use Side::*;
        assert_eq!(timing(true, Device, PageLocked), OnStream);
        assert_eq!(timing(true, PageLocked, Device), OnStream);
        assert_eq!(timing(true, Device, Device), OnStream);
        assert_eq!(timing(true, Device, Pageable), UntilDone);
        assert_eq!(timing(true, Pageable, PageLocked), UntilDone);
        assert_eq!(
            timing(true, Pageable, Device),
            StagedSource {
                synchronize_first: false
            }
        );
        assert_eq!(timing(true, Unknown, Device), OnStream);
    }

    #[test]
    fn synchronous_copies_by_memory() {
        use CopyTiming::*;
        use Side::*;
        assert_eq!(timing(false, Device, Device), OnStream);
        assert_eq!(timing(false, PageLocked, Device), UntilDone);
        assert_eq!(timing(false, Device, Pageable), UntilDone);
        assert_eq!(
            timing(false, Pageable, Device),
            StagedSource {
                synchronize_first: true
            }
        );
        assert_eq!(timing(false, Unknown, Device), UntilDone);
        assert_eq!(timing(false, Device, Unknown), UntilDone);
    }
}
