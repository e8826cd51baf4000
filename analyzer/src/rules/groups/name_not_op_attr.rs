use super::{group_tasks, quoted};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A GE `KernelLaunchInfo::CreateHcomRecordTask` or `CreateHcomWaitTask` whose
    /// `group_name` is not an attribute of the op prototype (`op Name attrs(...)`).
    /// `group_name` defaults to `"group"` when it is left out, so the default counts too.
    /// Structural: read from the op's task list, no execution needed.
    ///
    /// ## Why is this a bug
    /// The documented constraint of both APIs is that `group_name` names an attribute of
    /// the op prototype: the attribute carries the HCCL communication domain the Record
    /// and Wait tasks are bound to. A name that is no attribute binds them to no domain
    /// of this op: task generation fails, or the Wait waits on a group nothing of this
    /// op records and the op hangs. The usual slip is leaving the default `"group"` in an
    /// op whose domains are `group_ep` / `group_tp` (MoE MC2 ops).
    ///
    /// ## Example
    /// ```text
    /// op MoeDistributeDispatch attrs(group_ep, ep_world_size, group_tp) {
    ///     KernelLaunchInfo::CreateHcomWaitTask(context, stream_id: 1);   // "group": no such attr
    ///     KernelLaunchInfo::CreateHcomRecordTask(context, stream_id: 0);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Pass the attribute that names the communication domain:
    /// `CreateHcomWaitTask(context, "group_ep")`, and the same name to the Record task.
    pub struct GroupNameNotOpAttr;
    code = "SG203",
    name = "group-name-not-op-attr",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for op in &context.program.ge_ops {
        let attrs: Vec<&str> = op.attrs.iter().map(|(name, _)| name.as_str()).collect();
        for task in group_tasks(op) {
            if attrs.contains(&task.group) {
                continue;
            }
            let kind = if task.record { "Record" } else { "Wait" };
            let defaulted = task.group_span == &task.task.span;
            let written = if defaulted {
                format!("its group_name defaults to {}", quoted(task.group))
            } else {
                format!("its group_name is {}", quoted(task.group))
            };
            let declared = if attrs.is_empty() {
                "and the op declares no attributes"
            } else {
                "which is not an attribute of the op"
            };
            let mut diagnostic = Diagnostic::new(
                &GroupNameNotOpAttr::INFO,
                task.group_span.clone(),
                format!(
                    "the {kind} task on stream {} is bound to none of op {}'s communication domains: {written}, {declared}",
                    task.stream(),
                    op.name
                ),
            )
            .with_label(format!("{} is not an attribute of {}", quoted(task.group), op.name));
            let suggestion = crate::suggest::closest(task.group, attrs.iter().copied())
                .or_else(|| attrs.iter().copied().find(|a| a.starts_with("group")));
            diagnostic = match suggestion {
                Some(attr) => {
                    let (_, span) = op.attrs.iter().find(|(name, _)| name == attr).expect("suggested from attrs");
                    diagnostic
                        .with_related(span.clone(), format!("the op's attribute `{attr}`"))
                        .with_help(format!(
                            "did you mean {}? pass it as group_name, to the Record and the Wait task alike",
                            quoted(attr)
                        ))
                }
                None => diagnostic.with_help(format!(
                    "pass the op attribute that names the communication domain as group_name, or declare `{}` in the op prototype (attrs({}))",
                    task.group, task.group
                )),
            };
            out.push(diagnostic);
        }
    }
}
