//! A call of a function-like macro the files define: its expansion (see `macros`)
//! walked in the caller's scope, as the preprocessor pastes it there, with every span
//! at the call site.

use tree_sitter::Node;

use super::value::Value;
use super::{MacroSite, Walker};
use crate::fields::FieldChild;
use crate::index::EXPANSIONS;
use crate::macros::EXPANSION_NAME;

impl<'u> Walker<'_, 'u> {
    /// The value of a macro call that has an expansion; `None` for any other call (or
    /// an expansion that does not parse: then the call is read as a function call).
    pub(super) fn macro_call(&mut self, node: Node<'u>) -> Option<Value> {
        let unit = self.frame().unit;
        if unit == EXPANSIONS {
            // Macros inside an expansion were expanded with it.
            return None;
        }
        let expansion = self.index.expansion_sites.get(&(unit, node.start_byte()))?;
        let code = self
            .index
            .expansions
            .tree
            .root_node()
            .descendant_for_byte_range(expansion.range.start, expansion.range.end)?;
        if code.has_error() {
            return None;
        }
        let site = MacroSite {
            range: self.range(node),
            discarded: is_statement(node),
            unit,
            line: node.start_position().row + 1,
        };
        self.sites.push(site);
        self.frame_mut().unit = EXPANSIONS;
        let value = if expansion.expression {
            self.eval(code)
        } else {
            // A `return` inside the body returns from the caller: error exits, which
            // the walk does not take (calls succeed).
            self.stmt(code);
            Value::Unknown
        };
        self.frame_mut().unit = unit;
        self.sites.pop();
        Some(value)
    }

    /// A call whose return code nobody reads: a statement of its own, or the whole body
    /// of a macro that is one.
    pub(super) fn is_discarded(&self, node: Node<'u>) -> bool {
        if is_statement(node) {
            return true;
        }
        self.frame().unit == EXPANSIONS
            && self.sites.last().is_some_and(|site| site.discarded)
            && node.parent().is_some_and(|parent| self.is_expansion_body(parent))
    }

    /// `auto __syncguard_expansion = (BODY);`: the parentheses around an expression
    /// body. Not the macro's own `auto ret = (call);`, which keeps the code to check it.
    fn is_expansion_body(&self, parenthesized: Node<'u>) -> bool {
        parenthesized.kind() == "parenthesized_expression"
            && parenthesized
                .parent()
                .filter(|declarator| declarator.kind() == "init_declarator")
                .and_then(|declarator| declarator.field_child("declarator"))
                .is_some_and(|name| self.text(name) == EXPANSION_NAME)
    }
}

fn is_statement(node: Node) -> bool {
    node.parent()
        .is_some_and(|parent| parent.kind() == "expression_statement")
}
