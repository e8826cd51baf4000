//! Programs extracted from code in another language (C/C++, Python): each entry point
//! becomes a `.sync` syntax tree whose spans are offsets into one byte space that holds
//! every source file of the run, one after another. This module maps that space back
//! to the files, lowers an entry with spans in the files the user wrote, and prints it
//! as `.sync` text with a `// file:line` comment on every statement (`convert`).
//!
//! Frontends share it so that the binary checks every source language the same way.

use std::collections::HashMap;
use std::ops::Range;

use syncguard_model::api::Api;
use syncguard_model::model::{ObjectKind, Program};
use syncguard_model::source::{FileId, Span};

use crate::ast;
use crate::lower::{Lowered, lower_mapped};

/// The stack of a thread that walks a frontend's entry points: the walks recurse with
/// the code's nesting (bounded), with frames larger than default stacks allow for.
pub const WALK_STACK: usize = 256 << 20;

/// The threads the source frontends walk entry points on: one pool for the process,
/// made at first use (`None` if no thread could be started: then the caller's own).
pub fn walk_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|index| format!("syncguard-walk-{index}"))
            .stack_size(WALK_STACK)
            .build()
            .ok()
    })
    .as_ref()
}

/// One file's path (as shown) and text.
pub struct SourceText {
    pub path: String,
    pub text: String,
}

/// Something a frontend could not follow, in file `source` (an index into the run's
/// sources) at `range`.
#[derive(Clone, Debug)]
pub struct Unresolved {
    pub source: usize,
    pub range: Range<usize>,
    pub message: String,
    /// The `.sync` names of the objects a call left out uses: what it did to them is
    /// unknown, and so is every finding that rests on them. A GE op is named
    /// `op NAME` ([`GE_OP_PREFIX`]): its task list rests on something not followed.
    pub touches: Vec<String>,
    /// A choice the reader walked every way (an `#if` the flags do not decide): said,
    /// but nothing rests on a guess, so no finding is set aside for it.
    pub assumption: bool,
    /// A kernel call that only moves data (a vector function through raw pointers): it
    /// orders nothing, so of a kernel's findings only its races rest on it.
    pub data_only: bool,
}

/// How an [`Unresolved`] item names a GE op whose task list rests on it.
pub const GE_OP_PREFIX: &str = "op ";

/// The program one entry point runs.
#[derive(Clone)]
pub struct EntryProgram {
    /// The function, as written (`main`, `Runner::Run`, `runner:ModelRunner.execute`).
    pub entry: String,
    /// How many ranks run it: SPMD code is extracted once per rank count (1 otherwise).
    pub ranks: i64,
    pub source: usize,
    /// The entry's name in `source`.
    pub range: Range<usize>,
    pub syntax: ast::File,
    /// Catalogued API calls and launches the program holds: none means the entry
    /// does no synchronization at all.
    pub api_calls: usize,
    pub unresolved: Vec<Unresolved>,
    /// Why the extraction stopped early, if it did: the rest of the entry is unchecked.
    pub incomplete: Option<Unresolved>,
    /// Calls whose return code is discarded (SG701): file, range, API.
    pub unchecked_returns: Vec<(usize, Range<usize>, &'static Api)>,
    /// The handles as the source writes them: `.sync` name → text (`pipeline_inReady` →
    /// `inReady_`), for messages ([`Object::written`]).
    pub written: Vec<(String, String)>,
    /// Which walk made it: a program reused from an earlier read of the same files
    /// (see [`crate::reuse`]) keeps its walk's number, moved with its files; 0 for one
    /// no cache saw.
    pub walk: u64,
}

/// Give the program's objects the names the source writes them with; an element of a
/// handle array (`workers[2]`) is named after its array as written. Objects the source
/// writes alike (a loop's iterations, two instances of a class) are numbered in the
/// order they are made (`stream #1`, `stream #2`; see [`Object::written`]).
fn name_as_written(program: &mut Program, written: &[(String, String)]) {
    if written.is_empty() {
        return;
    }
    let by_name: HashMap<&str, &str> = written
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let mut shared: HashMap<&str, usize> = HashMap::new();
    for object in &program.objects {
        if let Some(text) = by_name.get(object.name.as_str()) {
            *shared.entry(text).or_default() += 1;
        }
    }
    let mut made: HashMap<&str, usize> = HashMap::new();
    for at in 0..program.objects.len() {
        let object = &program.objects[at];
        let shown = match &object.kind {
            ObjectKind::Element { array, .. } => {
                let array = program.object(*array);
                let index = object.name.strip_prefix(array.name.as_str());
                array
                    .written
                    .as_ref()
                    .zip(index)
                    .map(|(text, index)| format!("{text}{index}"))
            }
            _ => by_name.get(object.name.as_str()).map(|&text| match shared[text] {
                1 => text.to_string(),
                _ => {
                    let order = made.entry(text).or_default();
                    *order += 1;
                    format!("{text} #{order}")
                }
            }),
        };
        if shown.is_some() {
            program.objects[at].written = shown;
        }
    }
}

/// The byte space of a run's sources: file `k` starts at `bases[k]`, one byte after
/// the previous file ends, so that no offset is in two files.
pub struct SourceSpace {
    files: Vec<SpaceFile>,
}

struct SpaceFile {
    path: String,
    base: usize,
    len: usize,
    /// Offsets (in the file) where its lines start.
    line_starts: Vec<usize>,
}

impl SourceSpace {
    /// Lay `sources` out one after another; returns the space and each file's base.
    pub fn new(sources: &[SourceText]) -> (SourceSpace, Vec<usize>) {
        let mut next = 0;
        let files: Vec<SpaceFile> = sources
            .iter()
            .map(|source| {
                let base = next;
                next += source.text.len() + 1;
                let line_starts = std::iter::once(0)
                    .chain(source.text.match_indices('\n').map(|(at, _)| at + 1))
                    .collect();
                SpaceFile {
                    path: source.path.clone(),
                    base,
                    len: source.text.len(),
                    line_starts,
                }
            })
            .collect();
        let bases = files.iter().map(|file| file.base).collect();
        (SourceSpace { files }, bases)
    }

    /// Where the space ends: the base a file appended after the sources would get.
    pub fn end(&self) -> usize {
        self.files.last().map_or(0, |file| file.base + file.len + 1)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Which file a range of the space is in, and where in it (clamped to the file).
    pub fn locate(&self, range: &Range<usize>) -> (usize, Range<usize>) {
        let position = self
            .files
            .partition_point(|file| file.base <= range.start)
            .saturating_sub(1);
        let Some(file) = self.files.get(position) else {
            return (0, 0..0);
        };
        let start = range.start.saturating_sub(file.base).min(file.len);
        let end = range.end.saturating_sub(file.base).clamp(start, file.len);
        (position, start..end)
    }

    /// Lower an entry's program; `files[k]` is the id the k-th source was registered as.
    pub fn lower(&self, entry: &EntryProgram, files: &[FileId]) -> Lowered {
        let place = |range: &Range<usize>| {
            let (source, local) = self.locate(range);
            Span::new(files[source], local)
        };
        let mut lowered = lower_mapped(
            &entry.syntax,
            Span::new(files[entry.source], entry.range.clone()),
            &place,
        );
        name_as_written(&mut lowered.program, &entry.written);
        lowered
    }

    /// The names the call statement at `span` (a span of the user's files, as lowering
    /// reports it) refers to: what a call the lowering could not take uses.
    pub fn names_at<'e>(&self, entry: &'e EntryProgram, files: &[FileId], span: &Span) -> Vec<String> {
        let mut innermost: Option<(&ast::Stmt, usize)> = None;
        let mut consider = |stmt: &'e ast::Stmt| {
            let (source, range) = self.locate(&stmt.span);
            let inside = files.get(source) == Some(&span.file)
                && range.start <= span.range.start
                && span.range.end <= range.end.max(range.start + 1);
            if inside && innermost.is_none_or(|(_, len)| range.len() < len) {
                innermost = Some((stmt, range.len()));
            }
        };
        visit_stmts_ref(&entry.syntax.stmts, &mut consider, 0);
        let Some((stmt, _)) = innermost else {
            return Vec::new();
        };
        let call = match &stmt.kind {
            ast::StmtKind::Call(call) => Some(call),
            ast::StmtKind::Let { value, .. } => match &value.kind {
                ast::ExprKind::Call(call) => Some(&**call),
                _ => None,
            },
            _ => None,
        };
        call.map(|call| {
            call.args
                .iter()
                .flat_map(|arg| arg.value.names())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
    }

    /// The entry's program as `.sync` text, each statement with a `// file:line`
    /// comment naming the code it came from.
    pub fn to_sync(&self, entry: &EntryProgram) -> String {
        let mut file = entry.syntax.clone();
        let mut origins = Vec::new();
        visit_stmts(&mut file.stmts, &mut |stmt| origins.push(stmt.span.clone()));
        crate::spanless::strip_spans(&mut file);
        let mut comments = Vec::new();
        let mut line = 0;
        renumber(
            &mut file.stmts,
            &mut line,
            &mut origins.into_iter(),
            &mut |at, origin| {
                comments.push(ast::Comment {
                    text: format!("// {}", self.file_line(&origin)),
                    span: at + 2..at + 3,
                });
            },
        );
        let layout: String = std::iter::repeat_n(format!("{}\n", " ".repeat(LINE - 1)), line + 2).collect();
        let parsed = crate::Parsed {
            file,
            errors: Vec::new(),
            comments,
        };
        crate::format(&layout, &parsed)
    }

    /// `op.cpp:123`: the file name and line of offset `local` of source `source`.
    pub fn file_line_at(&self, source: usize, local: usize) -> String {
        match self.files.get(source) {
            Some(file) => self.file_line(&(file.base + local..file.base + local)),
            None => String::new(),
        }
    }

    /// `op.cpp:123`: the file name (without its folders) and line of a range of the space.
    fn file_line(&self, range: &Range<usize>) -> String {
        let (source, local) = self.locate(range);
        let Some(file) = self.files.get(source) else {
            return String::new();
        };
        let row = file.line_starts.partition_point(|start| *start <= local.start);
        let name = std::path::Path::new(&file.path)
            .file_name()
            .map_or_else(|| file.path.clone(), |name| name.to_string_lossy().into_owned());
        format!("{name}:{row}")
    }
}

/// Bytes per line of the synthetic layout `to_sync` prints through.
const LINE: usize = 16;

/// Visit statements in pre-order (nested blocks after their statement).
fn visit_stmts(stmts: &mut [ast::Stmt], visit: &mut dyn FnMut(&mut ast::Stmt)) {
    for stmt in stmts {
        visit(stmt);
        for block in stmt.blocks_mut() {
            visit_stmts(&mut block.stmts, visit);
        }
    }
}

/// Visit statements in pre-order, as `visit_stmts` does, without changing them; blocks
/// nested deeper than a frontend builds them are not entered.
fn visit_stmts_ref<'s>(stmts: &'s [ast::Stmt], visit: &mut dyn FnMut(&'s ast::Stmt), depth: usize) {
    const MAX_DEPTH: usize = 256;
    if depth > MAX_DEPTH {
        return;
    }
    for stmt in stmts {
        visit(stmt);
        for block in stmt.blocks() {
            visit_stmts_ref(&block.stmts, visit, depth + 1);
        }
    }
}

/// Give each statement a line of its own in the synthetic layout (in the pre-order
/// `visit_stmts` takes), and its block the lines up to its last statement's.
fn renumber(
    stmts: &mut [ast::Stmt],
    line: &mut usize,
    origins: &mut dyn Iterator<Item = Range<usize>>,
    comment: &mut dyn FnMut(usize, Range<usize>),
) {
    for stmt in stmts {
        let at = *line * LINE;
        *line += 1;
        stmt.span = at..at + 1;
        if let Some(origin) = origins.next() {
            comment(at, origin);
        }
        for block in stmt.blocks_mut() {
            block.span = at..at + 1;
            renumber(&mut block.stmts, line, origins, comment);
            block.span.end = *line * LINE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> SourceSpace {
        let sources = [
            SourceText {
                path: "dir/a.cpp".into(),
                text: "one\ntwo\n".into(),
            },
            SourceText {
                path: "b.py".into(),
                text: "x\ny\nz".into(),
            },
        ];
        SourceSpace::new(&sources).0
    }

    #[test]
    fn locates_ranges_in_their_files() {
        let space = space();
        assert_eq!(space.locate(&(4..7)), (0, 4..7));
        // a.cpp is 8 bytes, then one byte of gap: b.py starts at 9.
        assert_eq!(space.locate(&(11..12)), (1, 2..3));
        assert_eq!(space.locate(&(11..400)), (1, 2..5));
        assert_eq!(space.end(), 9 + 5 + 1);
    }

    #[test]
    fn names_file_and_line() {
        let space = space();
        assert_eq!(space.file_line(&(4..5)), "a.cpp:2");
        assert_eq!(space.file_line(&(13..14)), "b.py:3");
    }

    #[test]
    fn objects_are_named_as_written_and_numbered_where_written_alike() {
        let text = "let a = aclrtCreateStream();\nlet b = aclrtCreateStream();\nlet c = aclrtCreateStream();\nlet d = aclrtCreateStream();\n";
        let parsed = crate::parse(text);
        let mut program = crate::lower::lower(&parsed.file, FileId(0), text.len()).program;
        let written =
            [("a", "copy_"), ("b", "stream"), ("c", "stream")].map(|(name, text)| (name.to_string(), text.to_string()));
        name_as_written(&mut program, &written);
        let shown: Vec<&str> = program.objects.iter().skip(2).map(|object| object.shown()).collect();
        assert_eq!(shown, ["copy_", "stream #1", "stream #2", "d"]);
    }
}
