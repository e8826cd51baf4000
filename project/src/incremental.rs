//! Checking a project again after an edit, as an editor does on every keystroke:
//! files whose text is unchanged are not parsed again, and an entry point whose
//! extracted program is the one checked before (moved with the edit) keeps its
//! findings, moved too. Only the entry points the edit changed are checked.
//!
//! Reuse is exact. A program is compared with the stored one after each span of the
//! stored one is moved through the edit: a span before the edited bytes stays, one
//! after them moves by the change in length, and one that touches them cannot move,
//! so the entry point is checked again. Spans after an edit that adds or removes lines
//! do not move either: a finding's text may name a line (`rank.cpp:12`).

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;
use syncguard_analyzer::source::{FileId, Span};
use syncguard_analyzer::{CheckedFile, Overrides, Sources};
use syncguard_grammar::ast;
use syncguard_grammar::extracted::{EntryProgram, SourceSpace};
use syncguard_model::Program;

use crate::progress::Progress;
use crate::sources::{
    EntryChecked, FrontendCaches, ReadSources, SourceDocument, SourceFindings, SourceOptions, check_entry,
    merge_entries, read_documents_cached,
};

/// What is kept from one check of a project to the next.
#[derive(Default)]
pub struct Incremental {
    frontends: FrontendCaches,
    entries: EntryResults,
    /// Entry points checked and reused by the latest check.
    pub last: Reuse,
}

/// How much of a check was reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    pub checked: usize,
    pub reused: usize,
}

impl Incremental {
    /// Register `documents` in `sources` and parse those whose text changed.
    pub fn read(
        &mut self,
        sources: &mut Sources,
        documents: Vec<SourceDocument>,
        options: &SourceOptions,
    ) -> ReadSources {
        read_documents_cached(sources, documents, options, &mut self.frontends)
    }

    /// Check every entry point that does some synchronization, as
    /// [`crate::sources::check_sources`] does; an entry point reused from the previous
    /// check carries an empty program (its findings, proofs and unproved properties
    /// are those of the previous check, moved).
    pub fn check(
        &mut self,
        read: &ReadSources,
        sources: &Sources,
        overrides: &Overrides,
        progress: &dyn Progress,
    ) -> SourceFindings {
        let settings = format!("{overrides:?}");
        if self.entries.settings != settings {
            self.entries = EntryResults {
                settings,
                ..EntryResults::default()
            };
        }
        let mut findings = SourceFindings {
            checked: Vec::new(),
            entries_with_calls: 0,
            unresolved: 0,
            undecided: 0,
        };
        self.last = Reuse::default();
        let mut kept = HashMap::new();
        let mut texts = HashMap::new();
        for group in &read.groups {
            let files = Layout::new(&group.files, sources, &mut self.entries.paths);
            let movers = files.movers(sources, &self.entries.texts);
            let entries: Vec<EntryProgram> = group.project.synchronizing_entries_cached(&mut self.frontends);
            progress.add_work(entries.len());
            let space = group.project.space();
            let results: Vec<Option<(EntryChecked, Option<Stored>, bool)>> = entries
                .par_iter()
                .map(|entry| {
                    if progress.cancelled() {
                        return None;
                    }
                    progress.start(&entry.entry);
                    let result = self.entries.result(entry, (&files, &movers, space), || {
                        check_entry(group.language, space, &group.files, entry, overrides, false)
                    });
                    progress.finish_one();
                    Some(result)
                })
                .collect();
            let mut merged = Vec::new();
            for result in results {
                let Some((checked, stored, was_reused)) = result else {
                    merged.push(None);
                    continue;
                };
                if was_reused {
                    self.last.reused += 1;
                } else {
                    self.last.checked += 1;
                }
                if let Some(stored) = stored {
                    kept.entry(stored.program.key()).or_insert_with(Vec::new).push(stored);
                }
                merged.push(Some(checked));
            }
            let found = merge_entries(&entries, merged);
            findings.checked.extend(found.checked);
            findings.entries_with_calls += found.entries_with_calls;
            findings.unresolved += found.unresolved;
            findings.undecided += found.undecided;
            for (position, file) in group.files.iter().enumerate() {
                texts.insert(files.ids[position], sources.get(*file).text.clone());
            }
        }
        // Only what this check found is kept: memory follows the project, not the edits.
        if !progress.cancelled() {
            self.entries.stored = kept;
            self.entries.texts = texts;
        }
        findings
    }
}

/// The results of the latest check, in coordinates that do not depend on how the
/// files are laid out: a span is a file (by path) and a range in it.
#[derive(Default)]
struct EntryResults {
    /// The analyzer's settings they were found with: other settings, other results.
    settings: String,
    /// A number for each file path.
    paths: HashMap<String, u32>,
    /// The files' texts they were found in.
    texts: HashMap<u32, String>,
    stored: HashMap<(String, i64), Vec<Stored>>,
}

impl EntryResults {
    /// What checking `entry` finds: the stored result of the same program, moved, or
    /// `check()`'s; with what to store of it, and whether it was reused.
    fn result(
        &self,
        entry: &EntryProgram,
        (files, movers, space): (&Layout, &HashMap<u32, Mover>, &SourceSpace),
        check: impl FnOnce() -> EntryChecked,
    ) -> (EntryChecked, Option<Stored>, bool) {
        if let Some(reused) = self.same_walk(entry, movers, files) {
            return reused;
        }
        let normal = files.normalize(entry, space);
        let (checked, reused) = match self.find(&normal, movers, files) {
            Some(checked) => (checked, true),
            None => (check(), false),
        };
        let stored = files.store(normal, &checked, entry.walk);
        (checked, stored, reused)
    }

    /// The stored result of the very program `entry` is (the frontend reused it: its
    /// walk and the files it read are those of the stored one), moved.
    fn same_walk(
        &self,
        entry: &EntryProgram,
        movers: &HashMap<u32, Mover>,
        files: &Layout,
    ) -> Option<(EntryChecked, Option<Stored>, bool)> {
        if entry.walk == 0 {
            return None;
        }
        let candidates = self.stored.get(&(entry.entry.clone(), entry.ranks))?;
        let stored = candidates.iter().find(|stored| stored.walk == entry.walk)?;
        let checked = files.restore(&stored.checked, movers)?;
        Some((checked, Some(stored.clone()), true))
    }

    /// The stored result of an entry point whose moved program is `normal`, moved.
    fn find(&self, normal: &Normal, movers: &HashMap<u32, Mover>, files: &Layout) -> Option<EntryChecked> {
        let candidates = self.stored.get(&normal.key())?;
        candidates.iter().find_map(|stored| {
            let mut program = (*stored.program).clone();
            program.move_through(movers)?;
            (program == *normal).then_some(())?;
            files.restore(&stored.checked, movers)
        })
    }
}

/// An entry point's result as stored.
#[derive(Clone)]
struct Stored {
    program: std::sync::Arc<Normal>,
    /// Spans in stored coordinates: the file id is the path's number.
    checked: std::sync::Arc<StoredChecked>,
    /// The frontend's walk that made the program.
    walk: u64,
}

struct StoredChecked {
    diagnostics: Vec<syncguard_analyzer::Diagnostic>,
    proofs: Vec<syncguard_analyzer::smt::Proof>,
    unproved: Vec<syncguard_analyzer::smt::Unproved>,
    main: Span,
    not_lowered: usize,
    set_aside: usize,
}

/// An entry point's extracted program in stored coordinates: its syntax's spans are
/// `path number << 40 | offset in the file`, its places `(path number, range)`.
#[derive(Clone, PartialEq)]
struct Normal {
    entry: String,
    ranks: i64,
    source: u32,
    range: Range<usize>,
    syntax: ast::File,
    api_calls: usize,
    unresolved: Vec<(u32, Range<usize>, String, Vec<String>)>,
    incomplete: Option<(u32, Range<usize>, String)>,
    unchecked_returns: Vec<(u32, Range<usize>, &'static str)>,
    /// The handles as written, sorted: messages name them so.
    written: Vec<(String, String)>,
}

const FILE_SHIFT: u32 = 40;
const OFFSET_MASK: usize = (1 << FILE_SHIFT) - 1;

impl Normal {
    fn key(&self) -> (String, i64) {
        (self.entry.clone(), self.ranks)
    }

    /// Move every span through the edits; `None` if one cannot move.
    fn move_through(&mut self, movers: &HashMap<u32, Mover>) -> Option<()> {
        let mut moved = true;
        let place = |file: u32, range: &mut Range<usize>| -> bool {
            match movers.get(&file).and_then(|mover| mover.apply(range)) {
                Some(new) => {
                    *range = new;
                    true
                }
                None => false,
            }
        };
        syncguard_grammar::spanless::map_spans(&mut self.syntax, &mut |span| {
            let file = (span.start >> FILE_SHIFT) as u32;
            let mut local = (span.start & OFFSET_MASK)..(span.end & OFFSET_MASK);
            if place(file, &mut local) {
                *span = encode(file, &local);
            } else {
                moved = false;
            }
        });
        moved &= place(self.source, &mut self.range);
        for (file, range, ..) in &mut self.unresolved {
            moved &= place(*file, range);
        }
        if let Some((file, range, _)) = &mut self.incomplete {
            moved &= place(*file, range);
        }
        for (file, range, _) in &mut self.unchecked_returns {
            moved &= place(*file, range);
        }
        moved.then_some(())
    }
}

fn encode(file: u32, local: &Range<usize>) -> Range<usize> {
    let high = (file as usize) << FILE_SHIFT;
    (high | local.start.min(OFFSET_MASK))..(high | local.end.min(OFFSET_MASK))
}

/// One group's files: the path number and file id of each.
struct Layout {
    ids: Vec<u32>,
    files: Vec<FileId>,
}

impl Layout {
    fn new(files: &[FileId], sources: &Sources, paths: &mut HashMap<String, u32>) -> Layout {
        let ids = files
            .iter()
            .map(|file| {
                let path = &sources.get(*file).path;
                let next = paths.len() as u32;
                *paths.entry(path.clone()).or_insert(next)
            })
            .collect();
        Layout {
            ids,
            files: files.to_vec(),
        }
    }

    /// How each file changed since the stored results were found.
    fn movers(&self, sources: &Sources, old: &HashMap<u32, String>) -> HashMap<u32, Mover> {
        self.ids
            .iter()
            .zip(&self.files)
            .filter_map(|(id, file)| Some((*id, Mover::new(old.get(id)?, &sources.get(*file).text))))
            .collect()
    }

    fn normalize(&self, entry: &EntryProgram, space: &SourceSpace) -> Normal {
        let id = |source: usize| self.ids.get(source).copied().unwrap_or(u32::MAX);
        let mut syntax = entry.syntax.clone();
        syncguard_grammar::spanless::map_spans(&mut syntax, &mut |span| {
            // As lowering places a span: the file its start is in, clamped to it.
            let (source, local) = space.locate(span);
            *span = encode(id(source), &local);
        });
        Normal {
            entry: entry.entry.clone(),
            ranks: entry.ranks,
            source: id(entry.source),
            range: entry.range.clone(),
            syntax,
            api_calls: entry.api_calls,
            unresolved: entry
                .unresolved
                .iter()
                .map(|item| {
                    (
                        id(item.source),
                        item.range.clone(),
                        item.message.clone(),
                        item.touches.clone(),
                    )
                })
                .collect(),
            incomplete: entry
                .incomplete
                .as_ref()
                .map(|stop| (id(stop.source), stop.range.clone(), stop.message.clone())),
            unchecked_returns: entry
                .unchecked_returns
                .iter()
                .map(|(source, range, api)| (id(*source), range.clone(), api.name))
                .collect(),
            written: {
                let mut written = entry.written.clone();
                written.sort();
                written
            },
        }
    }

    /// `checked` in stored coordinates; `None` if a span is outside the group's files
    /// or a finding carries a timeline (not stored).
    fn store(&self, program: Normal, checked: &EntryChecked, walk: u64) -> Option<Stored> {
        let to_stored = |span: &mut Span| -> bool {
            match self.files.iter().position(|file| *file == span.file) {
                Some(position) => {
                    span.file = FileId(self.ids[position]);
                    true
                }
                None => false,
            }
        };
        let result = &checked.result;
        let mut stored = StoredChecked {
            diagnostics: result.diagnostics.clone(),
            proofs: result.proofs.clone(),
            unproved: result.unproved.clone(),
            main: result.program.threads.first()?.span.clone(),
            not_lowered: checked.not_lowered,
            set_aside: checked.set_aside,
        };
        let all_stored = stored.spans_mut().into_iter().all(to_stored)
            && stored
                .diagnostics
                .iter()
                .all(|diagnostic| diagnostic.timeline.is_none());
        all_stored.then(|| Stored {
            program: std::sync::Arc::new(program),
            checked: std::sync::Arc::new(stored),
            walk,
        })
    }

    /// A stored result in this layout, moved through the edits; `None` if a span
    /// cannot move.
    fn restore(&self, stored: &StoredChecked, movers: &HashMap<u32, Mover>) -> Option<EntryChecked> {
        let mut restored = StoredChecked {
            diagnostics: stored.diagnostics.clone(),
            proofs: stored.proofs.clone(),
            unproved: stored.unproved.clone(),
            main: stored.main.clone(),
            not_lowered: stored.not_lowered,
            set_aside: stored.set_aside,
        };
        for span in restored.spans_mut() {
            let id = span.file.0;
            let position = self.ids.iter().position(|at| *at == id)?;
            span.range = movers.get(&id)?.apply(&span.range)?;
            span.file = self.files[position];
        }
        Some(EntryChecked {
            result: CheckedFile {
                program: Program::new(restored.main),
                diagnostics: restored.diagnostics,
                proofs: restored.proofs,
                unproved: restored.unproved,
            },
            not_lowered: restored.not_lowered,
            set_aside: restored.set_aside,
        })
    }
}

impl StoredChecked {
    fn spans_mut(&mut self) -> Vec<&mut Span> {
        let mut spans = vec![&mut self.main];
        for diagnostic in &mut self.diagnostics {
            spans.extend(diagnostic.spans_mut());
        }
        for proof in &mut self.proofs {
            spans.push(&mut proof.span);
            spans.extend(proof.because.iter_mut().map(|(span, _)| span));
        }
        spans.extend(self.unproved.iter_mut().map(|unproved| &mut unproved.span));
        spans
    }
}

/// How one file's text changed: the bytes before `start` and from `old_end` on are
/// unchanged, and the latter moved by `delta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mover {
    start: usize,
    old_end: usize,
    delta: isize,
    /// The edit added or removed lines: what follows it is on other lines.
    lines_moved: bool,
}

impl Mover {
    fn new(old: &str, new: &str) -> Mover {
        let (old, new) = (old.as_bytes(), new.as_bytes());
        let start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let room = old.len().min(new.len()) - start;
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
        let newlines = |bytes: &[u8]| bytes.iter().filter(|byte| **byte == b'\n').count();
        Mover {
            start,
            old_end,
            delta: new_end as isize - old_end as isize,
            lines_moved: newlines(&old[start..old_end]) != newlines(&new[start..new_end]),
        }
    }

    /// Where `range` is after the edit; `None` if it touches the edited bytes or
    /// follows an edit that moved lines.
    fn apply(&self, range: &Range<usize>) -> Option<Range<usize>> {
        if range.end <= self.start && range.start <= range.end {
            Some(range.clone())
        } else if range.start >= self.old_end && !self.lines_moved {
            let moved = |at: usize| at.checked_add_signed(self.delta);
            Some(moved(range.start)?..moved(range.end)?)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Mover;

    #[test]
    fn spans_before_an_edit_stay_and_after_it_move() {
        let mover = Mover::new("ab // one\ncd\n", "ab // three\ncd\n");
        assert_eq!(mover.apply(&(0..2)), Some(0..2));
        assert_eq!(mover.apply(&(10..12)), Some(12..14));
        // A span over the edited word cannot move.
        assert_eq!(mover.apply(&(3..9)), None);
    }

    #[test]
    fn nothing_after_an_edit_that_adds_a_line_moves() {
        let mover = Mover::new("ab\ncd\n", "ab\n\ncd\n");
        assert_eq!(mover.apply(&(0..2)), Some(0..2));
        assert_eq!(mover.apply(&(3..5)), None);
    }

    #[test]
    fn an_unchanged_text_moves_nothing() {
        let mover = Mover::new("abc", "abc");
        assert_eq!(mover.apply(&(0..3)), Some(0..3));
        assert_eq!(mover.apply(&(1..2)), Some(1..2));
    }
}
