//! Vector clocks for every executed node, stored sparsely.
//!
//! A dense clock per node costs nodes x agents words: 10M calls over 64 ranks (384
//! streams and threads) would need 15 GB. Two facts make almost all of that redundant:
//! - along an agent, a clock changes only in its own entry, except where an edge from
//!   another agent arrives (a match, a host synchronize, an issue after the host
//!   learned something new);
//! - the entries of the agents of another rank change together, and a clock learns them
//!   by taking them whole from the clock it synchronizes with.
//!
//! So each node keeps its own tick (its position on its agent; `HappensBefore` holds the
//! ticks, which both halves below read) and a `base`: a
//! persistent tree of clock values, shared with the nodes before it until an incoming
//! edge brings news. The tree's leaves hold [`FANOUT`] entries, with agents laid out
//! rank by rank, each rank starting a leaf, so that one rank's agents share leaves;
//! joining two trees reuses every subtree one of them dominates, and writing an entry
//! copies one path. A device op's
//! entry for the host thread that issued it is implicit too (the tick of the host call
//! before the issue), so that issuing work costs nothing while the host learns nothing.
//!
//! `clock(n)[a]` = `tick(n)` for `n`'s own agent; else the base's entry, raised to the
//! issue tick for the issuing host thread. Exactly the dense clock.
//!
//! Joins and raises act entry by entry, so the clocks restricted to some agents come
//! from the same pass with only their entries raised. The pass runs in two such halves
//! side by side (`Clocks::halves`: the first ranks' leaves, the last ranks'), and an
//! entry is read from its half.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::exec::{AgentId, Execution, NodeId};

/// Entries per leaf and children per inner node.
pub const FANOUT: usize = 1 << FANOUT_BITS;
const FANOUT_BITS: u32 = 3;

/// Most levels a tree can have: enough for a slot per `u32`.
const MAX_LEVELS: usize = u32::BITS.div_ceil(FANOUT_BITS) as usize;

/// Most memory the clocks of one analysis may hold: 1.5 GiB. Past it the execution is
/// reported as too large to analyze.
pub const MAX_CLOCK_BYTES: usize = 3 << 29;

/// [`MAX_CLOCK_BYTES`] in tree nodes.
const MAX_TREE_NODES: usize = MAX_CLOCK_BYTES / std::mem::size_of::<[u32; FANOUT]>();

/// Tree nodes are allocated in chunks of this many, so that growth never copies.
const CHUNK: usize = 1 << 16;

/// Room for `CHUNK` nodes, filled in order: never zeroed or moved. A program of a few
/// dozen calls touches a few pages of it, not 2 MiB (a repository of thousands of
/// small programs made and freed its chunks thousands of times, and with the two
/// halves zeroed 5 MiB per run).
type Chunk = Vec<[u32; FANOUT]>;

fn new_chunk() -> Chunk {
    Vec::with_capacity(CHUNK)
}

/// The all-zero tree, at every level.
const ZERO: u32 = 0;

/// The clocks ran past [`MAX_TREE_NODES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockBudgetExceeded;

#[derive(Default)]
pub struct Clocks {
    /// Per agent, its entry's position in the tree (agents grouped by rank).
    slot: Vec<u32>,
    /// Levels of inner nodes above the leaves.
    depth: u32,
    /// Per node: its base tree (`ZERO` for a node that never executes).
    base: Vec<u32>,
    /// Leaves and inner nodes; id `ZERO` is the all-zero node.
    chunks: Vec<Chunk>,
    len: usize,
    /// Nodes from this id on were made for the clock being computed: nothing shares
    /// them yet, so they are written in place rather than copied.
    fresh_from: u32,
    /// Joins of two old subtrees that gave one of them back (a dominance).
    dominated: JoinMemo,
    /// The first slot of the second half (`Clocks::half`).
    split: u32,
    /// Tree nodes allocated by every `Clocks` that shares this budget (the two halves),
    /// and how many it allows ([`MAX_TREE_NODES`]; fewer in tests).
    allocated: Arc<AtomicUsize>,
    limit: usize,
    over_budget: bool,
}

impl Clocks {
    /// The clocks of `exec` in two halves, each raising the entries of half the leaves
    /// (the first ranks, the last ranks): computed side by side, sharing one budget. An
    /// entry is read from its half; each half holds the exact clock's entries there.
    pub fn halves(exec: &Execution) -> [Self; 2] {
        Self::halves_with_slots(rank_aligned_slots(exec), exec.nodes.len())
    }

    fn halves_with_slots(slots: Vec<u32>, nodes: usize) -> [Self; 2] {
        let mut low = Self::with_slots(slots.clone(), nodes);
        let mut high = Self::with_slots(slots, nodes);
        low.split_leaves_in_half();
        high.split_leaves_in_half();
        // The high half's first chunk joins the shared count.
        high.allocated = Arc::clone(&low.allocated);
        high.allocated.fetch_add(CHUNK, Ordering::Relaxed);
        [low, high]
    }

    /// The second half starts at the middle leaf: a rank's agents share a leaf, so no
    /// rank is cut in two.
    fn split_leaves_in_half(&mut self) {
        let leaves = self.slot.iter().max().map_or(0, |&last| last as usize / FANOUT + 1);
        self.split = (leaves.div_ceil(2) * FANOUT) as u32;
    }

    /// Which half raises `agent`'s entry.
    pub fn half(&self, agent: AgentId) -> usize {
        usize::from(self.slot[agent.index()] >= self.split)
    }

    /// Clocks for `nodes` nodes, each agent's entry at its `slot`.
    fn with_slots(slot: Vec<u32>, nodes: usize) -> Self {
        let slots = slot.iter().max().map_or(0, |&last| last as usize + 1);
        let mut depth = 0;
        let mut capacity = FANOUT;
        while capacity < slots {
            capacity = capacity.saturating_mul(FANOUT);
            depth += 1;
        }
        Clocks {
            slot,
            depth,
            base: vec![ZERO; nodes],
            chunks: Vec::new(),
            len: 0,
            fresh_from: 0,
            dominated: JoinMemo::for_nodes(nodes),
            split: u32::MAX,
            allocated: Arc::default(),
            limit: MAX_TREE_NODES,
            over_budget: false,
        }
        .with_zero_node()
    }

    fn with_zero_node(mut self) -> Self {
        self.push([0; FANOUT]);
        self
    }

    /// Every clock back to zero, keeping the memory: a round of host-synchronize edges
    /// recomputes them all, and must not hold two sets at once.
    pub fn clear(&mut self) {
        self.base.fill(ZERO);
        let freed = self.chunks.len().saturating_sub(1) * CHUNK;
        self.allocated.fetch_sub(freed, Ordering::Relaxed);
        self.over_budget = false;
        self.chunks.truncate(1);
        self.chunks[0].truncate(1);
        self.len = 1;
        self.fresh_from = 0;
        self.dominated.clear();
    }

    /// The entry of `agent` in `node`'s base: its clock's entry unless `agent` is its own
    /// or its issuer (whose ticks `HappensBefore` adds).
    pub fn entry(&self, node: NodeId, agent: AgentId) -> u32 {
        self.get(self.base[node.index()], self.slot[agent.index()])
    }

    pub fn base(&self, node: NodeId) -> u32 {
        self.base[node.index()]
    }

    /// Starts the clock of a node: what is allocated from now on is its own.
    pub fn begin(&mut self) {
        self.fresh_from = self.len as u32;
    }

    /// Sets `node`'s base.
    pub fn finish(&mut self, node: NodeId, base: u32) -> Result<(), ClockBudgetExceeded> {
        self.base[node.index()] = base;
        if self.over_budget {
            return Err(ClockBudgetExceeded);
        }
        Ok(())
    }

    /// `tree` with `agent`'s entry raised to `value`. One walk down finds the entry;
    /// the way back up copies the old nodes of its path and writes into the first fresh
    /// one, whose id, and so every id above it, stays the same.
    pub fn raise(&mut self, tree: u32, agent: AgentId, value: u32) -> u32 {
        let slot = self.slot[agent.index()];
        let mut path = [ZERO; MAX_LEVELS];
        let mut id = tree;
        for level in (0..=self.depth).rev() {
            path[level as usize] = id;
            id = self.node(id)[digit(slot, level)];
        }
        if id >= value {
            return tree;
        }
        let mut child = value;
        for level in 0..=self.depth {
            let parent = path[level as usize];
            let digit = digit(slot, level);
            if parent != ZERO && parent >= self.fresh_from {
                self.node_mut(parent)[digit] = child;
                return tree;
            }
            let mut node = *self.node(parent);
            node[digit] = child;
            child = self.push(node);
        }
        child
    }

    /// The entrywise maximum of two trees, sharing every subtree one of them dominates.
    pub fn join(&mut self, a: u32, b: u32) -> u32 {
        self.join_at(a, b, self.depth)
    }

    /// Joins where one side is empty or both are the same subtree, the most common
    /// case below the root, are answered here without a call.
    #[inline(always)]
    fn join_at(&mut self, a: u32, b: u32, level: u32) -> u32 {
        if a == b || b == ZERO {
            a
        } else if a == ZERO {
            b
        } else if level == 0 {
            self.join_leaves(a, b)
        } else {
            self.join_inner(a, b, level)
        }
    }

    fn join_inner(&mut self, a: u32, b: u32, level: u32) -> u32 {
        // Below the root (whole clocks rarely meet twice) and above the leaves (comparing
        // two leaves costs less than the lookup).
        let memoize = level < self.depth && a < self.fresh_from && b < self.fresh_from;
        if memoize && let Some(known) = self.dominated.get(a, b) {
            return known;
        }
        let (left, right) = (*self.node(a), *self.node(b));
        let mut joined = [0u32; FANOUT];
        for i in 0..FANOUT {
            joined[i] = self.join_at(left[i], right[i], level - 1);
        }
        let result = if joined == left {
            a
        } else if joined == right {
            b
        } else {
            return self.push(joined);
        };
        if memoize {
            self.dominated.insert(a, b, result);
        }
        result
    }

    /// Two distinct, nonzero leaves: their entrywise maximum, one of them where it
    /// dominates.
    #[inline(always)]
    fn join_leaves(&mut self, a: u32, b: u32) -> u32 {
        let (left, right) = (self.node(a), self.node(b));
        let joined: [u32; FANOUT] = std::array::from_fn(|i| left[i].max(right[i]));
        if joined == *left {
            a
        } else if joined == *right {
            b
        } else {
            self.push(joined)
        }
    }

    fn get(&self, tree: u32, slot: u32) -> u32 {
        let mut id = tree;
        for level in (0..=self.depth).rev() {
            if id == ZERO {
                return 0;
            }
            id = self.node(id)[digit(slot, level)];
        }
        id
    }

    fn node(&self, id: u32) -> &[u32; FANOUT] {
        let id = id as usize;
        &self.chunks[id / CHUNK][id % CHUNK]
    }

    fn node_mut(&mut self, id: u32) -> &mut [u32; FANOUT] {
        let id = id as usize;
        &mut self.chunks[id / CHUNK][id % CHUNK]
    }

    fn push(&mut self, node: [u32; FANOUT]) -> u32 {
        let id = self.len;
        if id == self.chunks.len() * CHUNK {
            // Counted a chunk at a time, for both halves together.
            let before = self.allocated.fetch_add(CHUNK, Ordering::Relaxed);
            self.over_budget |= before >= self.limit;
            self.chunks.push(new_chunk());
        }
        self.chunks[id / CHUNK].push(node);
        self.len += 1;
        id as u32
    }
}

/// Which child of a node at `level` holds `slot`'s entry.
fn digit(slot: u32, level: u32) -> usize {
    (slot as usize >> (FANOUT_BITS * level)) % FANOUT
}

/// What joining two old subtrees gave, where it was one of them: a clock that learns
/// from another usually already knows most of what that one knows, and the same pairs
/// of subtrees meet again in the joins of the nodes after it (at 64 ranks, 3 joins in 4
/// would walk down to the leaves only to give the left tree back). Old nodes are never
/// written again, so an entry stays true until the clocks are cleared; direct-mapped,
/// a collision only costs the walk.
struct JoinMemo {
    entries: Vec<(u32, u32, u32)>,
}

impl Default for JoinMemo {
    fn default() -> Self {
        Self::for_nodes(0)
    }
}

impl JoinMemo {
    /// Entries for an execution of `nodes` nodes: a power of two from 1,024 to 65,536,
    /// so that a small program does not zero the memo of a large one.
    fn for_nodes(nodes: usize) -> Self {
        let size = nodes.saturating_mul(4).next_power_of_two().clamp(1 << 10, 1 << 16);
        JoinMemo {
            entries: vec![(ZERO, ZERO, ZERO); size],
        }
    }

    fn clear(&mut self) {
        self.entries.fill((ZERO, ZERO, ZERO));
    }

    fn index(&self, a: u32, b: u32) -> usize {
        let hash = u64::from(a).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(b).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        (hash >> 48) as usize & (self.entries.len() - 1)
    }

    /// Never a pair with `ZERO`, so the empty entries never match.
    fn get(&self, a: u32, b: u32) -> Option<u32> {
        let (left, right, joined) = self.entries[self.index(a, b)];
        (left == a && right == b).then_some(joined)
    }

    fn insert(&mut self, a: u32, b: u32, joined: u32) {
        let index = self.index(a, b);
        self.entries[index] = (a, b, joined);
    }
}

/// Each agent's entry in the tree: rank by rank, each rank's agents starting a leaf of
/// their own, so that what one rank's agents learn changes one leaf, not two.
fn rank_aligned_slots(exec: &Execution) -> Vec<u32> {
    let mut by_rank: Vec<usize> = (0..exec.agents.len()).collect();
    by_rank.sort_by_key(|&agent| (exec.agents[agent].rank, agent));
    let mut slot = vec![0u32; exec.agents.len()];
    let mut next = 0usize;
    let mut rank = None;
    for agent in by_rank {
        let agent_rank = exec.agents[agent].rank;
        if rank != Some(agent_rank) {
            next = next.next_multiple_of(FANOUT);
            rank = Some(agent_rank);
        }
        slot[agent] = next as u32;
        next += 1;
    }
    slot
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// One node's clock as `compute_clocks` builds it: joins of earlier nodes' bases,
    /// then raises of single entries.
    #[derive(Clone, Debug)]
    struct Step {
        joins: Vec<usize>,
        raises: Vec<(usize, u32)>,
    }

    const AGENTS: usize = 100;

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        let step = (
            prop::collection::vec(any::<prop::sample::Index>(), 0..4),
            prop::collection::vec((0..AGENTS, 1u32..50), 0..4),
        );
        prop::collection::vec(step, 1..120).prop_map(|raw| {
            raw.into_iter()
                .enumerate()
                .map(|(at, (picks, raises))| Step {
                    // Earlier nodes only, and mostly the last few: the same subtrees then
                    // meet in join after join, as along the agents of a real run.
                    joins: if at == 0 {
                        Vec::new()
                    } else {
                        picks.iter().map(|pick| at - 1 - pick.index(at.min(6))).collect()
                    },
                    raises,
                })
                .collect()
        })
    }

    /// Each node's dense clock: entrywise maxima of what it joined, raised where raised.
    fn dense_clocks(steps: &[Step]) -> Vec<Vec<u32>> {
        let mut dense: Vec<Vec<u32>> = Vec::new();
        for step in steps {
            let mut clock = vec![0u32; AGENTS];
            for &earlier in &step.joins {
                for (entry, value) in clock.iter_mut().zip(&dense[earlier]) {
                    *entry = (*entry).max(*value);
                }
            }
            for &(agent, value) in &step.raises {
                clock[agent] = clock[agent].max(value);
            }
            dense.push(clock);
        }
        dense
    }

    /// Node `node`'s base from `step`, with only the raises of agents `raised` keeps.
    fn take_step(clocks: &mut Clocks, node: usize, step: &Step, raised: impl Fn(usize) -> bool) {
        clocks.begin();
        let mut base = ZERO;
        for &earlier in &step.joins {
            base = clocks.join(base, clocks.base(NodeId(earlier as u32)));
        }
        for &(agent, value) in step.raises.iter().filter(|(agent, _)| raised(*agent)) {
            base = clocks.raise(base, AgentId(agent as u32), value);
        }
        clocks.finish(NodeId(node as u32), base).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// The tree, with its in-place writes of fresh nodes and its memo of dominated
        /// joins, holds exactly the dense clock. 100 agents, one leaf each 8, make a tree
        /// of three levels, so the memo is used below the root.
        #[test]
        fn the_tree_holds_exactly_the_dense_clocks(steps in steps()) {
            let mut clocks = Clocks::with_slots((0..AGENTS as u32).collect(), steps.len());
            for (node, step) in steps.iter().enumerate() {
                take_step(&mut clocks, node, step, |_| true);
            }
            for (node, expected) in dense_clocks(&steps).iter().enumerate() {
                let base = clocks.base(NodeId(node as u32));
                let held: Vec<u32> = (0..AGENTS as u32).map(|slot| clocks.get(base, slot)).collect();
                prop_assert_eq!(&held, expected, "node {}", node);
            }
        }

        /// Two halves, each raising only the entries of its own leaves, hold together
        /// exactly the dense clock: an entry is read from its half.
        #[test]
        fn the_halves_hold_exactly_the_dense_clocks(steps in steps()) {
            let mut halves = Clocks::halves_with_slots((0..AGENTS as u32).collect(), steps.len());
            let half_of: Vec<usize> = (0..AGENTS as u32).map(|agent| halves[0].half(AgentId(agent))).collect();
            prop_assert!(half_of.contains(&0) && half_of.contains(&1));
            for (node, step) in steps.iter().enumerate() {
                for (half, clocks) in halves.iter_mut().enumerate() {
                    take_step(clocks, node, step, |agent| half_of[agent] == half);
                }
            }
            for (node, expected) in dense_clocks(&steps).iter().enumerate() {
                let held: Vec<u32> = (0..AGENTS)
                    .map(|agent| {
                        let clocks = &halves[half_of[agent]];
                        clocks.get(clocks.base(NodeId(node as u32)), agent as u32)
                    })
                    .collect();
                prop_assert_eq!(&held, expected, "node {}", node);
            }
        }
    }

    /// The halves count their tree nodes against one budget: what one half allocates
    /// puts the other over it, and clearing gives it back.
    #[test]
    fn the_halves_share_one_budget() {
        let [mut low, mut high] = Clocks::halves_with_slots((0..16).collect(), 1);
        for clocks in [&mut low, &mut high] {
            clocks.limit = 3 * CHUNK;
        }
        // Two chunks (one per half) so far; a third for the low half fits.
        for _ in 0..CHUNK {
            low.push([1; FANOUT]);
        }
        assert!(low.finish(NodeId(0), ZERO).is_ok());
        // The high half's second chunk is the fourth in all.
        for _ in 0..CHUNK {
            high.push([1; FANOUT]);
        }
        assert_eq!(high.finish(NodeId(0), ZERO), Err(ClockBudgetExceeded));
        low.clear();
        high.clear();
        high.push([1; FANOUT]);
        for _ in 0..CHUNK {
            high.push([1; FANOUT]);
        }
        assert!(high.finish(NodeId(0), ZERO).is_ok());
    }
}
