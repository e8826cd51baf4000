//! Which analyzed files each file sees: itself and what it `#include`s, directly or
//! through other headers. Names resolve by it, as the compiler resolves them, so a
//! file's findings do not depend on unrelated files read in the same run (a `ret` of
//! some generated header, a `Run` another example defines).

use std::collections::HashMap;

use crate::index::Unit;

/// How deep includes are followed through other headers.
const MAX_INCLUDE_DEPTH: usize = 64;

/// Per analyzed file, the analyzed files it includes.
pub struct Scopes {
    /// Per unit, the units it includes directly or through others (itself excluded),
    /// sorted.
    visible: Vec<Vec<usize>>,
}

impl Scopes {
    pub fn build(units: &[Unit]) -> Scopes {
        let paths: Vec<Vec<&str>> = units.iter().map(|unit| components(&unit.path)).collect();
        let mut by_file_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (position, path) in paths.iter().enumerate() {
            if let Some(name) = path.last() {
                by_file_name.entry(name).or_default().push(position);
            }
        }
        let direct: Vec<Vec<usize>> = units
            .iter()
            .enumerate()
            .map(|(position, unit)| {
                let mut found: Vec<usize> = include_paths(&unit.text)
                    .filter_map(|include| resolve_include(&paths, &by_file_name, position, include))
                    .filter(|&included| included != position)
                    .collect();
                found.sort_unstable();
                found.dedup();
                found
            })
            .collect();
        let visible = (0..units.len()).map(|unit| closure(&direct, unit)).collect();
        Scopes { visible }
    }

    /// A scope for files that include nothing.
    #[cfg(test)]
    pub fn none(count: usize) -> Scopes {
        Scopes {
            visible: vec![Vec::new(); count],
        }
    }

    /// Whether code in unit `from` sees what unit `unit` declares: the same file, or a
    /// file it includes.
    pub fn sees(&self, from: usize, unit: usize) -> bool {
        from == unit
            || self
                .visible
                .get(from)
                .is_some_and(|visible| visible.binary_search(&unit).is_ok())
    }
}

/// The included files, transitively, in a bounded walk.
fn closure(direct: &[Vec<usize>], unit: usize) -> Vec<usize> {
    let mut seen = vec![unit];
    let mut frontier = vec![unit];
    for _ in 0..MAX_INCLUDE_DEPTH {
        let next: Vec<usize> = frontier
            .iter()
            .flat_map(|&from| direct[from].iter().copied())
            .filter(|included| !seen.contains(included))
            .collect();
        if next.is_empty() {
            break;
        }
        for included in &next {
            if !seen.contains(included) {
                seen.push(*included);
            }
        }
        frontier = next;
    }
    seen.retain(|&other| other != unit);
    seen.sort_unstable();
    seen
}

/// `#include "a/b.h"` and `#include <a/b.h>` lines of a file: the paths they name.
fn include_paths(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest.strip_prefix("include")?.trim_start();
        let (open, close) = match rest.chars().next()? {
            '"' => ('"', '"'),
            '<' => ('<', '>'),
            _ => return None,
        };
        let inner = rest.strip_prefix(open)?;
        inner.find(close).map(|end| &inner[..end])
    })
}

/// The analyzed file an include names, seen from unit `from`, as a build's include
/// paths usually find it: at that path relative to the including file's folder or to
/// one of the folders above it (`-I` of a project root), the nearest first; else under
/// one folder inside those (`-I inc`); else, among the files whose path ends with it,
/// the one sharing the longest folder with the including file (a library of the same
/// repository: `-I ../../common/include`). By path on a tie.
fn resolve_include(
    paths: &[Vec<&str>],
    by_file_name: &HashMap<&str, Vec<usize>>,
    from: usize,
    include: &str,
) -> Option<usize> {
    let wanted = components(include);
    let candidates = by_file_name.get(wanted.last()?)?;
    let folder = &paths[from][..paths[from].len().saturating_sub(1)];
    let tail: Vec<&str> = wanted.iter().copied().skip_while(|part| *part == "..").collect();
    // (how it is found, how far): smaller is nearer.
    let rank = |candidate: &[&str]| -> Option<(usize, usize)> {
        for up in 0..=folder.len() {
            let base = &folder[..folder.len() - up];
            let exact = normalize(base.iter().copied().chain(wanted.iter().copied()));
            if candidate == exact.as_slice() {
                return Some((0, up));
            }
            let inside = candidate.len() == exact.len() + 1
                && candidate.starts_with(base)
                && exact.starts_with(base)
                && candidate.ends_with(&exact[base.len()..]);
            if inside {
                return Some((1, up));
            }
        }
        let shared = candidate.iter().zip(folder).take_while(|(a, b)| a == b).count();
        candidate.ends_with(&tail).then(|| (2, usize::MAX - shared))
    };
    candidates
        .iter()
        .filter_map(|&candidate| Some((rank(&paths[candidate])?, &paths[candidate], candidate)))
        .min()
        .map(|(_, _, candidate)| candidate)
}

/// A path's folders and name, `.` and `..` resolved where they can be.
fn components(path: &str) -> Vec<&str> {
    normalize(path.split(['/', '\\']))
}

fn normalize<'p>(parts: impl Iterator<Item = &'p str>) -> Vec<&'p str> {
    let mut out: Vec<&str> = Vec::new();
    for part in parts {
        match part {
            "" | "." => {}
            ".." if out.last().is_some_and(|last| *last != "..") => {
                out.pop();
            }
            _ => out.push(part),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(files: &[(&str, &str)]) -> Vec<Unit> {
        files
            .iter()
            .map(|(path, text)| Unit::parse(path.to_string(), text.to_string(), 0))
            .collect()
    }

    #[test]
    fn a_file_sees_what_it_includes_through_headers() {
        let units = units(&[
            ("op/main.cpp", "#include \"helpers.h\"\n"),
            ("op/helpers.h", "#include <common/log.h>\n"),
            ("common/log.h", ""),
            ("other/main.cpp", "int x;\n"),
        ]);
        let scopes = Scopes::build(&units);
        assert!(scopes.sees(0, 1) && scopes.sees(0, 2));
        assert!(!scopes.sees(0, 3) && !scopes.sees(3, 0));
        assert!(!scopes.sees(2, 0), "includes go one way");
    }

    #[test]
    fn an_include_names_the_nearest_file_with_that_path() {
        let units = units(&[
            ("a/x/main.cpp", "#include \"utils.h\"\n"),
            ("b/utils.h", ""),
            ("a/utils.h", ""),
            ("a/x/utils.h", ""),
        ]);
        let scopes = Scopes::build(&units);
        assert_eq!(scopes.visible[0], [3]);
        let units = self::units(&[
            ("a/x/main.cpp", "#include \"../inc/k.h\"\n"),
            ("a/inc/k.h", ""),
            ("k.h", ""),
        ]);
        assert_eq!(Scopes::build(&units).visible[0], [1]);
    }

    #[test]
    fn an_include_is_found_as_include_paths_find_it() {
        let units = units(&[
            (
                "op/src/main.cpp",
                "#include \"process.h\"\n#include \"kernel/ops.h\"\n#include \"agent/channel.h\"\n",
            ),
            ("op/inc/process.h", ""),
            ("kernel/ops.h", ""),
            ("lib/include/agent/channel.h", ""),
            ("op/inc/deeper/process.h", ""),
        ]);
        let scopes = Scopes::build(&units);
        // `-I inc` before a deeper file of the same name; a library's header by its path.
        assert_eq!(scopes.visible[0], [1, 2, 3]);
    }
}
