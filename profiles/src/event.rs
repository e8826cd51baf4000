//! One Chrome-trace event as the readers need it, borrowed from the file's text: the
//! fields both Kineto and msprof write (`ph`, `cat`, `name`, `pid`, `tid`, `ts`, `dur`,
//! `args`). Every other field is skipped unread.

use std::borrow::Cow;

use serde::Deserialize;
use smallvec::SmallVec;

/// A `pid`, `tid` or argument that writers give as a number or as a string (msprof
/// writes `"pid": "2_0"` style names and quoted numbers).
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar<'a> {
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Bool(bool),
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(ValueVisitor(std::marker::PhantomData))? {
            Some(scalar) => Ok(scalar),
            None => Err(serde::de::Error::custom("expected a number or a string")),
        }
    }
}

/// Reads a scalar as itself and skips a list, an object or `null` (`None`): without
/// serde's buffering of untagged enums, which cost more than the rest of an event.
struct ValueVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for ValueVisitor<'a> {
    type Value = Option<Scalar<'a>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, value: bool) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Bool(value)))
    }
    fn visit_i64<E>(self, value: i64) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Int(value)))
    }
    fn visit_u64<E>(self, value: u64) -> Result<Self::Value, E> {
        Ok(Some(
            i64::try_from(value).map_or(Scalar::Float(value as f64), Scalar::Int),
        ))
    }
    fn visit_f64<E>(self, value: f64) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Float(value)))
    }
    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Str(Cow::Borrowed(value))))
    }
    fn visit_str<E>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Some(Scalar::Str(Cow::Owned(value.to_string()))))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(None)
    }
}

/// An argument: a scalar, or `None` for what the readers do not look at.
struct Arg<'a>(Option<Scalar<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Arg<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(ValueVisitor(std::marker::PhantomData))
            .map(Arg)
    }
}

impl Scalar<'_> {
    /// As an integer: a whole number, or a string holding one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Scalar::Int(value) => Some(*value),
            Scalar::Float(value) if value.fract() == 0.0 && value.abs() < 9e15 => Some(*value as i64),
            Scalar::Str(text) => text.trim().parse().ok(),
            _ => None,
        }
    }

    /// As a number of microseconds, the unit of `ts` and `dur`.
    pub fn as_micros(&self) -> Option<f64> {
        match self {
            Scalar::Int(value) => Some(*value as f64),
            Scalar::Float(value) => Some(*value),
            Scalar::Str(text) => text.trim().parse().ok(),
            Scalar::Bool(_) => None,
        }
    }

    /// As text for a handle name.
    pub fn text(&self) -> String {
        match self {
            Scalar::Int(value) => value.to_string(),
            Scalar::Float(value) => value.to_string(),
            Scalar::Str(text) => text.to_string(),
            Scalar::Bool(value) => value.to_string(),
        }
    }
}

/// One event of a Chrome trace.
#[derive(Debug, Default, Deserialize)]
pub struct Event<'a> {
    #[serde(borrow)]
    pub ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub pid: Option<Scalar<'a>>,
    #[serde(borrow)]
    pub tid: Option<Scalar<'a>>,
    #[serde(borrow)]
    pub ts: Option<Scalar<'a>>,
    #[serde(borrow)]
    pub dur: Option<Scalar<'a>>,
    #[serde(borrow)]
    pub args: Option<Args<'a>>,
}

/// The `args` members the readers look at: any other member is skipped unread.
const ARG_KEYS: [&str; 23] = [
    // Kineto.
    "correlation",
    "Record function id",
    "External id",
    "stream",
    "device",
    "cuda_sync_kind",
    "wait_on_cuda_event_id",
    "event_id",
    "wait_on_stream",
    "wait_on_cuda_event_record_corr_id",
    // msprof.
    "Task Type",
    "task type",
    "notify_id",
    "notify id",
    "src rank",
    "dst rank",
    "stream id",
    "Stream Id",
    // Graph task dumps.
    "Task Id",
    "numBlocks",
    "schemMode",
    "Task Ration",
    "Active Stream Id",
];

/// The `args` of an event: the members the readers look at (`ARG_KEYS`), each the
/// first scalar given under its name, with the key's index; held in place, with no
/// allocation for the few an event has. (A slot per key would make every event as large
/// as all of them, and serde moves events by value.)
#[derive(Debug, Default)]
pub struct Args<'a>(SmallVec<[(u8, Scalar<'a>); 4]>);

fn arg_index(key: &str) -> Option<usize> {
    ARG_KEYS.iter().position(|known| *known == key)
}

impl<'a> Args<'a> {
    pub fn get(&self, key: &str) -> Option<&Scalar<'a>> {
        let index = arg_index(key)?;
        self.0
            .iter()
            .find(|(at, _)| usize::from(*at) == index)
            .map(|(_, value)| value)
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(Scalar::as_int)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ArgsVisitor(std::marker::PhantomData))
    }
}

struct ArgsVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for ArgsVisitor<'a> {
    type Value = Args<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of arguments")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut args = Args::default();
        while let Some(Arg(key)) = map.next_key::<Arg<'a>>()? {
            let Some(Scalar::Str(key)) = key else {
                return Err(serde::de::Error::custom("object keys are strings"));
            };
            let Some(index) = arg_index(&key) else {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            };
            // Lists and objects are not read; a later scalar of the same name is.
            if let Arg(Some(value)) = map.next_value::<Arg<'a>>()?
                && !args.0.iter().any(|(at, _)| usize::from(*at) == index)
            {
                args.0.push((index as u8, value));
            }
        }
        Ok(args)
    }
}

/// Parse one event's bytes.
pub fn parse(bytes: &[u8]) -> Result<Event<'_>, serde_json::Error> {
    serde_json::from_slice(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_are_read_alike() {
        let event = parse(br#"{"ph": "X", "pid": "2", "tid": 7, "ts": "17.5", "args": {"notify_id": "12", "grid": [1, 2], "x": null}}"#)
            .unwrap();
        assert_eq!(event.pid.unwrap().as_int(), Some(2));
        assert_eq!(event.ts.unwrap().as_micros(), Some(17.5));
        let args = event.args.unwrap();
        assert_eq!(args.int("notify_id"), Some(12));
        assert!(args.get("grid").is_none());
    }
}
