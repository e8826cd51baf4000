//! Conflicting memory accesses that happens-before does not order.
//!
//! Accesses are visited in execution (Kahn) order, so an earlier-visited access can
//! never be ordered after a later one: a pair conflicts exactly when the earlier one
//! does not happen before the later. Each memory region keeps a history of accesses;
//! an entry is dropped once a later access of the same agent that it happens before
//! covers its bytes, which keeps the history short without losing a race (the later
//! access, on the same queue or host thread, then stands for it).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::HappensBefore;
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
    start: u64,
    end: u64,
    write: bool,
}

pub(super) fn find_races(hb: &HappensBefore, order: &[NodeId]) -> Vec<Race> {
    let mut history: HashMap<Memory, Vec<Entry>> = HashMap::default();
    let mut races = Vec::new();
    let mut reported: HashSet<(NodeId, NodeId)> = HashSet::default();
    for &node in order {
        let Action::Access(accesses) = &hb.exec.node(node).action else {
            continue;
        };
        for access in accesses {
            let entries = history.entry(access.memory).or_default();
            for entry in entries.iter() {
                if conflicts(entry, access) && !hb.happens_before(entry.node, node) && entry.node != node {
                    // One report per pair of calls, whatever the number of ranges.
                    if reported.insert((entry.node, node)) {
                        races.push(Race {
                            first: entry.node,
                            second: node,
                            memory: access.memory,
                            start: entry.start.max(access.start),
                            end: entry.end.min(access.end),
                            first_writes: entry.write,
                            second_writes: access.write,
                        });
                    }
                }
            }
            entries.retain(|entry| !superseded(hb, entry, node, access));
            entries.push(Entry {
                node,
                start: access.start,
                end: access.end,
                write: access.write,
            });
        }
    }
    races
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
fn superseded(hb: &HappensBefore, entry: &Entry, node: NodeId, access: &Access) -> bool {
    let covered = access.start <= entry.start && entry.end <= access.end;
    let exec = hb.exec;
    covered
        && (access.write || !entry.write)
        && exec.node(entry.node).agent == exec.node(node).agent
        && hb.happens_before(entry.node, node)
}
