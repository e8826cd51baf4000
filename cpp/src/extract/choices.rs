//! The same undecided condition asked again decides the same way: `if
//! (!IsHugeData(size))` before a batch and again after it, `#ifndef AICPU_COMPILE` twice,
//! a loop-invariant `if (verbose)` in every iteration of an unrolled loop. Each was a
//! choice of its own, so paths that start a batch and skip its end, or mix two builds,
//! were checked as if the program could take them. A condition written the same way, on
//! the same variables, none of them assigned since, reuses the earlier choice.
//!
//! What the walk remembers is part of its state per path (kept in the store): where
//! branches disagree about a variable's last write, the choice is not reused.

use tree_sitter::Node;

use super::Walker;
use super::value::{Place, Value};

/// A condition as the walk recognizes it again: its text (blanks out) and the places
/// of the variables it reads.
pub(super) struct ConditionKey {
    key: String,
    reads: Vec<Place>,
}

impl<'u> Walker<'_, 'u> {
    /// The key of a condition of `kind` (`if`, `#ifdef`, `#ifndef`, ...), with the
    /// variables it reads (a preprocessor condition reads none).
    pub(super) fn condition_key(&mut self, kind: &str, condition: Node<'u>, reads_variables: bool) -> ConditionKey {
        let text: String = self.text(condition).split_whitespace().collect();
        let text = format!("{kind} {text}");
        let mut reads = Vec::new();
        if reads_variables {
            let mut stack = vec![condition];
            while let Some(node) = stack.pop() {
                if matches!(node.kind(), "identifier" | "field_expression" | "subscript_expression")
                    && let Some(place) = self.place_of(node)
                {
                    reads.push(place);
                    continue;
                }
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
        reads.sort();
        reads.dedup();
        ConditionKey {
            key: format!("{text}|{}", reads.join(",")),
            reads,
        }
    }

    /// The choice an earlier, identical condition made, if none of what it reads was
    /// assigned since.
    pub(super) fn remembered_choice(&self, condition: &ConditionKey) -> Option<String> {
        let Some(Value::Str(choice)) = self.store.get(&format!("#choice:{}", condition.key)) else {
            return None;
        };
        let decided = self.store.get(&format!("#choice_at:{}", condition.key))?.int()?;
        let unchanged = condition
            .reads
            .iter()
            .all(|place| match self.store.get(&format!("#written:{place}")) {
                None => true,
                Some(Value::Int(written)) => *written < decided,
                Some(_) => false,
            });
        unchanged.then(|| choice.clone())
    }

    pub(super) fn remember_choice(&mut self, condition: &ConditionKey, choice: &str) {
        self.store
            .insert(format!("#choice:{}", condition.key), Value::Str(choice.to_string()));
        self.store
            .insert(format!("#choice_at:{}", condition.key), Value::Int(self.steps as i64));
    }

    /// `place` is assigned now: conditions on it decide afresh.
    pub(super) fn note_written(&mut self, place: &str) {
        self.store
            .insert(format!("#written:{place}"), Value::Int(self.steps as i64));
    }
}

/// A remembered choice after branches (`key` a `#choice:` or `#choice_at:` entry): the
/// one choice the stores that have it agree on, asked at the latest step any of them
/// asked it; `None` for other keys, or choices the branches disagree on.
pub(super) fn merge_remembered(key: &str, stores: &[super::store::Store]) -> Option<Value> {
    let present = stores.iter().filter_map(|store| store.get(key));
    if key.starts_with("#choice_at:") {
        return present.filter_map(Value::int).max().map(Value::Int);
    }
    if !key.starts_with("#choice:") {
        return None;
    }
    let mut present = present.peekable();
    let first = present.peek().copied()?.clone();
    present.all(|value| *value == first).then_some(first)
}
