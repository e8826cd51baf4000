//! Inline suppressions, in any language's comments: `// syncguard: ignore[SG107]`
//! (`#` in Python) on the line of a finding's primary location or the line above it,
//! `syncguard: ignore-file[SG108]` anywhere in the file; several codes comma-separated.
//! A suppression that suppresses nothing is a finding of its own (SG005), as ruff's
//! RUF100.

use std::ops::Range;

use crate::diagnostic::{Diagnostic, Fix, FixEdit};
use crate::rules::{RULES, UnusedSuppression};
use crate::source::{FileId, Sources, Span};

/// One code of one suppression comment.
struct Suppression {
    file: FileId,
    /// 0-based line of the comment; `None` for `ignore-file`.
    line: Option<usize>,
    code: String,
    /// The code's bytes in the file.
    range: Range<usize>,
    /// What removing it removes: the whole comment when it names only this code, else
    /// the code and a comma next to it.
    removal: Range<usize>,
    used: bool,
}

/// Drop the findings a suppression covers; add one SG005 per suppression code that
/// covered none (or names no rule). Files whose text is not loaded (streamed traces)
/// have no comments.
pub fn apply_suppressions(diagnostics: &mut Vec<Diagnostic>, sources: &Sources) {
    let mut suppressions: Vec<Suppression> = sources
        .iter()
        .flat_map(|(file, source)| read_suppressions(file, &source.text))
        .collect();
    if suppressions.is_empty() {
        return;
    }
    diagnostics.retain(|diagnostic| {
        let file = sources.get(diagnostic.primary.file);
        let line = file.line_of(diagnostic.primary.range.start);
        let covering = suppressions.iter_mut().find(|s| {
            s.file == diagnostic.primary.file
                && s.code == diagnostic.code
                && s.line.is_none_or(|at| at == line || at + 1 == line)
        });
        match covering {
            Some(suppression) => {
                suppression.used = true;
                false
            }
            None => true,
        }
    });
    for suppression in suppressions.iter().filter(|s| !s.used) {
        let span = Span::new(suppression.file, suppression.range.clone());
        let known = RULES.iter().any(|rule| rule.code == suppression.code);
        let message = if known {
            format!(
                "this suppression of {} suppresses nothing: no {} finding is reported {}",
                suppression.code,
                suppression.code,
                if suppression.line.is_some() {
                    "on this line or the next"
                } else {
                    "in this file"
                }
            )
        } else {
            format!("`{}` is no rule: this suppression suppresses nothing", suppression.code)
        };
        diagnostics.push(
            Diagnostic::new(&UnusedSuppression::INFO, span, message)
                .with_label(if known { "unused" } else { "no such rule" })
                .with_fix(Fix {
                    title: format!("Remove the unused suppression of {}", suppression.code),
                    edits: vec![FixEdit::Remove {
                        span: Span::new(suppression.file, suppression.removal.clone()),
                    }],
                })
                .with_help(if known {
                    "remove it: a stale suppression would hide the next problem here"
                } else {
                    "name a rule code (`syncguard rules` lists them), or remove it"
                }),
        );
    }
}

const MARKER: &str = "syncguard:";

/// The suppressions in a file's comments.
fn read_suppressions(file: FileId, text: &str) -> Vec<Suppression> {
    let mut out = Vec::new();
    // Most files have none: one search of the whole text is cheaper than one per line.
    if !text.contains(MARKER) {
        return out;
    }
    let mut line_start = 0;
    for (line, content) in text.split_inclusive('\n').enumerate() {
        for (at, _) in content.match_indices(MARKER) {
            if !in_comment(&content[..at]) {
                continue;
            }
            let after = at + MARKER.len();
            let rest = content[after..].trim_start();
            let offset = line_start + after + (content[after..].len() - rest.len());
            let (whole_file, codes) = if let Some(codes) = rest.strip_prefix("ignore-file[") {
                (true, codes)
            } else if let Some(codes) = rest.strip_prefix("ignore[") {
                (false, codes)
            } else {
                continue;
            };
            let Some(close) = codes.find(']') else { continue };
            let codes_start = offset + (rest.len() - codes.len());
            let comment = line_start + comment_start(&content[..at])..codes_start + close + 1;
            let pieces: Vec<&str> = codes[..close].split(',').collect();
            let named = pieces.iter().filter(|code| !code.trim().is_empty()).count();
            let mut position = 0;
            for (index, code) in pieces.iter().enumerate() {
                let trimmed = code.trim();
                let start = codes_start + position + (code.len() - code.trim_start().len());
                let piece = codes_start + position..codes_start + position + code.len();
                position += code.len() + 1;
                if trimmed.is_empty() {
                    continue;
                }
                let removal = if named == 1 {
                    comment.clone()
                } else if index + 1 < pieces.len() {
                    // `SG107, ` before the next code.
                    start..piece.end + 1 + leading_spaces(pieces[index + 1])
                } else {
                    // `, SG108` after the previous code.
                    piece.start - 1..piece.end
                };
                out.push(Suppression {
                    file,
                    line: (!whole_file).then_some(line),
                    code: trimmed.to_string(),
                    range: start..start + trimmed.len(),
                    removal,
                    used: false,
                });
            }
        }
        line_start += content.len();
    }
    out
}

/// Where the comment holding a marker starts in its line (its last `//`, `#` or `/*`
/// before the marker), with the blanks before it.
fn comment_start(before: &str) -> usize {
    let opener = ["//", "#", "/*"]
        .iter()
        .filter_map(|opener| before.rfind(opener))
        .max()
        .unwrap_or(0);
    before[..opener].trim_end().len()
}

fn leading_spaces(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

/// Whether the text before a marker on its line opens a comment (`//`, `#`, `/*`).
fn in_comment(before: &str) -> bool {
    before.contains("//") || before.contains('#') || before.contains("/*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_codes_with_their_positions() {
        let text =
            "a;\nb; // syncguard: ignore[SG107, SG108]\n# syncguard: ignore-file[SG601]\nc; // syncguard: ranks 4\n";
        let found = read_suppressions(FileId(0), text);
        let summary: Vec<(Option<usize>, &str, &str)> = found
            .iter()
            .map(|s| (s.line, s.code.as_str(), &text[s.range.clone()]))
            .collect();
        assert_eq!(
            summary,
            [
                (Some(1), "SG107", "SG107"),
                (Some(1), "SG108", "SG108"),
                (None, "SG601", "SG601"),
            ]
        );
    }

    #[test]
    fn removing_a_code_removes_its_comma_and_removing_the_last_code_removes_the_comment() {
        let text = "b; // syncguard: ignore[SG107, SG108]\n# syncguard: ignore-file[SG601]\nc; // syncguard: ignore[SG1, SG2, SG3]\n";
        let found = read_suppressions(FileId(0), text);
        let removed: Vec<String> = found
            .iter()
            .map(|s| {
                let mut left = text.to_string();
                left.replace_range(s.removal.clone(), "");
                left.lines()
                    .nth(text[..s.range.start].lines().count() - 1)
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            removed,
            [
                "b; // syncguard: ignore[SG108]",
                "b; // syncguard: ignore[SG107]",
                "",
                "c; // syncguard: ignore[SG2, SG3]",
                "c; // syncguard: ignore[SG1, SG3]",
                "c; // syncguard: ignore[SG1, SG2]",
            ]
        );
    }

    #[test]
    fn a_marker_outside_a_comment_is_not_a_suppression() {
        assert!(read_suppressions(FileId(0), "print(\"syncguard: ignore[SG107]\")\n").is_empty());
    }
}
