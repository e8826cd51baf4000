use super::{GroupTask, group_tasks, of_group, quoted};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A GE Wait task whose group's Record tasks are all on the Wait's own stream (and
    /// none on another stream). Two cases, named in the message:
    /// - the Wait comes before the Record in the task list: the Record is queued behind
    ///   the Wait it should wake, and can never run;
    /// - the Wait comes after the Record: the pair is pointless, stream order already
    ///   runs the Wait after the Record, and a Record wakes only Wait tasks on *other*
    ///   streams, so nothing wakes this Wait.
    ///
    /// Structural: read from the op's task list (`stream_id` of each task, list order).
    ///
    /// ## Why is this a bug
    /// `CreateHcomRecordTask` "wakes Wait tasks on other streams with the same
    /// group_name"; `CreateHcomWaitTask` blocks its stream until such a Record executes.
    /// On one stream the pair cannot synchronize anything: the stream blocks on the Wait
    /// forever and the op hangs. The usual cause is a forgotten `SetStreamId` on the Wait
    /// task, which leaves it on the default stream 0 next to the Record.
    ///
    /// ## Example
    /// ```text
    /// op MatmulAllReduce attrs(group) {
    ///     KernelLaunchInfo::CreateHcomWaitTask(context, "group");          // stream 0 (default)
    ///     KernelLaunchInfo::CreateHcomRecordTask(context, "group", stream_id: 0);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Put the Wait task on the attached stream (`wait_task.SetStreamId(attached_stream_id)`,
    /// `stream_id: 1` here) and keep the Record task on the op's main stream.
    pub struct GroupRecordWaitSameStream;
    code = "SG204",
    name = "group-record-wait-same-stream",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for op in &context.program.ge_ops {
        let tasks = group_tasks(op);
        for wait in tasks.iter().filter(|t| !t.record) {
            let records: Vec<&GroupTask> = of_group(&tasks, wait.group, true).collect();
            if records.is_empty() || records.iter().any(|r| r.stream() != wait.stream()) {
                continue;
            }
            let stream = wait.stream();
            let group = quoted(wait.group);
            let before = records.iter().any(|r| r.index < wait.index);
            let message = if before {
                format!(
                    "the Record and Wait tasks of group {group} are both on stream {stream}, the Wait after the Record: the pair is pointless (stream order already runs the Wait after the Record) and a Record wakes only Wait tasks on other streams, so stream {stream} blocks on this Wait forever"
                )
            } else {
                format!(
                    "stream {stream} of op {} deadlocks: this Wait task of group {group} comes before its Record task on the same stream, so the Record that would wake it is queued behind it and never runs",
                    op.name
                )
            };
            let mut diagnostic = Diagnostic::new(&GroupRecordWaitSameStream::INFO, wait.task.span.clone(), message)
                .with_label(if before {
                    format!("on stream {stream}, after the Record task")
                } else {
                    format!("blocks stream {stream} before its Record task runs")
                });
            for record in &records {
                let place = if record.index < wait.index { "earlier" } else { "later" };
                diagnostic = diagnostic.with_related(
                    record.task.span.clone(),
                    format!("the Record task of group {group}, {place} on the same stream {stream}"),
                );
            }
            out.push(diagnostic.with_help(
                "give the Wait task and its Record task different streams (SetStreamId): MC2 ops put the Wait on the attached stream and the Record on the op's main stream",
            ));
        }
    }
}
