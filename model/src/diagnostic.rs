//! Diagnostics: what every rule and frontend reports, independent of how it is rendered.

use serde::Serialize;

use crate::source::Span;
use crate::timeline::Timeline;

/// What a finding is reported under: a rule's stable code and name, and its default
/// severity. The rules themselves (and their checks) live with the analyzer; frontends
/// report the reading rules (syntax, names) through the same trait.
pub trait Rule {
    fn code(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn severity(&self) -> Severity;
}

/// An event named before the call that creates it: a fact a frontend finds while
/// reading, which the analyzer reports as its SG101 (a rule it also checks on runs).
#[derive(Clone, Debug)]
pub struct UsedBeforeCreation {
    pub use_span: Span,
    pub name: String,
    pub create_span: Span,
    /// The creating API.
    pub api: String,
    /// Advice in the frontend's own terms, if it has better than "move the `let`".
    pub help: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Can hang, lose data or race.
    Error,
    /// A likely bug or a leak.
    Warning,
    /// No runtime effect.
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// Another call involved in a finding (the record of a hung wait, a reset, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// The headline: the runtime consequence.
    pub message: String,
    /// The call to change.
    pub primary: Span,
    /// Text under the primary span.
    pub label: String,
    pub related: Vec<Related>,
    /// How to fix it.
    pub help: Option<String>,
    pub notes: Vec<String>,
    /// The codes of findings folded into this one because they follow from it (the
    /// host hang a stuck wait causes); their text is in `notes` and `related`.
    pub consequences: Vec<&'static str>,
    /// Waits this finding leaves without their signal: a wait-without-signal (SG502)
    /// at one of them follows from it and is folded into it.
    pub starves: Vec<Span>,
    /// Data races (by their primary location) this finding leaves unordered: an SG601
    /// or SG602 there follows from it and is folded into it.
    pub unorders: Vec<Span>,
    /// A mechanical change that removes the finding, where there is one.
    pub fix: Option<Fix>,
    /// The window of the execution the finding was found in, for timeline renderers
    /// (computed only when asked for: `SmtOptions::timelines`).
    pub timeline: Option<Box<Timeline>>,
    /// The parameters (by index) whose value the finding was found to need: a run that
    /// differed from the one that found it in that parameter alone did not have it.
    pub decisive_params: Vec<usize>,
}

/// A change that removes a finding, said in calls rather than in any language's syntax:
/// an editor writes each call in the file's own language (a `;` after it in C/C++ and
/// `.sync`, none in Python).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the change does, as a quick fix's title.
    pub title: String,
    pub edits: Vec<FixEdit>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixEdit {
    /// A call on a line of its own after the statement at `after`, indented as it is:
    /// `aclrtResetEvent(ev, s2)`.
    InsertCall { after: Span, call: String },
    /// A call on a line of its own before the line of the statement at `before`,
    /// indented as that line is: `aclrtSynchronizeStream(s1)` before a host read.
    InsertCallBefore { before: Span, call: String },
    /// Before the line of the statement at `before`, make stream `waiting` wait for the
    /// work queued on stream `on` so far (`None`: the default stream). One call only in
    /// torch (`waiting.wait_stream(on)`); elsewhere it takes an event, so no fix.
    StreamWaitsForStream {
        before: Span,
        waiting: Option<String>,
        on: Option<String>,
    },
    /// Remove `span`; its whole line when nothing else is left on it.
    Remove { span: Span },
    /// The call at `span` passes `first` and later `second` (call or template
    /// arguments): pass them the other way round.
    SwapArguments { span: Span, first: String, second: String },
}

impl Diagnostic {
    /// Every place the finding points at, its fix's included; not its timeline's.
    pub fn spans_mut(&mut self) -> Vec<&mut Span> {
        let mut spans = vec![&mut self.primary];
        spans.extend(self.related.iter_mut().map(|related| &mut related.span));
        spans.extend(self.starves.iter_mut());
        spans.extend(self.unorders.iter_mut());
        if let Some(fix) = &mut self.fix {
            spans.extend(fix.edits.iter_mut().map(|edit| match edit {
                FixEdit::InsertCall { after: span, .. }
                | FixEdit::InsertCallBefore { before: span, .. }
                | FixEdit::StreamWaitsForStream { before: span, .. }
                | FixEdit::Remove { span }
                | FixEdit::SwapArguments { span, .. } => span,
            }));
        }
        spans
    }

    pub fn new(rule: &impl Rule, primary: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code: rule.code(),
            name: rule.name(),
            severity: rule.severity(),
            message: message.into(),
            primary,
            label: String::new(),
            related: Vec::new(),
            help: None,
            notes: Vec::new(),
            consequences: Vec::new(),
            starves: Vec::new(),
            unorders: Vec::new(),
            fix: None,
            timeline: None,
            decisive_params: Vec::new(),
        }
    }

    /// Its own code, then those of the consequences folded into it.
    pub fn codes(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.code).chain(self.consequences.iter().copied())
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// For rules whose findings differ in consequence (a hang vs. a silent no-op).
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Output order: by file, position, then code, so that runs are reproducible.
    pub fn sort(diagnostics: &mut [Diagnostic]) {
        diagnostics.sort_by(|a, b| {
            (
                a.primary.file,
                a.primary.range.start,
                a.primary.range.end,
                a.code,
                &a.message,
            )
                .cmp(&(
                    b.primary.file,
                    b.primary.range.start,
                    b.primary.range.end,
                    b.code,
                    &b.message,
                ))
        });
    }
}

/// "an event", "a stream", "an HCCL thread": an object noun in a message.
pub fn with_article(noun: &str) -> String {
    let vowel_sound = noun.starts_with(['a', 'e', 'i', 'o', 'u']) || noun.starts_with("HCCL");
    format!("{} {noun}", if vowel_sound { "an" } else { "a" })
}
