//! The common trace line read without serde. A captured trace is millions of lines of
//! one shape: a flat object of known fields, an `args` object of strings and integers,
//! no escapes. serde_json reads such a line at about 250 MB/s, a quarter of the trace
//! check's time on 2 cores; this byte scanner reads it about three times as fast.
//!
//! It accepts a strict subset of JSON and returns `None` for anything outside it:
//! escapes, control characters, fractions and exponents, integers of 19 digits or more,
//! `-0`, nesting deeper than [`MAX_DEPTH`], a repeated field, anything after the closing
//! brace. serde_json then reads the line, so every value it gives, and every finding
//! about a malformed line, is exactly serde_json's (`scan::scan_text`). Within the
//! subset it builds what serde's derive builds: a `null` field is absent, an unknown
//! field is skipped, strings borrow from the line. The property test below holds the
//! two to the same result on lines built to sit on both sides of the subset's edges.

use std::borrow::Cow;

use crate::json::{Args, Json, Line, Member};

/// Deepest nesting read here; deeper lines (never written by a tracer) go to serde_json,
/// whose own limit is 128.
const MAX_DEPTH: u32 = 16;

/// The line, when it is in the subset; `None` sends it to serde_json.
#[cfg(test)]
pub(crate) fn scan(text: &str) -> Option<Line<'_>> {
    let mut line = Line::default();
    scan_into(text, &mut line).map(|()| line)
}

/// Reads the line into `line`, which starts empty, in place: a parsed line is a few
/// hundred bytes, and moving it from call to call cost more than reading its values.
/// `None` sends the line to serde_json, and leaves `line` partly written.
pub(crate) fn scan_into<'t>(text: &'t str, line: &mut Line<'t>) -> Option<()> {
    let mut cursor = Cursor { text, at: 0 };
    let mut seen = 0u16;
    cursor.skip_whitespace();
    cursor.list(b'{', b'}', |cursor| {
        let index = match cursor.call_field() {
            Some(index) => Some(index),
            None => field(cursor.member_key()?),
        };
        let Some(index) = index else {
            return cursor.value(1).map(drop);
        };
        let bit = 1u16 << index;
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        if index == ARGS {
            return cursor.args(&mut line.args);
        }
        let value = cursor.value(1)?;
        set_field(line, index, value)
    })?;
    cursor.skip_whitespace();
    (cursor.at == text.len()).then_some(())
}

/// The positions of the fields every call line has (`Cursor::call_field`); `args` is
/// read by [`Cursor::args`].
const API: u8 = 0;
const RANK: u8 = 1;
const THREAD: u8 = 2;
const ARGS: u8 = 3;
const RET: u8 = 4;
const TS: u8 = 5;

/// The position of a field `Line` reads, by its name.
fn field(key: &str) -> Option<u8> {
    Some(match key {
        "api" => API,
        "rank" => RANK,
        "thread" => THREAD,
        "args" => ARGS,
        "ret" => RET,
        "ts" => TS,
        "loc" => 6,
        "syncguard_trace" => 7,
        "world_size" => 8,
        "target" => 9,
        "cann" => 10,
        "default_stream" => 11,
        "syncguard_capture_end" => 12,
        _ => return None,
    })
}

/// Stores `value` in field `index` (any but `args`): `null` leaves it absent, as serde
/// reads an `Option`.
fn set_field<'t>(line: &mut Line<'t>, index: u8, value: Json<'t>) -> Option<()> {
    if value == Json::Null {
        return Some(());
    }
    let slot = match index {
        API => &mut line.api,
        RANK => &mut line.rank,
        THREAD => &mut line.thread,
        RET => &mut line.ret,
        TS => &mut line.ts,
        6 => &mut line.loc,
        _ => {
            let header = line.header.get_or_insert_default();
            match index {
                7 => &mut header.syncguard_trace,
                8 => &mut header.world_size,
                9 => &mut header.target,
                10 => &mut header.cann,
                11 => &mut header.default_stream,
                _ => &mut header.syncguard_capture_end,
            }
        }
    };
    *slot = Some(value);
    Some(())
}

/// The high bit of each byte of `word` (little-endian) that is a quote, a backslash
/// or a control character, exact up to the first such byte: a byte above it may be
/// flagged too, by the borrow of the subtractions. Bytes of 0x80 and above are never
/// flagged.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGH;
    below(word ^ (ONES * u64::from(b'"')), 1) | below(word ^ (ONES * u64::from(b'\\')), 1) | below(word, 0x20)
}

struct Cursor<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Cursor<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn advance(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// JSON's whitespace only: anything else is for serde_json to judge.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'t str> {
        self.eat(b'"')?;
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut end = start;
        // Eight bytes at a time while they last, then one at a time, to the first byte
        // that is a quote, a backslash or a control character.
        loop {
            match bytes.get(end..end + 8) {
                Some(word) => {
                    let special = special_bytes(u64::from_le_bytes(word.try_into().expect("eight bytes")));
                    if special != 0 {
                        end += special.trailing_zeros() as usize / 8;
                        break;
                    }
                    end += 8;
                }
                None => {
                    while bytes.get(end).is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20) {
                        end += 1;
                    }
                    break;
                }
            }
        }
        if bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        // Both ends are at an ASCII quote: character boundaries.
        self.text.get(start..end)
    }

    fn value(&mut self, depth: u32) -> Option<Json<'t>> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(|text| Json::Str(Cow::Borrowed(text))),
            b'{' => {
                let mut members = Vec::new();
                self.members_into(depth, &mut members)?;
                Some(Json::Object(members))
            }
            b'[' => self.array(depth).map(Json::Array),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, value: Json<'t>) -> Option<Json<'t>> {
        let end = self.at + word.len();
        (self.text.as_bytes().get(self.at..end)? == word.as_bytes()).then(|| {
            self.at = end;
            value
        })
    }

    /// An integer of at most 18 digits (it fits an `i64` whatever its digits), without
    /// a fraction or an exponent, and not `-0`.
    fn integer(&mut self) -> Option<Json<'t>> {
        let negative = self.eat(b'-').is_some();
        let start = self.at;
        let mut magnitude = 0i64;
        let bytes = self.text.as_bytes();
        // 18 digits at most: the value cannot overflow while they are read.
        while let Some(&digit @ b'0'..=b'9') = bytes.get(self.at) {
            if self.at - start == 18 {
                return None;
            }
            magnitude = magnitude * 10 + i64::from(digit - b'0');
            self.at += 1;
        }
        let digits = self.at - start;
        let leading_zero = digits > 1 && bytes[start] == b'0';
        if digits == 0 || leading_zero {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return None;
        }
        match (negative, magnitude) {
            (false, value) => Some(Json::Int(value)),
            (true, 0) => None,
            (true, value) => Some(Json::Int(-value)),
        }
    }

    /// A line's `args`: `null` leaves them absent; `None` when they are not an object
    /// (serde_json words that finding).
    fn args(&mut self, args: &mut Option<Args<'t>>) -> Option<()> {
        if self.peek()? == b'n' {
            return self.literal("null", Json::Null).map(drop);
        }
        if self.peek()? != b'{' {
            return None;
        }
        self.members_into(1, args.insert(Args::default()))
    }

    fn members_into(&mut self, depth: u32, members: &mut impl Extend<Member<'t>>) -> Option<()> {
        self.list(b'{', b'}', |cursor| {
            let key = cursor.member_key()?;
            let value = cursor.value(depth + 1)?;
            members.extend(std::iter::once((Cow::Borrowed(key), value)));
            Some(())
        })
    }

    fn array(&mut self, depth: u32) -> Option<Vec<Json<'t>>> {
        let mut items = Vec::new();
        self.list(b'[', b']', |cursor| {
            items.push(cursor.value(depth + 1)?);
            Some(())
        })?;
        Some(items)
    }

    /// `open`, items separated by commas, `close`: each item read by `item` from its
    /// first character on.
    fn list(&mut self, open: u8, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(open)?;
        self.skip_whitespace();
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            self.skip_whitespace();
            item(self)?;
            self.skip_whitespace();
            match self.advance()? {
                b',' => {}
                byte if byte == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// A field every call line has (`"api"`, `"rank"`, ...) as one comparison with its
    /// quoted name, the cursor then past its `:`; `None`, the cursor unmoved, for any
    /// other key, which [`Self::member_key`] reads. Its name has no escape, so the
    /// text between the quotes is the key.
    fn call_field(&mut self) -> Option<u8> {
        let rest = &self.text.as_bytes()[self.at..];
        let (index, quoted) = match rest.get(1)? {
            b'a' if rest.starts_with(b"\"api\"") => (API, 5),
            b'a' if rest.starts_with(b"\"args\"") => (ARGS, 6),
            b'r' if rest.starts_with(b"\"rank\"") => (RANK, 6),
            b'r' if rest.starts_with(b"\"ret\"") => (RET, 5),
            b't' if rest.starts_with(b"\"thread\"") => (THREAD, 8),
            b't' if rest.starts_with(b"\"ts\"") => (TS, 4),
            _ => return None,
        };
        let start = self.at;
        self.at += quoted;
        self.skip_whitespace();
        if self.eat(b':').is_none() {
            self.at = start;
            return None;
        }
        self.skip_whitespace();
        Some(index)
    }

    /// An object member's `"key":`, leaving the cursor at its value.
    fn member_key(&mut self) -> Option<&'t str> {
        let key = self.string()?;
        self.skip_whitespace();
        self.eat(b':')?;
        self.skip_whitespace();
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn serde(text: &str) -> Option<Line<'_>> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn a_captured_line_is_read_here_as_serde_reads_it() {
        let text = r#"{"rank": 3, "thread": 0, "api": "HcommWriteOnThread", "args": {"thread": "0x5603", "dst": "0x20d0000000", "len": 4096, "flags": [1, -2, true, null], "x": {}}, "ret": 0, "ts": 1049500, "extra": {"a": [[]]}}"#;
        let fast = scan(text).expect("in the subset");
        assert_eq!(Some(&fast), serde(text).as_ref());
        assert!(matches!(fast.api, Some(Json::Str(Cow::Borrowed("HcommWriteOnThread")))));
    }

    #[test]
    fn what_only_serde_json_reads_or_rejects_goes_to_it() {
        for text in [
            r#"{"api": "a\"b"}"#,
            r#"{"api": 1.5}"#,
            r#"{"api": 1e3}"#,
            r#"{"api": -0}"#,
            r#"{"api": 01}"#,
            r#"{"api": 1234567890123456789}"#,
            r#"{"api": "x", "api": "y"}"#,
            r#"{"api": null, "api": "y"}"#,
            r#"{"args": 3}"#,
            r#"{"args": [1]}"#,
            r#"{"api": "x"} x"#,
            r#"{"api": "x",}"#,
            r#"{"api": "tab	inside"}"#,
            r#"{"api": tru}"#,
            "{\"api\": \"x\"}\u{a0}",
            r#"{"a": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}"#,
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
    }

    #[test]
    fn a_null_field_is_absent_as_for_serde() {
        let text = r#"{"api": null, "args": null, "ret": 0}"#;
        let fast = scan(text).expect("in the subset");
        assert_eq!(fast.api, None);
        assert!(fast.args.is_none());
        assert_eq!(Some(&fast), serde(text).as_ref());
    }

    /// Pieces of lines on both sides of the subset's edges.
    fn piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\t",
            "\r",
            "\u{a0}",
            "\"api\"",
            "\"args\"",
            "\"rank\"",
            "\"ts\"",
            "\"thread\"",
            "\"ret\"",
            "\"rank2\"",
            "\"t\"",
            "\"loc\"",
            "\"x\"",
            "\"a\\\"b\"",
            "\"a\\u0041\"",
            "\"é\"",
            "\"\"",
            "0",
            "-0",
            "7",
            "-12",
            "01",
            "1.5",
            "2e3",
            "123456789012345678",
            "1234567890123456789",
            "18446744073709551616",
            "true",
            "false",
            "null",
            "nul",
            "tru",
            "\"0x10\"",
            "-",
            "\"\u{1}\"",
        ])
        .prop_map(str::to_string)
    }

    fn well_formed() -> impl Strategy<Value = String> {
        let scalar = prop::sample::select(vec![
            "0",
            "-3",
            "42",
            "1.5",
            "-0",
            "1e2",
            "99999999999999999999",
            "true",
            "null",
            "\"s\"",
            "\"a\\nb\"",
            "\"ü\"",
        ]);
        let value = scalar.prop_map(str::to_string).prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(", "))),
                prop::collection::vec(("[a-z]{1,3}", inner), 0..4).prop_map(|members| {
                    let members: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        });
        let key = prop::sample::select(vec![
            "api",
            "args",
            "rank",
            "thread",
            "ret",
            "ts",
            "loc",
            "other",
            "world_size",
        ]);
        prop::collection::vec((key, value), 0..6).prop_map(|members| {
            let members: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            format!("{{{}}}", members.join(", "))
        })
    }

    proptest! {
        /// The lowest byte flagged is the first quote, backslash or control character.
        #[test]
        fn the_first_special_byte_of_a_word_is_found(
            word in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, any::<u8>()], 8)
        ) {
            let first = word.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            let special = special_bytes(u64::from_le_bytes(word.clone().try_into().unwrap()));
            let found = (special != 0).then(|| special.trailing_zeros() as usize / 8);
            prop_assert_eq!(found, first);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the scanner reads, serde_json reads the same way.
        #[test]
        fn the_scanner_reads_only_what_serde_reads_the_same(
            text in prop_oneof![
                well_formed(),
                prop::collection::vec(piece(), 0..24).prop_map(|pieces| pieces.concat()),
            ]
        ) {
            if let Some(fast) = scan(&text) {
                prop_assert_eq!(Some(fast), serde(&text), "{}", text);
            }
        }

        /// Well-formed lines without the subset's exceptions are read here.
        #[test]
        fn plain_lines_are_read_here(
            members in prop::collection::vec(("[a-z]{1,8}", prop_oneof![
                "[a-zA-Z0-9_ ]{0,12}".prop_map(|s| format!("\"{s}\"")),
                (-999_999i64..999_999).prop_map(|n| n.to_string()),
            ]), 0..8)
        ) {
            let members: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            let text = format!("{{\"api\": \"f\", \"args\": {{{}}}}}", members.join(", "));
            prop_assert!(scan(&text).is_some(), "{}", text);
            prop_assert_eq!(scan(&text), serde(&text));
        }
    }
}
