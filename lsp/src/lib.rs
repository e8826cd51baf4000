//! The syncguard language server (`syncguard lsp`): diagnostics for `.sync` programs,
//! call traces, C/C++ and Python sources as they are typed, with every involved call
//! as related information; hover on APIs, rule codes and handles; quick fixes and
//! suppressions; and for `.sync`, formatting, names, symbols, semantic tokens and
//! completion. The only crate that knows the Language Server Protocol.

mod actions;
mod analysis;
mod diagnostics;
mod documents;
mod hover;
mod positions;
mod records;
mod server;
mod sync_editing;

pub use server::{ServerOptions, request_id, serve, serve_stdio, serve_with};
