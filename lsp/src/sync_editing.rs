//! Editing `.sync` programs: formatting, names (definition, references, symbols),
//! semantic tokens and completion of API calls. Read from the lexer's tokens, so a
//! half-typed file still gets them.

use lsp_types::{
    CompletionItem, CompletionItemKind, DocumentSymbol, InsertTextFormat, Location, Range, SemanticToken,
    SemanticTokenType, SymbolKind, TextEdit, Url,
};
use syncguard_grammar::lexer::{Keyword, Punct, Token, lex};

use crate::positions::LineIndex;

/// The semantic token types this server reports, in legend order.
pub const TOKEN_TYPES: [SemanticTokenType; 7] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::NUMBER,
    SemanticTokenType::STRING,
    SemanticTokenType::COMMENT,
    SemanticTokenType::PARAMETER,
];

/// The whole file formatted as `syncguard fmt` does; none while it does not parse.
pub fn format(text: &str) -> Option<Vec<TextEdit>> {
    let parsed = syncguard_grammar::parse(text);
    if !parsed.errors.is_empty() {
        return None;
    }
    let formatted = syncguard_grammar::format(text, &parsed);
    if formatted == text {
        return Some(Vec::new());
    }
    let index = LineIndex::new(text);
    Some(vec![TextEdit::new(index.range(0..text.len()), formatted)])
}

/// A name's uses: identifiers with their byte ranges.
fn identifiers(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    lex(text)
        .tokens
        .into_iter()
        .filter_map(|(token, span)| match token {
            Token::Ident(name) => Some((name.to_string(), span)),
            _ => None,
        })
        .collect()
}

/// The identifier at `offset`, if any.
pub fn identifier_at(text: &str, offset: usize) -> Option<(String, std::ops::Range<usize>)> {
    identifiers(text)
        .into_iter()
        .find(|(_, span)| span.start <= offset && offset <= span.end)
}

/// Where each name is bound: `let NAME`, `let mut NAME`, `let [a, b]`, `for NAME in`,
/// `param NAME`, `thread NAME`.
pub fn bindings(text: &str) -> Vec<(String, std::ops::Range<usize>, SymbolKind)> {
    let tokens = lex(text).tokens;
    let mut found = Vec::new();
    for (at, (token, _)) in tokens.iter().enumerate() {
        let kind = match token {
            Token::Kw(Keyword::Let) => SymbolKind::VARIABLE,
            Token::Kw(Keyword::For) => SymbolKind::VARIABLE,
            Token::Kw(Keyword::Param) => SymbolKind::CONSTANT,
            Token::Kw(Keyword::Thread) => SymbolKind::FUNCTION,
            _ => continue,
        };
        let mut next = at + 1;
        if matches!(tokens.get(next), Some((Token::Kw(Keyword::Mut), _))) {
            next += 1;
        }
        match tokens.get(next) {
            Some((Token::Ident(name), span)) => found.push((name.to_string(), span.clone(), kind)),
            // `let [t0, t1] = ...`
            Some((Token::Punct(Punct::LBracket), _)) => {
                for (token, span) in &tokens[next + 1..] {
                    match token {
                        Token::Ident(name) => found.push((name.to_string(), span.clone(), kind)),
                        Token::Punct(Punct::Comma) => {}
                        _ => break,
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The binding of the name at `offset` (the last one before it, as names may be bound again).
pub fn definition(text: &str, offset: usize) -> Option<std::ops::Range<usize>> {
    let (name, at) = identifier_at(text, offset)?;
    let bound = bindings(text);
    bound
        .iter()
        .rfind(|(bound, span, _)| *bound == name && span.start <= at.start)
        .or_else(|| bound.iter().find(|(bound, _, _)| *bound == name))
        .map(|(_, span, _)| span.clone())
}

/// Every use of the name at `offset`.
pub fn references(text: &str, offset: usize, uri: &Url) -> Vec<Location> {
    let Some((name, _)) = identifier_at(text, offset) else {
        return Vec::new();
    };
    let index = LineIndex::new(text);
    identifiers(text)
        .into_iter()
        .filter(|(other, _)| *other == name)
        .map(|(_, span)| Location::new(uri.clone(), index.range(span)))
        .collect()
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written.
pub fn symbols(text: &str) -> Vec<DocumentSymbol> {
    let index = LineIndex::new(text);
    bindings(text)
        .into_iter()
        .map(|(name, span, kind)| {
            let range: Range = index.range(span);
            DocumentSymbol {
                name,
                detail: None,
                kind,
                tags: None,
                deprecated: None,
                range,
                selection_range: range,
                children: None,
            }
        })
        .collect()
}

/// Semantic tokens, delta-encoded as the protocol wants them.
pub fn semantic_tokens(text: &str) -> Vec<SemanticToken> {
    let lexed = lex(text);
    let mut classified: Vec<(std::ops::Range<usize>, u32)> = Vec::new();
    for (at, (token, span)) in lexed.tokens.iter().enumerate() {
        let kind = match token {
            Token::Kw(_) => 0,
            Token::Ident(_) => {
                let called = matches!(lexed.tokens.get(at + 1), Some((Token::Punct(Punct::LParen), _)));
                let named_argument = matches!(lexed.tokens.get(at + 1), Some((Token::Punct(Punct::Colon), _)));
                if called {
                    1
                } else if named_argument {
                    6
                } else {
                    2
                }
            }
            Token::Int(..) => 3,
            Token::Str(_) => 4,
            _ => continue,
        };
        classified.push((span.clone(), kind));
    }
    classified.extend(lexed.comments.iter().map(|comment| (comment.span.clone(), 5)));
    classified.sort_by_key(|(span, _)| span.start);
    encode(text, &classified)
}

fn encode(text: &str, classified: &[(std::ops::Range<usize>, u32)]) -> Vec<SemanticToken> {
    let index = LineIndex::new(text);
    let mut tokens = Vec::new();
    let (mut line, mut column) = (0, 0);
    for (span, kind) in classified {
        // A token over several lines (a block comment) is reported line by line.
        let first = index.line_of(span.start);
        let last = index.line_of(span.end.saturating_sub(1).max(span.start));
        for at in first..=last {
            let bytes = index.line(at);
            let start = index.position(span.start.max(bytes.start));
            let end = index.position(span.end.min(bytes.end));
            if end.character <= start.character {
                continue;
            }
            let delta_line = start.line - line;
            let delta_start = if delta_line == 0 {
                start.character - column
            } else {
                start.character
            };
            tokens.push(SemanticToken {
                delta_line,
                delta_start,
                length: end.character - start.character,
                token_type: *kind,
                token_modifiers_bitset: 0,
            });
            (line, column) = (start.line, start.character);
        }
    }
    tokens
}

/// Every catalogued API as a call with its parameters as snippet placeholders.
pub fn completions() -> Vec<CompletionItem> {
    syncguard_analyzer::api::APIS
        .iter()
        .map(|api| {
            let params: Vec<&syncguard_analyzer::api::Param> = api
                .params
                .iter()
                .filter(|param| !param.optional && !param.named_only)
                .collect();
            let placeholders: Vec<String> = params
                .iter()
                .enumerate()
                .map(|(at, param)| format!("${{{}:{}}}", at + 1, param.name))
                .collect();
            CompletionItem {
                label: api.name.to_string(),
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(crate::hover::signature(api)),
                insert_text: Some(format!("{}({})", api.name, placeholders.join(", "))),
                insert_text_format: Some(InsertTextFormat::SNIPPET),
                ..CompletionItem::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str =
        "let s1 = aclrtCreateStream();\nlet ev = aclrtCreateEvent();\n// record\naclrtRecordEvent(ev, s1);\n";

    #[test]
    fn definitions_and_references_follow_the_binding() {
        let use_at = PROGRAM.rfind("ev,").unwrap();
        let bound = definition(PROGRAM, use_at).unwrap();
        assert_eq!(&PROGRAM[bound.clone()], "ev");
        assert_eq!(bound.start, PROGRAM.find("ev =").unwrap());
        let uri = Url::parse("file:///a.sync").unwrap();
        assert_eq!(references(PROGRAM, use_at, &uri).len(), 2);
    }

    #[test]
    fn half_typed_files_still_have_symbols_and_tokens() {
        let text = "let s1 = aclrtCreateStream(;\nlet ev = ";
        let names: Vec<String> = symbols(text).into_iter().map(|symbol| symbol.name).collect();
        assert_eq!(names, ["s1", "ev"]);
        assert!(!semantic_tokens(text).is_empty());
        assert!(format(text).is_none());
    }

    #[test]
    fn tokens_are_delta_encoded_in_utf16() {
        let tokens = semantic_tokens("let é = 1; // c\n");
        let decoded: Vec<(u32, u32, u32, u32)> = tokens
            .iter()
            .map(|t| (t.delta_line, t.delta_start, t.length, t.token_type))
            .collect();
        assert_eq!(decoded, [(0, 0, 3, 0), (0, 4, 1, 2), (0, 4, 1, 3), (0, 3, 4, 5)]);
    }
}
