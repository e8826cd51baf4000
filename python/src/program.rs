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
    let units: Vec<Unit> = sources
        .into_par_iter()
        .zip(bases)
        .map(|(source, base)| match cache.units.get(&source.path) {
            Some(unit) if unit.text == source.text => unit.moved_to(base),
            _ => Unit::parse(source.path, source.text, base),
        })
        .collect();
    cache.units = units.iter().map(|unit| (unit.path.clone(), unit.clone())).collect();
    Project { space, units, options }
}

impl Project {
    /// Every entry point (a function or method that no analyzed function calls or
    /// mentions, not a special method), extracted; in file and line order.
    pub fn entries(&self) -> Vec<EntryProgram> {
        match syncguard_grammar::extracted::walk_pool() {
            Some(pool) => pool.install(|| self.entries_here()),
            None => self.entries_here(),
        }
    }

    fn entries_here(&self) -> Vec<EntryProgram> {
        use rayon::prelude::*;
        let index = Index::build(&self.units);
        let mut entries: Vec<EntryProgram> = (0..index.functions.len())
            .into_par_iter()
            .filter(|at| {
                let def = &index.functions[*at];
                match self.options.entries.as_slice() {
                    [] => {
                        is_entry_kind(def)
                            && !index.mentioned.contains(&def.name)
                            && !called_through_objects(&index, def)
                    }
                    named => named.iter().any(|name| self.names(def, name)),
                }
            })
            .map(|at| self.extract(&index, at))
            .collect();
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

    fn extract(&self, index: &Index, at: usize) -> EntryProgram {
        let def = &index.functions[at];
        let unit = &self.units[def.unit];
        let walked = Walker::new(index, &self.options.aliases).run(at);
        let name_node = def.node.child_by_field_name("name").unwrap_or(def.node);
        let (source, range) = self.space.locate(&space_range(unit, name_node));
        let located = |(span, message, touches): (std::ops::Range<usize>, String, Vec<String>)| {
            let (source, range) = self.space.locate(&span);
            Unresolved {
                source,
                range,
                message,
                touches,
            }
        };
        EntryProgram {
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
        }
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
    let Some(class) = def.class.as_ref().filter(|class| index.mentioned.contains(*class)) else {
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
