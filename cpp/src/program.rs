//! The frontend's face: a set of C/C++ files read together (helpers are inlined across
//! them), each entry point extracted as a `.sync` program and lowered with spans in the
//! files the user wrote; `convert` prints the extracted programs.

use std::ops::Range;

use syncguard_grammar::ast;
use syncguard_grammar::lower::{Lowered, lower_mapped};
use syncguard_model::api::Api;
use syncguard_model::source::{FileId, Span};

use crate::extract::{self, Extracted};
use crate::index::{FnDef, Index, Unit, defines_text};

/// One file's path (as shown) and text.
pub struct SourceText {
    pub path: String,
    pub text: String,
}

/// Files read together: their parse trees and the index across them.
pub struct Project {
    units: Vec<Unit>,
    defines: Unit,
    options: Options,
}

/// What the command line says about the sources.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only these functions are entry points (`--entry`; a name or `Class::name`).
    pub entries: Vec<String>,
    /// The rank counts SPMD code is checked for (`--ranks 2..=8`), over the files'
    /// `// syncguard: ranks` comments and the default.
    pub ranks: Option<Vec<i64>>,
    /// Preprocessor definitions (`-D NAME` is `NAME=1`), which decide `#if`/`#ifdef`.
    pub defines: Vec<(String, String)>,
    /// Calls may fail (`--error-paths`): branches on return codes are checked both ways.
    pub error_paths: bool,
}

/// `4`, `2..=8` or `2..9`: the rank counts a `--ranks` value or a `// syncguard: ranks`
/// comment names; `None` if it names none (or more than 64).
pub fn parse_rank_counts(spec: &str) -> Option<Vec<i64>> {
    let spec = spec.trim();
    let (low, high) = match spec.split_once("..") {
        Some((low, high)) => {
            let inclusive = high.starts_with('=');
            let high: i64 = high.trim_start_matches('=').trim().parse().ok()?;
            (low.trim().parse().ok()?, if inclusive { high } else { high - 1 })
        }
        None => {
            let count = spec.split_whitespace().next()?.parse().ok()?;
            (count, count)
        }
    };
    (1 <= low && low <= high && high - low < MAX_RANK_COUNTS && high <= 1 << 16).then(|| (low..=high).collect())
}

/// Something the frontend could not follow, in file `source` (an index into the
/// project's sources) at `range`.
#[derive(Clone, Debug)]
pub struct Unresolved {
    pub source: usize,
    pub range: Range<usize>,
    pub message: String,
}

/// The program one entry point runs.
pub struct EntryProgram {
    /// The function, as written (`main`, `Runner::Run`).
    pub entry: String,
    /// How many ranks run it: SPMD code is extracted once per rank count.
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
}

/// Parse `sources` and index them together.
pub fn read_project(sources: Vec<SourceText>, options: Options) -> Project {
    use rayon::prelude::*;
    // One byte between files, so that no span is in two of them.
    let bases: Vec<usize> = sources
        .iter()
        .scan(0, |next, source| {
            let base = *next;
            *next += source.text.len() + 1;
            Some(base)
        })
        .collect();
    let base = sources.iter().map(|source| source.text.len() + 1).sum();
    let units: Vec<Unit> = sources
        .into_par_iter()
        .zip(bases)
        .map(|(source, base)| Unit::parse(source.path, source.text, base))
        .collect();
    // Definitions on the command line come first: the first definition of a name wins.
    let mut text: String = options
        .defines
        .iter()
        .map(|(name, value)| format!("auto {name} = ({value});\n"))
        .collect();
    text.push_str(&defines_text(&units));
    let defines = Unit::parse(String::new(), text, base);
    Project {
        units,
        defines,
        options,
    }
}

impl Project {
    /// Every entry point (a function that no analyzed function calls or mentions,
    /// `main`, not a kernel), extracted; in file and line order.
    pub fn entries(&self) -> Vec<EntryProgram> {
        // The walk recurses with the code's nesting (bounded by `MAX_NESTING`, with
        // frames larger than the default 2 MiB stacks allow for): its own threads.
        match rayon::ThreadPoolBuilder::new().stack_size(WALK_STACK).build() {
            Ok(pool) => pool.install(|| self.entries_here()),
            Err(_) => self.entries_here(),
        }
    }

    fn entries_here(&self) -> Vec<EntryProgram> {
        let mut index = Index::build(&self.units, &self.defines);
        index
            .defined
            .extend(self.options.defines.iter().map(|(name, _)| name.clone()));
        let index = index;
        use rayon::prelude::*;
        let fused = self.fused_superkernels();
        let in_fused = |def: &FnDef| {
            def.kernel
                && fused
                    .iter()
                    .any(|(_, kernels)| kernels.iter().any(|k| k == def.simple_name()))
        };
        let mut entries: Vec<EntryProgram> = index
            .functions
            .par_iter()
            .filter(|def| match self.options.entries.as_slice() {
                [] => {
                    self.is_entry_kind(def)
                        && !in_fused(def)
                        && (def.simple_name() == "main" || !index.mentioned.contains(def.simple_name()))
                }
                named => named
                    .iter()
                    .any(|name| *name == def.qualified || name == def.simple_name()),
            })
            .flat_map_iter(|def| self.extract_entry(&index, def))
            .collect();
        for (name, kernels) in &fused {
            let defs: Option<Vec<&FnDef>> = kernels
                .iter()
                .map(|kernel| {
                    index
                        .functions
                        .iter()
                        .find(|def| def.kernel && def.simple_name() == kernel)
                })
                .collect();
            if let Some(defs) = defs.filter(|defs| !defs.is_empty()) {
                entries
                    .push(self.entry_program(extract::extract_fused(&index, name, &defs, self.options.error_paths), 1));
            }
        }
        entries.sort_by_key(|entry| (entry.source, entry.range.start));
        entries
    }

    /// `// syncguard: superkernel NAME(aiv: 48) = k1, k2` lines: the SuperKernels the
    /// graph fuses, which the kernel sources cannot say, with their kernels in order.
    fn fused_superkernels(&self) -> Vec<(String, Vec<String>)> {
        let mut fused = Vec::new();
        for unit in &self.units {
            for (at, _) in unit.text.match_indices("syncguard: superkernel") {
                let line = unit.text[at + "syncguard: superkernel".len()..]
                    .lines()
                    .next()
                    .unwrap_or("");
                let Some((head, kernels)) = line.split_once('=') else {
                    continue;
                };
                let name = head.split('(').next().unwrap_or("").trim();
                let kernels: Vec<String> = kernels
                    .split(',')
                    .map(|kernel| kernel.trim().to_string())
                    .filter(|kernel| !kernel.is_empty())
                    .collect();
                if !name.is_empty() && !kernels.is_empty() {
                    fused.push((name.to_string(), kernels));
                }
            }
        }
        fused
    }

    /// Host functions, and kernels that use SuperKernel early start (their per-core
    /// code is what the SG4xx rules check); not device helpers, constructors or
    /// destructors.
    fn is_entry_kind(&self, def: &FnDef) -> bool {
        if def.kernel {
            // The calls may be in the kernel class's methods, in the same file.
            let text = &self.units[def.unit].text;
            return text.contains("SetNextTaskStart") || text.contains("WaitPreTaskEnd");
        }
        !def.device && !is_special_member(def)
    }

    /// The programs of one entry point: one, or for SPMD code (it asks for its rank)
    /// one per rank count, the configured ones or 2 to 8.
    fn extract_entry(&self, index: &Index, def: &FnDef) -> Vec<EntryProgram> {
        let configured = self
            .options
            .ranks
            .clone()
            .or_else(|| rank_counts(&self.units[def.unit].text));
        let counts = match configured {
            Some(counts) => counts,
            None => {
                let once = extract::extract(index, def, None, self.options.error_paths);
                if !once.wants_ranks {
                    return vec![self.entry_program(once, 1)];
                }
                DEFAULT_RANKS.collect()
            }
        };
        counts
            .into_iter()
            .map(|count| {
                let extracted = extract::extract(index, def, (count > 1).then_some(count), self.options.error_paths);
                self.entry_program(extracted, count)
            })
            .collect()
    }

    fn entry_program(&self, extracted: Extracted, ranks: i64) -> EntryProgram {
        let (source, range) = self.locate(&extracted.span);
        let unresolved = |item: extract::Unresolved| {
            let (source, range) = self.locate(&item.span);
            Unresolved {
                source,
                range,
                message: item.message,
            }
        };
        EntryProgram {
            ranks,
            entry: extracted.entry,
            source,
            range,
            syntax: extracted.file,
            api_calls: extracted.api_calls,
            unresolved: extracted.unresolved.into_iter().map(unresolved).collect(),
            incomplete: extracted.incomplete.map(unresolved),
            unchecked_returns: extracted
                .unchecked
                .into_iter()
                .map(|(range, api)| {
                    let (source, range) = self.locate(&range);
                    (source, range, api)
                })
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.units.len()
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Which file a range of the extractor's byte space is in, and where.
    fn locate(&self, range: &Range<usize>) -> (usize, Range<usize>) {
        let position = self
            .units
            .partition_point(|unit| unit.base <= range.start)
            .saturating_sub(1);
        let unit = &self.units[position.min(self.units.len().saturating_sub(1))];
        let start = range.start.saturating_sub(unit.base).min(unit.text.len());
        let end = range.end.saturating_sub(unit.base).clamp(start, unit.text.len());
        (position, start..end)
    }

    /// Lower an entry's program; `files[k]` is the id the k-th source was registered as.
    pub fn lower(&self, entry: &EntryProgram, files: &[FileId]) -> Lowered {
        let place = |range: &Range<usize>| {
            let (source, local) = self.locate(range);
            Span::new(files[source], local)
        };
        lower_mapped(
            &entry.syntax,
            Span::new(files[entry.source], entry.range.clone()),
            &place,
        )
    }

    /// The entry's program as `.sync` text, each statement with a `// file:line`
    /// comment naming the C/C++ code it came from.
    pub fn to_sync(&self, entry: &EntryProgram) -> String {
        let mut file = entry.syntax.clone();
        let mut origins = Vec::new();
        visit_stmts(&mut file.stmts, &mut |stmt| origins.push(stmt.span.clone()));
        syncguard_grammar::spanless::strip_spans(&mut file);
        let mut comments = Vec::new();
        let mut line = 0;
        renumber(
            &mut file.stmts,
            &mut line,
            &mut origins.into_iter(),
            &mut |at, origin| {
                let (source, range) = self.locate(&origin);
                let unit = &self.units[source];
                let row = unit.text[..range.start].matches('\n').count() + 1;
                let name = std::path::Path::new(&unit.path)
                    .file_name()
                    .map_or_else(|| unit.path.clone(), |name| name.to_string_lossy().into_owned());
                comments.push(ast::Comment {
                    text: format!("// {name}:{row}"),
                    span: at + 2..at + 3,
                });
            },
        );
        let layout: String = std::iter::repeat_n(format!("{}\n", " ".repeat(LINE - 1)), line + 2).collect();
        let parsed = syncguard_grammar::Parsed {
            file,
            errors: Vec::new(),
            comments,
        };
        syncguard_grammar::format(&layout, &parsed)
    }
}

/// The stack of each thread that walks entry points.
const WALK_STACK: usize = 256 << 20;

/// The rank counts SPMD code is checked for when nothing configures them.
const DEFAULT_RANKS: std::ops::RangeInclusive<i64> = 2..=8;
/// The most rank counts one entry point is extracted for.
const MAX_RANK_COUNTS: i64 = 64;

/// `// syncguard: ranks 4` or `// syncguard: ranks 2..=8` in a file: the rank counts its
/// entry points run on.
fn rank_counts(text: &str) -> Option<Vec<i64>> {
    let at = text.find("syncguard: ranks")?;
    parse_rank_counts(text[at + "syncguard: ranks".len()..].lines().next()?)
}

/// Constructors and destructors run where objects are made and go away, never alone.
fn is_special_member(def: &crate::index::FnDef) -> bool {
    let name = def.simple_name();
    name.starts_with('~') || def.class.as_deref() == Some(name)
}

/// Bytes per line of the synthetic layout `to_sync` prints through.
const LINE: usize = 16;

/// Visit statements in pre-order (nested blocks after their statement).
fn visit_stmts(stmts: &mut [ast::Stmt], visit: &mut dyn FnMut(&mut ast::Stmt)) {
    for stmt in stmts {
        visit(stmt);
        for block in blocks_of(stmt) {
            visit_stmts(&mut block.stmts, visit);
        }
    }
}

fn blocks_of(stmt: &mut ast::Stmt) -> Vec<&mut ast::Block> {
    match &mut stmt.kind {
        ast::StmtKind::If { then, otherwise, .. } => {
            let mut blocks = vec![then];
            let mut next = otherwise.as_mut();
            while let Some(branch) = next {
                match branch {
                    ast::Else::Block(block) => {
                        blocks.push(block);
                        next = None;
                    }
                    ast::Else::If(nested) => {
                        let ast::StmtKind::If { then, otherwise, .. } = &mut nested.kind else {
                            break;
                        };
                        blocks.push(then);
                        next = otherwise.as_mut();
                    }
                }
            }
            blocks
        }
        ast::StmtKind::For { body, .. }
        | ast::StmtKind::While { body, .. }
        | ast::StmtKind::Thread { body, .. }
        | ast::StmtKind::GeOp { body, .. }
        | ast::StmtKind::SuperKernel { body, .. }
        | ast::StmtKind::SubKernel { body, .. } => vec![body],
        _ => Vec::new(),
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
        for block in blocks_of(stmt) {
            block.span = at..at + 1;
            renumber(&mut block.stmts, line, origins, comment);
            block.span.end = *line * LINE;
        }
    }
}
