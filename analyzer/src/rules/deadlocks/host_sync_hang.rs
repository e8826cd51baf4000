use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A host synchronize (`aclrtSynchronizeStream`, `aclrtSynchronizeEvent`,
    /// `aclrtSynchronizeDevice`, `HcommThreadSynchronize`, CUDA's equivalents) that
    /// waits for device work that can never complete, because that work is stuck behind
    /// a deadlock or a wait nothing satisfies.
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
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        if !matches!(
            node.action,
            Action::AgentSync { .. } | Action::DeviceSync { .. } | Action::EventSync(_)
        ) {
            continue;
        }
        let waits_for = hb.waited_for(id);
        // The host is stuck here only if it got here: everything before it on the
        // host thread ran.
        let reached = node.issued_after.is_none_or(|before| hb.executes(before));
        if hb.executes(id) || !reached {
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
                format!("{} is stuck here", exec.agent_name(exec.node(root).agent)),
            )
            .with_help("fix the stuck wait; this synchronize is where the hang becomes visible"),
        );
    }
}
