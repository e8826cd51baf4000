//! Extracted programs kept from one read of a project to the next (an editor's checks),
//! for any frontend.
//!
//! A frontend's walk of an entry point reads the code of some files (the frontend
//! records which), and finds the rest only through what each file offers the others:
//! its definitions, declarations, macros (its *interface*, a fingerprint the frontend
//! computes). So the programs of an entry point are those of the previous read when
//! every file its walk read is unchanged and every changed file offers the same
//! interface: each lookup resolves as before, to code that did not change. Anything
//! else (another set of files, other options, a changed interface) walks every entry
//! point again. Reused programs are moved to where their files are now.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use crate::extracted::EntryProgram;

/// An entry point: its file's path and its name there.
pub type Key = (String, String);

/// A file of a read, as a frontend laid it out.
pub struct FileState {
    pub path: String,
    /// Which parse this is: a file parsed again gets a new id.
    pub id: u64,
    pub base: usize,
    pub len: usize,
}

/// What the previous read extracted.
#[derive(Default)]
pub struct ProgramCache {
    /// The options it was read with.
    options: String,
    /// Per file path: its parse id and interface.
    files: HashMap<String, (u64, u64)>,
    kept: HashMap<Key, Kept>,
    /// Entry points the latest read walked, and those it reused.
    walked: usize,
    reused: usize,
}

/// An entry point's programs as extracted, and where the files its walk read were.
pub struct Kept {
    key: Key,
    programs: Vec<EntryProgram>,
    /// Path, parse id, base and length of each file the walk read.
    touched: Vec<(String, u64, usize, usize)>,
    /// The paths of the files, by their index then.
    layout: Arc<Vec<String>>,
}

/// One read's view of the cache: what may be reused.
pub struct Reuse {
    kept: HashMap<Key, Kept>,
    options: String,
    files: HashMap<String, (u64, u64)>,
    /// Each file now: parse id, base, index.
    now: HashMap<String, (u64, usize, usize)>,
    layout: Arc<Vec<String>>,
    states: Vec<FileState>,
    walked: std::sync::atomic::AtomicUsize,
    reused: std::sync::atomic::AtomicUsize,
}

impl ProgramCache {
    /// Compare the files of this read with those of the previous one; `interface(k)`
    /// fingerprints what file `k` offers the others (asked only of files parsed anew).
    pub fn prepare(&mut self, options: String, states: Vec<FileState>, interface: &dyn Fn(usize) -> u64) -> Reuse {
        let files: HashMap<String, (u64, u64)> = states
            .iter()
            .enumerate()
            .map(|(at, state)| {
                let known = self.files.get(&state.path).filter(|(id, _)| *id == state.id);
                let fingerprint = known.map_or_else(|| interface(at), |(_, fingerprint)| *fingerprint);
                (state.path.clone(), (state.id, fingerprint))
            })
            .collect();
        let same_files = files.len() == self.files.len() && files.keys().all(|path| self.files.contains_key(path));
        let same_interfaces = files
            .iter()
            .all(|(path, (_, fingerprint))| self.files.get(path).is_some_and(|(_, old)| old == fingerprint));
        let mut kept = std::mem::take(&mut self.kept);
        if options != self.options || !same_files || !same_interfaces {
            kept.clear();
        }
        Reuse {
            kept,
            options,
            files,
            now: states
                .iter()
                .enumerate()
                .map(|(at, state)| (state.path.clone(), (state.id, state.base, at)))
                .collect(),
            layout: Arc::new(states.iter().map(|state| state.path.clone()).collect()),
            states,
            walked: Default::default(),
            reused: Default::default(),
        }
    }

    /// How many entry points the latest read walked, and how many it reused.
    pub fn last_read(&self) -> (usize, usize) {
        (self.walked, self.reused)
    }

    /// Keep what this read extracted, for the next.
    pub fn finish(&mut self, reuse: Reuse, kept: Vec<Kept>) {
        self.walked = reuse.walked.into_inner();
        self.reused = reuse.reused.into_inner();
        self.options = reuse.options;
        self.files = reuse.files;
        self.kept = kept.into_iter().map(|kept| (kept.key.clone(), kept)).collect();
    }
}

impl Reuse {
    /// The programs of the entry point `key`: the kept ones, moved, if every file its
    /// walk read is unchanged; else `walk()`'s, which also says which files (by index)
    /// the walk read. With the programs, what to keep of them (`None` for a key that
    /// is not unique: it is always walked).
    pub fn programs(
        &self,
        key: Option<Key>,
        walk: impl FnOnce() -> (Vec<EntryProgram>, BTreeSet<usize>),
    ) -> (Vec<EntryProgram>, Option<Kept>) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(key) = &key
            && let Some(reused) = self.reused(key)
        {
            self.reused.fetch_add(1, Relaxed);
            return reused;
        }
        self.walked.fetch_add(1, Relaxed);
        let (mut programs, touched) = walk();
        static WALKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        for program in &mut programs {
            program.walk = WALKS.fetch_add(1, Relaxed);
        }
        let kept = key.map(|key| Kept {
            key,
            programs: programs.clone(),
            touched: touched
                .iter()
                .filter_map(|at| self.states.get(*at))
                .map(|state| (state.path.clone(), state.id, state.base, state.len))
                .collect(),
            layout: self.layout.clone(),
        });
        (programs, kept)
    }

    fn reused(&self, key: &Key) -> Option<(Vec<EntryProgram>, Option<Kept>)> {
        let kept = self.kept.get(key)?;
        let mut shifts = Vec::with_capacity(kept.touched.len());
        let mut touched = Vec::with_capacity(kept.touched.len());
        for (path, id, base, len) in &kept.touched {
            let (now_id, now_base, _) = self.now.get(path)?;
            if now_id != id {
                return None;
            }
            shifts.push((*base..*base + len + 1, *now_base as isize - *base as isize));
            touched.push((path.clone(), *id, *now_base, *len));
        }
        let programs = kept
            .programs
            .iter()
            .map(|program| self.moved(program, &shifts, &kept.layout))
            .collect::<Option<Vec<EntryProgram>>>()?;
        let again = Kept {
            key: key.clone(),
            programs: programs.clone(),
            touched,
            layout: self.layout.clone(),
        };
        Some((programs, Some(again)))
    }

    /// `program` with every span moved with its file; `None` if a span is in no file
    /// the walk read.
    fn moved(
        &self,
        program: &EntryProgram,
        shifts: &[(Range<usize>, isize)],
        layout: &[String],
    ) -> Option<EntryProgram> {
        let shift = |range: &mut Range<usize>| -> bool {
            // `0..0` is the span of what has no place in the source (a name a frontend
            // makes up): it stays.
            if *range == (0..0) {
                return true;
            }
            let Some((_, by)) = shifts.iter().find(|(old, _)| old.contains(&range.start)) else {
                return false;
            };
            match (range.start.checked_add_signed(*by), range.end.checked_add_signed(*by)) {
                (Some(start), Some(end)) => {
                    *range = start..end;
                    true
                }
                _ => false,
            }
        };
        let index_now = |source: &mut usize| -> bool {
            match layout.get(*source).and_then(|path| self.now.get(path)) {
                Some((_, _, at)) => {
                    *source = *at;
                    true
                }
                None => false,
            }
        };
        let mut program = program.clone();
        let mut moved = true;
        crate::spanless::map_spans(&mut program.syntax, &mut |span| moved &= shift(span));
        moved &= index_now(&mut program.source);
        for item in program.unresolved.iter_mut().chain(program.incomplete.as_mut()) {
            moved &= index_now(&mut item.source);
        }
        for (source, _, _) in &mut program.unchecked_returns {
            moved &= index_now(source);
        }
        moved.then_some(program)
    }
}

/// The keys of `keys` that occur more than once (an overload, a redefinition): their
/// entry points are always walked.
pub fn repeated(keys: impl IntoIterator<Item = Key>) -> HashSet<Key> {
    let mut seen = HashSet::new();
    keys.into_iter().filter(|key| !seen.insert(key.clone())).collect()
}

/// A fingerprint of `parts`, in order.
pub fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a str>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for part in parts {
        part.hash(&mut hasher);
    }
    hasher.finish()
}
