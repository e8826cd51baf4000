//! Human-readable output through ariadne, with byte-indexed spans.
//!
//! ariadne is given excerpts, not whole files: the lines around each group of labels
//! of one report. It walks every line between the labels it draws together, so two
//! calls a million trace lines apart would cost a million lines per report.

use std::collections::HashMap;
use std::ops::Range;

use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

use super::clip;
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{FileId, Sources};

/// Labels of one file further apart than this many lines are drawn as separate excerpts.
const MAX_EXCERPT_GAP: usize = 40;

#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    pub color: bool,
}

/// Render every diagnostic, in the given order, followed by nothing else.
pub fn render_text(diagnostics: &[Diagnostic], sources: &Sources, options: TextOptions) -> String {
    let mut out = Vec::new();
    let mut cache = SourceCache::default();
    for diagnostic in diagnostics {
        let mut spans = cache.excerpt_spans(diagnostic, sources);
        let header_fixes = cache.clip_long_lines(diagnostic, sources, &mut spans);
        cache.convert_to_char_offsets(&mut spans);
        let mut rendered = Vec::new();
        report(diagnostic, &spans, options)
            .write(&mut cache, &mut rendered)
            .expect("writing to a Vec cannot fail");
        if header_fixes.is_empty() {
            out.extend_from_slice(&rendered);
        } else {
            out.extend_from_slice(fix_header_columns(&rendered, &header_fixes).as_bytes());
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    // ariadne pads some lines with spaces; trailing whitespace only makes snapshots brittle.
    text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + if text.is_empty() { "" } else { "\n" }
}

type ReportSpan = (String, std::ops::Range<usize>);

/// `spans`: the primary span, then each related span, in excerpt coordinates.
fn report(diagnostic: &Diagnostic, spans: &[ReportSpan], options: TextOptions) -> Report<'static, ReportSpan> {
    let kind = match diagnostic.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
        Severity::Info => ReportKind::Advice,
    };
    let primary = spans[0].clone();
    let order = label_order(spans);
    let mut builder = Report::build(kind, primary.clone())
        .with_config(
            Config::default()
                .with_index_type(IndexType::Char)
                .with_color(options.color),
        )
        .with_code(format!("{} {}", diagnostic.code, diagnostic.name))
        .with_message(&diagnostic.message)
        .with_label(
            Label::new(primary)
                .with_message(&diagnostic.label)
                .with_color(Color::Red)
                .with_order(order[0]),
        );
    for (index, (related, span)) in diagnostic.related.iter().zip(&spans[1..]).enumerate() {
        builder = builder.with_label(
            Label::new(span.clone())
                .with_message(&related.message)
                .with_color(Color::Yellow)
                .with_order(order[index + 1]),
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

/// The order ariadne shows each label in: the primary's excerpt first, then the other
/// excerpts as their labels first appear, and labels by position within an excerpt.
/// ariadne starts a new snippet whenever a label comes above the one before it, and
/// heads every snippet of the primary's excerpt with the primary's line, so a related
/// call above the primary would appear under a header naming the wrong line.
fn label_order(spans: &[ReportSpan]) -> Vec<i32> {
    let mut excerpts: Vec<&str> = Vec::new();
    for (id, _) in spans {
        if !excerpts.contains(&id.as_str()) {
            excerpts.push(id);
        }
    }
    let key = |i: usize| {
        let excerpt = excerpts.iter().position(|id| *id == spans[i].0).unwrap_or(0);
        (excerpt, spans[i].1.start, i)
    };
    let mut by_place: Vec<usize> = (0..spans.len()).collect();
    by_place.sort_by_key(|&i| key(i));
    let mut order = vec![0; spans.len()];
    for (rank, &i) in by_place.iter().enumerate() {
        order[i] = rank as i32;
    }
    order
}

/// ariadne's sources: one per file, under one id per excerpt (`path NUL first-line`).
#[derive(Default)]
struct SourceCache {
    files: HashMap<String, ariadne::Source<String>>,
    /// The current diagnostic's files whose long lines are clipped: used instead of `files`.
    clipped: HashMap<String, ariadne::Source<String>>,
}

impl SourceCache {
    /// The spans of a diagnostic's labels (primary first), each under the id of the
    /// excerpt that shows it; nearby labels of one file share an excerpt.
    fn excerpt_spans(&mut self, diagnostic: &Diagnostic, sources: &Sources) -> Vec<ReportSpan> {
        let labels = label_ranges(diagnostic, sources);
        let mut order: Vec<usize> = (0..labels.len()).collect();
        order.sort_by_key(|&i| (labels[i].0, labels[i].1.start));
        let mut spans = vec![(String::new(), 0..0); labels.len()];
        let mut excerpt: Option<(FileId, usize, String)> = None;
        for index in order {
            let (file_id, range) = &labels[index];
            let file = sources.get(*file_id);
            let (first, last) = (file.line_of(range.start), file.line_of(range.end));
            let id = match &mut excerpt {
                Some((id_file, end_line, id)) if id_file == file_id && first <= *end_line + MAX_EXCERPT_GAP => {
                    *end_line = (*end_line).max(last);
                    id.clone()
                }
                _ => {
                    let id = format!("{}\0{first}", file.path);
                    excerpt = Some((*file_id, last, id.clone()));
                    id
                }
            };
            self.files
                .entry(file.path.clone())
                .or_insert_with(|| ariadne::Source::from(file.text.clone()));
            spans[index] = (id, range.clone());
        }
        spans
    }
}

impl SourceCache {
    /// Clip the long lines this diagnostic's labels are on (see [`clip`]), moving `spans`
    /// with them; returns the header locations to put back.
    fn clip_long_lines(
        &mut self,
        diagnostic: &Diagnostic,
        sources: &Sources,
        spans: &mut [ReportSpan],
    ) -> Vec<(String, String)> {
        self.clipped.clear();
        let labels = label_ranges(diagnostic, sources);
        let mut files: Vec<FileId> = labels.iter().map(|(file, _)| *file).collect();
        files.sort_unstable();
        files.dedup();
        let mut fixes = Vec::new();
        for file_id in files {
            let file = sources.get(file_id);
            let in_file = || labels.iter().enumerate().filter(move |(_, (id, _))| *id == file_id);
            let points: Vec<usize> = in_file().flat_map(|(_, (_, r))| [r.start, r.end]).collect();
            let Some(clipped) = clip::clip_long_lines(file, &points) else {
                continue;
            };
            for (index, (_, range)) in in_file() {
                spans[index].1 = clipped.map(range.start)..clipped.map(range.end);
            }
            let starts: Vec<usize> = in_file().map(|(_, (_, r))| r.start).collect();
            fixes.extend(clip::header_fixes(file, &clipped, &starts));
            self.clipped
                .insert(file.path.clone(), ariadne::Source::from(clipped.text));
        }
        fixes
    }
}

/// Every label of a diagnostic (primary first), clamped into its file.
fn label_ranges(diagnostic: &Diagnostic, sources: &Sources) -> Vec<(FileId, Range<usize>)> {
    std::iter::once(&diagnostic.primary)
        .chain(diagnostic.related.iter().map(|r| &r.span))
        .map(|span| {
            let text = &sources.get(span.file).text;
            let start = char_boundary_at_or_before(text, span.range.start);
            let end = char_boundary_at_or_after(text, span.range.end.max(start));
            (span.file, start..end)
        })
        .collect()
}

/// `offset` clamped into `text` and moved back to the start of the character it is in:
/// ariadne slices the text at label ends, which panics inside a character.
fn char_boundary_at_or_before(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// `offset` clamped into `text` and moved on to the end of the character it is in.
fn char_boundary_at_or_after(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset += 1;
    }
    offset
}

/// Put back the columns of clipped lines in the report headers (`[ path:line:col ]`).
fn fix_header_columns(rendered: &[u8], fixes: &[(String, String)]) -> String {
    let mut text = String::from_utf8_lossy(rendered).into_owned();
    for (written, real) in fixes {
        text = text.replace(written.as_str(), real);
    }
    text
}

impl SourceCache {
    /// Byte spans to the character offsets ariadne is given. With byte offsets, ariadne
    /// 0.6 takes the character offset of a second excerpt's first label for a byte
    /// offset when it writes that excerpt's header: a wrong column, or a panic after a
    /// multi-byte character. Spans are on character boundaries (`label_ranges`).
    fn convert_to_char_offsets(&mut self, spans: &mut [ReportSpan]) {
        for (id, range) in spans.iter_mut() {
            let Ok(source) = ariadne::Cache::fetch(self, id) else {
                continue;
            };
            let to_char = |byte: usize| match source.get_byte_line(byte) {
                Some((line, _, column)) => {
                    let text = source.get_line_text(line).unwrap_or("");
                    line.offset() + text.get(..column).map_or(column, |prefix| prefix.chars().count())
                }
                None => source.len(),
            };
            *range = to_char(range.start)..to_char(range.end);
        }
    }
}

impl ariadne::Cache<String> for SourceCache {
    type Storage = String;

    fn fetch(&mut self, id: &String) -> Result<&ariadne::Source<String>, impl std::fmt::Debug> {
        let path = id.split('\0').next().unwrap_or(id);
        self.clipped
            .get(path)
            .or_else(|| self.files.get(path))
            .ok_or_else(|| format!("unknown file {path}"))
    }

    fn display<'a>(&self, id: &'a String) -> Option<impl std::fmt::Display + 'a> {
        Some(id.split('\0').next().unwrap_or(id).to_string())
    }
}
