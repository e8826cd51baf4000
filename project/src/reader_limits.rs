//! What a source frontend could not follow is the reader's limit, never the user's
//! error: it is listed with `--explain` (SG003 information) and counted otherwise, and
//! the findings that rest on it are undecided rather than reported.
//!
//! Two kinds reach the analysis: the calls the frontend itself left out (its
//! `unresolved` list), and the statements of an extracted program the `.sync` lowering
//! could not take (a name the frontend lost track of, a value out of range). The second
//! are the frontend's own failures: in a `.sync` file they would be SG001 or SG003
//! errors, in C/C++ or Python they are limits like the first.

use syncguard_analyzer::rules::UnknownName;
use syncguard_analyzer::source::{FileId, Span};
use syncguard_analyzer::{
    CheckedFile, Diagnostic, Severity, Unfollowed, set_aside_dependent_findings, set_aside_kernel_findings_after_stop,
};
use syncguard_grammar::extracted::{EntryProgram, SourceSpace};
use syncguard_grammar::lower::Lowered;

/// The codes of the lowering's reading rules: syntax (SG001) and names (SG003).
const LOWERING_CODES: [&str; 2] = ["SG001", "SG003"];

/// One entry point's reader limits: where, and the objects each left-out call uses.
pub struct Limits {
    pub unfollowed: Vec<Unfollowed>,
    /// Statements of the extracted program the lowering could not take, as notes.
    pub notes: Vec<Diagnostic>,
    /// Where the walk of the entry point stopped before its end, if it did.
    pub stopped_at: Option<Span>,
}

/// Rules whose findings say something never happens (a record, a destroy, a signal, a
/// capture's end, an order between collectives): a program the walk stopped in may do it
/// in the part not walked.
const ABSENCE_RULES: [&str; 11] = [
    "SG104", "SG107", "SG201", "SG202", "SG301", "SG307", "SG501", "SG502", "SG503", "SG504", "SG505",
];

/// Take the lowering's errors out of an extracted program's lowering: each is a call the
/// frontend could not express, and becomes a limit with the objects its call uses.
pub fn take_lowering_failures(
    lowered: &mut Lowered,
    entry: &EntryProgram,
    space: &SourceSpace,
    files: &[FileId],
) -> Limits {
    let mut limits = Limits {
        unfollowed: entry
            .unresolved
            .iter()
            .filter(|item| !item.assumption)
            .map(|item| Unfollowed {
                span: Span::new(files[item.source], item.range.clone()),
                touches: item.touches.clone(),
                data_only: item.data_only,
            })
            .collect(),
        notes: Vec::new(),
        stopped_at: entry
            .incomplete
            .as_ref()
            .map(|stop| Span::new(files[stop.source], stop.range.clone())),
    };
    let (failures, kept): (Vec<Diagnostic>, Vec<Diagnostic>) = std::mem::take(&mut lowered.diagnostics)
        .into_iter()
        .partition(|diagnostic| diagnostic.severity == Severity::Error && LOWERING_CODES.contains(&diagnostic.code));
    lowered.diagnostics = kept;
    for failure in failures {
        let span = failure.primary;
        limits.unfollowed.push(Unfollowed {
            touches: space.names_at(entry, files, &span),
            span: span.clone(),
            data_only: false,
        });
        limits.notes.push(
            Diagnostic::new(
                &UnknownName::INFO,
                span,
                "a call here could not be followed: the reader lost track of a value it uses, so the call is left out",
            )
            .with_severity(Severity::Info)
            .with_label("not followed"),
        );
    }
    limits
}

/// Set aside the findings of `checked` that rest on a limit; returns how many, and with
/// `explain` adds them and the lowering's notes to the findings as information.
pub fn apply(checked: &mut CheckedFile, limits: Limits, explain: bool) -> usize {
    let mut set_aside = set_aside_dependent_findings(checked, &limits.unfollowed);
    if let Some(stop) = &limits.stopped_at {
        set_aside.extend(set_aside_kernel_findings_after_stop(checked, stop));
        set_aside.extend(set_aside_absences(checked, stop));
    }
    let count = set_aside.len();
    if explain {
        checked.diagnostics.extend(limits.notes);
        checked.diagnostics.extend(set_aside);
    }
    count
}

/// In an entry point whose walk stopped at `stop`, the findings that something never
/// happens (SG102's "left set at exit" included): the code not walked may do it.
fn set_aside_absences(checked: &mut CheckedFile, stop: &Span) -> Vec<Diagnostic> {
    let (absences, kept): (Vec<Diagnostic>, Vec<Diagnostic>) = std::mem::take(&mut checked.diagnostics)
        .into_iter()
        .partition(|diagnostic| {
            diagnostic.severity != Severity::Info
                && (ABSENCE_RULES.contains(&diagnostic.code)
                    || (diagnostic.code == "SG102" && diagnostic.severity == Severity::Warning))
        });
    checked.diagnostics = kept;
    absences
        .into_iter()
        .map(|mut diagnostic| {
            diagnostic.severity = Severity::Info;
            diagnostic.notes.insert(
                0,
                "undecided: the walk of this entry point stopped before its end, and the code not walked may do \
                 what this says never happens"
                    .to_string(),
            );
            diagnostic.with_related(stop.clone(), "the walk of the entry point stopped here")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncguard_analyzer::{Overrides, SourceFile, Sources, check_lowered};
    use syncguard_grammar::extracted::SourceText;

    /// An extracted program (written as `.sync` text) whose third call names an event
    /// the frontend never declared: what a frontend that lost track of a value emits.
    fn lost_event() -> (SourceSpace, EntryProgram, Vec<FileId>, Sources) {
        let text = "let s = aclrtCreateStream();\nlet t = aclrtCreateStream();\nlet ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);\naclrtRecordEvent(lost, s);\naclrtStreamWaitEvent(t, ev);\naclrtSynchronizeStream(t);\naclrtDestroyEvent(ev);\n";
        let (space, _) = SourceSpace::new(&[SourceText {
            path: "op.py".into(),
            text: text.into(),
        }]);
        let mut sources = Sources::default();
        let files = vec![sources.add(SourceFile::new("op.py", text.to_string()))];
        let entry = EntryProgram {
            entry: "op:run".into(),
            ranks: 1,
            source: 0,
            range: 0..1,
            syntax: syncguard_grammar::parse(text).file,
            api_calls: 5,
            unresolved: Vec::new(),
            incomplete: None,
            unchecked_returns: Vec::new(),
            written: Vec::new(),
            walk: 0,
        };
        (space, entry, files, sources)
    }

    #[test]
    fn a_name_the_frontend_lost_is_a_limit_with_the_objects_of_its_call() {
        let (space, entry, files, _) = lost_event();
        let mut lowered = space.lower(&entry, &files);
        assert!(lowered.diagnostics.iter().any(|d| d.code == "SG003"));
        let limits = take_lowering_failures(&mut lowered, &entry, &space, &files);
        assert!(lowered.diagnostics.iter().all(|d| d.code != "SG003"));
        assert_eq!(limits.notes.len(), 1);
        assert_eq!(limits.notes[0].severity, Severity::Info);
        assert!(
            !limits.notes[0].message.contains("`lost`"),
            "{}",
            limits.notes[0].message
        );
        assert_eq!(limits.unfollowed[0].touches, ["lost", "s"]);
    }

    #[test]
    fn findings_on_what_the_left_out_call_uses_are_undecided() {
        let (space, mut entry, files, _) = lost_event();
        // The record the frontend could not express is the one the wait needed.
        if let Some(stmt) = entry.syntax.stmts.get_mut(3)
            && let syncguard_grammar::ast::StmtKind::Call(call) = &mut stmt.kind
            && let syncguard_grammar::ast::ExprKind::Name(path) = &mut call.args[0].value.kind
        {
            path.text = "ev".into();
        }
        entry.unresolved.push(syncguard_grammar::extracted::Unresolved {
            source: 0,
            range: 0..1,
            message: "a call left out".into(),
            touches: vec!["ev".into()],
            assumption: false,
            data_only: false,
        });
        let mut lowered = space.lower(&entry, &files);
        // The left-out call is the record: drop it as a frontend would have.
        lowered.program.threads[0].body.remove(3);
        let limits = take_lowering_failures(&mut lowered, &entry, &space, &files);
        let mut checked = check_lowered(lowered, Vec::new(), &Overrides::default());
        assert!(
            checked
                .diagnostics
                .iter()
                .any(|d| d.code == "SG104" && d.severity == Severity::Error)
        );
        let set_aside = apply(&mut checked, limits, true);
        assert_eq!(set_aside, 1);
        let undecided = checked.diagnostics.iter().find(|d| d.code == "SG104").unwrap();
        assert_eq!(undecided.severity, Severity::Info);
        assert!(
            undecided.notes[0].starts_with("undecided: `ev`"),
            "{:?}",
            undecided.notes
        );
    }
}
