//! Looking ahead for names used before their `let`.
//!
//! Names are visible from their `let` to the end of the enclosing block. When a name is
//! unknown at its use, the rest of the current block and of every enclosing block may
//! still create it: the use comes before the creation (SG101 for events, SG003 with a
//! pointer to the later `let` for every other kind).

use crate::ast;

use super::{Lowerer, expr};
use syncguard_model::api::{self, Creates, Existing};

/// A `let` of the block being lowered that binds an object.
pub(super) struct LaterLet {
    /// Index of the `let` among the block's statements.
    index: usize,
    pub name: String,
    /// The whole `let` statement.
    pub span: ast::Span,
    /// The creating API as written.
    pub api: String,
    /// The noun of what it creates ("event", "stream", ...).
    pub noun: &'static str,
}

/// One block being lowered: its object-creating `let`s and the statement being lowered.
#[derive(Default)]
pub(super) struct AheadFrame {
    lets: Vec<LaterLet>,
    current: usize,
}

impl AheadFrame {
    pub fn of(stmts: &[ast::Stmt]) -> Self {
        let mut lets = Vec::new();
        for (index, stmt) in stmts.iter().enumerate() {
            let ast::StmtKind::Let { pattern, value } = &stmt.kind else {
                continue;
            };
            let ast::ExprKind::Call(call) = &value.kind else {
                continue;
            };
            if expr::is_builtin_call(call) {
                continue;
            }
            let Some(api) = api::lookup(&call.callee.text) else {
                continue;
            };
            let Some(noun) = created_noun(api.creates) else {
                continue;
            };
            for name in pattern.names() {
                lets.push(LaterLet {
                    index,
                    name: name.name.clone(),
                    span: stmt.span.clone(),
                    api: call.callee.text.clone(),
                    noun,
                });
            }
        }
        AheadFrame { lets, current: 0 }
    }
}

/// `ObjectKind::noun` of what a creating API makes.
fn created_noun(creates: Creates) -> Option<&'static str> {
    Some(match creates {
        Creates::Nothing => return None,
        Creates::Stream => "stream",
        Creates::Context | Creates::CurrentContext => "context",
        Creates::Graph => "graph",
        Creates::GraphExec => "executable graph",
        Creates::Event(..) | Creates::IpcEvent => "event",
        Creates::Notify | Creates::IpcNotify => "notify",
        Creates::Comm => "communicator",
        Creates::Channels => "channel",
        Creates::HcclThreads | Creates::HcclThreadOnStream => "HCCL thread",
        Creates::DeviceBuffer
        | Creates::PitchedDeviceBuffer
        | Creates::HostBuffer
        | Creates::PageableHostBuffer
        | Creates::HcclLocalBuffer
        | Creates::HcclPeerBuffer
        | Creates::IpcMemory => "buffer",
        Creates::Existing(existing) => match existing {
            Existing::Event => "event",
            Existing::Notify => "notify",
            Existing::Comm => "communicator",
            Existing::Thread => "HCCL thread",
            Existing::Channel => "channel",
            Existing::Memory | Existing::PeerMemory => "buffer",
        },
    })
}

impl Lowerer<'_> {
    /// Lower a block's statements with its later `let`s known.
    pub(super) fn with_lookahead(&mut self, stmts: &[ast::Stmt], mut each: impl FnMut(&mut Self, &ast::Stmt)) {
        self.ahead.push(AheadFrame::of(stmts));
        for (index, stmt) in stmts.iter().enumerate() {
            if let Some(frame) = self.ahead.last_mut() {
                frame.current = index;
            }
            each(self, stmt);
        }
        self.ahead.pop();
    }

    /// The `let` that creates `name` later in the current block or an enclosing one,
    /// innermost first.
    pub(super) fn created_later(&self, name: &str) -> Option<&LaterLet> {
        self.ahead.iter().rev().find_map(|frame| {
            frame
                .lets
                .iter()
                .find(|later| later.index > frame.current && later.name == name)
        })
    }
}
