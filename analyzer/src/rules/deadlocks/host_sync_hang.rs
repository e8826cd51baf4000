use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use std::collections::HashMap;

use crate::exec::{Action, AgentId, NodeId};
use crate::model::{EventSemantics, ObjectKind};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A host synchronize (`aclrtSynchronizeStream`, `aclrtSynchronizeEvent`,
    /// `aclrtSynchronizeDevice`, `HcommThreadSynchronize`, CUDA's equivalents) that
    /// waits for device work that can never complete, because that work is stuck behind
    /// a deadlock or a wait nothing satisfies. That work may be another host thread's:
    /// a stream synchronize waits for whatever was queued on the stream before it, by
    /// any thread, so a wait another thread can queue just before the synchronize,
    /// which never completes or which needs what this thread does after the
    /// synchronize, can block it (in the runs where that thread is first).
    ///
    /// ## Why is this a bug
    /// The host thread blocks in the call forever (or until the wait timeout turns into
    /// an error such as 507011), so the process never gets to report or recover.
    ///
    /// ## Example
    /// ```text
    /// aclrtStreamWaitEvent(s1, never_recorded);
    /// aclrtSynchronizeStream(s1);      // the host never returns from here
    /// ```
    ///
    /// ## Fix
    /// Fix the stuck wait this points to; the synchronize itself is correct.
    pub struct HostSyncHang;
    code = "SG503",
    name = "host-sync-hang",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let threaded_ranks = exec.ranks_with_several_host_threads();
    let bindings = capture_bindings(analysis);
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        if !node.action.blocks_host() {
            continue;
        }
        let waits_for = hb.waited_for(id);
        // The host is stuck here only if it got here: everything before it on the
        // host thread ran.
        let reached = node.issued_after().is_none_or(|before| hb.executes(before));
        if !reached {
            continue;
        }
        if hb.executes(id) {
            if threaded_ranks.contains(&node.rank(exec)) {
                out.extend(may_block(analysis, id, &bindings));
            }
            continue;
        }
        let Some(&blocked) = waits_for.iter().find(|&&n| !hb.executes(n)) else {
            continue;
        };
        let root = analysis.stuck_at(exec.node(blocked).agent).unwrap_or(blocked);
        out.push(
            Diagnostic::new(
                &HostSyncHang::INFO,
                analysis.span(id),
                format!(
                    "the host blocks forever in {}: the work it waits for never completes",
                    node.op.api
                ),
            )
            .with_label(format!("{} never returns", node.op.api))
            .with_related(
                analysis.span(root),
                format!("{} {STUCK_HERE}", exec.agent_name(exec.node(root).agent)),
            )
            .with_help("fix the stuck wait; this synchronize is where the hang becomes visible"),
        );
    }
}

/// How the related location of a hang names the stuck work it waits behind.
pub(crate) const STUCK_HERE: &str = "is stuck here";

/// A synchronize that returns in this execution but can block in another run: another
/// host thread can queue work on a synchronized queue before it (nothing orders that
/// thread's issue after the synchronize), and that work never completes or needs what
/// follows the synchronize.
fn may_block(analysis: &Analysis, sync: NodeId, bindings: &HashMap<NodeId, NodeId>) -> Option<Diagnostic> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let node = exec.node(sync);
    let queues: Vec<AgentId> = match &node.action {
        Action::AgentSync { agent, .. } => vec![*agent],
        Action::WaitsSync { upto, .. } => upto.iter().map(|&wait| exec.node(wait).agent).collect(),
        Action::DeviceSync { .. } => (0..exec.agents.len() as u32)
            .map(AgentId)
            .filter(|&a| exec.agent(a).rank == exec.agent(node.agent).rank && exec.agent(a).kind.is_device())
            .collect(),
        _ => return None,
    };
    let issued_after = |n: NodeId| {
        let queued = exec.node(n);
        (queued.host == node.host && n > sync)
            || queued
                .issued_after()
                .is_some_and(|before| before == sync || hb.happens_before(sync, before))
    };
    // A capture-kind wait bound to a record is issued after that record.
    let issued_after_sync = |n: NodeId| issued_after(n) || bindings.get(&n).is_some_and(|&record| issued_after(record));
    for queue in queues {
        for &queued in exec.agent(queue).nodes.iter().take_while(|&&n| !issued_after_sync(n)) {
            let other = exec.node(queued).host;
            if other == node.host {
                continue;
            }
            let consequence = if !hb.executes(queued) {
                "which never completes"
            } else if hb.happens_before(sync, queued) {
                "which runs only after work this thread issues once the synchronize has returned"
            } else {
                continue;
            };
            if !queued_after_others(analysis, &issued_after) {
                return None;
            }
            return Some(
                Diagnostic::new(
                    &HostSyncHang::INFO,
                    analysis.span(sync),
                    format!(
                        "the host can block forever in {}: {} can queue {} before this call, {consequence}",
                        node.op.api,
                        exec.agent_name(other),
                        analysis.describe(queued)
                    ),
                )
                .with_label(format!("{} waits for it when it was queued first", node.op.api))
                .with_related(analysis.span(queued), format!("queued by {}", exec.agent_name(other)))
                .with_help(
                    "order the other thread's work before or after this synchronize (an event it records and this thread waits for), or synchronize with an event instead of the whole queue",
                ),
            );
        }
    }
    None
}

/// Whether the device work issued after the synchronize returned (by its thread, or by
/// a thread that thread starts afterwards) is queued behind every other thread's work
/// on its queues. If the synchronize blocks, that work is never issued, so an order that
/// queues it ahead of another thread's work (making that work wait for the synchronize)
/// is no run's order; the order with it last shows whether the wait is real.
fn queued_after_others(analysis: &Analysis, issued_after_sync: &dyn Fn(NodeId) -> bool) -> bool {
    analysis
        .exec
        .agents
        .iter()
        .filter(|agent| agent.kind.is_device())
        .all(|agent| {
            let first_after = agent.nodes.iter().position(|&n| issued_after_sync(n));
            first_after.is_none_or(|at| agent.nodes[at..].iter().all(|&n| issued_after_sync(n)))
        })
}

/// Each capture-kind event wait and the record it bound to when it was issued (so it
/// was issued after that record).
fn capture_bindings(analysis: &Analysis) -> HashMap<NodeId, NodeId> {
    let exec = analysis.exec;
    let capture = |wait: NodeId| match exec.node(wait).action {
        Action::EventWait(event) => matches!(
            &exec.program.object(exec.instance(event).obj).kind,
            ObjectKind::Event(info) if info.semantics == EventSemantics::Capture
        ),
        _ => false,
    };
    analysis
        .hb
        .matching
        .edges
        .iter()
        .filter(|&&(_, wait)| capture(wait))
        .map(|&(record, wait)| (wait, record))
        .collect()
}
