use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::model::{CannPolicy, EventCreator, EventInfo, Object, ObjectKind, Op, OpKind, Program};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `aclrtResetEvent` (`acl.rt.reset_event`) on an event whose creator does not
    /// allow it, per the program's `cann` policy:
    /// - `aclrtCreateEventExWithFlag` events (capture kind): the reset is rejected with
    ///   an error return, whatever the CANN version;
    /// - `aclrtCreateEventWithFlag` without `ACL_EVENT_SYNC`: not allowed, except for
    ///   `ACL_EVENT_EXTERNAL` events, which CANN makes for updating a captured model
    ///   runtime instance (a wait and a reset captured with `aclmdlRICaptureBegin`): the
    ///   runtime resets them, in a capture and outside one;
    /// - `aclrtCreateEvent` events under `cann current;` (the default): the current
    ///   runtime docs allow resetting only `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)`
    ///   events and call anything else undefined behaviour. Under `cann legacy;` (CANN
    ///   <= 7.0, whose docs show `aclrtCreateEvent -> record -> wait -> reset`) these
    ///   are accepted;
    /// - CUDA events: CUDA has no reset; a record simply overwrites.
    ///
    /// ## Why is this a bug
    /// A reset the runtime does not support either fails (the call returns an error
    /// and the event stays recorded, so the next wait passes at once) or has undefined
    /// behaviour: PaddleCustomDevice #808 hung after switching an `aclrtCreateEvent`
    /// pool from destroy to reset.
    ///
    /// ## Example
    /// ```text
    /// cann current;
    /// let ev = aclrtCreateEvent();
    /// aclrtRecordEvent(ev, s1);
    /// aclrtStreamWaitEvent(s2, ev);
    /// aclrtResetEvent(ev, s2);      // undefined for aclrtCreateEvent events
    /// ```
    ///
    /// ## Fix
    /// Create events that are reset with `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)`;
    /// for capture-kind and CUDA events drop the reset (a new record replaces the old
    /// one). If the code targets CANN <= 7.0 only, declare `cann legacy;`.
    ///
    /// Method: structural, on every `aclrtResetEvent` in the program text (whether or
    /// not a run reaches it).
    pub struct ResetUnsupported;
    code = "SG108",
    name = "event-reset-unsupported",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let program = context.program;
    for thread in &program.threads {
        crate::model::for_each_op(&thread.body, &mut |op| {
            if let OpKind::EventReset { event, .. } = op.kind
                && let ObjectKind::Event(info) = &program.object(event).kind
                && let Some(diagnostic) = unsupported(program, op, program.object(event), info)
            {
                out.push(diagnostic);
            }
        });
    }
}

fn unsupported(program: &Program, op: &Op, event: &Object, info: &EventInfo) -> Option<Diagnostic> {
    let name = &event.name;
    let creator = event.created_by.as_deref().unwrap_or("its creator");
    let pyacl = creator.starts_with("acl.rt.");
    let with_sync = if pyacl {
        "acl.rt.create_event_with_flag(ACL_EVENT_SYNC)"
    } else {
        "aclrtCreateEventWithFlag(ACL_EVENT_SYNC)"
    };
    let (message, label, help) = match info.creator {
        EventCreator::AclWithFlag if info.flags & crate::api::ACL_EVENT_SYNC != 0 => return None,
        EventCreator::AclWithFlag if info.flags & crate::api::ACL_EVENT_EXTERNAL != 0 => return None,
        EventCreator::AclCreateEvent if program.settings.cann == CannPolicy::Legacy => return None,
        // Its flags are unknown: it may well be an ACL_EVENT_SYNC event.
        EventCreator::Existing => return None,
        EventCreator::AclCreateEvent => (
            format!(
                "resetting event {name} is undefined behaviour: the current CANN docs allow {} only on {with_sync} events, and {name} comes from {creator}",
                op.api
            ),
            format!("undefined behaviour for {creator} events under `cann current`"),
            format!("create {name} with {with_sync}; or, if the code only targets CANN <= 7.0, declare `cann legacy;`"),
        ),
        EventCreator::AclWithFlag => (
            format!(
                "{} does not accept event {name}: it was created without ACL_EVENT_SYNC, and only ACL_EVENT_SYNC events may be reset",
                op.api
            ),
            "only ACL_EVENT_SYNC events may be reset".to_string(),
            format!("add ACL_EVENT_SYNC to the flags of {creator}"),
        ),
        EventCreator::AclExWithFlag | EventCreator::IpcOpen => (
            format!(
                "{} returns an error for event {name}: events from {creator} cannot be reset, and {name} stays recorded",
                op.api
            ),
            "rejected for capture-kind events".to_string(),
            "remove the reset: recording a capture-kind event again replaces what it captured".to_string(),
        ),
        EventCreator::Cuda => (
            format!(
                "event {name} is a CUDA event, which has no reset: {} cannot be applied to it",
                op.api
            ),
            "CUDA events cannot be reset".to_string(),
            "remove the reset: cudaEventRecord replaces what the event captured".to_string(),
        ),
    };
    Some(
        Diagnostic::new(&ResetUnsupported::INFO, op.span.clone(), message)
            .with_label(label)
            .with_related(event.span.clone(), format!("{name} is created here by {creator}"))
            .with_help(help),
    )
}
