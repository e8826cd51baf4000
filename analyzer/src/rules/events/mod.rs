//! SG1xx: ACL and CUDA events.

pub mod elapsed_time_misuse;
pub mod leak;
pub mod limit_exceeded;
pub mod missing_reset;
pub mod record_overwritten;
pub mod reset_before_all_waits;
pub mod reset_unsupported;
pub mod use_after_destroy;
pub mod use_before_create;
pub mod wait_never_recorded;
pub mod wait_on_recording_stream;

use crate::exec::{Action, Execution, NodeId};
use crate::hb::EventCycle;
use crate::model::{ObjId, OpKind, Program, Stmt};

/// The calls that observed `cycle.records[i - 1]` before `cycle.records[i]` was issued:
/// stream waits bound to the cycle (for the first record, also those issued before it,
/// which a sync-kind event binds to its next record) and host `aclrtSynchronizeEvent`s.
pub(super) fn observers(exec: &Execution, cycle: &EventCycle, i: usize) -> Vec<NodeId> {
    let (Some(event), Some(&next)) = (cycle.event, cycle.records.get(i)) else {
        return Vec::new();
    };
    let previous = cycle.records[i - 1];
    let after_previous = |node: NodeId| i == 1 || node > previous;
    let mut found: Vec<NodeId> = cycle
        .waits
        .iter()
        .copied()
        .filter(|&wait| wait < next && after_previous(wait))
        .collect();
    found.extend(
        (previous.index() + 1..next.index())
            .map(|index| NodeId(index as u32))
            .filter(|&node| exec.node(node).action == Action::EventSync(event)),
    );
    found.sort();
    found
}

/// `api` (a C ACL name) as the family that created `event` spells it: pyACL
/// (`acl.rt.reset_event`), CUDA (`cudaEventDestroy`) or C ACL.
pub(crate) fn spelled(program: &Program, event: ObjId, api: &'static str) -> &'static str {
    const NAMES: [(&str, &str, &str); 4] = [
        ("aclrtResetEvent", "acl.rt.reset_event", "aclrtResetEvent"),
        ("aclrtDestroyEvent", "acl.rt.destroy_event", "cudaEventDestroy"),
        (
            "aclrtStreamWaitEvent",
            "acl.rt.stream_wait_event",
            "cudaStreamWaitEvent",
        ),
        (
            "aclrtSynchronizeStream",
            "acl.rt.synchronize_stream",
            "cudaStreamSynchronize",
        ),
    ];
    let family = |creator: &str| creator.starts_with("acl") || creator.starts_with("cuda");
    // An object from before the trace (`existing_event()`) is spelled as the program's
    // other objects were made (a CUDA profile's streams from before are created by
    // `cudaStreamCreate` at its start): a CUDA program's events by CUDA's names.
    let made_first = || {
        program
            .threads
            .first()?
            .body
            .iter()
            .take(64)
            .find_map(|stmt| match stmt {
                Stmt::Op(op) if matches!(op.kind, OpKind::Create(_)) && family(op.api) => Some(op.api),
                _ => None,
            })
    };
    let creator = Some(program.object(event))
        .into_iter()
        .chain(&program.objects)
        .find_map(|object| object.created_by.as_deref().filter(|creator| family(creator)))
        .or_else(made_first)
        .unwrap_or("");
    let Some(&(_, pyacl, cuda)) = NAMES.iter().find(|(c, _, _)| *c == api) else {
        return api;
    };
    if creator.starts_with("acl.rt.") {
        pyacl
    } else if creator.starts_with("cuda") {
        cuda
    } else {
        api
    }
}

/// How the code names the stream `agent` runs: its variable, or the default stream as
/// the event's API family writes it (`NULL`, pyACL `0`).
pub(super) fn stream_arg(exec: &Execution, agent: crate::exec::AgentId, event: ObjId) -> String {
    match exec.agent(agent).kind {
        crate::exec::AgentKind::Stream(inst) | crate::exec::AgentKind::HcclThread(inst) => {
            let obj = exec.instance(inst).obj;
            if obj != Program::DEFAULT_STREAM {
                return exec.program.object(obj).shown().to_string();
            }
            let creator = exec.program.object(event).created_by.as_deref().unwrap_or("");
            if creator.starts_with("acl.rt.") { "0" } else { "NULL" }.to_string()
        }
        crate::exec::AgentKind::Host(_) => "stream".to_string(),
    }
}
