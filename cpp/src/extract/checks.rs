//! How the code checks a catalogued call's outcome, besides comparing its return code
//! (which the walk evaluates): a null test of the handle a create leaves, and a test
//! that asserts the call fails (a unit test of error paths); and the batch mode the
//! code runs in when its caller opened it.

use tree_sitter::Node;

use super::Walker;
use super::api::strip_casts;
use super::value::Value;
use crate::fields::FieldChild;

/// gtest's comparisons: `EXPECT_NE(ret, ACL_SUCCESS)` and the like.
const EXPECTATIONS: &[&str] = &["EXPECT_NE", "ASSERT_NE", "EXPECT_EQ", "ASSERT_EQ"];

/// Return codes of success (`EXPECT_NE(ret, ACL_SUCCESS)` expects a failure).
const SUCCESS: &[&str] = &[
    "ACL_SUCCESS",
    "ACL_ERROR_NONE",
    "RT_ERROR_NONE",
    "HCCL_SUCCESS",
    "cudaSuccess",
    "CUDA_SUCCESS",
    "0",
];

impl<'u> Walker<'_, 'u> {
    /// `aclrtMalloc(&buf, ...);` followed by `if (buf == nullptr) { ... }` (or `!buf`,
    /// or a test's `ASSERT_NE(buf, nullptr)`): the failure is checked on the handle the
    /// call leaves null, not on its code.
    pub(super) fn null_checked_next(&self, call: Node<'u>, output: Node<'u>) -> bool {
        let output = strip_casts(output);
        let target = match output.field_child("argument") {
            Some(target) if output.kind() == "pointer_expression" && self.text(output).starts_with('&') => target,
            _ => return false,
        };
        let names_target = |node: Node| same_place_text(self.text(node), self.text(target));
        let is_null = |node: Node| matches!(self.text(node).trim(), "nullptr" | "NULL" | "0");
        let Some(next) = next_statement(call) else {
            return false;
        };
        let condition = match next.kind() {
            "if_statement" => next.field_child("condition"),
            // `ASSERT_NE(buf, nullptr);`, `EXPECT_TRUE(buf != nullptr);`
            "expression_statement" => next
                .named_child(0)
                .filter(|call| call.kind() == "call_expression")
                .filter(|call| {
                    let name = self.text_of_field(*call, "function");
                    name.starts_with("ASSERT_") || name.starts_with("EXPECT_")
                })
                .and_then(|call| call.field_child("arguments")),
            _ => None,
        };
        let Some(condition) = condition else {
            return false;
        };
        if condition.kind() == "argument_list"
            && matches!(
                condition.parent().map(|call| self.text_of_field(call, "function")),
                Some("ASSERT_NE" | "EXPECT_NE")
            )
            && let (Some(first), Some(second)) = (condition.named_child(0), condition.named_child(1))
            && ((names_target(first) && is_null(second)) || (is_null(first) && names_target(second)))
        {
            return true;
        }
        let mut stack = vec![condition];
        while let Some(node) = stack.pop() {
            let test = match node.kind() {
                "binary_expression" if matches!(self.text_of_field(node, "operator"), "==" | "!=") => {
                    let (left, right) = (node.field_child("left"), node.field_child("right"));
                    left.zip(right).is_some_and(|(left, right)| {
                        (names_target(left) && is_null(right)) || (is_null(left) && names_target(right))
                    })
                }
                "unary_expression" if self.text_of_field(node, "operator") == "!" => {
                    node.field_child("argument").is_some_and(names_target)
                }
                _ => false,
            };
            if test {
                return true;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        false
    }

    /// `cudaDeviceSynchronize();` followed by a statement that checks
    /// `cudaGetLastError()` (or `cudaPeekAtLastError()`): the CUDA runtime keeps the
    /// error of its last call for them, so that is its check.
    pub(super) fn last_error_checked_next(&self, call: Node<'u>, api: &syncguard_model::api::Api) -> bool {
        api.name.starts_with("cuda")
            && next_statement(call).is_some_and(|next| {
                let text = self.text(next);
                text.contains("cudaGetLastError") || text.contains("cudaPeekAtLastError")
            })
    }

    /// A call the code asserts fails, as unit tests of error paths do:
    /// `EXPECT_NE(aclrtX(...), ACL_SUCCESS)`, or `ret = aclrtX(...);` followed by
    /// `EXPECT_NE(ret, ACL_SUCCESS)` or `EXPECT_EQ(ret, ACL_ERROR_INVALID_PARAM)`.
    pub(super) fn expected_to_fail(&self, call: Node<'u>) -> Option<&'u str> {
        // The call as an argument of the expectation itself.
        if let Some(list) = call.parent().filter(|parent| parent.kind() == "argument_list")
            && let Some(expectation) = list.parent()
        {
            return self.expects_failure(expectation, call).then(|| self.text(expectation));
        }
        // The call's code stored, then tested by the next statement.
        let (code, statement) = self.stored_code(call)?;
        let expectation = next_statement(statement)?
            .named_child(0)
            .filter(|node| node.kind() == "call_expression")?;
        let arguments = expectation.field_child("arguments")?;
        let mut cursor = arguments.walk();
        let tested = arguments
            .named_children(&mut cursor)
            .find(|arg| same_place_text(self.text(*arg), code))?;
        self.expects_failure(expectation, tested)
            .then(|| self.text(expectation))
    }

    /// `ret = call;` or `aclError ret = call;` as a statement: the variable's text and
    /// the statement.
    fn stored_code(&self, call: Node<'u>) -> Option<(&'u str, Node<'u>)> {
        let parent = call.parent()?;
        match parent.kind() {
            "assignment_expression" if self.text_of_field(parent, "operator") == "=" => {
                let statement = parent.parent().filter(|node| node.kind() == "expression_statement")?;
                Some((self.text(parent.field_child("left")?), statement))
            }
            "init_declarator" => {
                let statement = parent.parent().filter(|node| node.kind() == "declaration")?;
                Some((self.text(parent.field_child("declarator")?), statement))
            }
            _ => None,
        }
    }

    /// Whether `expectation` is a gtest comparison of `tested` that holds only if the
    /// call failed: not equal to success, or equal to an error code.
    fn expects_failure(&self, expectation: Node<'u>, tested: Node<'u>) -> bool {
        if expectation.kind() != "call_expression" {
            return false;
        }
        let macro_name = self.text_of_field(expectation, "function");
        if !EXPECTATIONS.contains(&macro_name) {
            return false;
        }
        let Some(arguments) = expectation.field_child("arguments") else {
            return false;
        };
        let mut cursor = arguments.walk();
        let args: Vec<Node<'u>> = arguments.named_children(&mut cursor).collect();
        let [first, second] = args[..] else { return false };
        let other = if first == tested { second } else { first };
        let other = self.text(other).trim();
        let simple = other.rsplit("::").next().unwrap_or(other);
        let success = SUCCESS.contains(&simple);
        let error =
            !success && (simple.contains("ERROR") || simple.contains("FAIL") || simple.starts_with("cudaError"));
        match macro_name {
            "EXPECT_NE" | "ASSERT_NE" => success,
            _ => error,
        }
    }

    /// Batch mode opened before the entry point: code that ends a batch it did not start
    /// (`HcommBatchModeEnd(tag)` first, to run eagerly) runs inside its caller's batch,
    /// and a later `HcommBatchModeStart(tag)` reopens it for the caller to end. Both are
    /// left out (the note says why); the calls between them run at once, as in an
    /// eager stretch. `None` for a batch the walk follows, which it tracks per path.
    pub(super) fn batch_from_before(&mut self, start: bool, tag: Option<Node<'u>>) -> Option<&'static str> {
        let tag = tag
            .map_or("", |tag| self.text(tag))
            .split_whitespace()
            .collect::<String>();
        let open = format!("#batch:{tag}");
        let before = format!("#batch_from_before:{tag}");
        let from_before = self.store.get(&before) == Some(&Value::Int(1));
        match start {
            true if from_before => Some("it reopens the caller's batch, which the caller ends"),
            true => {
                self.store.insert(open, Value::Int(1));
                None
            }
            // Started on this path, or on some paths before branches joined (which
            // `if`s, deciding the same way, tell apart): followed.
            false if matches!(self.store.get(&open), Some(Value::Int(1) | Value::Unknown)) => {
                self.store.insert(open, Value::Int(0));
                None
            }
            false => {
                self.store.insert(before, Value::Int(1));
                Some("it ends a batch started before this entry point (by its caller)")
            }
        }
    }

    fn text_of_field(&self, node: Node<'u>, field: &str) -> &'u str {
        node.field_child(field).map_or("", |child| self.text(child))
    }
}

/// The statement after the one `node` is in (comments skipped).
fn next_statement(node: Node) -> Option<Node> {
    let statement = if matches!(node.kind(), "expression_statement" | "declaration") {
        node
    } else {
        node.parent()?
    };
    let mut next = statement.next_named_sibling();
    while let Some(comment) = next.filter(|node| node.kind() == "comment") {
        next = comment.next_named_sibling();
    }
    next
}

/// `buf_` and `this->buf_` (or `( buf )`): the same place, as written in one function.
fn same_place_text(a: &str, b: &str) -> bool {
    let normal = |text: &str| -> String {
        let text: String = text
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')'))
            .collect();
        text.strip_prefix("this->").map_or(text.clone(), str::to_string)
    };
    normal(a) == normal(b)
}
