//! The `.sync` frontend: lexer, parser, syntax tree, pretty-printer, and the lowering
//! of a file to the Program model (`lower`).
//!
//! The entry points never fail: [`parse`] always returns a [`File`] (statements that
//! did not parse are `StmtKind::Error`) together with every syntax error found.
//! The parser library's types stay inside this crate.

pub mod ast;
mod depth;
mod error;
pub mod extracted;
mod format;
pub mod lexer;
pub mod lower;
mod parser;
pub mod reuse;
pub mod spanless;

pub use ast::File;
pub use depth::MAX_DEPTH;
pub use error::SyntaxError;
pub use format::{expr_text, format};
pub use parser::SETTING_KEYS;

/// The result of parsing one source text.
#[derive(Debug)]
pub struct Parsed {
    pub file: File,
    pub errors: Vec<SyntaxError>,
    /// Comments in source order, for the pretty-printer.
    pub comments: Vec<ast::Comment>,
}

/// For each lexical error, the byte range in which parse errors are its consequences.
fn lexical_shadows(lexed: &lexer::Lexed) -> Vec<ast::Span> {
    use lexer::{Punct, Token};
    let is_boundary = |token: &Token| matches!(token, Token::Punct(Punct::Semi | Punct::LBrace | Punct::RBrace));
    lexed
        .errors
        .iter()
        .map(|error| {
            let end = lexed
                .tokens
                .iter()
                .find(|(token, span)| span.start >= error.span.end && is_boundary(token))
                .map_or(usize::MAX, |(_, span)| span.end);
            error.span.start..end
        })
        .collect()
}

/// Parse `.sync` source text. Spans are byte offsets into `src`.
pub fn parse(src: &str) -> Parsed {
    let mut lexed = lexer::lex(src);
    depth::limit_depth(&mut lexed);
    let shadows = lexical_shadows(&lexed);
    let (file, parse_errors) = parser::parse_tokens(std::mem::take(&mut lexed.tokens), src);
    let mut errors = lexed.errors;
    // A parse error right after a lexical one (up to the next `;`, `{` or `}`) is its
    // consequence: an unterminated string swallows the `)` the parser then misses.
    errors.extend(
        parse_errors
            .into_iter()
            .filter(|error| !shadows.iter().any(|shadow| shadow.contains(&error.span.start))),
    );
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    errors.dedup_by(|a, b| a.span == b.span && a.message == b.message);
    Parsed {
        file,
        errors,
        comments: lexed.comments,
    }
}
