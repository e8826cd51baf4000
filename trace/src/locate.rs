//! Source locations for captured calls: `syncguard trace` writes each call's `caller`
//! as an object and an offset (docs/TRACE.md); where the object has debug information,
//! `addr2line` (GNU binutils) turns that into a file and line, written as the line's
//! `loc`, which diagnostics then name. Without `addr2line`, or without debug
//! information, the lines keep only `caller`. A line the interposer already gave a
//! `loc` (a call made from Python: the user's file and line in the Python stack) keeps
//! it: its caller is libffi or a framework's C++, not the user's code.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// Where a captured line's `caller` field starts.
const CALLER: &[u8] = b",\"caller\":";
/// A `loc` the interposer wrote (before `caller`).
const LOC: &[u8] = b",\"loc\":";

#[derive(Deserialize)]
struct Caller {
    object: String,
    offset: String,
}

/// A file and line `addr2line` gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: u64,
}

/// Add `loc` to the lines of the capture files `files` whose caller `addr2line` can
/// place; returns how many lines got one. Objects named by a relative path are found
/// from `cwd` (where the traced program started). Files are rewritten through a
/// temporary file next to them.
pub fn add_locations(files: &[PathBuf], cwd: &Path) -> std::io::Result<usize> {
    let mut texts = Vec::new();
    let mut sites: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let text = std::fs::read(file)?;
        for line in text.split(|&b| b == b'\n') {
            if let Some(caller) = caller_of(line) {
                sites.entry(caller.object).or_default().insert(caller.offset);
            }
        }
        texts.push(text);
    }
    let mut located: BTreeMap<(String, String), Location> = BTreeMap::new();
    for (object, offsets) in &sites {
        let offsets: Vec<&String> = offsets.iter().collect();
        for (offset, location) in offsets.iter().zip(addr2line(&cwd.join(object), &offsets)) {
            if let Some(location) = location {
                located.insert((object.clone(), (*offset).clone()), location);
            }
        }
    }
    if located.is_empty() {
        return Ok(0);
    }
    let mut count = 0;
    for (file, text) in files.iter().zip(&texts) {
        count += rewrite(file, text, &located)?;
    }
    Ok(count)
}

/// The caller of a line that has no `loc` yet.
fn caller_of(line: &[u8]) -> Option<Caller> {
    if memchr::memmem::find(line, LOC).is_some() {
        return None;
    }
    let at = memchr::memmem::rfind(line, CALLER)? + CALLER.len();
    let object = line[at..].strip_suffix(b"}")?;
    serde_json::from_slice(object).ok()
}

/// `addr2line -e OBJECT OFFSET...`: one answer per offset, `None` where it knows none
/// (`??:0`, `file:?`), and all `None` when it cannot run.
fn addr2line(object: &Path, offsets: &[&String]) -> Vec<Option<Location>> {
    let output = Command::new("addr2line")
        .arg("-e")
        .arg(object)
        .args(offsets.iter().map(|o| o.as_str()))
        .output();
    let Some(output) = output.ok().filter(|output| output.status.success()) else {
        return vec![None; offsets.len()];
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut answers: Vec<Option<Location>> = text.lines().map(parse_answer).collect();
    answers.resize(offsets.len(), None);
    answers
}

/// `/src/a.c:42`, `/src/a.c:42 (discriminator 3)`; `??:0` and `a.c:?` are unknown.
fn parse_answer(answer: &str) -> Option<Location> {
    let answer = answer.split(" (discriminator").next()?;
    let (file, line) = answer.rsplit_once(':')?;
    let line: u64 = line.trim().parse().ok().filter(|&line| line > 0)?;
    (file != "??").then(|| Location {
        file: file.to_string(),
        line,
    })
}

fn rewrite(file: &Path, text: &[u8], located: &BTreeMap<(String, String), Location>) -> std::io::Result<usize> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 4);
    let mut count = 0;
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    for (index, line) in lines.iter().enumerate() {
        let location = caller_of(line).and_then(|caller| located.get(&(caller.object, caller.offset)));
        match (location, line.strip_suffix(b"}")) {
            (Some(location), Some(body)) => {
                out.extend_from_slice(body);
                let loc = serde_json::json!({"file": location.file, "line": location.line});
                out.extend_from_slice(format!(",\"loc\":{loc}}}").as_bytes());
                count += 1;
            }
            _ => out.extend_from_slice(line),
        }
        if index + 1 < lines.len() {
            out.push(b'\n');
        }
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut temporary = tempfile::NamedTempFile::new_in(dir)?;
    temporary.write_all(&out)?;
    temporary.persist(file).map_err(|err| err.error)?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_of_addr2line() {
        assert_eq!(
            parse_answer("/src/a.c:42 (discriminator 3)"),
            Some(Location {
                file: "/src/a.c".into(),
                line: 42
            })
        );
        assert_eq!(parse_answer("??:0"), None);
        assert_eq!(parse_answer("/src/a.c:?"), None);
    }

    #[test]
    fn the_caller_is_the_last_field() {
        let line = br#"{"api":"x","args":{},"ret":0,"caller":{"object":"/a/b.so","offset":"0x10"}}"#;
        let caller = caller_of(line).unwrap();
        assert_eq!((caller.object.as_str(), caller.offset.as_str()), ("/a/b.so", "0x10"));
        assert!(caller_of(br#"{"api":"x"}"#).is_none());
        // A call from Python keeps the location the interposer gave it.
        let located = br#"{"api":"x","args":{},"ret":0,"loc":{"file":"/w/t.py","line":3},"caller":{"object":"/a/libffi.so.8","offset":"0x10"}}"#;
        assert!(caller_of(located).is_none());
    }
}
