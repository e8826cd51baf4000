//! Lowering a `.sync` syntax tree to the Program model: name resolution, API signature
//! checks and the translation of each call into its model op (shared with every other
//! frontend through `syncguard_model::calls`).
//!
//! Problems are reported as SG001 (a statement that does not match its API) and SG003
//! (a name nothing declares); the statement is then left out and lowering goes on.

mod ahead;
mod aicore;
mod args;
mod arrays;
mod calls;
mod expr;
mod kernels;
mod settings;
mod variables;

use std::collections::HashMap;

use crate::ast;

use syncguard_model::diagnostic::{Diagnostic, UsedBeforeCreation};
use syncguard_model::model::{Block, HostThread, ObjId, Object, ObjectKind, ParamId, Program, Stmt, ThreadId, VarId};
use syncguard_model::reading_rules::{SyntaxErrorRule, UnknownName};
use syncguard_model::source::{FileId, Span};
use syncguard_model::suggest;

/// A lowered file: its Program (possibly partial), the problems found reading it, and
/// the events used above the `let` that creates them.
#[derive(Debug)]
pub struct Lowered {
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
    pub used_before_let: Vec<UsedBeforeCreation>,
}

/// Lower one parsed file. Always returns a Program, with every problem found.
pub fn lower(file: &ast::File, file_id: FileId, src_len: usize) -> Lowered {
    lower_mapped(file, Span::new(file_id, 0..src_len.min(1)), &|range| {
        Span::new(file_id, range.clone())
    })
}

/// Lower a syntax tree that another frontend built (C/C++, Python): its byte ranges
/// are that frontend's own, and `place` turns each into the span in the file the user
/// wrote. `whole` is where the program as a whole is reported.
pub fn lower_mapped(file: &ast::File, whole: Span, place: &dyn Fn(&ast::Span) -> Span) -> Lowered {
    let mut lowerer = Lowerer {
        program: Program::new(whole),
        diagnostics: Vec::new(),
        used_before_let: Vec::new(),
        place_span: place,
        scopes: vec![HashMap::new()],
        place: Place::Host,
        values: Vec::new(),
        ahead: Vec::new(),
        mutable: std::collections::HashSet::new(),
        kernel: None,
    };
    lowerer.collect_settings(&file.stmts);
    let body = lowerer.lower_stmts(&file.stmts);
    lowerer.program.threads[Program::MAIN_THREAD.index()].body = body;
    Lowered {
        program: lowerer.program,
        diagnostics: lowerer.diagnostics,
        used_before_let: lowerer.used_before_let,
    }
}

/// What a name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binding {
    Object(ObjId),
    Param(ParamId),
    Var(VarId),
    Thread(ThreadId),
    /// `let base = GetBlockIdx() * 1 KiB;`: a name for an integer expression.
    Value(VarValue),
    /// In an `aicore` block: a `GM_ADDR` parameter, a queue or buffer, a local tensor.
    Gm(usize),
    LocalBuffer(usize),
    Tensor(usize),
}

/// The index of a named integer expression in `Lowerer::values`.
type VarValue = usize;

/// The kind of code being lowered: decides which statements and calls are allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Host,
    /// Inside `op Name { }`, collecting tasks for `program.ge_ops[index]`.
    GenTask(usize),
    /// Directly inside `superkernel { }`: only `subkernel` blocks.
    SuperKernel(usize),
    /// Per-core code of a sub-kernel.
    Core,
    /// The pipe program of an `aicore` kernel.
    AiCore,
}

impl Place {
    /// Code one AI core runs: `GetBlockIdx()` and the core-type tests mean something.
    fn is_core(self) -> bool {
        matches!(self, Place::Core | Place::AiCore)
    }
}

struct Lowerer<'m> {
    program: Program,
    diagnostics: Vec<Diagnostic>,
    used_before_let: Vec<UsedBeforeCreation>,
    /// Where a syntax tree's byte range is in the user's files.
    place_span: &'m dyn Fn(&ast::Span) -> Span,
    scopes: Vec<HashMap<String, Binding>>,
    place: Place,
    /// Named integer expressions, substituted where their name is used.
    values: Vec<syncguard_model::model::Expr>,
    /// The blocks being lowered, outermost first, for names used before their `let`.
    ahead: Vec<ahead::AheadFrame>,
    /// Variables declared with `let mut`.
    mutable: std::collections::HashSet<VarId>,
    /// The `aicore` kernel being lowered.
    kernel: Option<syncguard_model::kernel::Kernel>,
}

impl Lowerer<'_> {
    fn span(&self, range: &ast::Span) -> Span {
        (self.place_span)(range)
    }

    fn syntax_error(&mut self, range: &ast::Span, message: impl Into<String>, label: impl Into<String>) {
        let diagnostic = Diagnostic::new(&SyntaxErrorRule::INFO, self.span(range), message).with_label(label);
        self.diagnostics.push(diagnostic);
    }

    /// SG003 for `name`, suggesting the closest of `candidates`.
    fn unknown_name<'a>(
        &mut self,
        range: &ast::Span,
        what: &str,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) {
        let message = format!("unknown {what} `{name}`");
        let mut diagnostic = Diagnostic::new(&UnknownName::INFO, self.span(range), message).with_label(match what {
            "flag" | "constant" | "pipe" => format!("not a {what} this parameter accepts"),
            _ => format!("nothing declares `{name}` before this point"),
        });
        if let Some(close) = suggest::closest(name, candidates) {
            diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
        }
        self.diagnostics.push(diagnostic);
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|scope| scope.get(name).copied())
    }

    fn bind(&mut self, name: &str, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), binding);
        }
    }

    /// Names in scope that refer to objects of the given noun (for suggestions).
    fn visible_objects(&self, noun: Option<&str>) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|scope| scope.iter())
            .filter(|(_, binding)| match (binding, noun) {
                (Binding::Object(id), Some(noun)) => self.program.object(*id).kind.noun() == noun,
                (Binding::Object(_), None) => true,
                _ => false,
            })
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }

    fn new_object(&mut self, name: &ast::Ident, kind: ObjectKind, api: &str) -> ObjId {
        let id = ObjId(self.program.objects.len() as u32);
        self.program.objects.push(Object {
            name: name.name.clone(),
            written: None,
            kind,
            span: self.span(&name.span),
            created_by: Some(api.to_string()),
            array: None,
            ipc_key: None,
        });
        self.bind(&name.name, Binding::Object(id));
        id
    }

    fn in_scope<T>(&mut self, place: Place, f: impl FnOnce(&mut Self) -> T) -> T {
        let outer = std::mem::replace(&mut self.place, place);
        self.scopes.push(HashMap::new());
        let result = f(self);
        self.scopes.pop();
        self.place = outer;
        result
    }

    fn lower_block(&mut self, block: &ast::Block) -> Block {
        self.in_scope(self.place, |this| this.lower_stmts(&block.stmts))
    }

    fn lower_stmts(&mut self, stmts: &[ast::Stmt]) -> Block {
        let mut out = Vec::new();
        self.with_lookahead(stmts, |this, stmt| this.lower_stmt(stmt, &mut out));
        out
    }

    fn lower_stmt(&mut self, stmt: &ast::Stmt, out: &mut Block) {
        use ast::StmtKind as K;
        match &stmt.kind {
            K::Setting { .. } | K::Ranks(_) | K::Param { .. } => {
                if self.scopes.len() > 1 || self.place != Place::Host {
                    self.syntax_error(
                        &stmt.span,
                        "settings belong at the top level of the file",
                        "this setting is inside a block",
                    );
                }
            }
            K::Let { pattern, value } => match &value.kind {
                ast::ExprKind::Call(call) if !expr::is_builtin_call(call) => self.lower_call(call, Some(pattern), out),
                _ => self.bind_value(stmt, pattern, value, out),
            },
            K::Call(call) => self.lower_call(call, None, out),
            K::LetMut { name, value } => self.lower_let_mut(stmt, name, value, out),
            K::Assign { name, value } => self.lower_assign(stmt, name, value, out),
            K::While { cond, body } => self.lower_while(stmt, cond, body, out),
            K::If { cond, then, otherwise } => self.lower_if(stmt, cond, then, otherwise.as_ref(), out),
            K::For { var, range, body } => self.lower_for(stmt, var, range, body, out),
            K::Thread { name, body } => self.lower_thread(stmt, name, body, out),
            K::GeOp { name, attrs, body } => self.lower_ge_op(stmt, name, attrs, body),
            K::SuperKernel { name, args, body } => self.lower_superkernel(stmt, name, args, body, out),
            K::SubKernel { name, args, body } => self.lower_subkernel(stmt, name, args, body),
            K::AiCore { name, args, body } => self.lower_aicore(stmt, name, args, body),
            K::Return => {
                if !matches!(self.place, Place::Host | Place::Core) {
                    self.syntax_error(&stmt.span, "`return` is only allowed in host or kernel code", "");
                }
                out.push(Stmt::Return(self.span(&stmt.span)));
            }
            K::Error => {}
        }
    }

    fn bind_value(&mut self, stmt: &ast::Stmt, pattern: &ast::Pattern, value: &ast::Expr, out: &mut Block) {
        let ast::Pattern::Name(name) = pattern else {
            let message = "only a call that creates several handles can bind a list";
            self.syntax_error(&value.span, message, "this is not such a call");
            return;
        };
        let value = self.lower_expr(value);
        if value.mentions(&|var| self.mutable.contains(&var)) {
            // Its value is the one at this point, as in C: a variable assigned once here.
            let var = self.new_var(name);
            self.bind(&name.name, Binding::Var(var));
            out.push(Stmt::Assign {
                var,
                value,
                span: self.span(&stmt.span),
            });
            return;
        }
        self.values.push(value);
        self.bind(&name.name, Binding::Value(self.values.len() - 1));
    }

    fn require_place(&mut self, stmt: &ast::Stmt, allowed: Place, what: &str, where_: &str) -> bool {
        if self.place == allowed {
            return true;
        }
        self.syntax_error(
            &stmt.span,
            format!("{what} is only allowed {where_}"),
            format!("{what} here"),
        );
        false
    }

    fn lower_if(
        &mut self,
        stmt: &ast::Stmt,
        cond: &ast::Expr,
        then: &ast::Block,
        otherwise: Option<&ast::Else>,
        out: &mut Block,
    ) {
        if matches!(self.place, Place::GenTask(_) | Place::SuperKernel(_)) {
            self.syntax_error(
                &stmt.span,
                "`if` is not allowed here",
                "only tasks or sub-kernels can appear here",
            );
            return;
        }
        if let Some(call) = variables::queried(cond) {
            self.lower_query_branch(stmt, call, cond, then, otherwise, out);
            return;
        }
        let cond = self.lower_expr(cond);
        let then = self.lower_block(then);
        let otherwise = self.lower_else(otherwise);
        out.push(Stmt::If {
            cond: Box::new(cond),
            then,
            otherwise,
            span: self.span(&stmt.span),
        });
    }

    /// The `else` of an `if`: its block, or the `else if` as a block of one statement.
    fn lower_else(&mut self, otherwise: Option<&ast::Else>) -> Block {
        match otherwise {
            None => Vec::new(),
            Some(ast::Else::Block(block)) => self.lower_block(block),
            Some(ast::Else::If(nested)) => {
                let mut block = Vec::new();
                self.lower_stmt(nested, &mut block);
                block
            }
        }
    }

    fn lower_for(
        &mut self,
        stmt: &ast::Stmt,
        var: &ast::Ident,
        range: &ast::RangeExpr,
        body: &ast::Block,
        out: &mut Block,
    ) {
        if matches!(self.place, Place::GenTask(_) | Place::SuperKernel(_)) {
            self.syntax_error(
                &stmt.span,
                "`for` is not allowed here",
                "only tasks or sub-kernels can appear here",
            );
            return;
        }
        let start = self.lower_expr(&range.start);
        let Some(end_expr) = &range.end else {
            self.syntax_error(&range.span, "a loop needs an upper bound", "add an end, e.g. `0..N`");
            return;
        };
        let end = self.lower_expr(end_expr);
        let id = self.new_var(var);
        let body = self.in_scope(self.place, |this| {
            this.bind(&var.name, Binding::Var(id));
            this.lower_stmts(&body.stmts)
        });
        out.push(Stmt::For {
            var: id,
            start: Box::new(start),
            end: Box::new(end),
            inclusive: range.inclusive,
            body,
            span: self.span(&stmt.span),
        });
    }

    fn lower_thread(&mut self, stmt: &ast::Stmt, name: &ast::Ident, body: &ast::Block, out: &mut Block) {
        if !self.require_place(stmt, Place::Host, "a `thread` block", "in host code") {
            return;
        }
        let id = ThreadId(self.program.threads.len() as u32);
        self.program.threads.push(HostThread {
            name: name.name.clone(),
            body: Vec::new(),
            span: self.span(&name.span),
        });
        self.bind(&name.name, Binding::Thread(id));
        let body = self.lower_block(body);
        self.program.threads[id.index()].body = body;
        out.push(Stmt::Op(syncguard_model::model::Op {
            api: "thread",
            kind: syncguard_model::model::OpKind::Spawn(id),
            span: self.span(&stmt.span),
        }));
    }
}
