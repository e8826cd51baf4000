//! A byte order mark and the three line endings: `\n`, `\r\n` and a lone `\r` (files
//! from classic Mac OS editors).

use syncguard_grammar::ast::StmtKind;
use syncguard_grammar::{format, parse};

fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/encodings/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// Formats `src`, checks that the result parses and formats to itself, and returns it.
fn format_stably(src: &str) -> String {
    let formatted = format(src, &parse(src));
    let reparsed = parse(&formatted);
    assert!(reparsed.errors.is_empty(), "{formatted:?}: {:?}", reparsed.errors);
    assert_eq!(format(&formatted, &reparsed), formatted);
    formatted
}

#[test]
fn a_leading_byte_order_mark_is_skipped_and_spans_still_point_into_the_text() {
    let src = fixture("bom.sync");
    assert!(src.starts_with('\u{FEFF}'));
    let parsed = parse(&src);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.file.stmts.len(), 2);
    let first = &parsed.file.stmts[0].span;
    assert_eq!(&src[first.clone()], "let s1 = aclrtCreateStream();");
    assert_eq!(
        format_stably(&src),
        "let s1 = aclrtCreateStream();\naclrtSynchronizeStream(s1);\n"
    );
}

#[test]
fn a_byte_order_mark_elsewhere_is_still_an_unexpected_character() {
    let parsed = parse("f();\n\u{FEFF}g();");
    assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
}

#[test]
fn a_lone_carriage_return_ends_a_line_comment() {
    let src = fixture("cr-only-line-endings.sync");
    let parsed = parse(&src);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.file.stmts.len(), 2, "the comment swallowed the statements");
    assert!(matches!(parsed.file.stmts[0].kind, StmtKind::Let { .. }));
    assert_eq!(parsed.comments[0].text, "// comment");
    assert_eq!(
        format_stably(&src),
        "// comment\nlet s1 = aclrtCreateStream();\naclrtSynchronizeStream(s1);\n"
    );
}

#[test]
fn a_lone_carriage_return_ends_an_unterminated_string() {
    let parsed = parse("f(\"abc\r);\rg();");
    assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
    assert!(parsed.errors[0].message.contains("unterminated string"));
    assert_eq!(parsed.file.stmts.len(), 2, "the string swallowed the next line");
}

#[test]
fn the_formatter_sees_lines_and_blank_lines_in_every_line_ending() {
    let expected = "a(); // after a\n\n// before b\nb();\n";
    for newline in ["\n", "\r\n", "\r"] {
        let src = format!("a(); // after a{newline}{newline}// before b{newline}b();{newline}");
        assert_eq!(format_stably(&src), expected, "{newline:?}");
    }
    let block = format_stably("/* one\r   two */\rf();\r");
    assert_eq!(block, "/* one\n   two */\nf();\n");
}

#[test]
fn a_missing_semicolon_is_placed_at_the_end_of_a_line_that_ends_in_a_lone_carriage_return() {
    let parsed = parse("let a = f()\rg();");
    assert_eq!(parsed.errors[0].message, "expected `;` after this statement");
    assert_eq!(parsed.errors[0].span, 11..11);
}

#[test]
fn a_carriage_return_in_a_string_is_written_as_an_escape() {
    // A trace's kernel name can hold any character; `convert` prints it as a string.
    let src = "kernel(s1, \"\\rope\\r\", writes: []);\n";
    let parsed = parse(src);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(format_stably(src), src);
}
