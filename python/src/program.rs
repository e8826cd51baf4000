//! The frontend's face: a set of Python files read together (helpers and classes of
//! one file are followed from another), each entry point extracted as a `.sync`
//! program; `convert` prints the extracted programs.

use syncguard_grammar::ast;
pub use syncguard_grammar::extracted::{EntryProgram, SourceSpace, SourceText, Unresolved};

use crate::index::{FnDef, Index, Unit, space_range};
use crate::walk::Walker;

/// Files read together: their parse trees.
pub struct Project {
    space: SourceSpace,
    units: Vec<Unit>,
    options: Options,
}

/// What the command line says about the sources.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only these functions are entry points (`--entry`): `function`, `Class.method`,
    /// or with the module, `runner:ModelRunner.execute_model`.
    pub entries: Vec<String>,
    /// Groups of names of received objects (parameters, `self.` attributes) that may be
    /// one object (`--alias src,dst`); distinct otherwise.
    pub aliases: Vec<Vec<String>>,
}

/// Parse `sources` (in parallel) and lay them out in one byte space.
pub fn read_project(sources: Vec<SourceText>, options: Options) -> Project {
    read_project_cached(sources, options, &mut ParseCache::default())
}

pub use crate::extract_cache::ExtractCache;

/// Parsed files kept from one read to the next read of the same project (an editor's
/// checks): a file whose text is unchanged is not parsed again.
#[derive(Default)]
pub struct ParseCache {
    units: std::collections::HashMap<String, Unit>,
}

/// [`read_project`], parsing only the files `cache` does not hold with the same text;
/// afterwards `cache` holds exactly the files of this read.
pub fn read_project_cached(sources: Vec<SourceText>, options: Options, cache: &mut ParseCache) -> Project {
    use rayon::prelude::*;
    let (space, bases) = SourceSpace::new(&sources);
    let units: Vec<(Unit, bool)> = sources
        .into_par_iter()
        .zip(bases)
        .map(|(source, base)| match cache.units.get(&source.path) {
            Some(unit) if unit.text == source.text => (unit.moved_to(base), false),
            _ => (Unit::parse(source.path, source.text, base), true),
        })
        .collect();
    let paths: std::collections::HashSet<&str> = units.iter().map(|(unit, _)| unit.path.as_str()).collect();
    cache.units.retain(|path, _| paths.contains(path.as_str()));
    for (unit, parsed) in &units {
        if *parsed {
            cache.units.insert(unit.path.clone(), unit.clone());
        }
    }
    let units = units.into_iter().map(|(unit, _)| unit).collect();
    Project { space, units, options }
}

impl Project {
    /// Every entry point (a function or method that no analyzed function calls or
    /// mentions, not a special method), extracted; in file and line order.
    pub fn entries(&self) -> Vec<EntryProgram> {
        self.entries_cached(&mut ExtractCache::default())
    }

    /// [`Project::entries`], walking again only the entry points whose walk read a file
    /// that changed since `cache` was filled (see [`ExtractCache`]).
    pub fn entries_cached(&self, cache: &mut ExtractCache) -> Vec<EntryProgram> {
        match syncguard_grammar::extracted::walk_pool() {
            Some(pool) => pool.install(|| self.entries_here(cache)),
            None => self.entries_here(cache),
        }
    }

    fn entries_here(&self, cache: &mut ExtractCache) -> Vec<EntryProgram> {
        use rayon::prelude::*;
        let index = Index::build(&self.units);
        let reuse = crate::extract_cache::prepare(cache, self, &index);
        let chosen: Vec<usize> = (0..index.functions.len())
            .into_par_iter()
            .filter(|at| {
                let def = &index.functions[*at];
                match self.options.entries.as_slice() {
                    [] => {
                        is_entry_kind(def)
                            && !index.mentioned.contains(def.name.as_str())
                            && !called_through_objects(&index, def)
                    }
                    named => named.iter().any(|name| self.names(def, name)),
                }
            })
            .collect();
        let repeated = syncguard_grammar::reuse::repeated(
            index
                .functions
                .iter()
                .map(|def| (self.units[def.unit].path.clone(), def.qualified())),
        );
        let extracted: Vec<(Vec<EntryProgram>, Option<syncguard_grammar::reuse::Kept>)> = chosen
            .par_iter()
            .map(|at| {
                let def = &index.functions[*at];
                let key = (self.units[def.unit].path.clone(), def.qualified());
                let key = (!repeated.contains(&key)).then_some(key);
                reuse.programs(key, || {
                    let (program, touched) = self.extract(&index, *at);
                    (vec![program], touched)
                })
            })
            .collect();
        let mut entries = Vec::with_capacity(extracted.len());
        let mut kept = Vec::new();
        for (programs, keep) in extracted {
            kept.extend(keep);
            entries.extend(programs);
        }
        cache.finish(reuse, kept);
        entries.sort_by_key(|entry| (entry.source, entry.range.start));
        entries
    }

    /// Whether `--entry NAME` names `def`: `f`, `Class.f`, `module:f`, `module:Class.f`.
    fn names(&self, def: &FnDef, name: &str) -> bool {
        let qualified = def.qualified();
        match name.split_once(':') {
            Some((module, function)) => self.units[def.unit].stem() == module && function == qualified,
            None => name == qualified || name == def.name,
        }
    }

    /// The program of entry point `at`, and the units its walk read.
    fn extract(&self, index: &Index, at: usize) -> (EntryProgram, std::collections::BTreeSet<usize>) {
        let def = &index.functions[at];
        let unit = &self.units[def.unit];
        let mut walked = Walker::new(index, &self.options.aliases).run(at);
        let mut touched = std::mem::take(&mut walked.touched);
        touched.insert(def.unit);
        let name_node = def.node.child_by_field_name("name").unwrap_or(def.node);
        let (source, range) = self.space.locate(&space_range(unit, name_node));
        let located = |(span, message, touches): (std::ops::Range<usize>, String, Vec<String>)| {
            let (source, range) = self.space.locate(&span);
            Unresolved {
                source,
                range,
                message,
                touches,
                assumption: false,
                data_only: false,
            }
        };
        let program = EntryProgram {
            entry: format!("{}:{}", unit.stem(), def.qualified()),
            ranks: 1,
            source,
            range,
            syntax: ast::File { stmts: walked.stmts },
            api_calls: walked.api_calls,
            unresolved: walked.unresolved.into_iter().map(located).collect(),
            incomplete: walked
                .incomplete
                .map(|(span, message)| located((span, message, Vec::new()))),
            unchecked_returns: walked
                .unchecked
                .into_iter()
                .map(|(span, api)| {
                    let (source, range) = self.space.locate(&span);
                    (source, range, api)
                })
                .collect(),
            written: std::mem::take(&mut walked.written),
            walk: 0,
        };
        (program, touched)
    }

    pub(crate) fn units(&self) -> &[Unit] {
        &self.units
    }

    pub(crate) fn options(&self) -> &Options {
        &self.options
    }

    /// Where the entry points' spans are: lowering and printing them.
    pub fn space(&self) -> &SourceSpace {
        &self.space
    }
}

/// `forward` of a class the analyzed code constructs (or names): an `nn.Module`'s
/// `forward` runs where its objects are called (`model(x)`), not on its own; so does
/// the `run` of a `threading.Thread` subclass, where its objects are started.
fn called_through_objects(index: &Index, def: &FnDef) -> bool {
    let Some(class) = def
        .class
        .as_ref()
        .filter(|class| index.mentioned.contains(class.as_str()))
    else {
        return false;
    };
    def.name == "forward" || (def.name == "run" && index.derives_from_thread(class))
}

/// Functions and methods, not special methods (`__init__` runs where an object is
/// built) nor nested functions.
fn is_entry_kind(def: &FnDef) -> bool {
    !(def.name.starts_with("__") && def.name.ends_with("__"))
        && def
            .node
            .parent()
            .and_then(|block| block.parent())
            .is_none_or(|owner| owner.kind() != "function_definition")
}
