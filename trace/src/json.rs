//! One trace line as borrowed JSON: strings point into the line unless they contain
//! escapes, so reading a typical line allocates only its lists of arguments.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use smallvec::SmallVec;

/// A JSON value that borrows from the line it was read from.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(members) => member(members, key),
            _ => None,
        }
    }

    /// "a string", "an array", ... for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) | Json::Float(_) => "a number",
            Json::Str(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// The value for a message: short scalars as written, anything else by its kind.
    pub fn describe(&self) -> String {
        match self {
            Json::Str(text) if text.chars().count() <= 40 => format!("the string {text:?}"),
            Json::Int(v) => format!("the number {v}"),
            Json::Float(v) => format!("the number {v}"),
            Json::Bool(b) => format!("`{b}`"),
            other => other.kind().to_string(),
        }
    }

    /// An integer, also written as a decimal or `0x` string (`"4096"`, `"0x1000"`).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Json::Int(v) => Some(*v),
            Json::Float(v) if v.fract() == 0.0 && v.abs() < 9e15 => Some(*v as i64),
            Json::Str(text) => parse_int(text),
            _ => None,
        }
    }
}

/// `text` without leading and trailing whitespace: `str::trim`, which decodes a
/// character at each end, only where an end is not plainly ASCII and visible (a
/// captured handle or number never is).
pub fn trimmed(text: &str) -> &str {
    let visible = |byte: Option<&u8>| byte.is_some_and(|&b| b.is_ascii_graphic());
    let bytes = text.as_bytes();
    if visible(bytes.first()) && visible(bytes.last()) {
        return text;
    }
    text.trim()
}

/// `4096`, `0x1000` or `0X1000` (the way tracers print sizes and pointers).
pub fn parse_int(text: &str) -> Option<i64> {
    let text = trimmed(text);
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok().and_then(|v| i64::try_from(v).ok()),
        None => text.parse().ok(),
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor(std::marker::PhantomData))
    }
}

struct JsonVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for JsonVisitor<'a> {
    type Value = Json<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Json::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(v).map_or(Json::Float(v as f64), Json::Int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Json::Float(v))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Json::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Json::Str(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Json::Str(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(4).min(64));
        while let Some(key) = map.next_key::<Key<'a>>()? {
            members.push((key.0, map.next_value()?));
        }
        Ok(Json::Object(members))
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Json::deserialize(deserializer)? {
            Json::Str(text) => Ok(Key(text)),
            _ => Err(de::Error::custom("object keys are strings")),
        }
    }
}

/// An object member: its key and value.
pub type Member<'a> = (Cow<'a, str>, Json<'a>);

fn member<'m, 'a>(members: &'m [Member<'a>], key: &str) -> Option<&'m Json<'a>> {
    members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Arguments a line holds without an allocation of their own: most calls take at most
/// four. Lines are parsed on one thread and freed on another, where a `Vec` of
/// arguments cost about 420 instructions to allocate and free (216 and 205, callgrind),
/// as much as scanning them.
const INLINE_ARGS: usize = 4;

/// A line's `args`: named values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args<'a>(SmallVec<[Member<'a>; INLINE_ARGS]>);

impl<'a> Args<'a> {
    /// The argument `key`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        member(&self.0, key)
    }

    /// Every argument as one object: for calls whose arguments are a range (`host_read`).
    pub fn to_json(&self) -> Json<'a> {
        Json::Object(self.0.to_vec())
    }
}

impl<'a> Extend<Member<'a>> for Args<'a> {
    fn extend<I: IntoIterator<Item = Member<'a>>>(&mut self, members: I) {
        self.0.extend(members);
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Json::deserialize(deserializer)? {
            Json::Object(members) => Ok(Args(SmallVec::from_vec(members))),
            other => Err(de::Error::custom(format!(
                "`args` must be an object of named arguments, not {}",
                other.describe()
            ))),
        }
    }
}

/// The fields of one line syncguard reads; any other field is ignored. A batch of
/// parsed lines is millions of these, moved and dropped one by one, so the fields only
/// a header or a closing line has are boxed, out of the way of the calls.
#[derive(Debug, Default, PartialEq)]
pub struct Line<'a> {
    pub api: Option<Json<'a>>,
    pub rank: Option<Json<'a>>,
    pub thread: Option<Json<'a>>,
    pub args: Option<Args<'a>>,
    pub ret: Option<Json<'a>>,
    pub ts: Option<Json<'a>>,
    pub loc: Option<Json<'a>>,
    /// Present when the line has any header or closing field.
    pub header: Option<Box<HeaderFields<'a>>>,
}

/// The fields of a trace's header, and of the closing line a capture writes.
#[derive(Debug, Default, PartialEq)]
pub struct HeaderFields<'a> {
    pub syncguard_trace: Option<Json<'a>>,
    pub world_size: Option<Json<'a>>,
    pub target: Option<Json<'a>>,
    pub cann: Option<Json<'a>>,
    pub default_stream: Option<Json<'a>>,
    /// The closing line `syncguard trace` writes when a process exits (docs/TRACE.md).
    pub syncguard_capture_end: Option<Json<'a>>,
}

impl HeaderFields<'_> {
    fn is_empty(&self) -> bool {
        *self == HeaderFields::default()
    }
}

/// Every field as serde reads it, before the header's fields are boxed.
#[derive(Deserialize)]
struct FlatLine<'a> {
    #[serde(borrow)]
    api: Option<Json<'a>>,
    #[serde(borrow)]
    rank: Option<Json<'a>>,
    #[serde(borrow)]
    thread: Option<Json<'a>>,
    #[serde(borrow)]
    args: Option<Args<'a>>,
    #[serde(borrow)]
    ret: Option<Json<'a>>,
    #[serde(borrow)]
    ts: Option<Json<'a>>,
    #[serde(borrow)]
    loc: Option<Json<'a>>,
    #[serde(borrow)]
    syncguard_trace: Option<Json<'a>>,
    #[serde(borrow)]
    world_size: Option<Json<'a>>,
    #[serde(borrow)]
    target: Option<Json<'a>>,
    #[serde(borrow)]
    cann: Option<Json<'a>>,
    #[serde(borrow)]
    default_stream: Option<Json<'a>>,
    #[serde(borrow)]
    syncguard_capture_end: Option<Json<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Line<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let flat = FlatLine::deserialize(deserializer)?;
        let header = HeaderFields {
            syncguard_trace: flat.syncguard_trace,
            world_size: flat.world_size,
            target: flat.target,
            cann: flat.cann,
            default_stream: flat.default_stream,
            syncguard_capture_end: flat.syncguard_capture_end,
        };
        Ok(Line {
            api: flat.api,
            rank: flat.rank,
            thread: flat.thread,
            args: flat.args,
            ret: flat.ret,
            ts: flat.ts,
            loc: flat.loc,
            header: (!header.is_empty()).then(|| Box::new(header)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let line: Line = serde_json::from_str(r#"{"api": "aclrtRecordEvent", "args": {"event": "a\"b"}}"#).unwrap();
        assert!(matches!(line.api, Some(Json::Str(Cow::Borrowed("aclrtRecordEvent")))));
        let args = line.args.unwrap();
        assert_eq!(args.get("event"), Some(&Json::Str(Cow::Owned("a\"b".into()))));
    }

    proptest::proptest! {
        #[test]
        fn trimmed_is_trim_on_any_text(text in "[ \t\n\u{a0}\u{2003}x0é]{0,6}") {
            proptest::prop_assert_eq!(trimmed(&text), text.trim());
        }
    }

    #[test]
    fn integers_may_be_written_as_strings() {
        assert_eq!(parse_int("0x1000"), Some(4096));
        assert_eq!(Json::Str("12".into()).as_int(), Some(12));
        assert_eq!(Json::Float(3.5).as_int(), None);
    }
}
