use std::collections::BTreeMap;

use super::spelled;
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, AgentKind, NodeId};
use crate::model::{Block, ObjectKind, Op, OpKind, Program, ThreadId};
use crate::rules::{declare_rule, with_unordered_uses};

declare_rule! {
    /// ## What it detects
    /// Any call on an event after `aclrtDestroyEvent` (`acl.rt.destroy_event`,
    /// `cudaEventDestroy`) destroyed it: a record, wait, reset, query, synchronize, or a
    /// second destroy. Typically a cleanup call placed inside a loop, so that the next
    /// iteration uses the destroyed event; also a use on a host thread that is started
    /// only after the destroy, and a destroy that can run before another host thread
    /// is done with the event (nothing orders that thread's use before the destroy).
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
    /// event whose instance its own thread destroyed is reported with the destroy. A call
    /// on another host thread is reported when happens-before orders it after the
    /// destroy, or does not order its issue before the destroy: nothing its thread
    /// issues after it (a host call, or device work such as a record) happens before
    /// the destroy.
    pub struct UseAfterDestroy;
    code = "SG106",
    name = "event-use-after-destroy",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let is_event = |obj| matches!(exec.program.object(obj).kind, ObjectKind::Event(_));
    // Uses the destroy certainly precedes: on the destroying thread (the walk found the
    // instance gone), or on a thread that happens-before orders after the destroy.
    let mut after: BTreeMap<NodeId, Vec<&Op>> = BTreeMap::new();
    for bad in &exec.bad_uses {
        if let Some(destroy) = bad.destroyed_by
            && is_event(bad.obj)
        {
            after.entry(destroy).or_default().push(bad.op);
        }
    }
    let mut racing: BTreeMap<NodeId, Vec<NodeId>> = BTreeMap::new();
    for &late in analysis.hb.uses_around_destroys() {
        if !is_event(exec.instance(late.instance).obj) {
            continue;
        }
        if late.certainly_after {
            after.entry(late.destroy).or_default().push(exec.node(late.node).op);
        } else {
            racing.entry(late.destroy).or_default().push(late.node);
        }
    }
    for (destroy, uses) in after {
        out.extend(use_after(analysis, destroy, &uses));
    }
    for (destroy, uses) in racing {
        out.extend(destroy_while_in_use(analysis, destroy, &uses));
    }
}

/// Calls that run after the destroy in every execution.
fn use_after(analysis: &Analysis, destroy: NodeId, uses: &[&Op]) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let Action::Destroy(inst) = exec.node(destroy).action else {
        return None;
    };
    let first = uses[0];
    let obj = exec.instance(inst).obj;
    let name = exec.instance_name(inst);
    let destroy_api = spelled(exec.program, obj, "aclrtDestroyEvent");
    let destroyer = host_thread(analysis, destroy);
    let user = thread_of(exec.program, first);
    let message = if let (Some(user), Some(destroyer)) = (user, destroyer)
        && user != destroyer
    {
        let why = if exec.program.settings.observed_run {
            " in the traced run".to_string()
        } else {
            format!(": the thread starts only after {destroy_api}")
        };
        format!(
            "{} on host thread {} uses event {name} after host thread {} destroyed it{why}",
            first.api,
            exec.program.threads[user.index()].name,
            exec.program.threads[destroyer.index()].name
        )
    } else if matches!(first.kind, OpKind::Destroy(_)) {
        format!(
            "event {name} is destroyed twice: the second {} passes a dangling handle",
            first.api
        )
    } else {
        format!(
            "{} uses event {name} after {destroy_api} destroyed it: the handle is dangling, so the call fails or acts on another event",
            first.api
        )
    };
    let destroy_span = analysis.span(destroy);
    let again = uses[1..].iter().any(|op| op.span == destroy_span);
    let destroyed = if again {
        format!("{name} is destroyed here, and again by the next loop iteration")
    } else {
        format!("{name} is destroyed here")
    };
    let mut diagnostic = Diagnostic::new(&UseAfterDestroy::INFO, first.span.clone(), message);
    diagnostic = if first.span == destroy_span {
        diagnostic.with_label(format!("the next loop iteration destroys {name} again"))
    } else {
        diagnostic
            .with_label(format!("{name} no longer exists here"))
            .with_related(destroy_span.clone(), destroyed)
    };
    let mut seen = vec![first.span.clone(), destroy_span.clone()];
    for op in &uses[1..] {
        if !seen.contains(&op.span) {
            seen.push(op.span.clone());
            diagnostic = diagnostic.with_related(op.span.clone(), "also used after the destroy");
        }
    }
    // A use written above the destroy that runs after it: the destroy is in a loop.
    let in_loop = uses.iter().any(|op| op.span.range.start <= destroy_span.range.start);
    let place = if in_loop { " (after the loop)" } else { "" };
    Some(diagnostic.with_help(format!(
        "call {destroy_api}({name}) once, after the last use of {name}{place}, when the streams that use it have synchronized"
    )))
}

/// Calls on other host threads that nothing orders before the destroy.
fn destroy_while_in_use(analysis: &Analysis, destroy: NodeId, uses: &[NodeId]) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let Action::Destroy(inst) = exec.node(destroy).action else {
        return None;
    };
    let obj = exec.instance(inst).obj;
    let name = exec.instance_name(inst);
    let destroy_api = spelled(exec.program, obj, "aclrtDestroyEvent");
    let first = exec.node(uses[0]);
    let user = exec.agent_name(first.host);
    let diagnostic = Diagnostic::new(
        &UseAfterDestroy::INFO,
        analysis.span(destroy),
        format!(
            "{destroy_api}({name}) on {} can run before {user} is done with {name}: its {} then uses a dangling handle",
            exec.agent_name(exec.node(destroy).agent),
            first.op.api
        ),
    )
    .with_label("nothing orders this after the other thread's use");
    let diagnostic = with_unordered_uses(diagnostic, analysis, uses, |thread| {
        format!("{thread} uses {name} here, possibly after the destroy")
    });
    Some(diagnostic.with_help(format!(
        "destroy {name} only after {user} is done with it: make the destroying thread wait for work {user} issues after its last use (a synchronize on that stream or event), or destroy it on {user}"
    )))
}

/// The host thread that issued `node`.
fn host_thread(analysis: &Analysis, node: NodeId) -> Option<ThreadId> {
    let exec = analysis.exec;
    match exec.agent(exec.node(node).agent).kind {
        AgentKind::Host(thread) => Some(thread),
        _ => None,
    }
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
