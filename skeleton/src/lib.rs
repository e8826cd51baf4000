//! The check in two passes (docs/SCALE.md): each trace file is reduced to its
//! **skeleton** where it was captured (the per-rank pass, [`skeletons_of_run`],
//! [`skeleton_of_trace`]), and the skeletons of a run are checked together on one
//! machine (the global pass, [`check_skeletons`]), with exactly the findings `syncguard
//! check` reports on the traces, placed on the lines of the original trace files.
//!
//! A skeleton keeps a file's lines whole (its header, its closing line, the layout of
//! every line, and every call line the reduction does not leave out, with its merge
//! key), so the global pass merges and reads the kept lines with the very code `check`
//! runs ([`syncguard_trace::merge::merge_run_parts`], the trace reader, the analyzer).
//! The reduction ([`reduce`]) leaves out the inside of runs of kernel launches that
//! declare no memory, which changes no happens-before between kept calls, no issue
//! order and nothing a rule reads, but one count (SG004, corrected here) and what z3 is
//! asked: so a run is reported from its skeletons only when they show it clean with z3
//! allowed no work, and is otherwise checked whole with the left-out lines read back
//! from its reserves ([`check_skeletons`]).
//!
//! The file format ([`mod@format`]) is compressed, and reading it never trusts a length.

pub mod format;
#[doc(hidden)]
pub mod generate;
pub mod reduce;

use std::io::Read;
use std::path::{Path, PathBuf};

use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Sources, check_merged_run, check_trace_reader};
use syncguard_trace::merge::{KeptLine, RankFileParts, RankFileRead, merge_run_parts};

pub use format::FormatError;

/// The file name extension of a skeleton.
pub const EXTENSION: &str = "sgskel";
/// The file name extension of a skeleton's reserve: the lines it left out.
pub const RESERVE_EXTENSION: &str = "sgreserve";

/// One trace file's skeleton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skeleton {
    pub body: SkeletonBody,
    /// Call lines left out.
    pub dropped: usize,
    /// Call lines in the file.
    pub calls: usize,
    /// The lines left out (for an ordinary trace, `position` is the line's index and
    /// `key` 0): written to a reserve file of their own, which the global pass reads
    /// only for a run with findings ([`check_skeletons`]). Empty once read back.
    pub reserve: Vec<KeptLine>,
}

/// What kind of trace file a skeleton is of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkeletonBody {
    /// A rank file `syncguard trace` wrote: checked with the other rank files of `run`.
    Rank {
        run: String,
        /// Its place among the inputs of the per-rank pass that made it.
        order: usize,
        /// The run's merge on disk (`run-RUN.jsonl`), shown as and at: findings go to
        /// its lines, as `check` puts them there. Such a run is kept whole.
        merged_on_disk: Option<(String, PathBuf)>,
        file: RankFileRead,
    },
    /// Any other trace: checked on its own.
    Trace(TraceSkeleton),
}

/// An ordinary trace file's kept lines, in its layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSkeleton {
    /// Its place among the inputs of the per-rank pass that made it.
    pub order: usize,
    pub display: String,
    pub path: PathBuf,
    pub line_starts: Vec<usize>,
    pub len: usize,
    pub newline_at_end: bool,
    /// (line index, its bytes without the newline), in file order.
    pub kept: Vec<(usize, Vec<u8>)>,
}

impl Skeleton {
    /// The trace file it is of, as shown in findings.
    pub fn display(&self) -> &str {
        match &self.body {
            SkeletonBody::Rank {
                file: RankFileRead::Read(parts),
                ..
            } => &parts.display,
            SkeletonBody::Rank {
                file: RankFileRead::Unreadable { display, .. },
                ..
            } => display,
            SkeletonBody::Trace(trace) => &trace.display,
        }
    }

    /// A file name for it, unique per trace file: the trace's file name and a hash of
    /// how it was named.
    pub fn file_name(&self) -> String {
        let display = self.display();
        let name = Path::new(display)
            .file_name()
            .map_or_else(|| "trace".to_string(), |name| name.to_string_lossy().into_owned());
        // FNV-1a: stable across builds and machines.
        let hash = display.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        format!("{name}.{hash:016x}.{EXTENSION}")
    }
}

/// The skeletons of one captured run's rank files (`(display, path)` each; `merged`:
/// merge files of the run given with them), and the merge files that are not exactly
/// their merge (`check` names them on stderr and skips them). `order`: the place of
/// the run among the inputs.
pub fn skeletons_of_run(
    run: &str,
    files: &[(String, PathBuf)],
    merged: &[(String, PathBuf)],
    order: usize,
) -> (Vec<Skeleton>, Vec<String>) {
    let read: Vec<RankFileRead> = files
        .iter()
        .map(|(display, path)| RankFileRead::read(display, path))
        .collect();
    let merge_file = syncguard_trace::merge::merged_file_name(run);
    let may_be_on_disk = !merged.is_empty() || files.iter().any(|(_, path)| path.with_file_name(&merge_file).is_file());
    let (mut on_disk, mut stale) = (None, Vec::new());
    if may_be_on_disk {
        let mut whole = merge_run_parts(run, read.clone());
        stale = whole.find_on_disk(merged);
        // Only a whole run here is the run the global pass sees: a node's merge of its
        // own ranks (each node's `syncguard trace` writes one) is not the merge of all.
        if whole.checkable() {
            on_disk = whole.on_disk.take().map(|path| (whole.display.clone(), path));
        }
    }
    let skeletons = read
        .into_iter()
        .map(|file| {
            let (file, reserve, calls) = match file {
                RankFileRead::Read(parts) if on_disk.is_none() => {
                    let (parts, reserve) = reduce_rank_file(parts);
                    let calls = parts.calls;
                    (RankFileRead::Read(parts), reserve, calls)
                }
                RankFileRead::Read(parts) => {
                    let calls = parts.calls;
                    (RankFileRead::Read(parts), Vec::new(), calls)
                }
                unreadable => (unreadable, Vec::new(), 0),
            };
            Skeleton {
                body: SkeletonBody::Rank {
                    run: run.to_string(),
                    order,
                    merged_on_disk: on_disk.clone(),
                    file,
                },
                dropped: reserve.len(),
                calls,
                reserve,
            }
        })
        .collect();
    (skeletons, stale)
}

/// A rank file's parts without the lines the reduction leaves out, and those lines.
fn reduce_rank_file(mut parts: RankFileParts) -> (RankFileParts, Vec<KeptLine>) {
    // The rank's order of calls: merging sorts by key, then by place in the file.
    let mut order: Vec<usize> = (0..parts.lines.len()).collect();
    order.sort_by_key(|&index| (parts.lines[index].key, parts.lines[index].position));
    let texts: Vec<&[u8]> = order.iter().map(|&index| parts.lines[index].text.as_slice()).collect();
    let dropped_in_order = reduce::droppable(&texts, true, None);
    let mut dropped = vec![false; parts.lines.len()];
    for (&index, &drop) in order.iter().zip(&dropped_in_order) {
        dropped[index] = drop;
    }
    let lines = std::mem::take(&mut parts.lines);
    let (left_out, kept): (Vec<_>, Vec<_>) = lines.into_iter().zip(dropped).partition(|(_, drop)| *drop);
    parts.lines = kept.into_iter().map(|(line, _)| line).collect();
    (parts, left_out.into_iter().map(|(line, _)| line).collect())
}

/// The skeleton of an ordinary trace file (one that is not a rank file of a capture);
/// `order`: its place among the inputs.
pub fn skeleton_of_trace(display: &str, path: &Path, order: usize) -> std::io::Result<Skeleton> {
    let bytes = std::fs::read(path)?;
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|&(at, &b)| b == b'\n' && at + 1 < bytes.len())
                .map(|(at, _)| at + 1),
        )
        .collect();
    let world_size = header_world_size(lines.first().copied().unwrap_or_default());
    let dropped = match world_size {
        Ok(world_size) => reduce::droppable(&lines, false, world_size),
        Err(()) => vec![false; lines.len()],
    };
    let calls = lines.len().saturating_sub(1);
    let (left_out, kept): (Vec<_>, Vec<_>) = lines
        .iter()
        .enumerate()
        .map(|(index, line)| (index, line.to_vec()))
        .partition(|&(index, _)| dropped[index]);
    Ok(Skeleton {
        dropped: left_out.len(),
        calls,
        reserve: left_out
            .into_iter()
            .map(|(index, text)| KeptLine {
                position: index as u32,
                key: 0,
                text,
            })
            .collect(),
        body: SkeletonBody::Trace(TraceSkeleton {
            order,
            display: display.to_string(),
            path: path.to_path_buf(),
            line_starts: if lines.is_empty() { vec![0] } else { line_starts },
            len: bytes.len(),
            newline_at_end: bytes.ends_with(b"\n"),
            kept,
        }),
    })
}

/// The world size an ordinary trace's header gives (`None`: no header, or none given);
/// `Err`: one the reduction cannot read exactly, so nothing is left out.
fn header_world_size(first: &[u8]) -> Result<Option<i64>, ()> {
    let Ok(serde_json::Value::Object(header)) = serde_json::from_slice::<serde_json::Value>(first) else {
        return Ok(None);
    };
    if !header.contains_key("syncguard_trace") {
        return Ok(None);
    }
    match header.get("world_size") {
        None => Ok(None),
        Some(value) => value.as_i64().map(Some).ok_or(()),
    }
}

/// An ordinary trace rebuilt from its skeleton: every byte of a kept line in its place,
/// each line left out as blanks of its length (which the reader passes over), so the
/// layout, and every place a finding names, is the file's.
struct Rebuilt<'s> {
    trace: &'s TraceSkeleton,
    line: usize,
    kept: usize,
    pending: Vec<u8>,
    at: usize,
}

impl Read for Rebuilt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.pending.len() {
            let trace = self.trace;
            if self.line >= trace.line_starts.len() || trace.len == 0 {
                return Ok(0);
            }
            self.pending.clear();
            self.at = 0;
            let start = trace.line_starts[self.line];
            let end = format::content_end(&trace.line_starts, trace.len, trace.newline_at_end, self.line);
            match trace.kept.get(self.kept) {
                Some((line, text)) if *line == self.line => {
                    self.pending.extend_from_slice(text);
                    self.kept += 1;
                }
                _ => self.pending.resize(end - start, b' '),
            }
            let last = self.line + 1 == trace.line_starts.len();
            if !last || trace.newline_at_end {
                self.pending.push(b'\n');
            }
            self.line += 1;
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// What the global pass checked: one entry per run and per ordinary trace, in the order
/// `check` checks them.
pub struct Checked {
    pub name: String,
    pub file: CheckedFile,
    /// Whether it was checked with the lines its skeletons left out (read back from
    /// their reserves): a run with findings is.
    pub whole: bool,
}

/// Reads the lines a skeleton left out (its reserve file), for a run with findings.
pub type ReserveOf<'a> = dyn FnMut(&Skeleton) -> Result<Vec<KeptLine>, String> + 'a;

/// The global pass: check the skeletons as `syncguard check` checks the trace files
/// they were made of (each run's rank files merged into one trace, each other trace on
/// its own), placing findings on the original files' lines.
///
/// A run none of whose skeletons left a line out is checked as it is. Any other is
/// first checked with z3 allowed no work (every question put to it is answered
/// "unknown", which is itself a finding): when that finds nothing but the count of
/// launches without memory, no rule had anything to report or to ask z3, and by the
/// reduction's argument (docs/SCALE.md) neither would the whole run: that is the
/// result, with the count corrected. Otherwise the run's left-out lines are read back
/// (`reserve_of`) and it is checked whole, with exactly `check`'s findings (and z3's
/// witness schedules, which count the calls before them).
///
/// `Err` when two skeletons are of one trace file, or a reserve is needed and cannot
/// be read (or does not complete its file).
pub fn check_skeletons(
    sources: &mut Sources,
    skeletons: Vec<Skeleton>,
    overrides: &Overrides,
    reserve_of: &mut ReserveOf,
) -> Result<Vec<Checked>, String> {
    use std::collections::BTreeMap;
    #[derive(Default)]
    struct Run {
        skeletons: Vec<Skeleton>,
        on_disk: Option<(String, PathBuf)>,
        dropped: usize,
    }
    let mut runs: BTreeMap<String, Run> = BTreeMap::new();
    let mut traces: Vec<Skeleton> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for skeleton in skeletons {
        if !seen.insert(skeleton.display().to_string()) {
            return Err(format!(
                "two skeletons are of {}: give the global pass one skeleton per trace file",
                skeleton.display()
            ));
        }
        match &skeleton.body {
            SkeletonBody::Rank {
                run, merged_on_disk, ..
            } => {
                let entry = runs.entry(run.clone()).or_default();
                entry.dropped += skeleton.dropped;
                // The merge on disk is the run's only when every skeleton of the run
                // says so (they were made together, from the whole run).
                entry.on_disk = match (entry.skeletons.is_empty(), &entry.on_disk) {
                    (true, _) => merged_on_disk.clone(),
                    (false, Some(found)) if merged_on_disk.as_ref() == Some(found) => Some(found.clone()),
                    _ => None,
                };
                entry.skeletons.push(skeleton);
            }
            SkeletonBody::Trace(_) => traces.push(skeleton),
        }
    }
    let probe = Overrides {
        smt: syncguard_analyzer::smt::SmtOptions {
            rlimit: Some(1),
            ..overrides.smt
        },
        ..*overrides
    };
    let mut checked = Vec::new();
    for (name, run) in runs {
        let check = |sources: &mut Sources, files: Vec<RankFileRead>, overrides: &Overrides| {
            let mut merged = merge_run_parts(&name, files);
            if let Some((display, path)) = &run.on_disk {
                // Kept whole by the per-rank pass, which found this merge on disk.
                merged.display = display.clone();
                merged.on_disk = Some(path.clone());
            }
            check_merged_run(sources, &merged, overrides)
        };
        let parts = |skeleton: &Skeleton| match &skeleton.body {
            SkeletonBody::Rank { file, .. } => file.clone(),
            SkeletonBody::Trace(_) => unreachable!("runs hold rank files"),
        };
        if run.dropped == 0 {
            let file = check(sources, run.skeletons.iter().map(parts).collect(), overrides);
            checked.push(Checked {
                name,
                file,
                whole: true,
            });
            continue;
        }
        let mut file = check(sources, run.skeletons.iter().map(parts).collect(), &probe);
        if count_left_out(&mut file.diagnostics, run.dropped) && clean(&file) {
            checked.push(Checked {
                name,
                file,
                whole: false,
            });
            continue;
        }
        let mut whole = Vec::with_capacity(run.skeletons.len());
        for skeleton in &run.skeletons {
            whole.push(restored(skeleton, reserve_of)?);
        }
        let file = check(sources, whole, overrides);
        checked.push(Checked {
            name,
            file,
            whole: true,
        });
    }
    traces.sort_by(|a, b| match (&a.body, &b.body) {
        (SkeletonBody::Trace(a), SkeletonBody::Trace(b)) => (a.order, &a.display).cmp(&(b.order, &b.display)),
        _ => std::cmp::Ordering::Equal,
    });
    for skeleton in traces {
        let SkeletonBody::Trace(trace) = &skeleton.body else {
            continue;
        };
        let check = |sources: &mut Sources, trace: &TraceSkeleton, overrides: &Overrides| {
            let reader = Rebuilt {
                trace,
                line: 0,
                kept: 0,
                pending: Vec::new(),
                at: 0,
            };
            check_trace_reader(
                sources,
                trace.display.clone(),
                reader,
                Some(trace.path.clone()),
                overrides,
            )
        };
        if skeleton.dropped == 0 {
            let file = check(sources, trace, overrides);
            checked.push(Checked {
                name: trace.display.clone(),
                file,
                whole: true,
            });
            continue;
        }
        let mut file = check(sources, trace, &probe);
        if count_left_out(&mut file.diagnostics, skeleton.dropped) && clean(&file) {
            checked.push(Checked {
                name: trace.display.clone(),
                file,
                whole: false,
            });
            continue;
        }
        let reserve = reserve_of(&skeleton)?;
        let mut whole = trace.clone();
        whole.kept = merge_by_position(
            trace.kept.iter().map(|(line, text)| (*line, text.clone())).collect(),
            reserve
                .into_iter()
                .map(|line| (line.position as usize, line.text))
                .collect(),
            &trace.display,
        )?;
        let file = check(sources, &whole, overrides);
        checked.push(Checked {
            name: trace.display.clone(),
            file,
            whole: true,
        });
    }
    Ok(checked)
}

/// Whether a check found nothing but the note counting launches without memory, and
/// proved nothing.
fn clean(file: &CheckedFile) -> bool {
    file.proofs.is_empty() && file.unproved.is_empty() && file.diagnostics.iter().all(is_footprint_note)
}

fn is_footprint_note(diagnostic: &Diagnostic) -> bool {
    diagnostic.code == "SG004"
        && diagnostic
            .notes
            .iter()
            .all(|note| note.starts_with("and ") && note.ends_with(" more"))
        && (diagnostic.message.ends_with(COUNTED)
            || diagnostic.message.ends_with(
                "` declares no memory footprint: races through the memory its kernel touches are not checked",
            ))
}

/// A rank file's parts with the lines its skeleton left out put back.
fn restored(skeleton: &Skeleton, reserve_of: &mut ReserveOf) -> Result<RankFileRead, String> {
    let SkeletonBody::Rank { file, .. } = &skeleton.body else {
        unreachable!("runs hold rank files")
    };
    let RankFileRead::Read(parts) = file else {
        return Ok(file.clone());
    };
    if skeleton.dropped == 0 {
        return Ok(file.clone());
    }
    let reserve = reserve_of(skeleton)?;
    let mut parts = parts.clone();
    let keys: std::collections::HashMap<usize, u64> = parts
        .lines
        .iter()
        .chain(&reserve)
        .map(|line| (line.position as usize, line.key))
        .collect();
    let lines = merge_by_position(
        parts
            .lines
            .iter()
            .map(|line| (line.position as usize, line.text.clone()))
            .collect(),
        reserve
            .into_iter()
            .map(|line| (line.position as usize, line.text))
            .collect(),
        &parts.display,
    )?;
    if lines.len() != parts.calls {
        return Err(format!(
            "{}: its skeleton and reserve hold {} of its {} calls",
            parts.display,
            lines.len(),
            parts.calls
        ));
    }
    parts.lines = lines
        .into_iter()
        .map(|(position, text)| KeptLine {
            position: position as u32,
            key: keys[&position],
            text,
        })
        .collect();
    Ok(RankFileRead::Read(parts))
}

/// Two lists of numbered lines as one, in order; an error if a number is in both.
fn merge_by_position(
    a: Vec<(usize, Vec<u8>)>,
    b: Vec<(usize, Vec<u8>)>,
    display: &str,
) -> Result<Vec<(usize, Vec<u8>)>, String> {
    let mut all: Vec<(usize, Vec<u8>)> = a.into_iter().chain(b).collect();
    all.sort_by_key(|(line, _)| *line);
    if all.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return Err(format!("{display}: its skeleton and reserve both hold a line"));
    }
    Ok(all)
}

const COUNTED: &str =
    " kernel launches declare no memory footprint: races through the memory their kernels touch are not checked";

/// The SG004 note that counts launches without memory, corrected by the `dropped` ones
/// the skeletons left out (they are launches without memory, and the note shows only
/// the first nine, which are always kept). `false` when there is no such note to
/// correct (the run was not analyzed, or the note lists every launch): the run is then
/// checked whole.
fn count_left_out(diagnostics: &mut [Diagnostic], dropped: usize) -> bool {
    if dropped == 0 {
        return true;
    }
    let count = |d: &Diagnostic| {
        (d.code == "SG004")
            .then(|| d.message.strip_suffix(COUNTED)?.parse::<usize>().ok())
            .flatten()
    };
    let Some(note) = diagnostics.iter_mut().find(|d| count(d).is_some()) else {
        return false;
    };
    let more = |line: &str| {
        line.strip_prefix("and ")
            .and_then(|rest| rest.strip_suffix(" more"))
            .and_then(|n| n.parse::<usize>().ok())
    };
    if !note.notes.iter().any(|line| more(line).is_some()) {
        return false;
    }
    note.message = format!("{}{COUNTED}", count(note).unwrap_or(0) + dropped);
    for line in &mut note.notes {
        if let Some(n) = more(line) {
            *line = format!("and {} more", n + dropped);
        }
    }
    true
}
