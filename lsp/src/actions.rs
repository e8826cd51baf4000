//! Code actions: a finding's mechanical fix, written in the file's language, and
//! "suppress on this line" for every finding.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, Range, TextEdit, Url, WorkspaceEdit};
use syncguard_analyzer::Diagnostic;
use syncguard_analyzer::diagnostic::FixEdit;
use syncguard_project::Language;

use crate::analysis::Analysis;
use crate::diagnostics::range_of;
use crate::documents::Kind;
use crate::positions::LineIndex;

/// The actions for the findings of `url` whose primary range meets `range`.
pub fn for_range(analysis: &Analysis, url: &Url, kind: Kind, range: Range) -> Vec<CodeAction> {
    let Some(file) = analysis.file_of(url) else {
        return Vec::new();
    };
    let mut actions = Vec::new();
    for diagnostic in analysis.diagnostics.iter().filter(|d| d.primary.file == file) {
        let at = range_of(analysis, &diagnostic.primary);
        if at.end < range.start || range.end < at.start {
            continue;
        }
        let shown = crate::diagnostics::for_file_one(analysis, diagnostic);
        if let Some(action) = fix(analysis, diagnostic, kind) {
            actions.push(CodeAction {
                diagnostics: Some(vec![shown.clone()]),
                is_preferred: Some(true),
                ..action
            });
        }
        if let Some(edit) = suppression(analysis, diagnostic, kind) {
            actions.push(CodeAction {
                title: format!("Suppress {} on this line", diagnostic.code),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![shown]),
                edit: Some(workspace_edit(url.clone(), vec![edit])),
                ..CodeAction::default()
            });
        }
    }
    actions
}

fn workspace_edit(url: Url, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(url, edits)])),
        ..WorkspaceEdit::default()
    }
}

/// What a new suppression says in place of its reason, for the user to replace.
const REASON_PLACEHOLDER: &str = "<why this is safe here>";

/// The finding's fix, if every edit can be written in the file's language.
fn fix(analysis: &Analysis, diagnostic: &Diagnostic, kind: Kind) -> Option<CodeAction> {
    let fix = diagnostic.fix.as_ref()?;
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for edit in &fix.edits {
        let (file, text_edit) = match edit {
            FixEdit::InsertCall { after, call } => (after.file, insert_call(analysis, after, call, kind)?),
            FixEdit::Remove { span } => (span.file, removal(analysis, span)),
            FixEdit::SwapArguments { span, first, second } => {
                (span.file, swap_arguments(analysis, span, first, second)?)
            }
        };
        changes
            .entry(analysis.url_of(file)?.clone())
            .or_default()
            .push(text_edit);
    }
    Some(CodeAction {
        title: fix.title.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    })
}

/// `call` on a new line after the statement at `after`, written as that statement
/// is: `CHECK(aclrtStreamWaitEvent(s2, ev));` gives `CHECK(aclrtResetEvent(ev, s2));`,
/// `ret = acl.rt.stream_wait_event(s2, ev)` gives `ret = acl.rt.reset_event(ev, s2)`.
/// None where that is not mechanical: the statement spans lines, or its line holds
/// more than the statement, or the call is not of the file's language.
fn insert_call(
    analysis: &Analysis,
    after: &syncguard_analyzer::source::Span,
    call: &str,
    kind: Kind,
) -> Option<TextEdit> {
    let python_call = call.starts_with("acl.");
    match kind {
        Kind::Source(Language::Python) if !python_call => return None,
        Kind::Sync | Kind::Source(Language::Cpp) if python_call => return None,
        Kind::Trace => return None,
        _ => {}
    }
    let text = &analysis.sources.get(after.file).text;
    let index = LineIndex::new(text);
    let line = index.line_of(after.range.start);
    if index.line_of(after.range.end) != line {
        return None;
    }
    let bytes = index.line(line);
    let before = &text[bytes.start..after.range.start];
    let rest = &text[after.range.end..bytes.end];
    let rest_code = rest
        .split("//")
        .next()
        .unwrap_or(rest)
        .split('#')
        .next()
        .unwrap_or(rest);
    // Only closing the statement may follow the call: `)`, `;`.
    if !rest_code.trim().chars().all(|c| c == ')' || c == ';') {
        return None;
    }
    // Every name the call passes must be one the statement uses, so it is in scope
    // there (a helper's parameter may name what the finding calls by the caller's name).
    let statement_words: Vec<&str> = text[after.range.clone()].split(|c: char| !is_name_char(c)).collect();
    if !call_arguments(call).all(|argument| statement_words.contains(&argument) || is_literal(argument)) {
        return None;
    }
    let indent = &before[..before.len() - before.trim_start().len()];
    let statement = format!("{}{call}{}", before.trim_start(), rest_code.trim_end());
    let end = index.position(bytes.end);
    Some(TextEdit::new(Range::new(end, end), format!("\n{indent}{statement}")))
}

/// The call at `span` with `first` and `second` exchanged; none unless each is found
/// once there as a whole word, `first` before `second`.
fn swap_arguments(
    analysis: &Analysis,
    span: &syncguard_analyzer::source::Span,
    first: &str,
    second: &str,
) -> Option<TextEdit> {
    let text = &analysis.sources.get(span.file).text;
    let call = text.get(span.range.clone())?;
    let at_first = only_word(call, first)?;
    let at_second = only_word(call, second)?;
    if at_first >= at_second {
        return None;
    }
    let swapped = format!(
        "{}{second}{}{first}{}",
        &call[..at_first],
        &call[at_first + first.len()..at_second],
        &call[at_second + second.len()..]
    );
    Some(TextEdit::new(LineIndex::new(text).range(span.range.clone()), swapped))
}

/// Where `word` is in `text` as a whole word, if it is there exactly once.
fn only_word(text: &str, word: &str) -> Option<usize> {
    let mut found = text.match_indices(word).map(|(at, _)| at).filter(|&at| {
        let before = text[..at].chars().next_back().is_none_or(|c| !is_name_char(c));
        let after = text[at + word.len()..].chars().next().is_none_or(|c| !is_name_char(c));
        before && after
    });
    let at = found.next()?;
    found.next().is_none().then_some(at)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `a`, `b` of `f(a, b)`.
fn call_arguments(call: &str) -> impl Iterator<Item = &str> {
    let inside = call.split_once('(').map_or("", |(_, rest)| rest.trim_end_matches(')'));
    inside.split(',').map(str::trim).filter(|argument| !argument.is_empty())
}

fn is_literal(argument: &str) -> bool {
    argument.chars().all(|c| c.is_ascii_digit()) || argument == "NULL" || argument == "nullptr"
}

/// Remove `span`, or its whole line when nothing else is on it.
fn removal(analysis: &Analysis, span: &syncguard_analyzer::source::Span) -> TextEdit {
    let text = &analysis.sources.get(span.file).text;
    let index = LineIndex::new(text);
    let line = index.line_of(span.range.start);
    let bytes = index.line(line);
    let left = format!(
        "{}{}",
        &text[bytes.start..span.range.start],
        &text[span.range.end.min(bytes.end)..bytes.end]
    );
    if left.trim().is_empty() && index.line_of(span.range.end) == line {
        let next = (bytes.end + 1).min(text.len());
        return TextEdit::new(index.range(bytes.start..next), String::new());
    }
    TextEdit::new(index.range(span.range.clone()), String::new())
}

/// `// syncguard: ignore[SG102] <why this is safe here>` on the line above the finding,
/// indented as it is (the placeholder asks for the reason the README wants next to every
/// suppression), or the code added to a suppression already there.
fn suppression(analysis: &Analysis, diagnostic: &Diagnostic, kind: Kind) -> Option<TextEdit> {
    let comment = kind.comment()?;
    let text = &analysis.sources.get(diagnostic.primary.file).text;
    let index = LineIndex::new(text);
    let line = index.line_of(diagnostic.primary.range.start);
    if line > 0 {
        let above = index.line(line - 1);
        let above_text = &text[above.clone()];
        if let Some(marker) = above_text.find("syncguard: ignore[")
            && let Some(close) = above_text[marker..].find(']')
        {
            let at = index.position(above.start + marker + close);
            return Some(TextEdit::new(Range::new(at, at), format!(", {}", diagnostic.code)));
        }
    }
    let bytes = index.line(line);
    let line_text = &text[bytes.clone()];
    let indent = &line_text[..line_text.len() - line_text.trim_start().len()];
    let start = index.position(bytes.start);
    Some(TextEdit::new(
        Range::new(start, start),
        format!(
            "{indent}{comment} syncguard: ignore[{}] {REASON_PLACEHOLDER}\n",
            diagnostic.code
        ),
    ))
}
