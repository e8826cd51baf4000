//! What the walk knows of each place, shared between the arms of a branch.
//!
//! A branch walks each arm from the state before it and merges the states after. With
//! one map per arm, an `if` inside a loop unrolled 256 times in a test that fills
//! arrays element by element (`varIn[i] = ...`) copied and compared every place known
//! so far in each iteration: quadratic, 25 s for one 700-line test file. Here the state
//! before a branch is frozen into a layer the arms share, so a branch costs what its
//! arms change; layers are as deep as branches are nested. Places are ordered, so that
//! the members of a struct (`g.var`, `descs[0].remoteRank`) are found by their prefix,
//! not by a pass over every place.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use super::value::{Place, Value};

/// A frozen state: its places, over those of the layer below.
#[derive(Debug, Default)]
struct Layer {
    places: BTreeMap<Place, Value>,
    below: Option<Rc<Layer>>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Store {
    frozen: Rc<Layer>,
    /// What this path changed since `frozen`.
    changes: BTreeMap<Place, Value>,
}

impl Store {
    pub(super) fn get(&self, place: &str) -> Option<&Value> {
        self.layers().find_map(|places| places.get(place))
    }

    pub(super) fn contains_key(&self, place: &str) -> bool {
        self.get(place).is_some()
    }

    pub(super) fn insert(&mut self, place: Place, value: Value) {
        self.changes.insert(place, value);
    }

    pub(super) fn extend(&mut self, places: impl IntoIterator<Item = (Place, Value)>) {
        self.changes.extend(places);
    }

    /// The state before a branch, which each arm starts from (a clone shares it): this
    /// path's changes are frozen, into the top layer where nothing else holds it.
    pub(super) fn freeze(&mut self) -> Store {
        if !self.changes.is_empty() {
            let changes = std::mem::take(&mut self.changes);
            match Rc::get_mut(&mut self.frozen) {
                Some(top) => top.places.extend(changes),
                None => {
                    self.frozen = Rc::new(Layer {
                        places: changes,
                        below: Some(self.frozen.clone()),
                    })
                }
            }
        }
        self.clone()
    }

    /// The places this state changed since `before` (a state it was cloned from after
    /// `freeze`), or `None` if it does not descend from it.
    fn changed_since<'a>(&'a self, before: &Store) -> Option<HashSet<&'a Place>> {
        let mut changed: HashSet<&Place> = self.changes.keys().collect();
        let mut layer = &self.frozen;
        while !Rc::ptr_eq(layer, &before.frozen) {
            changed.extend(layer.places.keys());
            layer = layer.below.as_ref()?;
        }
        Some(changed)
    }

    /// The places whose value differs from the one they had in `before` (a state this
    /// one was cloned from after `freeze`).
    pub(super) fn changed_places(&self, before: &Store) -> Vec<Place> {
        let changed = match self.changed_since(before) {
            Some(changed) => changed,
            None => self.every_place(),
        };
        let mut places: Vec<Place> = changed
            .into_iter()
            .filter(|place| self.get(place) != before.get(place))
            .cloned()
            .collect();
        places.sort();
        places
    }

    /// The places under `prefix` (itself and its members and elements, `g.var`,
    /// `g[0]`), with their values (the latest layer's).
    pub(super) fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a Place, &'a Value)> {
        self.layers()
            .flat_map(move |places| {
                places
                    .range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
                    .take_while(move |(place, _)| place.starts_with(prefix))
            })
            .scan(HashSet::new(), |seen, (place, value)| {
                Some(seen.insert(place).then_some((place, value)))
            })
            .flatten()
    }

    /// This path's changes, then each frozen layer from the latest.
    fn layers(&self) -> impl Iterator<Item = &BTreeMap<Place, Value>> {
        std::iter::once(&self.changes)
            .chain(std::iter::successors(Some(&self.frozen), |layer| layer.below.as_ref()).map(|layer| &layer.places))
    }

    /// Every place this state knows, for a merge of states that share no frozen layer.
    fn every_place(&self) -> HashSet<&Place> {
        self.layers().flat_map(BTreeMap::keys).collect()
    }
}

/// The state after alternatives that each started from `before` (frozen): a place keeps
/// its value where every arm agrees, and is unknown where they differ.
pub(super) fn merge(before: &Store, arms: &[Store]) -> Store {
    let descendants: Option<Vec<HashSet<&Place>>> = arms.iter().map(|arm| arm.changed_since(before)).collect();
    let (mut merged, places) = match descendants {
        Some(changed) => (before.clone(), changed.into_iter().flatten().collect::<HashSet<_>>()),
        None => (Store::default(), arms.iter().flat_map(Store::every_place).collect()),
    };
    for place in places {
        merged.insert(place.clone(), merged_value(place, arms));
    }
    merged
}

fn merged_value(place: &str, arms: &[Store]) -> Value {
    // A choice one branch made is free on the others (their paths never asked it): the
    // same condition after the branches takes it on every path.
    if let Some(remembered) = super::choices::merge_remembered(place, arms) {
        return remembered;
    }
    let Some((first, rest)) = arms.split_first() else {
        return Value::Unknown;
    };
    let value = first.get(place);
    if rest.iter().all(|arm| arm.get(place) == value) {
        value.cloned().unwrap_or(Value::Unknown)
    } else {
        Value::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(store: &Store, place: &str) -> Option<i64> {
        store.get(place).and_then(Value::int)
    }

    #[test]
    fn arms_agree_keep_and_disagree_lose_a_value() {
        let mut store = Store::default();
        store.insert("a".into(), Value::Int(1));
        store.insert("b".into(), Value::Int(2));
        let before = store.freeze();
        let mut then = before.clone();
        then.insert("a".into(), Value::Int(5));
        then.insert("c".into(), Value::Int(7));
        let mut otherwise = before.clone();
        otherwise.insert("c".into(), Value::Int(7));
        let merged = merge(&before, &[then, otherwise]);
        assert_eq!(merged.get("a"), Some(&Value::Unknown));
        assert_eq!(int(&merged, "b"), Some(2));
        assert_eq!(int(&merged, "c"), Some(7));
    }

    #[test]
    fn nested_branches_see_and_merge_through_the_layers() {
        let mut store = Store::default();
        store.insert("x".into(), Value::Int(1));
        let outer = store.freeze();
        let mut arm = outer.clone();
        arm.insert("y".into(), Value::Int(2));
        // The outer state is still held: the arm's changes go into a layer of their own.
        let inner = arm.freeze();
        let mut inner_arm = inner.clone();
        inner_arm.insert("x".into(), Value::Int(3));
        let arm = merge(&inner, &[inner_arm.clone(), inner_arm]);
        assert_eq!(int(&arm, "x"), Some(3));
        assert_eq!(int(&arm, "y"), Some(2));
        let merged = merge(&outer, &[arm, outer.clone()]);
        assert_eq!(merged.get("x"), Some(&Value::Unknown));
        assert_eq!(merged.get("y"), Some(&Value::Unknown));
        assert_eq!(int(&outer, "x"), Some(1));
    }

    #[test]
    fn states_from_elsewhere_merge_place_by_place() {
        let mut one = Store::default();
        one.insert("a".into(), Value::Int(1));
        let mut two = Store::default();
        two.insert("a".into(), Value::Int(1));
        two.insert("b".into(), Value::Int(2));
        let before = Store::default().freeze();
        let merged = merge(&before, &[one, two]);
        assert_eq!(int(&merged, "a"), Some(1));
        assert_eq!(merged.get("b"), Some(&Value::Unknown));
    }
}
