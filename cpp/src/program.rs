//! The frontend's face: a set of C/C++ files read together (helpers are inlined across
//! them), each entry point extracted as a `.sync` program and lowered with spans in the
//! files the user wrote; `convert` prints the extracted programs.

pub use syncguard_grammar::extracted::{EntryProgram, SourceSpace, SourceText, Unresolved};

use std::collections::{HashMap, HashSet};

use crate::compile_db::CompileDb;
use crate::extract::{self, Extracted};
use crate::index::{FnDef, Index, Unit, defines_text, is_library_api};
use crate::macros::{self, Expansion};
use crate::reach::SyncReach;
use crate::scope::Scopes;

/// Files read together: their parse trees and the index across them.
pub struct Project {
    space: SourceSpace,
    units: Vec<Unit>,
    /// Which files each file sees through its includes.
    scopes: Scopes,
    defines: Unit,
    /// Per line of `defines`, the file whose `#define` it is (`None`: `-D`, database).
    define_origins: Vec<Option<usize>>,
    /// Function-like macros expanded at their call sites (see `macros`).
    expansions: Unit,
    expansion_sites: HashMap<(usize, usize), Expansion>,
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
    /// Groups of names of entry parameters, globals and members that may be one object
    /// (`--alias src,dst`); distinct otherwise.
    pub aliases: Vec<Vec<String>>,
    /// The compilation database (`compile_commands.json`): each listed file's `-D`/`-U`
    /// flags decide its `#if`/`#ifdef`, and names no command defines are undefined.
    pub compile_db: Option<std::sync::Arc<CompileDb>>,
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

/// Parse `sources` and index them together.
pub fn read_project(sources: Vec<SourceText>, options: Options) -> Project {
    read_project_cached(sources, options, &mut ParseCache::default())
}

pub use crate::extract_cache::ExtractCache;

/// Parsed files kept from one read to the next read of the same project (an editor's
/// checks): a file whose text is unchanged is not parsed again.
#[derive(Default)]
pub struct ParseCache {
    units: HashMap<String, Unit>,
}

/// [`read_project`], parsing only the files `cache` does not hold with the same text;
/// afterwards `cache` holds exactly the files of this read.
pub fn read_project_cached(sources: Vec<SourceText>, options: Options, cache: &mut ParseCache) -> Project {
    use rayon::prelude::*;
    let (space, bases) = SourceSpace::new(&sources);
    let base = space.end();
    let units: Vec<(Unit, bool)> = sources
        .into_par_iter()
        .zip(bases)
        .map(|(source, base)| {
            let (mut unit, parsed) = match cache.units.get(&source.path) {
                Some(unit) if unit.text == source.text => (Unit { base, ..unit.clone() }, false),
                _ => (Unit::parse(source.path, source.text, base), true),
            };
            unit.build = options
                .compile_db
                .as_ref()
                .and_then(|db| db.flags_for(std::path::Path::new(&unit.path)).cloned());
            (unit, parsed)
        })
        .collect();
    let paths: HashSet<&str> = units.iter().map(|(unit, _)| unit.path.as_str()).collect();
    cache.units.retain(|path, _| paths.contains(path.as_str()));
    for (unit, parsed) in &units {
        if *parsed {
            cache.units.insert(unit.path.clone(), unit.clone());
        }
    }
    let units: Vec<Unit> = units.into_iter().map(|(unit, _)| unit).collect();
    // Definitions on the command line come first: the first definition of a name wins.
    // Then the database's, where every command agrees on the value.
    let common = options
        .compile_db
        .as_ref()
        .map(|db| db.common_defines())
        .unwrap_or_default();
    let mut text = String::new();
    let mut define_origins = Vec::new();
    for (name, value) in options.defines.iter().chain(&common) {
        text.push_str(&format!("auto {name} = ({value});\n"));
        define_origins.push(None);
    }
    let (file_defines, origins) = defines_text(&units);
    text.push_str(&file_defines);
    define_origins.extend(origins);
    let defines = Unit::parse(String::new(), text, base);
    let scopes = Scopes::build(&units);
    let (expansions, expansion_sites) = expand_macros(
        &units,
        &scopes,
        (&defines, &define_origins),
        &options,
        base + defines.text.len() + 1,
    );
    Project {
        space,
        units,
        scopes,
        defines,
        define_origins,
        expansions,
        expansion_sites,
        options,
    }
}

/// The expansions of the function-like macros that reach a catalogued API, a function
/// the files define or a kernel launch, at each of their call sites.
fn expand_macros(
    units: &[Unit],
    scopes: &Scopes,
    defines: (&Unit, &[Option<usize>]),
    options: &Options,
    base: usize,
) -> (Unit, HashMap<(usize, usize), Expansion>) {
    let none = (Unit::parse(String::new(), String::new(), base), HashMap::new());
    let macros = macros::collect_macros(units);
    if macros.is_empty() {
        return none;
    }
    let probe = Index::build(
        units,
        scopes,
        defines,
        options.compile_db.as_deref(),
        (&none.0, &none.1),
    );
    // A macro body's names are looked up where the macro is defined.
    let wanted = |unit: usize, name: &str| {
        syncguard_model::api::lookup(name).is_some()
            || syncguard_model::kernel::KernelCall::lookup(name).is_some()
            || probe.lookup_from(unit, name).next().is_some()
    };
    let worth = macros::worth_expanding(macros, &wanted);
    let expansions = macros::expand_calls(units, scopes, &worth);
    (
        Unit::parse("macro expansion".into(), expansions.text, base),
        expansions.sites,
    )
}

impl Project {
    /// Every entry point (a function that no analyzed function calls or mentions,
    /// `main`, not a kernel), extracted; in file and line order.
    pub fn entries(&self) -> Vec<EntryProgram> {
        self.entries_cached(&mut ExtractCache::default())
    }

    /// [`Project::entries`], walking again only the entry points whose walk read a file
    /// that changed since `cache` was filled (see [`ExtractCache`]).
    pub fn entries_cached(&self, cache: &mut ExtractCache) -> Vec<EntryProgram> {
        self.walk_entries(cache, Walks::Every)
    }

    /// The entry points whose program makes a synchronization call (`api_calls > 0`),
    /// which is all that checking reads: [`Project::entries`] without the others, and
    /// without walking the host entry points that provably cannot make one (see
    /// `reach`), most of a real repository's.
    pub fn synchronizing_entries(&self) -> Vec<EntryProgram> {
        self.synchronizing_entries_cached(&mut ExtractCache::default())
    }

    /// [`Project::synchronizing_entries`], reusing `cache` as [`Project::entries_cached`] does.
    pub fn synchronizing_entries_cached(&self, cache: &mut ExtractCache) -> Vec<EntryProgram> {
        let mut entries = self.walk_entries(cache, Walks::Synchronizing);
        entries.retain(|entry| entry.api_calls > 0);
        entries
    }

    fn walk_entries(&self, cache: &mut ExtractCache, walks: Walks) -> Vec<EntryProgram> {
        // The walk recurses with the code's nesting (bounded by `MAX_NESTING`, with
        // frames larger than the default 2 MiB stacks allow for): the walk pool's threads.
        match syncguard_grammar::extracted::walk_pool() {
            Some(pool) => pool.install(|| self.entries_here(cache, walks)),
            None => self.entries_here(cache, walks),
        }
    }

    fn entries_here(&self, cache: &mut ExtractCache, walks: Walks) -> Vec<EntryProgram> {
        let mut index = Index::build(
            &self.units,
            &self.scopes,
            (&self.defines, &self.define_origins),
            self.options.compile_db.as_deref(),
            (&self.expansions, &self.expansion_sites),
        );
        for (name, _) in &self.options.defines {
            index.define_everywhere(name);
        }
        let index = index;
        use rayon::prelude::*;
        let fused = self.fused_superkernels();
        let in_fused = |def: &FnDef| {
            def.kernel
                && fused
                    .iter()
                    .any(|(_, kernels)| kernels.iter().any(|k| k == def.simple_name()))
        };
        let reach = (walks == Walks::Synchronizing).then(|| SyncReach::of(&self.units, &index.functions));
        let chosen: Vec<&FnDef> = index
            .functions
            .par_iter()
            .enumerate()
            .filter(|(position, def)| {
                reach
                    .as_ref()
                    .is_none_or(|reach| reach.may_synchronize(*position) || counts_calls_unseen(&index, def))
            })
            .map(|(_, def)| def)
            .filter(|def| match self.options.entries.as_slice() {
                [] => {
                    (self.is_entry_kind(def)
                        && !in_fused(def)
                        && (def.simple_name() == "main" || !index.is_mentioned(def)))
                        // Every Ascend C kernel has its per-core pipe program, launched
                        // from the host or not.
                        || extract::is_ascend_kernel(&index, def)
                }
                named => named
                    .iter()
                    .any(|name| *name == def.qualified || name == def.simple_name()),
            })
            .collect();
        let reuse = crate::extract_cache::prepare(cache, self);
        let key = |def: &FnDef| (self.units[def.unit].path.clone(), def.qualified.clone());
        let repeated = syncguard_grammar::reuse::repeated(index.functions.iter().map(key));
        let extracted: Vec<(Vec<EntryProgram>, Option<syncguard_grammar::reuse::Kept>)> = chosen
            .par_iter()
            .map(|def| {
                let key = Some(key(def)).filter(|key| !repeated.contains(key));
                reuse.programs(key, || {
                    let (programs, mut read) = crate::index::reading(|| self.entry_programs(&index, def, &in_fused));
                    read.insert(def.unit);
                    (programs, crate::extract_cache::state_indices(self, read))
                })
            })
            .collect();
        let mut entries = Vec::new();
        let mut kept = Vec::new();
        for (programs, keep) in extracted {
            kept.extend(keep);
            entries.extend(programs);
        }
        cache.finish(reuse, kept);
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
                entries.push(self.entry_program(extract::extract_fused(&index, name, &defs, self.walk_options()), 1));
            }
        }
        entries.sort_by_key(|entry| (entry.source, entry.range.start));
        entries
    }

    /// The programs of entry point `def`: a kernel's, or a host function's (one per
    /// rank count for SPMD code).
    fn entry_programs<'u>(
        &self,
        index: &Index<'u>,
        def: &FnDef<'u>,
        in_fused: &dyn Fn(&FnDef) -> bool,
    ) -> Vec<EntryProgram> {
        if def.kernel && extract::is_ascend_kernel(index, def) {
            // The SuperKernel of its early start (unless a fused one holds it),
            // then its `aicore` block.
            let superkernel = (self.is_entry_kind(def) && !in_fused(def))
                .then(|| extract::extract(index, def, None, self.walk_options()));
            let extracted = extract::extract_kernel(index, def, superkernel, self.walk_options());
            return vec![self.entry_program(extracted, 1)];
        }
        self.extract_entry(index, def)
    }

    pub(crate) fn units(&self) -> &[Unit] {
        &self.units
    }

    pub(crate) fn options(&self) -> &Options {
        &self.options
    }

    pub(crate) fn defines_unit(&self) -> &Unit {
        &self.defines
    }

    pub(crate) fn expansions_unit(&self) -> &Unit {
        &self.expansions
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
    /// code is what the SG4xx rules check); not device helpers, constructors,
    /// destructors, or a library's own implementation of its API (a runtime repository
    /// defines `aclrtSetDevice`: that is the API, not code that uses it).
    fn is_entry_kind(&self, def: &FnDef) -> bool {
        if def.class.is_none() && is_library_api(def.simple_name()) {
            return false;
        }
        if def.kernel {
            // The calls may be in the kernel class's methods, in the same file.
            let text = &self.units[def.unit].text;
            return text.contains("SetNextTaskStart") || text.contains("WaitPreTaskEnd");
        }
        !def.device && !is_special_member(def)
    }

    /// The programs of one entry point: one, or for SPMD code (it asks for its rank)
    /// one per rank count, the configured ones or 2 to 8.
    fn extract_entry<'u>(&self, index: &Index<'u>, def: &FnDef<'u>) -> Vec<EntryProgram> {
        let configured = self
            .options
            .ranks
            .clone()
            .or_else(|| rank_counts(&self.units[def.unit].text));
        let counts = match configured {
            Some(counts) => counts,
            None => {
                let once = extract::extract(index, def, None, self.walk_options());
                if !once.wants_ranks {
                    return vec![self.entry_program(once, 1)];
                }
                DEFAULT_RANKS.collect()
            }
        };
        counts
            .into_iter()
            .map(|count| {
                let extracted = extract::extract(index, def, (count > 1).then_some(count), self.walk_options());
                self.entry_program(extracted, count)
            })
            .collect()
    }

    fn entry_program(&self, extracted: Extracted, ranks: i64) -> EntryProgram {
        let (source, range) = self.space.locate(&extracted.span);
        let unresolved = |item: extract::Unresolved| {
            let (source, range) = self.space.locate(&item.span);
            Unresolved {
                source,
                range,
                message: item.message,
                touches: item.touches,
                assumption: item.assumption,
                data_only: item.data_only,
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
                    let (source, range) = self.space.locate(&range);
                    (source, range, api)
                })
                .collect(),
            written: extracted.written,
            walk: 0,
        }
    }

    fn walk_options(&self) -> extract::WalkOptions<'_> {
        extract::WalkOptions {
            error_paths: self.options.error_paths,
            aliases: &self.options.aliases,
        }
    }

    /// Where the entry points' spans are: lowering and printing them.
    pub fn space(&self) -> &SourceSpace {
        &self.space
    }
}

/// Which entry points a walk of the project extracts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walks {
    Every,
    /// Not those that cannot make a synchronization call (see `reach`).
    Synchronizing,
}

/// Whether the walk of `def` may count calls that no catalogued name in its text
/// shows, which the pre-scan of `reach` cannot see: a kernel's per-core program (its
/// queues, buffers and pipe calls) and a GE gen-task callback (its task list starts
/// with the kernel's own launch).
fn counts_calls_unseen(index: &Index, def: &FnDef) -> bool {
    def.kernel
        || extract::is_ascend_kernel(index, def)
        || def
            .params
            .iter()
            .any(|param| param.type_text.contains("ExeResGenerationContext"))
}

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
