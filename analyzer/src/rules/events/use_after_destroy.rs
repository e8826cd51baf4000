use std::collections::{BTreeMap, HashMap};

use super::spelled;
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, AgentKind, BadUse, NodeId};
use crate::model::{Block, ObjectKind, Op, OpKind, Program, ThreadId};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// Any call on an event after `aclrtDestroyEvent` (`acl.rt.destroy_event`,
    /// `cudaEventDestroy`) destroyed it: a record, wait, reset, query, synchronize, or a
    /// second destroy. Typically a cleanup call placed inside a loop, so that the next
    /// iteration uses the destroyed event; also a use on a host thread that is started
    /// only after the destroy. (A thread started before the destroy is not reported:
    /// `.sync` has no join, so its uses cannot be ordered before the destroy.)
    ///
    /// ## Why is this a bug
    /// After the destroy the handle is dangling. The docs require that no API is using
    /// the event when it is destroyed and none uses it afterwards: the call returns an
    /// invalid-handle error at best, or acts on an event the runtime has since handed
    /// out again. Either way the record or wait the code relies on does not happen, so
    /// the streams it was meant to order race.
    ///
    /// ## Example
    /// ```text
    /// for batch in 0..2 {
    ///     acl.rt.record_event(ev, 0);          // batch 1: ev is already destroyed
    ///     acl.rt.stream_wait_event(s1, ev);
    ///     acl.rt.reset_event(ev, s1);
    ///     acl.rt.destroy_event(ev);            // belongs after the loop
    /// }
    /// ```
    ///
    /// ## Fix
    /// Destroy the event once, after its last use (after the loop, once the streams
    /// that use it have synchronized), or create a new event before using it again.
    ///
    /// Method: each concrete execution is walked in host issue order; a call on an
    /// event whose instance has been destroyed is reported with the destroy.
    pub struct UseAfterDestroy;
    code = "SG106",
    name = "event-use-after-destroy",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let mut by_destroy: BTreeMap<NodeId, Vec<&BadUse>> = BTreeMap::new();
    let mut spawns: Option<HashMap<(ThreadId, u32), Vec<NodeId>>> = None;
    for bad in &exec.bad_uses {
        if let Some(destroy) = bad.destroyed_by
            && matches!(exec.program.object(bad.obj).kind, ObjectKind::Event(_))
            && certainly_after(
                analysis,
                bad,
                destroy,
                spawns.get_or_insert_with(|| spawns_of(analysis)),
            )
        {
            by_destroy.entry(destroy).or_default().push(bad);
        }
    }
    for (destroy, uses) in by_destroy {
        let Action::Destroy(inst) = exec.node(destroy).action else {
            continue;
        };
        let first = uses[0];
        let name = exec.instance_name(inst);
        let destroy_api = spelled(exec.program, first.obj, "aclrtDestroyEvent");
        let destroyer = host_thread(analysis, destroy);
        let user = thread_of(exec.program, first.op);
        let message = if let (Some(user), Some(destroyer)) = (user, destroyer)
            && user != destroyer
        {
            format!(
                "{} on host thread {} uses event {name} after host thread {} destroyed it: the thread starts only after {destroy_api}",
                first.op.api,
                exec.program.threads[user.index()].name,
                exec.program.threads[destroyer.index()].name
            )
        } else if matches!(first.op.kind, OpKind::Destroy(_)) {
            format!(
                "event {name} is destroyed twice: the second {} passes a dangling handle",
                first.op.api
            )
        } else {
            format!(
                "{} uses event {name} after {destroy_api} destroyed it: the handle is dangling, so the call fails or acts on another event",
                first.op.api
            )
        };
        let destroy_span = analysis.span(destroy);
        let again = uses[1..].iter().any(|bad| bad.op.span == destroy_span);
        let destroyed = if again {
            format!("{name} is destroyed here, and again by the next loop iteration")
        } else {
            format!("{name} is destroyed here")
        };
        let mut diagnostic = Diagnostic::new(&UseAfterDestroy::INFO, first.op.span.clone(), message);
        diagnostic = if first.op.span == destroy_span {
            diagnostic.with_label(format!("the next loop iteration destroys {name} again"))
        } else {
            diagnostic
                .with_label(format!("{name} no longer exists here"))
                .with_related(destroy_span.clone(), destroyed)
        };
        let mut seen = vec![first.op.span.clone(), destroy_span.clone()];
        for bad in &uses[1..] {
            if !seen.contains(&bad.op.span) {
                seen.push(bad.op.span.clone());
                diagnostic = diagnostic.with_related(bad.op.span.clone(), "also used after the destroy");
            }
        }
        // A use written above the destroy that runs after it: the destroy is in a loop.
        let in_loop = uses
            .iter()
            .any(|bad| bad.op.span.range.start <= destroy_span.range.start);
        let place = if in_loop { " (after the loop)" } else { "" };
        out.push(diagnostic.with_help(format!(
            "call {destroy_api}({name}) once, after the last use of {name}{place}, when the streams that use it have synchronized"
        )));
    }
}

/// The host thread that issued `node`.
fn host_thread(analysis: &Analysis, node: NodeId) -> Option<ThreadId> {
    let exec = analysis.exec;
    match exec.agent(exec.node(node).agent).kind {
        AgentKind::Host(thread) => Some(thread),
        _ => None,
    }
}

/// Whether the bad use certainly comes after the destroy: on the destroying host
/// thread (program order), or on a thread that is only started after the destroy. A
/// use on a thread that may run before the destroy is not reported: `.sync` has no
/// join, so nothing could order it, and the walk (threads after their spawner) would
/// flag every object a spawner destroys at its end.
fn certainly_after(
    analysis: &Analysis,
    bad: &BadUse,
    destroy: NodeId,
    spawns: &HashMap<(ThreadId, u32), Vec<NodeId>>,
) -> bool {
    let exec = analysis.exec;
    let (Some(destroyer), Some(user)) = (host_thread(analysis, destroy), thread_of(exec.program, bad.op)) else {
        return false;
    };
    if user == destroyer {
        return true;
    }
    let destroyer_agent = exec.node(destroy).agent;
    spawns.get(&(user, bad.rank)).is_some_and(|spawns| {
        spawns
            .iter()
            .all(|&spawn| exec.node(spawn).agent == destroyer_agent && spawn > destroy)
    })
}

/// The nodes that start each host thread, per rank.
fn spawns_of(analysis: &Analysis) -> HashMap<(ThreadId, u32), Vec<NodeId>> {
    let exec = analysis.exec;
    let mut spawns: HashMap<(ThreadId, u32), Vec<NodeId>> = HashMap::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        if let Action::Spawn(agent) = node.action
            && let AgentKind::Host(thread) = exec.agent(agent).kind
        {
            spawns
                .entry((thread, exec.agent(agent).rank))
                .or_default()
                .push(NodeId(index as u32));
        }
    }
    spawns
}

/// The host thread whose code contains `op`.
fn thread_of(program: &Program, op: &Op) -> Option<ThreadId> {
    let contains = |block: &Block, op: &Op| {
        let mut found = false;
        crate::model::for_each_op(block, &mut |candidate| found |= std::ptr::eq(candidate, op));
        found
    };
    program
        .threads
        .iter()
        .position(|thread| contains(&thread.body, op))
        .map(|index| ThreadId(index as u32))
}
