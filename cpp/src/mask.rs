//! What tree-sitter's C++ grammar cannot read, blanked out before parsing: CUDA and
//! Ascend C launch configurations (`k<<<grid, block, 0, s>>>(...)`) and the kernel
//! qualifiers (`__global__`, `__aicore__`, ...). Blanking keeps every byte offset, so
//! spans still point into the file the user wrote; what was blanked is kept aside.

use std::collections::HashMap;
use std::ops::Range;

/// A source text made readable for the C++ grammar, and what was taken out of it.
#[derive(Clone)]
pub struct Masked {
    pub text: String,
    /// Launch configurations by the offset of their `<<<` (where the kernel name
    /// ends): the byte range of each configuration argument.
    pub launches: HashMap<usize, Vec<Range<usize>>>,
    /// Offsets of `__global__`: a function it precedes is a kernel (CUDA's, and Ascend
    /// C's `__global__ __aicore__`).
    pub kernel_markers: Vec<usize>,
    /// Offsets of `__aicore__` and `__device__`: a function they precede runs on the
    /// device (a kernel, or a helper kernels call).
    pub device_markers: Vec<usize>,
}

/// Qualifiers that are no C++: blanked, and kernel markers remembered.
const QUALIFIERS: &[&str] = &[
    "__global__",
    "__aicore__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "__gm__",
    "__ubuf__",
    "__restrict__",
];
const DEVICE_QUALIFIERS: &[&str] = &["__aicore__", "__device__"];

pub fn mask(source: &str) -> Masked {
    let mut bytes = source.as_bytes().to_vec();
    let mut launches = HashMap::new();
    let mut kernel_markers = Vec::new();
    let mut device_markers = Vec::new();
    let mut search = 0;
    while let Some(found) = source[search..].find("<<<") {
        let open = search + found;
        let Some(close) = source[open + 3..].find(">>>").map(|at| open + 3 + at) else {
            break;
        };
        launches.insert(open, split_top_level(source, open + 3..close));
        // `k<<<g, b, s>>>(x)` reads as `k(  g, b, s  )(x)`: a call of a call, whose
        // inner arguments are the configuration.
        bytes[open..open + 3].copy_from_slice(b"(  ");
        bytes[close..close + 3].copy_from_slice(b"  )");
        search = close + 3;
    }
    for word in QUALIFIERS {
        for (at, _) in source.match_indices(word) {
            if !is_word_at(source, at, word.len()) {
                continue;
            }
            bytes[at..at + word.len()].fill(b' ');
            if *word == "__global__" {
                kernel_markers.push(at);
            } else if DEVICE_QUALIFIERS.contains(word) {
                device_markers.push(at);
            }
        }
    }
    for attribute in ["__launch_bounds__", "__mix__"] {
        for (at, _) in source.match_indices(attribute) {
            let end = skip_parens(source, at + attribute.len());
            bytes[at..end].fill(b' ');
        }
    }
    parenthesize_core_conditions(source, &mut bytes);
    kernel_markers.sort_unstable();
    device_markers.sort_unstable();
    // Only ASCII bytes were replaced by ASCII spaces, so the text stays UTF-8.
    let text = String::from_utf8(bytes).unwrap_or_else(|_| source.to_string());
    Masked {
        text,
        launches,
        kernel_markers,
        device_markers,
    }
}

/// `if ASCEND_IS_AIC {`: Ascend C's core-type macros expand to a parenthesized
/// condition, which the grammar cannot see; the blanks around the name become the
/// parentheses (`if(ASCEND_IS_AIC){`), keeping every offset.
fn parenthesize_core_conditions(source: &str, bytes: &mut [u8]) {
    for name in ["ASCEND_IS_AIC", "ASCEND_IS_AIV"] {
        for (at, _) in source.match_indices(name) {
            let before = source[..at].trim_end_matches([' ', '\t']);
            let after = at + name.len();
            let gap_before = at - before.len();
            let rest = &source[after..];
            let gap_after = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            if before.ends_with("if")
                && is_word_at(source, before.len() - 2, 2)
                && gap_before > 0
                && gap_after > 0
                && rest[gap_after..].starts_with('{')
            {
                bytes[at - 1] = b'(';
                bytes[after] = b')';
            }
        }
    }
}

fn is_word_at(source: &str, at: usize, len: usize) -> bool {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = source.as_bytes();
    (at == 0 || !is_ident(bytes[at - 1])) && bytes.get(at + len).is_none_or(|&b| !is_ident(b))
}

/// The end of a parenthesized group starting at `from` (after blanks), or `from`.
fn skip_parens(source: &str, from: usize) -> usize {
    let bytes = source.as_bytes();
    let mut at = from;
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    if bytes.get(at) != Some(&b'(') {
        return from;
    }
    let mut depth = 0usize;
    for (offset, &byte) in bytes[at..].iter().enumerate() {
        match byte {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return at + offset + 1;
                }
            }
            _ => {}
        }
    }
    from
}

/// The comma-separated parts of `range`, outside parentheses, brackets and braces,
/// trimmed of blanks.
fn split_top_level(source: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let bytes = source.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = range.start;
    for at in range.clone() {
        match bytes[at] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                parts.push(trim(source, start..at));
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(trim(source, start..range.end));
    parts.retain(|part| !part.is_empty());
    parts
}

fn trim(source: &str, range: Range<usize>) -> Range<usize> {
    let text = &source[range.clone()];
    let start = range.start + (text.len() - text.trim_start().len());
    let end = range.end - (text.len() - text.trim_end().len());
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_configuration_is_blanked_and_kept() {
        let source = "add<<<8, nullptr, stream>>>(x, y);";
        let masked = mask(source);
        assert_eq!(masked.text, "add(  8, nullptr, stream  )(x, y);");
        let parts: Vec<&str> = masked.launches[&3].iter().map(|r| &source[r.clone()]).collect();
        assert_eq!(parts, ["8", "nullptr", "stream"]);
    }

    #[test]
    fn kernel_qualifiers_are_blanked_and_marked() {
        let source = "extern \"C\" __global__ __aicore__ void k(__gm__ int *x) {}";
        let masked = mask(source);
        assert!(!masked.text.contains("__"));
        assert_eq!(masked.kernel_markers, vec![11]);
        assert_eq!(masked.device_markers, vec![22]);
        assert_eq!(masked.text.len(), source.len());
    }
}
