//! Top-level settings: `target`, `cann`, `ranks`, `param`, `hccl_buffer_size`,
//! `default_stream`.
//! They are read before any code, so `N` and parameters are usable everywhere.

use std::collections::HashMap;

use crate::ast::{self, ExprKind, RankCount as AstRanks, StmtKind};

use super::{Binding, Lowerer};
use syncguard_model::model::{CannPolicy, DefaultStream, Param, ParamId, RankCount, Target};

impl Lowerer<'_> {
    pub(super) fn collect_settings(&mut self, stmts: &[ast::Stmt]) {
        let mut seen: HashMap<String, ast::Span> = HashMap::new();
        for stmt in stmts {
            let key = match &stmt.kind {
                StmtKind::Setting { key, .. } => key.name.clone(),
                StmtKind::Ranks(_) => "ranks".to_string(),
                StmtKind::Param { name, .. } => format!("param {}", name.name),
                _ => continue,
            };
            if let Some(first) = seen.get(&key) {
                let line_hint = format!("`{key}` was already set at byte {}", first.start);
                self.syntax_error(&stmt.span, format!("`{key}` is set twice"), line_hint);
                continue;
            }
            seen.insert(key, stmt.span.clone());
            match &stmt.kind {
                StmtKind::Setting { key, value } => self.setting(key, value),
                StmtKind::Ranks(ranks) => self.ranks(ranks),
                StmtKind::Param { name, range } => {
                    self.declare_param(name, range);
                }
                _ => {}
            }
        }
    }

    fn setting(&mut self, key: &ast::Ident, value: &ast::Expr) {
        match key.name.as_str() {
            "target" => self.target(value),
            "cann" => match bare_name(value) {
                Some("current") => self.program.settings.cann = CannPolicy::Current,
                Some("legacy") => self.program.settings.cann = CannPolicy::Legacy,
                _ => self.syntax_error(&value.span, "`cann` is `current` or `legacy`", "unknown CANN policy"),
            },
            "default_stream" => {
                let mode = match &value.kind {
                    ExprKind::Str(name) => DefaultStream::from_name(name),
                    _ => bare_name(value).and_then(DefaultStream::from_name),
                };
                match mode {
                    Some(mode) => self.program.settings.default_stream = mode,
                    None => self.syntax_error(
                        &value.span,
                        "`default_stream` is `legacy` or `per_thread`",
                        "how nvcc's `--default-stream` was set",
                    ),
                }
            }
            _ => match self.const_int(value) {
                Some(size) if size > 0 => self.program.settings.hccl_buffer_size = size as u64,
                _ => self.syntax_error(
                    &value.span,
                    "`hccl_buffer_size` needs a positive size",
                    "e.g. `400 MiB`",
                ),
            },
        }
    }

    fn target(&mut self, value: &ast::Expr) {
        let text = match &value.kind {
            ExprKind::Name(path) => Some(path.text.clone()),
            ExprKind::Str(text) => Some(text.clone()),
            ExprKind::Int(lit) => Some(lit.value.to_string()),
            _ => None,
        };
        let name = text.as_deref().map(|t| t.strip_prefix("Ascend").unwrap_or(t));
        match name.and_then(Target::from_name) {
            Some(target) => self.program.settings.target = target,
            None => {
                let names: Vec<&str> = Target::NAMES.iter().map(|(n, _)| *n).collect();
                self.syntax_error(
                    &value.span,
                    format!("unknown target product; expected one of {}", names.join(", ")),
                    "write e.g. `target A3;` or `target \"310P\";`",
                );
            }
        }
    }

    fn ranks(&mut self, ranks: &AstRanks) {
        match ranks {
            AstRanks::Fixed(count) => match self.const_int(count) {
                Some(n) if (1..=u32::MAX as i64).contains(&n) => {
                    self.program.settings.ranks = RankCount::Fixed(n as u32);
                }
                _ => self.syntax_error(&count.span, "`ranks` needs a positive count", "not a positive constant"),
            },
            AstRanks::Param { name, range } => {
                if let Some(id) = self.declare_param(name, range) {
                    let param = &self.program.params[id.index()];
                    if param.min < 1 {
                        let span = range.span.clone();
                        self.syntax_error(&span, "a rank count must be at least 1", "lower bound below 1");
                    }
                    self.program.settings.ranks = RankCount::Param(id);
                }
            }
        }
    }

    fn declare_param(&mut self, name: &ast::Ident, range: &ast::RangeExpr) -> Option<ParamId> {
        let min = self.const_int(&range.start);
        let max = match &range.end {
            None => Some(None),
            Some(end) => self
                .const_int(end)
                .map(|hi| Some(if range.inclusive { hi } else { hi - 1 })),
        };
        let (Some(min), Some(max)) = (min, max) else {
            self.syntax_error(
                &range.span,
                "a parameter range needs constant bounds",
                "e.g. `2..=1024`",
            );
            return None;
        };
        if max.is_some_and(|max| max < min) {
            self.syntax_error(
                &range.span,
                "this range is empty",
                "the upper bound is below the lower bound",
            );
            return None;
        }
        let id = ParamId(self.program.params.len() as u32);
        self.program.params.push(Param {
            name: name.name.clone(),
            min,
            max,
            span: self.span(&name.span),
        });
        self.bind(&name.name, Binding::Param(id));
        Some(id)
    }
}

/// `current` in `cann current;`.
fn bare_name(expr: &ast::Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::Name(path) => Some(path.text.as_str()),
        _ => None,
    }
}
