//! Whether deleting statements of a kernel's pipe program (a `PipeBarrier<PIPE_ALL>`, a
//! `SetFlag`/`WaitFlag` pair) removes an order two of its instructions need.
//!
//! From each instruction `a` that can run before a deleted statement, every path of the
//! `aicore` block's control flow (`flow`, through loop back edges; not through an arm
//! whose condition on a parameter contradicts one taken before, such as another build
//! type's) is walked twice at once: in the original and in the mutant. Along it, the set of pipes whose later
//! instructions start after `a` finishes grows:
//! - `a`'s own pipe (a pipe runs in order);
//! - everything after a `PipeBarrier<PIPE_ALL>` or `SyncAll` (they wait for every pipe);
//! - the waiting pipe after a `WaitFlag` whose `SetFlag` came after `a` on a pipe in the
//!   set, and everything after such a wait on the scalar pipe (which issues everything);
//! - a queue's consumer pipe after a `DeQue` that takes an entry an `EnQue` put in with
//!   the producer pipe in the set; the producer after an `AllocTensor` that waits for
//!   such a `FreeTensor` of the consumer;
//! - everything after a scalar `GetValue`/`SetValue` that the compiler's automatic sync
//!   makes wait for `a` or for a V, MTE2 or MTE3 instruction that runs after it (a vector
//!   kernel: the scalar access waits for the last of those touching its bytes, one of
//!   the two writing).
//!
//! The deletion removes a needed order when an instruction `b` on a path through a
//! deleted statement touches one memory with `a` from another pipe that nothing else
//! orders (one pipe keeps its own order; the automatic sync orders the scalar pipe with
//! V, MTE2 and MTE3), and `b`'s pipe is in the original's set but not in the mutant's.
//! A queue is one memory, except for a tensor allocated from the queue of a tensor `a`
//! touches while that one is held, or after its free waited for `a`: in another of the
//! queue's buffers, or allocated after that free (see `After::follow_slot`), it races
//! with none of `a`'s touches of the queue.
//! So that a mutant called equivalent is one, what the walk cannot be sure of counts
//! for the original and against the mutant: in the original a `DeQue` whose entry it
//! cannot place, an `AllocTensor` of a deeper queue, a flag's id it cannot match, or a
//! scalar access whose bytes may be those of an instruction after `a`, order; in the
//! mutant they do not. Past a few paths into one statement their states are joined the
//! same way. A statement whose pipes are not plain (a cube or cross-core instruction,
//! a `while`) on the way makes the deletion count as needed.

use std::collections::{HashMap, HashSet};

use super::flow::{ANY_MEMORY, Fact, Flow, Kind, QueueOp, Touch, take_fact};

/// The pipes a set can hold, one bit each.
const PIPES: [&str; 7] = ["S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"];
const EVERY_PIPE: u8 = (1 << PIPES.len()) - 1;
/// The pipes the compiler's automatic sync orders the scalar pipe with, in a vector
/// kernel.
const SCALAR_SYNCED: [&str; 3] = ["V", "MTE2", "MTE3"];
/// States kept apart at one node before they are joined into one.
const PATHS_PER_NODE: usize = 8;
/// Statements walked from one instruction before the walk gives up (and the deletion
/// counts as needed).
const MAX_STEPS: usize = 1_000_000;
/// Entries a queue is counted up to from the kernel's start; past it, not known.
const MAX_ENTRIES: u32 = 16;
/// Ordering entries the original counts one by one; at this many, it counts them as
/// never running out.
const MANY_ENTRIES: usize = 4;

fn bit(pipe: &str) -> Option<u8> {
    PIPES.iter().position(|p| *p == pipe).map(|i| 1 << i)
}

/// Whether the walk is of the original (what it cannot be sure of orders) or of the
/// mutant (what it cannot be sure of does not).
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Original,
    Mutant,
}

/// What orders later instructions after the walk's `a` at a point of one path.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
struct After {
    /// The pipes whose later instructions start after `a` finishes.
    pipes: u8,
    /// Flags set after `a` on a pipe of `pipes`, not yet waited: (event, id).
    flags: Vec<(String, String)>,
    /// Per queue, its entries in order: whether each was put in after `a` finished
    /// (`None`: the entries ahead of `a`'s are not known, nothing taken is matched). The
    /// original's hold only those put in after, up to `MANY_ENTRIES`.
    entries: Vec<(String, Option<Vec<bool>>)>,
    /// Per queue, whether its last `FreeTensor` came after `a` finished.
    freed: Vec<(String, bool)>,
    /// What V, MTE2 and MTE3 instructions that start after `a` finished (and `a`)
    /// touch: a scalar access the automatic sync makes wait for one of them waits for
    /// `a`.
    touched: Vec<Touch>,
    /// The queue tensors `a` touches (see [`Held`]).
    held: Vec<(String, Held)>,
    /// Tensors allocated after `a` from the queue of a tensor in `held` while none of
    /// those was lost from sight: each is in another buffer than `a`'s tensor, or its
    /// allocation waited for that tensor's free after `a` (see [`After::follow_slot`]).
    apart: Vec<String>,
}

/// Where a queue tensor `a` touches stands on a path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Held {
    /// Not freed: its buffer is taken, no allocation gets it.
    Live,
    /// Freed after `a` finished on the queue's consumer pipe: an allocation that gets its
    /// buffer waits for `a`.
    FreedAfter,
    /// Freed where `a` may not have finished, enqueued (freed under another name later)
    /// or its name bound again while held: nothing is known of its buffer.
    Lost,
}

impl After {
    fn orders(&self, pipe: &str) -> bool {
        bit(pipe).is_some_and(|b| self.pipes & b != 0)
    }

    fn add(&mut self, pipe: &str) {
        self.pipes |= match pipe {
            "S" => EVERY_PIPE,
            _ => bit(pipe).unwrap_or(0),
        };
    }

    /// The state that stands for both `self` and `other`: on the original, what orders
    /// on either; on the mutant, what orders on both.
    fn join(&self, other: &After, side: Side) -> After {
        let either = side == Side::Original;
        let mut out = After {
            pipes: if either {
                self.pipes | other.pipes
            } else {
                self.pipes & other.pipes
            },
            ..After::default()
        };
        out.flags = merged(&self.flags, &other.flags, either);
        out.touched = merged(&self.touched, &other.touched, either);
        out.apart = merged(&self.apart, &other.apart, false);
        out.held = self
            .held
            .iter()
            .map(|(tensor, held)| {
                let same = other.held.iter().any(|(t, h)| t == tensor && h == held);
                (tensor.clone(), if same { *held } else { Held::Lost })
            })
            .collect();
        let queues = self.entries.iter().chain(&other.entries).map(|(q, _)| q);
        for queue in queues {
            if out.entries.iter().any(|(q, _)| q == queue) {
                continue;
            }
            let of = |after: &After| {
                after
                    .entries
                    .iter()
                    .find(|(q, _)| q == queue)
                    .map_or(Some(Vec::new()), |(_, e)| e.clone())
            };
            let (mine, theirs) = (of(self), of(other));
            let joined = match (mine, theirs) {
                (Some(a), Some(b)) if either => Some(if a.len() >= b.len() { a } else { b }),
                (a, b) if a == b => a,
                _ => None,
            };
            out.entries.push((queue.clone(), joined));
        }
        let freed_queues = self.freed.iter().chain(&other.freed).map(|(q, _)| q);
        for queue in freed_queues {
            if out.freed.iter().any(|(q, _)| q == queue) {
                continue;
            }
            let of = |after: &After| after.freed.iter().any(|(q, f)| q == queue && *f);
            let freed = if either {
                of(self) || of(other)
            } else {
                of(self) && of(other)
            };
            out.freed.push((queue.clone(), freed));
        }
        out
    }

    /// A queue's entries; one no path has filled before `a` holds none.
    fn queue(&mut self, name: &str) -> &mut Option<Vec<bool>> {
        let at = match self.entries.iter().position(|(q, _)| q == name) {
            Some(at) => at,
            None => {
                self.entries.push((name.to_string(), Some(Vec::new())));
                self.entries.len() - 1
            }
        };
        &mut self.entries[at].1
    }

    /// The order after `kind` runs, on `side`.
    fn step(&mut self, kind: &Kind, side: Side, flow: &Flow) {
        let sure = side == Side::Mutant;
        match kind {
            Kind::BarrierAll => self.pipes = EVERY_PIPE,
            Kind::SetFlag(event, id) => {
                let from = event.split_once('_').map(|(from, _)| from);
                if from.is_some_and(|from| self.orders(from)) && !self.flags.contains(&(event.clone(), id.clone())) {
                    self.flags.push((event.clone(), id.clone()));
                }
            }
            Kind::WaitFlag(event, id) => {
                let matched = self.flags.iter().position(|(e, i)| e == event && (i == id || !sure));
                if let Some(at) = matched {
                    self.flags.remove(at);
                    match event.split_once('_') {
                        Some((_, to)) if bit(to).is_some() => self.add(to),
                        _ if !sure => self.pipes = EVERY_PIPE,
                        _ => {}
                    }
                }
            }
            Kind::Queue(op, name, tensor) => {
                self.queue_step(*op, name, sure, flow);
                if let Some(tensor) = tensor {
                    self.follow_slot(*op, name, tensor, flow);
                }
            }
            Kind::Access("S", touches) if flow.scalar_auto_synced && self.scalar_waits(touches, sure) => {
                self.pipes = EVERY_PIPE;
            }
            Kind::Access(pipe, touches) if SCALAR_SYNCED.contains(pipe) && self.orders(pipe) => {
                for touch in touches {
                    if !self.touched.contains(touch) {
                        self.touched.push(touch.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether the compiler's automatic sync makes a scalar access touching `touches`
    /// wait for an instruction after `a`: one of V, MTE2 and MTE3 that ran after it
    /// touched one place with it, one of the two writing; not sure (`!sure`): one memory.
    fn scalar_waits(&self, touches: &[Touch], sure: bool) -> bool {
        self.touched.iter().any(|a| {
            touches.iter().any(|s| {
                let one_place = a.place.is_some() && a.place == s.place && (a.write || s.write);
                one_place || (!sure && overlap(a, s))
            })
        })
    }

    /// Follows the buffers of `a`'s queue tensors. A queue allocates its buffers in
    /// turn, skipping those still taken, and an allocation waits for the free of the
    /// buffer it gets (asc-devkit `kernel_tquebind_impl.h`, `AllocTensor`: `bufCursor`,
    /// `WaitFlag<freeBufEvt>(freeBufEvtID)`). So while `a`'s tensor is held, a tensor
    /// allocated from its queue is in another buffer; once it was freed after `a`, one
    /// in its buffer was allocated after a free that waits for `a` (the buffer's later
    /// frees come after that one on the consumer pipe).
    fn follow_slot(&mut self, op: QueueOp, queue: &str, tensor: &str, flow: &Flow) {
        let consumer_after = flow.queue(queue).is_some_and(|pipes| self.orders(pipes.consumer));
        // Only a held tensor's name is still its own (a name bound again is another's).
        if let Some(at) = self.held.iter().position(|(t, h)| t == tensor && *h == Held::Live) {
            let held = &mut self.held[at].1;
            *held = match (op, *held) {
                (QueueOp::FreeTensor, Held::Live) if consumer_after => Held::FreedAfter,
                (_, Held::Live) => Held::Lost,
                (_, other) => other,
            };
        }
        self.apart.retain(|t| t != tensor);
        let queue_held: Vec<Held> = self
            .held
            .iter()
            .filter(|(t, _)| flow.memory_of(t) == Some(queue))
            .map(|(_, held)| *held)
            .collect();
        if op == QueueOp::AllocTensor && !queue_held.is_empty() && !queue_held.contains(&Held::Lost) {
            self.apart.push(tensor.to_string());
        }
    }

    /// Whether every touch of `b` that overlaps one of `a` is of a tensor apart from it
    /// (see [`After::apart`]).
    fn apart_from(&self, a: &[Touch], b: &[Touch]) -> bool {
        a.iter().all(|a| {
            b.iter().all(|b| {
                !overlap(a, b)
                    || a.tensor.as_ref().is_some_and(|t| self.held.iter().any(|(h, _)| h == t))
                        && b.tensor.as_ref().is_some_and(|t| self.apart.contains(t))
            })
        })
    }

    fn queue_step(&mut self, op: QueueOp, name: &str, sure: bool, flow: &Flow) {
        let Some(pipes) = flow.queue(name) else {
            // A queue whose pipes are not known: its waits may order anything.
            if !sure && matches!(op, QueueOp::DeQue | QueueOp::AllocTensor) {
                self.pipes = EVERY_PIPE;
            }
            return;
        };
        match op {
            QueueOp::EnQue => {
                let filled_after = self.orders(pipes.producer);
                let entries = self.queue(name);
                match entries {
                    Some(list) if sure && list.len() >= MAX_ENTRIES as usize => *entries = None,
                    Some(list) if sure => list.push(filled_after),
                    // The original keeps only the entries that order, up to a few (a
                    // `DeQue` may take any of them): beyond, as many as it takes.
                    Some(list) if filled_after && list.len() < MANY_ENTRIES => list.push(true),
                    _ => {}
                }
            }
            QueueOp::DeQue => {
                let taken = match self.queue(name) {
                    Some(list) if sure => !list.is_empty() && list.remove(0),
                    Some(list) if list.len() == MANY_ENTRIES => true,
                    Some(list) => list.pop().is_some(),
                    None => false,
                };
                if taken {
                    self.add(pipes.consumer);
                }
            }
            QueueOp::FreeTensor => {
                let freed_after = self.orders(pipes.consumer);
                match self.freed.iter_mut().find(|(q, _)| q == name) {
                    Some((_, last)) => *last = freed_after || (!sure && *last),
                    None => self.freed.push((name.to_string(), freed_after)),
                }
            }
            QueueOp::AllocTensor => {
                // A one-slot queue's allocation waits for its last free; a deeper one's
                // for an earlier free, which only the original takes to be that one.
                let waits = self.freed.iter().any(|(q, after)| q == name && *after) && (pipes.depth == 1 || !sure);
                if sure {
                    self.freed.retain(|(q, _)| q != name);
                }
                if waits {
                    self.add(pipes.producer);
                }
            }
        }
    }
}

/// What both lists hold or, with `either`, what one of them does.
fn merged<T: Clone + PartialEq>(a: &[T], b: &[T], either: bool) -> Vec<T> {
    let mut out: Vec<T> = a.iter().filter(|x| either || b.contains(x)).cloned().collect();
    if either {
        out.extend(b.iter().filter(|x| !a.contains(x)).cloned());
    }
    out
}

fn overlap(a: &Touch, b: &Touch) -> bool {
    a.memory == b.memory || a.memory == ANY_MEMORY || b.memory == ANY_MEMORY
}

/// Whether two instructions need an order: on two pipes that nothing else orders,
/// touching one memory.
fn conflict((pipe_a, a): (&str, &[Touch]), (pipe_b, b): (&str, &[Touch]), scalar_auto_synced: bool) -> bool {
    let auto_synced = |x: &str, y: &str| x == "S" && SCALAR_SYNCED.contains(&y);
    if pipe_a == pipe_b || (scalar_auto_synced && (auto_synced(pipe_a, pipe_b) || auto_synced(pipe_b, pipe_a))) {
        return false;
    }
    a.iter().any(|a| b.iter().any(|b| overlap(a, b)))
}

/// Whether deleting the statements starting at the lines `deleted` of the pipe program
/// `converted` (`lines` its lines; all in one `aicore` block) removes no order two of
/// its instructions need (the module's doc comment). `false` when that is not sure.
pub(super) fn removes_no_order(converted: &str, lines: &[&str], deleted: &[usize]) -> bool {
    let Some(&first) = deleted.first() else {
        return false;
    };
    let Some((flow, _)) = Flow::around(converted, lines, first) else {
        return false;
    };
    let deleted_nodes: HashSet<usize> = (0..flow.nodes.len())
        .filter(|&id| id != 0 && id + 1 != flow.nodes.len() && deleted.contains(&flow.nodes[id].line))
        .collect();
    let found: HashSet<usize> = deleted_nodes.iter().map(|&id| flow.nodes[id].line).collect();
    if deleted.iter().any(|line| !found.contains(line)) {
        return false;
    }
    let entries = queue_entries(&flow);
    let holding = flow.facts_holding();
    reaching(&flow, &deleted_nodes)
        .into_iter()
        .all(|source| match &flow.nodes[source].kind {
            Kind::Access(pipe, touches) => no_order_removed(
                &flow,
                &deleted_nodes,
                (source, pipe, touches),
                (&entries[source], &holding[source]),
            ),
            _ => true,
        })
}

/// The nodes from which one of `targets` can be reached.
fn reaching(flow: &Flow, targets: &HashSet<usize>) -> Vec<usize> {
    let mut seen = vec![false; flow.nodes.len()];
    let mut stack: Vec<usize> = targets.iter().copied().collect();
    while let Some(id) = stack.pop() {
        for &before in &flow.nodes[id].previous {
            if !std::mem::replace(&mut seen[before], true) {
                stack.push(before);
            }
        }
    }
    (0..flow.nodes.len()).filter(|&id| seen[id]).collect()
}

/// Per node: how many entries each queue holds when it runs, counted from the
/// kernel's start along every path, as the least and the most (`MAX_ENTRIES` and over:
/// not counted). A `DeQue` takes one of at least one: the original kernel never waits
/// there for good (its check found no wait left hanging), whatever path the walk, which
/// takes every arm, thinks possible.
fn queue_entries(flow: &Flow) -> Vec<HashMap<String, (u32, u32)>> {
    let n = flow.nodes.len();
    let mut at: Vec<Option<HashMap<String, (u32, u32)>>> = vec![None; n];
    at[0] = Some(HashMap::new());
    let mut work = vec![0usize];
    while let Some(id) = work.pop() {
        let Some(mut counts) = at[id].clone() else { continue };
        if let Kind::Queue(op @ (QueueOp::EnQue | QueueOp::DeQue), name, _) = &flow.nodes[id].kind {
            let (least, most) = counts.entry(name.clone()).or_insert((0, 0));
            if *op == QueueOp::EnQue {
                (*least, *most) = ((*least + 1).min(MAX_ENTRIES), (*most + 1).min(MAX_ENTRIES));
            } else {
                (*least, *most) = (least.saturating_sub(1), most.saturating_sub(1));
            }
        }
        for &next in &flow.nodes[id].next {
            let joined = match &at[next] {
                None => counts.clone(),
                Some(old) => widen(old, &counts),
            };
            if at[next].as_ref() != Some(&joined) {
                at[next] = Some(joined);
                work.push(next);
            }
        }
    }
    at.into_iter().map(Option::unwrap_or_default).collect()
}

/// Whether the queue tensor `tensor` is held where `source` runs: on every path into it,
/// bound by its queue operation with no `FreeTensor` or `EnQue` of it since.
fn held_at(flow: &Flow, source: usize, tensor: &str) -> bool {
    let mut seen = vec![false; flow.nodes.len()];
    let mut stack = vec![source];
    while let Some(id) = stack.pop() {
        for &before in &flow.nodes[id].previous {
            if std::mem::replace(&mut seen[before], true) {
                continue;
            }
            match &flow.nodes[before].kind {
                Kind::Queue(QueueOp::AllocTensor | QueueOp::DeQue, _, Some(t)) if t == tensor => continue,
                Kind::Queue(QueueOp::FreeTensor | QueueOp::EnQue, _, Some(t)) if t == tensor => return false,
                _ if before == 0 => return false,
                _ => stack.push(before),
            }
        }
    }
    true
}

/// The counts of two paths into one node: from the least of both to the most.
fn widen(a: &HashMap<String, (u32, u32)>, b: &HashMap<String, (u32, u32)>) -> HashMap<String, (u32, u32)> {
    let mut out = a.clone();
    for (queue, &(least, most)) in b {
        let (my_least, my_most) = a.get(queue).copied().unwrap_or((0, 0));
        out.insert(queue.clone(), (my_least.min(least), my_most.max(most)));
    }
    for (queue, (least, _)) in out.iter_mut() {
        if !b.contains_key(queue) {
            *least = 0;
        }
    }
    out
}

/// Where one path from `a` stands: what its `if` arms said of the parameters, and the
/// orders in the original and in the mutant.
#[derive(Clone, PartialEq)]
struct PathState {
    facts: Vec<Fact>,
    original: After,
    mutant: After,
}

impl PathState {
    /// The state that stands for both: the facts both hold, the original's orders of
    /// either, the mutant's of both (so a removed order is still seen).
    fn join(&self, other: &PathState) -> PathState {
        PathState {
            facts: merged(&self.facts, &other.facts, false),
            original: self.original.join(&other.original, Side::Original),
            mutant: self.mutant.join(&other.mutant, Side::Mutant),
        }
    }
}

/// The states that reached one node (with one `passed`): each path's own, up to
/// `PATHS_PER_NODE`; past that, one that stands for all of them.
#[derive(Default)]
struct Paths {
    states: Vec<PathState>,
    joined: bool,
}

impl Paths {
    /// The state to walk on from here with `state` arrived, `None` when what it would
    /// walk is walked already.
    fn arrive(&mut self, state: PathState) -> Option<PathState> {
        if self.joined {
            let joined = self.states[0].join(&state);
            if joined == self.states[0] {
                return None;
            }
            self.states[0] = joined.clone();
            return Some(joined);
        }
        if self.states.contains(&state) {
            return None;
        }
        if self.states.len() < PATHS_PER_NODE {
            self.states.push(state.clone());
            return Some(state);
        }
        let joined = self.states.iter().fold(state, |joined, old| joined.join(old));
        self.states = vec![joined.clone()];
        self.joined = true;
        Some(joined)
    }
}

/// Whether no path from `source` meets an instruction whose order after it the
/// deletion removes.
fn no_order_removed(
    flow: &Flow,
    deleted: &HashSet<usize>,
    (source, pipe, touches): (usize, &'static str, &[Touch]),
    (entries, holding): (&HashMap<String, (u32, u32)>, &[Fact]),
) -> bool {
    let start = |side| {
        let mut after = After {
            pipes: bit(pipe).unwrap_or(0),
            ..After::default()
        };
        if SCALAR_SYNCED.contains(&pipe) {
            after.touched = touches.to_vec();
        }
        after.held = touches
            .iter()
            .filter_map(|touch| touch.tensor.clone())
            .filter(|tensor| flow.is_queue_tensor(tensor) && held_at(flow, source, tensor))
            .map(|tensor| (tensor, Held::Live))
            .collect();
        for (queue, count) in entries {
            // The original counts only the entries that order (none yet), as if none
            // were ahead of `a`'s: a `DeQue` may take what came after `a`.
            let known = match (count, side) {
                (_, Side::Original) => Some(Vec::new()),
                (&(least, most), Side::Mutant) if least == most && most < MAX_ENTRIES => {
                    Some(vec![false; least as usize])
                }
                (_, Side::Mutant) => None,
            };
            after.entries.push((queue.clone(), known));
        }
        after
    };
    let (original, mutant) = (start(Side::Original), start(Side::Mutant));
    // Each state also says whether its path has passed a deleted statement: on a path
    // that has not, the original and the mutant run the same statements.
    let mut at: Vec<[Paths; 2]> = (0..flow.nodes.len()).map(|_| Default::default()).collect();
    let first = PathState {
        facts: holding.to_vec(),
        original,
        mutant,
    };
    let mut stack: Vec<(usize, bool, PathState)> = flow.nodes[source]
        .next
        .iter()
        .map(|&next| (next, false, first.clone()))
        .collect();
    let mut steps = 0usize;
    while let Some((id, passed, mut state)) = stack.pop() {
        steps += 1;
        if steps > MAX_STEPS {
            return false;
        }
        let kind = &flow.nodes[id].kind;
        if !take_fact(&mut state.facts, kind) {
            continue;
        }
        let Some(mut state) = at[id][usize::from(passed)].arrive(state) else {
            continue;
        };
        match kind {
            Kind::Unplain | Kind::Unread => return false,
            Kind::Access(other, other_touches) => {
                let needed = conflict((pipe, touches), (other, other_touches), flow.scalar_auto_synced)
                    && !state.mutant.apart_from(touches, other_touches);
                if needed && passed && state.original.orders(other) && !state.mutant.orders(other) {
                    return false;
                }
            }
            _ => {}
        }
        state.original.step(kind, Side::Original, flow);
        let passed = passed || deleted.contains(&id);
        if !deleted.contains(&id) {
            state.mutant.step(kind, Side::Mutant, flow);
        }
        if state.mutant.pipes == EVERY_PIPE {
            continue;
        }
        for &next in &flow.nodes[id].next {
            stack.push((next, passed, state.clone()));
        }
    }
    true
}
