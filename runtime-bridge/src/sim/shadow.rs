//! Shadow memory: for every byte range, the last write and the reads since, each as the
//! epoch of the agent that made it. An access that does not know a conflicting earlier
//! access (by the synchronization the run actually performed) is a race.

use std::collections::{BTreeMap, HashMap};

use syncguard_analyzer::exec::{Access, Memory};

use super::clock::{Epoch, VClock};

/// Two conflicting accesses with no synchronization between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedRace {
    pub memory: Memory,
    pub start: u64,
    pub end: u64,
    pub first: Epoch,
    pub first_write: bool,
    pub second: Epoch,
    pub second_write: bool,
}

#[derive(Clone, Debug, Default)]
struct Cell {
    end: u64,
    write: Option<Epoch>,
    reads: Vec<Epoch>,
}

/// Cells keyed by start offset; they never overlap.
#[derive(Default)]
struct Region {
    cells: BTreeMap<u64, Cell>,
}

impl Region {
    /// Splits the cell containing `at` so that a cell starts exactly there.
    fn split_at(&mut self, at: u64) {
        let Some((&start, cell)) = self.cells.range_mut(..at).next_back() else {
            return;
        };
        if cell.end <= at {
            return;
        }
        let mut upper = cell.clone();
        cell.end = at;
        upper.end = upper.end.max(at);
        self.cells.insert(at, upper);
        debug_assert!(start < at);
    }

    /// Makes `start..end` covered by cells (creating empty ones in the gaps).
    fn cover(&mut self, start: u64, end: u64) {
        self.split_at(start);
        self.split_at(end);
        let mut gaps = Vec::new();
        let mut at = start;
        for (&s, cell) in self.cells.range(start..end) {
            if s > at {
                gaps.push((at, s));
            }
            at = cell.end;
        }
        if at < end {
            gaps.push((at, end));
        }
        for (s, e) in gaps {
            self.cells.insert(
                s,
                Cell {
                    end: e,
                    ..Cell::default()
                },
            );
        }
    }
}

#[derive(Default)]
pub struct Shadow {
    regions: HashMap<Memory, Region>,
}

impl Shadow {
    /// Records `access` by `epoch` (with its agent's clock); returns the races it forms.
    pub fn access(&mut self, access: &Access, epoch: Epoch, clock: &VClock) -> Vec<ObservedRace> {
        let mut races = Vec::new();
        if access.start >= access.end {
            return races;
        }
        let region = self.regions.entry(access.memory).or_default();
        region.cover(access.start, access.end);
        for (&start, cell) in region.cells.range_mut(access.start..access.end) {
            let mut conflict = |other: Epoch, other_write: bool| {
                if other.agent != epoch.agent && !clock.knows(other) {
                    races.push(ObservedRace {
                        memory: access.memory,
                        start,
                        end: cell.end,
                        first: other,
                        first_write: other_write,
                        second: epoch,
                        second_write: access.write,
                    });
                }
            };
            if let Some(write) = cell.write {
                conflict(write, true);
            }
            if access.write {
                for &read in &cell.reads {
                    conflict(read, false);
                }
                cell.write = Some(epoch);
                cell.reads.clear();
            } else {
                cell.reads.retain(|r| r.agent != epoch.agent);
                cell.reads.push(epoch);
            }
        }
        merge_adjacent(races)
    }
}

/// One race per pair of calls, over the union of the cells they share.
fn merge_adjacent(races: Vec<ObservedRace>) -> Vec<ObservedRace> {
    let mut merged: Vec<ObservedRace> = Vec::new();
    for race in races {
        match merged
            .iter_mut()
            .find(|m| m.first.node == race.first.node && m.memory == race.memory && m.end == race.start)
        {
            Some(m) => m.end = race.end,
            None => merged.push(race),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard_analyzer::exec::{InstId, NodeId};

    fn access(start: u64, end: u64, write: bool) -> Access {
        Access {
            memory: Memory::Buffer(InstId(0)),
            buffer: InstId(0),
            start,
            end,
            write,
        }
    }

    fn epoch(agent: usize, time: u32) -> Epoch {
        Epoch {
            agent,
            time,
            node: Some(NodeId(agent as u32 * 100 + time)),
        }
    }

    #[test]
    fn unordered_write_then_read_is_a_race_on_the_overlap_only() {
        let mut shadow = Shadow::default();
        let mut a = VClock::new(2);
        let b = VClock::new(2);
        let t = a.tick(0);
        assert!(shadow.access(&access(0, 100, true), epoch(0, t), &a).is_empty());
        let races = shadow.access(&access(50, 150, false), epoch(1, 1), &b);
        assert_eq!(races.len(), 1);
        assert_eq!((races[0].start, races[0].end), (50, 100));
        assert!(races[0].first_write && !races[0].second_write);
    }

    #[test]
    fn a_read_that_knows_the_write_is_ordered() {
        let mut shadow = Shadow::default();
        let mut a = VClock::new(2);
        let t = a.tick(0);
        shadow.access(&access(0, 100, true), epoch(0, t), &a);
        let mut b = VClock::new(2);
        b.join(&a);
        assert!(shadow.access(&access(0, 100, false), epoch(1, 1), &b).is_empty());
        // A later unordered write conflicts with that read, not with the first write.
        let mut a2 = a.clone();
        let t2 = a2.tick(0);
        let races = shadow.access(&access(10, 20, true), epoch(0, t2), &a2);
        assert_eq!(races.len(), 1);
        assert_eq!(races[0].first.agent, 1);
    }

    #[test]
    fn reads_never_race_with_reads() {
        let mut shadow = Shadow::default();
        let (a, b) = (VClock::new(2), VClock::new(2));
        shadow.access(&access(0, 8, false), epoch(0, 1), &a);
        assert!(shadow.access(&access(0, 8, false), epoch(1, 1), &b).is_empty());
    }
}
