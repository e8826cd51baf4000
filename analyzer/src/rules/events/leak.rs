use std::collections::BTreeMap;

use super::limit_exceeded::{Resource, device, limit};
use super::spelled;
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::NodeId;
use crate::model::{ObjId, ObjectKind};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// An event that is created and never destroyed (`aclrtDestroyEvent`,
    /// `acl.rt.destroy_event`, `cudaEventDestroy`) on some path. An event created in a
    /// loop and never destroyed leaks once per iteration; the message says how many
    /// events one run leaks.
    ///
    /// ## Why is this a bug
    /// Each event holds a runtime resource until it is destroyed, and sync-kind events
    /// count against a per-device limit (65536 on Atlas A2/A3 and Ascend 950, 1023 on
    /// Atlas 310P). A long-running job that creates an event per step and never
    /// destroys it exhausts the limit: creation fails, or a record blocks waiting for a
    /// free event, and throughput collapses (LMCache-Ascend PR #146).
    ///
    /// ## Example
    /// ```text
    /// for batch in 0..8 {
    ///     let ev = acl.rt.create_event_with_flag(ACL_EVENT_SYNC);
    ///     acl.rt.record_event(ev, 0);
    ///     acl.rt.stream_wait_event(s1, ev);
    ///     acl.rt.reset_event(ev, s1);
    ///     // missing: acl.rt.destroy_event(ev);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Destroy each event after its last use (inside the loop, once the stream that
    /// uses it has synchronized), or create one event before the loop and reuse it
    /// (resetting it after each wait).
    ///
    /// Method: each concrete execution's event instances (one per creation) are
    /// checked for a destroy; a run cut short at the node limit is not checked, nor an
    /// event from before (`existing_event()`), which code not shown owns.
    pub struct EventLeak;
    code = "SG107",
    name = "event-leak",
    severity = Warning,
    check = crate::rules::Check::Execution(check),
}

/// Per rank: events created by one `let`, how many leak, and the first creation.
#[derive(Default)]
struct Count {
    created: usize,
    leaked: usize,
    first: Option<NodeId>,
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    if exec.truncated() {
        return;
    }
    let mut counts: BTreeMap<ObjId, BTreeMap<u32, Count>> = BTreeMap::new();
    for (index, instance) in exec.instances.iter().enumerate() {
        let (Some(created), ObjectKind::Event(_)) = (instance.created, &exec.program.object(instance.obj).kind) else {
            continue;
        };
        // An event from before is owned by code the program does not show.
        if exec.existed_before(crate::exec::InstId(index as u32)) {
            continue;
        }
        let count = counts
            .entry(instance.obj)
            .or_default()
            .entry(instance.rank)
            .or_default();
        count.created += 1;
        count.first.get_or_insert(created);
        if instance.destroyed.is_none() {
            count.leaked += 1;
        }
    }
    for (obj, ranks) in counts {
        let leaking: Vec<(&u32, &Count)> = ranks.iter().filter(|(_, c)| c.leaked > 0).collect();
        let Some(&(&rank, worst)) = leaking
            .iter()
            .max_by_key(|(rank, c)| (c.leaked, std::cmp::Reverse(**rank)))
        else {
            continue;
        };
        let Some(first) = worst.first else {
            continue;
        };
        let object = exec.program.object(obj);
        let name = object.shown();
        // Every rank of the program, not only those that create it (`if rank == 0`).
        let uniform = leaking.len() == exec.ranks as usize && leaking.iter().all(|(_, c)| c.leaked == worst.leaked);
        let on_rank = match (exec.ranks > 1, uniform) {
            (false, _) => String::new(),
            (true, true) => " (on every rank)".to_string(),
            (true, false) => format!(" (on rank {rank})"),
        };
        let message = if worst.created == 1 {
            format!("event {name} is created and never destroyed{on_rank}: its event resource leaks")
        } else if worst.leaked == worst.created {
            format!(
                "event {name} leaks {} times{on_rank}: this creation runs once per loop iteration and none of the {} events is destroyed",
                worst.leaked, worst.created
            )
        } else {
            format!(
                "{} of the {} events created here as {name} are never destroyed{on_rank}",
                worst.leaked, worst.created
            )
        };
        let limited = match &object.kind {
            ObjectKind::Event(info) => Resource::Event.counts(info),
            _ => false,
        };
        let holder = if worst.leaked == 1 {
            "the event holds"
        } else {
            "each leaked event holds"
        };
        let label = if limited {
            let target = exec.program.settings.target;
            format!(
                "{holder} one of the {} events {} supports until the process exits",
                limit(Resource::Event, target),
                device(target)
            )
        } else {
            format!("{holder} its runtime resource until the process exits")
        };
        let destroy = spelled(exec.program, obj, "aclrtDestroyEvent");
        let help = if worst.created > 1 {
            format!(
                "call {destroy}({name}) inside the loop after its last use (once the stream that uses it has synchronized), or create one event before the loop and reuse it"
            )
        } else {
            format!("call {destroy}({name}) after its last use")
        };
        out.push(
            Diagnostic::new(&EventLeak::INFO, analysis.span(first), message)
                .with_label(label)
                .with_help(help),
        );
    }
}
