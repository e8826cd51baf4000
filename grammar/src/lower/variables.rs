//! Host code's own state: `let mut` variables, assignments and `while` loops, and what
//! code does with a query's result: a busy-wait on it (`while aclrtQueryEventStatus(ev)
//! != COMPLETE {}`), which is the synchronize the query stands for once it sees the
//! work done, and a branch on it (`if aclrtQueryEventStatus(ev) == COMPLETE { ... }`).

use crate::ast::{self, BinaryOp, ExprKind};

use super::{Binding, Lowerer, Place};
use syncguard_model::api::{self, QueryCompletion};
use syncguard_model::model::{Block, Op, Stmt};

impl Lowerer<'_> {
    /// `let mut name = value;`
    pub(super) fn lower_let_mut(&mut self, stmt: &ast::Stmt, name: &ast::Ident, value: &ast::Expr, out: &mut Block) {
        if !self.require_place(stmt, Place::Host, "a `let mut` variable", "in host code") {
            return;
        }
        let value = self.lower_expr(value);
        let var = self.new_var(name);
        self.mutable.insert(var);
        self.bind(&name.name, Binding::Var(var));
        out.push(Stmt::Assign {
            var,
            value,
            span: self.span(&stmt.span),
        });
    }

    /// `name = value;`
    pub(super) fn lower_assign(&mut self, stmt: &ast::Stmt, name: &ast::Ident, value: &ast::Expr, out: &mut Block) {
        if !self.require_place(stmt, Place::Host, "an assignment", "in host code") {
            return;
        }
        let var = match self.lookup(&name.name) {
            Some(Binding::Var(var)) if self.mutable.contains(&var) => var,
            Some(Binding::Var(_)) => {
                let message = format!("`{}` is a loop variable: it cannot be assigned", name.name);
                self.syntax_error(
                    &name.span,
                    message,
                    "declare a `let mut` variable for a value that changes",
                );
                return;
            }
            Some(_) => {
                let message = format!("`{}` cannot be assigned: it is not a `let mut` variable", name.name);
                let label = format!("declare it with `let mut {} = ...;`", name.name);
                self.syntax_error(&name.span, message, label);
                return;
            }
            None => {
                let candidates = self.visible_values();
                self.unknown_name(
                    &name.span,
                    "variable",
                    &name.name,
                    candidates.iter().map(String::as_str),
                );
                return;
            }
        };
        let value = self.lower_expr(value);
        out.push(Stmt::Assign {
            var,
            value,
            span: self.span(&stmt.span),
        });
    }

    /// `while cond { body }`, or a busy-wait on a query.
    pub(super) fn lower_while(&mut self, stmt: &ast::Stmt, cond: &ast::Expr, body: &ast::Block, out: &mut Block) {
        if !self.require_place(stmt, Place::Host, "a `while` loop", "in host code") {
            return;
        }
        if let Some(query) = queried(cond) {
            self.lower_busy_wait(cond, query, body, out);
            return;
        }
        let cond = self.lower_expr(cond);
        let body = self.lower_block(body);
        out.push(Stmt::While {
            cond,
            body,
            span: self.span(&stmt.span),
        });
    }

    /// `while QUERY(handle) != DONE {}` (or `== NOT_READY`): the loop ends once the query
    /// sees the work done, so it orders what follows as the synchronize it stands for.
    fn lower_busy_wait(&mut self, cond: &ast::Expr, call: &ast::Call, body: &ast::Block, out: &mut Block) {
        let Some((api, completion)) = self.modelled_query(cond, call, "a busy-wait") else {
            return;
        };
        let (done, not_ready) = status_names(completion);
        if compares(cond, done, &not_ready) != Some(false) {
            let message = format!(
                "a busy-wait loops while the query is not done: `{}(...) != {done}`",
                api.name
            );
            self.syntax_error(&cond.span, message, format!("or `== {not_ready}`"));
            return;
        }
        if !body.stmts.is_empty() {
            let message = "a busy-wait's body runs an unknown number of times: keep it empty";
            self.syntax_error(&body.span, message, "move this work before or after the loop");
            return;
        }
        if let Some(sync) = self.query_synchronize(api, call) {
            out.push(Stmt::Op(sync));
        }
    }

    /// `if QUERY(handle) == DONE { done } else { pending }` (or `!= NOT_READY`, or the
    /// branches the other way round with `!= DONE` / `== NOT_READY`).
    pub(super) fn lower_query_branch(
        &mut self,
        stmt: &ast::Stmt,
        call: &ast::Call,
        cond: &ast::Expr,
        then: &ast::Block,
        otherwise: Option<&ast::Else>,
        out: &mut Block,
    ) {
        if !self.require_place(stmt, Place::Host, "a branch on a query", "in host code") {
            return;
        }
        let Some((api, completion)) = self.modelled_query(cond, call, "a branch") else {
            return;
        };
        let (done, not_ready) = status_names(completion);
        let Some(then_is_done) = compares(cond, done, &not_ready) else {
            let message = format!(
                "a branch on `{}` must compare its result with `{done}` or `{not_ready}`",
                api.name
            );
            self.syntax_error(&cond.span, message, "syncguard cannot tell which runs take this branch");
            return;
        };
        let Some(sync) = self.query_synchronize(api, call) else {
            return;
        };
        let then = self.lower_block(then);
        let otherwise = self.lower_else(otherwise);
        let (done, pending) = if then_is_done {
            (then, otherwise)
        } else {
            (otherwise, then)
        };
        out.push(Stmt::QueryBranch {
            sync: Box::new(sync),
            done,
            pending,
            span: self.span(&stmt.span),
        });
    }

    /// The query `call` makes, if syncguard knows which of its results means done.
    fn modelled_query(
        &mut self,
        cond: &ast::Expr,
        call: &ast::Call,
        what: &str,
    ) -> Option<(&'static api::Api, QueryCompletion)> {
        let api = api::lookup(&call.callee.text)?;
        let Some(completion) = api.query else {
            let message = format!(
                "{what} on `{}` is not modelled: syncguard does not know which result means done",
                api.name
            );
            self.syntax_error(
                &cond.span,
                message,
                "only the queries of a stream's or an event's work are modelled",
            );
            return None;
        };
        Some((api, completion))
    }

    /// The synchronize a query stands for when it sees the work done, at the query.
    fn query_synchronize(&mut self, api: &'static api::Api, call: &ast::Call) -> Option<Op> {
        let bound = self.bind_args(api, call)?;
        let args = self.resolve_args(api, &bound)?;
        Some(Op {
            api: api.name,
            kind: syncguard_model::calls::completion_synchronize(api, &args)?,
            span: self.span(&call.span),
        })
    }

    /// Names of integer values in scope (variables, parameters), for suggestions.
    fn visible_values(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|scope| scope.iter())
            .filter(|(_, binding)| matches!(binding, Binding::Var(_)))
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }
}

/// The query call a condition compares, if it is one.
pub(super) fn queried(cond: &ast::Expr) -> Option<&ast::Call> {
    let ExprKind::Binary(BinaryOp::Eq | BinaryOp::Ne, lhs, rhs) = &cond.kind else {
        return None;
    };
    [lhs, rhs].into_iter().find_map(|side| match &side.kind {
        ExprKind::Call(call) if api::lookup(&call.callee.text).is_some_and(is_query) => Some(&**call),
        _ => None,
    })
}

/// A query of a stream's or an event's work (also one whose result is not modelled).
fn is_query(api: &api::Api) -> bool {
    api.query.is_some() || matches!(api.effect, api::Effect::EventQuery { .. })
}

/// The result that means done and the one that means not yet.
fn status_names(completion: QueryCompletion) -> (&'static str, String) {
    match completion {
        QueryCompletion::Succeeds => ("cudaSuccess", "cudaErrorNotReady".into()),
        QueryCompletion::Status { name, .. } => (name, name.replace("COMPLETE", "NOT_READY")),
    }
}

/// Whether `cond` holds when the query sees the work done (`query == done`, `query !=
/// not_ready`) or when it does not (`!= done`, `== not_ready`), either way round; `None`
/// for any other comparison.
fn compares(cond: &ast::Expr, done: &str, not_ready: &str) -> Option<bool> {
    let ExprKind::Binary(op, lhs, rhs) = &cond.kind else {
        return None;
    };
    let constant = [lhs, rhs].into_iter().find_map(|side| match &side.kind {
        ExprKind::Name(path) => Some(path.text.rsplit("::").next().unwrap_or(&path.text)),
        _ => None,
    })?;
    let equal = *op == BinaryOp::Eq;
    if constant == done {
        Some(equal)
    } else if constant == not_ready {
        Some(!equal)
    } else {
        None
    }
}
