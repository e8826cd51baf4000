//! SG3xx: HCCL notifies and one-sided transfers, and memory-value waits.
//!
//! Notify rules read `hb.matching.notify_queues` (records and waits of one flag, each in
//! issue order; the k-th wait consumes the k-th record). The transfer rules SG304 and
//! SG305 split the races of `hb.races` that involve a one-sided transfer
//! (`HcommWriteOnThread`, `HcommReadOnThread`, their variants), which SG601/SG602 leave
//! to them; [`transfer_races`] decides which of the two reports each race. The
//! memory-value rules SG308 and SG309 read `hb.matching.values` (`hb::values`).

pub mod batch_never_submitted;
pub mod notify_index_out_of_range;
pub mod notify_lost_signal;
pub mod notify_unbalanced;
pub mod remote_read_before_write_done;
pub mod remote_write_before_ready;
pub mod value_wait_already_satisfied;
pub mod value_wait_on_unset_memory;
pub mod write_exceeds_buffer;

use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::exec::{Action, AgentId, Execution, Memory, NodeId};
use crate::hb::{FlagKey, Race};
use crate::model::OpKind;

/// "notify 2 of rank 0's channel to rank 1", "notify 1 of HCCL thread t1", "notify n".
fn flag_name(analysis: &Analysis, key: FlagKey) -> String {
    let exec = analysis.exec;
    match key {
        FlagKey::Acl(notify) => format!("notify {}", exec.instance_name(notify)),
        FlagKey::Channel { dst, src, index } => format!("notify {index} of rank {dst}'s channel to rank {src}"),
        FlagKey::Thread { thread, index } => {
            format!("notify {index} of HCCL thread {}", exec.instance_name(thread))
        }
    }
}

/// The distinct agents that run `nodes`, in order of first appearance: "stream s (rank 0)".
fn agent_list(analysis: &Analysis, nodes: &[NodeId]) -> String {
    let mut names: Vec<String> = Vec::new();
    for &node in nodes {
        let name = analysis.exec.agent_name(analysis.exec.node(node).agent);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.len() {
        0 => "nobody".to_string(),
        1 => names.remove(0),
        _ => {
            let last = names.pop().unwrap_or_default();
            format!("{} and {last}", names.join(", "))
        }
    }
}

/// "once", "twice", "3 times".
pub(crate) fn times(count: usize) -> String {
    match count {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// The timeout a notify wait was written with, for messages: " (timeout 1836 s)".
fn timeout_suffix(analysis: &Analysis, wait: NodeId) -> String {
    let timeout = match &analysis.exec.node(wait).op.kind {
        OpKind::ChannelNotifyWait { timeout, .. }
        | OpKind::ThreadNotifyWait { timeout, .. }
        | OpKind::NotifyWait { timeout, .. } => timeout.as_ref(),
        _ => None,
    };
    match timeout.and_then(|t| t.value.as_const()) {
        Some(0) => " forever (timeout 0)".to_string(),
        Some(seconds) => format!(" (until its {seconds} s timeout)"),
        None => String::new(),
    }
}

/// Byte counts for messages: "64 KiB", "400 MiB", "100 B".
fn bytes(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} B")
}

/// A byte range for messages: "bytes 0..64 KiB" from the start of a buffer, otherwise
/// "64 KiB at offset 1 MiB" (end exclusive).
fn byte_range(start: u64, end: u64) -> String {
    if start == 0 {
        format!("bytes 0..{}", bytes(end))
    } else {
        format!("{} at offset {}", bytes(end.saturating_sub(start)), bytes(start))
    }
}

/// Whether `node` is the memory access of a one-sided transfer (`HcommWriteOnThread`,
/// `HcommWriteWithNotifyOnThread`, `HcommReadOnThread` and their Nbi variants).
fn is_transfer(analysis: &Analysis, node: NodeId) -> bool {
    let node = analysis.exec.node(node);
    matches!(node.op.kind, OpKind::RemoteWrite { .. } | OpKind::RemoteRead { .. })
        && matches!(node.action, Action::Access(_))
}

fn is_write_transfer(analysis: &Analysis, node: NodeId) -> bool {
    matches!(analysis.exec.node(node).op.kind, OpKind::RemoteWrite { .. })
}

/// The peer rank whose HCCL buffer a transfer writes (write) or reads (read): the
/// far end of its channel. `None` when the remote address is not a peer's HCCL buffer.
fn transfer_peer(analysis: &Analysis, transfer: NodeId) -> Option<u32> {
    let node = analysis.exec.node(transfer);
    let own = node.rank(analysis.exec);
    let writes_remote = is_write_transfer(analysis, transfer);
    let Action::Access(accesses) = &node.action else {
        return None;
    };
    accesses.iter().find_map(|access| match access.memory {
        Memory::HcclBuffer { rank } if rank != own && access.write == writes_remote => Some(rank),
        _ => None,
    })
}

/// The agents of each rank, for per-rank happens-before queries.
struct RankAgents(Vec<Vec<AgentId>>);

impl RankAgents {
    fn new(exec: &Execution) -> Self {
        let mut by_rank: Vec<Vec<AgentId>> = vec![Vec::new(); exec.ranks as usize];
        for (index, agent) in exec.agents.iter().enumerate() {
            if let Some(list) = by_rank.get_mut(agent.rank as usize) {
                list.push(AgentId(index as u32));
            }
        }
        RankAgents(by_rank)
    }

    fn of(&self, rank: u32) -> &[AgentId] {
        self.0.get(rank as usize).map_or(&[], Vec::as_slice)
    }
}

/// The last node of `rank`, in that rank's issue order, that happens before `target`:
/// the latest point of `rank` that `target` is ordered after (for a transfer and its
/// peer rank: the peer's readiness signal).
fn last_before(analysis: &Analysis, agents: &RankAgents, target: NodeId, rank: u32) -> Option<NodeId> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    agents
        .of(rank)
        .iter()
        .filter_map(|&agent| {
            let count = hb.nodes_before(agent, target);
            count.checked_sub(1).map(|i| exec.agent(agent).nodes[i])
        })
        .max_by_key(|&n| exec.node(n).issue)
}

/// The first node of `rank`, in that rank's issue order, that `source` happens before:
/// where `rank` learns that `source` has completed.
fn first_after(analysis: &Analysis, agents: &RankAgents, source: NodeId, rank: u32) -> Option<NodeId> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    agents
        .of(rank)
        .iter()
        .filter_map(|&agent| {
            let nodes = &exec.agent(agent).nodes;
            // Nodes that execute are a prefix; among them, those after `source` a suffix.
            let executed = nodes.partition_point(|&n| hb.executes(n));
            let nodes = &nodes[..executed];
            let first = nodes.partition_point(|&n| !hb.happens_before(source, n));
            nodes.get(first).copied()
        })
        .min_by_key(|&n| exec.node(n).issue)
}

/// Which side of a transfer's handshake a racing access is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TransferPhase {
    /// The access belongs before the transfer (the peer's or the source's readiness):
    /// SG304.
    BeforeReady,
    /// The access belongs after the transfer (using what it moved, or reusing the
    /// memory it reads): SG305.
    BeforeDone,
}

/// A race between a one-sided transfer and another access, and its phase.
struct TransferRace<'r> {
    race: &'r Race,
    transfer: NodeId,
    other: NodeId,
    phase: TransferPhase,
    /// Last node of the other access's rank that the transfer is ordered after.
    ready: Option<NodeId>,
}

impl TransferRace<'_> {
    /// Whether the transfer / the other access writes the racing bytes.
    fn transfer_writes(&self) -> bool {
        if self.race.first == self.transfer {
            self.race.first_writes
        } else {
            self.race.second_writes
        }
    }

    fn other_writes(&self) -> bool {
        if self.race.first == self.other {
            self.race.first_writes
        } else {
            self.race.second_writes
        }
    }
}

/// Every race of `hb.races` that involves a one-sided transfer, split into the two
/// phases. The rule (documented in SG304 and SG305):
/// - the other access on the transfer's own rank: by issue order: issued before the
///   transfer → `BeforeReady`, after → `BeforeDone`;
/// - on another rank R: against R's readiness point, the last node of R (in R's issue
///   order) that the transfer is ordered after: an access issued before that point
///   should have been covered by it → `BeforeReady`; one issued after it (R had
///   already handed the bytes over) → `BeforeDone`; when no node of R is ordered
///   before the transfer at all, the missing pre-sync is the cause → `BeforeReady`.
///
/// When both sides are transfers, the one visited second is "the transfer".
fn transfer_races<'r>(analysis: &Analysis, races: &'r [Race]) -> Vec<TransferRace<'r>> {
    let exec = analysis.exec;
    let agents = RankAgents::new(exec);
    let mut ready_cache: HashMap<(NodeId, u32), Option<NodeId>> = HashMap::new();
    let mut out = Vec::new();
    for race in races {
        let (transfer, other) = if is_transfer(analysis, race.second) {
            (race.second, race.first)
        } else if is_transfer(analysis, race.first) {
            (race.first, race.second)
        } else {
            continue;
        };
        let (t, o) = (exec.node(transfer), exec.node(other));
        let other_rank = o.rank(exec);
        let ready = *ready_cache
            .entry((transfer, other_rank))
            .or_insert_with(|| last_before(analysis, &agents, transfer, other_rank));
        let phase = if other_rank == t.rank(exec) {
            if o.issue < t.issue {
                TransferPhase::BeforeReady
            } else {
                TransferPhase::BeforeDone
            }
        } else {
            match ready {
                Some(point) if exec.node(point).issue < o.issue => TransferPhase::BeforeDone,
                _ => TransferPhase::BeforeReady,
            }
        };
        out.push(TransferRace {
            race,
            transfer,
            other,
            phase,
            ready,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_read_naturally() {
        assert_eq!(bytes(64 << 10), "64 KiB");
        assert_eq!(bytes(400 << 20), "400 MiB");
        assert_eq!(bytes(2 << 30), "2 GiB");
        assert_eq!(bytes(100), "100 B");
        assert_eq!(bytes((1 << 20) + 1), "1048577 B");
        assert_eq!(byte_range(0, 32 << 10), "bytes 0..32 KiB");
        assert_eq!(byte_range(1 << 20, (1 << 20) + (64 << 10)), "64 KiB at offset 1 MiB");
    }
}
