//! A trace line's `loc`: where in the user's source the call was made. Findings are
//! placed on that line when the source file can be read (the trace line goes with them);
//! otherwise they name it.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::json::Json;
use syncguard_model::diagnostic::{Diagnostic, Related};
use syncguard_model::source::{FileId, SourceFile, Sources, Span};

/// `{"file": "train.cpp", "line": 88, "col": 5}`
#[derive(Clone, Debug)]
pub struct SourceLocation {
    file: String,
    line: usize,
    col: Option<usize>,
}

impl SourceLocation {
    pub fn from_json(loc: &Json) -> Option<SourceLocation> {
        let Json::Str(file) = loc.get("file")? else { return None };
        let positive = |key| {
            loc.get(key)
                .and_then(Json::as_int)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n > 0)
        };
        Some(SourceLocation {
            file: file.to_string(),
            line: positive("line")?,
            col: positive("col"),
        })
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        match self.col {
            Some(col) => write!(f, ":{col}"),
            None => Ok(()),
        }
    }
}

/// Source files opened for locations, by the path the trace names (`None`: unreadable).
pub struct SourceFiles<'s> {
    sources: &'s mut Sources,
    /// The trace's folder, which relative paths are tried against first.
    base: Option<PathBuf>,
    opened: HashMap<String, Option<FileId>>,
}

impl<'s> SourceFiles<'s> {
    pub fn new(sources: &'s mut Sources, trace: FileId) -> Self {
        let base = Path::new(&sources.get(trace).path).parent().map(Path::to_path_buf);
        SourceFiles {
            sources,
            base,
            opened: HashMap::new(),
        }
    }

    /// Point `diagnostic` at the source of every involved trace line that has a `loc`.
    /// When the primary call's source file can be read, the finding moves there (the
    /// line the user changes, and where an editor or code scanning shows it) and the
    /// trace line, with the call's arguments, follows as a related label; otherwise a
    /// note names the location.
    pub fn annotate(&mut self, diagnostic: &mut Diagnostic, locs: &HashMap<usize, SourceLocation>) {
        for related in &mut diagnostic.related {
            if let Some(loc) = locs.get(&related.span.range.start) {
                related.message.push_str(&format!(" (source: {loc})"));
            }
        }
        if let Some(loc) = locs.get(&diagnostic.primary.range.start) {
            match self.span(loc) {
                Some(span) => {
                    let trace = std::mem::replace(&mut diagnostic.primary, span);
                    diagnostic.related.push(Related {
                        span: trace,
                        message: "the call, in the trace".into(),
                    });
                }
                None => diagnostic.notes.push(format!("this call is at {loc} in the source")),
            }
        }
        // The timeline's boxes name the program's line, not the trace's.
        if let Some(timeline) = &mut diagnostic.timeline {
            for op in &mut timeline.ops {
                if let Some(loc) = locs.get(&op.span.range.start) {
                    op.source = Some(format!("{}:{}", loc.file, loc.line));
                }
            }
        }
    }

    /// The span of the location's line, from its column, in the opened source file.
    fn span(&mut self, loc: &SourceLocation) -> Option<Span> {
        let id = match self.opened.get(&loc.file) {
            Some(id) => *id,
            None => {
                let id = self.open(&loc.file);
                self.opened.insert(loc.file.clone(), id);
                id
            }
        }?;
        let file = self.sources.get(id);
        let line = file.line_bytes(loc.line.checked_sub(1)?);
        let text = file.text.get(line.clone())?;
        if loc.line > 1 && line.start == 0 {
            return None; // the file is shorter than the trace claims
        }
        let content = text.trim_end_matches(['\n', '\r']).len();
        let column = loc
            .col
            .map_or(0, |c| text.char_indices().nth(c - 1).map_or(content, |(i, _)| i));
        let start = line.start + column.min(content);
        Some(Span::new(id, start..(line.start + content).max(start)))
    }

    fn open(&mut self, path: &str) -> Option<FileId> {
        let candidates = self
            .base
            .iter()
            .map(|base| base.join(path))
            .chain([PathBuf::from(path)]);
        for candidate in candidates {
            if let Ok(bytes) = std::fs::read(&candidate) {
                let (text, _) = syncguard_model::source::decode_utf8_lossless_offsets(&bytes);
                return Some(self.sources.add(SourceFile::new(candidate.display().to_string(), text)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rule::Rule;

    #[test]
    fn a_finding_moves_to_its_calls_line_when_the_source_can_be_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("train.py"), "import acl\nacl.rt.reset_event(ev, s)\n").unwrap();
        let trace_path = dir.path().join("t.jsonl").display().to_string();
        let mut sources = Sources::default();
        let trace = sources.add(SourceFile::new(trace_path, "{\"api\": \"x\"}\n{\"api\": \"y\"}\n"));
        let locs: HashMap<usize, SourceLocation> = [
            (
                0,
                SourceLocation {
                    file: "train.py".into(),
                    line: 2,
                    col: None,
                },
            ),
            (
                14,
                SourceLocation {
                    file: "gone.py".into(),
                    line: 7,
                    col: None,
                },
            ),
        ]
        .into();
        let mut located = Diagnostic::new(&Rule, Span::new(trace, 0..13), "m");
        let mut unreadable = Diagnostic::new(&Rule, Span::new(trace, 14..27), "m");
        let mut files = SourceFiles::new(&mut sources, trace);
        files.annotate(&mut located, &locs);
        files.annotate(&mut unreadable, &locs);
        let primary = sources.get(located.primary.file);
        assert!(primary.path.ends_with("train.py"), "{}", primary.path);
        assert_eq!(
            &primary.text[located.primary.range.clone()],
            "acl.rt.reset_event(ev, s)"
        );
        assert_eq!(located.related.len(), 1);
        assert_eq!(located.related[0].span, Span::new(trace, 0..13));
        assert_eq!(located.related[0].message, "the call, in the trace");
        assert_eq!(unreadable.primary, Span::new(trace, 14..27));
        assert_eq!(unreadable.notes, ["this call is at gone.py:7 in the source"]);
    }
}
