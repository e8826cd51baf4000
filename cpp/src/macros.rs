//! Function-like macros the analyzed files define, expanded where they are called
//! (`#define RECORD_AND_WAIT(ev, from, to) ...`), so that the calls in their bodies
//! are followed with the arguments of each call site.
//!
//! Only macros that matter are expanded: a body that names a catalogued API, a function
//! the files define, a kernel launch, or another such macro. Checking wrappers that only
//! evaluate their argument (`ACL_CHECK(x)`) need no expansion: the argument is the call.
//! Each expansion is C++ text of its own, parsed once in a synthetic file; the walk
//! reads it in the caller's scope, with every span at the call site.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::fields::FieldChild;
use crate::index::Unit;
use crate::scope::Scopes;

/// Function-like macros by name: each definition with the file it is in.
pub type Macros = HashMap<String, Vec<(usize, Macro)>>;

/// A function-like macro: its parameters and its body with line continuations joined.
#[derive(Clone, Debug)]
pub struct Macro {
    params: Vec<String>,
    variadic: bool,
    body: String,
}

/// Where a call site's expansion is in the synthetic file, and whether the macro's
/// body is an expression (its value is the call's) or statements.
#[derive(Clone, Debug)]
pub struct Expansion {
    pub range: std::ops::Range<usize>,
    pub expression: bool,
}

/// The expansions of a run: the synthetic file's text, and each call site's
/// expansion by (file, start byte of the call).
#[derive(Default)]
pub struct Expansions {
    pub text: String,
    pub sites: HashMap<(usize, usize), Expansion>,
}

/// How deep macros expand inside macros.
const MAX_DEPTH: usize = 8;
/// The longest one expansion gets, and all of them together.
const MAX_EXPANSION: usize = 64 << 10;
const MAX_TOTAL: usize = 16 << 20;

/// Function-like macros defined in `units`, by name.
pub fn collect_macros(units: &[Unit]) -> Macros {
    let mut macros = Macros::new();
    for (position, unit) in units.iter().enumerate() {
        for (at, _) in unit.text.match_indices("define") {
            let Some(node) = unit.tree.root_node().descendant_for_byte_range(at, at + "define".len()) else {
                continue;
            };
            let Some(definition) = node.parent().filter(|parent| parent.kind() == "preproc_function_def") else {
                continue;
            };
            if let Some((name, found)) = read_macro(unit, definition) {
                macros.entry(name).or_default().push((position, found));
            }
        }
    }
    macros
}

fn read_macro(unit: &Unit, definition: Node) -> Option<(String, Macro)> {
    let name = unit.text_of(definition.field_child("name")?).to_string();
    let parameters = definition.field_child("parameters")?;
    let mut params = Vec::new();
    let mut variadic = false;
    let mut cursor = parameters.walk();
    for param in parameters.children(&mut cursor) {
        match param.kind() {
            "identifier" => params.push(unit.text_of(param).to_string()),
            "..." => variadic = true,
            _ => {}
        }
    }
    let body = definition
        .field_child("value")
        .map_or("", |value| unit.text_of(value))
        .replace("\\\r\n", " ")
        .replace("\\\n", " ");
    Some((name, Macro { params, variadic, body }))
}

/// The macros worth expanding: bodies that name something in `wanted` (catalogued
/// APIs, functions the files define, as seen from the macro's file) or launch a kernel,
/// and the macros naming them.
pub fn worth_expanding(macros: Macros, wanted: &dyn Fn(usize, &str) -> bool) -> Macros {
    let bodies = |name: &String| -> Vec<&str> { macros[name].iter().map(|(_, found)| found.body.as_str()).collect() };
    let mut kept: HashSet<String> = macros
        .iter()
        .filter(|(_, definitions)| {
            definitions.iter().any(|(unit, found)| {
                found.body.contains("<<<") || identifiers(&found.body).any(|name| wanted(*unit, name))
            })
        })
        .map(|(name, _)| name.clone())
        .collect();
    loop {
        let more: Vec<String> = macros
            .keys()
            .filter(|name| {
                !kept.contains(*name)
                    && bodies(name)
                        .iter()
                        .any(|body| identifiers(body).any(|id| kept.contains(id)))
            })
            .cloned()
            .collect();
        if more.is_empty() {
            break;
        }
        kept.extend(more);
    }
    // And the macros those call (`CONVERT_TILING_DATA` inside `GET_TILING_DATA`):
    // left unexpanded inside an expansion, they would be calls of unknown names.
    let mut pending: Vec<String> = kept.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        for body in bodies(&name) {
            for called in identifiers(body) {
                if macros.contains_key(called) && kept.insert(called.to_string()) {
                    pending.push(called.to_string());
                }
            }
        }
    }
    macros.into_iter().filter(|(name, _)| kept.contains(name)).collect()
}

/// Expand every call of a macro in `macros` inside the function bodies of `units`,
/// each with the definition its file sees.
pub fn expand_calls(units: &[Unit], scopes: &Scopes, macros: &Macros) -> Expansions {
    let mut expansions = Expansions::default();
    if macros.is_empty() {
        return expansions;
    }
    // In name order: the expansions' text does not depend on the map's order.
    let mut names: Vec<&String> = macros.keys().collect();
    names.sort();
    let visible = MacroScope { macros, scopes };
    for (position, unit) in units.iter().enumerate() {
        for name in names.iter().copied() {
            for (at, _) in unit.text.match_indices(name.as_str()) {
                if expansions.text.len() > MAX_TOTAL {
                    return expansions;
                }
                let Some(call) = call_at(unit, at, name) else {
                    continue;
                };
                let Some(arguments) = call.field_child("arguments") else {
                    continue;
                };
                let mut cursor = arguments.walk();
                let args: Vec<String> = arguments
                    .named_children(&mut cursor)
                    .filter(|arg| arg.kind() != "comment")
                    .map(|arg| unit.text_of(arg).to_string())
                    .collect();
                let Some(body) = expand(&visible, position, name, &args, 0) else {
                    continue;
                };
                if body.len() > MAX_EXPANSION {
                    continue;
                }
                let expression = is_expression(&body);
                // Each expansion is a declaration of its own: an expression body is an
                // initializer (its value is the call's), statements are a function body.
                let (open, close) = if expression {
                    (format!("auto {EXPANSION_NAME} = ("), ");\n")
                } else {
                    (format!("void {EXPANSION_NAME}() {{\n"), "\n;}\n")
                };
                expansions.text.push_str(&open);
                let start = expansions.text.len();
                expansions.text.push_str(&body);
                expansions.text.push_str(close);
                expansions.sites.insert(
                    (position, call.start_byte()),
                    Expansion {
                        range: start..start + body.len(),
                        expression,
                    },
                );
            }
        }
    }
    expansions
}

/// The name each expansion is declared under in the expansions' file.
pub const EXPANSION_NAME: &str = "__syncguard_expansion";

/// The call of macro `name` whose name starts at `at`, if `at` starts one.
fn call_at<'t>(unit: &'t Unit, at: usize, name: &str) -> Option<Node<'t>> {
    let node = unit.tree.root_node().descendant_for_byte_range(at, at + name.len())?;
    if node.kind() != "identifier" || node.byte_range() != (at..at + name.len()) {
        return None;
    }
    let call = node.parent().filter(|parent| parent.kind() == "call_expression")?;
    (call.field_child("function") == Some(node)).then_some(call)
}

/// The macros of a run and which files see which: a macro is expanded where its
/// definition is visible (the calling file's own, else one in a file it includes).
struct MacroScope<'m> {
    macros: &'m Macros,
    scopes: &'m Scopes,
}

impl MacroScope<'_> {
    fn definition(&self, unit: usize, name: &str) -> Option<&Macro> {
        let definitions = self.macros.get(name)?;
        definitions
            .iter()
            .find(|(defined_in, _)| *defined_in == unit)
            .or_else(|| {
                definitions
                    .iter()
                    .find(|(defined_in, _)| self.scopes.sees(unit, *defined_in))
            })
            .map(|(_, found)| found)
    }
}

/// The text of `name(args)` called in file `unit`, macros inside expanded too (`depth`
/// deep so far). The file's own definition of a macro wins over an included file's.
fn expand(macros: &MacroScope, unit: usize, name: &str, args: &[String], depth: usize) -> Option<String> {
    let found = macros.definition(unit, name)?;
    if depth > MAX_DEPTH || (!found.variadic && args.len() != found.params.len() && !found.params.is_empty()) {
        return None;
    }
    let substituted = substitute(found, args);
    Some(expand_nested(macros, unit, &substituted, name, depth))
}

/// Replace each parameter in the body by its argument (`#p` by its text quoted,
/// `a ## b` pasted, `__VA_ARGS__` by the rest).
fn substitute(found: &Macro, args: &[String]) -> String {
    let argument = |name: &str| -> Option<String> {
        if name == "__VA_ARGS__" && found.variadic {
            return Some(args.get(found.params.len()..).unwrap_or_default().join(", "));
        }
        let position = found.params.iter().position(|param| param == name)?;
        Some(args.get(position).cloned().unwrap_or_default())
    };
    let mut out = String::with_capacity(found.body.len());
    let mut tokens = tokenize(&found.body).peekable();
    while let Some(token) = tokens.next() {
        match token {
            Token::Ident(name) if out.trim_end().ends_with('#') && !out.trim_end().ends_with("##") => {
                // `#param`: the argument as a string literal.
                let trimmed = out.trim_end().trim_end_matches('#').to_string();
                out = trimmed;
                let text = argument(name).unwrap_or_else(|| name.to_string());
                out.push('"');
                out.push_str(&text.replace('\\', "\\\\").replace('"', "\\\""));
                out.push('"');
            }
            Token::Ident(name) => out.push_str(&argument(name).unwrap_or_else(|| name.to_string())),
            Token::Other(text) if text.trim() == "##" => {
                // Paste: drop the operator and the space around it.
                let trimmed = out.trim_end().to_string();
                out = trimmed;
                while tokens
                    .peek()
                    .is_some_and(|next| matches!(next, Token::Other(text) if text.trim().is_empty()))
                {
                    tokens.next();
                }
            }
            Token::Other(text) => out.push_str(text),
        }
    }
    out
}

/// Expand calls of other macros in `text` (not `current`: a macro never expands
/// inside itself).
fn expand_nested(macros: &MacroScope, unit: usize, text: &str, current: &str, depth: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut previous_was_member = false;
    while !rest.is_empty() {
        if out.len() > MAX_EXPANSION {
            // Too long to use (`expand_calls` drops it): stop growing it.
            out.push_str(rest);
            break;
        }
        let Some(token) = tokenize(rest).next() else { break };
        let len = match token {
            Token::Ident(name) => name.len(),
            Token::Other(other) => other.len(),
        };
        if let Token::Ident(name) = token
            && name != current
            && !previous_was_member
            && macros.macros.contains_key(name)
            && let Some((args, used)) = call_arguments(&rest[len..])
            && let Some(expanded) = expand(macros, unit, name, &args, depth + 1)
        {
            out.push_str(&expanded);
            rest = &rest[len + used..];
            continue;
        }
        previous_was_member = matches!(token, Token::Other(text) if text.ends_with('.') || text.ends_with("->"));
        out.push_str(&rest[..len]);
        rest = &rest[len..];
    }
    out
}

/// `(a, f(b, c), "x,y")` at the start of `text` (after spaces): the arguments split at
/// top-level commas, and the bytes the list took.
fn call_arguments(text: &str) -> Option<(Vec<String>, usize)> {
    let open = text.len() - text.trim_start().len();
    if !text[open..].starts_with('(') {
        return None;
    }
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = open + 1;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in text.char_indices().skip_while(|(at, _)| *at < open) {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let last = text[start..at].trim();
                    if !last.is_empty() || !args.is_empty() {
                        args.push(last.to_string());
                    }
                    return Some((args, at + 1));
                }
            }
            ',' if depth == 1 => {
                args.push(text[start..at].trim().to_string());
                start = at + 1;
            }
            _ => {}
        }
    }
    None
}

/// A body is an expression unless it is a block, a `do`/`if`/`for`/`while` statement,
/// or holds a `;`.
fn is_expression(body: &str) -> bool {
    let trimmed = body.trim();
    let starts_statement = ["do", "if", "for", "while", "switch", "return"]
        .iter()
        .any(|keyword| identifiers(trimmed).next() == Some(keyword) && trimmed.starts_with(keyword));
    !trimmed.is_empty() && !trimmed.starts_with('{') && !starts_statement && !trimmed.contains(';')
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token<'t> {
    Ident(&'t str),
    Other(&'t str),
}

/// Identifiers and the text between them (string and character literals kept whole,
/// so that nothing inside them is taken for a name).
fn tokenize(text: &str) -> impl Iterator<Item = Token<'_>> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let len = if first.is_alphabetic() || first == '_' {
            rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        } else if first == '"' || first == '\'' {
            let mut escaped = false;
            rest.char_indices()
                .skip(1)
                .find(|&(_, c)| {
                    let end = !escaped && c == first;
                    escaped = !escaped && c == '\\';
                    end
                })
                .map_or(rest.len(), |(at, c)| at + c.len_utf8())
        } else {
            rest.find(|c: char| c.is_alphabetic() || c == '_' || c == '"' || c == '\'')
                .unwrap_or(rest.len())
        };
        let (token, after) = rest.split_at(len.max(first.len_utf8()));
        rest = after;
        Some(if first.is_alphabetic() || first == '_' {
            Token::Ident(token)
        } else {
            Token::Other(token)
        })
    })
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    tokenize(text).filter_map(|token| match token {
        Token::Ident(name) => Some(name),
        Token::Other(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn macros(text: &str) -> Macros {
        collect_macros(&[Unit::parse("m.h".into(), text.into(), 0)])
    }

    /// `expand` in the one file the macros are defined in.
    fn expand(found: &Macros, unit: usize, name: &str, args: &[String], depth: usize) -> Option<String> {
        let scopes = Scopes::none(1);
        super::expand(
            &MacroScope {
                macros: found,
                scopes: &scopes,
            },
            unit,
            name,
            args,
            depth,
        )
    }

    #[test]
    fn expansions_do_not_depend_on_the_order_of_a_hash_map() {
        let mut text: String = (0..16)
            .map(|k| format!("#define SYNC{k}(s) aclrtSynchronizeStream(s)\n"))
            .collect();
        text.push_str("void f() {\n");
        for k in (0..16).rev() {
            text.push_str(&format!("  SYNC{k}(x);\n"));
        }
        text.push_str("}\n");
        let units = [Unit::parse("a.cpp".into(), text, 0)];
        let scopes = Scopes::build(&units);
        // Each map has a hasher of its own, so its own iteration order.
        let first = expand_calls(&units, &scopes, &collect_macros(&units)).text;
        for _ in 0..8 {
            assert_eq!(expand_calls(&units, &scopes, &collect_macros(&units)).text, first);
        }
    }

    #[test]
    fn a_file_expands_the_macros_it_sees() {
        let units = [
            Unit::parse(
                "a.cpp".into(),
                "#define SYNC(s) aclrtSynchronizeStream(s)\nvoid f() { SYNC(x); }\n".into(),
                0,
            ),
            Unit::parse("b.cpp".into(), "void g() { SYNC(y); }\n".into(), 0),
        ];
        let scopes = Scopes::build(&units);
        let found = collect_macros(&units);
        let expansions = expand_calls(&units, &scopes, &found);
        assert_eq!(expansions.sites.len(), 1, "b.cpp does not include a.cpp");
        assert!(expansions.sites.keys().all(|(unit, _)| *unit == 0));
    }

    #[test]
    fn expands_parameters_strings_pastes_and_nested_macros() {
        let found = macros(
            "#define WAIT(ev, s) aclrtStreamWaitEvent(s, ev)\n\
             #define HANDOFF(ev, from, to) do { \\\n  CHECK(aclrtRecordEvent(ev, from)); WAIT(ev, to); \\\n } while (0)\n\
             #define NAME(x) #x\n#define GLUE(a, b) a ## b\n#define LOG(...) printf(__VA_ARGS__)\n",
        );
        let expanded = expand(
            &found,
            0,
            "HANDOFF",
            &["ctx.done".into(), "s1".into(), "g(a, b)".into()],
            0,
        )
        .unwrap();
        assert_eq!(
            expanded.split_whitespace().collect::<Vec<_>>().join(" "),
            "do { CHECK(aclrtRecordEvent(ctx.done, s1)); aclrtStreamWaitEvent(g(a, b), ctx.done); } while (0)"
        );
        assert_eq!(
            expand(&found, 0, "NAME", &["a \"b\"".into()], 0).unwrap(),
            "\"a \\\"b\\\"\""
        );
        assert_eq!(
            expand(&found, 0, "GLUE", &["stream".into(), "2".into()], 0).unwrap(),
            "stream2"
        );
        assert_eq!(
            expand(&found, 0, "LOG", &["\"%d\"".into(), "x".into()], 0).unwrap(),
            "printf(\"%d\", x)"
        );
        assert!(is_expression("aclrtStreamWaitEvent(s, ev)"));
        assert!(!is_expression(&expanded));
    }

    #[test]
    fn keeps_only_macros_that_reach_something_wanted() {
        let found = macros(
            "#define WAIT(ev, s) aclrtStreamWaitEvent(s, ev)\n#define TWICE(ev, s) WAIT(ev, s); WAIT(ev, s)\n\
             #define LOG(x) printf(\"%d\", x)\n",
        );
        let kept = worth_expanding(found, &|_, name| name.starts_with("aclrt"));
        let mut names: Vec<&String> = kept.keys().collect();
        names.sort();
        assert_eq!(names, ["TWICE", "WAIT"]);
    }

    #[test]
    fn keeps_the_macros_a_kept_macro_calls() {
        let found = macros(
            "#define DECLARE(T, p, from) T *p = reinterpret_cast<T *>(from)\n\
             #define GET(T, p, from) DECLARE(T, p, from); aclrtSynchronizeStream(0)\n#define UNUSED(x) (void)x\n",
        );
        let kept = worth_expanding(found, &|_, name| name.starts_with("aclrt"));
        let mut names: Vec<&String> = kept.keys().collect();
        names.sort();
        assert_eq!(names, ["DECLARE", "GET"]);
    }

    #[test]
    fn a_macro_never_expands_inside_itself() {
        let found = macros("#define SELF(x) SELF(x + 1)\n#define A(x) B(x)\n#define B(x) A(x)\n");
        assert_eq!(expand(&found, 0, "SELF", &["1".into()], 0).unwrap(), "SELF(1 + 1)");
        // Mutual recursion stops at the depth limit.
        assert!(expand(&found, 0, "A", &["1".into()], 0).is_some());
    }
}
