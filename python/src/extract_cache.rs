//! What the Python frontend offers [`ProgramCache`]: its files as laid out, and what
//! each file offers the others (the functions, classes with their bases, and module
//! constants it defines). A walk reads a file's code only in frames of that file's
//! unit, and those are the files it reports as read.

use std::cell::OnceCell;

pub use syncguard_grammar::reuse::ProgramCache as ExtractCache;
use syncguard_grammar::reuse::{FileState, ProgramCache, Reuse, fingerprint};

use crate::index::Index;
use crate::program::Project;

pub(crate) fn prepare(cache: &mut ProgramCache, project: &Project, index: &Index) -> Reuse {
    let units = project.units();
    let states = units
        .iter()
        .map(|unit| FileState {
            path: unit.path.clone(),
            id: unit.id,
            base: unit.base,
            len: unit.text.len(),
        })
        .collect();
    let defined = OnceCell::new();
    let interface = |at: usize| {
        let defined = defined.get_or_init(|| definitions(index, units.len()));
        fingerprint(defined[at].iter().map(String::as_str))
    };
    cache.prepare(format!("{:?}", project.options()), states, &interface)
}

/// Per unit: the names it defines, sorted.
fn definitions(index: &Index, units: usize) -> Vec<Vec<String>> {
    let mut names: Vec<Vec<String>> = vec![Vec::new(); units];
    for def in &index.functions {
        names[def.unit].push(format!("def {}", def.qualified()));
    }
    for class in &index.classes {
        names[class.unit].push(format!("class {}({})", class.name, class.bases.join(",")));
    }
    for (at, module) in index.modules.iter().enumerate() {
        names[at].extend(module.globals.keys().map(|name| format!("global {name}")));
    }
    for unit in &mut names {
        unit.sort();
    }
    names
}
