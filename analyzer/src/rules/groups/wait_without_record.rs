use super::{GroupTask, executed, group_tasks, of_group, pair_help, quoted};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::model::{GeOp, GeTaskKind};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A GE Wait task (`KernelLaunchInfo::CreateHcomWaitTask`) that nothing wakes: the
    /// op's task list has no Record task of its `group_name` on another stream, or every
    /// such Record task is stuck behind another Wait that is never woken (a cycle of
    /// Wait tasks across streams). Structural: the op's streams are simulated in task-list
    /// order to a fixpoint. A group whose only Record tasks are on the Wait's own stream
    /// is SG204.
    ///
    /// ## Why is this a bug
    /// A Wait task blocks its stream until a Record task with the same group name on
    /// another stream executes. With none, the stream never runs again: in an MC2 op the
    /// AI CPU KFC server queued behind the Wait never starts, the AI Core kernel waits for
    /// communication that never comes, and the op hangs until the HCCL execution timeout.
    /// The usual cause is a Record task that was created but never inserted into `tasks`.
    ///
    /// ## Example
    /// ```text
    /// op MoeDistributeCombine attrs(group_ep) {
    ///     KernelLaunchInfo::CreateHcomWaitTask(context, "group_ep", stream_id: 1);  // nothing records group_ep
    ///     KernelLaunchInfo::LoadFromData(context, "moe_distribute_combine", stream_id: 0);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Insert the matching Record task on the op's main stream, before the AI Core task:
    /// `tasks.insert(tasks.begin() + aicore_index, record_task.Serialize())`, i.e.
    /// `KernelLaunchInfo::CreateHcomRecordTask(context, "group_ep", stream_id: 0)`.
    pub struct GroupWaitWithoutRecord;
    code = "SG202",
    name = "group-wait-without-record",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for op in &context.program.ge_ops {
        let tasks = group_tasks(op);
        let done = executed(op);
        for wait in tasks.iter().filter(|t| !t.record) {
            let records: Vec<&GroupTask> = of_group(&tasks, wait.group, true).collect();
            let others: Vec<&GroupTask> = records
                .iter()
                .copied()
                .filter(|r| r.stream() != wait.stream())
                .collect();
            if others.is_empty() && !records.is_empty() {
                // Only on the Wait's own stream: SG204 says why that cannot work.
                continue;
            }
            if others.is_empty() {
                out.push(no_record(op, &tasks, wait));
            } else if !others.iter().any(|r| done[r.index]) && is_first_stuck(op, &done, wait) {
                out.push(records_never_run(op, &done, wait, &others));
            }
        }
    }
}

/// Whether `wait` is where its stream stops (a Wait further back on a stream that
/// already stopped earlier is a consequence, not a second finding).
fn is_first_stuck(op: &GeOp, done: &[bool], wait: &GroupTask) -> bool {
    op.tasks
        .iter()
        .enumerate()
        .find(|(i, t)| t.stream_id == wait.stream() && !done[*i])
        .is_some_and(|(i, _)| i == wait.index)
}

fn no_record(op: &GeOp, tasks: &[GroupTask], wait: &GroupTask) -> Diagnostic {
    let group = quoted(wait.group);
    let mut diagnostic = Diagnostic::new(
        &GroupWaitWithoutRecord::INFO,
        wait.task.span.clone(),
        format!(
            "stream {} of op {} blocks forever: no Record task of group {group} in its task list wakes this Wait task",
            wait.stream(),
            op.name
        ),
    )
    .with_label(format!("waits for a Record task of group {group} that does not exist"));
    // Groups recorded but waited on nowhere else: the likely other half of a misnamed pair.
    let recorded: Vec<&str> = tasks
        .iter()
        .filter(|r| r.record && !of_group(tasks, r.group, false).any(|w| w.stream() != r.stream()))
        .map(|t| t.group)
        .collect();
    match crate::suggest::closest(wait.group, recorded.iter().copied()) {
        Some(near) => {
            let record = tasks
                .iter()
                .find(|t| t.record && t.group == near)
                .expect("suggested from the records");
            diagnostic = diagnostic
                .with_related(
                    record.task.span.clone(),
                    format!("this Record task is for group {}, not {group}", quoted(near)),
                )
                .with_help(pair_help(op, wait.group, near));
        }
        None => {
            let main = op
                .tasks
                .iter()
                .map(|t| t.stream_id)
                .find(|&s| s != wait.stream())
                .unwrap_or(0);
            diagnostic = diagnostic.with_help(format!(
                "insert KernelLaunchInfo::CreateHcomRecordTask(context, {group}) into the task list on the stream that must go first (here stream {main}), e.g. before the AI Core task"
            ));
        }
    }
    diagnostic
}

fn records_never_run(op: &GeOp, done: &[bool], wait: &GroupTask, others: &[&GroupTask]) -> Diagnostic {
    let group = quoted(wait.group);
    let record = others[0];
    // Where the record's stream stops: the first task of that stream that never runs.
    let stuck = op
        .tasks
        .iter()
        .enumerate()
        .find(|(i, t)| t.stream_id == record.stream() && !done[*i])
        .map(|(_, t)| t)
        .expect("the record never runs, so its stream stops at or before it");
    let blocker = match &stuck.kind {
        GeTaskKind::HcomWait { group, .. } => format!("a Wait task of group {}", quoted(group)),
        _ => "a task".to_string(),
    };
    let mut diagnostic = Diagnostic::new(
        &GroupWaitWithoutRecord::INFO,
        wait.task.span.clone(),
        format!(
            "stream {} of op {} blocks forever: the Record task of group {group} on stream {} never runs, because stream {} is itself blocked at {blocker}",
            wait.stream(),
            op.name,
            record.stream(),
            record.stream()
        ),
    )
    .with_label(format!("waits for the Record task of group {group}"));
    for other in others {
        diagnostic = diagnostic.with_related(
            other.task.span.clone(),
            "the Record task that would wake it, never reached",
        );
    }
    diagnostic
        .with_related(stuck.span.clone(), format!("stream {} stops here", record.stream()))
        .with_help("the streams wait for each other: on one of them, put the Record task before the Wait task, so that it runs without waiting for the other stream")
}
