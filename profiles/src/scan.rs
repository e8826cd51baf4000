//! Finding the events of a Chrome-trace file without parsing it whole: the byte range of
//! each element of its event array, so that every event is parsed on its own (borrowing
//! from the text) and a finding can point at its bytes. The scan is iterative, with a
//! bound on nesting, so no file can exhaust the stack; a file cut short is read up to its
//! last complete event, and where it stopped is said.

use std::ops::Range;

/// Deeper nesting than this is refused (serde_json's own limit is 128).
pub const MAX_DEPTH: usize = 128;

/// Where the events of a Chrome trace are.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EventArray {
    /// Each complete element of the event array.
    pub events: Vec<Range<usize>>,
    /// The top-level object's other members, by key (`distributedInfo`, ...).
    pub members: Vec<(String, Range<usize>)>,
    /// Why reading stopped before the end, and at which byte.
    pub stopped: Option<Stopped>,
}

/// Reading stopped early: the text is cut short or malformed at `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    pub at: usize,
    pub why: String,
}

/// The events of `text`: the array itself (msprof's `trace_view.json`) or the
/// `traceEvents` member of an object (Kineto, Chrome's object form).
pub fn event_array(text: &[u8]) -> EventArray {
    let mut scan = EventArray::default();
    let start = skip_blank(text, 0);
    match text.get(start) {
        Some(b'[') => {
            let end = elements(text, start, &mut scan);
            let rest = skip_blank(text, end);
            if scan.stopped.is_none() && rest < text.len() {
                stop(&mut scan, rest, "text follows the event array");
            }
        }
        Some(b'{') => object_members(text, start, &mut scan),
        Some(_) => stop(
            &mut scan,
            start,
            "the file is neither a JSON array of events nor an object",
        ),
        None => stop(&mut scan, start, "the file is empty"),
    }
    scan
}

fn stop(scan: &mut EventArray, at: usize, why: impl Into<String>) {
    scan.stopped = Some(Stopped { at, why: why.into() });
}

/// The members of the top-level object: `traceEvents` is scanned element by element,
/// the others are kept as ranges.
fn object_members(text: &[u8], open: usize, scan: &mut EventArray) {
    let mut at = skip_blank(text, open + 1);
    let mut found_events = false;
    loop {
        match text.get(at) {
            Some(b'}') => break,
            Some(b'"') => {}
            Some(_) => return stop(scan, at, "expected a member name in the top-level object"),
            None => return stop(scan, at, "the file ends inside the top-level object"),
        }
        let key_end = match string_end(text, at) {
            Ok(end) => end,
            Err(stopped) => return scan.stopped = Some(stopped),
        };
        let key = String::from_utf8_lossy(&text[at + 1..key_end - 1]).into_owned();
        at = skip_blank(text, key_end);
        if text.get(at) != Some(&b':') {
            return stop(scan, at, format!("expected `:` after the member name `{key}`"));
        }
        at = skip_blank(text, at + 1);
        if key == "traceEvents" && text.get(at) == Some(&b'[') && !found_events {
            found_events = true;
            let before = scan.events.len();
            at = elements(text, at, scan);
            if scan.stopped.is_some() {
                return;
            }
            debug_assert!(scan.events.len() >= before);
        } else {
            match value_end(text, at) {
                Ok(end) => {
                    scan.members.push((key, at..end));
                    at = end;
                }
                Err(stopped) => return scan.stopped = Some(stopped),
            }
        }
        at = skip_blank(text, at);
        match text.get(at) {
            Some(b',') => at = skip_blank(text, at + 1),
            Some(b'}') => break,
            Some(_) => return stop(scan, at, "expected `,` or `}` in the top-level object"),
            None => return stop(scan, at, "the file ends inside the top-level object"),
        }
    }
    if !found_events {
        stop(scan, open, "the object has no `traceEvents` array");
    }
}

/// Scan the array opening at `open`; returns the offset after its `]`.
fn elements(text: &[u8], open: usize, scan: &mut EventArray) -> usize {
    let mut at = skip_blank(text, open + 1);
    if text.get(at) == Some(&b']') {
        return at + 1;
    }
    loop {
        match value_end(text, at) {
            Ok(end) => {
                scan.events.push(at..end);
                at = skip_blank(text, end);
            }
            Err(stopped) => {
                scan.stopped = Some(stopped);
                return at;
            }
        }
        match text.get(at) {
            Some(b',') => at = skip_blank(text, at + 1),
            Some(b']') => return at + 1,
            Some(_) => {
                stop(scan, at, "expected `,` or `]` between events");
                return at;
            }
            None => {
                stop(scan, at, "the file ends inside the event array (cut short?)");
                return at;
            }
        }
        // A trailing comma before `]` (seen in hand-edited files) ends the array too.
        if text.get(at) == Some(&b']') {
            return at + 1;
        }
    }
}

/// The offset after the JSON value starting at `start`. Iterative: an explicit depth
/// count, bounded by [`MAX_DEPTH`]; the value's content is checked by serde_json later.
pub fn value_end(text: &[u8], start: usize) -> Result<usize, Stopped> {
    match text.get(start) {
        None => Err(cut_short(start)),
        Some(b'"') => string_end(text, start),
        Some(b'{' | b'[') => container_end(text, start),
        Some(_) => {
            let mut at = start;
            while let Some(&byte) = text.get(at) {
                if matches!(byte, b',' | b']' | b'}') || byte.is_ascii_whitespace() {
                    return Ok(at);
                }
                at += 1;
            }
            Err(cut_short(start))
        }
    }
}

fn cut_short(at: usize) -> Stopped {
    Stopped {
        at,
        why: "the file ends inside an event (cut short?)".to_string(),
    }
}

/// The offset after the object or array opening at `open`.
fn container_end(text: &[u8], open: usize) -> Result<usize, Stopped> {
    let mut depth = 0usize;
    let mut at = open;
    while let Some(&byte) = text.get(at) {
        match byte {
            b'"' => {
                at = string_end(text, at)?;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Stopped {
                        at,
                        why: format!("nesting deeper than {MAX_DEPTH} levels"),
                    });
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    Err(cut_short(open))
}

/// The offset after the string whose opening quote is at `open`.
pub fn string_end(text: &[u8], open: usize) -> Result<usize, Stopped> {
    let mut at = open + 1;
    loop {
        match memchr::memchr2(b'"', b'\\', &text[at.min(text.len())..]) {
            Some(found) => {
                let hit = at + found;
                if text[hit] == b'"' {
                    return Ok(hit + 1);
                }
                at = hit + 2;
            }
            None => {
                return Err(Stopped {
                    at: open,
                    why: "the file ends inside a string (cut short?)".to_string(),
                });
            }
        }
    }
}

fn skip_blank(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        event_array(text.as_bytes())
            .events
            .into_iter()
            .map(|range| &text[range])
            .collect()
    }

    #[test]
    fn an_array_and_an_object_give_their_events() {
        assert_eq!(
            texts(r#"[{"a": 1}, {"b": [2, "]"]} ]"#),
            [r#"{"a": 1}"#, r#"{"b": [2, "]"]}"#]
        );
        let object = r#"{"schemaVersion": 1, "traceEvents": [{"x": "\"}"}], "distributedInfo": {"rank": 3}}"#;
        assert_eq!(texts(object), [r#"{"x": "\"}"}"#]);
        let scan = event_array(object.as_bytes());
        assert_eq!(scan.members.len(), 2);
        assert_eq!(&object[scan.members[1].1.clone()], r#"{"rank": 3}"#);
        assert_eq!(scan.stopped, None);
    }

    #[test]
    fn a_cut_file_keeps_its_complete_events_and_says_where_it_stopped() {
        let text = r#"[{"a": 1}, {"b": 2}, {"c": "#;
        let scan = event_array(text.as_bytes());
        assert_eq!(scan.events.len(), 2);
        let stopped = scan.stopped.unwrap();
        assert_eq!(stopped.at, 21);
        assert!(stopped.why.contains("cut short"), "{}", stopped.why);
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        let text = format!("[{}{}]", "[".repeat(100_000), "]".repeat(100_000));
        let scan = event_array(text.as_bytes());
        assert!(scan.stopped.unwrap().why.contains("nesting"));
    }

    #[test]
    fn scalars_and_trailing_commas() {
        assert_eq!(texts("[1, 2 , true,]"), ["1", "2", "true"]);
        assert_eq!(texts("[]"), Vec::<&str>::new());
    }
}
