//! A node's child by field name, the grammar's field ids looked up once.
//!
//! tree-sitter finds a field's id by comparing the name with each of the C++ grammar's
//! field names in turn (`ts_language_field_id_for_name`) on every
//! `Node::child_by_field_name`; the walks ask for fields millions of times (an unrolled
//! loop asks for the same few at every iteration), which made those comparisons some 5%
//! of a run. The ids are the grammar's, so the child found is the same.

use std::collections::HashMap;
use std::sync::LazyLock;

use tree_sitter::Node;

/// Every field name of the C++ grammar (the only one the frontend parses with), by id.
static FIELD_IDS: LazyLock<HashMap<&'static str, u16>> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_cpp::LANGUAGE.into();
    (1..=language.field_count() as u16)
        .filter_map(|id| language.field_name_for_id(id).map(|name| (name, id)))
        .collect()
});

pub(crate) trait FieldChild<'t> {
    /// `child_by_field_name(name)`: the child in the field `name`, if any (none when
    /// the grammar has no such field).
    fn field_child(&self, name: &str) -> Option<Node<'t>>;
}

impl<'t> FieldChild<'t> for Node<'t> {
    fn field_child(&self, name: &str) -> Option<Node<'t>> {
        FIELD_IDS.get(name).and_then(|&id| self.child_by_field_id(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_found_as_by_name() {
        let unit = crate::index::Unit::parse(
            "a.cpp".into(),
            "int f(int a) { for (int i = 0; i < a; ++i) { x[i] = y.z(a); } return a; }".into(),
            0,
        );
        let mut stack = vec![unit.tree.root_node()];
        let mut compared = 0;
        while let Some(node) = stack.pop() {
            for name in [
                "declarator",
                "body",
                "condition",
                "update",
                "left",
                "right",
                "argument",
                "no_such_field",
            ] {
                assert_eq!(node.field_child(name), node.child_by_field_name(name));
                compared += 1;
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        assert!(compared > 100);
    }
}
