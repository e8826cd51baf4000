//! The token parser (chumsky 0.12). It recovers at statement and block level, so the
//! result is always a `File`: statements that did not parse become `StmtKind::Error`
//! and every problem is a `SyntaxError`.

use std::borrow::Cow;

use chumsky::error::{EmptyErr, LabelError};
use chumsky::input::{BorrowInput, Input, ValueInput};
use chumsky::prelude::*;

use crate::ast::*;
use crate::error::SyntaxError;
use crate::lexer::{Keyword, Punct, Token};

/// The parser's input: the lexer's tokens, by value or by reference, with byte spans.
trait TokenInput<'t>: ValueInput<'t, Token = Token, Span = SimpleSpan> + BorrowInput<'t> {}

impl<'t, I> TokenInput<'t> for I where I: ValueInput<'t, Token = Token, Span = SimpleSpan> + BorrowInput<'t> {}

type Extra<E> = extra::Err<E>;

/// The error types the grammar is built for. Building chumsky's `Rich` errors (expected
/// tokens, labels, contexts) for every alternative that fails costs most of the parse
/// time, even in files without a single error, so [`parse_tokens`] first parses with
/// `EmptyErr`, which only records that something failed, and parses again with `Rich`
/// for the messages only when that pass reports an error.
trait GrammarError<'t, I: Input<'t>>: chumsky::error::Error<'t, I> + LabelError<'t, I, &'static str> + 't {
    /// An error with our own message, as `Rich::custom` makes it.
    fn custom(span: I::Span, message: String) -> Self;
}

impl<'t, I> GrammarError<'t, I> for Rich<'t, Token, SimpleSpan>
where
    I: Input<'t, Token = Token, Span = SimpleSpan>,
{
    fn custom(span: SimpleSpan, message: String) -> Self {
        Rich::custom(span, message)
    }
}

impl<'t, I: Input<'t>> GrammarError<'t, I> for EmptyErr {
    /// The message is dropped: the `Rich` pass that follows will make it again.
    fn custom(_: I::Span, _: String) -> Self {
        EmptyErr::default()
    }
}

/// Setting keys: identifiers that start a `key value;` statement at the top level.
pub const SETTING_KEYS: [&str; 4] = ["target", "cann", "hccl_buffer_size", "default_stream"];

pub(crate) fn parse_tokens(tokens: Vec<(Token, Span)>, src: &str) -> (File, Vec<SyntaxError>) {
    let src_len = src.len();
    // Same layout, so this reuses the token vector's memory instead of copying it.
    let tokens: Vec<(Token, SimpleSpan)> = tokens
        .into_iter()
        .map(|(token, span)| (token, SimpleSpan::from(span)))
        .collect();
    let eoi = SimpleSpan::from(src_len..src_len);
    let input = || tokens.as_slice().map(eoi, |(t, s)| (t, s));
    // The fast pass (see `GrammarError`). Recovered errors are reported too, so `Ok` means
    // that the input has no syntax error and that the tree is the one `Rich` would give.
    if let Ok(file) = file_parser::<_, EmptyErr>().parse(input()).into_result() {
        return (file, Vec::new());
    }
    let (file, errors) = file_parser::<_, Rich<'_, Token, SimpleSpan>>()
        .parse(input())
        .into_output_errors();
    let errors = errors
        .into_iter()
        .map(convert_error)
        .map(|error| place_missing_semicolon(error, &tokens, src))
        .collect();
    (file.unwrap_or_default(), errors)
}

/// "expected `;`" is reported where the `;` belongs: right after the previous token,
/// not at the start of the next line.
fn place_missing_semicolon(mut error: SyntaxError, tokens: &[(Token, SimpleSpan)], src: &str) -> SyntaxError {
    if !error.message.starts_with("expected `;`,") {
        return error;
    }
    let previous = tokens.iter().rev().find(|(_, span)| span.end <= error.span.start);
    if let Some((_, previous)) = previous
        && src
            .get(previous.end..error.span.start)
            .is_some_and(crate::lexer::has_line_end)
    {
        error.span = previous.end..previous.end;
        error.message = "expected `;` after this statement".into();
        error.label = "add `;` here".into();
    }
    error
}

fn punct<'t, I, E>(p: Punct) -> impl Parser<'t, I, Token, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    just(Token::Punct(p))
}

fn kw<'t, I, E>(k: Keyword) -> impl Parser<'t, I, Token, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    just(Token::Kw(k))
}

/// A name borrowed from its token. Parsers that often fail after their first word (a
/// call's callee, an argument's optional `name:`, `word name;`) keep names in this form,
/// so that a failed attempt costs no copy.
#[derive(Clone, Copy)]
struct Word<'t> {
    text: &'t str,
    span: SimpleSpan,
}

impl Word<'_> {
    fn into_ident(self) -> Ident {
        Ident {
            name: self.text.to_string(),
            span: span_of(self.span),
        }
    }
}

fn word<'t, I, E>() -> impl Parser<'t, I, Word<'t>, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    select_ref! { Token::Ident(name) => &**name }
        .map_with(|text, e| Word { text, span: e.span() })
        .labelled("identifier")
}

fn ident<'t, I, E>() -> impl Parser<'t, I, Ident, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    word().map(Word::into_ident)
}

/// An op's type or attribute name. These name GE prototype entries, not `.sync`
/// objects, so a word that is a `.sync` keyword (an attribute called `ranks`) is a
/// name here. `NULL` is not: it has two spellings, and the name must read back as written.
fn op_name<'t, I, E>() -> impl Parser<'t, I, Ident, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let keyword = select_ref! { Token::Kw(k) if *k != Keyword::Null => k.as_str() }.map_with(|text, e| Ident {
        name: text.to_string(),
        span: span_of(e.span()),
    });
    ident().or(keyword).labelled("identifier")
}

/// Drops a collected vector's spare capacity. Most vectors in a syntax tree are short
/// (a call's arguments, a one-element list), and growing them leaves room for four.
fn tight<T>(mut items: Vec<T>) -> Vec<T> {
    items.shrink_to_fit();
    items
}

fn span_of(span: SimpleSpan) -> Span {
    span.into_range()
}

/// A [`Path`] whose text stays borrowed while it is a single word (see [`Word`]).
struct PathText<'t> {
    text: Cow<'t, str>,
    span: Span,
}

impl PathText<'_> {
    fn into_path(self) -> Path {
        Path {
            text: self.text.into_owned(),
            span: self.span,
        }
    }
}

/// `a`, `acl.rt.record_event`, `AscendC::SetNextTaskStart`.
fn path<'t, I, E>() -> impl Parser<'t, I, PathText<'t>, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let sep = punct(Punct::Dot).to(".").or(punct(Punct::PathSep).to("::"));
    word()
        .map(|first| PathText {
            text: Cow::Borrowed(first.text),
            span: span_of(first.span),
        })
        .foldl(sep.then(word()).repeated(), |acc, (sep, next)| {
            let mut text = acc.text.into_owned();
            text.push_str(sep);
            text.push_str(next.text);
            PathText {
                text: Cow::Owned(text),
                span: acc.span.start..next.span.end,
            }
        })
        .labelled("name")
}

fn closing<'t, I, E>(p: Punct) -> impl Parser<'t, I, (), Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    // A missing closer at the very end of the file is reported and treated as present,
    // so that everything parsed before it is kept.
    punct(p).ignored().recover_with(via_parser(end()))
}

type BoxedExpr<'t, I, E> = chumsky::Boxed<'t, 't, I, Expr, Extra<E>>;

/// Expressions, struct literals allowed everywhere.
fn expr_parser<'t, I, E>() -> impl Parser<'t, I, Expr, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    recursive(|expr| {
        let nested = expr.boxed();
        operator_levels(atom_parser(nested.clone(), true), nested)
    })
}

/// A condition or loop range: at its outermost level a `{` never starts a struct literal,
/// so that `if x == { ... }` reports the missing operand, and `if c {` finds its block.
/// Inside brackets and calls the full grammar applies again.
fn condition_parser<'t, I, E>() -> impl Parser<'t, I, Expr, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let nested: BoxedExpr<'t, I, E> = expr_parser().boxed();
    operator_levels(atom_parser(nested.clone(), false), nested)
}

/// Literals, names, calls, lists, struct literals and parenthesised expressions.
/// `nested` parses the expressions inside them.
fn atom_parser<'t, I, E>(nested: BoxedExpr<'t, I, E>, allow_struct: bool) -> BoxedExpr<'t, I, E>
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let unit = select_ref! { Token::Ident(name) if SizeUnit::from_name(name).is_some() => name }
        .map(|name| SizeUnit::from_name(name).unwrap_or(SizeUnit::B));
    let int = select_ref! { Token::Int(value, hex) => (*value, *hex) }
        .then(unit.or_not())
        .map(|((value, hex), unit)| ExprKind::Int(IntLit { value, hex, unit }));
    let literal = int
        .or(select_ref! { Token::Str(text) => ExprKind::Str(text.to_string()) })
        .or(kw(Keyword::True).to(ExprKind::Bool(true)))
        .or(kw(Keyword::False).to(ExprKind::Bool(false)))
        .or(kw(Keyword::Null).to(ExprKind::Null))
        .or(select_ref! { Token::Error => ExprKind::Error });

    let call = call_parser(nested.clone()).map(|call| ExprKind::Call(Box::new(call)));

    // `[a, b]` or `[item for var in lo..hi]`: one parse of the first item, so that
    // nested lists are never read twice.
    let list_rest = kw(Keyword::For)
        .ignore_then(ident())
        .then_ignore(kw(Keyword::In))
        .then(range_parser(nested.clone()))
        .map(ListRest::For)
        .or(punct(Punct::Comma)
            .ignore_then(
                nested
                    .clone()
                    .separated_by(punct(Punct::Comma))
                    .allow_trailing()
                    .collect(),
            )
            .map(ListRest::More))
        .or(empty().to(ListRest::More(Vec::new())));
    let list = nested
        .clone()
        .then(list_rest)
        .or_not()
        .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket))
        .map(|list| match list {
            None => ExprKind::List(Vec::new()),
            Some((item, ListRest::For((var, range)))) => ExprKind::ListFor(Box::new(ListFor { item, var, range })),
            Some((first, ListRest::More(rest))) => {
                let mut items = Vec::with_capacity(rest.len() + 1);
                items.push(first);
                items.extend(rest);
                ExprKind::List(items)
            }
        });

    let field = ident()
        .then_ignore(punct(Punct::Colon))
        .then(nested.clone())
        .map(|(name, value)| Field { name, value });
    // Gate before the `{` is consumed, so a condition never tries a struct literal.
    let struct_allowed = empty().try_map(move |_, span| {
        if allow_struct {
            Ok(())
        } else {
            Err(E::custom(span, "a struct literal is not allowed here".into()))
        }
    });
    let strukt = struct_allowed
        .ignore_then(
            field
                .separated_by(punct(Punct::Comma))
                .allow_trailing()
                .collect::<Vec<_>>()
                .map(tight)
                .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace)),
        )
        .map(ExprKind::Struct)
        .labelled("struct literal");

    literal
        .or(call)
        .or(path().map(|path| ExprKind::Name(path.into_path())))
        .or(list)
        .or(strukt)
        .map_with(|kind, e| Expr {
            kind,
            span: span_of(e.span()),
        })
        .or(nested.delimited_by(punct(Punct::LParen), punct(Punct::RParen)))
        .recover_with(via_parser(nested_delimiters(
            Token::Punct(Punct::LParen),
            Token::Punct(Punct::RParen),
            [(Token::Punct(Punct::LBracket), Token::Punct(Punct::RBracket))],
            |span| Expr {
                kind: ExprKind::Error,
                span: span_of(span),
            },
        )))
        .boxed()
}

enum Postfix {
    Slice(RangeExpr),
    Index(Expr),
}

/// What follows a list's first item.
#[derive(Clone)]
enum ListRest {
    For((Ident, RangeExpr)),
    More(Vec<Expr>),
}

/// Slices, indexing, unary and binary operators over `atom`, by precedence.
fn operator_levels<'t, I, E>(atom: BoxedExpr<'t, I, E>, nested: BoxedExpr<'t, I, E>) -> BoxedExpr<'t, I, E>
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    // `buf[lo..hi]` is a slice, `handles[i]` an index: one parse of what follows `[`,
    // so that nested brackets are never read twice.
    let postfix = nested
        .clone()
        .then(range_tail(nested.clone()).or_not())
        .map_with(|(start, tail), e| match tail {
            None => Postfix::Index(start),
            Some((end, inclusive)) => Postfix::Slice(RangeExpr {
                start: Box::new(start),
                end: end.map(Box::new),
                inclusive,
                span: span_of(e.span()),
            }),
        })
        .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket));
    let slice = atom.foldl_with(postfix.repeated(), |base, postfix, e| Expr {
        kind: match postfix {
            Postfix::Slice(range) => ExprKind::Slice {
                base: Box::new(base),
                range,
            },
            Postfix::Index(index) => ExprKind::Index {
                base: Box::new(base),
                index: Box::new(index),
            },
        },
        span: span_of(e.span()),
    });

    let unary_op = punct(Punct::Minus)
        .to(UnaryOp::Neg)
        .or(punct(Punct::Bang).to(UnaryOp::Not));
    let unary = unary_op
        .map_with(|op, e| (op, span_of(e.span())))
        .repeated()
        .foldr(slice, |(op, span), operand| Expr {
            span: span.start..operand.span.end,
            kind: ExprKind::Unary(op, Box::new(operand)),
        })
        .labelled("expression")
        .boxed();

    let level = |ops: &'static [(Punct, BinaryOp)], operand: BoxedExpr<'t, I, E>| {
        // One `just` per operator: errors expect the same tokens as `one_of` would, but
        // `one_of` clones the token and searches a list on every attempt.
        let op = choice(ops.iter().map(|&(p, op)| punct(p).to(op)).collect::<Vec<_>>());
        operand
            .clone()
            .foldl(op.then(operand).repeated(), |lhs, (op, rhs)| Expr {
                span: lhs.span.start..rhs.span.end,
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            })
            .boxed()
    };
    let product = level(
        &[
            (Punct::Star, BinaryOp::Mul),
            (Punct::Slash, BinaryOp::Div),
            (Punct::Percent, BinaryOp::Rem),
        ],
        unary,
    );
    let sum = level(&[(Punct::Plus, BinaryOp::Add), (Punct::Minus, BinaryOp::Sub)], product);
    let shift = level(&[(Punct::Shl, BinaryOp::Shl), (Punct::Shr, BinaryOp::Shr)], sum);
    let bit_and = level(&[(Punct::Amp, BinaryOp::BitAnd)], shift);
    let bit_xor = level(&[(Punct::Caret, BinaryOp::BitXor)], bit_and);
    let bit_or = level(&[(Punct::Pipe, BinaryOp::BitOr)], bit_xor);
    let compare = level(
        &[
            (Punct::EqEq, BinaryOp::Eq),
            (Punct::Ne, BinaryOp::Ne),
            (Punct::Le, BinaryOp::Le),
            (Punct::Ge, BinaryOp::Ge),
            (Punct::Lt, BinaryOp::Lt),
            (Punct::Gt, BinaryOp::Gt),
        ],
        bit_or,
    );
    let and = level(&[(Punct::AmpAmp, BinaryOp::And)], compare);
    let or = level(&[(Punct::PipePipe, BinaryOp::Or)], and);
    // `c ? a : b`, right-associative: the `else` value is a whole expression again.
    let branches = punct(Punct::Question)
        .ignore_then(nested.clone())
        .then_ignore(punct(Punct::Colon))
        .then(nested);
    or.then(branches.or_not())
        .map(|(cond, branches)| match branches {
            None => cond,
            Some((then, otherwise)) => Expr {
                span: cond.span.start..otherwise.span.end,
                kind: ExprKind::Cond {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise: Box::new(otherwise),
                },
            },
        })
        .labelled("expression")
        .boxed()
}

/// `lo..hi`, `lo..=hi`, `lo..`
fn range_parser<'t, I, E>(
    expr: impl Parser<'t, I, Expr, Extra<E>> + Clone + 't,
) -> impl Parser<'t, I, RangeExpr, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    expr.clone()
        .then(range_tail(expr))
        .map_with(|(start, (end, inclusive)), e| RangeExpr {
            start: Box::new(start),
            end: end.map(Box::new),
            inclusive,
            span: span_of(e.span()),
        })
        .labelled("range")
}

/// What follows a range's start: `..=hi`, `..hi` or `..`; the end and whether it is
/// included.
fn range_tail<'t, I, E>(
    expr: impl Parser<'t, I, Expr, Extra<E>> + Clone + 't,
) -> impl Parser<'t, I, (Option<Expr>, bool), Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let inclusive = punct(Punct::DotDotEq)
        .ignore_then(expr.clone())
        .map(|end| (Some(end), true));
    let exclusive = punct(Punct::DotDot).ignore_then(expr.or_not()).map(|end| (end, false));
    inclusive.or(exclusive)
}

/// `callee<generics>(args)`; generics are simple names, numbers or booleans.
fn call_parser<'t, I, E>(
    expr: impl Parser<'t, I, Expr, Extra<E>> + Clone + 't,
) -> impl Parser<'t, I, Call, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let generic_arg = path()
        .map(|path| ExprKind::Name(path.into_path()))
        .or(select_ref! { Token::Int(value, hex) => ExprKind::Int(IntLit { value: *value, hex: *hex, unit: None }) })
        .or(kw(Keyword::True).to(ExprKind::Bool(true)))
        .or(kw(Keyword::False).to(ExprKind::Bool(false)))
        .map_with(|kind, e| Expr {
            kind,
            span: span_of(e.span()),
        });
    let generics = generic_arg
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .map(tight)
        .delimited_by(punct(Punct::Lt), punct(Punct::Gt));
    // Every C parameter name may name an argument, also one that is a `.sync` keyword
    // (`HcommThreadSynchronize(thread: t)`).
    let keyword = select_ref! { Token::Kw(k) if *k != Keyword::Null => k.as_str() }
        .map_with(|text, e| Word { text, span: e.span() });
    let arg = word()
        .or(keyword)
        .then_ignore(punct(Punct::Colon))
        .or_not()
        .then(expr)
        .map(|(name, value)| Arg {
            name: name.map(Word::into_ident),
            value,
        });
    let args = arg
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .map(tight)
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
        .labelled("argument list");
    path()
        .then(generics.or_not())
        .then(args)
        .map_with(|((callee, generics), args), e| Call {
            callee: callee.into_path(),
            generics,
            args,
            span: span_of(e.span()),
        })
        .labelled("call")
        .boxed()
}

fn file_parser<'t, I, E>() -> impl Parser<'t, I, File, Extra<E>>
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let stmt = stmt_parser();
    // At the top level even a stray `}` is skipped, so parsing always reaches the end.
    let stray = any()
        .map_with(|_, e| Stmt {
            kind: StmtKind::Error,
            span: span_of(e.span()),
        })
        .validate(|stmt, e, emitter| {
            emitter.emit(E::custom(e.span(), "unexpected closing `}`".into()));
            stmt
        });
    stmt.or(stray)
        .repeated()
        .collect::<Vec<_>>()
        .map(tight)
        .then_ignore(end())
        .map(|stmts| File { stmts })
}

fn stmt_parser<'t, I, E>() -> impl Parser<'t, I, Stmt, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    recursive(|stmt| {
        let expr = expr_parser();
        let condition = condition_parser();
        // A missing `;` before something that clearly starts the next statement is
        // reported and assumed, so that the next statement is not swallowed.
        let next_statement = choice((
            kw(Keyword::Let).ignored(),
            kw(Keyword::If).ignored(),
            kw(Keyword::For).ignored(),
            kw(Keyword::While).ignored(),
            kw(Keyword::Thread).ignored(),
            kw(Keyword::Op).ignored(),
            kw(Keyword::SuperKernel).ignored(),
            kw(Keyword::SubKernel).ignored(),
            kw(Keyword::AiCore).ignored(),
            kw(Keyword::Return).ignored(),
            punct(Punct::RBrace).ignored(),
            ident()
                .then(choice((
                    punct(Punct::LParen),
                    punct(Punct::Dot),
                    punct(Punct::PathSep),
                    punct(Punct::Assign),
                )))
                .ignored(),
        ));
        let semi = punct(Punct::Semi)
            .ignored()
            .recover_with(via_parser(empty().and_is(next_statement)));

        // A recursion point of its own: chumsky grows the stack at each one when little
        // is left, and a statement's parse down to its block needs much of it in debug
        // builds.
        let block = recursive(|_| {
            punct(Punct::LBrace)
                .ignore_then(stmt.clone().repeated().collect::<Vec<_>>().map(tight))
                .then_ignore(closing(Punct::RBrace))
                .map_with(|stmts, e| Block {
                    stmts,
                    span: span_of(e.span()),
                })
        })
        .labelled("block");

        let pattern = ident().map(Pattern::Name).or(ident()
            .separated_by(punct(Punct::Comma))
            .allow_trailing()
            .at_least(1)
            .collect::<Vec<_>>()
            .map(tight)
            .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket))
            .map_with(|names, e| Pattern::List(names, span_of(e.span()))));
        let let_mut = kw(Keyword::Mut)
            .ignore_then(ident())
            .then_ignore(punct(Punct::Assign))
            .then(expr.clone())
            .map(|(name, value)| StmtKind::LetMut { name, value });
        let let_stmt = kw(Keyword::Let)
            .ignore_then(
                let_mut.or(pattern
                    .then_ignore(punct(Punct::Assign))
                    .then(expr.clone())
                    .map(|(pattern, value)| StmtKind::Let { pattern, value })),
            )
            .then_ignore(semi.clone())
            .labelled("let binding")
            .as_context();

        let assign = ident()
            .then_ignore(punct(Punct::Assign))
            .then(expr.clone())
            .then_ignore(semi.clone())
            .map(|(name, value)| StmtKind::Assign { name, value })
            .labelled("assignment")
            .as_context();

        let call_stmt = call_parser(expr.clone())
            .then_ignore(semi.clone())
            .map(StmtKind::Call)
            .labelled("call")
            .as_context();

        let if_stmt = recursive(|if_stmt| {
            kw(Keyword::If)
                .ignore_then(condition.clone())
                .then(block.clone())
                .then(
                    kw(Keyword::Else)
                        .ignore_then(
                            if_stmt
                                .map_with(|kind, e| {
                                    Else::If(Box::new(Stmt {
                                        kind,
                                        span: span_of(e.span()),
                                    }))
                                })
                                .or(block.clone().map(Else::Block)),
                        )
                        .or_not(),
                )
                .map(|((cond, then), otherwise)| StmtKind::If { cond, then, otherwise })
        })
        .labelled("if statement")
        .as_context();

        let range = range_parser(condition.clone()).boxed();
        let for_stmt = kw(Keyword::For)
            .ignore_then(ident())
            .then_ignore(kw(Keyword::In))
            .then(range.clone())
            .then(block.clone())
            .map(|((var, range), body)| StmtKind::For { var, range, body })
            .labelled("for loop")
            .as_context()
            .boxed();

        let while_stmt = kw(Keyword::While)
            .ignore_then(condition.clone())
            .then(block.clone())
            .map(|(cond, body)| StmtKind::While { cond, body })
            .labelled("while loop")
            .as_context();

        let thread = kw(Keyword::Thread)
            .ignore_then(ident())
            .then(block.clone())
            .map(|(name, body)| StmtKind::Thread { name, body })
            .labelled("thread")
            .as_context();

        let attrs = kw(Keyword::Attrs).ignore_then(
            op_name()
                .separated_by(punct(Punct::Comma))
                .allow_trailing()
                .collect::<Vec<_>>()
                .map(tight)
                .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
        );
        let ge_op = kw(Keyword::Op)
            .ignore_then(op_name())
            .then(attrs.or_not())
            .then(block.clone())
            .map(|((name, attrs), body)| StmtKind::GeOp {
                name,
                attrs: attrs.unwrap_or_default(),
                body,
            })
            .labelled("op")
            .as_context();

        let named_args = word()
            .then_ignore(punct(Punct::Colon))
            .or_not()
            .then(expr.clone())
            .map(|(name, value)| Arg {
                name: name.map(Word::into_ident),
                value,
            })
            .separated_by(punct(Punct::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(tight)
            .delimited_by(punct(Punct::LParen), punct(Punct::RParen));
        let superkernel = kw(Keyword::SuperKernel)
            .ignore_then(ident())
            .then(named_args.clone())
            .then(block.clone())
            .map(|((name, args), body)| StmtKind::SuperKernel { name, args, body })
            .labelled("superkernel")
            .as_context();
        let subkernel = kw(Keyword::SubKernel)
            .ignore_then(ident())
            .then(named_args.clone().or_not())
            .then(block.clone())
            .map(|((name, args), body)| StmtKind::SubKernel {
                name,
                args: args.unwrap_or_default(),
                body,
            })
            .labelled("subkernel")
            .as_context();
        let aicore = kw(Keyword::AiCore)
            .ignore_then(ident())
            .then(named_args.clone())
            .then(block.clone())
            .map(|((name, args), body)| StmtKind::AiCore { name, args, body })
            .labelled("aicore")
            .as_context();

        let ret = kw(Keyword::Return).then(semi.clone()).to(StmtKind::Return);

        let ranks = kw(Keyword::Ranks)
            .ignore_then(
                ident()
                    .then_ignore(kw(Keyword::In))
                    .then(range.clone())
                    .map(|(name, range)| RankCount::Param { name, range })
                    .or(expr.clone().map(RankCount::Fixed)),
            )
            .then_ignore(semi.clone())
            .map(StmtKind::Ranks)
            .labelled("ranks declaration")
            .as_context();
        let param = kw(Keyword::Param)
            .ignore_then(ident())
            .then_ignore(kw(Keyword::In))
            .then(range)
            .then_ignore(semi.clone())
            .map(|(name, range)| StmtKind::Param { name, range })
            .labelled("param declaration")
            .as_context();
        let setting_key = select_ref! { Token::Ident(name) if SETTING_KEYS.contains(&&**name) => name.to_string() }
            .map_with(|name, e| Ident {
                name,
                span: span_of(e.span()),
            });
        let setting = setting_key
            .then(expr.clone())
            .then_ignore(semi.clone())
            .map(|(key, value)| StmtKind::Setting { key, value })
            .labelled("setting")
            .as_context();

        // `stream s2;`, `event e;`: declarations as other DSLs write them.
        let foreign_declaration = word()
            .then(word())
            .then_ignore(none_of([Token::Punct(Punct::Semi), Token::Punct(Punct::RBrace)]).repeated())
            .then_ignore(semi.clone())
            .validate(|(word, name), e, emitter| {
                emitter.emit(E::custom(
                    e.span(),
                    format!(
                        "`{} {}` is not a statement: statements are API calls, and objects are created with `let {} = ...;` (e.g. `let {} = aclrtCreateStream();`)",
                        word.text, name.text, name.text, name.text
                    ),
                ));
                StmtKind::Error
            });

        let statement = choice((
            let_stmt,
            if_stmt,
            for_stmt,
            while_stmt,
            thread,
            ge_op,
            superkernel,
            subkernel,
            aicore,
            ret,
            ranks,
            param,
            setting,
            foreign_declaration,
            call_stmt,
            assign,
        ))
        .map_with(|kind, e| Stmt {
            kind,
            span: span_of(e.span()),
        })
        .labelled("statement");

        statement.recover_with(via_parser(statement_recovery()))
    })
}

/// Skip to the end of the broken statement: up to and including `;`, over balanced
/// `{...}` groups, and never past the `}` that closes the enclosing block.
fn statement_recovery<'t, I, E>() -> impl Parser<'t, I, Stmt, Extra<E>> + Clone
where
    I: TokenInput<'t>,
    E: GrammarError<'t, I>,
{
    let braced = nested_delimiters(
        Token::Punct(Punct::LBrace),
        Token::Punct(Punct::RBrace),
        [
            (Token::Punct(Punct::LParen), Token::Punct(Punct::RParen)),
            (Token::Punct(Punct::LBracket), Token::Punct(Punct::RBracket)),
        ],
        |_| (),
    );
    let other = none_of([
        Token::Punct(Punct::Semi),
        Token::Punct(Punct::LBrace),
        Token::Punct(Punct::RBrace),
    ])
    .ignored();
    let ends_with_block = braced.clone().ignored();
    other
        .or(braced)
        .repeated()
        .at_least(1)
        .then(punct(Punct::Semi).ignored().or_not())
        .ignored()
        .or(punct(Punct::Semi).ignored())
        .or(ends_with_block)
        .map_with(|_, e| Stmt {
            kind: StmtKind::Error,
            span: span_of(e.span()),
        })
}

fn convert_error(error: Rich<'_, Token, SimpleSpan>) -> SyntaxError {
    let span = span_of(*error.span());
    let contexts = error
        .contexts()
        .map(|(pattern, span)| (pattern_text(pattern), span_of(*span)))
        .collect();
    let (message, label, help) = match error.reason() {
        chumsky::error::RichReason::Custom(message) => (message.clone(), String::new(), None),
        chumsky::error::RichReason::ExpectedFound { expected, found } => {
            let found_text = found.as_ref().map_or("end of input".to_string(), |tok| tok.to_string());
            let expected_text = expected_list(expected);
            let wants_name = expected_text.contains("identifier");
            let help = found.as_ref().filter(|_| wants_name).and_then(|tok| hint_for(tok));
            (
                format!("expected {expected_text}, found {found_text}"),
                format!("unexpected {found_text}"),
                help,
            )
        }
    };
    SyntaxError {
        span,
        message,
        label,
        contexts,
        help,
    }
}

fn pattern_text(pattern: &chumsky::error::RichPattern<'_, Token>) -> String {
    use chumsky::error::RichPattern;
    match pattern {
        RichPattern::Token(tok) => tok.to_string(),
        RichPattern::Label(label) => label.to_string(),
        RichPattern::Identifier(name) => format!("`{name}`"),
        RichPattern::Any => "any token".into(),
        RichPattern::SomethingElse => "something else".into(),
        RichPattern::EndOfInput => "end of input".into(),
        _ => "something else".into(),
    }
}

/// Tokens that end or separate something. When one of them would have fitted, the
/// user almost always forgot it, so the message names only these (`expected `,` or `)``)
/// rather than every operator that could also have continued the expression.
const CLOSERS: [Punct; 5] = [Punct::Comma, Punct::Semi, Punct::RParen, Punct::RBracket, Punct::RBrace];

/// "a, b or c", sorted and deduplicated so that messages are deterministic.
fn expected_list(expected: &[chumsky::error::RichPattern<'_, Token>]) -> String {
    use chumsky::error::RichPattern;
    let is_closer = |p: &RichPattern<'_, Token>| matches!(p, RichPattern::Token(tok) if matches!(&**tok, Token::Punct(p) if CLOSERS.contains(p)));
    let closers: Vec<_> = expected.iter().filter(|p| is_closer(p)).collect();
    let chosen: Vec<&RichPattern<'_, Token>> = if closers.is_empty() {
        expected.iter().collect()
    } else {
        closers
    };
    let mut items: Vec<String> = chosen.into_iter().map(pattern_text).collect();
    items.sort();
    items.dedup();
    match items.as_slice() {
        [] => "something else".into(),
        [one] => one.clone(),
        [init @ .., last] if items.len() <= 8 => format!("{} or {last}", init.join(", ")),
        // Too many to list: name the construct the user is in the middle of.
        _ if items.iter().any(|item| item == "expression") => "an expression".into(),
        _ => "a statement".into(),
    }
}

fn hint_for(token: &Token) -> Option<String> {
    match token {
        Token::Kw(kw) => Some(format!(
            "`{}` is a keyword of the .sync language and cannot be used as a name here",
            kw.as_str()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `src` with both error types, as [`parse_tokens`] would, and checks that the
    /// fast pass alone decides correctly whether the `Rich` pass is needed: it reports an
    /// error whenever the `Rich` pass does, and when neither does, their trees are equal.
    /// Returns whether the `Rich` pass reported errors.
    fn check_both_passes(src: &str, what: &str) -> bool {
        let tokens: Vec<(Token, SimpleSpan)> = crate::lexer::lex(src)
            .tokens
            .into_iter()
            .map(|(token, span)| (token, SimpleSpan::from(span)))
            .collect();
        let eoi = SimpleSpan::from(src.len()..src.len());
        let input = || tokens.as_slice().map(eoi, |(t, s)| (t, s));
        let (cheap_file, cheap_errors) = file_parser::<_, EmptyErr>().parse(input()).into_output_errors();
        let (rich_file, rich_errors) = file_parser::<_, Rich<'_, Token, SimpleSpan>>()
            .parse(input())
            .into_output_errors();
        let cheap_clean = cheap_errors.is_empty() && cheap_file.is_some();
        let rich_clean = rich_errors.is_empty() && rich_file.is_some();
        assert_eq!(
            cheap_clean,
            rich_clean,
            "{what}: the fast pass reports {} errors, the rich pass {rich_errors:?}",
            cheap_errors.len()
        );
        if rich_clean {
            assert_eq!(cheap_file, rich_file, "{what}");
        }
        !rich_errors.is_empty()
    }

    fn malformed_sources() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/malformed");
        let mut sources: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "sync"))
            .map(|path| {
                let bytes = std::fs::read(&path).unwrap();
                (path.display().to_string(), String::from_utf8_lossy(&bytes).into_owned())
            })
            .collect();
        sources.sort();
        assert!(!sources.is_empty(), "no .sync files in {}", dir.display());
        sources
    }

    #[test]
    fn the_fast_pass_fails_on_every_malformed_file_that_has_syntax_errors() {
        let mut with_errors = 0;
        for (name, src) in malformed_sources() {
            with_errors += usize::from(check_both_passes(&src, &name));
        }
        assert!(with_errors >= 5, "only {with_errors} malformed files have parse errors");
    }

    #[test]
    fn the_fast_pass_fails_whenever_the_rich_pass_does_with_any_token_removed() {
        for (name, src) in malformed_sources() {
            for (_, span) in crate::lexer::lex(&src).tokens {
                let mut text = src.clone();
                text.replace_range(span.clone(), "");
                check_both_passes(&text, &format!("{name} without {span:?}"));
            }
        }
    }
}
