use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, InstId, NodeId};
use crate::model::{EventCreator, EventInfo, ObjId, ObjectKind, Target};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// More live events, streams or ACL notifies on one rank than its device supports:
    /// at some point of an execution, the number of instances created and not yet
    /// destroyed exceeds the per-device limit of the `target` product (CANN runtime
    /// docs):
    ///
    /// - events (`aclrtCreateEvent`, and `aclrtCreateEventWithFlag` with
    ///   `ACL_EVENT_SYNC` or `ACL_EVENT_EXTERNAL`): 65536 on A2, A3 and 950, 1023 on
    ///   310P;
    /// - streams (the default stream included): 1984 on A2, A3 and 950, 1024 on 310P;
    /// - ACL notifies (`aclrtCreateNotify`): 8192 on A2 and A3, 65535 on 950, 1024 on
    ///   310P.
    ///
    /// Events from `aclrtCreateEventExWithFlag` are not hardware-limited, and CUDA
    /// events and HCCL threads are not counted.
    ///
    /// ## Why is this a bug
    /// Past the limit, `aclrtCreateStream` and `aclrtCreateNotify` fail, and an event
    /// record blocks waiting for a free event: the job stalls or dies, typically after
    /// hours, when a per-step creation without a destroy has piled up (LMCache-Ascend
    /// PR #146: the 1023-event limit of Atlas 310P exhausted, ~0.2 tokens/s).
    ///
    /// ## Example
    /// ```text
    /// target "310P";
    /// for step in 0..2048 {
    ///     let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);   // never destroyed
    ///     aclrtRecordEvent(ev, s1);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Destroy each object after its last use, or create a fixed pool before the loop
    /// and reuse it.
    ///
    /// Method: each concrete execution is walked in host issue order, counting live
    /// instances per rank. Parameters count at the values the analysis runs: small
    /// domains are enumerated, larger ones contribute their three smallest values, so a
    /// loop whose bound is a parameter is checked at those values only, and a limit
    /// reached only at larger values is not reported.
    pub struct LimitExceeded;
    code = "SG110",
    name = "event-limit-exceeded",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// A per-device resource with a documented limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Resource {
    Event,
    Stream,
    Notify,
}

impl Resource {
    /// Whether an event of this creator and flags counts against the event limit.
    pub(super) fn counts(self, info: &EventInfo) -> bool {
        const LIMITED_FLAGS: u32 = crate::api::ACL_EVENT_SYNC | 0x20; // ACL_EVENT_EXTERNAL
        match info.creator {
            EventCreator::AclCreateEvent => true,
            EventCreator::AclWithFlag => info.flags & LIMITED_FLAGS != 0,
            // An event from before has unknown flags: not counted, so never a false alarm.
            EventCreator::AclExWithFlag | EventCreator::Cuda | EventCreator::Existing | EventCreator::IpcOpen => false,
        }
    }

    fn of(kind: &ObjectKind) -> Option<Resource> {
        match kind {
            ObjectKind::Event(info) => Resource::Event.counts(info).then_some(Resource::Event),
            ObjectKind::Stream(_) => Some(Resource::Stream),
            ObjectKind::Notify => Some(Resource::Notify),
            _ => None,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Resource::Event => "events",
            Resource::Stream => "streams",
            Resource::Notify => "notifies",
        }
    }
}

/// The most live instances of `resource` one device of `target` supports.
pub(super) fn limit(resource: Resource, target: Target) -> usize {
    match (resource, target) {
        (Resource::Event, Target::Ascend310P) => 1023,
        (Resource::Event, _) => 65536,
        (Resource::Stream, Target::Ascend310P) => 1024,
        (Resource::Stream, _) => 1984,
        (Resource::Notify, Target::Ascend310P) => 1024,
        (Resource::Notify, Target::Ascend950) => 65535,
        (Resource::Notify, Target::A2 | Target::A3) => 8192,
    }
}

/// "an A3 device", "a 310P device".
pub(super) fn device(target: Target) -> String {
    let name = target.name();
    let article = if name.starts_with('A') { "an" } else { "a" };
    format!("{article} {name} device")
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let target = exec.program.settings.target;
    // Live instances per (rank, resource), and per (rank, object) for the message.
    let mut live: HashMap<(u32, Resource), usize> = HashMap::new();
    let mut live_of: HashMap<(u32, ObjId), usize> = HashMap::new();
    let mut reported: Vec<Resource> = Vec::new();
    let resource_of = |inst: InstId| Resource::of(&exec.program.object(exec.instance(inst).obj).kind);
    for instance in &exec.instances {
        // Objects that exist without a creation: the default stream of each rank.
        if instance.created.is_none()
            && let Some(resource) = Resource::of(&exec.program.object(instance.obj).kind)
        {
            *live.entry((instance.rank, resource)).or_default() += 1;
        }
    }
    for (index, node) in exec.nodes.iter().enumerate() {
        let rank = node.rank(exec);
        match node.action {
            Action::Create(inst) => {
                let Some(resource) = resource_of(inst) else {
                    continue;
                };
                let obj = exec.instance(inst).obj;
                let count = live.entry((rank, resource)).or_default();
                *count += 1;
                let count = *count;
                let from_here = live_of.entry((rank, obj)).or_default();
                *from_here += 1;
                let from_here = *from_here;
                if count > limit(resource, target) && !reported.contains(&resource) {
                    reported.push(resource);
                    out.push(exceeded(
                        analysis,
                        NodeId(index as u32),
                        obj,
                        resource,
                        count,
                        from_here,
                    ));
                }
            }
            Action::Destroy(inst) => {
                let Some(resource) = resource_of(inst) else {
                    continue;
                };
                let obj = exec.instance(inst).obj;
                if let Some(count) = live.get_mut(&(rank, resource)) {
                    *count = count.saturating_sub(1);
                }
                if let Some(count) = live_of.get_mut(&(rank, obj)) {
                    *count = count.saturating_sub(1);
                }
            }
            _ => {}
        }
    }
}

fn exceeded(
    analysis: &Analysis,
    node: NodeId,
    obj: ObjId,
    resource: Resource,
    count: usize,
    from_here: usize,
) -> Diagnostic {
    let exec = analysis.exec;
    let target = exec.program.settings.target;
    let noun = resource.noun();
    let limit = limit(resource, target);
    let on_rank = if exec.ranks > 1 {
        format!(" on rank {}", exec.node(node).rank(exec))
    } else {
        String::new()
    };
    let consequence = match resource {
        Resource::Event => "the creation fails, or a record blocks waiting for a free event",
        Resource::Stream => "the stream creation fails",
        Resource::Notify => "the notify creation fails",
    };
    let name = &exec.program.object(obj).shown();
    Diagnostic::new(
        &LimitExceeded::INFO,
        analysis.span(node),
        format!(
            "{count} {noun} are live at once{on_rank} here, more than the {limit} {} supports: {consequence}",
            device(target)
        ),
    )
    .with_label(format!(
        "{from_here} of them were created here as {name} and not yet destroyed"
    ))
    .with_help(format!(
        "destroy {noun} after their last use, or create a fixed pool before the loop and reuse it"
    ))
}
