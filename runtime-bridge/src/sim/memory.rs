//! The simulator's memory: every buffer is a sparse map of 64 KiB pages. A run of whole
//! pages that hold one byte value (what a kernel writing a whole buffer leaves) is one
//! entry, whatever its length; only pages written in part, or copied from such pages,
//! hold real bytes. Pages never written read as zero, as freshly allocated device
//! memory may, and reading allocates nothing.
//!
//! The real bytes held are capped ([`super::SimOptions::memory_limit`]): a run that
//! needs more stops with [`Fault::MemoryLimit`] instead of exhausting the machine.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use syncguard_analyzer::exec::Memory;

use crate::backend::{Fault, lock};

const PAGE: u64 = 64 << 10;

pub struct Memories {
    store: Mutex<Store>,
}

struct Store {
    regions: HashMap<Memory, Region>,
    budget: Budget,
}

/// Pages of real bytes held over every region, and how many may be.
struct Budget {
    pages: u64,
    max_pages: u64,
    limit: u64,
}

impl Budget {
    fn take_page(&mut self) -> Result<(), Fault> {
        if self.pages >= self.max_pages {
            return Err(Fault::MemoryLimit { limit: self.limit });
        }
        self.pages += 1;
        Ok(())
    }

    fn give_pages(&mut self, pages: u64) {
        self.pages -= pages;
    }
}

/// Extents keyed by their first page; they never overlap. Pages in none are zero.
#[derive(Default)]
struct Region {
    extents: BTreeMap<u64, Extent>,
}

enum Extent {
    /// Every byte of the pages up to `end` (exclusive) is `byte`.
    Fill { end: u64, byte: u8 },
    /// One page of real bytes.
    Bytes(Box<[u8]>),
}

/// The bytes from some offset on, up to the end of the extent that holds them.
enum Content<'a> {
    /// `len` bytes of `byte`.
    Fill {
        byte: u8,
        len: u64,
    },
    Bytes(&'a [u8]),
}

impl Region {
    /// What the region holds from byte `at` on (one extent, or the zeros before the next).
    fn content_at(&self, at: u64) -> Content<'_> {
        let page = at / PAGE;
        match self.extents.range(..=page).next_back() {
            Some((_, Extent::Fill { end, byte })) if *end > page => Content::Fill {
                byte: *byte,
                len: end.saturating_mul(PAGE) - at,
            },
            Some((&start, Extent::Bytes(bytes))) if start == page => Content::Bytes(&bytes[(at % PAGE) as usize..]),
            _ => {
                let next = self.extents.range(page + 1..).next().map_or(u64::MAX, |(&s, _)| s);
                Content::Fill {
                    byte: 0,
                    len: next.saturating_mul(PAGE) - at,
                }
            }
        }
    }

    /// Splits a fill extent that spans `page`, so that an extent starts exactly there.
    fn split_at(&mut self, page: u64) {
        let Some((_, Extent::Fill { end, byte })) = self.extents.range_mut(..page).next_back() else {
            return;
        };
        if *end > page {
            let upper = Extent::Fill { end: *end, byte: *byte };
            *end = page;
            self.extents.insert(page, upper);
        }
    }

    /// Drops pages `first..end`; returns how many held real bytes.
    fn clear_pages(&mut self, first: u64, end: u64) -> u64 {
        self.split_at(first);
        self.split_at(end);
        let starts: Vec<u64> = self.extents.range(first..end).map(|(&start, _)| start).collect();
        let dropped = starts.iter().filter_map(|start| self.extents.remove(start));
        dropped.filter(|extent| matches!(extent, Extent::Bytes(_))).count() as u64
    }

    /// Page `page` as real bytes, holding what it held.
    fn page_mut(&mut self, page: u64, budget: &mut Budget) -> Result<&mut [u8], Fault> {
        if let Content::Fill { byte, .. } = self.content_at(page * PAGE) {
            budget.take_page()?;
            self.clear_pages(page, page + 1);
            let bytes = vec![byte; PAGE as usize].into_boxed_slice();
            self.extents.insert(page, Extent::Bytes(bytes));
        }
        match self.extents.get_mut(&page) {
            Some(Extent::Bytes(bytes)) => Ok(bytes),
            _ => unreachable!("page {page} was just made real bytes"),
        }
    }

    /// Sets bytes `start..end` to `byte`: whole pages become one fill extent.
    fn fill(&mut self, start: u64, end: u64, byte: u8, budget: &mut Budget) -> Result<(), Fault> {
        let (first_whole, end_whole) = (start.div_ceil(PAGE), end / PAGE);
        let head_end = end.min(first_whole * PAGE);
        self.fill_within_page(start, head_end, byte, budget)?;
        if first_whole < end_whole {
            budget.give_pages(self.clear_pages(first_whole, end_whole));
            if byte != 0 {
                self.extents.insert(first_whole, Extent::Fill { end: end_whole, byte });
            }
        }
        let tail_start = head_end.max(end_whole * PAGE);
        self.fill_within_page(tail_start, end, byte, budget)
    }

    /// `fill` for a range inside one page.
    fn fill_within_page(&mut self, start: u64, end: u64, byte: u8, budget: &mut Budget) -> Result<(), Fault> {
        if start >= end || matches!(self.content_at(start), Content::Fill { byte: b, .. } if b == byte) {
            return Ok(());
        }
        let within = (start % PAGE) as usize;
        self.page_mut(start / PAGE, budget)?[within..within + (end - start) as usize].fill(byte);
        Ok(())
    }

    /// Writes `bytes` at `start`.
    fn write(&mut self, start: u64, bytes: &[u8], budget: &mut Budget) -> Result<(), Fault> {
        let mut done = 0;
        while done < bytes.len() {
            let at = start + done as u64;
            let within = (at % PAGE) as usize;
            let len = (PAGE as usize - within).min(bytes.len() - done);
            self.page_mut(at / PAGE, budget)?[within..within + len].copy_from_slice(&bytes[done..done + len]);
            done += len;
        }
        Ok(())
    }
}

/// A piece of a copy's source, detached from it so that the destination can change.
enum Piece {
    Fill { byte: u8, len: u64 },
    Bytes(Vec<u8>),
}

impl Memories {
    /// Memory that holds at most `limit` bytes of real pages.
    pub fn new(limit: u64) -> Self {
        Memories {
            store: Mutex::new(Store {
                regions: HashMap::new(),
                budget: Budget {
                    pages: 0,
                    max_pages: limit / PAGE,
                    limit,
                },
            }),
        }
    }

    /// Sets bytes `start..end` of `memory` to `byte`.
    pub fn fill(&self, memory: Memory, start: u64, end: u64, byte: u8) -> Result<(), Fault> {
        let Store { regions, budget } = &mut *lock(&self.store);
        regions.entry(memory).or_default().fill(start, end, byte, budget)
    }

    /// Copies `len` bytes from `src` at `src_start` to `dst` at `dst_start`, as memmove.
    pub fn copy(&self, dst: Memory, dst_start: u64, src: Memory, src_start: u64, len: u64) -> Result<(), Fault> {
        let Store { regions, budget } = &mut *lock(&self.store);
        let overlapping = dst == src && dst_start < src_start + len && src_start < dst_start + len;
        if overlapping {
            let pieces = Self::pieces(regions.get(&src), src_start, len);
            return Self::place(regions.entry(dst).or_default(), dst_start, pieces, budget);
        }
        // One piece at a time: a long run of one value is never spelled out.
        let mut done = 0;
        while done < len {
            let piece = Self::piece_at(regions.get(&src), src_start + done, len - done);
            let piece_len = piece.len();
            Self::place(regions.entry(dst).or_default(), dst_start + done, [piece], budget)?;
            done += piece_len;
        }
        Ok(())
    }

    /// What `region` holds from `at` on: one extent, at most `max` bytes.
    fn piece_at(region: Option<&Region>, at: u64, max: u64) -> Piece {
        match region.map(|r| r.content_at(at)) {
            None => Piece::Fill { byte: 0, len: max },
            Some(Content::Fill { byte, len }) => Piece::Fill {
                byte,
                len: len.min(max),
            },
            Some(Content::Bytes(bytes)) => Piece::Bytes(bytes[..(bytes.len() as u64).min(max) as usize].to_vec()),
        }
    }

    /// What `region` holds in `start..start + len`, extent by extent.
    fn pieces(region: Option<&Region>, start: u64, len: u64) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut done = 0;
        while done < len {
            let piece = Self::piece_at(region, start + done, len - done);
            done += piece.len();
            pieces.push(piece);
        }
        pieces
    }

    fn place(
        region: &mut Region,
        start: u64,
        pieces: impl IntoIterator<Item = Piece>,
        budget: &mut Budget,
    ) -> Result<(), Fault> {
        let mut at = start;
        for piece in pieces {
            match &piece {
                Piece::Fill { byte, len } => region.fill(at, at + len, *byte, budget)?,
                Piece::Bytes(bytes) => region.write(at, bytes, budget)?,
            }
            at += piece.len();
        }
        Ok(())
    }

    /// Bytes `start..end` of `memory`.
    pub fn read(&self, memory: Memory, start: u64, end: u64) -> Vec<u8> {
        let store = lock(&self.store);
        let mut out = Vec::with_capacity(end.saturating_sub(start) as usize);
        for piece in Self::pieces(store.regions.get(&memory), start, end.saturating_sub(start)) {
            match piece {
                Piece::Fill { byte, len } => out.resize(out.len() + len as usize, byte),
                Piece::Bytes(bytes) => out.extend_from_slice(&bytes),
            }
        }
        out
    }

    /// Bytes held as real pages, over every region.
    pub fn resident(&self) -> u64 {
        lock(&self.store).budget.pages * PAGE
    }
}

impl Piece {
    fn len(&self) -> u64 {
        match self {
            Piece::Fill { len, .. } => *len,
            Piece::Bytes(bytes) => bytes.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard_analyzer::exec::InstId;

    const GIB: u64 = 1 << 30;

    #[test]
    fn copies_move_bytes_across_pages_and_only_partly_written_pages_hold_bytes() {
        let memories = Memories::new(GIB);
        let (a, b) = (Memory::Buffer(InstId(0)), Memory::HcclBuffer { rank: 1 });
        // A range that straddles two page boundaries, far into a large buffer.
        let start = 300 << 20;
        memories.fill(a, start - 10, start + PAGE + 10, 7).unwrap();
        memories.copy(b, 5, a, start - 10, PAGE + 20).unwrap();
        assert_eq!(memories.read(b, 0, 6), [0, 0, 0, 0, 0, 7]);
        assert!(memories.read(b, 5, 5 + PAGE + 20).iter().all(|&x| x == 7));
        assert_eq!(memories.read(b, 5 + PAGE + 20, 5 + PAGE + 21), [0]);
        assert_eq!(memories.read(a, start - 11, start - 9), [0, 7]);
        assert_eq!(
            memories.resident(),
            4 * PAGE,
            "the partial pages of a (the whole page between is one fill) and the 2 of b"
        );
    }

    #[test]
    fn unwritten_bytes_read_as_zero_and_reading_holds_nothing() {
        let memories = Memories::new(GIB);
        assert_eq!(memories.read(Memory::Buffer(InstId(3)), 10, 14), [0; 4]);
        memories
            .copy(Memory::Buffer(InstId(1)), 0, Memory::Buffer(InstId(2)), 0, 3)
            .unwrap();
        assert_eq!(memories.read(Memory::Buffer(InstId(1)), 0, 3), [0; 3]);
        assert_eq!(memories.resident(), 0);
    }

    #[test]
    fn whole_pages_of_one_value_hold_no_bytes_however_large() {
        let memories = Memories::new(PAGE);
        let (a, b) = (Memory::Buffer(InstId(0)), Memory::Buffer(InstId(1)));
        memories.fill(a, 0, 64 * GIB, 9).unwrap();
        memories.copy(b, 0, a, 0, 64 * GIB).unwrap();
        assert_eq!(memories.resident(), 0);
        // A write into the middle makes that one page real and leaves the run around it.
        memories.fill(b, 40 * GIB + 1, 40 * GIB + 2, 3).unwrap();
        assert_eq!(memories.resident(), PAGE);
        assert_eq!(memories.read(b, 40 * GIB - 1, 40 * GIB + 3), [9, 9, 3, 9]);
        assert_eq!(memories.read(b, 64 * GIB - 1, 64 * GIB + 1), [9, 0]);
    }

    #[test]
    fn an_overlapping_copy_moves_bytes_as_memmove() {
        let memories = Memories::new(GIB);
        let a = Memory::Buffer(InstId(0));
        for (at, byte) in (1..=10).enumerate() {
            memories.fill(a, at as u64, at as u64 + 1, byte).unwrap();
        }
        memories.copy(a, 5, a, 0, 10).unwrap();
        assert_eq!(memories.read(a, 0, 15), [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn pages_beyond_the_limit_are_refused_and_overwriting_pages_frees_them() {
        let memories = Memories::new(2 * PAGE);
        let a = Memory::Buffer(InstId(0));
        memories.fill(a, 1, 2, 1).unwrap();
        memories.fill(a, PAGE + 1, PAGE + 2, 1).unwrap();
        let refused = memories.fill(a, 2 * PAGE + 1, 2 * PAGE + 2, 1);
        assert_eq!(refused, Err(Fault::MemoryLimit { limit: 2 * PAGE }));
        assert_eq!(memories.resident(), 2 * PAGE);
        memories.fill(a, 0, 2 * PAGE, 4).unwrap();
        assert_eq!(memories.resident(), 0);
        memories.fill(a, 2 * PAGE + 1, 2 * PAGE + 2, 1).unwrap();
        assert_eq!(memories.read(a, PAGE, PAGE + 2), [4, 4]);
    }
}
