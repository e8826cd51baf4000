//! What a dump holds, whichever format it was written in: the subset of Python values
//! a Flight Recorder dump uses. A dict keeps the byte range it was read from (JSON), or
//! `0..0` where positions are not kept (pickle). [`crate::pickle::read`] builds such a
//! tree; a dump is read through `Tree` instead, from the values where the readers
//! left them, answering as a [`Value`] would.

use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A list or a tuple.
    List(Vec<Value>),
    /// Keys in the order written, and the bytes of the dict in its file.
    Dict(Vec<(Value, Value)>, Range<usize>),
    /// Something a dump does not hold (bytes, an object): what it is.
    Opaque(&'static str),
}

impl Value {
    /// The value under string key `key` of a dict.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(pairs, _) => pairs
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    fn scalar(&self) -> Option<Scalar<'_>> {
        Some(match self {
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Int(i) => Scalar::Int(*i),
            Value::Float(f) => Scalar::Float(*f),
            Value::Str(s) => Scalar::Str(s),
            _ => return None,
        })
    }

    pub fn as_str(&self) -> Option<&str> {
        self.scalar()?.as_str()
    }

    /// An integer, also written as a string of digits (JSON `pg_status`) or a float
    /// with no fraction.
    pub fn as_i64(&self) -> Option<i64> {
        self.scalar()?.as_i64()
    }

    pub fn as_bool(&self) -> Option<bool> {
        self.scalar()?.as_bool()
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// `(key, value)` pairs of a dict whose keys are strings (others are skipped).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        let pairs: &[(Value, Value)] = match self {
            Value::Dict(pairs, _) => pairs,
            _ => &[],
        };
        pairs.iter().filter_map(|(k, v)| match k {
            Value::Str(s) => Some((s.as_str(), v)),
            Value::Int(_) => None,
            _ => None,
        })
    }

    pub fn span(&self) -> Range<usize> {
        match self {
            Value::Dict(_, span) => span.clone(),
            _ => 0..0,
        }
    }

    /// A JSON value as a dump value (spans are set by the caller).
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::None,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .or_else(|| n.as_f64().map(Value::Float))
                .unwrap_or(Value::Opaque("a number out of range")),
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(items) => Value::List(items.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(map) => Value::Dict(
                map.iter()
                    .map(|(k, v)| (Value::Str(k.clone()), Value::from_json(v)))
                    .collect(),
                0..0,
            ),
        }
    }
}

/// A float with no fraction, as an integer (JSON writers may write `3.0`).
/// A scalar of a dump, whichever reader holds it: the one place its coercions are
/// written.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scalar<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

impl<'a> Scalar<'a> {
    fn as_str(self) -> Option<&'a str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_i64(self) -> Option<i64> {
        match self {
            Scalar::Int(i) => Some(i),
            Scalar::Bool(b) => Some(i64::from(b)),
            Scalar::Float(f) => whole_float(f),
            Scalar::Str(s) => integer_text(s),
        }
    }

    fn as_bool(self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(b),
            Scalar::Int(i) => Some(i != 0),
            _ => None,
        }
    }
}

fn whole_float(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// A string of digits, as an integer (JSON `pg_status` writes its counters so).
fn integer_text(s: &str) -> Option<i64> {
    s.trim().parse().ok()
}

/// Read access to a dump's values where the reader left them (a pickle's arena, a JSON
/// dump's flat tree), answering as [`Value`]'s methods answer for the value the reader
/// would have built, so a [`crate::dump::Dump`] is built without a copy of every value
/// first.
pub(crate) trait Tree<'a>: Copy {
    /// Whether a key written twice in a dict means its later value (JSON, as serde_json
    /// reads it) rather than its first (a pickle, as [`Value::get`] reads it).
    const LATER_KEYS_WIN: bool = false;

    /// The value under string key `key` of a dict.
    fn get(self, key: &str) -> Option<Self>;
    /// The value when it is a scalar: the coercions below are [`Scalar`]'s, as
    /// [`Value`]'s are.
    fn scalar(self) -> Option<Scalar<'a>>;
    fn as_str(self) -> Option<&'a str> {
        self.scalar()?.as_str()
    }
    /// As [`Value::as_i64`]: integers, booleans, whole floats, strings of digits.
    fn as_i64(self) -> Option<i64> {
        self.scalar()?.as_i64()
    }
    fn as_bool(self) -> Option<bool> {
        self.scalar()?.as_bool()
    }
    /// The items of a list or tuple.
    fn as_list(self) -> Option<impl ExactSizeIterator<Item = Self>>;
    fn is_dict(self) -> bool;
    fn is_none(self) -> bool;
    /// `(key, value)` pairs of a dict whose keys are strings (others are skipped), as
    /// [`Value::entries`] gives them.
    fn entries(self) -> impl Iterator<Item = (&'a str, Self)>;
    /// Every `(key, value)` pair with a string key, in the order written (a key may
    /// repeat: [`Tree::LATER_KEYS_WIN`] says which counts).
    fn pairs_in_order(self) -> impl Iterator<Item = (&'a str, Self)> {
        self.entries()
    }
    /// What tells a value shared by several parents from an equal copy (a pickle's
    /// memo makes a value appear in many places): equal identities, equal values.
    fn identity(self) -> Option<usize>;
}
