//! Happens-before between the instructions of one core's run. Each pipe runs its own
//! instructions in order; `PIPE_S` issues every instruction in program order, so an
//! instruction starts after the scalar instructions issued before it; a `WaitFlag`
//! runs after the `SetFlag` it consumes (the k-th wait of a flag after its k-th set);
//! `PipeBarrier<PIPE_ALL>`, a cross-core wait and `SyncAll` wait for every pipe. With the
//! compiler's automatic sync on a vector core, a scalar access (`GetValue`, `SetValue`)
//! waits for the last vector and MTE2/MTE3 instruction that touches its bytes: the
//! compiler inserts that wait, and so orders what comes after the scalar access too.
//! A wait whose set can only come after it (a cycle) or never comes blocks its pipe
//! for good: the instructions that need it never run.

use std::collections::HashMap;

use super::walk::{FlagKey, Instr, Step};
use crate::model::Pipe;

pub const LANES: usize = 7;

/// The lane of a pipe in a vector clock (`PIPE_ALL` steps run on the scalar lane).
pub fn lane(pipe: Pipe) -> usize {
    match pipe {
        Pipe::S | Pipe::All => 0,
        Pipe::V => 1,
        Pipe::M => 2,
        Pipe::Mte1 => 3,
        Pipe::Mte2 => 4,
        Pipe::Mte3 => 5,
        Pipe::Fix => 6,
    }
}

pub type Clock = [u32; LANES];

pub struct Order {
    /// Per instruction: its position on its lane (from 1) and what it is known to run
    /// after; `None` for an instruction that never runs.
    pub seq: Vec<u32>,
    pub clocks: Vec<Option<Clock>>,
    /// For a wait: the set it consumes.
    pub matched: Vec<Option<usize>>,
    /// Waits no set ever satisfies.
    pub unmatched_waits: Vec<usize>,
    /// Sets of an event flag, and queue fills (`EnQue`), nothing waits for.
    pub unmatched_sets: Vec<usize>,
    /// Waits whose set comes only after them: (wait, set).
    pub cycles: Vec<(usize, usize)>,
}

impl Order {
    /// `a` finishes before `b` starts.
    pub fn before(&self, instrs: &[Instr], a: usize, b: usize) -> bool {
        match (&self.clocks[a], &self.clocks[b]) {
            (Some(_), Some(clock)) => clock[lane(instrs[a].step.pipe())] >= self.seq[a],
            _ => false,
        }
    }

    pub fn runs(&self, index: usize) -> bool {
        self.clocks[index].is_some()
    }
}

/// `scalar_waits_for_memory`: the compiler's automatic sync is on and the core is a
/// vector core.
pub fn order(instrs: &[Instr], scalar_waits_for_memory: bool) -> Order {
    let n = instrs.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut seq = vec![0u32; n];
    let mut last_on_lane: [Option<usize>; LANES] = [None; LANES];
    let mut counts = [0u32; LANES];
    let mut last_scalar: Option<usize> = None;
    let mut sets: HashMap<FlagKey, Vec<usize>> = HashMap::new();
    let mut waits: HashMap<FlagKey, Vec<usize>> = HashMap::new();
    for (i, instr) in instrs.iter().enumerate() {
        let pipe = instr.step.pipe();
        let l = lane(pipe);
        counts[l] += 1;
        seq[i] = counts[l];
        if let Some(prev) = last_on_lane[l] {
            preds[i].push(prev);
        }
        if let Some(scalar) = last_scalar.filter(|s| Some(*s) != last_on_lane[l]) {
            preds[i].push(scalar);
        }
        if scalar_waits_for_memory && pipe == Pipe::S {
            preds[i].extend(auto_synced_before(instrs, i));
        }
        if pipe == Pipe::All {
            preds[i].extend(last_on_lane.iter().flatten().copied());
        }
        last_on_lane[l] = Some(i);
        if l == 0 {
            last_scalar = Some(i);
        }
        match &instr.step {
            Step::Set { key, .. } => sets.entry(*key).or_default().push(i),
            Step::Wait { key, .. } => waits.entry(*key).or_default().push(i),
            _ => {}
        }
    }
    let mut matched = vec![None; n];
    let mut unmatched_waits = Vec::new();
    let mut unmatched_sets = Vec::new();
    for (key, key_waits) in &waits {
        let key_sets = sets.get(key).map(Vec::as_slice).unwrap_or_default();
        for (k, &wait) in key_waits.iter().enumerate() {
            match key_sets.get(k) {
                Some(&set) => {
                    matched[wait] = Some(set);
                    preds[wait].push(set);
                }
                None => unmatched_waits.push(wait),
            }
        }
    }
    // A queue's fill left set (an `EnQue` no `DeQue` takes) is a flag left set too; a
    // free left set is every slot's last `FreeTensor`, which nothing needs to take.
    for (key, key_sets) in &sets {
        if let FlagKey::Event { .. } | FlagKey::Queue { freed: false, .. } = key {
            let waited = waits.get(key).map_or(0, Vec::len);
            unmatched_sets.extend(key_sets.iter().skip(waited));
        }
    }
    unmatched_waits.sort_unstable();
    unmatched_sets.sort_unstable();
    let blocked: Vec<bool> = {
        let mut blocked = vec![false; n];
        for &wait in &unmatched_waits {
            blocked[wait] = true;
        }
        blocked
    };
    let clocks = clocks(&preds, &seq, instrs, &blocked);
    let mut cycles = Vec::new();
    for (wait, set) in matched.iter().enumerate().filter_map(|(w, s)| s.map(|s| (w, s))) {
        if clocks[wait].is_none() && !blocked[wait] && set > wait {
            cycles.push((wait, set));
        }
    }
    Order {
        seq,
        clocks,
        matched,
        unmatched_waits,
        unmatched_sets,
        cycles,
    }
}

/// For a scalar access at `i`: the last instruction of each of PIPE_V, PIPE_MTE2 and
/// PIPE_MTE3 before it that touches its bytes, one of the two writing.
fn auto_synced_before(instrs: &[Instr], i: usize) -> Vec<usize> {
    let Step::Work { mems, .. } = &instrs[i].step else {
        return Vec::new();
    };
    if mems.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for pipe in [Pipe::V, Pipe::Mte2, Pipe::Mte3] {
        let conflicting = instrs[..i].iter().rposition(|earlier| match &earlier.step {
            Step::Work { pipe: p, mems: others } if *p == pipe => others
                .iter()
                .any(|other| mems.iter().any(|mem| (mem.write || other.write) && mem.overlaps(other))),
            _ => false,
        });
        found.extend(conflicting);
    }
    found
}

/// Vector clocks in topological order; an instruction in a cycle, blocked, or after
/// one of those never runs and gets none.
fn clocks(preds: &[Vec<usize>], seq: &[u32], instrs: &[Instr], blocked: &[bool]) -> Vec<Option<Clock>> {
    let n = preds.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut missing = vec![0usize; n];
    for (i, ps) in preds.iter().enumerate() {
        missing[i] = ps.len();
        for &p in ps {
            succs[p].push(i);
        }
    }
    let mut clocks: Vec<Option<Clock>> = vec![None; n];
    let mut ready: Vec<usize> = (0..n).filter(|&i| missing[i] == 0).collect();
    while let Some(i) = ready.pop() {
        if blocked[i] {
            continue;
        }
        let mut clock = [0u32; LANES];
        for &p in &preds[i] {
            if let Some(pc) = &clocks[p] {
                for (c, v) in clock.iter_mut().zip(pc) {
                    *c = (*c).max(*v);
                }
            }
        }
        clock[lane(instrs[i].step.pipe())] = seq[i];
        clocks[i] = Some(clock);
        for &s in &succs[i] {
            missing[s] -= 1;
            if missing[s] == 0 {
                ready.push(s);
            }
        }
    }
    clocks
}
