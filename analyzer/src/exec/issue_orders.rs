//! The orders in which a rank's host threads can issue their calls.
//!
//! The walk visits a rank's host threads one after another, but at run time they issue
//! concurrently, and where two threads touch one runtime object the order of their
//! calls changes what the program does: the FIFO position of work on a shared stream,
//! which record a capture-kind event wait binds to, which notify record a wait
//! consumes. Each such order is checked as an execution of its own ([`reorder`]), and
//! a finding of any of them is a finding of the program. (What a stream or device
//! synchronize waits for also depends on the order; `hb::host_sync` takes the work
//! certainly issued before it, and SG503 the work that may be.)
//!
//! Only the calls that touch an object another host thread also touches are permuted
//! (the others keep their place in their thread), and of orders that differ only in
//! the order of calls touching nothing in common, one is kept: the others make the
//! same execution.

use std::collections::HashMap;

use super::{Action, AgentId, AgentKind, Execution, InstId, LegacyOrder, NodeId, UnsubmittedBatch};

/// Issue orders checked per run. Past it the rest are said to be unchecked.
pub const MAX_ISSUE_ORDERS: usize = 1024;

/// Calls analyzed in all orders of one run together (orders x calls): a large trace
/// keeps its walk order alone rather than take minutes.
const MAX_ORDERED_CALLS: usize = 4_000_000;

/// Calls that touch a shared object, per run: past it, the orders are not enumerated.
const MAX_CONFLICTS: usize = 100_000;

/// The issue orders of one run.
pub struct IssueOrders {
    /// Each order lists every node, rank by rank, in issue order. Empty when the walk
    /// order is the only one (no two host threads touch one object).
    pub orders: Vec<Vec<NodeId>>,
    /// Orders that exist beyond `orders`: not checked.
    pub unchecked: bool,
    /// The calls whose order differs between orders (by node): the ones judged for
    /// realizability and named in messages.
    pub conflicts: Vec<bool>,
}

/// What a call touches that another host thread's call may also touch.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Touch {
    /// Work queued on a stream or HCCL thread (its FIFO position).
    Queue(AgentId),
    /// An event: records and resets change what later calls see.
    EventChange(super::InstId),
    EventRead(super::InstId),
    /// A notify flag: the k-th wait consumes the k-th record, so the order of records
    /// among themselves, and of waits among themselves, matters; not the order of a
    /// record and a wait.
    FlagRecord(super::InstId),
    FlagWait(super::InstId),
    /// Work on (or a synchronize of) CUDA's legacy default stream, and work on a
    /// blocking stream: which comes first decides which waits for which.
    LegacyWork,
    BlockingWork,
}

impl Touch {
    fn conflicts_with(self, other: Touch) -> bool {
        use Touch::*;
        match (self, other) {
            (Queue(a), Queue(b)) => a == b,
            (EventChange(a), EventChange(b)) | (EventChange(a), EventRead(b)) | (EventRead(a), EventChange(b)) => {
                a == b
            }
            (FlagRecord(a), FlagRecord(b)) | (FlagWait(a), FlagWait(b)) => a == b,
            (LegacyWork, LegacyWork | BlockingWork) | (BlockingWork, LegacyWork) => true,
            _ => false,
        }
    }
}

fn touches(exec: &Execution, node: NodeId) -> Vec<Touch> {
    let n = exec.node(node);
    let mut out = Vec::new();
    if exec.agent(n.agent).kind.is_device() {
        out.push(Touch::Queue(n.agent));
    }
    if exec.legacy_default_stream {
        out.extend(legacy_touch(exec, node));
    }
    match &n.action {
        Action::EventRecord(e) | Action::EventReset(e) => out.push(Touch::EventChange(*e)),
        Action::EventWait(e) | Action::EventQuery(e) | Action::EventSync(e) => out.push(Touch::EventRead(*e)),
        Action::EventElapsedTime { start, end } => out.extend([Touch::EventRead(*start), Touch::EventRead(*end)]),
        Action::NotifyRecord(i)
        | Action::ChannelNotifyRecord { channel: i, .. }
        | Action::ThreadNotifyRecord { target: i, .. } => out.push(Touch::FlagRecord(*i)),
        Action::NotifyWait(i)
        | Action::ChannelNotifyWait { channel: i, .. }
        | Action::ThreadNotifyWait { thread: i, .. } => out.push(Touch::FlagWait(*i)),
        _ => {}
    }
    out
}

/// How a call takes part in CUDA's legacy default stream ordering (`hb::legacy`).
fn legacy_touch(exec: &Execution, node: NodeId) -> Option<Touch> {
    let n = exec.node(node);
    let (queue, synchronize) = match n.action {
        Action::AgentSync { agent, .. } => (agent, true),
        _ if exec.agent(n.agent).kind.is_device() => (n.agent, false),
        _ => (exec.synchronous_work_of(node)?, false),
    };
    match exec.legacy_order(queue) {
        LegacyOrder::Legacy => Some(Touch::LegacyWork),
        LegacyOrder::Blocking if !synchronize => Some(Touch::BlockingWork),
        _ => None,
    }
}

/// One rank's host threads, each with the calls it issues that touch an object another
/// thread touches (and its spawns), in its own order.
struct RankThreads {
    /// Host agents of the rank, in walk order.
    hosts: Vec<AgentId>,
    /// Every node each host issued, in issue order.
    issued: Vec<Vec<NodeId>>,
    /// Positions in `issued[t]` of the calls that are permuted.
    conflicts: Vec<Vec<usize>>,
    /// For a spawned thread: its parent's index and how many of the parent's permuted
    /// calls (its spawn included) come before it can start.
    starts_after: Vec<Option<(usize, usize)>>,
}

/// The issue orders of `exec` to check, at most `MAX_ISSUE_ORDERS`.
pub fn issue_orders(exec: &Execution) -> IssueOrders {
    if exec.ranks_with_several_host_threads().is_empty() {
        return IssueOrders {
            orders: Vec::new(),
            unchecked: false,
            conflicts: Vec::new(),
        };
    }
    let touched: Vec<Vec<Touch>> = (0..exec.nodes.len() as u32).map(|i| touches(exec, NodeId(i))).collect();
    let conflicting = conflicting_calls(exec, &touched);
    let conflict_count = conflicting.iter().filter(|&&c| c).count();
    let budget = (MAX_ORDERED_CALLS / exec.nodes.len().max(1)).clamp(1, MAX_ISSUE_ORDERS);
    let mut per_rank: Vec<Vec<Vec<NodeId>>> = Vec::new();
    let mut unchecked = false;
    for rank in 0..exec.ranks {
        let threads = rank_threads(exec, rank, &conflicting);
        if conflict_count > MAX_CONFLICTS {
            unchecked |= threads.conflicts.iter().filter(|c| !c.is_empty()).count() > 1;
            per_rank.push(vec![walk_order(&threads)]);
            continue;
        }
        let (orders, more) = rank_orders(&threads, &touched, budget);
        unchecked |= more;
        per_rank.push(orders);
    }
    if per_rank.iter().all(|orders| orders.len() <= 1) && !unchecked {
        return IssueOrders {
            orders: Vec::new(),
            unchecked: false,
            conflicts: conflicting,
        };
    }
    let (orders, more) = combine(&per_rank, budget);
    IssueOrders {
        orders,
        unchecked: unchecked || more,
        conflicts: conflicting,
    }
}

/// Calls that touch, in a conflicting way, an object a call of another host thread of
/// the same rank touches.
fn conflicting_calls(exec: &Execution, touched: &[Vec<Touch>]) -> Vec<bool> {
    let mut by_object: HashMap<(u32, Touch), Vec<NodeId>> = HashMap::new();
    for (i, touches) in touched.iter().enumerate() {
        let node = NodeId(i as u32);
        let rank = exec.node(node).rank(exec);
        for &touch in touches {
            // Event reads and changes meet under the event's key, blocking work under
            // the legacy stream's.
            let key = match touch {
                Touch::EventRead(e) => Touch::EventChange(e),
                Touch::BlockingWork => Touch::LegacyWork,
                other => other,
            };
            by_object.entry((rank, key)).or_default().push(node);
        }
    }
    let mut conflicting = vec![false; exec.nodes.len()];
    for nodes in by_object.values() {
        let hosts = |n: &NodeId| exec.node(*n).host;
        let first = nodes.first().map(hosts);
        if nodes.iter().all(|n| Some(hosts(n)) == first) {
            continue;
        }
        for (i, &a) in nodes.iter().enumerate() {
            if conflicting[a.index()] {
                continue;
            }
            let clash = nodes[i + 1..].iter().chain(&nodes[..i]).any(|&b| {
                exec.node(b).host != exec.node(a).host && dependent(&touched[a.index()], &touched[b.index()])
            });
            if clash {
                conflicting[a.index()] = true;
            }
        }
    }
    conflicting
}

/// Whether the order of calls `a` and `b` (of different host threads) matters: they
/// touch one object in a conflicting way.
pub fn calls_conflict(exec: &Execution, a: NodeId, b: NodeId) -> bool {
    dependent(&touches(exec, a), &touches(exec, b))
}

fn dependent(a: &[Touch], b: &[Touch]) -> bool {
    a.iter().any(|&x| b.iter().any(|&y| x.conflicts_with(y)))
}

impl RankThreads {
    /// Thread `t`'s `k`-th permuted call.
    fn call(&self, t: usize, k: usize) -> NodeId {
        self.issued[t][self.conflicts[t][k]]
    }
}

/// The host threads of `rank`. The walk creates a rank's agents and nodes after the
/// previous rank's, so each rank's are one contiguous range.
fn rank_threads(exec: &Execution, rank: u32, conflicting: &[bool]) -> RankThreads {
    let agents = exec.agents.partition_point(|a| a.rank < rank)..exec.agents.partition_point(|a| a.rank <= rank);
    let hosts: Vec<AgentId> = agents
        .filter(|&i| matches!(exec.agents[i].kind, AgentKind::Host(_)))
        .map(|i| AgentId(i as u32))
        .collect();
    let slot: HashMap<AgentId, usize> = hosts.iter().enumerate().map(|(i, &h)| (h, i)).collect();
    let rank_of = |n: &super::Node| n.rank(exec);
    let nodes = exec.nodes.partition_point(|n| rank_of(n) < rank)..exec.nodes.partition_point(|n| rank_of(n) <= rank);
    let mut issued = vec![Vec::new(); hosts.len()];
    for i in nodes {
        if let Some(&t) = slot.get(&exec.nodes[i].host) {
            issued[t].push(NodeId(i as u32));
        }
    }
    let mut conflicts = vec![Vec::new(); hosts.len()];
    let mut starts_after = vec![None; hosts.len()];
    for (t, nodes) in issued.iter().enumerate() {
        for (at, &node) in nodes.iter().enumerate() {
            let spawns = match exec.node(node).action {
                Action::Spawn(child) => slot.get(&child).copied(),
                _ => None,
            };
            if conflicting[node.index()] || spawns.is_some() {
                conflicts[t].push(at);
            }
            if let Some(child) = spawns {
                starts_after[child] = Some((t, conflicts[t].len()));
            }
        }
    }
    RankThreads {
        hosts,
        issued,
        conflicts,
        starts_after,
    }
}

/// The walk's order: each thread's calls after its parent's.
fn walk_order(threads: &RankThreads) -> Vec<NodeId> {
    let mut all: Vec<NodeId> = threads.issued.iter().flatten().copied().collect();
    all.sort();
    all
}

/// The orders of one rank's permuted calls, each extended to every call of the rank,
/// and whether more exist than were kept. A depth-first search with sleep sets: after
/// exploring thread `t`'s next call at some point, the searches of its siblings keep
/// `t` asleep for as long as they take calls independent of it, since putting `t`
/// first there gives an equivalent order. So each class of equivalent orders is
/// produced once.
fn rank_orders(threads: &RankThreads, touched: &[Vec<Touch>], budget: usize) -> (Vec<Vec<NodeId>>, bool) {
    let total: usize = threads.conflicts.iter().map(Vec::len).sum();
    let busy = threads.conflicts.iter().filter(|c| !c.is_empty()).count();
    if busy < 2 || threads.hosts.len() < 2 {
        return (vec![walk_order(threads)], false);
    }
    let count = threads.hosts.len();
    let mut next = vec![0usize; count];
    let mut chosen: Vec<usize> = Vec::with_capacity(total);
    let mut stack = vec![Frame {
        asleep: vec![false; count],
        tried: vec![false; count],
    }];
    let mut orders = Vec::new();
    // Paths that end with every enabled call asleep cost steps without yielding an
    // order; the search is bounded like the orders it yields.
    let mut steps_left = budget.saturating_mul(total + 1).saturating_mul(64);
    while let Some(frame) = stack.last_mut() {
        steps_left = match steps_left.checked_sub(1) {
            Some(left) => left,
            None => return (orders, true),
        };
        let pick = (0..count).find(|&t| !frame.asleep[t] && !frame.tried[t] && enabled(threads, &next, t));
        let Some(t) = pick else {
            if chosen.len() == total {
                if orders.len() == budget {
                    return (orders, true);
                }
                orders.push(extend(threads, &chosen));
            }
            stack.pop();
            if let Some(t) = chosen.pop() {
                next[t] -= 1;
            }
            continue;
        };
        frame.tried[t] = true;
        let call = threads.call(t, next[t]);
        let asleep = (0..count)
            .map(|u| {
                u != t
                    && (frame.asleep[u] || frame.tried[u])
                    && enabled(threads, &next, u)
                    && !dependent(&touched[threads.call(u, next[u]).index()], &touched[call.index()])
            })
            .collect();
        next[t] += 1;
        chosen.push(t);
        stack.push(Frame {
            asleep,
            tried: vec![false; count],
        });
    }
    (orders, false)
}

/// One point of the search: the threads asleep there and those already explored.
struct Frame {
    asleep: Vec<bool>,
    tried: Vec<bool>,
}

/// Whether thread `t` has a permuted call left and has started.
fn enabled(threads: &RankThreads, next: &[usize], t: usize) -> bool {
    next[t] < threads.conflicts[t].len()
        && threads.starts_after[t].is_none_or(|(parent, needed)| next[parent] >= needed)
}

/// An order of permuted calls, with every other call of a thread issued right before
/// the thread's next permuted call (or at the end).
fn extend(threads: &RankThreads, chosen: &[usize]) -> Vec<NodeId> {
    let mut done = vec![0usize; threads.hosts.len()];
    let mut taken = vec![0usize; threads.hosts.len()];
    let mut order = Vec::with_capacity(threads.issued.iter().map(Vec::len).sum());
    for &t in chosen {
        let upto = threads.conflicts[t][taken[t]];
        order.extend_from_slice(&threads.issued[t][done[t]..=upto]);
        done[t] = upto + 1;
        taken[t] += 1;
    }
    for (t, nodes) in threads.issued.iter().enumerate() {
        order.extend_from_slice(&nodes[done[t]..]);
    }
    order
}

/// Every combination of one order per rank, up to `budget`.
fn combine(per_rank: &[Vec<Vec<NodeId>>], budget: usize) -> (Vec<Vec<NodeId>>, bool) {
    let mut combined = Vec::new();
    let mut pick = vec![0usize; per_rank.len()];
    loop {
        if combined.len() == budget {
            return (combined, true);
        }
        combined.push(
            pick.iter()
                .zip(per_rank)
                .flat_map(|(&i, orders)| orders[i].iter().copied())
                .collect(),
        );
        // Mixed-radix increment over the ranks' choices.
        let mut rank = 0;
        loop {
            if rank == pick.len() {
                return (combined, false);
            }
            pick[rank] += 1;
            if pick[rank] < per_rank[rank].len() {
                break;
            }
            pick[rank] = 0;
            rank += 1;
        }
    }
}

/// `exec` with its nodes renumbered in `order` (every node once, rank by rank), so that
/// node order, queue order and issue numbers follow it, and each synchronize waits for
/// what was queued before it in that order.
pub fn reorder<'p>(exec: &Execution<'p>, order: &[NodeId]) -> Execution<'p> {
    debug_assert_eq!(order.len(), exec.nodes.len());
    let mut new_id = vec![NodeId(0); exec.nodes.len()];
    for (i, &old) in order.iter().enumerate() {
        new_id[old.index()] = NodeId(i as u32);
    }
    let map = |n: NodeId| new_id[n.index()];
    let mut issue_in_rank: HashMap<u32, u32> = HashMap::new();
    let mut nodes = Vec::with_capacity(exec.nodes.len());
    for &old in order {
        let mut node = exec.node(old).clone();
        node.set_issued_after(node.issued_after().map(map));
        let counter = issue_in_rank.entry(node.rank(exec)).or_default();
        node.issue = *counter;
        *counter += 1;
        nodes.push(node);
    }
    let mut agents = exec.agents.clone();
    for agent in &mut agents {
        for node in &mut agent.nodes {
            *node = map(*node);
        }
        agent.nodes.sort();
    }
    let issued_after: Vec<Option<NodeId>> = nodes.iter().map(|node| node.issued_after()).collect();
    let waits_on: Vec<Option<InstId>> = nodes
        .iter()
        .map(|node| match node.action {
            Action::EventWait(event) => Some(event),
            _ => None,
        })
        .collect();
    for (i, node) in nodes.iter_mut().enumerate() {
        let last_wait_before = |agent: AgentId, event: InstId| {
            let queue = &agents[agent.index()].nodes;
            queue[..queue.partition_point(|&n| n.index() < i)]
                .iter()
                .rev()
                .find(|&&n| waits_on[n.index()] == Some(event))
                .copied()
        };
        // Submitted before node `i`: issued before it, and for a call a batch cached,
        // its batch ended before it.
        let last_before = |agent: AgentId| {
            let queue = &agents[agent.index()].nodes;
            queue[..queue.partition_point(|&n| n.index() < i)]
                .iter()
                .rev()
                .find(|&&n| issued_after[n.index()].is_none_or(|host| host.index() < i))
                .copied()
        };
        match &mut node.action {
            Action::AgentSync { agent, upto } => *upto = last_before(*agent),
            Action::DeviceSync { upto } => {
                let rank = exec.agent(node.agent).rank;
                *upto = (0..agents.len() as u32)
                    .map(AgentId)
                    .filter(|&a| agents[a.index()].rank == rank && agents[a.index()].kind.is_device())
                    .filter_map(last_before)
                    .collect();
            }
            Action::WaitsSync { event, upto } => {
                let rank = exec.agent(node.agent).rank;
                *upto = (0..agents.len() as u32)
                    .map(AgentId)
                    .filter(|&a| agents[a.index()].rank == rank && agents[a.index()].kind.is_device())
                    .filter_map(|a| last_wait_before(a, *event))
                    .collect();
            }
            _ => {}
        }
    }
    let mut instances = exec.instances.clone();
    for instance in &mut instances {
        instance.created = instance.created.map(map);
        instance.destroyed = instance.destroyed.map(map);
    }
    let mut bad_uses = exec.bad_uses.clone();
    for bad in &mut bad_uses {
        bad.destroyed_by = bad.destroyed_by.map(map);
    }
    Execution {
        program: exec.program,
        ranks: exec.ranks,
        params: exec.params.clone(),
        agents,
        nodes,
        instances,
        bad_uses,
        bad_indices: exec.bad_indices.clone(),
        query_outcomes: exec.query_outcomes.clone(),
        query_syncs: exec.query_syncs.iter().map(|&node| map(node)).collect(),
        elements: exec
            .elements
            .iter()
            .map(|(&(node, element), &inst)| ((map(node), element), inst))
            .collect(),
        eval_errors: exec.eval_errors.clone(),
        invalid_ranges: exec.invalid_ranges.clone(),
        context_streams: exec.context_streams.clone(),
        unsubmitted_batches: exec
            .unsubmitted_batches
            .iter()
            .map(|batch| UnsubmittedBatch {
                start: map(batch.start),
                calls: batch
                    .calls
                    .iter()
                    .map(|(n, action)| (map(*n), action.clone()))
                    .collect(),
                other_tags: batch.other_tags.iter().map(|&n| map(n)).collect(),
            })
            .collect(),
        rejected_notifies: exec
            .rejected_notifies
            .iter()
            .map(|&(node, inst, index)| (map(node), inst, index))
            .collect(),
        cutoff: exec.cutoff.clone(),
        legacy_default_stream: exec.legacy_default_stream,
        synchronous_work: {
            let mut work: Vec<_> = exec
                .synchronous_work
                .iter()
                .map(|&(node, agent)| (map(node), agent))
                .collect();
            work.sort();
            work
        },
        uncaptured: exec.uncaptured.clone(),
        other_devices: exec.other_devices.clone(),
        capture_misuses: exec.capture_misuses.clone(),
        ipc_opened: exec.ipc_opened.clone(),
        ipc_unexported: exec.ipc_unexported.clone(),
        ipc_unopened: exec.ipc_unopened.clone(),
        graph_launches: {
            let mut launches: Vec<_> = exec.graph_launches.iter().map(|&(node, op)| (map(node), op)).collect();
            launches.sort_by_key(|&(node, _)| node);
            launches
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::instantiate;
    use crate::{Sources, check_sync_bytes};

    fn orders_of(text: &str) -> Vec<Vec<String>> {
        let checked = check_sync_bytes(&mut Sources::default(), "t.sync", text.as_bytes());
        let exec = instantiate(&checked.program, Vec::new());
        let orders = issue_orders(&exec);
        assert!(!orders.unchecked);
        let kernels = |order: &Vec<NodeId>| {
            order
                .iter()
                .filter_map(|&n| match &exec.node(n).op.kind {
                    crate::model::OpKind::Kernel { launch, .. } => Some(launch.name.clone()),
                    _ => None,
                })
                .collect()
        };
        orders.orders.iter().map(kernels).collect()
    }

    #[test]
    fn every_fifo_order_of_a_shared_stream_once() {
        let orders = orders_of(
            "let s = aclrtCreateStream();
             thread a { kernel(s, \"a1\"); kernel(s, \"a2\"); }
             thread b { kernel(s, \"b1\"); kernel(s, \"b2\"); }",
        );
        assert_eq!(orders.len(), 6, "{orders:?}");
        let mut distinct = orders.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 6);
        for order in &orders {
            let position = |k: &str| order.iter().position(|n| n == k).unwrap();
            assert!(position("a1") < position("a2") && position("b1") < position("b2"));
        }
    }

    #[test]
    fn threads_that_share_nothing_have_one_order() {
        let orders = orders_of(
            "let s = aclrtCreateStream();
             let t = aclrtCreateStream();
             thread a { kernel(s, \"a1\"); kernel(s, \"a2\"); }
             thread b { kernel(t, \"b1\"); kernel(t, \"b2\"); }",
        );
        assert!(orders.is_empty(), "{orders:?}");
    }

    #[test]
    fn a_thread_issues_nothing_before_it_is_spawned() {
        let orders = orders_of(
            "let s = aclrtCreateStream();
             kernel(s, \"m1\");
             thread a { kernel(s, \"a1\"); }
             kernel(s, \"m2\");",
        );
        assert_eq!(orders.len(), 2, "{orders:?}");
        for order in &orders {
            assert_eq!(order[0], "m1", "{orders:?}");
        }
    }
}
