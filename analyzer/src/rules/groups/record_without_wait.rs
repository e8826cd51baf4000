use super::{GroupTask, group_tasks, of_group, pair_help, quoted};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A GE Record task (`KernelLaunchInfo::CreateHcomRecordTask`) that no Wait task of
    /// the same `group_name` on another stream of the op consumes. A Record whose only
    /// Waits sit on its own stream is reported as SG204 instead. Structural: read from
    /// the op's task list.
    ///
    /// ## Why is this a bug
    /// A Record task exists to release a Wait task on another stream. With none, the
    /// ordering the op author meant to establish is missing: usually the Wait task was
    /// created but not inserted into `tasks`, or it names another group (a typo, or the
    /// default `"group"`), so the attached stream starts communication without waiting
    /// for the main stream. Nothing hangs, hence a warning, but the communication can
    /// read data the compute has not produced yet.
    ///
    /// ## Example
    /// ```text
    /// op MatmulAllReduce attrs(group) {
    ///     KernelLaunchInfo::CreateAicpuKfcTask(context, "libccl_kernel.so", "RunAicpuKfcSrvLaunch", stream_id: 1);
    ///     KernelLaunchInfo::CreateHcomRecordTask(context, "group", stream_id: 0);   // nothing waits for it
    ///     KernelLaunchInfo::LoadFromData(context, "matmul_all_reduce", stream_id: 0);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Insert the matching Wait task first on the stream that must wait (the attached
    /// stream): `KernelLaunchInfo::CreateHcomWaitTask(context, "group", stream_id: 1)`, or
    /// remove the Record if no stream needs it.
    pub struct GroupRecordWithoutWait;
    code = "SG201",
    name = "group-record-without-wait",
    severity = Warning,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for op in &context.program.ge_ops {
        let tasks = group_tasks(op);
        for record in tasks.iter().filter(|t| t.record) {
            let waits: Vec<&GroupTask> = of_group(&tasks, record.group, false).collect();
            if waits.iter().any(|w| w.stream() != record.stream()) {
                continue;
            }
            // A Wait on the Record's own stream that no other stream's Record wakes is
            // SG204's finding, with this Record as its partner.
            let same_stream_pair = waits
                .iter()
                .any(|w| !of_group(&tasks, w.group, true).any(|r| r.stream() != w.stream()));
            if same_stream_pair {
                continue;
            }
            let group = quoted(record.group);
            let stream = record.stream();
            let mut diagnostic = Diagnostic::new(
                &GroupRecordWithoutWait::INFO,
                record.task.span.clone(),
                format!(
                    "the Record task of group {group} on stream {stream} wakes nothing: op {} has no Wait task of group {group} on another stream, so no stream waits for stream {stream} here",
                    op.name
                ),
            )
            .with_label("no Wait task consumes this Record");
            for wait in &waits {
                diagnostic = diagnostic.with_related(
                    wait.task.span.clone(),
                    format!("this Wait on stream {stream} is woken by another stream's Record, not by this one"),
                );
            }
            // Groups waited on but recorded nowhere else: the likely other half of a
            // misnamed pair.
            let waited: Vec<&str> = tasks
                .iter()
                .filter(|w| !w.record && !of_group(&tasks, w.group, true).any(|r| r.stream() != w.stream()))
                .map(|t| t.group)
                .collect();
            diagnostic = match crate::suggest::closest(record.group, waited.iter().copied()) {
                Some(near) => {
                    let wait = tasks
                        .iter()
                        .find(|t| !t.record && t.group == near)
                        .expect("suggested from the waits");
                    diagnostic
                        .with_related(
                            wait.task.span.clone(),
                            format!("this Wait task is for group {}, not {group}", quoted(near)),
                        )
                        .with_help(pair_help(op, record.group, near))
                }
                None => {
                    let attached = op
                        .tasks
                        .iter()
                        .map(|t| t.stream_id)
                        .find(|&s| s != stream)
                        .unwrap_or(if stream == 0 { 1 } else { 0 });
                    diagnostic.with_help(format!(
                        "insert KernelLaunchInfo::CreateHcomWaitTask(context, {group}) at the head of the stream that must wait (e.g. stream {attached}), or remove this Record task"
                    ))
                }
            };
            out.push(diagnostic);
        }
    }
}
