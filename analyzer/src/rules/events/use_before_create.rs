use std::collections::HashSet;

use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, UsedBeforeCreation};
use crate::exec::{Action, NodeId};
use crate::model::ObjectKind;
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A record, wait, reset, query, synchronize or destroy on an event before the
    /// call that creates it: in a `.sync` file, a name used above its
    /// `let ev = aclrtCreateEvent...();` in the same block or an enclosing one (a
    /// `thread` block included, when the spawning code creates the event only after
    /// the block); in a trace, a call on an event handle no creation has returned yet.
    ///
    /// ## Why is this a bug
    /// Before `aclrtCreateEvent` fills it in, the `aclrtEvent` variable is an
    /// uninitialised (or stale) handle. The runtime rejects the call with an
    /// invalid-handle error, or acts on whatever event the stale value names; either
    /// way the record or wait the code relies on does not happen, and the streams it
    /// was meant to order race or hang.
    ///
    /// ## Example
    /// ```text
    /// let s1 = aclrtCreateStream();
    /// aclrtRecordEvent(ev, s1);                            // ev does not exist yet
    /// let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
    /// ```
    ///
    /// ## Fix
    /// Create the event before its first use: move the `let` (the
    /// `aclrtCreateEvent*` call) above every call that names the event, and outside
    /// the `thread` block or loop that uses it if both need it.
    ///
    /// Method: `.sync` files are checked while names are resolved (a name not yet
    /// declared is looked up among the later `let`s of its block and the enclosing
    /// ones); traces are checked on each concrete execution, in host issue order.
    /// Other kinds of objects used before their `let` are reported as SG003.
    pub struct UseBeforeCreate;
    code = "SG101",
    name = "event-use-before-create",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// The finding for an event a frontend saw named before its creation.
pub(crate) fn before_creation(used: &UsedBeforeCreation) -> Diagnostic {
    let name = &used.name;
    Diagnostic::new(
        &UseBeforeCreate::INFO,
        used.use_span.clone(),
        format!("event `{name}` is used before it is created: the call gets an uninitialised handle"),
    )
    .with_label(format!("`{name}` does not exist yet at this point"))
    .with_related(
        used.create_span.clone(),
        format!("`{name}` is created only here, later"),
    )
    .with_help(used.help.clone().unwrap_or_else(|| {
        format!(
            "move `let {name} = {}(...);` above the first call that uses `{name}`",
            used.api
        )
    }))
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let mut reported: HashSet<Span> = HashSet::new();
    for bad in &exec.bad_uses {
        if bad.destroyed_by.is_some() || !matches!(exec.program.object(bad.obj).kind, ObjectKind::Event(_)) {
            continue;
        }
        if !reported.insert(bad.op.span.clone()) {
            continue;
        }
        let name = &exec.program.object(bad.obj).shown();
        let on_rank = if exec.ranks > 1 {
            format!(" on rank {}", bad.rank)
        } else {
            String::new()
        };
        let mut diagnostic = Diagnostic::new(
            &UseBeforeCreate::INFO,
            bad.op.span.clone(),
            format!(
                "{} uses event {name}{on_rank} before any call has created it: the handle is invalid",
                bad.op.api
            ),
        )
        .with_label(format!("no `{name}` exists yet when this call is issued"))
        .with_help(format!("create {name} before the first call that uses it"));
        let later = exec.nodes.iter().enumerate().find(|(_, node)| match node.action {
            Action::Create(inst) => {
                let instance = exec.instance(inst);
                instance.obj == bad.obj && instance.rank == bad.rank
            }
            _ => false,
        });
        if let Some((index, _)) = later {
            diagnostic = diagnostic.with_related(
                analysis.span(NodeId(index as u32)),
                format!("{name} is created only here, later"),
            );
        }
        out.push(diagnostic);
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::analyze;
    use crate::model::{EventCreator, EventInfo, EventSemantics, ObjId, Object, ObjectKind, Op, OpKind, Program, Stmt};
    use crate::source::{FileId, Span};

    fn span(at: usize) -> Span {
        Span::new(FileId(0), at..at + 1)
    }

    /// A trace-shaped Program (no names to resolve): the record comes before the creation.
    #[test]
    fn a_record_issued_before_the_creation_is_reported() {
        let mut program = Program::new(span(0));
        let event = ObjId(program.objects.len() as u32);
        program.objects.push(Object {
            name: "ev1".into(),
            written: None,
            kind: ObjectKind::Event(EventInfo {
                semantics: EventSemantics::Sync,
                creator: EventCreator::AclWithFlag,
                flags: crate::api::ACL_EVENT_SYNC,
            }),
            span: span(20),
            created_by: Some("aclrtCreateEventWithFlag".into()),
            array: None,
            ipc_key: None,
        });
        let op = |kind, at| {
            Stmt::Op(Op {
                api: match kind {
                    OpKind::Create(_) => "aclrtCreateEventWithFlag",
                    OpKind::Destroy(_) => "aclrtDestroyEvent",
                    _ => "aclrtRecordEvent",
                },
                kind,
                span: span(at),
            })
        };
        program.threads[0].body = vec![
            op(
                OpKind::EventRecord {
                    event,
                    stream: Program::DEFAULT_STREAM,
                },
                10,
            ),
            op(OpKind::Create(event), 20),
            op(OpKind::Destroy(event), 30),
        ];
        let found: Vec<_> = analyze(&program).into_iter().filter(|d| d.code == "SG101").collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].primary, span(10));
        assert_eq!(found[0].related[0].span, span(20));
    }
}
