//! The simulator's memory: real bytes for every buffer, allocated in pages when first
//! written, so that a 400 MiB HCCL buffer of which a run touches 64 KiB costs 64 KiB.
//! Bytes never written read as zero, as freshly allocated device memory may.

use std::collections::HashMap;
use std::sync::Mutex;

use syncguard_analyzer::exec::Memory;

use crate::backend::lock;

const PAGE: u64 = 64 << 10;

#[derive(Default)]
pub struct Memories {
    regions: Mutex<HashMap<Memory, Region>>,
}

#[derive(Default)]
struct Region {
    pages: HashMap<u64, Box<[u8]>>,
}

impl Region {
    /// Calls `f` with each page's slice of `start..end` and the offset of that slice
    /// within the range, allocating pages as needed.
    fn for_each_page_mut(&mut self, start: u64, end: u64, mut f: impl FnMut(&mut [u8], usize)) {
        let mut at = start;
        while at < end {
            let page = at / PAGE;
            let within = (at % PAGE) as usize;
            let len = (PAGE - at % PAGE).min(end - at) as usize;
            let bytes = self
                .pages
                .entry(page)
                .or_insert_with(|| vec![0u8; PAGE as usize].into_boxed_slice());
            f(&mut bytes[within..within + len], (at - start) as usize);
            at += len as u64;
        }
    }

    fn read(&self, start: u64, end: u64) -> Vec<u8> {
        let mut out = vec![0u8; end.saturating_sub(start) as usize];
        let mut at = start;
        while at < end {
            let within = (at % PAGE) as usize;
            let len = (PAGE - at % PAGE).min(end - at) as usize;
            if let Some(bytes) = self.pages.get(&(at / PAGE)) {
                let offset = (at - start) as usize;
                out[offset..offset + len].copy_from_slice(&bytes[within..within + len]);
            }
            at += len as u64;
        }
        out
    }
}

impl Memories {
    /// Sets bytes `start..end` of `memory` to `byte`.
    pub fn fill(&self, memory: Memory, start: u64, end: u64, byte: u8) {
        let mut regions = lock(&self.regions);
        regions
            .entry(memory)
            .or_default()
            .for_each_page_mut(start, end, |bytes, _| bytes.fill(byte));
    }

    /// Copies `len` bytes from `src` at `src_start` to `dst` at `dst_start`.
    pub fn copy(&self, dst: Memory, dst_start: u64, src: Memory, src_start: u64, len: u64) {
        let mut regions = lock(&self.regions);
        let data = regions.get(&src).map_or_else(
            || vec![0u8; len as usize],
            |region| region.read(src_start, src_start + len),
        );
        regions
            .entry(dst)
            .or_default()
            .for_each_page_mut(dst_start, dst_start + len, |bytes, offset| {
                bytes.copy_from_slice(&data[offset..offset + bytes.len()]);
            });
    }

    /// Bytes `start..end` of `memory`.
    pub fn read(&self, memory: Memory, start: u64, end: u64) -> Vec<u8> {
        let regions = lock(&self.regions);
        match regions.get(&memory) {
            Some(region) => region.read(start, end),
            None => vec![0u8; end.saturating_sub(start) as usize],
        }
    }

    /// Bytes held, over every region.
    #[cfg(test)]
    pub fn resident(&self) -> usize {
        lock(&self.regions)
            .values()
            .map(|r| r.pages.len() * PAGE as usize)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard_analyzer::exec::InstId;

    #[test]
    fn copies_move_bytes_across_pages_and_only_touched_pages_exist() {
        let memories = Memories::default();
        let (a, b) = (Memory::Buffer(InstId(0)), Memory::HcclBuffer { rank: 1 });
        // A range that straddles a page boundary, far into a large buffer.
        let start = 300 << 20;
        memories.fill(a, start - 10, start + PAGE + 10, 7);
        memories.copy(b, 5, a, start - 10, PAGE + 20);
        assert_eq!(memories.read(b, 0, 6), [0, 0, 0, 0, 0, 7]);
        assert!(memories.read(b, 5, 5 + PAGE + 20).iter().all(|&x| x == 7));
        assert_eq!(memories.read(b, 5 + PAGE + 20, 5 + PAGE + 21), [0]);
        assert_eq!(memories.resident(), 5 * PAGE as usize, "3 pages of a, 2 of b");
    }

    #[test]
    fn unwritten_bytes_read_as_zero() {
        let memories = Memories::default();
        assert_eq!(memories.read(Memory::Buffer(InstId(3)), 10, 14), [0; 4]);
        memories.copy(Memory::Buffer(InstId(1)), 0, Memory::Buffer(InstId(2)), 0, 3);
        assert_eq!(memories.read(Memory::Buffer(InstId(1)), 0, 3), [0; 3]);
    }
}
