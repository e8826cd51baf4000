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

/// `source.fixAll.syncguard`: every mechanical fix of a file at once (editors run it on
/// save or from "Fix all").
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.syncguard")
}

/// One action applying the fix of every finding in `url` that has one, in this file
/// alone; a fix whose edits overlap one taken before is left for a later run.
pub fn fix_all(analysis: &Analysis, url: &Url, kind: Kind) -> Option<CodeAction> {
    let file = analysis.file_of(url)?;
    let mut edits: Vec<TextEdit> = Vec::new();
    let mut fixed = Vec::new();
    for diagnostic in analysis.diagnostics.iter().filter(|d| d.primary.file == file) {
        let Some(action) = fix(analysis, diagnostic, kind) else {
            continue;
        };
        let mut changes = action.edit.and_then(|edit| edit.changes).unwrap_or_default();
        let (Some(these), true) = (changes.remove(url), changes.is_empty()) else {
            continue;
        };
        let meets = |a: &TextEdit, b: &TextEdit| a.range.start <= b.range.end && b.range.start <= a.range.end;
        if these
            .iter()
            .any(|new| edits.iter().any(|old| meets(new, old) || *old == *new))
        {
            continue;
        }
        edits.extend(these);
        fixed.push(crate::diagnostics::for_file_one(analysis, diagnostic));
    }
    (!edits.is_empty()).then(|| CodeAction {
        title: format!("Fix all syncguard findings with a mechanical fix ({})", fixed.len()),
        kind: Some(fix_all_kind()),
        diagnostics: Some(fixed),
        edit: Some(workspace_edit(url.clone(), edits)),
        ..CodeAction::default()
    })
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
            FixEdit::InsertCallBefore { before, call } => {
                (before.file, insert_call_before(analysis, before, call, kind)?)
            }
            FixEdit::StreamWaitsForStream { before, waiting, on } => {
                (before.file, stream_wait(analysis, before, waiting, on, kind)?)
            }
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
    let call = &code_arguments(call);
    let python_call = call.starts_with("acl.");
    match kind {
        Kind::Source(Language::Python) if !python_call => return None,
        Kind::Sync | Kind::Source(Language::Cpp) if python_call => return None,
        Kind::Trace | Kind::Record => return None,
        _ => {}
    }
    let text = &analysis.sources.get(after.file).text;
    let index = LineIndex::new(text);
    let (prefix, suffix) = match wrapping(text, &index, after)? {
        (prefix, suffix) if reusable(prefix, suffix) => (prefix, suffix),
        _ if python_call => ("", ""),
        _ => ("", ";"),
    };
    // Every name the call passes must be one the statement uses, so it is in scope
    // there (a helper's parameter may name what the finding calls by the caller's name).
    let statement = &text[after.range.clone()];
    if !call_arguments(call).all(|argument| words_at(statement, argument).next().is_some() || is_literal(argument)) {
        return None;
    }
    let bytes = index.line(index.line_of(after.range.start));
    let end = index.position(bytes.end);
    let indent = indentation(&text[bytes]);
    Some(TextEdit::new(
        Range::new(end, end),
        format!("\n{indent}{prefix}{call}{suffix}"),
    ))
}

/// How the statement at `span` wraps the call there, if the statement is alone on its
/// one line and only closes after the call: (`CHECK(`, `);`), (`ret = `, ``).
fn wrapping<'t>(
    text: &'t str,
    index: &LineIndex,
    span: &syncguard_analyzer::source::Span,
) -> Option<(&'t str, &'t str)> {
    let line = index.line_of(span.range.start);
    if index.line_of(span.range.end) != line {
        return None;
    }
    let bytes = index.line(line);
    let before = text[bytes.start..span.range.start].trim_start();
    let rest = &text[span.range.end..bytes.end];
    let rest_code = rest
        .split("//")
        .next()
        .unwrap_or(rest)
        .split('#')
        .next()
        .unwrap_or(rest)
        .trim_end();
    // Only closing the statement may follow the call: `)`, `;`.
    rest_code
        .trim()
        .chars()
        .all(|c| c == ')' || c == ';')
        .then_some((before, rest_code.trim_start()))
}

/// Whether a new call can be wrapped as the statement's: in macros (`CHECK(`) and an
/// assignment to a name (`ret = `), closed as they open; not in a declaration
/// (`aclError ret = `, which would declare it again) or another call's arguments.
fn reusable(prefix: &str, suffix: &str) -> bool {
    let is_name = |text: &str| !text.is_empty() && text.chars().all(is_name_char);
    let macros = match prefix.split_once('=') {
        Some((target, rest)) => {
            if !is_name(target.trim()) || rest.starts_with('=') {
                return false;
            }
            rest.trim_start()
        }
        None => prefix,
    };
    let opened = macros
        .split_inclusive('(')
        .all(|piece| piece.strip_suffix('(').is_some_and(|name| is_name(name.trim())));
    opened && macros.matches('(').count() == suffix.matches(')').count()
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// `call` on a line of its own before the line of the statement at `before`, indented
/// as that line is, in the file's language: wrapped as the statement there wraps its
/// call (`CHECK(...);`), else with a `;` after it in C/C++ and `.sync`; in a Python file
/// that uses torch and not pyACL, torch's method (`s.synchronize()`). None where that is
/// not mechanical: the line continues a statement, or a name the call passes is not
/// written in the lines above it.
fn insert_call_before(
    analysis: &Analysis,
    before: &syncguard_analyzer::source::Span,
    call: &str,
    kind: Kind,
) -> Option<TextEdit> {
    let call = code_arguments(call);
    let text = &analysis.sources.get(before.file).text;
    let index = LineIndex::new(text);
    let python = matches!(kind, Kind::Source(Language::Python));
    let wrapped = || match wrapping(text, &index, before) {
        Some((prefix, suffix)) if reusable(prefix, suffix) => format!("{prefix}{call}{suffix}"),
        _ if python => call.clone(),
        _ => format!("{call};"),
    };
    let written = match kind {
        Kind::Source(Language::Python) if call.starts_with("acl.") => match python_spelling(text, &call)? {
            Spelling::PyAcl => wrapped(),
            Spelling::Torch(method) => method,
        },
        Kind::Sync | Kind::Source(Language::Cpp) if !call.starts_with("acl.") => wrapped(),
        _ => return None,
    };
    let names: Vec<&str> = call_arguments(&call).filter(|argument| !is_literal(argument)).collect();
    line_before(text, &index, before, &written, &names, python)
}

/// `line` inserted before the line of the statement at `before`, indented as that line;
/// None where that line continues a statement or one of `names` is not written in the
/// lines above it (so it is likely not in scope there).
fn line_before(
    text: &str,
    index: &LineIndex,
    before: &syncguard_analyzer::source::Span,
    line: &str,
    names: &[&str],
    python: bool,
) -> Option<TextEdit> {
    let bytes = index.line(index.line_of(before.range.start));
    if !starts_statement(&text[..bytes.start], python) {
        return None;
    }
    let above_from = text[..bytes.start]
        .rmatch_indices('\n')
        .nth(NAMES_LOOKED_UP_ABOVE)
        .map_or(0, |(at, _)| at);
    let above = &text[above_from..bytes.start];
    if !names.iter().all(|name| words_at(above, name).next().is_some()) {
        return None;
    }
    let indent = indentation(&text[bytes.clone()]);
    let start = index.position(bytes.start);
    Some(TextEdit::new(Range::new(start, start), format!("{indent}{line}\n")))
}

/// Stream `waiting` made to wait for stream `on` before the statement at `before`: in a
/// torch file, `waiting.wait_stream(on)` (the default stream as
/// `torch.npu.default_stream()`, not `current_stream()`, which a `with` block changes).
fn stream_wait(
    analysis: &Analysis,
    before: &syncguard_analyzer::source::Span,
    waiting: &Option<String>,
    on: &Option<String>,
    kind: Kind,
) -> Option<TextEdit> {
    if !matches!(kind, Kind::Source(Language::Python)) {
        return None;
    }
    let text = &analysis.sources.get(before.file).text;
    if !uses_torch_only(text)? {
        return None;
    }
    let device = if text.contains("torch.npu") || text.contains("torch_npu") {
        "torch.npu"
    } else if text.contains("torch.cuda") {
        "torch.cuda"
    } else {
        return None;
    };
    let default = format!("{device}.default_stream()");
    let (waiting_code, on_code) = (
        waiting.as_deref().map(syncguard_analyzer::model::as_code),
        on.as_deref().map(syncguard_analyzer::model::as_code),
    );
    let line = format!(
        "{}.wait_stream({})",
        waiting_code.unwrap_or(&default),
        on_code.unwrap_or(&default)
    );
    let names: Vec<&str> = [waiting_code, on_code].into_iter().flatten().collect();
    line_before(text, &LineIndex::new(text), before, &line, &names, true)
}

/// How many lines above an insertion a name the call passes must be written in: near
/// enough to be in the same function's scope in ordinary code.
const NAMES_LOOKED_UP_ABOVE: usize = 80;

/// Whether a new statement can go right after `above`: its last line of code ends one
/// (C/C++: `;`, `{`, `}`, a label's `:`; Python: anything but an open bracket, a comma
/// or a `\` continuing it).
fn starts_statement(above: &str, python: bool) -> bool {
    let comment = if python { "#" } else { "//" };
    let last = above
        .lines()
        .rev()
        .map(|line| line.split(comment).next().unwrap_or(line).trim())
        .find(|line| !line.is_empty());
    match last {
        None => true,
        Some(last) if python => !last.ends_with([',', '(', '[', '{', '\\']),
        Some(last) => last.ends_with([';', '{', '}', ':']) || last.starts_with('#'),
    }
}

/// How a Python file writes a pyACL call.
enum Spelling {
    /// As is: the file uses pyACL.
    PyAcl,
    /// As torch's method: the file uses torch only (`acl.rt.synchronize_stream(s)` is
    /// `s.synchronize()`).
    Torch(String),
}

/// Whether a Python file uses pyACL (then as is) or torch only (then torch's methods);
/// neither gives none.
fn uses_torch_only(text: &str) -> Option<bool> {
    let uses = |module: &str| {
        text.lines().any(|line| {
            let line = line.trim_start();
            line.starts_with(&format!("import {module}")) || line.starts_with(&format!("from {module}"))
        })
    };
    if uses("acl") {
        Some(false)
    } else {
        uses("torch").then_some(true)
    }
}

fn python_spelling(text: &str, call: &str) -> Option<Spelling> {
    if !uses_torch_only(text)? {
        return Some(Spelling::PyAcl);
    }
    let (callee, _) = call.split_once('(')?;
    let arguments: Vec<&str> = call_arguments(call).collect();
    let method = match (callee, arguments.as_slice()) {
        ("acl.rt.synchronize_stream", [stream]) if !is_literal(stream) => format!("{stream}.synchronize()"),
        ("acl.rt.stream_wait_event", [stream, event]) if !is_literal(stream) => format!("{stream}.wait_event({event})"),
        ("acl.rt.synchronize_event", [event]) => format!("{event}.synchronize()"),
        _ => return None,
    };
    Some(Spelling::Torch(method))
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
    let mut found = words_at(text, word);
    let at = found.next()?;
    found.next().is_none().then_some(at)
}

/// Where `word` (a name, or a place such as `streams_[1]`) is in `text` as a whole.
fn words_at<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(word).map(|(at, _)| at).filter(move |&at| {
        let before = text[..at].chars().next_back().is_none_or(|c| !is_name_char(c));
        let after = text[at + word.len()..].chars().next().is_none_or(|c| !is_name_char(c));
        before && after
    })
}

/// `call` with each argument as code writes it: objects written alike are told apart
/// in messages by a number (`stream #2`), which code does not have.
fn code_arguments(call: &str) -> String {
    let Some((callee, _)) = call.split_once('(') else {
        return call.to_string();
    };
    let arguments: Vec<&str> = call_arguments(call).map(syncguard_analyzer::model::as_code).collect();
    format!("{callee}({})", arguments.join(", "))
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

#[cfg(test)]
mod tests {
    use super::reusable;

    #[test]
    fn a_wrapper_is_taken_over_only_where_the_new_call_fits_it() {
        assert!(reusable("", ";"));
        assert!(reusable("CHECK(", ");"));
        assert!(reusable("ACL_CHECK(CHECK(", "));"));
        assert!(reusable("ret = ", ""));
        assert!(reusable("ret = CHECK(", ");"));
        // A declaration would declare `ret` again; an argument is not a statement.
        assert!(!reusable("aclError ret = ", ";"));
        assert!(!reusable("printf(\"%f\", ", ");"));
        assert!(!reusable("(void)", ";"));
        assert!(!reusable("CHECK(", ";"));
        assert!(!reusable("CHECK(", "));"));
    }
}
