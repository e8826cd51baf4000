//! `compile_commands.json` (the JSON compilation database CMake, Bear and Bazel write):
//! the `-D` and `-U` flags each source file is compiled with, which decide its
//! `#if`/`#ifdef` branches. With a database, a name that neither the file's command
//! nor the analyzed files define is undefined: the build is known.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The preprocessor flags of one compile command, in command-line order applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildFlags {
    /// `-DNAME` (`NAME=1`) and `-DNAME=VALUE`, the last one of a name winning.
    pub defines: HashMap<String, String>,
    /// Names the command undefines (`-UNAME`) after any definition.
    pub undefines: HashSet<String>,
    /// `--cce-auto-sync=off`: the compiler inserts no scalar-pipe syncs in kernels.
    pub cce_auto_sync_off: bool,
}

impl BuildFlags {
    /// `Some(true)` if the command defines `name`, `Some(false)` if it undefines it.
    pub fn defines(&self, name: &str) -> Option<bool> {
        if self.undefines.contains(name) {
            Some(false)
        } else {
            self.defines.contains_key(name).then_some(true)
        }
    }
}

/// A compilation database: the flags of each file it lists.
#[derive(Clone, Debug, Default)]
pub struct CompileDb {
    /// Where the database is, as the user names it in messages.
    pub path: PathBuf,
    files: HashMap<PathBuf, BuildFlags>,
}

/// The most entries a database is read for (a monorepo's is tens of thousands).
const MAX_ENTRIES: usize = 1 << 20;

impl CompileDb {
    /// Parse a database's text; `path` is where it was read from (relative file names
    /// in it are relative to each entry's `directory`).
    pub fn parse(path: &Path, text: &str) -> Result<CompileDb, String> {
        let entries: Vec<serde_json::Value> =
            serde_json::from_str(text).map_err(|err| format!("not a JSON array of compile commands: {err}"))?;
        let mut files = HashMap::new();
        for (position, entry) in entries.iter().enumerate().take(MAX_ENTRIES) {
            let (file, flags) = read_entry(entry)
                .ok_or_else(|| format!("entry {} has no `file` and `arguments` or `command`", position + 1))?;
            // A file compiled twice (two targets) keeps its first command.
            files.entry(normalize(&file)).or_insert(flags);
        }
        Ok(CompileDb {
            path: path.to_path_buf(),
            files,
        })
    }

    /// The flags `file` is compiled with; `None` when the database does not list it
    /// (a header, or a file of another build).
    pub fn flags_for(&self, file: &Path) -> Option<&BuildFlags> {
        let absolute = std::path::absolute(file).ok()?;
        self.files
            .get(&normalize(&absolute))
            .or_else(|| self.files.get(&normalize(&std::fs::canonicalize(file).ok()?)))
    }

    /// Whether some command defines `name`: a header (compiled inside the files that
    /// include it) may see it defined.
    pub fn any_defines(&self, name: &str) -> bool {
        self.files.values().any(|flags| flags.defines(name) == Some(true))
    }

    /// Definitions every listed command makes alike: the values headers see.
    pub fn common_defines(&self) -> Vec<(String, String)> {
        let mut commands = self.files.values();
        let Some(first) = commands.next() else {
            return Vec::new();
        };
        let rest: Vec<&BuildFlags> = commands.collect();
        let mut common: Vec<(String, String)> = first
            .defines
            .iter()
            .filter(|(name, value)| rest.iter().all(|flags| flags.defines.get(*name) == Some(value)))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        common.sort();
        common
    }
}

/// A database entry's file (absolute) and preprocessor flags.
fn read_entry(entry: &serde_json::Value) -> Option<(PathBuf, BuildFlags)> {
    let directory = Path::new(entry.get("directory").and_then(|d| d.as_str()).unwrap_or(""));
    let file = directory.join(entry.get("file")?.as_str()?);
    let arguments: Vec<String> = match entry.get("arguments").and_then(|a| a.as_array()) {
        Some(arguments) => arguments
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect(),
        None => shlex::split(entry.get("command")?.as_str()?)?,
    };
    Some((file, preprocessor_flags(&arguments)))
}

/// `-D`/`-U` flags of a command line (`-DX`, `-D X`, `-DX=2`, `/DX` as MSVC writes).
fn preprocessor_flags(arguments: &[String]) -> BuildFlags {
    let mut flags = BuildFlags::default();
    let mut arguments = arguments.iter().skip(1);
    while let Some(argument) = arguments.next() {
        if let Some(value) = argument.strip_prefix("--cce-auto-sync=") {
            flags.cce_auto_sync_off = value == "off";
            continue;
        }
        let (kind, rest) = match argument.get(..2) {
            Some("-D" | "/D") => ('D', &argument[2..]),
            Some("-U" | "/U") => ('U', &argument[2..]),
            _ => continue,
        };
        let spec = if rest.is_empty() {
            match arguments.next() {
                Some(next) => next.as_str(),
                None => break,
            }
        } else {
            rest
        };
        let (name, value) = spec.split_once('=').unwrap_or((spec, "1"));
        if name.is_empty() {
            continue;
        }
        match kind {
            'D' => {
                flags.undefines.remove(name);
                flags.defines.insert(name.to_string(), value.to_string());
            }
            _ => {
                flags.defines.remove(name);
                flags.undefines.insert(name.to_string());
            }
        }
    }
    flags
}

/// `a/./b/../c.cpp` → `a/c.cpp`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(text: &str) -> CompileDb {
        CompileDb::parse(Path::new("/build/compile_commands.json"), text).unwrap()
    }

    #[test]
    fn reads_arguments_and_commands() {
        let db = db(r#"[
            {"directory": "/src/build", "file": "../op/a.cpp",
             "arguments": ["g++", "-DUSE_EARLY_START", "-D", "TILE=256", "-c", "../op/a.cpp"]},
            {"directory": "/src", "file": "/src/op/b.cpp",
             "command": "g++ -DTILE=256 -DNAME=\"x y\" -UUSE_EARLY_START -c op/b.cpp"}
        ]"#);
        let a = db.flags_for(Path::new("/src/op/a.cpp")).unwrap();
        assert_eq!(a.defines("USE_EARLY_START"), Some(true));
        assert_eq!(a.defines.get("TILE").map(String::as_str), Some("256"));
        assert_eq!(a.defines.get("USE_EARLY_START").map(String::as_str), Some("1"));
        let b = db.flags_for(Path::new("/src/op/b.cpp")).unwrap();
        assert_eq!(b.defines("USE_EARLY_START"), Some(false));
        assert_eq!(b.defines.get("NAME").map(String::as_str), Some("x y"));
        assert_eq!(b.defines("OTHER"), None);
        assert!(db.flags_for(Path::new("/src/op/c.h")).is_none());
        assert_eq!(db.common_defines(), vec![("TILE".to_string(), "256".to_string())]);
        assert!(db.any_defines("USE_EARLY_START"));
        assert!(!db.any_defines("OTHER"));
    }

    #[test]
    fn rejects_what_is_not_a_database() {
        assert!(CompileDb::parse(Path::new("x"), "{}").is_err());
        assert!(CompileDb::parse(Path::new("x"), "[{\"file\": 3}]").is_err());
        assert!(CompileDb::parse(Path::new("x"), "[1").is_err());
    }

    proptest::proptest! {
        /// Any text is read or rejected, never a panic.
        #[test]
        fn any_text_is_read_or_rejected(text in "\\PC{0,200}") {
            let _ = CompileDb::parse(Path::new("x"), &text);
        }

        /// Any command line: each `-D`/`-U` is read back as the compiler applies it.
        #[test]
        fn any_command_reads_back(arguments in proptest::collection::vec("(-D|-U|/D|-I|-c|x)?[A-Z_=0-9\" ']{0,6}", 0..12)) {
            let entry = serde_json::json!([{ "directory": "/d", "file": "a.cpp", "arguments": arguments }]);
            let db = CompileDb::parse(Path::new("x"), &entry.to_string()).unwrap();
            let flags = db.flags_for(Path::new("/d/a.cpp")).unwrap();
            proptest::prop_assert!(flags.defines.keys().all(|name| !flags.undefines.contains(name)));
            let command = serde_json::json!([{ "directory": "/d", "file": "a.cpp", "command": arguments.join(" ") }]);
            let _ = CompileDb::parse(Path::new("x"), &command.to_string());
        }
    }
}
