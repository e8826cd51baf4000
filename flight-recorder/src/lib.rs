//! PyTorch's NCCL Flight Recorder dumps, read and checked for collective desyncs.
//!
//! When a job's collective times out, each rank's watchdog writes the ring buffer of
//! its recent collectives (`TORCH_NCCL_TRACE_BUFFER_SIZE`, `TORCH_NCCL_DUMP_ON_TIMEOUT`)
//! to `TORCH_NCCL_DEBUG_INFO_TEMP_FILE` + rank: a pickle by default, JSON when asked.
//! This crate recognizes such a file by its content ([`sniff`]), reads it
//! ([`dump::read`]: a bounded pickle reader, [`pickle`], or serde_json's parser with
//! each entry's byte range; the dump is built from the parsed values where they lie,
//! its repeated strings, shapes and stacks kept once), and compares the dumps of one
//! job per process group ([`check_run`], dumps read and groups compared on every core):
//! the first sequence number where ranks ran different collectives (SG901), shapes
//! and dtypes that differ (SG902, SG903), ranks that never entered a collective the
//! others reached (SG904), ranks stuck in one the others finished (SG905), missing
//! dumps (SG906) and files that cannot be read (SG900). docs/FLIGHT_RECORDER.md says
//! which fields are read and what a dump cannot tell.
//!
//! Spans point into the dump files: a JSON entry's object, or the start of a pickle
//! (whose bytes are not shown: its messages name the entry by `record_id`).

mod check;
pub mod dump;
mod json;
pub mod pickle;
pub mod rules;
pub mod value;

pub use check::{DumpInput, check_run};
pub use dump::{Format, sniff};

use std::io::Read;
use std::path::Path;

/// Whether the file at `path` is a Flight Recorder dump, judged on its first
/// [`dump::SNIFF_BYTES`] bytes; an unreadable file is not.
pub fn is_dump_file(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(dump::SNIFF_BYTES);
    if file.take(dump::SNIFF_BYTES as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    sniff(&head).is_some()
}

/// Whether a file of this name may be a dump: no extension (`nccl_trace_rank_0`),
/// `.json`, `.pkl` or `.pickle`. Its content decides ([`is_dump_file`]).
pub fn may_be_dump_name(path: &Path) -> bool {
    match path.extension().and_then(|ext| ext.to_str()) {
        None => true,
        Some(ext) => matches!(ext, "json" | "pkl" | "pickle"),
    }
}

/// The bytes of a dump file, refused past [`dump::MAX_DUMP_BYTES`].
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    // Sized from the file's length where known (a folder of dumps is read whole), not
    // grown by doubling.
    let expected = file.metadata().map_or(0, |m| m.len().min(dump::MAX_DUMP_BYTES + 1));
    let mut bytes = Vec::with_capacity(expected as usize + 1);
    file.take(dump::MAX_DUMP_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > dump::MAX_DUMP_BYTES {
        return Err(std::io::Error::other(format!(
            "a Flight Recorder dump larger than {} MiB is not read",
            dump::MAX_DUMP_BYTES >> 20
        )));
    }
    Ok(bytes)
}
