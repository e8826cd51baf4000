//! Which host functions can reach a synchronization call: the entry points worth
//! walking.
//!
//! In a real repository most entry points (tests' helpers, tiling math, file and string
//! utilities) call no synchronization API, directly or through their helpers, yet each
//! was walked (its loops unrolled, its values followed) only for its program to be
//! dropped for having no call. This pre-scan decides from the text which entry points
//! cannot make one, so that they are not walked at all.
//!
//! # Why nothing is lost
//!
//! A walk counts a call (`api_calls`, which decides whether its program is checked at
//! all: every caller drops a program without one) only where the code it walks shows
//! one of:
//! - the name of a catalogued API (`api::lookup` of the callee's text or its last
//!   segment after `::`, `.` or `->`),
//! - a kernel launch `<<<...>>>`,
//! - a GE gen-task callback's task list (only for entry points the index registers as
//!   such, which are never skipped).
//!
//! And a host walk reads only (see `extract/expr.rs`, `stmt.rs`, `threads.rs`,
//! `macro_call.rs`): the entry point's definition; the definitions the index finds by a
//! name written in code it reads (a callee, a constructor or `~destructor` by the
//! class name of a declaration, a thread's function); the expansion of a
//! function-like macro called in code it reads, which is the macro's body (with nested
//! macros) around argument text from the call site; and constants, evaluated without
//! side effects (no call is ever made from one).
//!
//! So the code a walk can read is inside the closure of: the entry's definition text,
//! and, for every word in that closure, every function definition and every `#define`
//! of that name (any file, whatever the scoping: a superset of what the index would
//! link). If no text of the closure holds a catalogued name (as a word, in comments and
//! strings too), `<<<`, or a `##` that could paste a new name, no walk from the entry can
//! count a call: its program would be dropped. Every doubt counts as "may synchronize":
//! the result only ever leaves out walks whose program has no call.
//!
//! Kernels (`__global__`, Ascend C's per-core programs) are never skipped: their walks
//! count the per-core calls the catalogue's host names do not cover.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use syncguard_model::api::APIS;

use crate::index::{FnDef, Unit};

/// What may make a synchronization call, by the text of the definitions.
pub struct SyncReach {
    /// Per function of the index (same positions): its walk may count a call.
    may_sync: Vec<bool>,
}

impl SyncReach {
    /// Decide for every function of `functions` (the index's, over `units`).
    pub fn of(units: &[Unit], functions: &[FnDef]) -> SyncReach {
        let markers = catalogue_words();
        let definitions = Definitions::collect(units, functions);
        let names: HashSet<&str> = definitions.names.iter().copied().collect();
        let scanned: Vec<Scanned> = definitions
            .texts
            .par_iter()
            .map(|text| Scanned::of(text, &names, &markers))
            .collect();
        let may_sync = propagate(&definitions.names, &scanned);
        SyncReach {
            may_sync: may_sync[..functions.len()].to_vec(),
        }
    }

    /// Whether the walk of function `position` (of the index) may count a call.
    pub fn may_synchronize(&self, position: usize) -> bool {
        self.may_sync.get(position).copied().unwrap_or(true)
    }
}

/// The texts a walk may read, each with the name it is found by: every function
/// definition first (in the index's order), then every `#define`.
struct Definitions<'t> {
    names: Vec<&'t str>,
    texts: Vec<&'t str>,
}

impl<'t> Definitions<'t> {
    fn collect(units: &'t [Unit], functions: &'t [FnDef]) -> Definitions<'t> {
        let mut names = Vec::new();
        let mut texts = Vec::new();
        for def in functions {
            // `~Buffer` is found by the class name a declaration writes.
            names.push(def.simple_name().trim_start_matches('~'));
            texts.push(&units[def.unit].text[def.node.byte_range()]);
        }
        for unit in units {
            for (name, text) in defines(&unit.text) {
                names.push(name);
                texts.push(text);
            }
        }
        Definitions { names, texts }
    }
}

/// What one definition's text shows.
struct Scanned<'t> {
    /// A catalogued name, a launch or a name pasting: a walk through it may count a call.
    marked: bool,
    /// The names of definitions it writes, once each.
    mentions: Vec<&'t str>,
}

impl<'t> Scanned<'t> {
    fn of(text: &'t str, names: &HashSet<&str>, markers: &HashSet<&str>) -> Scanned<'t> {
        let mut marked = memchr::memmem::find(text.as_bytes(), b"<<<").is_some() || pastes_names(text);
        // A name split by a line continuation is one name to the compiler: such text is
        // taken as marked, not joined again.
        marked |= continues_a_word(text);
        let mut mentions = Vec::new();
        for word in words(text) {
            if markers.contains(word) {
                marked = true;
            }
            if names.contains(word) {
                mentions.push(word);
            }
        }
        mentions.sort_unstable();
        mentions.dedup();
        Scanned { marked, mentions }
    }
}

/// Every definition that may count a call: those marked, and those writing the name
/// of one that may (a breadth-first search from the marked, backwards along names).
fn propagate(names: &[&str], scanned: &[Scanned]) -> Vec<bool> {
    let mut writers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (position, definition) in scanned.iter().enumerate() {
        for &name in &definition.mentions {
            writers.entry(name).or_default().push(position);
        }
    }
    let mut may_sync: Vec<bool> = scanned.iter().map(|definition| definition.marked).collect();
    let mut queue: Vec<usize> = (0..scanned.len()).filter(|&at| may_sync[at]).collect();
    let mut spread: HashSet<&str> = HashSet::new();
    while let Some(at) = queue.pop() {
        if !spread.insert(names[at]) {
            continue;
        }
        for &writer in writers.get(names[at]).into_iter().flatten() {
            if !may_sync[writer] {
                may_sync[writer] = true;
                queue.push(writer);
            }
        }
    }
    may_sync
}

/// Every word of every catalogued name (`aclrtSynchronizeStream`; `torch`, `npu` and
/// `synchronize` of `torch.npu.synchronize`): a call of any catalogued API writes its
/// last segment as a word.
fn catalogue_words() -> HashSet<&'static str> {
    APIS.iter()
        .flat_map(|api| api.name.split(|c: char| !is_word_char(c)))
        .filter(|word| !word.is_empty())
        .collect()
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier-like words of `text` (ASCII letters, digits, `_`; other characters,
/// non-ASCII ones too, end a word).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c)).filter(|word| !word.is_empty())
}

/// A `##` that may paste two names into a new one: any but the `, ## __VA_ARGS__` of
/// variadic macros, which only drops a comma.
fn pastes_names(text: &str) -> bool {
    text.match_indices("##")
        .any(|(at, _)| !text[..at].trim_end().ends_with(','))
}

/// A line continuation right after a word character: `aclrt\` + newline + `Wait...`.
fn continues_a_word(text: &str) -> bool {
    text.match_indices('\\').any(|(at, _)| {
        let after = &text[at + 1..];
        (after.starts_with('\n') || after.starts_with("\r\n")) && text[..at].ends_with(|c: char| is_word_char(c))
    })
}

/// Every `#define NAME ...` of a file: the name, and the text of the whole directive
/// (its continued lines too).
fn defines(text: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices('#') {
        let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
        if !text[line_start..at].trim().is_empty() {
            continue;
        }
        let Some(rest) = text[at + 1..].trim_start_matches([' ', '\t']).strip_prefix("define") else {
            continue;
        };
        let name_at = text.len() - rest.trim_start_matches([' ', '\t']).len();
        let name_end = text[name_at..]
            .find(|c: char| !is_word_char(c))
            .map_or(text.len(), |end| name_at + end);
        if name_end == name_at {
            continue;
        }
        found.push((&text[name_at..name_end], &text[at..directive_end(text, at)]));
    }
    found
}

/// Where the directive starting at `at` ends: the first newline not escaped by `\`.
fn directive_end(text: &str, at: usize) -> usize {
    let mut from = at;
    while let Some(newline) = text[from..].find('\n').map(|offset| from + offset) {
        let line = text[..newline].trim_end_matches('\r');
        if !line.ends_with('\\') {
            return newline;
        }
        from = newline + 1;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(files: &[(&str, &str)]) -> Vec<(String, bool)> {
        let mut base = 0;
        let units: Vec<Unit> = files
            .iter()
            .map(|(path, text)| {
                let unit = Unit::parse(path.to_string(), text.to_string(), base);
                base += text.len() + 1;
                unit
            })
            .collect();
        let scopes = crate::scope::Scopes::build(&units);
        let defines = Unit::parse(String::new(), String::new(), base);
        let expansions = Unit::parse(String::new(), String::new(), base);
        let sites = HashMap::new();
        let index = crate::index::Index::build(&units, &scopes, (&defines, &[]), None, (&expansions, &sites));
        let reach = SyncReach::of(&units, &index.functions);
        index
            .functions
            .iter()
            .enumerate()
            .map(|(at, def)| (def.qualified.clone(), reach.may_synchronize(at)))
            .collect()
    }

    fn may(found: &[(String, bool)], name: &str) -> bool {
        found
            .iter()
            .find(|(qualified, _)| qualified == name)
            .unwrap_or_else(|| panic!("no function {name}"))
            .1
    }

    #[test]
    fn a_helper_in_another_file_that_synchronizes_is_followed() {
        let found = reach(&[
            (
                "host.cpp",
                "void Run(aclrtStream s) { Drain(s); }\nint Unrelated() { return 1; }\n",
            ),
            (
                "helper.cpp",
                "void Drain(aclrtStream s) { aclrtSynchronizeStream(s); }\n",
            ),
        ]);
        assert!(may(&found, "Run"), "Run calls a helper that synchronizes");
        assert!(may(&found, "Drain"));
        assert!(!may(&found, "Unrelated"));
    }

    #[test]
    fn chains_of_helpers_and_macros_are_followed() {
        let found = reach(&[
            (
                "a.cpp",
                "#define SYNC_ALL(s) Level2(s)\nvoid Level2(aclrtStream s) { Level3(s); }\nvoid Top(aclrtStream s) { SYNC_ALL(s); }\n",
            ),
            (
                "b.h",
                "inline void Level3(aclrtStream s) { aclrtSynchronizeStream(s); }\n",
            ),
        ]);
        assert!(may(&found, "Top"), "through a macro and two helpers");
        assert!(may(&found, "Level2"));
    }

    #[test]
    fn constructors_and_destructors_are_found_by_their_class() {
        let found = reach(&[(
            "raii.cpp",
            "struct Guard { ~Guard() { aclrtDestroyStream(s); } aclrtStream s; };\nvoid Use() { Guard g; }\n",
        )]);
        assert!(may(&found, "Use"), "the destructor of `Guard` runs at the end of `Use`");
    }

    #[test]
    fn launches_and_pasted_names_count_as_synchronizing() {
        let found = reach(&[(
            "k.cu",
            "void Launch() { k<<<1, 1>>>(); }\n#define CALL(x) aclrt##x\nvoid Pasted() { CALL(SynchronizeDevice)(); }\n\
             #define LOG(fmt, ...) printf(fmt, ##__VA_ARGS__)\nvoid Logs() { LOG(\"x %d\", 1); }\n",
        )]);
        assert!(may(&found, "Launch"));
        assert!(may(&found, "Pasted"), "`##` may paste an API's name");
        assert!(!may(&found, "Logs"), "`, ## __VA_ARGS__` only drops a comma");
    }

    #[test]
    fn a_name_in_a_comment_may_only_add_a_walk() {
        let found = reach(&[(
            "util.cpp",
            "// unlike aclrtSynchronizeStream, this only adds\nint Add(int a, int b) { return a + b; }\n\
             int Twice(int a) { /* see aclrtSynchronizeStream */ return Add(a, a); }\nint Plain(int a) { return a; }\n",
        )]);
        // A comment outside the definition is not its text; one inside is (a walk more,
        // never one less).
        assert!(!may(&found, "Add"));
        assert!(may(&found, "Twice"));
        assert!(!may(&found, "Plain"));
    }

    #[test]
    fn defines_are_read_with_their_continued_lines() {
        let text = "#define A 1\n  #  define B(x) \\\n    Call(x)\nint y; # not a define\n#define\n";
        let found: Vec<(&str, &str)> = defines(text);
        assert_eq!(
            found,
            vec![("A", "#define A 1"), ("B", "#  define B(x) \\\n    Call(x)")]
        );
    }
}
