//! Bad input never crashes: arbitrary bytes and token soups go through the whole
//! `.sync` pipeline (decode, lex, parse, lower) and always yield located diagnostics.

use proptest::prelude::*;
use syncguard_analyzer::{Sources, check_sync_bytes};

/// Fragments of real programs, so that soups get deep into the parser and lowering.
const VOCABULARY: &[&str] = &[
    "let",
    "if",
    "else",
    "for",
    "in",
    "thread",
    "op",
    "attrs",
    "superkernel",
    "subkernel",
    "return",
    "ranks",
    "param",
    "target",
    "cann",
    "hccl_buffer_size",
    "true",
    "NULL",
    "rank",
    "N",
    "s1",
    "s2",
    "ev",
    "x",
    "comm",
    "ch",
    "t0",
    "context",
    "UB",
    "aclrtCreateStream",
    "aclrtCreateEventWithFlag",
    "aclrtRecordEvent",
    "aclrtStreamWaitEvent",
    "aclrtResetEvent",
    "aclrtMalloc",
    "kernel",
    "HcclCommInitRootInfo",
    "HcclChannelAcquire",
    "HcclThreadAcquire",
    "HcommWriteOnThread",
    "HcommChannelNotifyWaitOnThread",
    "KernelLaunchInfo::CreateHcomWaitTask",
    "AscendC::SetNextTaskStart",
    "AscendC::DataCopy",
    "TILING_KEY_IS",
    "GetBlockIdx",
    "ACL_EVENT_SYNC",
    "COMM_ENGINE_AICPU_TS",
    "PIPE_MTE3",
    "acl.rt.record_event",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ",",
    ";",
    ":",
    "::",
    ".",
    "..",
    "..=",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "&&",
    "||",
    "!",
    "0",
    "1",
    "0x10",
    "4 KiB",
    "18446744073709551615",
    "99999999999999999999",
    "\"group\"",
    "\"unterminated",
    "//c\n",
    "/*",
    "*/",
    "\n",
    "\u{0}",
    "é",
    "\u{1A}",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..80).prop_map(|tokens| tokens.join(" "))
}

fn check(bytes: &[u8]) {
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "fuzz.sync", bytes);
    let len = bytes.len();
    for diagnostic in &checked.diagnostics {
        let range = &diagnostic.primary.range;
        assert!(
            range.start <= range.end && range.end <= len,
            "span {range:?} outside {len} bytes"
        );
        assert!(!diagnostic.message.is_empty());
        for related in &diagnostic.related {
            assert!(related.span.range.end <= len);
        }
    }
    // Rendering every diagnostic must not panic either.
    syncguard_analyzer::render::render_text(&checked.diagnostics, &sources, Default::default());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check(&bytes);
    }

    #[test]
    fn token_soups_never_panic(text in soup()) {
        check(text.as_bytes());
    }

    #[test]
    fn truncated_programs_never_panic(cut in 0usize..2000) {
        let program = include_str!("fixtures/SG001/pass_all_statement_forms.sync");
        let cut = cut.min(program.len());
        check(&program.as_bytes()[..cut]);
    }
}

#[test]
fn a_huge_file_is_checked() {
    let line = "aclrtSynchronizeStream(s1);\n";
    let program = format!("let s1 = aclrtCreateStream();\n{}", line.repeat(200_000));
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "huge.sync", program.as_bytes());
    assert!(checked.diagnostics.is_empty());
    assert_eq!(checked.program.op_count(), 200_001);
}

#[test]
fn deeply_nested_input_does_not_overflow_the_stack() {
    let depth = 5_000;
    let program = format!("let x = f({}1{});", "(".repeat(depth), ")".repeat(depth));
    let mut sources = Sources::default();
    check_sync_bytes(&mut sources, "deep.sync", program.as_bytes());
    let blocks = format!("{}{}", "if rank == 0 { ".repeat(depth), "}".repeat(depth));
    let checked = check_sync_bytes(&mut sources, "deep-blocks.sync", blocks.as_bytes());
    assert!(checked.diagnostics[0].message.starts_with("nested too deeply"));
    let long = format!(
        "let x = aclrtMalloc({}1, ACL_MEM_MALLOC_HUGE_FIRST);",
        "1 + ".repeat(100_000)
    );
    let checked = check_sync_bytes(&mut sources, "long.sync", long.as_bytes());
    assert!(checked.diagnostics[0].message.starts_with("nested too deeply"));
}

#[test]
fn statements_before_an_overly_complex_one_are_kept() {
    let deep = format!(
        "aclrtSynchronizeStream(s1);
let x = aclrtMalloc({}1{});",
        "(".repeat(200),
        ")".repeat(200)
    );
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "deep.sync", deep.as_bytes());
    let codes: Vec<_> = checked
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.as_str()))
        .collect();
    assert_eq!(codes.len(), 2, "{codes:?}");
    assert!(
        codes.iter().any(|(_, m)| m.contains("unknown stream `s1`")),
        "the first statement is still checked"
    );
}

#[test]
fn a_program_too_large_to_analyze_is_reported_not_passed() {
    // 40,000 ranks: at least 80,000 streams and threads, past the 65,536 the clocks hold;
    // refused after the first rank is walked, not after all of them.
    let program = "ranks 40000;\nlet s = aclrtCreateStream();\naclrtSynchronizeStream(s);\n";
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "big.sync", program.as_bytes());
    assert_eq!(checked.diagnostics.len(), 1);
    let refusal = &checked.diagnostics[0];
    assert_eq!(refusal.code, "SG006");
    assert_eq!(
        refusal.message,
        "this program runs on 40000 ranks: at least 80001 streams and threads, more than the 65536 the happens-before analysis holds: too large to analyze, so it is not verified"
    );
    assert_eq!(refusal.severity, syncguard_analyzer::Severity::Error);
}

#[test]
fn many_ranks_within_the_budget_are_analyzed() {
    // 20,000 ranks, 60,000 streams and threads, 40,000 calls: dense clocks would need
    // 9.6 GB; the sparse ones share every rank's entries.
    let program = "ranks 20000;\nlet s = aclrtCreateStream();\naclrtSynchronizeStream(s);\n";
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "many.sync", program.as_bytes());
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
}

#[test]
fn a_diagnostic_on_a_long_line_shows_a_window_of_it_at_its_real_column() {
    let prefix = format!(
        "let s = aclrtCreateStream(); {}aclrtRecordEvent(",
        "aclrtSynchronizeStream(s); ".repeat(4_000)
    );
    let program = format!("{prefix}nothing, s);\n");
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "long-line.sync", program.as_bytes());
    let text = syncguard_analyzer::render::render_text(&checked.diagnostics, &sources, Default::default());
    assert!(text.contains("unknown event `nothing`"), "{text}");
    assert!(text.len() < 2_000, "{} bytes:\n{text}", text.len());
    assert!(text.contains(" 1 │ …"), "{text}");
    assert!(
        text.contains("aclrtSynchronizeStream(s); aclrtRecordEvent(nothing, s);"),
        "{text}"
    );
    assert!(
        text.contains(&format!("long-line.sync:1:{} ]", prefix.len() + 1)),
        "{text}"
    );
}
