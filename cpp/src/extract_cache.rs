//! What the C/C++ frontend offers [`ProgramCache`]: its files as laid out (with the
//! synthetic files of `#define`s and macro expansions, fingerprinted by their text),
//! the files a walk read (every read of a file's code goes through `Index::unit`), and
//! what each file offers the others: its text outside function bodies and comments
//! (declarations, classes, templates, macros, includes), its preprocessor lines and
//! its `syncguard:` comments.

use std::collections::BTreeSet;

pub use syncguard_grammar::reuse::ProgramCache as ExtractCache;
use syncguard_grammar::reuse::{FileState, ProgramCache, Reuse, fingerprint};

use crate::fields::FieldChild;
use crate::index::{DEFINES, EXPANSIONS, Unit};
use crate::program::Project;

pub(crate) fn prepare(cache: &mut ProgramCache, project: &Project) -> Reuse {
    let units = project.units();
    let state = |unit: &Unit, id: u64| FileState {
        path: unit.path.clone(),
        id,
        base: unit.base,
        len: unit.text.len(),
    };
    let mut states: Vec<FileState> = units.iter().map(|unit| state(unit, unit.id)).collect();
    // Rebuilt on every read: the same text is the same file.
    for (name, synthetic) in [
        ("<defines>", project.defines_unit()),
        ("<macro expansions>", project.expansions_unit()),
    ] {
        states.push(FileState {
            path: name.to_string(),
            ..state(synthetic, fingerprint([synthetic.text.as_str()]))
        });
    }
    // The synthetic files follow from the files' interfaces (`#define`s) and macro
    // calls: a walk that read one is walked again when its text changed (its id), and
    // other walks are not.
    let interface = |at: usize| units.get(at).map_or(0, interface);
    cache.prepare(format!("{:?}", project.options()), states, &interface)
}

/// The indices into the states [`prepare`] lays out of the units a walk read.
pub(crate) fn state_indices(project: &Project, read: BTreeSet<usize>) -> BTreeSet<usize> {
    let files = project.units().len();
    read.into_iter()
        .map(|unit| match unit {
            DEFINES => files,
            EXPANSIONS => files + 1,
            unit => unit,
        })
        .collect()
}

/// What `unit` offers other files: its text without function bodies and comments, then
/// its preprocessor lines and `syncguard:` comments (wherever they are).
fn interface(unit: &Unit) -> u64 {
    let mut cuts: Vec<std::ops::Range<usize>> = Vec::new();
    let mut stack = vec![unit.tree.root_node()];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "function_definition" => match node.field_child("body") {
                Some(body) => cuts.push(body.byte_range()),
                None => continue,
            },
            "comment" => cuts.push(node.byte_range()),
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
            }
        }
    }
    cuts.sort_by_key(|cut| cut.start);
    let text = unit.text.as_str();
    let mut parts: Vec<&str> = Vec::new();
    let mut at = 0;
    for cut in cuts {
        let (start, end) = (cut.start.min(text.len()), cut.end.min(text.len()));
        if start >= at {
            parts.extend(text.get(at..start));
            at = end;
        }
    }
    parts.extend(text.get(at..));
    parts.extend(
        text.lines()
            .map(str::trim_start)
            .filter(|line| line.starts_with('#') || line.contains("syncguard")),
    );
    fingerprint(parts)
}
