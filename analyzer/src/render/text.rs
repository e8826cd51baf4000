//! Human-readable output through ariadne, with byte-indexed spans.

use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{FileId, Sources};

#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    pub color: bool,
}

/// Render every diagnostic, in the given order, followed by nothing else.
pub fn render_text(diagnostics: &[Diagnostic], sources: &Sources, options: TextOptions) -> String {
    let mut out = Vec::new();
    let mut cache = SourceCache::new(sources);
    for diagnostic in diagnostics {
        report(diagnostic, sources, options)
            .write(&mut cache, &mut out)
            .expect("writing to a Vec cannot fail");
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    // ariadne pads some lines with spaces; trailing whitespace only makes snapshots brittle.
    text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + if text.is_empty() { "" } else { "\n" }
}

type ReportSpan = (String, std::ops::Range<usize>);

fn report(diagnostic: &Diagnostic, sources: &Sources, options: TextOptions) -> Report<'static, ReportSpan> {
    let kind = match diagnostic.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
        Severity::Info => ReportKind::Advice,
    };
    let span = |file: FileId, range: &std::ops::Range<usize>| {
        let len = sources.get(file).text.len();
        let start = range.start.min(len);
        (sources.get(file).path.clone(), start..range.end.clamp(start, len))
    };
    let primary = span(diagnostic.primary.file, &diagnostic.primary.range);
    let mut builder = Report::build(kind, primary.clone())
        .with_config(
            Config::default()
                .with_index_type(IndexType::Byte)
                .with_color(options.color),
        )
        .with_code(format!("{} {}", diagnostic.code, diagnostic.name))
        .with_message(&diagnostic.message)
        .with_label(
            Label::new(primary)
                .with_message(&diagnostic.label)
                .with_color(Color::Red)
                .with_order(0),
        );
    for (order, related) in diagnostic.related.iter().enumerate() {
        builder = builder.with_label(
            Label::new(span(related.span.file, &related.span.range))
                .with_message(&related.message)
                .with_color(Color::Yellow)
                .with_order(order as i32 + 1),
        );
    }
    if let Some(help) = &diagnostic.help {
        builder = builder.with_help(help);
    }
    for note in &diagnostic.notes {
        builder = builder.with_note(note);
    }
    builder.finish()
}

/// ariadne's source cache over the run's files, keyed by path.
struct SourceCache {
    files: Vec<(String, ariadne::Source<String>)>,
}

impl SourceCache {
    fn new(sources: &Sources) -> Self {
        SourceCache {
            files: sources
                .iter()
                .map(|(_, f)| (f.path.clone(), ariadne::Source::from(f.text.clone())))
                .collect(),
        }
    }
}

impl ariadne::Cache<String> for SourceCache {
    type Storage = String;

    fn fetch(&mut self, id: &String) -> Result<&ariadne::Source<String>, impl std::fmt::Debug> {
        self.files
            .iter()
            .find(|(path, _)| path == id)
            .map(|(_, source)| source)
            .ok_or_else(|| format!("unknown file {id}"))
    }

    fn display<'a>(&self, id: &'a String) -> Option<impl std::fmt::Display + 'a> {
        Some(id.clone())
    }
}
