//! The choices a source frontend makes where the code does not decide (a condition, a
//! loop bound, a `switch` or `#if` with no known value) are parameters of the extracted
//! program, named `branch_op_L42`, `loop_op_L50`, `case_op_L60`, `preproc_op_L70`. The
//! analysis says which values a finding was found with in those names; the user wrote
//! none of them. This module says it in the code's terms instead, and only the choices
//! that matter most: those the finding was found to need (another value alone did not
//! show it) or whose arm or loop the finding's calls are inside, then those that take
//! another arm than the first; the others are counted.

use std::collections::HashSet;

use syncguard_analyzer::model::{Block, Expr, Stmt};
use syncguard_analyzer::source::{FileId, Span};
use syncguard_analyzer::{CheckedFile, Diagnostic, Program};
use syncguard_grammar::extracted::SourceSpace;

use crate::sources::Language;

/// The analysis's note of the parameter values a finding was found with.
const FOUND_WITH: &str = "found with ";

/// How many choices a note names; the others are counted.
const NAMED: usize = 4;

/// Rewrite every "found with" note of `checked` whose parameters are all choices of the
/// `language` frontend.
pub fn in_source_terms(checked: &mut CheckedFile, language: Language, space: &SourceSpace, files: &[FileId]) {
    let program = &checked.program;
    let frontend = Frontend { language, space, files };
    for diagnostic in &mut checked.diagnostics {
        if !diagnostic.notes.iter().any(|note| note.starts_with(FOUND_WITH)) {
            continue;
        }
        let mut around = choices_around(program, &involved_spans(diagnostic));
        around.extend(diagnostic.decisive_params.iter().copied());
        for note in &mut diagnostic.notes {
            if let Some(rewritten) = note
                .strip_prefix(FOUND_WITH)
                .and_then(|assignment| frontend.describe(assignment, program, &around))
            {
                *note = rewritten;
            }
        }
    }
}

fn involved_spans(diagnostic: &Diagnostic) -> HashSet<&Span> {
    std::iter::once(&diagnostic.primary)
        .chain(diagnostic.related.iter().map(|related| &related.span))
        .collect()
}

/// The parameters in the conditions and loop bounds around the calls at `spans`.
fn choices_around(program: &Program, spans: &HashSet<&Span>) -> HashSet<usize> {
    let mut found = HashSet::new();
    for thread in &program.threads {
        collect_around(&thread.body, spans, &mut Vec::new(), &mut found);
    }
    found
}

fn collect_around(block: &Block, spans: &HashSet<&Span>, enclosing: &mut Vec<usize>, found: &mut HashSet<usize>) {
    for stmt in block {
        let (guard, blocks): (Option<&Expr>, Vec<&Block>) = match stmt {
            Stmt::Op(op) => {
                if spans.contains(&op.span) {
                    found.extend(enclosing.iter().copied());
                }
                continue;
            }
            Stmt::If {
                cond, then, otherwise, ..
            } => (Some(cond), vec![then, otherwise]),
            Stmt::For { end, body, .. } => (Some(end), vec![body]),
            Stmt::While { cond, body, .. } => (Some(cond), vec![body]),
            Stmt::QueryBranch { done, pending, .. } => (None, vec![done, pending]),
            Stmt::Return(_) | Stmt::Assign { .. } => continue,
        };
        let depth = enclosing.len();
        if let Some(guard) = guard {
            params_in(guard, enclosing, 0);
        }
        for block in blocks {
            collect_around(block, spans, enclosing, found);
        }
        enclosing.truncate(depth);
    }
}

/// The parameters an expression names (expressions nest no deeper than a frontend builds).
fn params_in(expr: &Expr, out: &mut Vec<usize>, depth: usize) {
    if depth > 64 {
        return;
    }
    match expr {
        Expr::Param(id) => out.push(id.index()),
        Expr::Unary(_, operand) => params_in(operand, out, depth + 1),
        Expr::Binary(_, left, right) => {
            params_in(left, out, depth + 1);
            params_in(right, out, depth + 1);
        }
        Expr::Cond(parts) => parts.iter().for_each(|part| params_in(part, out, depth + 1)),
        _ => {}
    }
}

/// Where a program's choices come from.
struct Frontend<'s> {
    language: Language,
    space: &'s SourceSpace,
    files: &'s [FileId],
}

/// One choice and the value a finding needs.
struct Choice {
    kind: Kind,
    /// `op.cpp:42`.
    place: String,
    value: i64,
    /// The value that takes a branch's `then` arm: the C/C++ frontend numbers the arms
    /// from the first (`0`), the Python one tests `== 1`.
    then: i64,
}

#[derive(Clone, Copy)]
enum Kind {
    Branch,
    Loop,
    Case,
    Preproc,
}

impl Choice {
    fn text(&self) -> String {
        let Choice { place, value, .. } = self;
        match self.kind {
            Kind::Branch if *value == self.then => format!("the condition at {place} is true"),
            Kind::Branch => format!("the condition at {place} is false"),
            Kind::Loop if *value == 1 => format!("the loop at {place} runs once"),
            Kind::Loop => format!("the loop at {place} runs {value} times"),
            Kind::Case => format!("the `switch` at {place} takes case {}", value + 1),
            Kind::Preproc => format!("the `#if` at {place} takes arm {}", value + 1),
        }
    }
}

impl Frontend<'_> {
    /// `branch_op_L42 = 0, loop_op_L50 = 2` in the code's terms; `None` unless every
    /// name is a choice of the program. `around`: the parameters (by index) around the
    /// finding's calls.
    fn describe(&self, assignment: &str, program: &Program, around: &HashSet<usize>) -> Option<String> {
        let then = match self.language {
            Language::Cpp => 0,
            Language::Python => 1,
        };
        let mut choices = assignment
            .split(", ")
            .map(|pair| {
                let (name, value) = pair.split_once(" = ")?;
                let kind = kind_of(name)?;
                let index = program.params.iter().position(|param| param.name == name)?;
                let param = &program.params[index];
                let source = self.files.iter().position(|file| *file == param.span.file)?;
                let choice = Choice {
                    kind,
                    place: self.space.file_line_at(source, param.span.range.start),
                    value: value.parse().ok()?,
                    then,
                };
                Some((around.contains(&index), choice))
            })
            .collect::<Option<Vec<(bool, Choice)>>>()?;
        // Around the finding's calls first, then another arm than the first.
        choices.sort_by_key(|(around, choice)| (!around, choice.value == 0));
        let shown = choices
            .iter()
            .take_while(|(around, choice)| *around || choice.value != 0)
            .take(NAMED)
            .count();
        let named: Vec<String> = choices[..shown].iter().map(|(_, choice)| choice.text()).collect();
        let others = choices.len() - shown;
        let plural = if others == 1 { "" } else { "s" };
        Some(match (named.is_empty(), others) {
            (false, 0) => format!("found when {}", named.join(", ")),
            (false, _) => format!(
                "found when {} (with {others} other undecided condition{plural} as first checked)",
                named.join(", ")
            ),
            (true, _) => format!("found on the first path checked through {others} undecided condition{plural}"),
        })
    }
}

/// The kind of a choice by the name its frontend gives it: `branch_` (or `loop_`,
/// `case_`, `preproc_`), a file stem, `_L` and a line, and a count where a line has
/// several (`_2`).
fn kind_of(name: &str) -> Option<Kind> {
    let (prefix, rest) = name.split_once('_')?;
    let kind = match prefix {
        "branch" => Kind::Branch,
        "loop" => Kind::Loop,
        "case" => Kind::Case,
        "preproc" => Kind::Preproc,
        _ => return None,
    };
    let (_, line) = rest.rsplit_once("_L")?;
    let line = line.split('_').next()?;
    (!line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_told_by_their_names() {
        assert!(matches!(kind_of("branch_op_L42"), Some(Kind::Branch)));
        assert!(matches!(kind_of("loop_my_file_L7_2"), Some(Kind::Loop)));
        assert!(matches!(kind_of("case_op_L60"), Some(Kind::Case)));
        assert!(kind_of("N").is_none());
        assert!(kind_of("branch_op").is_none());
        assert!(kind_of("step_L3").is_none());
    }

    #[test]
    fn choices_read_as_the_code() {
        let choice = |kind, value| Choice {
            kind,
            place: "op.cpp:42".into(),
            value,
            then: 0,
        };
        assert_eq!(choice(Kind::Branch, 0).text(), "the condition at op.cpp:42 is true");
        assert_eq!(choice(Kind::Branch, 1).text(), "the condition at op.cpp:42 is false");
        assert_eq!(choice(Kind::Loop, 0).text(), "the loop at op.cpp:42 runs 0 times");
        assert_eq!(choice(Kind::Loop, 1).text(), "the loop at op.cpp:42 runs once");
        assert_eq!(choice(Kind::Case, 2).text(), "the `switch` at op.cpp:42 takes case 3");
    }
}
