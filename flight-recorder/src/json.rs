//! A JSON dump read into a flat tree: the values serde_json parses, kept as
//! [`Value::from_json`](crate::value::Value::from_json) would keep them, but in three
//! arrays instead of a map and a heap string per key and value. Strings without escapes
//! are borrowed from the text; a list or object is a range of its children.
//!
//! serde_json's parser (its errors, its nesting limit of 128) reads the text; only what
//! is built differs. An object answers as serde_json's map does (its default, without
//! `preserve_order`): a repeated key's last value, keys in byte order.

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::value::{Scalar, Tree};

enum Node<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    /// `items[start..end]`.
    List(u32, u32),
    /// `pairs[start..end]`, in the order written.
    Dict(u32, u32),
}

pub(crate) struct JsonTree<'a> {
    nodes: Vec<Node<'a>>,
    items: Vec<u32>,
    pairs: Vec<(Cow<'a, str>, u32)>,
    root: u32,
}

/// Parse `bytes`; the error is serde_json's.
pub(crate) fn parse(bytes: &[u8]) -> Result<JsonTree<'_>, serde_json::Error> {
    let mut builder = Builder {
        nodes: Vec::new(),
        items: Vec::new(),
        pairs: Vec::new(),
        pending_items: Vec::new(),
        pending_pairs: Vec::new(),
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let root = NodeSeed(&mut builder).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(JsonTree {
        nodes: builder.nodes,
        items: builder.items,
        pairs: builder.pairs,
        root,
    })
}

impl JsonTree<'_> {
    pub(crate) fn root(&self) -> Ref<'_> {
        Ref {
            tree: self,
            index: self.root,
        }
    }
}

struct Builder<'a> {
    nodes: Vec<Node<'a>>,
    items: Vec<u32>,
    pairs: Vec<(Cow<'a, str>, u32)>,
    /// The children of the lists and objects being read, innermost last: moved to
    /// `items` or `pairs` in one block when their list or object ends.
    pending_items: Vec<u32>,
    pending_pairs: Vec<(Cow<'a, str>, u32)>,
}

impl<'a> Builder<'a> {
    fn push(&mut self, node: Node<'a>) -> u32 {
        self.nodes.push(node);
        self.nodes.len() as u32 - 1
    }
}

/// Reads one value into the builder; its node's index.
struct NodeSeed<'b, 'a>(&'b mut Builder<'a>);

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, 'de> {
    type Value = u32;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u32, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, 'de> {
    type Value = u32;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<u32, E> {
        Ok(self.0.push(Node::Bool(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<u32, E> {
        Ok(self.0.push(Node::Int(value)))
    }

    /// Past `i64`, a float, as `from_json` keeps it.
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<u32, E> {
        Ok(self.0.push(match i64::try_from(value) {
            Ok(value) => Node::Int(value),
            Err(_) => Node::Float(value as f64),
        }))
    }

    /// Not finite: `null`, as serde_json's `Value` keeps it.
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<u32, E> {
        Ok(self.0.push(if value.is_finite() {
            Node::Float(value)
        } else {
            Node::Null
        }))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<u32, E> {
        Ok(self.0.push(Node::Str(Cow::Owned(value.to_string()))))
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<u32, E> {
        Ok(self.0.push(Node::Str(Cow::Borrowed(value))))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<u32, E> {
        Ok(self.0.push(Node::Str(Cow::Owned(value))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<u32, E> {
        Ok(self.0.push(Node::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<u32, E> {
        Ok(self.0.push(Node::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<u32, D::Error> {
        NodeSeed(self.0).deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u32, A::Error> {
        let builder = self.0;
        let mark = builder.pending_items.len();
        while let Some(item) = seq.next_element_seed(NodeSeed(&mut *builder))? {
            builder.pending_items.push(item);
        }
        let start = builder.items.len() as u32;
        builder.items.extend(builder.pending_items.drain(mark..));
        let end = builder.items.len() as u32;
        Ok(builder.push(Node::List(start, end)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u32, A::Error> {
        let builder = self.0;
        let mark = builder.pending_pairs.len();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(NodeSeed(&mut *builder))?;
            builder.pending_pairs.push((key, value));
        }
        let start = builder.pairs.len() as u32;
        builder.pairs.extend(builder.pending_pairs.drain(mark..));
        let end = builder.pairs.len() as u32;
        Ok(builder.push(Node::Dict(start, end)))
    }
}

/// An object's key, borrowed from the text where it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(value.to_string()))
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(value))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(value))
    }
}

/// A value of a [`JsonTree`], read in place.
#[derive(Clone, Copy)]
pub(crate) struct Ref<'t> {
    tree: &'t JsonTree<'t>,
    index: u32,
}

impl<'t> Ref<'t> {
    fn node(self) -> &'t Node<'t> {
        &self.tree.nodes[self.index as usize]
    }

    fn at(self, index: u32) -> Self {
        Ref { tree: self.tree, index }
    }

    fn pairs(self) -> &'t [(Cow<'t, str>, u32)] {
        match *self.node() {
            Node::Dict(start, end) => &self.tree.pairs[start as usize..end as usize],
            _ => &[],
        }
    }
}

impl<'t> Tree<'t> for Ref<'t> {
    /// A key written twice: its last value, as in serde_json's map.
    const LATER_KEYS_WIN: bool = true;

    fn get(self, key: &str) -> Option<Self> {
        self.pairs()
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|&(_, v)| self.at(v))
    }

    fn scalar(self) -> Option<Scalar<'t>> {
        Some(match self.node() {
            Node::Bool(b) => Scalar::Bool(*b),
            Node::Int(i) => Scalar::Int(*i),
            Node::Float(f) => Scalar::Float(*f),
            Node::Str(s) => Scalar::Str(s),
            _ => return None,
        })
    }

    fn as_list(self) -> Option<impl ExactSizeIterator<Item = Self>> {
        match *self.node() {
            Node::List(start, end) => Some(
                self.tree.items[start as usize..end as usize]
                    .iter()
                    .map(move |&item| self.at(item)),
            ),
            _ => None,
        }
    }

    fn is_dict(self) -> bool {
        matches!(self.node(), Node::Dict(..))
    }

    fn is_none(self) -> bool {
        matches!(self.node(), Node::Null)
    }

    /// In byte order of the keys, each key once with its last value, as serde_json's
    /// map iterates.
    fn entries(self) -> impl Iterator<Item = (&'t str, Self)> {
        let mut pairs: Vec<(&'t str, u32)> = self.pairs().iter().map(|(k, v)| (k.as_ref(), *v)).collect();
        // Stable: a repeated key's pairs stay in the order written, and the last is kept.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        let mut distinct: Vec<(&'t str, u32)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            match distinct.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => distinct.push(pair),
            }
        }
        distinct.into_iter().map(move |(k, v)| (k, self.at(v)))
    }

    fn pairs_in_order(self) -> impl Iterator<Item = (&'t str, Self)> {
        self.pairs().iter().map(move |(k, v)| (k.as_ref(), self.at(*v)))
    }

    fn identity(self) -> Option<usize> {
        None
    }
}
