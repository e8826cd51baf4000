//! SG2xx: GE group Record/Wait tasks in gen-task lists.
//!
//! These rules read one GE op's serialized task list (`Program::ge_ops`) and need no
//! concrete execution: within one op, tasks on one stream run in list order, and a Wait
//! task blocks its stream until a Record task with the same `group_name` on another
//! stream has executed (a Record wakes every such Wait; nothing is consumed).

pub mod name_not_op_attr;
pub mod record_wait_same_stream;
pub mod record_without_wait;
pub mod wait_without_record;

use crate::model::{GeOp, GeTask, GeTaskKind};
use crate::source::Span;

/// A Record or Wait task of an op, with its position in the task list.
#[derive(Clone, Copy)]
struct GroupTask<'p> {
    /// Index in `GeOp::tasks`.
    index: usize,
    task: &'p GeTask,
    group: &'p str,
    group_span: &'p Span,
    record: bool,
}

impl GroupTask<'_> {
    fn stream(&self) -> u32 {
        self.task.stream_id
    }
}

/// The op's Record and Wait tasks, in task-list order.
fn group_tasks(op: &GeOp) -> Vec<GroupTask<'_>> {
    op.tasks
        .iter()
        .enumerate()
        .filter_map(|(index, task)| match &task.kind {
            GeTaskKind::HcomRecord { group, group_span } => Some(GroupTask {
                index,
                task,
                group,
                group_span,
                record: true,
            }),
            GeTaskKind::HcomWait { group, group_span } => Some(GroupTask {
                index,
                task,
                group,
                group_span,
                record: false,
            }),
            _ => None,
        })
        .collect()
}

/// The Record tasks of `group` (`record: true`) or its Wait tasks (`record: false`).
fn of_group<'a, 'p>(
    tasks: &'a [GroupTask<'p>],
    group: &'a str,
    record: bool,
) -> impl Iterator<Item = &'a GroupTask<'p>> {
    tasks.iter().filter(move |t| t.record == record && t.group == group)
}

/// Which tasks of `op` ever run (by task index). Each stream runs its tasks in list
/// order; a Wait task completes once a Record task of its group on another stream has
/// run. Iterated to a fixpoint, so the tasks that never run are exactly those stuck at
/// or behind a Wait nothing can wake.
fn executed(op: &GeOp) -> Vec<bool> {
    let mut streams: Vec<u32> = op.tasks.iter().map(|t| t.stream_id).collect();
    streams.sort_unstable();
    streams.dedup();
    let queues: Vec<Vec<usize>> = streams
        .iter()
        .map(|&s| (0..op.tasks.len()).filter(|&i| op.tasks[i].stream_id == s).collect())
        .collect();
    let mut heads = vec![0usize; queues.len()];
    let mut done = vec![false; op.tasks.len()];
    loop {
        let mut progress = false;
        for (queue, head) in queues.iter().zip(heads.iter_mut()) {
            while let Some(&index) = queue.get(*head) {
                let task = &op.tasks[index];
                if let GeTaskKind::HcomWait { group, .. } = &task.kind {
                    let woken = op.tasks.iter().enumerate().any(|(i, other)| {
                        done[i]
                            && other.stream_id != task.stream_id
                            && matches!(&other.kind, GeTaskKind::HcomRecord { group: g, .. } if g == group)
                    });
                    if !woken {
                        break;
                    }
                }
                done[index] = true;
                *head += 1;
                progress = true;
            }
        }
        if !progress {
            return done;
        }
    }
}

/// `"group_ep"` as written in messages.
fn quoted(group: &str) -> String {
    format!("\"{group}\"")
}

/// How to reunite a Wait and a Record whose group names differ: prefer the name that
/// is an attribute of the op (SG203 holds the other one to be wrong).
fn pair_help(op: &GeOp, ours: &str, theirs: &str) -> String {
    let is_attr = |name: &str| op.attrs.iter().any(|(attr, _)| attr == name);
    match (is_attr(ours), is_attr(theirs)) {
        (true, false) => format!("name both tasks {}", quoted(ours)),
        (false, true) => format!("name both tasks {}, the op's attribute", quoted(theirs)),
        _ => format!(
            "use one group name for the pair: {} or {}",
            quoted(theirs),
            quoted(ours)
        ),
    }
}
