//! The happens-before graph of one Execution.
//!
//! Edges: program order on every agent (a stream is FIFO), issue (a device op runs after
//! what its host thread did before issuing it), match (signal → wait) and host sync
//! (device op → the synchronize that waits for it), and CUDA's legacy default stream
//! (see `legacy`). Nodes are ordered by Kahn's
//! algorithm; a node that never becomes ready never executes (it sits on or behind a
//! cycle, or behind a wait nothing satisfies). Executed nodes get vector clocks (stored
//! sparsely, see `clocks`), so that "does a happen before b" is one lookup.

mod clocks;
mod host_sync;
mod legacy;
mod lifetimes;
mod matching;
mod races;
mod realizable;
mod targets;
pub mod values;

pub use clocks::{ClockBudgetExceeded, MAX_CLOCK_BYTES};
pub use legacy::legacy_edges;
pub use lifetimes::{PendingAtRelease, UseAroundDestroy};
pub use matching::{EventCycle, FlagKey, Matching, NotifyQueue, flag_of};
pub use races::Race;
pub use values::{ValueMatching, ValueWaitMatch};

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use petgraph::Direction;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::exec::{Action, AgentId, Execution, NodeId};
use clocks::Clocks;
use targets::Targets;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    Program,
    Issue,
    Match,
    HostSync,
    /// CUDA's legacy default stream and a blocking stream.
    LegacyStream,
}

pub struct HappensBefore<'e, 'p> {
    pub exec: &'e Execution<'p>,
    pub graph: DiGraph<(), EdgeKind, u32>,
    pub matching: Matching,
    /// The clocks in two halves by agent (`Clocks::half`), computed side by side.
    clocks: [Clocks; 2],
    /// Each executed node's position on its agent, from 1 (0: never executes).
    ticks: Vec<u32>,
    /// Per agent: whether some device op was issued after one of its calls, so that
    /// clocks hold an implicit entry for it (`issuer`). Asked first, the other agents'
    /// entries need no look at the issuing call.
    issues_work: Vec<bool>,
    /// Minimal cycles of waits, each in execution order.
    pub cycles: Vec<Vec<NodeId>>,
    /// Kahn's order of the executed nodes, which the race search walks.
    order: Vec<NodeId>,
    races: OnceLock<Vec<Race>>,
    uses_around_destroys: OnceLock<Vec<UseAroundDestroy>>,
}

/// The graph and the clocks of a million calls take as long to free as some of the
/// analysis: freed side by side.
impl Drop for HappensBefore<'_, '_> {
    fn drop(&mut self) {
        let graph = std::mem::take(&mut self.graph);
        let clocks = std::mem::take(&mut self.clocks);
        rayon::join(|| drop(graph), || drop(clocks));
    }
}

/// A node's agent and its tick there (0: the node never executes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    agent: AgentId,
    tick: u32,
}

/// One node's clock (`HappensBefore::clock_of`).
struct ClockOf<'h, 'e, 'p> {
    hb: &'h HappensBefore<'e, 'p>,
    node: NodeId,
    own: Place,
}

impl ClockOf<'_, '_, '_> {
    /// How many of `agent`'s nodes happen before the node, or are it.
    fn entry(&self, agent: AgentId) -> u32 {
        let hb = self.hb;
        if agent == self.own.agent {
            return self.own.tick;
        }
        let value = hb.clocks[hb.clocks[0].half(agent)].entry(self.node, agent);
        if !hb.issues_work[agent.index()] {
            return value;
        }
        match hb.issuer(self.node) {
            Some((host, before)) if host == agent => value.max(hb.ticks[before.index()]),
            _ => value,
        }
    }

    /// The node at `place` happens before this one. False when either never executes,
    /// and for the node itself: along one agent, only a smaller tick is before.
    fn is_after(&self, place: Place) -> bool {
        if place.tick == 0 || self.own.tick == 0 {
            return false;
        }
        if place.agent == self.own.agent {
            return place.tick < self.own.tick;
        }
        self.entry(place.agent) >= place.tick
    }
}

impl<'e, 'p> HappensBefore<'e, 'p> {
    /// The graph and its clocks; an execution whose clocks would not fit the budget
    /// (`clocks::MAX_TREE_NODES`) is too large to analyze.
    pub fn build(exec: &'e Execution<'p>) -> Result<Self, ClockBudgetExceeded> {
        // The synchronize index, the edges of each synchronize's own thread and the
        // issuing agents need no graph: found beside it.
        let ((matching, graph), (synced, issues, own_syncs, issues_work)) = rayon::join(
            || {
                let matching = matching::match_signals(exec);
                let graph = build_graph(exec, &matching);
                (matching, graph)
            },
            || {
                let synced = host_sync::synced_queues(exec);
                let issues = host_sync::IssueIndex::new(exec, &synced);
                let own_syncs = own_thread_syncs(exec, &synced, &issues);
                (synced, issues, own_syncs, issuing_agents(exec))
            },
        );
        let mut hb = HappensBefore {
            exec,
            graph,
            matching,
            clocks: Clocks::halves(exec),
            ticks: vec![0; exec.nodes.len()],
            issues_work,
            cycles: Vec::new(),
            order: Vec::new(),
            races: OnceLock::new(),
            uses_around_destroys: OnceLock::new(),
        };
        hb.order = hb.order_with_host_syncs(&synced, &issues, &own_syncs)?;
        if hb.order.len() < exec.nodes.len() {
            hb.cycles = minimal_cycles(&hb.graph);
        }
        Ok(hb)
    }

    /// Conflicting accesses that happens-before does not order, searched on first use:
    /// the rules that need none run beside the search.
    pub fn races(&self) -> &[Race] {
        self.races.get_or_init(|| races::find_races(self, &self.order))
    }

    /// Adds the host-synchronize edges (see `host_sync`) and returns the final execution
    /// order, with clocks computed for it. Work of the synchronizing thread is covered at
    /// once; another thread's work once happens-before shows it issued before the
    /// synchronize, which can order more work, so that repeats to a fixed point.
    fn order_with_host_syncs(
        &mut self,
        synced: &[host_sync::SyncedQueue],
        issues: &host_sync::IssueIndex,
        own_syncs: &[(NodeId, NodeId)],
    ) -> Result<Vec<NodeId>, ClockBudgetExceeded> {
        /// Rounds of the fixed point. Each round orders more work; stopping early leaves
        /// some other thread's work uncovered by a synchronize, which can report a race
        /// that more rounds would have ordered, and miss a hang that waiting for that
        /// work would cause. Real programs need one or two rounds.
        const MAX_ROUNDS: usize = 16;
        let exec = self.exec;
        // A synchronize names each queue once, so its own thread's edges are one per
        // (synchronize, queue): only the other threads' edges, added round after round,
        // need `covered` to keep the latest.
        for &(last, sync) in own_syncs {
            self.add_host_sync_edge(last, sync);
        }
        // After the calling thread's own synchronizes, which order most initializations
        // of a value word before its waits.
        let (values, unsatisfied) = values::match_values(exec, &mut self.graph);
        self.matching.unsatisfied.extend(unsatisfied);
        self.matching.values = values;
        let mut covered: FxHashMap<(NodeId, AgentId, AgentId), NodeId> = FxHashMap::default();
        let mut rounds = 0;
        loop {
            let order = self.execution_order();
            self.compute_clocks(&order)?;
            rounds += 1;
            let mut added = false;
            for &queue in synced {
                if !self.executes(queue.sync) {
                    continue;
                }
                let own = exec.node(queue.sync).agent;
                for host in issues.hosts(exec, queue).filter(|&h| h != own) {
                    let seen = self.clock(queue.sync, host) as usize;
                    let Some(&host_node) = seen.checked_sub(1).and_then(|i| exec.agent(host).nodes.get(i)) else {
                        continue;
                    };
                    let issued_before = exec.node(host_node).issue;
                    if let Some(last) = issues.last_issued(exec, queue, host, issued_before) {
                        added |= self.add_host_sync(&mut covered, queue.sync, host, last);
                    }
                }
            }
            if !added || rounds == MAX_ROUNDS {
                return Ok(order);
            }
        }
    }

    /// An edge from `last` to `sync`, unless one from a later node `host` issued to the
    /// same queue already covers it.
    fn add_host_sync(
        &mut self,
        covered: &mut FxHashMap<(NodeId, AgentId, AgentId), NodeId>,
        sync: NodeId,
        host: AgentId,
        last: NodeId,
    ) -> bool {
        let key = (sync, self.exec.node(last).agent, host);
        if covered.get(&key).is_some_and(|&had| had >= last) {
            return false;
        }
        covered.insert(key, last);
        self.add_host_sync_edge(last, sync);
        true
    }

    fn add_host_sync_edge(&mut self, last: NodeId, sync: NodeId) {
        let (last, sync) = (NodeIndex::new(last.index()), NodeIndex::new(sync.index()));
        self.graph.add_edge(last, sync, EdgeKind::HostSync);
    }

    /// The nodes a host synchronize waits for: the last covered node of each queue, or
    /// the record an event synchronize is matched with.
    pub fn waited_for(&self, sync: NodeId) -> Vec<NodeId> {
        self.graph
            .edges_directed(NodeIndex::new(sync.index()), petgraph::Direction::Incoming)
            .filter(|edge| *edge.weight() == EdgeKind::HostSync)
            .map(|edge| NodeId(edge.source().index() as u32))
            .collect()
    }

    /// Whether the node can execute at all.
    pub fn executes(&self, node: NodeId) -> bool {
        self.ticks[node.index()] != 0
    }

    /// The number of `agent`'s nodes that happen before `node` (or are `node`).
    fn clock(&self, node: NodeId, agent: AgentId) -> u32 {
        self.clock_of(node).entry(agent)
    }

    /// `node`'s clock, read entry by entry: comparing many calls with one reads the
    /// node's agent and tick once.
    fn clock_of(&self, node: NodeId) -> ClockOf<'_, 'e, 'p> {
        ClockOf {
            hb: self,
            node,
            own: self.place(node),
        }
    }

    /// Where `node` runs: its agent, and its tick there.
    fn place(&self, node: NodeId) -> Place {
        Place {
            agent: self.exec.node(node).agent,
            tick: self.ticks[node.index()],
        }
    }

    /// The host thread that issued a device op, with the host call just before the
    /// issue: the op's clock holds that call's tick implicitly.
    fn issuer(&self, node: NodeId) -> Option<(AgentId, NodeId)> {
        issuer(self.exec, node)
    }

    /// `a` happens before `b`: every execution runs `a` to completion before `b` starts.
    /// False when either never executes.
    pub fn happens_before(&self, a: NodeId, b: NodeId) -> bool {
        self.clock_of(b).is_after(self.place(a))
    }

    /// How many of `agent`'s nodes happen before `node`: a prefix of the agent's nodes
    /// (program order is a chain, and an agent's executed nodes are ticked in it), read
    /// off `node`'s clock in one lookup. 0 when `node` never executes.
    pub fn nodes_before(&self, agent: AgentId, node: NodeId) -> usize {
        if !self.executes(node) {
            return 0;
        }
        let seen = self.clock(node, agent) as usize;
        // The own entry counts `node` itself.
        if self.exec.node(node).agent == agent {
            seen - 1
        } else {
            seen
        }
    }

    /// Neither orders the other: the two can run in either order, or overlap.
    pub fn concurrent(&self, a: NodeId, b: NodeId) -> bool {
        self.executes(a) && self.executes(b) && !self.happens_before(a, b) && !self.happens_before(b, a)
    }

    /// Kahn's order over the graph. Waits nothing satisfies never complete, so nothing
    /// behind them is released either.
    fn execution_order(&self) -> Vec<NodeId> {
        let count = self.exec.nodes.len();
        // Both read every edge: side by side.
        let (targets, (mut indegree, blocked, mut ready)) =
            rayon::join(|| Targets::new(&self.graph), || self.kahn_start());
        let mut order = Vec::with_capacity(count);
        while let Some(node) = ready.pop() {
            order.push(NodeId(node));
            for &target in targets.of(node as usize) {
                indegree[target as usize] -= 1;
                if indegree[target as usize] == 0 && !blocked[target as usize] {
                    ready.push(target);
                }
            }
        }
        order
    }

    /// Kahn's starting state: each node's in-degree, the waits nothing satisfies, and
    /// the nodes ready at once (the first on top).
    fn kahn_start(&self) -> (Vec<u32>, Vec<bool>, Vec<u32>) {
        let count = self.exec.nodes.len();
        let mut blocked = vec![false; count];
        for wait in &self.matching.unsatisfied {
            blocked[wait.index()] = true;
        }
        let mut indegree = vec![0u32; count];
        for edge in self.graph.raw_edges() {
            indegree[edge.target().index()] += 1;
        }
        let mut ready: Vec<u32> = (0..count as u32)
            .filter(|&n| indegree[n as usize] == 0 && !blocked[n as usize])
            .collect();
        ready.reverse();
        (indegree, blocked, ready)
    }

    /// Clocks in execution order, both halves side by side.
    fn compute_clocks(&mut self, order: &[NodeId]) -> Result<(), ClockBudgetExceeded> {
        let exec = self.exec;
        self.ticks.fill(0);
        let mut next_tick = vec![0u32; exec.agents.len()];
        for &node in order {
            let own = exec.node(node).agent;
            next_tick[own.index()] += 1;
            self.ticks[node.index()] = next_tick[own.index()];
        }
        let [mut low, mut high] = std::mem::take(&mut self.clocks);
        let this = &*self;
        let (low_done, high_done) = rayon::join(
            || this.compute_half(order, &mut low, 0),
            || this.compute_half(order, &mut high, 1),
        );
        self.clocks = [low, high];
        low_done?;
        high_done
    }

    /// One half of the clocks in execution order. Per node, its base is the join of what
    /// its incoming edges bring: from the agent's previous node its base; from the
    /// issuing host call its base, once per host base; from any other node its own tick
    /// as well, where that agent's entry is in this half. Each source's implicit issuer
    /// entry comes along.
    fn compute_half(&self, order: &[NodeId], clocks: &mut Clocks, half: usize) -> Result<(), ClockBudgetExceeded> {
        let exec = self.exec;
        clocks.clear();
        // Per agent: the last issuing host base joined into its chain.
        let mut absorbed = vec![u32::MAX; exec.agents.len()];
        for &node in order {
            let own = exec.node(node).agent;
            let issuer = self.issuer(node);
            clocks.begin();
            let mut base = 0;
            for edge in self
                .graph
                .edges_directed(NodeIndex::new(node.index()), Direction::Incoming)
            {
                let source = NodeId(edge.source().index() as u32);
                let from = exec.node(source).agent;
                let issued_by = issuer.is_some_and(|(_, before)| before == source);
                if !issued_by || absorbed[own.index()] != clocks.base(source) {
                    base = clocks.join(base, clocks.base(source));
                }
                if issued_by {
                    absorbed[own.index()] = clocks.base(source);
                } else if from != own && clocks.half(from) == half {
                    base = clocks.raise(base, from, self.ticks[source.index()]);
                }
                // Along the agent, this node's issuer entry is at least its predecessor's
                // when the same host issued both.
                if let Some((host, before)) = self.issuer(source)
                    && (from != own || issuer.map(|(h, _)| h) != Some(host))
                    && clocks.half(host) == half
                {
                    base = clocks.raise(base, host, self.ticks[before.index()]);
                }
            }
            clocks.finish(node, base)?;
        }
        Ok(())
    }
}

/// Per agent: whether a node of another agent was issued after one of its nodes.
fn issuing_agents(exec: &Execution) -> Vec<bool> {
    let mut issues = vec![false; exec.agents.len()];
    for node in 0..exec.nodes.len() {
        if let Some((host, _)) = issuer(exec, NodeId(node as u32)) {
            issues[host.index()] = true;
        }
    }
    issues
}

/// [`HappensBefore::issuer`], before there is one.
fn issuer(exec: &Execution, node: NodeId) -> Option<(AgentId, NodeId)> {
    let own = exec.node(node).agent;
    let before = exec.node(node).issued_after()?;
    let host = exec.node(before).agent;
    (host != own).then_some((host, before))
}

/// For each synchronized queue, the last node the synchronizing thread itself issued to
/// it before the synchronize, with the synchronize: the first host-sync edges.
fn own_thread_syncs(
    exec: &Execution,
    synced: &[host_sync::SyncedQueue],
    issues: &host_sync::IssueIndex,
) -> Vec<(NodeId, NodeId)> {
    synced
        .iter()
        .filter_map(|&queue| {
            let sync = exec.node(queue.sync);
            let last = issues.last_issued(exec, queue, sync.agent, sync.issue)?;
            Some((last, queue.sync))
        })
        .collect()
}

fn build_graph(exec: &Execution, matching: &Matching) -> DiGraph<(), EdgeKind, u32> {
    let mut graph = DiGraph::with_capacity(exec.nodes.len(), exec.nodes.len() * 2);
    for _ in &exec.nodes {
        graph.add_node(());
    }
    let index = |node: NodeId| NodeIndex::new(node.index());
    for agent in &exec.agents {
        for pair in agent.nodes.windows(2) {
            graph.add_edge(index(pair[0]), index(pair[1]), EdgeKind::Program);
        }
    }
    for (i, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(i as u32);
        if let Some(before) = node.issued_after()
            && exec.node(before).agent != node.agent
        {
            graph.add_edge(index(before), index(id), EdgeKind::Issue);
        }
    }
    for (before, after) in legacy::legacy_edges(exec) {
        graph.add_edge(index(before), index(after), EdgeKind::LegacyStream);
    }
    for &(signal, wait) in &matching.edges {
        let kind = match exec.node(wait).action {
            Action::EventSync(_) => EdgeKind::HostSync,
            _ => EdgeKind::Match,
        };
        graph.add_edge(index(signal), index(wait), kind);
    }
    graph
}

/// For every strongly connected component with a cycle, its shortest cycle (by BFS from
/// each of its nodes), rotated to start at its lowest node so output is stable.
fn minimal_cycles(graph: &DiGraph<(), EdgeKind, u32>) -> Vec<Vec<NodeId>> {
    let mut cycles: Vec<Vec<NodeId>> = tarjan_scc(graph)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .filter_map(|scc| shortest_cycle(graph, &scc))
        .collect();
    cycles.sort();
    cycles
}

fn shortest_cycle(graph: &DiGraph<(), EdgeKind, u32>, scc: &[NodeIndex<u32>]) -> Option<Vec<NodeId>> {
    const UNSEEN: u32 = u32::MAX;
    let mut member = vec![false; graph.node_count()];
    for node in scc {
        member[node.index()] = true;
    }
    // Per node: its BFS parent and depth, reset after each search through `reached`.
    let mut parent = vec![UNSEEN; graph.node_count()];
    let mut depth = vec![0usize; graph.node_count()];
    let mut reached: Vec<usize> = Vec::new();
    let mut best: Option<Vec<NodeIndex<u32>>> = None;
    // Bounded so that a huge component costs at most a few thousand searches.
    for &start in scc.iter().take(2048) {
        // A cycle closed from a node at depth d has d + 1 nodes: only shorter ones help.
        let deepest = best.as_ref().map_or(usize::MAX, |b| b.len().saturating_sub(2));
        let mut queue = std::collections::VecDeque::from([start]);
        let mut found = None;
        'search: while let Some(node) = queue.pop_front() {
            if depth[node.index()] > deepest {
                break;
            }
            for next in graph.neighbors(node) {
                if next == start {
                    found = Some(node);
                    break 'search;
                }
                if member[next.index()] && parent[next.index()] == UNSEEN {
                    parent[next.index()] = node.index() as u32;
                    depth[next.index()] = depth[node.index()] + 1;
                    reached.push(next.index());
                    queue.push_back(next);
                }
            }
        }
        if let Some(mut last) = found {
            let mut path = vec![last];
            while last != start {
                last = NodeIndex::new(parent[last.index()] as usize);
                path.push(last);
            }
            path.reverse();
            best = Some(path);
        }
        for index in reached.drain(..) {
            parent[index] = UNSEEN;
            depth[index] = 0;
        }
    }
    let mut cycle: Vec<NodeId> = best?.into_iter().map(|n| NodeId(n.index() as u32)).collect();
    let lowest = cycle.iter().enumerate().min_by_key(|(_, n)| **n).map(|(i, _)| i)?;
    cycle.rotate_left(lowest);
    Some(cycle)
}
