//! Fingerprints of findings that survive unrelated edits: the rule, the file, and the
//! text of the primary line (not its number), with an occurrence count for findings
//! that share all three. SARIF's `partialFingerprints` and baselines use them.

use crate::diagnostic::Diagnostic;
use crate::source::Sources;

/// One fingerprint per diagnostic, in order: 16 hex digits.
pub fn fingerprints(diagnostics: &[Diagnostic], sources: &Sources) -> Vec<String> {
    let mut seen = std::collections::HashMap::new();
    diagnostics
        .iter()
        .map(|diagnostic| {
            let key = fnv1a([
                diagnostic.code,
                normalized_path(&sources.get(diagnostic.primary.file).path),
                &primary_line(diagnostic, sources),
            ]);
            let occurrence = seen.entry(key).or_insert(0u64);
            *occurrence += 1;
            format!(
                "{:016x}",
                fnv1a([key.to_string().as_str(), occurrence.to_string().as_str()])
            )
        })
        .collect()
}

/// The primary line's text with its whitespace collapsed (indentation changes do not
/// change the finding).
fn primary_line(diagnostic: &Diagnostic, sources: &Sources) -> String {
    let file = sources.get(diagnostic.primary.file);
    let line = file.line_of(diagnostic.primary.range.start);
    let bytes = file.line_bytes(line);
    let text = file.text.get(bytes).unwrap_or_default();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn normalized_path(path: &str) -> &str {
    path.trim_start_matches("./")
}

/// FNV-1a (64 bits) over the parts, each ended by a zero byte: stable across runs,
/// platforms and compiler versions, unlike the standard library's hasher.
fn fnv1a<'a>(parts: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::UnknownName;
    use crate::source::{SourceFile, Span};

    fn fingerprint_at(text: &str, needle: &str) -> String {
        let mut sources = Sources::default();
        let file = sources.add(SourceFile::new("./op.sync", text));
        let at = text.find(needle).unwrap();
        let diagnostic = Diagnostic::new(&UnknownName::INFO, Span::new(file, at..at + needle.len()), "x");
        fingerprints(&[diagnostic], &sources).remove(0)
    }

    #[test]
    fn survives_edits_elsewhere_and_reindentation() {
        let before = fingerprint_at("let a = 1;\nfoo(a);\n", "foo");
        assert_eq!(
            before,
            fingerprint_at("// new comment\nlet a = 1;\n\n    foo(a);\n", "foo")
        );
        assert_ne!(before, fingerprint_at("let a = 1;\nfoo(b);\n", "foo"));
    }
}
