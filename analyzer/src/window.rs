//! The window of a concrete execution drawn with a finding (`model::timeline`): the
//! finding's own ops, their neighbours on each lane and the signals they match, laid out
//! in happens-before order.

use std::collections::{BTreeSet, HashMap};

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, AgentId, AgentKind, Execution, NodeId};
use crate::hb::{self, HappensBefore};
use crate::source::Span;
use crate::timeline::{EdgeKind, Hang, Highlight, Lane, LaneKind, Role, Timeline, TimelineEdge, TimelineOp};

mod ghosts;
mod hangs;

/// Neighbours kept on each side of a focus op on its own lane.
const CONTEXT: usize = 3;
/// Ops one span of a finding stands for at most (a call in a loop runs many times).
const NODES_PER_SPAN: usize = 3;

/// What a window is centred on.
pub(crate) struct Focus<'n> {
    pub nodes: &'n [NodeId],
    pub highlight: Highlight,
    /// The first two nodes are accesses nothing orders (a race): the timeline marks them.
    pub race: bool,
}

/// Attach a timeline to each finding that has none, centred on the ops of the calls it
/// points at (only when the options ask for timelines).
pub(crate) fn attach_missing(analysis: &Analysis, found: &mut [Diagnostic]) {
    if !analysis.smt.timelines {
        return;
    }
    let spans: Vec<&Span> = found
        .iter()
        .filter(|d| d.timeline.is_none())
        .flat_map(|d| std::iter::once(&d.primary).chain(d.related.iter().map(|r| &r.span)))
        .collect();
    let ops = OpsOfSpans::find(analysis.exec, analysis.hb, &spans);
    for diagnostic in found.iter_mut().filter(|d| d.timeline.is_none()) {
        let nodes = ops.of(diagnostic);
        if !nodes.is_empty() {
            let focus = Focus {
                nodes: &nodes,
                highlight: Highlight::Involved,
                race: false,
            };
            diagnostic.timeline = Some(Box::new(build(analysis.exec, analysis.hb, &focus)));
        }
    }
}

/// `diagnostic` with the window around `focus`, when the options ask for timelines.
pub(crate) fn with_timeline(analysis: &Analysis, mut diagnostic: Diagnostic, focus: &Focus) -> Diagnostic {
    if analysis.smt.timelines && !focus.nodes.is_empty() {
        diagnostic.timeline = Some(Box::new(build(analysis.exec, analysis.hb, focus)));
    }
    diagnostic
}

/// The ops of each call the findings name, found in one pass over the execution: per
/// span, up to `NODES_PER_SPAN` ops that never run (a stuck op is where a hang shows),
/// then up to as many that do.
struct OpsOfSpans {
    stuck: HashMap<Span, Vec<NodeId>>,
    ran: HashMap<Span, Vec<NodeId>>,
}

impl OpsOfSpans {
    fn find(exec: &Execution, hb: &HappensBefore, spans: &[&Span]) -> Self {
        let mut ops = OpsOfSpans {
            stuck: spans.iter().map(|&span| (span.clone(), Vec::new())).collect(),
            ran: spans.iter().map(|&span| (span.clone(), Vec::new())).collect(),
        };
        if spans.is_empty() {
            return ops;
        }
        for (index, node) in exec.nodes.iter().enumerate() {
            let id = NodeId(index as u32);
            let list = if hb.executes(id) { &mut ops.ran } else { &mut ops.stuck };
            if let Some(nodes) = list.get_mut(&node.op.span)
                && nodes.len() < NODES_PER_SPAN
            {
                nodes.push(id);
            }
        }
        ops
    }

    /// The ops of a finding's calls, primary first; a call named twice is one op.
    fn of(&self, diagnostic: &Diagnostic) -> Vec<NodeId> {
        let mut nodes = Vec::new();
        for span in std::iter::once(&diagnostic.primary).chain(diagnostic.related.iter().map(|r| &r.span)) {
            let stuck = self.stuck.get(span).into_iter().flatten();
            let ran = self.ran.get(span).into_iter().flatten();
            nodes.extend(stuck.chain(ran).take(NODES_PER_SPAN));
        }
        let mut seen = std::collections::HashSet::new();
        nodes.retain(|&node| seen.insert(node));
        nodes
    }
}

/// The window of a run (`verify-then-run`): centred on the calls that failed (a wait
/// that timed out is where it hung), else on the run's first calls; an op the run never
/// called is drawn as one that never runs. None for a run too large to analyze.
pub fn run_timeline(exec: &Execution, called: &[NodeId], failed: &[NodeId]) -> Option<Timeline> {
    /// Lanes a window of a run that did not fail starts from.
    const FIRST_CALLS: usize = 8;
    let hb = HappensBefore::build(exec).ok()?;
    let mut was_called = vec![false; exec.nodes.len()];
    for node in called {
        if let Some(flag) = was_called.get_mut(node.index()) {
            *flag = true;
        }
    }
    // The first call on each lane, so that streams show as well as the host's setup.
    let mut first: Vec<NodeId> = Vec::new();
    let mut lanes_seen = std::collections::HashSet::new();
    for &node in called {
        if first.len() == FIRST_CALLS {
            break;
        }
        if exec.nodes.get(node.index()).is_some_and(|n| lanes_seen.insert(n.agent)) {
            first.push(node);
        }
    }
    let focus = Focus {
        nodes: if failed.is_empty() { &first } else { failed },
        highlight: Highlight::Involved,
        race: false,
    };
    // A run's picture shows what the run did: no ghosts or hangs of the analysis.
    let mut timeline = build_with(exec, &hb, &focus, &|node| was_called[node.index()], false);
    if failed.is_empty() {
        // Nothing went wrong: no op stands out.
        for op in &mut timeline.ops {
            op.role = Role::Context;
        }
    }
    Some(timeline)
}

/// The window around `focus`: its ops, `CONTEXT` neighbours on each lane and the ops
/// they are matched with, at most `Timeline::MAX_OPS`.
pub(crate) fn build(exec: &Execution, hb: &HappensBefore, focus: &Focus) -> Timeline {
    build_with(exec, hb, focus, &|node| hb.executes(node), true)
}

/// [`build`], with what decides whether an op ran, and whether to add the ghosts and
/// hangs of the analysis.
fn build_with(
    exec: &Execution,
    hb: &HappensBefore,
    focus: &Focus,
    executed: &dyn Fn(NodeId) -> bool,
    annotate: bool,
) -> Timeline {
    let focus_nodes: Vec<NodeId> = focus.nodes.iter().copied().take(Timeline::MAX_OPS).collect();
    let mut chosen = choose_nodes(exec, hb, &focus_nodes);
    let planned_ghosts = if annotate {
        ghosts::plan(exec, hb, &focus_nodes)
    } else {
        Vec::new()
    };
    let planned_hangs = if annotate {
        hangs::plan(exec, hb, &chosen)
    } else {
        Vec::new()
    };
    // What the ghosts start from and where the hung queues are stuck belong in the picture.
    let wanted = planned_ghosts.iter().filter_map(ghosts::Planned::source_node);
    for node in wanted.chain(planned_hangs.iter().map(|hang| hang.stuck)) {
        if chosen.len() < Timeline::MAX_OPS {
            chosen.insert(node);
        }
    }
    let lanes = lane_order(exec, &chosen);
    let lane_of: HashMap<AgentId, usize> = lanes.iter().enumerate().map(|(i, &a)| (a, i)).collect();
    let nodes: Vec<NodeId> = chosen.iter().copied().collect();
    let index_of: HashMap<NodeId, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let cycle = focus.highlight == Highlight::Cycle;
    let mut edges = edges_between(exec, hb, &nodes, &index_of, if cycle { &focus_nodes } else { &[] });
    let witness = if focus.highlight == Highlight::Witness {
        &focus_nodes[..]
    } else {
        &[]
    };
    let (hang_nodes, drawn_before) = hang_layout(exec, &nodes, &planned_hangs);
    add_hang_edges(&mut edges, &hang_nodes, &index_of);
    let steps = steps(exec, hb, &nodes, &index_of, witness, &drawn_before);
    let mut ops: Vec<TimelineOp> = nodes
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let position = focus_nodes.iter().position(|&f| f == node);
            let role = match (position, cycle) {
                (None, _) => Role::Context,
                (Some(_), true) => Role::Cycle,
                (Some(_), false) => Role::Involved,
            };
            let numbered = focus.highlight != Highlight::Involved;
            TimelineOp {
                lane: lane_of[&exec.node(node).agent],
                step: steps[i],
                label: label(exec, node),
                object: object_name(exec, node),
                span: exec.node(node).op.span.clone(),
                executed: executed(node),
                role,
                number: position.filter(|_| numbered).map(|p| p as u32 + 1),
                time_ns: exec
                    .program
                    .call_times
                    .get(&exec.node(node).op.span.range.start)
                    .copied(),
                source: None,
            }
        })
        .collect();
    // Sorted by step then lane; edges follow the ops to their new places.
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|&i| (ops[i].step, ops[i].lane, nodes[i]));
    let mut new_index = vec![0; ops.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut sorted: Vec<Option<TimelineOp>> = ops.drain(..).map(Some).collect();
    let ops: Vec<TimelineOp> = order.iter().map(|&i| sorted[i].take().expect("each op once")).collect();
    let race = match focus_nodes.as_slice() {
        [first, second, ..] if focus.race => index_of
            .get(first)
            .zip(index_of.get(second))
            .map(|(&first, &second)| [new_index[first], new_index[second]]),
        _ => None,
    };
    let edges = edges
        .into_iter()
        .map(|edge| TimelineEdge {
            from: new_index[edge.from],
            to: new_index[edge.to],
            ..edge
        })
        .collect();
    let op_of = |node: NodeId| index_of.get(&node).map(|&old| new_index[old]);
    let ghosts = planned_ghosts
        .into_iter()
        .filter_map(|planned| ghosts::place(exec, planned, &op_of, &lanes))
        .collect();
    let hangs = hang_nodes
        .iter()
        .filter_map(|&[sync, waits_for, stuck]| {
            Some(Hang {
                sync: op_of(sync)?,
                waits_for: op_of(waits_for)?,
                stuck: op_of(stuck)?,
            })
        })
        .collect();
    Timeline {
        assignment: exec.assignment(),
        lanes: lanes.iter().map(|&agent| lane(exec, agent, &chosen)).collect(),
        ops,
        edges,
        omitted: exec.nodes.len() - nodes.len(),
        highlight: focus.highlight,
        race,
        ghosts,
        hangs,
    }
}

/// Per hung synchronize and stuck queue: the synchronize, the queue's last op in the
/// window it waits for and the queue's stuck op (`[sync, waits_for, stuck]`), and the
/// orderings that draw the synchronize after every op of the queue it waits for.
fn hang_layout(
    exec: &Execution,
    nodes: &[NodeId],
    planned: &[hangs::Planned],
) -> (Vec<[NodeId; 3]>, Vec<(NodeId, NodeId)>) {
    let mut hang_nodes = Vec::new();
    let mut drawn_before = Vec::new();
    for hang in planned {
        let queue = hangs::queue_before(exec, nodes, hang.covered);
        let (Some(&waits_for), true) = (queue.last(), nodes.contains(&hang.stuck)) else {
            continue;
        };
        hang_nodes.push([hang.sync, waits_for, hang.stuck]);
        drawn_before.extend(queue.into_iter().map(|node| (node, hang.sync)));
    }
    (hang_nodes, drawn_before)
}

/// A host-synchronize edge into each hung synchronize from the last op it waits for,
/// where the window has no edge between the two yet (the op it covers may lie outside).
fn add_hang_edges(edges: &mut Vec<TimelineEdge>, hang_nodes: &[[NodeId; 3]], index_of: &HashMap<NodeId, usize>) {
    for &[sync, waits_for, _] in hang_nodes {
        let (from, to) = (index_of[&waits_for], index_of[&sync]);
        if !edges.iter().any(|e| e.from == from && e.to == to) {
            edges.push(TimelineEdge {
                from,
                to,
                kind: EdgeKind::HostSync,
                on_cycle: false,
            });
        }
    }
}

/// The focus ops, then (while there is room) their lane neighbours, nearest first, and
/// the signals and waits those are matched with.
fn choose_nodes(exec: &Execution, hb: &HappensBefore, focus: &[NodeId]) -> BTreeSet<NodeId> {
    let mut chosen: BTreeSet<NodeId> = focus.iter().copied().collect();
    let full = |chosen: &BTreeSet<NodeId>| chosen.len() >= Timeline::MAX_OPS;
    for distance in 1..=CONTEXT {
        for &node in focus {
            let lane = &exec.agent(exec.node(node).agent).nodes;
            // A lane's ops are in issue order, which is node order.
            let found = lane
                .binary_search(&node)
                .ok()
                .or_else(|| lane.iter().position(|&n| n == node));
            let Some(at) = found else {
                continue;
            };
            for neighbour in [at.checked_sub(distance), Some(at + distance)].into_iter().flatten() {
                if let Some(&n) = lane.get(neighbour)
                    && !full(&chosen)
                {
                    chosen.insert(n);
                }
            }
        }
    }
    let partners: Vec<NodeId> = chosen
        .iter()
        .flat_map(|&node| matched_with(hb, node))
        .filter(|n| !chosen.contains(n))
        .collect();
    for partner in partners {
        if full(&chosen) {
            break;
        }
        chosen.insert(partner);
    }
    chosen
}

/// The signals a node waits for and the waits it satisfies.
fn matched_with(hb: &HappensBefore, node: NodeId) -> Vec<NodeId> {
    let index = NodeIndex::new(node.index());
    let incoming = hb
        .graph
        .edges_directed(index, petgraph::Direction::Incoming)
        .filter(|e| matches!(e.weight(), hb::EdgeKind::Match))
        .map(|e| NodeId(e.source().index() as u32));
    let outgoing = hb
        .graph
        .edges(index)
        .filter(|e| matches!(e.weight(), hb::EdgeKind::Match))
        .map(|e| NodeId(e.target().index() as u32));
    incoming.chain(outgoing).collect()
}

/// The agents with ops in the window, by rank, host threads first, then creation order.
fn lane_order(exec: &Execution, chosen: &BTreeSet<NodeId>) -> Vec<AgentId> {
    let mut agents: Vec<AgentId> = chosen.iter().map(|&n| exec.node(n).agent).collect();
    agents.sort_by_key(|&a| {
        let agent = exec.agent(a);
        (agent.rank, agent.kind.is_device(), a)
    });
    agents.dedup();
    agents
}

fn lane(exec: &Execution, agent: AgentId, chosen: &BTreeSet<NodeId>) -> Lane {
    let nodes = &exec.agent(agent).nodes;
    let first = nodes.iter().position(|n| chosen.contains(n)).unwrap_or(0);
    let last = nodes.iter().rposition(|n| chosen.contains(n)).unwrap_or(0);
    Lane {
        name: exec.agent_name(agent),
        kind: match exec.agent(agent).kind {
            AgentKind::Host(_) => LaneKind::HostThread,
            AgentKind::Stream(_) => LaneKind::Stream,
            AgentKind::HcclThread(_) => LaneKind::HcclThread,
        },
        rank: exec.agent(agent).rank,
        omitted_before: first,
        omitted_after: nodes.len().saturating_sub(last + 1),
    }
}

/// The happens-before edges between ops of the window on different lanes, and each
/// step of the cycle (program order included) when the window shows one.
fn edges_between(
    exec: &Execution,
    hb: &HappensBefore,
    nodes: &[NodeId],
    index_of: &HashMap<NodeId, usize>,
    cycle: &[NodeId],
) -> Vec<TimelineEdge> {
    let on_cycle = |from: NodeId, to: NodeId| {
        let Some(at) = cycle.iter().position(|&n| n == from) else {
            return false;
        };
        cycle[(at + 1) % cycle.len()] == to
    };
    let mut edges = Vec::new();
    for (from_index, &from) in nodes.iter().enumerate() {
        for edge in hb.graph.edges(NodeIndex::new(from.index())) {
            let to = NodeId(edge.target().index() as u32);
            let Some(&to_index) = index_of.get(&to) else {
                continue;
            };
            let kind = match edge.weight() {
                hb::EdgeKind::Match => EdgeKind::Match,
                hb::EdgeKind::HostSync => EdgeKind::HostSync,
                hb::EdgeKind::Issue => EdgeKind::Issue,
                hb::EdgeKind::Program => EdgeKind::Program,
                hb::EdgeKind::LegacyStream => EdgeKind::Legacy,
            };
            let cycle_step = on_cycle(from, to);
            // Program order is the lane itself; issue edges only where they close the cycle.
            let drawn = match kind {
                EdgeKind::Program | EdgeKind::Issue => cycle_step,
                _ => exec.node(from).agent != exec.node(to).agent || cycle_step,
            };
            if drawn {
                edges.push(TimelineEdge {
                    from: from_index,
                    to: to_index,
                    kind,
                    on_cycle: cycle_step,
                });
            }
        }
    }
    edges.dedup_by_key(|e| (e.from, e.to));
    edges
}

/// A column per op: after every op of the window it is ordered after (lane order, the
/// graph's edges, happens-before through ops outside the window, the witness order,
/// `drawn_before`'s pairs). Where only cycles remain (through issue or host-synchronize
/// edges), they are broken at their lowest op.
fn steps(
    exec: &Execution,
    hb: &HappensBefore,
    nodes: &[NodeId],
    index_of: &HashMap<NodeId, usize>,
    witness: &[NodeId],
    drawn_before: &[(NodeId, NodeId)],
) -> Vec<u32> {
    let count = nodes.len();
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (b, &node_b) in nodes.iter().enumerate() {
        for (a, &node_a) in nodes.iter().enumerate() {
            let same_lane_earlier = exec.node(node_a).agent == exec.node(node_b).agent && node_a < node_b;
            if a != b && (same_lane_earlier || hb.happens_before(node_a, node_b)) {
                before[b].push(a);
            }
        }
        for edge in hb
            .graph
            .edges_directed(NodeIndex::new(node_b.index()), petgraph::Direction::Incoming)
        {
            let source = NodeId(edge.source().index() as u32);
            // A signal that never runs orders nothing: the lanes of a deadlock stand side
            // by side, each stuck at its wait, rather than one after the other.
            if *edge.weight() == hb::EdgeKind::Match && !hb.executes(source) {
                continue;
            }
            if let Some(&a) = index_of.get(&source) {
                before[b].push(a);
            }
        }
    }
    let witness_pairs = witness.windows(2).map(|pair| (pair[0], pair[1]));
    for (first, then) in witness_pairs.chain(drawn_before.iter().copied()) {
        if let (Some(&a), Some(&b)) = (index_of.get(&first), index_of.get(&then)) {
            before[b].push(a);
        }
    }
    layer(&before, &lane_predecessors(exec, nodes))
}

/// Per op, the op just before it on its lane within the window.
fn lane_predecessors(exec: &Execution, nodes: &[NodeId]) -> Vec<Option<usize>> {
    let mut last_on: HashMap<AgentId, usize> = HashMap::new();
    let mut predecessor = vec![None; nodes.len()];
    // `nodes` is sorted by id, and a lane's ops are in id order.
    for (i, &node) in nodes.iter().enumerate() {
        predecessor[i] = last_on.insert(exec.node(node).agent, i);
    }
    predecessor
}

/// Longest-path layers over `before`; where only cycles remain, the first op whose lane
/// predecessor is placed goes next, after what of it is placed already.
fn layer(before: &[Vec<usize>], lane_predecessor: &[Option<usize>]) -> Vec<u32> {
    let count = before.len();
    let mut step: Vec<Option<u32>> = vec![None; count];
    while step.iter().any(Option::is_none) {
        let ready = (0..count).find(|&i| step[i].is_none() && before[i].iter().all(|&a| step[a].is_some()));
        let next = ready.unwrap_or_else(|| {
            (0..count)
                .find(|&i| step[i].is_none() && lane_predecessor[i].is_none_or(|p| step[p].is_some()))
                .unwrap_or_else(|| (0..count).find(|&i| step[i].is_none()).expect("an unplaced op"))
        });
        let after = before[next].iter().filter_map(|&a| step[a]).max();
        step[next] = Some(after.map_or(0, |s| s + 1));
    }
    step.into_iter().map(|s| s.unwrap_or(0)).collect()
}

/// "aclrtStreamWaitEvent", "kernel `matmul`".
fn label(exec: &Execution, node: NodeId) -> String {
    match &exec.node(node).op.kind {
        crate::model::OpKind::Kernel { launch, .. } => format!("kernel {}", launch.name),
        _ => exec.node(node).op.api.to_string(),
    }
}

/// The synchronization object a node names: "e1", "to_next #0"; its rank only where it
/// is not the lane's.
fn object_name(exec: &Execution, node: NodeId) -> Option<String> {
    let own_rank = format!(" (rank {})", exec.node(node).rank(exec));
    let name = |inst| {
        let name = exec.instance_name(inst);
        name.strip_suffix(&own_rank)
            .map_or_else(|| name.clone(), str::to_string)
    };
    Some(match &exec.node(node).action {
        Action::EventRecord(e)
        | Action::EventWait(e)
        | Action::EventReset(e)
        | Action::EventQuery(e)
        | Action::EventSync(e)
        | Action::NotifyRecord(e)
        | Action::NotifyWait(e)
        | Action::Create(e)
        | Action::Destroy(e) => name(*e),
        Action::ChannelNotifyRecord { channel, index } | Action::ChannelNotifyWait { channel, index } => {
            format!("{} #{index}", name(*channel))
        }
        Action::ThreadNotifyRecord { target: thread, index } | Action::ThreadNotifyWait { thread, index } => {
            format!("{} #{index}", name(*thread))
        }
        Action::AgentSync { agent, .. } => exec.agent_name(*agent),
        Action::ValueWrite { word, .. } | Action::ValueWait { word, .. } => exec.word_name(word),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt::SmtOptions;
    use crate::timeline::{EdgeKind, Ghost, GhostFrom, GhostKind};
    use crate::{Overrides, Sources, check_sync_bytes_with};

    fn timelines_of(program: &str) -> Vec<Diagnostic> {
        let overrides = Overrides {
            smt: SmtOptions {
                timelines: true,
                ..SmtOptions::default()
            },
            ..Overrides::default()
        };
        check_sync_bytes_with(&mut Sources::default(), "t.sync", program.as_bytes(), &overrides).diagnostics
    }

    const CROSS_WAIT: &str = "
        let s1 = aclrtCreateStream();
        let s2 = aclrtCreateStream();
        let e1 = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
        let e2 = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
        aclrtStreamWaitEvent(s1, e2);
        aclrtRecordEvent(e1, s1);
        aclrtStreamWaitEvent(s2, e1);
        aclrtRecordEvent(e2, s2);
    ";

    #[test]
    fn a_deadlock_window_holds_its_cycle_side_by_side_with_every_step_as_an_edge() {
        let found = timelines_of(CROSS_WAIT);
        let deadlock = found.iter().find(|d| d.code == "SG501").expect("a deadlock");
        let timeline = deadlock.timeline.as_ref().expect("a timeline");
        assert_eq!(timeline.highlight, Highlight::Cycle);
        let cycle: Vec<&TimelineOp> = timeline.cycle_ops().collect();
        assert_eq!(cycle.len(), 4);
        assert!(cycle.iter().all(|op| !op.executed && op.number.is_some()));
        let steps = timeline.edges.iter().filter(|e| e.on_cycle).count();
        assert_eq!(steps, 4, "two program-order steps and two matches");
        assert!(timeline.edges.iter().any(|e| e.on_cycle && e.kind == EdgeKind::Match));
        // Neither wait is ordered after the other's record: both lanes start together.
        let waits: Vec<u32> = cycle
            .iter()
            .filter(|op| op.label == "aclrtStreamWaitEvent")
            .map(|op| op.step)
            .collect();
        assert_eq!(waits.len(), 2);
        assert_eq!(waits[0], waits[1]);
    }

    #[test]
    fn no_timeline_unless_asked_for() {
        let found = check_sync_bytes_with(
            &mut Sources::default(),
            "t.sync",
            CROSS_WAIT.as_bytes(),
            &Overrides::default(),
        )
        .diagnostics;
        assert!(!found.is_empty());
        assert!(found.iter().all(|d| d.timeline.is_none()));
    }

    #[test]
    fn a_long_execution_is_windowed_to_at_most_max_ops() {
        let mut program = String::from(CROSS_WAIT);
        let work: String = (0..500)
            .map(|i| format!("kernel(s1, \"k{i}\");\nkernel(s2, \"m{i}\");\n"))
            .collect();
        program.insert_str(program.find("aclrtStreamWaitEvent(s1").unwrap(), &work);
        let found = timelines_of(&program);
        let timeline = found
            .iter()
            .find(|d| d.code == "SG501")
            .unwrap()
            .timeline
            .as_ref()
            .unwrap();
        assert!(timeline.ops.len() <= Timeline::MAX_OPS);
        assert!(timeline.omitted > 900, "{}", timeline.omitted);
        assert!(timeline.lanes.iter().any(|lane| lane.omitted_before >= 497));
        assert_eq!(timeline.cycle_ops().count(), 4);
    }

    /// The timeline of the first finding of `code` whose message says `says`.
    fn timeline_of(found: &[Diagnostic], code: &str, says: &str) -> Timeline {
        let finding = found
            .iter()
            .find(|d| d.code == code && d.message.contains(says))
            .unwrap_or_else(|| panic!("a {code} saying {says:?} in {found:#?}"));
        *finding.timeline.clone().expect("a timeline")
    }

    fn lane_rank(timeline: &Timeline, op: usize) -> u32 {
        timeline.lanes[timeline.ops[op].lane].rank
    }

    /// A wait nothing records, then more work on its stream than a window keeps around
    /// it, then a synchronize of that stream.
    const NEVER_RECORDED: &str = "
        let s1 = aclrtCreateStream();
        let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
        aclrtStreamWaitEvent(s1, ev);
        kernel(s1, \"k1\");
        kernel(s1, \"k2\");
        kernel(s1, \"k3\");
        kernel(s1, \"k4\");
        kernel(s1, \"k5\");
        aclrtSynchronizeStream(s1);
    ";

    #[test]
    fn a_wait_nothing_records_gets_a_ghost_from_its_lanes_margin() {
        let timeline = timeline_of(&timelines_of(NEVER_RECORDED), "SG104", "waits forever");
        let [ghost] = timeline.ghosts.as_slice() else {
            panic!("one ghost: {:?}", timeline.ghosts);
        };
        assert_eq!(ghost.kind, GhostKind::Missing);
        assert_eq!(timeline.ops[ghost.wait].label, "aclrtStreamWaitEvent");
        assert_eq!(ghost.from, GhostFrom::Lane(timeline.ops[ghost.wait].lane));
        assert_eq!(ghost.label, "no record");
        assert!(ghost.title.contains("nothing records event ev"), "{}", ghost.title);
    }

    #[test]
    fn a_hung_synchronize_is_drawn_after_the_stuck_queue_it_waits_for() {
        let timeline = timeline_of(&timelines_of(NEVER_RECORDED), "SG104", "waits forever");
        let [hang] = timeline.hangs.as_slice() else {
            panic!("one hang: {:?}", timeline.hangs);
        };
        let (sync, stuck, last) = (
            &timeline.ops[hang.sync],
            &timeline.ops[hang.stuck],
            &timeline.ops[hang.waits_for],
        );
        assert_eq!(sync.label, "aclrtSynchronizeStream");
        assert!(!sync.executed);
        assert_eq!(stuck.label, "aclrtStreamWaitEvent");
        // The synchronize covers `k5`, which the window leaves out: it is drawn after
        // the last op of the stream the window has.
        let stream = stuck.lane;
        let stream_steps = timeline.ops.iter().filter(|op| op.lane == stream).map(|op| op.step);
        assert_eq!(Some(last.step), stream_steps.clone().max());
        assert!(stream_steps.clone().all(|step| step < sync.step), "{timeline:#?}");
        assert!(
            timeline
                .edges
                .iter()
                .any(|e| e.from == hang.waits_for && e.to == hang.sync && e.kind == EdgeKind::HostSync),
            "{:?}",
            timeline.edges
        );
    }

    #[test]
    fn a_wait_after_a_reset_gets_a_ghost_from_the_record_of_the_earlier_cycle() {
        let program = "
            let s1 = aclrtCreateStream();
            let s2 = aclrtCreateStream();
            let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
            aclrtRecordEvent(ev, s1);
            aclrtSynchronizeStream(s1);
            aclrtResetEvent(ev, s1);
            aclrtSynchronizeStream(s1);
            aclrtStreamWaitEvent(s2, ev);
        ";
        let timeline = timeline_of(&timelines_of(program), "SG104", "waits forever");
        let [ghost] = timeline.ghosts.as_slice() else {
            panic!("one ghost: {:?}", timeline.ghosts);
        };
        assert_eq!(ghost.kind, GhostKind::OtherCycle);
        let GhostFrom::Op(record) = ghost.from else {
            panic!("from the record: {ghost:?}");
        };
        assert_eq!(timeline.ops[record].label, "aclrtRecordEvent");
        assert_eq!(ghost.label, "earlier reset cycle");
        assert!(ghost.title.contains("aclrtResetEvent"), "{}", ghost.title);
    }

    #[test]
    fn a_wait_that_reads_a_stale_record_gets_a_ghost_for_that_match() {
        let program = "
            let s1 = aclrtCreateStream();
            let s2 = aclrtCreateStream();
            let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
            for step in 0..2 {
                aclrtRecordEvent(ev, s1);
                aclrtStreamWaitEvent(s2, ev);
                kernel(s2, \"relu\");
                aclrtSynchronizeStream(s2);
            }
        ";
        let timeline = timeline_of(&timelines_of(program), "SG102", "recorded again while still set");
        let stale: Vec<&Ghost> = timeline.ghosts.iter().filter(|g| g.kind == GhostKind::Stale).collect();
        let [ghost] = stale.as_slice() else {
            panic!("one stale ghost: {:?}", timeline.ghosts);
        };
        let GhostFrom::Op(record) = ghost.from else {
            panic!("from the stale record: {ghost:?}");
        };
        let records: Vec<usize> = (0..timeline.ops.len())
            .filter(|&i| timeline.ops[i].label == "aclrtRecordEvent")
            .collect();
        let waits: Vec<usize> = (0..timeline.ops.len())
            .filter(|&i| timeline.ops[i].label == "aclrtStreamWaitEvent")
            .collect();
        // The second step's wait reads the first step's record.
        assert_eq!((record, ghost.wait), (records[0], waits[1]));
        assert!(
            timeline.edges.iter().any(|e| e.from == record && e.to == ghost.wait),
            "the match it stands for"
        );
    }

    #[test]
    fn a_ring_wait_on_the_wrong_peer_gets_a_ghost_from_that_peers_record_sent_elsewhere() {
        let program = include_str!("../../examples/parametric-ring/off-by-one-peer.sync");
        let timeline = timeline_of(&timelines_of(program), "SG502", "notify 0 of channel to_next");
        let ghost = timeline
            .ghosts
            .iter()
            .find(|g| lane_rank(&timeline, g.wait) == 0)
            .unwrap_or_else(|| panic!("a ghost into rank 0's wait: {:?}", timeline.ghosts));
        assert_eq!(ghost.kind, GhostKind::WrongPeer);
        assert_eq!(ghost.label, "expects rank 1 · notify 0");
        let GhostFrom::Op(record) = ghost.from else {
            panic!("from rank 1's record: {ghost:?}");
        };
        assert_eq!(lane_rank(&timeline, record), 1);
        assert_eq!(timeline.ops[record].label, "HcommChannelNotifyRecordOnThread");
        let elsewhere = ghost.elsewhere.as_ref().expect("where it went");
        assert_eq!(elsewhere.label, "to rank 2 · notify 0");
        let lane = elsewhere.lane.expect("rank 2 has a lane");
        assert_eq!(timeline.lanes[lane].rank, 2);
    }

    #[test]
    fn a_wait_on_a_rank_that_does_not_exist_gets_a_ghost_from_its_own_margin() {
        let program = include_str!("../../examples/pairwise-exchange/odd-rank-count.sync");
        let timeline = timeline_of(&timelines_of(program), "SG502", "notify 0 of channel ch");
        let ghost = &timeline.ghosts[0];
        assert_eq!(ghost.kind, GhostKind::Missing);
        assert_eq!(ghost.from, GhostFrom::Lane(timeline.ops[ghost.wait].lane));
        assert_eq!(ghost.label, "no record: expects rank 3 · notify 0");
    }

    #[test]
    fn layers_break_a_cycle_after_what_is_placed() {
        // 0 -> 1 -> 2 -> 0, and 3 after 2: the cycle is broken at its first op.
        let before = vec![vec![2], vec![0], vec![1], vec![2]];
        let lane = vec![None, Some(0), Some(1), None];
        assert_eq!(layer(&before, &lane), vec![0, 1, 2, 3]);
    }
}
