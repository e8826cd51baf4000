//! Binary flags in device memory: how the CUDA backend gives ACL notifies, HCCL channel
//! and thread notifies and sync-kind events their semantics.
//!
//! CUDA events are capture-kind: a wait binds to the latest record issued before it and
//! passes when none was. A sync-kind event or a notify must block a wait until a record
//! arrives, even one issued later by another host thread. A 32-bit word does that: a
//! record is `cuStreamWriteValue32(flag, 1)`, a wait `cuStreamWaitValue32(flag == 1)`
//! (followed by a write of 0 for notifies, which a wait consumes), an event reset a write
//! of 0.

use std::collections::HashMap;

use super::driver::{Allocation, DevicePtr, Driver, Stream};
use crate::backend::Fault;

/// One 32-bit flag word in device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag(DevicePtr);

impl Flag {
    pub fn address(self) -> DevicePtr {
        self.0
    }
}

/// Words per pool chunk: one allocation (and one zeroing) per this many flags.
const WORDS_PER_CHUNK: usize = 1024;
const WORD_BYTES: u64 = size_of::<u32>() as u64;

/// The notifies of one direction of a channel pair: those `waiter` waits on and
/// `signaller` records into, on the channels of one communicator, protocol and engine.
/// Rank A's record into (channel A→B, k) is rank B's wait on (channel B→A, k).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NotifyBank {
    /// The communicator: the k-th one every rank creates.
    pub comm: usize,
    pub protocol: String,
    pub engine: String,
    pub waiter: u32,
    pub signaller: u32,
}

/// Every flag word of a run. Words are zeroed on a private stream, and that stream is
/// synchronized, before any is handed out, so no program stream can see a stale value;
/// they are never reused (a destroyed event's word may still be set), and freed when the
/// run ends.
#[derive(Default)]
pub struct Flags {
    chunks: Vec<Allocation>,
    /// Words handed out of the last chunk.
    used: usize,
    banks: HashMap<NotifyBank, Vec<Flag>>,
}

impl Flags {
    /// A fresh zeroed flag; `zeroing` is the backend's private stream.
    pub fn take(&mut self, driver: &Driver, zeroing: Stream) -> Result<Flag, Fault> {
        if self.chunks.is_empty() || self.used == WORDS_PER_CHUNK {
            self.grow(driver, zeroing)?;
        }
        let chunk = self.chunks.last().expect("grow pushed a chunk");
        let flag = Flag(chunk.device_ptr() + self.used as u64 * WORD_BYTES);
        self.used += 1;
        Ok(flag)
    }

    pub fn take_many(&mut self, count: u32, driver: &Driver, zeroing: Stream) -> Result<Vec<Flag>, Fault> {
        (0..count).map(|_| self.take(driver, zeroing)).collect()
    }

    /// Notify `index` of `bank`, created on first use by either end of the channel.
    pub fn channel_notify(
        &mut self,
        bank: &NotifyBank,
        index: u32,
        driver: &Driver,
        zeroing: Stream,
    ) -> Result<Flag, Fault> {
        let index = index as usize;
        let known = self.banks.get(bank).map_or(0, Vec::len);
        if index >= known {
            let more = self.take_many((index + 1 - known) as u32, driver, zeroing)?;
            self.banks.entry(bank.clone()).or_default().extend(more);
        }
        Ok(self.banks[bank][index])
    }

    /// The pool's allocations, for freeing at the end of the run.
    pub fn into_allocations(self) -> Vec<Allocation> {
        self.chunks
    }

    fn grow(&mut self, driver: &Driver, zeroing: Stream) -> Result<(), Fault> {
        let chunk = driver.alloc(WORDS_PER_CHUNK as u64 * WORD_BYTES)?;
        // Counted as full until zeroed, so a failed zeroing hands out none of its words.
        self.chunks.push(chunk);
        self.used = WORDS_PER_CHUNK;
        driver.fill_words_async(chunk.device_ptr(), 0, WORDS_PER_CHUNK, zeroing)?;
        driver.synchronize_stream(zeroing)?;
        self.used = 0;
        Ok(())
    }
}
