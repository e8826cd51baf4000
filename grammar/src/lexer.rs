//! The lexer: source text to tokens. It never fails; a bad character, number or string
//! becomes an error plus a best-effort token so that parsing continues.

use std::borrow::Cow;
use std::fmt;

use crate::ast::{Comment, Span};
use crate::error::SyntaxError;

/// Names and strings are boxed rather than `String`s: a token is then 24 bytes, not 32,
/// which matters for files of millions of tokens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    Ident(Box<str>),
    Kw(Keyword),
    /// An integer literal: value and whether it was written in hex.
    Int(u64, bool),
    Str(Box<str>),
    Punct(Punct),
    /// Something the lexer could not make sense of (already reported).
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    Let,
    If,
    Else,
    For,
    While,
    Mut,
    In,
    Thread,
    Op,
    Attrs,
    SuperKernel,
    SubKernel,
    AiCore,
    Return,
    Ranks,
    Param,
    True,
    False,
    Null,
}

impl Keyword {
    const ALL: [(&'static str, Keyword); 20] = [
        ("let", Keyword::Let),
        ("if", Keyword::If),
        ("else", Keyword::Else),
        ("for", Keyword::For),
        ("while", Keyword::While),
        ("mut", Keyword::Mut),
        ("in", Keyword::In),
        ("thread", Keyword::Thread),
        ("op", Keyword::Op),
        ("attrs", Keyword::Attrs),
        ("superkernel", Keyword::SuperKernel),
        ("subkernel", Keyword::SubKernel),
        ("aicore", Keyword::AiCore),
        ("return", Keyword::Return),
        ("ranks", Keyword::Ranks),
        ("param", Keyword::Param),
        ("true", Keyword::True),
        ("false", Keyword::False),
        ("NULL", Keyword::Null),
        ("nullptr", Keyword::Null),
    ];

    /// The keyword spelled `word`, as in [`Keyword::ALL`]. A `match` rather than a search
    /// of the table: every word of the source goes through here.
    fn from_word(word: &str) -> Option<Keyword> {
        Some(match word {
            "let" => Keyword::Let,
            "if" => Keyword::If,
            "else" => Keyword::Else,
            "for" => Keyword::For,
            "while" => Keyword::While,
            "mut" => Keyword::Mut,
            "in" => Keyword::In,
            "thread" => Keyword::Thread,
            "op" => Keyword::Op,
            "attrs" => Keyword::Attrs,
            "superkernel" => Keyword::SuperKernel,
            "subkernel" => Keyword::SubKernel,
            "aicore" => Keyword::AiCore,
            "return" => Keyword::Return,
            "ranks" => Keyword::Ranks,
            "param" => Keyword::Param,
            "true" => Keyword::True,
            "false" => Keyword::False,
            "NULL" | "nullptr" => Keyword::Null,
            _ => return None,
        })
    }

    /// Whether `word` is a keyword, so that generated names can avoid it.
    pub fn is_keyword(word: &str) -> bool {
        Keyword::from_word(word).is_some()
    }

    pub fn as_str(self) -> &'static str {
        Keyword::ALL
            .iter()
            .find(|(_, kw)| *kw == self)
            .map(|(text, _)| *text)
            .unwrap_or("?")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    Assign,
    Comma,
    Semi,
    Colon,
    PathSep,
    Dot,
    DotDot,
    DotDotEq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    AmpAmp,
    Pipe,
    PipePipe,
    Bang,
    Caret,
    Shl,
    Shr,
    Question,
}

impl Punct {
    /// Operators of expressions (as opposed to brackets and separators).
    pub fn is_operator(self) -> bool {
        matches!(
            self,
            Punct::Lt
                | Punct::Gt
                | Punct::Le
                | Punct::Ge
                | Punct::EqEq
                | Punct::Ne
                | Punct::Plus
                | Punct::Minus
                | Punct::Star
                | Punct::Slash
                | Punct::Percent
                | Punct::Amp
                | Punct::AmpAmp
                | Punct::Pipe
                | Punct::PipePipe
                | Punct::Bang
                | Punct::Caret
                | Punct::Shl
                | Punct::Shr
                | Punct::Question
        )
    }

    /// Longest first, so that `..=` wins over `..` and `.`.
    const ALL: [(&'static str, Punct); 34] = [
        ("..=", Punct::DotDotEq),
        ("<<", Punct::Shl),
        (">>", Punct::Shr),
        ("..", Punct::DotDot),
        ("::", Punct::PathSep),
        ("<=", Punct::Le),
        (">=", Punct::Ge),
        ("==", Punct::EqEq),
        ("!=", Punct::Ne),
        ("&&", Punct::AmpAmp),
        ("||", Punct::PipePipe),
        ("(", Punct::LParen),
        (")", Punct::RParen),
        ("{", Punct::LBrace),
        ("}", Punct::RBrace),
        ("[", Punct::LBracket),
        ("]", Punct::RBracket),
        ("<", Punct::Lt),
        (">", Punct::Gt),
        ("=", Punct::Assign),
        (",", Punct::Comma),
        (";", Punct::Semi),
        (":", Punct::Colon),
        (".", Punct::Dot),
        ("+", Punct::Plus),
        ("-", Punct::Minus),
        ("*", Punct::Star),
        ("/", Punct::Slash),
        ("%", Punct::Percent),
        ("&", Punct::Amp),
        ("|", Punct::Pipe),
        ("!", Punct::Bang),
        ("^", Punct::Caret),
        ("?", Punct::Question),
    ];

    /// The punctuation `text` starts with and its length in bytes: the longest match in
    /// [`Punct::ALL`], found by a `match` rather than by trying every entry in turn.
    fn at_start(text: &str) -> Option<(Punct, usize)> {
        Some(match text.as_bytes() {
            [b'.', b'.', b'=', ..] => (Punct::DotDotEq, 3),
            [b'.', b'.', ..] => (Punct::DotDot, 2),
            [b':', b':', ..] => (Punct::PathSep, 2),
            [b'<', b'<', ..] => (Punct::Shl, 2),
            [b'>', b'>', ..] => (Punct::Shr, 2),
            [b'<', b'=', ..] => (Punct::Le, 2),
            [b'>', b'=', ..] => (Punct::Ge, 2),
            [b'=', b'=', ..] => (Punct::EqEq, 2),
            [b'!', b'=', ..] => (Punct::Ne, 2),
            [b'&', b'&', ..] => (Punct::AmpAmp, 2),
            [b'|', b'|', ..] => (Punct::PipePipe, 2),
            [b'(', ..] => (Punct::LParen, 1),
            [b')', ..] => (Punct::RParen, 1),
            [b'{', ..] => (Punct::LBrace, 1),
            [b'}', ..] => (Punct::RBrace, 1),
            [b'[', ..] => (Punct::LBracket, 1),
            [b']', ..] => (Punct::RBracket, 1),
            [b'<', ..] => (Punct::Lt, 1),
            [b'>', ..] => (Punct::Gt, 1),
            [b'=', ..] => (Punct::Assign, 1),
            [b',', ..] => (Punct::Comma, 1),
            [b';', ..] => (Punct::Semi, 1),
            [b':', ..] => (Punct::Colon, 1),
            [b'.', ..] => (Punct::Dot, 1),
            [b'+', ..] => (Punct::Plus, 1),
            [b'-', ..] => (Punct::Minus, 1),
            [b'*', ..] => (Punct::Star, 1),
            [b'/', ..] => (Punct::Slash, 1),
            [b'%', ..] => (Punct::Percent, 1),
            [b'&', ..] => (Punct::Amp, 1),
            [b'|', ..] => (Punct::Pipe, 1),
            [b'!', ..] => (Punct::Bang, 1),
            [b'^', ..] => (Punct::Caret, 1),
            [b'?', ..] => (Punct::Question, 1),
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        Punct::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map(|(text, _)| *text)
            .unwrap_or("?")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Token::Ident(name) => write!(f, "identifier `{name}`"),
            Token::Kw(kw) => write!(f, "keyword `{}`", kw.as_str()),
            Token::Int(value, _) => write!(f, "number `{value}`"),
            Token::Str(_) => write!(f, "string literal"),
            Token::Punct(p) => write!(f, "`{}`", p.as_str()),
            Token::Error => write!(f, "invalid token"),
        }
    }
}

/// Ascend product names that start with a digit, so would otherwise lex as bad numbers.
const PRODUCT_NAMES: [&str; 2] = ["310P", "310B"];

/// The lexer's output: tokens with byte spans, comments, and lexical errors.
#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<(Token, Span)>,
    pub comments: Vec<Comment>,
    pub errors: Vec<SyntaxError>,
}

/// Where each line after the first starts (`\n`, `\r\n` or a lone `\r`): the model's
/// definition, which spans and renderers share.
pub use syncguard_model::source::line_starts;

/// The lines of `text` without their line ends, for any of the three (see [`line_starts`]).
pub fn lines(text: &str) -> impl DoubleEndedIterator<Item = &str> {
    let starts: Vec<usize> = std::iter::once(0).chain(line_starts(text)).collect();
    (0..starts.len()).map(move |line| {
        let end = starts.get(line + 1).copied().unwrap_or(text.len());
        text[starts[line]..end].trim_end_matches(['\n', '\r'])
    })
}

/// Whether `text` has a line end of any kind in it.
pub fn has_line_end(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// The byte order mark some editors put at the start of a UTF-8 file.
const BYTE_ORDER_MARK: char = '\u{FEFF}';

pub fn lex(src: &str) -> Lexed {
    let mut lexer = Lexer {
        src,
        // Skipped rather than removed, so that spans stay offsets into `src`.
        pos: if src.starts_with(BYTE_ORDER_MARK) {
            BYTE_ORDER_MARK.len_utf8()
        } else {
            0
        },
        out: Lexed::default(),
    };
    lexer.run();
    lexer.out
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    out: Lexed,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek() {
            let start = self.pos;
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else if self.rest().starts_with("//") {
                self.line_comment(start);
            } else if self.rest().starts_with("/*") {
                self.block_comment(start);
            } else if c.is_ascii_digit() {
                self.number(start);
            } else if c == '"' {
                self.string(start);
            } else if c.is_alphabetic() || c == '_' {
                self.word(start);
            } else if let Some((punct, len)) = Punct::at_start(self.rest()) {
                self.pos += len;
                self.push(Token::Punct(punct), start);
            } else {
                self.unexpected_run(start);
            }
        }
    }

    /// A run of characters that start no token becomes one error, not one per byte.
    fn unexpected_run(&mut self, start: usize) {
        while let Some(c) = self.peek() {
            let starts_token = c.is_whitespace()
                || c.is_alphanumeric()
                || c == '_'
                || c == '"'
                || Punct::at_start(self.rest()).is_some();
            if starts_token && self.pos > start {
                break;
            }
            self.pos += c.len_utf8();
        }
        let text = &self.src[start..self.pos];
        let message = match text.chars().count() {
            1 => {
                let c = text.chars().next().unwrap_or_default();
                if c.is_control() {
                    format!("unexpected character {c:?}")
                } else {
                    format!("unexpected character `{c}`")
                }
            }
            n => format!("{n} unexpected characters"),
        };
        self.error(start, message, "not part of the .sync language");
        self.push(Token::Error, start);
    }

    fn push(&mut self, token: Token, start: usize) {
        self.out.tokens.push((token, start..self.pos));
    }

    fn error(&mut self, start: usize, message: String, label: &str) {
        self.out.errors.push(SyntaxError::new(start..self.pos, message, label));
    }

    fn line_comment(&mut self, start: usize) {
        let len = self.rest().find(['\n', '\r']).unwrap_or(self.rest().len());
        self.pos += len;
        self.comment(start);
    }

    fn block_comment(&mut self, start: usize) {
        match self.rest()[2..].find("*/") {
            Some(end) => self.pos += end + 4,
            None => {
                self.pos = self.src.len();
                self.error(
                    start,
                    "unterminated block comment".into(),
                    "this `/*` is never closed by `*/`",
                );
            }
        }
        self.comment(start);
    }

    fn comment(&mut self, start: usize) {
        let text = self.src[start..self.pos].trim_end().to_string();
        self.out.comments.push(Comment {
            text,
            span: start..self.pos,
        });
    }

    fn word(&mut self, start: usize) {
        let len = self
            .rest()
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(self.rest().len());
        self.pos += len;
        let word = &self.src[start..self.pos];
        let token = match Keyword::from_word(word) {
            Some(kw) => Token::Kw(kw),
            None => Token::Ident(word.into()),
        };
        self.push(token, start);
    }

    /// Decimal or `0x` hex, with `_` separators. A trailing letter run such as `12abc`
    /// is swallowed into the number so that the error covers the whole bad literal.
    /// Product names that start with a digit (`310P`) are names.
    fn number(&mut self, start: usize) {
        let len = self
            .rest()
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(self.rest().len());
        self.pos += len;
        let text = &self.src[start..self.pos];
        if PRODUCT_NAMES.contains(&text) {
            return self.push(Token::Ident(text.into()), start);
        }
        let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => (hex, 16),
            None => (text, 10),
        };
        let digits = if digits.contains('_') {
            Cow::Owned(digits.replace('_', ""))
        } else {
            Cow::Borrowed(digits)
        };
        match u64::from_str_radix(&digits, radix) {
            Ok(value) => self.push(Token::Int(value, radix == 16), start),
            Err(err) => {
                let why = match err.kind() {
                    std::num::IntErrorKind::PosOverflow => "does not fit in 64 bits",
                    std::num::IntErrorKind::Empty => "has no digits",
                    _ if radix == 16 => "is not a hexadecimal number",
                    _ => "is not a decimal number",
                };
                let message = format!("invalid number `{text}`");
                self.error(start, message, &format!("this literal {why}"));
                self.push(Token::Int(0, radix == 16), start);
            }
        }
    }

    fn string(&mut self, start: usize) {
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.unterminated_string(start, value);
            };
            if c == '\n' || c == '\r' {
                return self.unterminated_string(start, value);
            }
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let escape_start = self.pos - 1;
                    let Some(next) = self.peek().filter(|c| *c != '\n' && *c != '\r') else {
                        return self.unterminated_string(start, value);
                    };
                    self.pos += next.len_utf8();
                    match next {
                        'n' => value.push('\n'),
                        'r' => value.push('\r'),
                        't' => value.push('\t'),
                        '\\' | '"' => value.push(next),
                        other => {
                            self.error(
                                escape_start,
                                format!("unknown escape `\\{other}` in string"),
                                "only \\n, \\r, \\t, \\\\ and \\\" are escapes",
                            );
                            value.push(other);
                        }
                    }
                }
                _ => value.push(c),
            }
        }
        self.push(Token::Str(value.into()), start);
    }

    fn unterminated_string(&mut self, start: usize, value: String) {
        self.error(
            start,
            "unterminated string literal".into(),
            "this string has no closing `\"` on its line",
        );
        self.push(Token::Str(value.into()), start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token> {
        lex(src).tokens.into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn lexes_paths_ranges_and_generics() {
        let tokens = kinds("acl.rt.x AscendC::F<PIPE_V>() a[0..=4]");
        assert_eq!(tokens[1], Token::Punct(Punct::Dot));
        assert!(tokens.contains(&Token::Punct(Punct::PathSep)));
        assert!(tokens.contains(&Token::Punct(Punct::DotDotEq)));
    }

    #[test]
    fn numbers_hex_and_separators() {
        assert_eq!(kinds("0x1F 1_000"), vec![Token::Int(31, true), Token::Int(1000, false)]);
    }

    #[test]
    fn bad_number_is_one_error_and_a_token() {
        let lexed = lex("12abc;");
        assert_eq!(lexed.errors.len(), 1);
        assert_eq!(lexed.errors[0].span, 0..5);
        assert_eq!(lexed.tokens.len(), 2);
    }

    #[test]
    fn unterminated_string_stops_at_line_end() {
        let lexed = lex("f(\"abc\n);");
        assert_eq!(lexed.errors.len(), 1);
        assert_eq!(lexed.tokens.last().unwrap().0, Token::Punct(Punct::Semi));
    }

    #[test]
    fn punctuation_match_agrees_with_the_table() {
        // The longest entry of `Punct::ALL` that starts the text, as the lexer once searched.
        let by_table = |text: &str| {
            Punct::ALL
                .iter()
                .find(|(p, _)| text.starts_with(p))
                .map(|(p, punct)| (*punct, p.len()))
        };
        let chars: Vec<char> = "()[]{}<>=!&|.:;,+-*/%_a0 \"\n".chars().collect();
        for a in &chars {
            for b in &chars {
                for c in &chars {
                    let text: String = [a, b, c].into_iter().collect();
                    assert_eq!(Punct::at_start(&text), by_table(&text), "{text:?}");
                }
            }
        }
        assert_eq!(Punct::at_start(""), None);
    }

    #[test]
    fn keyword_match_agrees_with_the_table() {
        for (text, kw) in Keyword::ALL {
            assert_eq!(Keyword::from_word(text), Some(kw));
        }
        for word in ["lets", "If", "null", "kernel", "s1", "", "truee"] {
            assert_eq!(Keyword::from_word(word), None, "{word}");
        }
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn tokens_stay_small() {
        assert_eq!(std::mem::size_of::<Token>(), 24);
    }

    #[test]
    fn comments_are_kept() {
        let lexed = lex("a; // one\n/* two */ b;");
        assert_eq!(lexed.comments.len(), 2);
        assert_eq!(lexed.comments[0].text, "// one");
    }
}
