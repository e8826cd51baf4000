//! What a dump holds, whichever format it was written in: the subset of Python values
//! a Flight Recorder dump uses. A dict keeps the byte range it was read from (JSON), or
//! `0..0` where positions are not kept (pickle).

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

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integer, also written as a string of digits (JSON `pg_status`) or a float
    /// with no fraction.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i != 0),
            _ => None,
        }
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
