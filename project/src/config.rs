//! Configuration files: `syncguard.toml`, or `[tool.syncguard]` in `pyproject.toml`,
//! found by walking up from the first checked path (`--config FILE` names one,
//! `--isolated` uses none). Command-line flags override the file.
//!
//! ```toml
//! target = "A3"            # as --target
//! cann = "current"         # as --cann
//! ranks = "2..=8"          # as --ranks, for SPMD sources
//! aliases = [["src", "dst"]]  # as --alias: names that may be one object
//! include = ["ops/**"]              # folder searches take only these (default: all)
//! exclude = ["third_party/**"]       # replaces the default (none)
//! extend-exclude = ["build/**"]
//!
//! [lint]
//! select = ["SG1", "SG601"]          # codes or prefixes
//! extend-select = ["SG701"]
//! ignore = ["SG107"]
//! per-file-ignores = { "tests/**" = ["SG701"] }
//!
//! [lint.severity]
//! SG107 = "error"
//! ```
//!
//! An unknown key or a code that matches no rule is an error naming the file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use syncguard_analyzer::model::{CannPolicy, Target};
use syncguard_analyzer::rules::RULES;
use syncguard_analyzer::{Diagnostic, Overrides, Severity, Sources};
use toml::Spanned;

use crate::selection::matches;
use crate::sources::SourceOptions;

/// A configuration file, read and checked.
#[derive(Debug, Default)]
pub struct Config {
    pub path: Option<PathBuf>,
    pub target: Option<String>,
    pub cann: Option<String>,
    pub ranks: Option<String>,
    /// Groups of names that may be one object (`--alias`).
    pub aliases: Vec<Vec<String>>,
    /// Globs, relative to the file's folder, of what folder searches take (all when
    /// empty) and skip.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub select: Vec<String>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
    pub per_file_ignores: Vec<(String, Vec<String>)>,
    pub severity: Vec<(String, Severity)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct File {
    target: Option<String>,
    cann: Option<String>,
    ranks: Option<String>,
    #[serde(default)]
    aliases: Vec<Vec<String>>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    extend_exclude: Vec<String>,
    #[serde(default)]
    lint: Lint,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Lint {
    #[serde(default)]
    select: Vec<Spanned<String>>,
    #[serde(default)]
    extend_select: Vec<Spanned<String>>,
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    per_file_ignores: BTreeMap<String, Vec<Spanned<String>>>,
    #[serde(default)]
    severity: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize)]
struct PyProject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    syncguard: Option<File>,
}

/// The configuration for a run: `explicit` (`--config`), none (`--isolated`), or the
/// first `syncguard.toml` or `pyproject.toml` with `[tool.syncguard]` above `start`.
pub fn load(explicit: Option<&Path>, isolated: bool, start: Option<&Path>) -> Result<Config, String> {
    if isolated {
        return Ok(Config::default());
    }
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => match start.and_then(discover) {
            Some(path) => path,
            None => return Ok(Config::default()),
        },
    };
    let text = std::fs::read_to_string(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    read(&path, &text)
}

fn discover(start: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start).ok()?;
    start.ancestors().find_map(|folder| {
        let own = folder.join("syncguard.toml");
        if own.is_file() {
            return Some(own);
        }
        let pyproject = folder.join("pyproject.toml");
        let text = std::fs::read_to_string(&pyproject).ok()?;
        text.contains("[tool.syncguard").then_some(pyproject)
    })
}

/// `src,dst`: the names of one alias group (`--alias`), at least two.
pub fn parse_alias_group(text: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = text
        .split(',')
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect();
    if names.len() < 2 {
        return Err(format!(
            "`{text}`: an alias group names two or more names, comma-separated"
        ));
    }
    Ok(names)
}

/// Parse a configuration file's text (`pyproject.toml`: its `[tool.syncguard]`).
pub fn read(path: &Path, text: &str) -> Result<Config, String> {
    let at = |span: std::ops::Range<usize>| {
        let line = text.as_bytes()[..span.start.min(text.len())]
            .iter()
            .filter(|byte| **byte == b'\n')
            .count()
            + 1;
        format!("{}:{line}", path.display())
    };
    let parsed = if path.file_name().is_some_and(|name| name == "pyproject.toml") {
        toml::from_str::<PyProject>(text).map(|project| project.tool.and_then(|tool| tool.syncguard))
    } else {
        toml::from_str::<File>(text).map(Some)
    };
    let file = parsed
        .map_err(|err| match err.span() {
            Some(span) => format!("{}: {}", at(span), err.message()),
            None => format!("{}: {}", path.display(), err.message()),
        })?
        .unwrap_or_else(|| File {
            target: None,
            cann: None,
            ranks: None,
            aliases: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            extend_exclude: Vec::new(),
            lint: Lint::default(),
        });
    let codes = |list: Vec<Spanned<String>>| -> Result<Vec<String>, String> {
        list.into_iter()
            .map(|code| {
                let span = code.span();
                let code = code.into_inner();
                if RULES.iter().any(|rule| matches(&code, rule.code)) {
                    Ok(code)
                } else {
                    Err(format!("{}: `{code}` matches no rule", at(span)))
                }
            })
            .collect()
    };
    let lint = file.lint;
    let mut per_file_ignores = Vec::new();
    for (glob, list) in lint.per_file_ignores {
        per_file_ignores.push((glob, codes(list)?));
    }
    let mut severity = Vec::new();
    for (code, level) in lint.severity {
        if !RULES.iter().any(|rule| rule.code == code) {
            return Err(format!("{}: `{code}` is no rule", at(level.span())));
        }
        let span = level.span();
        let level = match level.into_inner().as_str() {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            "info" => Severity::Info,
            other => {
                return Err(format!(
                    "{}: severity `{other}`: expected \"error\", \"warning\" or \"info\"",
                    at(span)
                ));
            }
        };
        severity.push((code, level));
    }
    for group in &file.aliases {
        if group.len() < 2 {
            return Err(format!(
                "{}: `aliases`: each group names two or more names, not {group:?}",
                path.display()
            ));
        }
    }
    let exclude = file.exclude.into_iter().chain(file.extend_exclude).collect();
    Ok(Config {
        path: Some(path.to_path_buf()),
        target: file.target,
        cann: file.cann,
        ranks: file.ranks,
        aliases: file.aliases,
        include: file.include,
        exclude,
        select: codes(lint.select)?,
        extend_select: codes(lint.extend_select)?,
        ignore: codes(lint.ignore)?,
        per_file_ignores,
        severity,
    })
}

impl Config {
    /// Fill what the command line left unset (`target`, `cann`, `ranks`) from the file.
    pub fn settle(&self, overrides: &mut Overrides, options: &mut SourceOptions) -> Result<(), String> {
        let named = |key: &str| match &self.path {
            Some(path) => format!("{}: `{key}`", path.display()),
            None => key.to_string(),
        };
        if overrides.target.is_none()
            && let Some(target) = &self.target
        {
            overrides.target = Some(parse_target(target).map_err(|err| format!("{}: {err}", named("target")))?);
        }
        if overrides.cann.is_none()
            && let Some(cann) = &self.cann
        {
            overrides.cann = Some(match cann.as_str() {
                "current" => CannPolicy::Current,
                "legacy" => CannPolicy::Legacy,
                other => return Err(format!("{}: `{other}`: expected current or legacy", named("cann"))),
            });
        }
        if options.cpp.ranks.is_none()
            && let Some(ranks) = &self.ranks
        {
            options.cpp.ranks = Some(parse_ranks(ranks).map_err(|err| format!("{}: {err}", named("ranks")))?);
        }
        // The file's groups and the command line's both hold.
        options.cpp.aliases.extend(self.aliases.iter().cloned());
        options.python.aliases.extend(self.aliases.iter().cloned());
        Ok(())
    }

    /// The folder globs are relative to.
    fn base(&self) -> PathBuf {
        self.path
            .as_deref()
            .and_then(Path::parent)
            // `--config syncguard.toml`: its folder is the working directory.
            .map(|parent| {
                if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                }
            })
            .map(|parent| std::path::absolute(parent).unwrap_or_else(|_| parent.to_path_buf()))
            .unwrap_or_default()
    }

    /// Whether a file found in a folder search is left out: `include` does not match
    /// it, or `exclude` does.
    pub fn excludes(&self, file: &Path) -> bool {
        let base = self.base();
        (!self.include.is_empty() && !matches_any(&base, &self.include, file))
            || (!self.exclude.is_empty() && matches_any(&base, &self.exclude, file))
    }

    /// Drop findings `per-file-ignores` covers; apply `[lint.severity]`.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>, sources: &Sources) {
        if !self.per_file_ignores.is_empty() {
            let base = self.base();
            diagnostics.retain(|diagnostic| {
                let file = Path::new(&sources.get(diagnostic.primary.file).path);
                !self.per_file_ignores.iter().any(|(glob, codes)| {
                    codes.iter().any(|code| matches(code, diagnostic.code))
                        && matches_any(&base, std::slice::from_ref(glob), file)
                })
            });
        }
        for diagnostic in diagnostics.iter_mut() {
            if let Some((_, level)) = self.severity.iter().find(|(code, _)| code == diagnostic.code) {
                diagnostic.severity = *level;
            }
        }
    }
}

/// A target by name: `A3` or `Ascend910_93`-style `AscendA3`.
pub fn parse_target(text: &str) -> Result<Target, String> {
    Target::from_name(text.strip_prefix("Ascend").unwrap_or(text))
        .ok_or_else(|| "expected one of A2, A3, 950, 310P".to_string())
}

/// Rank counts: one (`4`) or a range (`2..=8`).
pub fn parse_ranks(text: &str) -> Result<Vec<i64>, String> {
    syncguard_cpp::parse_rank_counts(text)
        .ok_or_else(|| "expected a rank count or range of at most 64 counts, such as `4` or `2..=8`".into())
}

/// Whether `file` (absolute, or relative to the working directory) matches a glob
/// relative to `base`.
fn matches_any(base: &Path, globs: &[String], file: &Path) -> bool {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let Ok(relative) = absolute.strip_prefix(base) else {
        return false;
    };
    let mut builder = globset::GlobSetBuilder::new();
    for glob in globs {
        if let Ok(glob) = globset::GlobBuilder::new(glob).literal_separator(true).build() {
            builder.add(glob);
        }
    }
    builder.build().is_ok_and(|set| set.is_match(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_key() {
        let config = read(
            Path::new("/repo/syncguard.toml"),
            "target = \"A3\"\nranks = \"2..=4\"\ninclude = [\"src/**\", \"build/**\"]\nextend-exclude = [\"build/**\"]\n[lint]\nselect = [\"SG1\"]\nignore = [\"SG107\"]\nper-file-ignores = { \"tests/**\" = [\"SG7\"] }\n[lint.severity]\nSG107 = \"error\"\n",
        )
        .unwrap();
        assert_eq!(config.target.as_deref(), Some("A3"));
        assert_eq!(config.exclude, ["build/**"]);
        assert_eq!(config.select, ["SG1"]);
        assert_eq!(config.severity, [("SG107".to_string(), Severity::Error)]);
        assert!(config.excludes(Path::new("/repo/build/x.cpp")));
        assert!(!config.excludes(Path::new("/repo/src/x.cpp")));
        assert!(config.excludes(Path::new("/repo/docs/x.cpp")), "not included");
    }

    #[test]
    fn aliases_are_groups_of_two_or_more_names() {
        let config = read(Path::new("syncguard.toml"), "aliases = [[\"src\", \"dst\"]]\n").unwrap();
        assert_eq!(config.aliases, [vec!["src".to_string(), "dst".to_string()]]);
        let err = read(Path::new("syncguard.toml"), "aliases = [[\"src\"]]\n").unwrap_err();
        assert!(err.contains("two or more"), "{err}");
        assert_eq!(parse_alias_group(" a, b ").unwrap(), ["a", "b"]);
        assert!(parse_alias_group("a").is_err());
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = read(
            Path::new("syncguard.toml"),
            "target = \"A3\"\n\n[lint]\nselct = [\"SG1\"]\n",
        )
        .unwrap_err();
        assert!(err.starts_with("syncguard.toml:4:") && err.contains("selct"), "{err}");
        let err = read(Path::new("syncguard.toml"), "[lint]\nignore = [\"SG107\", \"SG99\"]\n").unwrap_err();
        assert_eq!(err, "syncguard.toml:2: `SG99` matches no rule");
        let err = read(
            Path::new("pyproject.toml"),
            "[project]\nname = \"x\"\n[tool.syncguard.lint]\nseverity = { SG107 = \"fatal\" }\n",
        )
        .unwrap_err();
        assert!(err.starts_with("pyproject.toml:4:") && err.contains("fatal"), "{err}");
    }

    proptest::proptest! {
        /// Any text is read or rejected with a message, never a panic, as either name.
        #[test]
        fn any_text_is_read_or_rejected(text in "(\\[lint\\]\n|\\[tool.syncguard\\]\n|[a-z=\\-\" \\[\\]{},.*/]{0,12}\n|SG[0-9]{0,3}|\\PC{0,8}){0,12}") {
            let _ = read(Path::new("syncguard.toml"), &text);
            let _ = read(Path::new("pyproject.toml"), &text);
        }
    }
}
