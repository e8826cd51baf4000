//! Reading a `.sync` file: bytes to Program plus diagnostics, never failing.

use syncguard_grammar::SyntaxError;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{CannPolicy, Program, Target};
use crate::rules::SyntaxErrorRule;
use crate::smt::{Proof, SmtOptions, Unproved};
use crate::source::{FileId, SourceFile, Sources, Span, decode_utf8_lossless_offsets};
use syncguard_grammar::lower::{Lowered, lower};

/// One checked file: its Program (possibly partial) and every problem found in it.
#[derive(Debug)]
pub struct CheckedFile {
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
    /// Properties z3 proved for every parameter value.
    pub proofs: Vec<Proof>,
    /// Properties left to the concrete runs, with why.
    pub unproved: Vec<Unproved>,
}

impl CheckedFile {
    /// A file that was not analyzed (it does not parse, or is not a program).
    pub fn unanalyzed(program: Program, diagnostics: Vec<Diagnostic>) -> Self {
        CheckedFile {
            program,
            diagnostics,
            proofs: Vec::new(),
            unproved: Vec::new(),
        }
    }
}

/// Parse and lower a registered `.sync` file; `invalid_utf8` are the offsets of bytes
/// that were not UTF-8 (see [`check_sync_bytes`], which computes them).
pub fn check_sync_file(file: FileId, source: &SourceFile, invalid_utf8: &[usize]) -> CheckedFile {
    check_sync_file_with(file, source, invalid_utf8, &Overrides::default())
}

fn check_sync_file_with(
    file: FileId,
    source: &SourceFile,
    invalid_utf8: &[usize],
    overrides: &Overrides,
) -> CheckedFile {
    if let Some(nul) = source.text.find('\0') {
        // Text files never contain NUL; reporting every byte of an object file helps nobody.
        let diagnostic = Diagnostic::new(
            &SyntaxErrorRule::INFO,
            Span::new(file, nul..nul + 1),
            "this is a binary file, not a `.sync` program",
        )
        .with_label("NUL byte")
        .with_help("pass `.sync` sources (or, for call logs, `.jsonl` traces)");
        return CheckedFile::unanalyzed(Program::new(Span::new(file, 0..0)), vec![diagnostic]);
    }
    let parsed = syncguard_grammar::parse(&source.text);
    let mut diagnostics: Vec<Diagnostic> = invalid_utf8
        .iter()
        .map(|&offset| {
            Diagnostic::new(
                &SyntaxErrorRule::INFO,
                Span::new(file, offset..offset + 1),
                "invalid UTF-8 byte",
            )
            .with_label("this byte is not part of any UTF-8 character")
            .with_help("save the file as UTF-8")
        })
        .collect();
    diagnostics.extend(
        parsed
            .errors
            .iter()
            .filter(|error| !invalid_utf8.contains(&error.span.start))
            .map(|error| syntax_diagnostic(file, error)),
    );
    if parsed.file.stmts.is_empty() && parsed.errors.is_empty() && invalid_utf8.is_empty() {
        // A truncated or never-written file would otherwise pass CI as "verified".
        diagnostics.push(
            Diagnostic::new(
                &SyntaxErrorRule::INFO,
                Span::new(file, 0..0),
                "the file has no statements: nothing to verify",
            )
            .with_label("expected at least one statement")
            .with_help("a `.sync` file describes at least one call; see grammar/SYNC.md"),
        );
    }
    let lowered = lower(&parsed.file, file, source.text.len());
    // The syntax tree is not needed past lowering; free it before the analysis peaks.
    drop(parsed);
    check_lowered(lowered, diagnostics, overrides)
}

/// Analyze what a frontend lowered, after `reading` (the problems found reading the
/// file); every source frontend ends here, so a `.sync` file and the C/C++ code it
/// describes get the same findings.
pub fn check_lowered(lowered: Lowered, reading: Vec<Diagnostic>, overrides: &Overrides) -> CheckedFile {
    let mut diagnostics = reading;
    let mut program = lowered.program;
    diagnostics.extend(lowered.diagnostics);
    diagnostics.extend(
        lowered
            .used_before_let
            .iter()
            .map(crate::rules::event_use_before_create::before_creation),
    );
    if let Some(target) = overrides.target {
        program.settings.target = target;
    }
    if let Some(cann) = overrides.cann {
        program.settings.cann = cann;
    }
    // Analysis of a partly lowered file would report the consequences of its syntax
    // and name errors (a misspelt handle makes its wait hang): fix those first. An
    // unknown API is a warning: the program is analyzed without its calls.
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Diagnostic::sort(&mut diagnostics);
        return CheckedFile::unanalyzed(program, diagnostics);
    }
    let analyzed = crate::analysis::analyze_with(&program, &overrides.smt);
    // The calls left out come first: they may be the cause of what the analysis finds.
    Diagnostic::sort(&mut diagnostics);
    diagnostics.extend(analyzed.diagnostics);
    CheckedFile {
        program,
        diagnostics,
        proofs: analyzed.proofs,
        unproved: analyzed.unproved,
    }
}

/// Options given on the command line: policies that win over the file's own settings,
/// and how the solver is used.
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    pub target: Option<Target>,
    pub cann: Option<CannPolicy>,
    pub smt: SmtOptions,
}

/// Register `bytes` under `path` in `sources` and check it as a `.sync` file.
pub fn check_sync_bytes(sources: &mut Sources, path: impl Into<String>, bytes: &[u8]) -> CheckedFile {
    check_sync_bytes_with(sources, path, bytes, &Overrides::default())
}

/// [`check_sync_bytes`] with command-line policies.
pub fn check_sync_bytes_with(
    sources: &mut Sources,
    path: impl Into<String>,
    bytes: &[u8],
    overrides: &Overrides,
) -> CheckedFile {
    // A byte order mark is no part of the program, and would count as a column.
    let bytes = bytes.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(bytes);
    let (text, invalid_utf8) = decode_utf8_lossless_offsets(bytes);
    let file = sources.add(SourceFile::new(path, text));
    check_sync_file_with(file, sources.get(file), &invalid_utf8, overrides)
}

fn syntax_diagnostic(file: FileId, error: &SyntaxError) -> Diagnostic {
    let mut diagnostic = Diagnostic::new(
        &SyntaxErrorRule::INFO,
        Span::new(file, error.span.clone()),
        error.message.clone(),
    )
    .with_label(error.label.clone());
    for (what, span) in &error.contexts {
        diagnostic = diagnostic.with_related(Span::new(file, span.clone()), format!("while parsing this {what}"));
    }
    if let Some(help) = &error.help {
        diagnostic = diagnostic.with_help(help.clone());
    }
    diagnostic
}
