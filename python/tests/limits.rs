//! The frontend's bounds: pathological Python reads in bounded time and never panics,
//! and what is cut short says so.

use syncguard_python::{EntryProgram, Options, SourceText, read_project};

fn entries(text: &str) -> Vec<EntryProgram> {
    let project = read_project(
        vec![SourceText {
            path: "limits.py".into(),
            text: text.into(),
        }],
        Options::default(),
    );
    project.entries()
}

fn messages(entry: &EntryProgram) -> Vec<&str> {
    entry.unresolved.iter().map(|item| item.message.as_str()).collect()
}

#[test]
fn a_long_loop_stops_at_the_step_limit() {
    let text = "import acl\n\ndef main():\n    s, ret = acl.rt.create_stream()\n    for i in range(4096):\n        for j in range(4096):\n            acl.rt.synchronize_stream(s)\n";
    let found = entries(text);
    let main = found.iter().find(|e| e.entry == "limits:main").expect("main");
    let stop = main.incomplete.as_ref().expect("the walk stops");
    assert!(stop.message.contains("steps"), "{}", stop.message);
}

#[test]
fn recursion_is_not_followed() {
    let text =
        "import acl\n\ndef down(n):\n    acl.rt.synchronize_device()\n    down(n - 1)\n\ndef main():\n    down(10)\n";
    let found = entries(text);
    let main = found.iter().find(|e| e.entry == "limits:main").expect("main");
    assert!(
        messages(main).iter().any(|m| m.contains("calls itself")),
        "{:?}",
        messages(main)
    );
    assert_eq!(main.api_calls, 1);
}

#[test]
fn deep_nesting_reads_without_overflow() {
    let depth = 5_000;
    let expr = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
    let mut blocks = String::new();
    for level in 0..400 {
        blocks.push_str(&"    ".repeat(level + 1));
        blocks.push_str("if x:\n");
    }
    blocks.push_str(&"    ".repeat(401));
    blocks.push_str("acl.rt.synchronize_device()\n");
    let text = format!("import acl\n\ndef main(x):\n    y = {expr}\n{blocks}");
    let found = entries(&text);
    assert!(found.iter().any(|e| e.entry == "limits:main"));
}

#[test]
fn undecided_conditions_are_bounded() {
    let mut text = String::from("import acl\n\ndef main(flags):\n    s, ret = acl.rt.create_stream()\n");
    for i in 0..100 {
        text.push_str(&format!("    if flags[{i}]:\n        acl.rt.synchronize_stream(s)\n"));
    }
    let found = entries(&text);
    let main = found.iter().find(|e| e.entry == "limits:main").expect("main");
    let params = main
        .syntax
        .stmts
        .iter()
        .filter(|stmt| matches!(stmt.kind, syncguard_grammar::ast::StmtKind::Param { .. }))
        .count();
    assert_eq!(params, 32);
    assert!(messages(main).iter().any(|m| m.contains("undecided conditions")));
}

#[test]
fn binary_garbage_reads() {
    let text: String = (0..20_000u32)
        .map(|i| char::from_u32((i * 7919) % 0x2FF).unwrap_or('x'))
        .collect();
    entries(&text);
    entries("def f(:\n  acl.rt.record_event(\n");
    entries("");
}
