//! Conflicting memory accesses that happens-before does not order.
//!
//! Accesses are visited in execution (Kahn) order, so an earlier-visited access can
//! never be ordered after a later one: a pair conflicts exactly when the earlier one
//! does not happen before the later. Each memory region keeps a history of accesses;
//! an entry is dropped once a later access of the same agent that it happens before
//! covers its bytes, which keeps the history short without losing a race (the later
//! access, on the same queue or host thread, then stands for it).
//!
//! A buffer cut into chunks that different queues touch keeps tens of live entries, of
//! which an access overlaps two or three: one pass over them finds the races and marks
//! the superseded entries, which are dropped in bulk (`History`); the test below holds
//! this to the plain scan-then-retain. An index of entries by start offset was measured
//! and not kept: its tree operations cost more than a pass over tens of entries.
//!
//! Regions share nothing, so they are searched in groups side by side and the groups'
//! findings merged back into the order one search makes (`search_in_groups`).

use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{HappensBefore, Place};
use crate::exec::{Access, Action, Memory, NodeId};

/// Two accesses to overlapping bytes, at least one a write, in either order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The access visited first and the one visited second.
    pub first: NodeId,
    pub second: NodeId,
    pub memory: Memory,
    /// The overlapping bytes.
    pub start: u64,
    pub end: u64,
    pub first_writes: bool,
    pub second_writes: bool,
}

struct Entry {
    node: NodeId,
    /// Its call's place, kept so that comparing the entry with a later call reads
    /// nothing of its own call.
    place: Place,
    at: Position,
    start: u64,
    end: u64,
    write: bool,
    superseded: bool,
}

/// Memory regions are searched in this many groups side by side: a race is between two
/// accesses of one region, so the groups share nothing but the order of their findings.
/// More groups than cores, so that a group of busy regions does not leave a core idle
/// at the end; each group reads the list of calls once.
const GROUPS: usize = 8;
const _: () = assert!(GROUPS <= u8::BITS as usize, "a visit's groups are the bits of a u8");

/// A call that accesses memory, with the groups its regions are searched in (a bit
/// each): a group reads only the access lists of its own calls, not every call's.
#[derive(Clone, Copy)]
struct Visit<'a> {
    node: NodeId,
    accesses: &'a [Access],
    groups: u8,
}

impl<'a> Visit<'a> {
    fn new(node: NodeId, accesses: &'a [Access], groups: usize) -> Self {
        let groups = accesses
            .iter()
            .fold(0, |mask, access| mask | 1 << group_of(access.memory, groups));
        Visit { node, accesses, groups }
    }
}

pub(super) fn find_races(hb: &HappensBefore, order: &[NodeId]) -> Vec<Race> {
    let exec = hb.exec;
    // Gathered once, in execution order.
    let visits: Vec<Visit> = order
        .par_iter()
        .filter_map(|&node| match &exec.node(node).action {
            Action::Access(accesses) => Some(Visit::new(node, accesses, GROUPS)),
            _ => None,
        })
        .collect();
    search_in_groups(&visits, hb, GROUPS)
}

/// What the search needs of happens-before: where a call runs, and, from a call, which
/// places run before it. An access's call is compared with every live entry of its
/// region, so its clock is looked up once for them all.
trait Order: Sync {
    fn place(&self, node: NodeId) -> Place;
    fn runs_before(&self, node: NodeId) -> impl Fn(Place) -> bool;
}

impl Order for HappensBefore<'_, '_> {
    fn place(&self, node: NodeId) -> Place {
        HappensBefore::place(self, node)
    }

    fn runs_before(&self, node: NodeId) -> impl Fn(Place) -> bool {
        let clock = self.clock_of(node);
        move |place| clock.is_after(place)
    }
}

/// The races [`search`] finds over every region, found `groups` groups of regions at a
/// time in parallel and put back in the order one search makes: by the later access,
/// then by the earlier entry; a pair of calls is reported once, where it first races.
fn search_in_groups(visits: &[Visit], order: &impl Order, groups: usize) -> Vec<Race> {
    let found: Vec<Vec<Found>> = (0..groups)
        .into_par_iter()
        .map(|group| {
            // Numbered among all visits, which orders the findings of every group.
            let own = visits
                .iter()
                .enumerate()
                .filter(|(_, visit)| visit.groups & 1 << group != 0);
            search(own, order, |memory| group_of(memory, groups) == group)
        })
        .collect();
    let mut found: Vec<Found> = found.into_iter().flatten().collect();
    found.sort_unstable_by_key(|found| found.order);
    let mut reported: HashSet<(NodeId, NodeId)> = HashSet::default();
    found
        .into_iter()
        .filter(|found| reported.insert((found.race.first, found.race.second)))
        .map(|found| found.race)
        .collect()
}

/// Which of `groups` groups a region is searched in.
fn group_of(memory: Memory, groups: usize) -> usize {
    let id = match memory {
        Memory::Buffer(instance) => u64::from(instance.0) << 1,
        Memory::HcclBuffer { rank } => u64::from(rank) << 1 | 1,
    };
    (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % groups
}

/// Where an access is in the search: its call's place among the calls visited, and its
/// own among the call's accesses.
type Position = (u32, u32);

/// A race, and where one search over every region reports it: at the later access, in
/// the order of the earlier access's entry.
struct Found {
    order: (Position, Position),
    race: Race,
}

/// The races between accesses of the regions `searched` keeps, each pair of calls once;
/// `visits` are numbered in execution order.
fn search<'a>(
    visits: impl Iterator<Item = (usize, &'a Visit<'a>)>,
    order: &impl Order,
    searched: impl Fn(Memory) -> bool,
) -> Vec<Found> {
    let mut histories: HashMap<Memory, History> = HashMap::default();
    let mut races = Vec::new();
    let mut reported: HashSet<(NodeId, NodeId)> = HashSet::default();
    for (visit, &Visit { node, accesses, .. }) in visits {
        let place = order.place(node);
        let runs_before = order.runs_before(node);
        for (index, access) in accesses.iter().enumerate() {
            if !searched(access.memory) {
                continue;
            }
            let at = (visit as u32, index as u32);
            let history = histories.entry(access.memory).or_default();
            for entry in history.entries.iter_mut().filter(|entry| !entry.superseded) {
                if conflicts(entry, access) && !runs_before(entry.place) && entry.node != node {
                    // One report per pair of calls, whatever the number of ranges.
                    if reported.insert((entry.node, node)) {
                        races.push(Found {
                            order: (at, entry.at),
                            race: race(entry, node, access),
                        });
                    }
                }
                if superseded(entry, place, access, &runs_before) {
                    entry.superseded = true;
                    history.superseded += 1;
                }
            }
            history.push(node, place, access, at);
        }
    }
    races
}

/// One memory region's entries in insertion order. A superseded entry is only marked,
/// and the list compacted once half of it is marked: most accesses supersede an entry
/// near the front, and removing it at once moved every entry after it.
#[derive(Default)]
struct History {
    entries: Vec<Entry>,
    superseded: usize,
}

impl History {
    fn push(&mut self, node: NodeId, place: Place, access: &Access, at: Position) {
        if self.superseded * 2 > self.entries.len() {
            self.entries.retain(|entry| !entry.superseded);
            self.superseded = 0;
        }
        self.entries.push(Entry {
            node,
            place,
            at,
            start: access.start,
            end: access.end,
            write: access.write,
            superseded: false,
        });
    }
}

fn race(entry: &Entry, node: NodeId, access: &Access) -> Race {
    Race {
        first: entry.node,
        second: node,
        memory: access.memory,
        start: entry.start.max(access.start),
        end: entry.end.min(access.end),
        first_writes: entry.write,
        second_writes: access.write,
    }
}

fn conflicts(entry: &Entry, access: &Access) -> bool {
    (entry.write || access.write) && entry.start < access.end && access.start < entry.end
}

/// A later access of the same queue or host thread that the entry happens before,
/// covering its bytes, finds every race the entry would, against a call of the same
/// kind: unless the entry is a write and the new access only reads (a later read would
/// race with the write but not with the read). An access of another agent does not
/// stand for it: a host read followed by a kernel's read would report a later write's
/// race with the kernel only, and the host's (SG602) would be lost.
fn superseded(entry: &Entry, place: Place, access: &Access, runs_before: impl Fn(Place) -> bool) -> bool {
    let covered = access.start <= entry.start && entry.end <= access.end;
    covered && (access.write || !entry.write) && entry.place.agent == place.agent && runs_before(entry.place)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::exec::{AgentId, InstId};

    /// The search as it was before: a pass for the races, then one to drop the
    /// superseded entries, every time.
    fn scan_then_retain(visits: &[(NodeId, Vec<Access>)], order: &impl Order) -> Vec<Race> {
        let mut history: HashMap<Memory, Vec<Entry>> = HashMap::default();
        let mut races = Vec::new();
        let mut reported: HashSet<(NodeId, NodeId)> = HashSet::default();
        for (node, accesses) in visits {
            let node = *node;
            let (place, runs_before) = (order.place(node), order.runs_before(node));
            for access in accesses {
                let entries = history.entry(access.memory).or_default();
                for entry in entries.iter() {
                    if conflicts(entry, access)
                        && !runs_before(entry.place)
                        && entry.node != node
                        && reported.insert((entry.node, node))
                    {
                        races.push(race(entry, node, access));
                    }
                }
                entries.retain(|entry| !superseded(entry, place, access, &runs_before));
                entries.push(Entry {
                    node,
                    place,
                    at: (0, 0),
                    start: access.start,
                    end: access.end,
                    write: access.write,
                    superseded: false,
                });
            }
        }
        races
    }

    fn access() -> impl Strategy<Value = Access> {
        (0u32..3, 0u64..12, 0u64..6, any::<bool>()).prop_map(|(memory, start, len, write)| Access {
            memory: Memory::Buffer(InstId(memory)),
            buffer: InstId(memory),
            start,
            end: start + len,
            write,
        })
    }

    /// A fixed random relation: whether `a` happens before `b` is a hash of both. A
    /// call's tick is its number plus one, from which its place names it again.
    struct RandomOrder {
        agents: Vec<AgentId>,
        seed: u64,
        ordered_one_in: u64,
    }

    impl Order for RandomOrder {
        fn place(&self, node: NodeId) -> Place {
            Place {
                agent: self.agents[node.index()],
                tick: node.0 + 1,
            }
        }

        fn runs_before(&self, b: NodeId) -> impl Fn(Place) -> bool {
            move |place: Place| {
                let a = NodeId(place.tick - 1);
                let pair = (u64::from(a.0) << 32 | u64::from(b.0)) ^ self.seed;
                a < b && (pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40).is_multiple_of(self.ordered_one_in)
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// On random accesses by random agents under a random order relation, the
        /// search reports exactly what the plain scan-then-retain reports, in the same
        /// order. Up to 300 calls on 3 regions, so that histories grow past a hundred
        /// entries and are compacted again and again.
        #[test]
        fn one_pass_finds_what_scan_then_retain_finds(
            calls in prop::collection::vec((prop::collection::vec(access(), 1..3), 0u32..3), 1..300),
            seed in any::<u64>(),
            ordered_one_in in 1u64..4,
        ) {
            let visits: Vec<(NodeId, Vec<Access>)> = calls
                .iter()
                .enumerate()
                .map(|(i, (accesses, _))| (NodeId(i as u32), accesses.clone()))
                .collect();
            let order = RandomOrder {
                agents: calls.iter().map(|(_, agent)| AgentId(*agent)).collect(),
                seed,
                ordered_one_in,
            };
            let expected = scan_then_retain(&visits, &order);
            for groups in 1..=3 {
                let grouped: Vec<Visit> = visits
                    .iter()
                    .map(|(node, accesses)| Visit::new(*node, accesses, groups))
                    .collect();
                let found = search_in_groups(&grouped, &order, groups);
                prop_assert_eq!(&found, &expected, "{} groups", groups);
            }
        }
    }
}
