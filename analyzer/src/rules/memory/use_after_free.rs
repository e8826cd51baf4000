use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::model::{ObjectKind, Op};
use crate::rules::{declare_rule, with_unordered_uses};

declare_rule! {
    /// ## What it detects
    /// A buffer used after `aclrtFree` / `aclrtFreeHost` (`cudaFree`) released it, or a
    /// stream, notify, channel, HCCL thread or communicator used after it was
    /// destroyed (a channel or HCCL thread ends with its communicator's
    /// `HcclCommDestroy`): a call later on the same host thread, a call on a host thread that
    /// only starts after the free, or a free that can run before another host thread
    /// is done with the object (nothing orders that thread's use before the free).
    /// Events have their own rule, SG106.
    ///
    /// ## Why is this a bug
    /// After the free the address or handle is dangling: the runtime may already have
    /// handed the memory to another allocation, so a kernel or one-sided transfer that
    /// still writes it corrupts unrelated data, and one that reads it gets garbage. A
    /// call on a destroyed stream or notify fails, so the work or signal it was meant
    /// to queue never happens. Across host threads this depends on timing: it works in
    /// testing and fails under load.
    ///
    /// ## Example
    /// ```text
    /// thread worker {
    ///     HcommReadOnThread(t, ch, out, remote, 4 KiB);   // may be issued after the free
    /// }
    /// aclrtSynchronizeStream(s);    // covers only what was issued before it
    /// aclrtFree(out);
    /// ```
    ///
    /// ## Fix
    /// Free the object only after its last use on every thread: make the freeing thread
    /// wait for work the other thread issues after its last use (a synchronize on that
    /// stream or event, or a notify), or free it on the thread that uses it last.
    ///
    /// Method: each concrete execution is walked in host issue order; a call on an
    /// instance its own thread freed is reported with the free. A call on another host
    /// thread is reported when happens-before orders it after the free, or does not
    /// order its issue before the free: nothing its thread issues after it (a host call,
    /// or device work such as a record) happens before the free.
    pub struct UseAfterFree;
    code = "SG603",
    name = "use-after-free",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let not_event = |obj| !matches!(exec.program.object(obj).kind, ObjectKind::Event(_));
    let mut after: BTreeMap<NodeId, Vec<&Op>> = BTreeMap::new();
    for bad in &exec.bad_uses {
        if let Some(free) = bad.destroyed_by
            && not_event(bad.obj)
        {
            after.entry(free).or_default().push(bad.op);
        }
    }
    let mut racing: BTreeMap<NodeId, Vec<NodeId>> = BTreeMap::new();
    for &late in analysis.hb.uses_around_destroys() {
        if !not_event(exec.instance(late.instance).obj) {
            continue;
        }
        if late.certainly_after {
            after.entry(late.destroy).or_default().push(exec.node(late.node).op);
        } else {
            racing.entry(late.destroy).or_default().push(late.node);
        }
    }
    for (free, uses) in after {
        out.extend(used_after(analysis, free, &uses));
    }
    for (free, uses) in racing {
        out.extend(freed_while_in_use(analysis, free, &uses));
    }
}

/// "buffer out", "freed" / "stream s", "destroyed".
fn naming(analysis: &Analysis, free: NodeId) -> Option<(String, &'static str)> {
    let exec = analysis.exec;
    let Action::Destroy(inst) = exec.node(free).action else {
        return None;
    };
    let kind = &exec.program.object(exec.instance(inst).obj).kind;
    let verb = if matches!(kind, ObjectKind::Buffer(_)) {
        "freed"
    } else {
        "destroyed"
    };
    Some((format!("{} {}", kind.noun(), exec.instance_name(inst)), verb))
}

fn used_after(analysis: &Analysis, free: NodeId, uses: &[&Op]) -> Option<Diagnostic> {
    let (object, verb) = naming(analysis, free)?;
    let first = uses[0];
    let free_api = analysis.exec.node(free).op.api;
    let free_span = analysis.span(free);
    let mut diagnostic = Diagnostic::new(
        &UseAfterFree::INFO,
        first.span.clone(),
        format!(
            "{} uses {object} after {free_api} {verb} it: the handle is dangling",
            first.api
        ),
    )
    .with_label(format!("{object} no longer exists here"))
    .with_related(free_span.clone(), format!("{object} is {verb} here"));
    let mut seen = vec![first.span.clone(), free_span];
    for op in &uses[1..] {
        if !seen.contains(&op.span) {
            seen.push(op.span.clone());
            diagnostic = diagnostic.with_related(op.span.clone(), format!("also used after it is {verb}"));
        }
    }
    // A use written above the free that runs after it: the free is in a loop.
    let in_loop = uses.iter().any(|op| op.span.range.start <= seen[1].range.start);
    let place = if in_loop { " (after the loop)" } else { "" };
    Some(diagnostic.with_help(format!(
        "call {free_api} once, after the last use of {object}{place}, when the work that uses it has synchronized"
    )))
}

fn freed_while_in_use(analysis: &Analysis, free: NodeId, uses: &[NodeId]) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let (object, verb) = naming(analysis, free)?;
    let free_node = exec.node(free);
    let first = exec.node(uses[0]);
    let user = exec.agent_name(first.host);
    let diagnostic = Diagnostic::new(
        &UseAfterFree::INFO,
        analysis.span(free),
        format!(
            "{} on {} can run before {user} is done with {object}: its {} can then use {object} after it is {verb}",
            free_node.op.api,
            exec.agent_name(free_node.agent),
            first.op.api
        ),
    )
    .with_label("nothing orders this after the other thread's use");
    let diagnostic = with_unordered_uses(diagnostic, analysis, uses, |thread| {
        format!("{thread} uses {object} here, possibly after it is {verb}")
    });
    Some(diagnostic.with_help(format!(
        "call {} only after {user} is done with it: wait for work {user} issues after its last use (a synchronize on that stream or event, or a notify), or free it on {user}",
        free_node.op.api
    )))
}
