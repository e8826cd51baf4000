//! A run's ranks walked in parts, side by side. Ranks are separate processes: a rank's
//! walk reads nothing another rank made, and the only thing that looks across ranks, IPC
//! opens, is resolved once every rank is walked. Each part numbers its nodes, agents and
//! instances from zero; a part joined after another has its numbers shifted past the
//! other's. Since the sequential walk also goes rank by rank, the joined run is exactly
//! the one it makes, provided no budget was reached: a run any part cuts off, or that
//! the parts together take past a budget, is left to the sequential walk, which cuts it
//! where it would.

use std::ops::Range;

use super::build::Builder;
use super::*;

/// Fewer calls than this are walked in one part: a thread costs more than it saves.
pub(super) const MIN_OPS_TO_SPLIT: usize = 20_000;

/// `program`'s run with `params` (every query taken "not done"), its `ranks` walked in
/// `parts` parts, each on a thread of its own but the first, which the calling thread
/// walks; `None` when one part would do, or when a budget was reached (see the module
/// doc). The threads are plain threads, not the rayon pool's: a pool thread may be the
/// one waiting for this walk.
pub(super) fn walk_in_parts<'p>(
    program: &'p Program,
    params: &[i64],
    ranks: u32,
    parts: usize,
    legacy_default_stream: bool,
) -> Option<Execution<'p>> {
    let parts = parts.min(ranks as usize);
    if parts < 2 {
        return None;
    }
    let part = Part {
        program,
        params,
        ranks,
        legacy_default_stream,
    };
    let walked = part.walk(0..ranks, parts)?;
    let within_budgets =
        walked.steps <= MAX_STEPS && walked.exec.nodes.len() <= MAX_NODES && walked.exec.agents.len() <= MAX_AGENTS;
    within_budgets.then(|| walked.finish())
}

/// What every part of one run shares.
struct Part<'a, 'p> {
    program: &'p Program,
    params: &'a [i64],
    ranks: u32,
    legacy_default_stream: bool,
}

impl<'p> Part<'_, 'p> {
    /// `ranks` walked in `parts` parts and joined; `None` once a part is cut off.
    fn walk(&self, ranks: Range<u32>, parts: usize) -> Option<Builder<'p, 'static>> {
        if parts < 2 || ranks.len() < 2 {
            let mut builder = Builder::new(
                self.program,
                self.params.to_vec(),
                self.ranks,
                &[],
                self.legacy_default_stream,
            );
            builder.walk_ranks(ranks);
            return (!builder.exec.truncated()).then_some(builder);
        }
        let low_parts = parts / 2;
        let middle = ranks.start + (ranks.len() * low_parts / parts) as u32;
        let (low, high) = std::thread::scope(|scope| {
            let high = std::thread::Builder::new()
                .stack_size(WALK_STACK)
                .spawn_scoped(scope, || self.walk(middle..ranks.end, parts - low_parts));
            let low = self.walk(ranks.start..middle, low_parts);
            let high = match high {
                Ok(high) => high.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No thread: walked in turn.
                Err(_) => self.walk(middle..ranks.end, 1),
            };
            (low, high)
        });
        let (mut low, high) = (low?, high?);
        join_builders(&mut low, high);
        Some(low)
    }
}

/// Append the ranks `high` walked after those `low` walked.
fn join_builders<'p>(low: &mut Builder<'p, '_>, high: Builder<'p, '_>) {
    let shift = Shift {
        nodes: low.exec.nodes.len() as u32,
        agents: low.exec.agents.len() as u32,
        instances: low.exec.instances.len() as u32,
    };
    low.steps = low.steps.saturating_add(high.steps);
    // Later exports of a handle replace earlier ones, as in the sequential walk.
    for (key, (inst, offset)) in high.ipc.exported {
        low.ipc.exported.insert(key, (shift.instance(inst), offset));
    }
    let opened = high
        .ipc
        .opened
        .into_iter()
        .map(|(inst, key)| (shift.instance(inst), key));
    low.ipc.opened.extend(opened);
    join_executions(&mut low.exec, high.exec, shift);
}

/// Append `high`'s run after `low`'s, its numbers shifted. Every field is named, so that
/// a field added to the run cannot be left out here.
fn join_executions<'p>(low: &mut Execution<'p>, high: Execution<'p>, shift: Shift) {
    let Execution {
        program: _,
        ranks: _,
        params: _,
        mut agents,
        nodes,
        mut instances,
        bad_uses,
        bad_indices,
        elements,
        query_outcomes,
        query_syncs,
        eval_errors,
        invalid_ranges,
        rejected_notifies,
        unsubmitted_batches,
        context_streams,
        cutoff: _,
        legacy_default_stream: _,
        synchronous_work,
        uncaptured,
        graph_launches,
        other_devices,
        capture_misuses,
        ipc_opened,
        ipc_unexported,
    } = high;
    low.nodes.extend(nodes.into_iter().map(|node| shift.node(node)));
    agents.iter_mut().for_each(|agent| shift.agent(agent));
    low.agents.append(&mut agents);
    instances
        .iter_mut()
        .for_each(|instance| shift.instance_fields(instance));
    low.instances.append(&mut instances);
    low.bad_uses.extend(bad_uses.into_iter().map(|bad| shift.bad_use(bad)));
    low.bad_indices
        .extend(bad_indices.into_iter().map(|bad| shift.bad_index(bad)));
    let elements = elements
        .into_iter()
        .map(|((node, obj), inst)| ((shift.node_id(node), obj), shift.instance(inst)));
    low.elements.extend(elements);
    low.query_outcomes.extend(query_outcomes);
    low.query_syncs
        .extend(query_syncs.into_iter().map(|node| shift.node_id(node)));
    low.eval_errors.extend(eval_errors);
    low.invalid_ranges.extend(invalid_ranges);
    let rejected = rejected_notifies
        .into_iter()
        .map(|(node, inst, index)| (shift.node_id(node), shift.instance(inst), index));
    low.rejected_notifies.extend(rejected);
    low.unsubmitted_batches
        .extend(unsubmitted_batches.into_iter().map(|batch| shift.batch(batch)));
    let context_streams = context_streams
        .into_iter()
        .map(|(context, stream)| (shift.instance(context), shift.instance(stream)));
    low.context_streams.extend(context_streams);
    let synchronous = synchronous_work
        .into_iter()
        .map(|(node, agent)| (shift.node_id(node), shift.agent_id(agent)));
    low.synchronous_work.extend(synchronous);
    low.uncaptured.extend(uncaptured);
    low.graph_launches
        .extend(graph_launches.into_iter().map(|(node, op)| (shift.node_id(node), op)));
    low.other_devices.extend(other_devices);
    low.capture_misuses
        .extend(capture_misuses.into_iter().map(|misuse| shift.capture_misuse(misuse)));
    low.ipc_opened.extend(
        ipc_opened
            .into_iter()
            .map(|(opened, shared)| (shift.instance(opened), shift.instance(shared))),
    );
    low.ipc_unexported
        .extend(ipc_unexported.into_iter().map(|inst| shift.instance(inst)));
}

/// How far a later part's numbers move: past the nodes, agents and instances of the
/// parts before it.
#[derive(Clone, Copy)]
struct Shift {
    nodes: u32,
    agents: u32,
    instances: u32,
}

impl Shift {
    fn node_id(self, node: NodeId) -> NodeId {
        NodeId(node.0 + self.nodes)
    }

    fn agent_id(self, agent: AgentId) -> AgentId {
        AgentId(agent.0 + self.agents)
    }

    fn instance(self, inst: InstId) -> InstId {
        InstId(inst.0 + self.instances)
    }

    fn node(self, node: Node<'_>) -> Node<'_> {
        let Node {
            agent,
            op,
            action,
            host,
            issue,
            issued_after,
        } = node;
        Node {
            agent: self.agent_id(agent),
            op,
            action: self.action(action),
            host: self.agent_id(host),
            // Issue positions count within a rank.
            issue,
            issued_after: if issued_after == NO_NODE {
                NO_NODE
            } else {
                issued_after + self.nodes
            },
        }
    }

    fn action(self, action: Action) -> Action {
        let nodes = |upto: Box<[NodeId]>| -> Box<[NodeId]> { upto.iter().map(|&node| self.node_id(node)).collect() };
        match action {
            Action::Create(inst) => Action::Create(self.instance(inst)),
            Action::Destroy(inst) => Action::Destroy(self.instance(inst)),
            Action::EventRecord(inst) => Action::EventRecord(self.instance(inst)),
            Action::EventWait(inst) => Action::EventWait(self.instance(inst)),
            Action::EventReset(inst) => Action::EventReset(self.instance(inst)),
            Action::EventQuery(inst) => Action::EventQuery(self.instance(inst)),
            Action::EventElapsedTime { start, end } => Action::EventElapsedTime {
                start: self.instance(start),
                end: self.instance(end),
            },
            Action::EventSync(inst) => Action::EventSync(self.instance(inst)),
            Action::AgentSync { agent, upto } => Action::AgentSync {
                agent: self.agent_id(agent),
                upto: upto.map(|node| self.node_id(node)),
            },
            Action::DeviceSync { upto } => Action::DeviceSync { upto: nodes(upto) },
            Action::WaitsSync { event, upto } => Action::WaitsSync {
                event: self.instance(event),
                upto: nodes(upto),
            },
            Action::NotifyRecord(inst) => Action::NotifyRecord(self.instance(inst)),
            Action::NotifyWait(inst) => Action::NotifyWait(self.instance(inst)),
            Action::ChannelNotifyRecord { channel, index } => Action::ChannelNotifyRecord {
                channel: self.instance(channel),
                index,
            },
            Action::ChannelNotifyWait { channel, index } => Action::ChannelNotifyWait {
                channel: self.instance(channel),
                index,
            },
            Action::ThreadNotifyRecord { target, index } => Action::ThreadNotifyRecord {
                target: self.instance(target),
                index,
            },
            Action::ThreadNotifyWait { thread, index } => Action::ThreadNotifyWait {
                thread: self.instance(thread),
                index,
            },
            Action::ValueWrite { mut word, value } => {
                self.access(&mut word);
                Action::ValueWrite { word, value }
            }
            Action::ValueWait {
                mut word,
                value,
                condition,
                bits,
            } => {
                self.access(&mut word);
                Action::ValueWait {
                    word,
                    value,
                    condition,
                    bits,
                }
            }
            Action::Access(mut accesses) => {
                accesses.iter_mut().for_each(|access| self.access(access));
                Action::Access(accesses)
            }
            Action::Spawn(agent) => Action::Spawn(self.agent_id(agent)),
            Action::Other => Action::Other,
        }
    }

    fn access(self, access: &mut Access) {
        let Access {
            memory,
            buffer,
            start: _,
            end: _,
            write: _,
        } = access;
        *memory = match *memory {
            Memory::Buffer(inst) => Memory::Buffer(self.instance(inst)),
            // Named by rank, not by instance.
            Memory::HcclBuffer { rank } => Memory::HcclBuffer { rank },
        };
        *buffer = self.instance(*buffer);
    }

    fn agent(self, agent: &mut Agent) {
        let Agent {
            rank: _,
            kind,
            device: _,
            nodes,
        } = agent;
        *kind = match *kind {
            AgentKind::Host(thread) => AgentKind::Host(thread),
            AgentKind::Stream(inst) => AgentKind::Stream(self.instance(inst)),
            AgentKind::HcclThread(inst) => AgentKind::HcclThread(self.instance(inst)),
        };
        nodes.iter_mut().for_each(|node| *node = self.node_id(*node));
    }

    fn instance_fields(self, instance: &mut Instance) {
        let Instance {
            rank: _,
            obj: _,
            created,
            destroyed,
            agent,
            remote_rank: _,
            notify_num: _,
            size: _,
            element: _,
            channel,
        } = instance;
        *created = created.map(|node| self.node_id(node));
        *destroyed = destroyed.map(|node| self.node_id(node));
        *agent = agent.map(|agent| self.agent_id(agent));
        *channel = channel.map(|inst| self.instance(inst));
    }

    fn bad_use(self, bad: BadUse<'_>) -> BadUse<'_> {
        let BadUse {
            op,
            rank,
            obj,
            destroyed_by,
        } = bad;
        BadUse {
            op,
            rank,
            obj,
            destroyed_by: destroyed_by.map(|node| self.node_id(node)),
        }
    }

    /// Named by objects, not instances: nothing to shift.
    fn bad_index(self, bad: BadIndex<'_>) -> BadIndex<'_> {
        let BadIndex {
            op,
            rank,
            element,
            index,
            len,
            missed,
        } = bad;
        BadIndex {
            op,
            rank,
            element,
            index,
            len,
            missed,
        }
    }

    fn batch(self, batch: UnsubmittedBatch) -> UnsubmittedBatch {
        let UnsubmittedBatch {
            start,
            calls,
            other_tags,
        } = batch;
        UnsubmittedBatch {
            start: self.node_id(start),
            calls: calls
                .into_iter()
                .map(|(node, action)| (self.node_id(node), self.action(action)))
                .collect(),
            other_tags: other_tags.into_iter().map(|node| self.node_id(node)).collect(),
        }
    }

    fn capture_misuse(self, misuse: CaptureMisuse<'_>) -> CaptureMisuse<'_> {
        let CaptureMisuse {
            begin,
            rank,
            stream,
            problem,
        } = misuse;
        CaptureMisuse {
            begin,
            rank,
            stream: self.agent_id(stream),
            // Calls, not nodes.
            problem,
        }
    }
}
