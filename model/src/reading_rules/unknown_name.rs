use super::declare_reading_rule;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::Span;

declare_reading_rule! {
    /// ## What it detects
    /// A name that nothing declares: a stream, event, notify, channel, HCCL thread,
    /// buffer or communicator used before (or without) the `let` that creates it, a
    /// loop variable or parameter out of scope, a constant such as `ACL_EVENT_SYNK`
    /// that the API does not define, or a call to an API syncguard does not know.
    /// The message suggests the closest declared name.
    ///
    /// ## Why is this a bug
    /// In the real program the handle would be uninitialised or belong to another
    /// scope: the runtime returns an invalid-handle error, or worse, records on a
    /// stream nobody waits on. syncguard cannot know which object was meant, so every
    /// op that uses the name is left out of the analysis.
    ///
    /// An unknown API (in a `.sync` file or a trace) is a warning instead: its calls
    /// are left out and the rest of the program is still analyzed, so what the missing
    /// call would have done (a record a wait needs) can show up as findings of its own.
    ///
    /// ## Example
    /// ```text
    /// let s1 = aclrtCreateStream();
    /// aclrtRecordEvent(ev, s2);     // `s2` is not declared; did you mean `s1`?
    /// ```
    ///
    /// ## Fix
    /// Create the object first (`let s2 = aclrtCreateStream();`) or correct the name.
    pub struct UnknownName;
    code = "SG003",
    name = "unknown-name",
    severity = Error,
}

/// The warning for a call to an API syncguard does not know, suggesting the closest
/// known name; `note` says what happens to the file's other calls of it.
pub fn unknown_api(span: Span, name: &str, note: Option<&str>) -> Diagnostic {
    let mut diagnostic = Diagnostic::new(
        &UnknownName::INFO,
        span,
        format!("unknown API `{name}`: its call is left out of the analysis"),
    )
    .with_severity(Severity::Warning)
    .with_label("syncguard knows no API of this name (grammar/SYNC.md lists them)");
    if let Some(close) = crate::suggest::closest(name, crate::api::APIS.iter().map(|a| a.name)) {
        diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
    }
    if let Some(note) = note {
        diagnostic = diagnostic.with_note(note);
    }
    diagnostic
}
