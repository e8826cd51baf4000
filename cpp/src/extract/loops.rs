//! A counted loop whose bound has no known value (`for (i = 0; i < ringNum; ++i)`, the
//! count from an opaque call or a parameter): the bound itself is the choice. Each
//! alternative gives it the value for 0, 1 or 2 iterations (up to 3 in kernel code) and runs the loop as one with
//! a known bound, so a condition on the same bound inside or after the loop
//! (`if (i != ringNum - 1)`, `for (r = 0; r < ringNum - 1; ++r)`) agrees with the number
//! of iterations instead of being a choice of its own: a path where the loop ran once
//! but the code treats the ring count as larger is no path the program takes.

use syncguard_grammar::ast;
use tree_sitter::Node;

use super::value::{Place, Value};
use super::{Flow, Walker, ast_binary};
use crate::fields::FieldChild;

/// Most iterations a loop of unknown bound is given in host code: 0, 1 and 2 show the
/// first iteration and the hand-over from one iteration to the next.
const HOST_ITERATIONS: i64 = 2;
/// In kernel code, 0 to 3: a double-buffered queue (`TQue<POS, 2>`) reuses a slot, and
/// waits for its `FreeTensor`, only from the third tile on.
const KERNEL_ITERATIONS: i64 = 3;

/// Where a loop's bound is kept and the value it has after `k` iterations.
struct Bound {
    place: Place,
    /// The bound's value for 0 iterations; each iteration adds one.
    base: i64,
}

impl<'u> Walker<'_, 'u> {
    /// Run `for (...; cond; update) body` as alternatives over its bound, when `cond`
    /// compares a counter stepping by one with a bound of no known value kept in a
    /// place the walk follows; `None` when it is no such loop.
    pub(super) fn loop_over_unknown_bound(
        &mut self,
        node: Node<'u>,
        condition: Option<Node<'u>>,
        update: Option<Node<'u>>,
        body: Option<Node<'u>>,
    ) -> Option<Flow> {
        let bound = self.unknown_bound(condition?, update?)?;
        let iterations = self.unknown_loop_iterations();
        let Some(choice) = self.choice_param(node, "loop", iterations) else {
            // Out of choices: the walk stops here (`incomplete` says so).
            return Some(Flow::Return);
        };
        let span = self.range(node);
        let before = self.store.freeze();
        let mut arms = Vec::new();
        for iterations in 0..=iterations {
            self.store = before.clone();
            self.store
                .insert(bound.place.clone(), Value::Int(bound.base + iterations));
            self.open_block();
            let flow = self.run_loop(node, condition, update, body, false);
            let stmts = self.close_block();
            arms.push((stmts, std::mem::take(&mut self.store), flow));
        }
        let mut chain: Option<ast::Else> = None;
        let mut stores = Vec::new();
        let mut all_return = true;
        for (iterations, (stmts, store, flow)) in arms.into_iter().enumerate().rev() {
            stores.push(store);
            all_return &= matches!(flow, Flow::Return);
            let block = ast::Block {
                stmts,
                span: span.clone(),
            };
            chain = Some(match chain {
                None => ast::Else::Block(block),
                Some(otherwise) => ast::Else::If(Box::new(ast::Stmt {
                    kind: ast::StmtKind::If {
                        cond: ast_binary(
                            ast::BinaryOp::Eq,
                            ast::Expr::name(&choice, span.clone()),
                            ast::Expr::int(iterations as i64, span.clone()),
                        ),
                        then: block,
                        otherwise: Some(otherwise),
                    },
                    span: span.clone(),
                })),
            });
        }
        match chain {
            Some(ast::Else::If(stmt)) => self.emit(stmt.kind, stmt.span),
            Some(ast::Else::Block(block)) => self.blocks.last_mut().expect("open").extend(block.stmts),
            None => {}
        }
        self.store = super::store::merge(&before, &stores);
        Some(if all_return { Flow::Return } else { Flow::Normal })
    }

    /// How many iterations, at most, a loop of unknown count is walked for.
    pub(super) fn unknown_loop_iterations(&self) -> i64 {
        if self.aicore.is_some() {
            KERNEL_ITERATIONS
        } else {
            HOST_ITERATIONS
        }
    }

    /// `i < n`, `i != n` or `i <= n` (or `n > i`), with a counter `i` of known value that
    /// `update` steps by one, and `n` a place of no known value (`ringNum`,
    /// `ctx.count`, `v.size()`).
    fn unknown_bound(&mut self, condition: Node<'u>, update: Node<'u>) -> Option<Bound> {
        let condition = strip_parentheses(condition);
        if condition.kind() != "binary_expression" {
            return None;
        }
        let operator = condition.field_child("operator").map(|op| self.text(op))?;
        let (left, right) = (condition.field_child("left")?, condition.field_child("right")?);
        // The counter on the left: `i < n`; on the right: `n > i`.
        let (counter, limit, inclusive) = match operator {
            "<" | "!=" => (left, right, false),
            "<=" => (left, right, true),
            ">" => (right, left, false),
            ">=" => (right, left, true),
            _ => return None,
        };
        let counter_text = self.text(counter).trim();
        if !steps_by_one(self.text(update), counter_text) {
            return None;
        }
        let start = self.place_of(counter).and_then(|place| self.load(&place).int())?;
        let place = self.bound_place(strip_parentheses(limit))?;
        if self.load(&place) != Value::Unknown {
            return None;
        }
        Some(Bound {
            place,
            base: if inclusive { start - 1 } else { start },
        })
    }

    /// Where a bound's value is kept: a variable, member or element, or a container's
    /// length (`v.size()`).
    fn bound_place(&mut self, limit: Node<'u>) -> Option<Place> {
        match limit.kind() {
            "identifier" | "field_expression" | "subscript_expression" | "qualified_identifier" => {
                // A constant is no place: its value is known or it has none to choose.
                if limit.kind() == "identifier" && self.named_constant(self.text(limit)).is_some() {
                    return None;
                }
                self.place_of(limit)
            }
            "call_expression" => {
                let function = limit.field_child("function")?;
                let method = function.field_child("field").map(|field| self.text(field))?;
                let has_no_arguments = limit
                    .field_child("arguments")
                    .is_some_and(|arguments| arguments.named_child_count() == 0);
                if method != "size" || !has_no_arguments {
                    return None;
                }
                let container = self.container_place(function.field_child("argument")?)?;
                Some(format!("{container}.#len"))
            }
            _ => None,
        }
    }
}

/// `++i`, `i++`, `i += 1`, `i = i + 1` for the counter `i`.
pub(super) fn steps_by_one(update: &str, counter: &str) -> bool {
    let update: String = update.chars().filter(|c| !c.is_whitespace()).collect();
    [
        format!("++{counter}"),
        format!("{counter}++"),
        format!("{counter}+=1"),
        format!("{counter}={counter}+1"),
    ]
    .contains(&update)
}

fn strip_parentheses(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" {
        match node.named_child(0) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_steps_by_one() {
        assert!(steps_by_one("++i", "i"));
        assert!(steps_by_one("ring ++", "ring"));
        assert!(steps_by_one("i += 1", "i"));
        assert!(!steps_by_one("i += 2", "i"));
        assert!(!steps_by_one("j++", "i"));
    }
}
