//! The `.sync` language: lexer, parser, syntax tree and pretty-printer.
//!
//! The entry points never fail: [`parse`] always returns a [`File`] (statements that
//! did not parse are `StmtKind::Error`) together with every syntax error found.
//! The parser library's types stay inside this crate.

pub mod ast;
mod error;
mod format;
pub mod lexer;
mod parser;
pub mod spanless;

pub use ast::File;
pub use error::SyntaxError;
pub use format::format;
pub use parser::SETTING_KEYS;

/// The result of parsing one source text.
#[derive(Debug)]
pub struct Parsed {
    pub file: File,
    pub errors: Vec<SyntaxError>,
    /// Comments in source order, for the pretty-printer.
    pub comments: Vec<ast::Comment>,
}

/// Deepest bracket nesting accepted. Deeper input is not a program anyone wrote, and
/// bounding it keeps every recursive pass (lowering, rules, formatting) off the stack limit.
pub const MAX_NESTING: usize = 128;
/// Most operators in one statement, for the same reason (`1+1+...` builds a deep tree).
pub const MAX_OPERATORS_PER_STATEMENT: usize = 1000;

/// Stop at the first statement that exceeds the limits: report it and drop the tokens
/// from its start on.
fn limit_complexity(lexed: &mut lexer::Lexed) {
    use lexer::{Punct, Token};
    let mut depth = 0usize;
    let mut operators = 0usize;
    let mut statement_start = 0usize;
    for (index, (token, span)) in lexed.tokens.iter().enumerate() {
        let problem = match token {
            Token::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                depth += 1;
                (depth > MAX_NESTING).then(|| format!("brackets nested more than {MAX_NESTING} levels deep"))
            }
            Token::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                depth = depth.saturating_sub(1);
                None
            }
            Token::Punct(Punct::Semi) => None,
            Token::Punct(p) if p.is_operator() => {
                operators += 1;
                (operators > MAX_OPERATORS_PER_STATEMENT)
                    .then(|| format!("more than {MAX_OPERATORS_PER_STATEMENT} operators in one statement"))
            }
            _ => None,
        };
        if let Some(problem) = problem {
            let stop = lexed.tokens[statement_start].1.start;
            lexed.errors.push(
                SyntaxError::new(
                    span.clone(),
                    format!("input too complex: {problem}"),
                    "limit reached here",
                )
                .with_help("syncguard stops reading the file at the statement that contains this"),
            );
            lexed.tokens.truncate(statement_start);
            lexed.comments.retain(|c| c.span.start < stop);
            return;
        }
        if matches!(token, Token::Punct(Punct::Semi | Punct::LBrace | Punct::RBrace)) {
            operators = 0;
            if depth == 0 {
                statement_start = index + 1;
            }
        }
    }
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
    limit_complexity(&mut lexed);
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
