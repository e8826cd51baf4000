use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::model::ObjectKind;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `aclrtFree` / `aclrtFreeHost` of a buffer, or `aclrtDestroyStreamForce` of a
    /// stream, while device work that uses it may still be queued: a kernel, copy or
    /// transfer issued before the free that nothing (a synchronize, an event or notify
    /// the host waits on) has shown to be done.
    ///
    /// ## Why is this a bug
    /// These calls release at once: the ACL documentation says `aclrtFree` "does not
    /// perform implicit device synchronization or stream synchronization or wait until
    /// the tasks that use the memory are complete". The queued kernel then reads or
    /// writes memory that may already belong to another allocation (corrupting it, or
    /// faulting), and a force-destroyed stream's queued work is dropped. It depends on
    /// timing, so it passes in testing and fails under load.
    ///
    /// ## Example
    /// ```text
    /// kernel(s, "step", writes: [x]);
    /// aclrtFree(x);                 // the kernel may not have run yet
    /// aclrtSynchronizeStream(s);
    /// ```
    ///
    /// ## Fix
    /// Synchronize the stream (or an event recorded after the last use) before the
    /// free, or free with `aclrtFreeWithDevSync` / destroy with `aclrtDestroyStream`,
    /// which wait for the work. CUDA's `cudaFree` and `cudaStreamDestroy` wait too.
    ///
    /// Method: per concrete execution, device work that uses the object, is issued
    /// before the release, and does not happen before it.
    pub struct ReleaseWhilePending;
    code = "SG604",
    name = "free-while-pending",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let mut pending: BTreeMap<NodeId, Vec<NodeId>> = BTreeMap::new();
    for found in analysis.hb.pending_at_releases() {
        pending.entry(found.release).or_default().push(found.node);
    }
    for (release, work) in pending {
        out.extend(released_while_pending(analysis, release, &work));
    }
}

fn released_while_pending(analysis: &Analysis, release: NodeId, work: &[NodeId]) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let Action::Destroy(inst) = exec.node(release).action else {
        return None;
    };
    let kind = &exec.program.object(exec.instance(inst).obj).kind;
    let object = format!("{} {}", kind.noun(), exec.instance_name(inst));
    let api = exec.node(release).op.api;
    let first = analysis.describe(work[0]);
    let (consequence, waiting) = if matches!(kind, ObjectKind::Buffer(_)) {
        ("it then touches freed memory", "aclrtFreeWithDevSync")
    } else {
        ("that work is dropped", "aclrtDestroyStream")
    };
    let queue = exec.agent_name(exec.node(work[0]).agent);
    let mut diagnostic = Diagnostic::new(
        &ReleaseWhilePending::INFO,
        analysis.span(release),
        format!("{api} releases {object} while {first} may still be queued: {consequence}"),
    )
    .with_label(format!("releases {object} at once, without waiting for the device"));
    let mut seen = vec![analysis.span(release)];
    for &node in work {
        let span = analysis.span(node);
        if !seen.contains(&span) {
            seen.push(span.clone());
            diagnostic = diagnostic.with_related(
                span,
                format!("{} is not known to be done here", analysis.describe(node)),
            );
        }
    }
    diagnostic = diagnostic.with_help(format!(
        "synchronize {queue} (or an event recorded after this work) before {api}, or use {waiting}, which waits for the work"
    ));
    // One queue holds all the work: synchronizing it is the whole fix.
    let agent = exec.node(work[0]).agent;
    if work.iter().all(|&node| exec.node(node).agent == agent)
        && let Some(fix) = crate::rules::synchronize_before(exec, agent, analysis.span(release))
    {
        diagnostic = diagnostic.with_fix(fix);
    }
    Some(diagnostic)
}
