//! The nesting limit, checked on the tokens before parsing.
//!
//! The parser, the formatter and every pass over the syntax tree recurse once per
//! level of nesting. Rather than give each of them a limit of its own, input whose tree
//! would be deeper than [`MAX_DEPTH`] is rejected here, so that every tree that
//! [`crate::parse`] returns is at most that deep.

use crate::SyntaxError;
use crate::ast::Span;
use crate::lexer::{Keyword, Lexed, Punct, Token};
use crate::parser::SETTING_KEYS;

/// Deepest nesting accepted in one statement. Levels are counted along the deepest
/// path: one per operator (`a + b + c` nests two `+` nodes), `else` and `[` (a slice),
/// and two per pair of brackets or braces and per `?` of `c ? a : b`, so at most 128
/// nested brackets. A tree that
/// [`crate::parse`] returns has at most this many levels of statements and expressions.
pub const MAX_DEPTH: usize = 256;

/// Levels that one pair of brackets adds: the node it makes (a call, a list, a struct,
/// a block) and the statement or expression inside.
const BRACKET_LEVELS: usize = 2;

/// Levels that every statement has on top of its nesting: the statement itself and the
/// innermost operand.
const STATEMENT_LEVELS: usize = 2;

/// One bracket group being read, or the file's top level. Its elements are what `,`
/// and `;` separate, and statements that end with a block.
#[derive(Default)]
struct Group {
    /// The bracket that opened it (`None` for the top level).
    opener: Option<Punct>,
    /// Whether this is a block of statements, not a struct literal.
    is_block: bool,
    /// `else`s of the current element's `if` chain: each branch nests one level deeper.
    elses: usize,
    /// Operator-like tokens in the current element (in the current branch of a chain):
    /// each nests one level.
    operators: usize,
    /// The deepest bracket group closed in the current element (branch), in levels.
    deepest_inner: usize,
}

impl Group {
    fn element_depth(&self) -> usize {
        self.elses + self.operators + self.deepest_inner
    }

    /// The next branch of an `if` chain: the condition and block of the branch before
    /// are beside it in the tree, not above it.
    fn next_branch(&mut self) {
        self.elses += 1;
        self.operators = 0;
        self.deepest_inner = 0;
    }

    fn end_element(&mut self) {
        *self = Group {
            opener: self.opener,
            is_block: self.is_block,
            ..Group::default()
        };
    }
}

/// Stop at the first statement that nests deeper than [`MAX_DEPTH`]: report where the
/// limit was reached and drop the tokens from the start of that top-level statement on.
pub(crate) fn limit_depth(lexed: &mut Lexed) {
    let tokens = &lexed.tokens;
    let mut groups = vec![Group::default()];
    let mut statement_start = 0;
    for (index, (token, span)) in tokens.iter().enumerate() {
        let previous = index.checked_sub(1).map(|previous| &tokens[previous].0);
        let next = tokens.get(index + 1).map(|(token, _)| token);
        let statement_ended = match token {
            Token::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                open(&mut groups, token, previous);
                false
            }
            Token::Punct(closer @ (Punct::RParen | Punct::RBracket | Punct::RBrace)) => {
                close(&mut groups, *closer, next)
            }
            Token::Punct(Punct::Semi) => end_element(&mut groups),
            Token::Punct(Punct::Comma) => {
                end_element(&mut groups);
                false
            }
            // Its branches are whole expressions, parsed as a bracket's content is.
            Token::Punct(Punct::Question) => {
                (0..BRACKET_LEVELS).for_each(|_| nest_one_level(&mut groups));
                false
            }
            Token::Punct(p) if p.is_operator() => {
                nest_one_level(&mut groups);
                false
            }
            Token::Kw(Keyword::Else) => {
                if let Some(current) = groups.last_mut() {
                    current.next_branch();
                }
                false
            }
            _ => false,
        };
        if STATEMENT_LEVELS + depth(&groups) > MAX_DEPTH {
            return stop_at_statement(lexed, statement_start, span.clone());
        }
        if statement_ended {
            statement_start = index + 1;
        }
    }
}

/// The levels along the path to the current token: each enclosing group's operators
/// and brackets, and the current element's own depth.
fn depth(groups: &[Group]) -> usize {
    let (current, enclosing) = groups.split_last().expect("the top level is never closed");
    let enclosing: usize = enclosing.iter().map(|group| group.operators + BRACKET_LEVELS).sum();
    enclosing + current.element_depth()
}

fn nest_one_level(groups: &mut [Group]) {
    if let Some(current) = groups.last_mut() {
        current.operators += 1;
    }
}

fn open(groups: &mut Vec<Group>, token: &Token, previous: Option<&Token>) {
    if *token == Token::Punct(Punct::LBracket) {
        // `x[a..b]` nests a slice node over `x`; chained slices nest one more each.
        nest_one_level(groups);
    }
    let Token::Punct(opener) = token else { return };
    groups.push(Group {
        opener: Some(*opener),
        is_block: *opener == Punct::LBrace && !starts_expression(previous),
        ..Group::default()
    });
}

/// Whether a `{` after `previous` is a struct literal: the parser accepts one only
/// where an expression starts. Anywhere else it is a block.
fn starts_expression(previous: Option<&Token>) -> bool {
    match previous {
        Some(Token::Punct(p)) => {
            p.is_operator()
                || matches!(
                    p,
                    Punct::Assign
                        | Punct::LParen
                        | Punct::LBracket
                        | Punct::Comma
                        | Punct::Colon
                        | Punct::DotDot
                        | Punct::DotDotEq
                )
        }
        Some(Token::Kw(Keyword::Ranks)) => true,
        Some(Token::Ident(name)) => SETTING_KEYS.contains(&&**name),
        _ => false,
    }
}

/// Close the innermost group `closer` matches, with every group opened inside it (their
/// closers are missing); returns whether that ended a top-level statement (a block not
/// followed by `else`). A closer that matches no open group is stray: it closes nothing,
/// so that brackets it leaves open still count towards the limit (the parser reports it,
/// and its recovery would otherwise rescan the rest of the file at every such bracket).
fn close(groups: &mut Vec<Group>, closer: Punct, next: Option<&Token>) -> bool {
    let opener = match closer {
        Punct::RParen => Punct::LParen,
        Punct::RBracket => Punct::LBracket,
        _ => Punct::LBrace,
    };
    let Some(matched) = groups.iter().rposition(|group| group.opener == Some(opener)) else {
        return false;
    };
    let mut ends_statement = false;
    while groups.len() > matched {
        let closed = groups.pop().expect("the matched group is open");
        let current = groups.last_mut().expect("the top level is never closed");
        current.deepest_inner = current.deepest_inner.max(closed.element_depth() + BRACKET_LEVELS);
        ends_statement = closed.is_block && next != Some(&Token::Kw(Keyword::Else));
        if ends_statement {
            current.end_element();
        }
    }
    ends_statement && groups.len() == 1
}

/// Returns whether that ended a top-level statement.
fn end_element(groups: &mut [Group]) -> bool {
    if let Some(current) = groups.last_mut() {
        current.end_element();
    }
    groups.len() == 1
}

fn stop_at_statement(lexed: &mut Lexed, statement_start: usize, limit_reached: Span) {
    let stop = lexed.tokens[statement_start].1.start;
    lexed.errors.push(
        SyntaxError::new(
            limit_reached,
            format!("nested too deeply: more than {MAX_DEPTH} levels of brackets, operators or `else if`"),
            "the nesting limit is reached here",
        )
        .with_help(
            "syncguard reads the file only up to the statement that contains this: write it with \
             less nesting (`let` bindings for parts of a long expression, separate `if` statements \
             for a long `else if` chain); a bracket left unclosed above also nests everything \
             after it",
        ),
    );
    lexed.tokens.truncate(statement_start);
    lexed.comments.retain(|comment| comment.span.start < stop);
}
