//! An editor's checks after an edit: each reuses what it can, and finds exactly what a
//! check from scratch of the same texts finds.

use std::path::PathBuf;

use syncguard_analyzer::{Overrides, Sources};
use syncguard_project::incremental::{Incremental, Reuse};
use syncguard_project::progress::Progress;
use syncguard_project::sources::{SourceDocument, SourceOptions, check_sources, read_documents};

const HELPER: &str = r#"#include "acl/acl.h"
// Hands the buffer over; the caller resets the event.
void HandOff(aclrtEvent ev, aclrtStream from, aclrtStream to)
{
    aclrtRecordEvent(ev, from);
    aclrtStreamWaitEvent(to, ev);
}
"#;

/// Two entry points: one reuses the event without a reset (SG102), one resets it.
const PIPELINES: &str = r#"#include "acl/acl.h"
void HandOff(aclrtEvent ev, aclrtStream from, aclrtStream to);

int Unreset(void)
{
    aclrtStream producer;
    aclrtStream consumer;
    aclrtEvent ev;
    aclrtCreateStream(&producer);
    aclrtCreateStream(&consumer);
    aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC);
    for (int i = 0; i < 2; ++i) {
        HandOff(ev, producer, consumer);
        aclrtSynchronizeStream(consumer);
    }
    return 0;
}

int Reset(void)
{
    aclrtStream producer;
    aclrtStream consumer;
    aclrtEvent ev;
    aclrtCreateStream(&producer);
    aclrtCreateStream(&consumer);
    aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC);
    for (int i = 0; i < 2; ++i) {
        HandOff(ev, producer, consumer);
        aclrtResetEvent(ev, consumer);
        aclrtSynchronizeStream(consumer);
    }
    return 0;
}
"#;

struct Quiet;

impl Progress for Quiet {
    fn add_work(&self, _: usize) {}
    fn start(&self, _: &str) {}
    fn finish_one(&self) {}
    fn cancelled(&self) -> bool {
        false
    }
}

fn documents(texts: &[(&str, &str)]) -> Vec<SourceDocument> {
    texts
        .iter()
        .map(|(path, text)| SourceDocument {
            file: PathBuf::from(path),
            display: path.to_string(),
            text: text.to_string(),
        })
        .collect()
}

/// Every finding as the user sees it: rule, file, place, message, related places.
fn rendered(sources: &Sources, diagnostics: Vec<syncguard_analyzer::Diagnostic>) -> Vec<String> {
    let mut found: Vec<String> = diagnostics
        .into_iter()
        .map(|diagnostic| {
            let place =
                |span: &syncguard_analyzer::source::Span| format!("{}@{:?}", sources.get(span.file).path, span.range);
            let related: Vec<String> = diagnostic.related.iter().map(|related| place(&related.span)).collect();
            format!(
                "{} {} {} | {} | {:?} | {:?}",
                diagnostic.code,
                place(&diagnostic.primary),
                diagnostic.message,
                related.join(", "),
                diagnostic.notes,
                diagnostic.fix
            )
        })
        .collect();
    found.sort();
    found
}

fn from_scratch(texts: &[(&str, &str)]) -> Vec<String> {
    let mut sources = Sources::default();
    let read = read_documents(&mut sources, documents(texts), &SourceOptions::default());
    let checked = check_sources(&read, &Overrides::default(), false, &Quiet);
    rendered(
        &sources,
        checked.checked.into_iter().flat_map(|file| file.diagnostics).collect(),
    )
}

/// Check `texts` again with what `incremental` kept; assert it finds what a check
/// from scratch finds, and say how much it reused.
fn again(incremental: &mut Incremental, texts: &[(&str, &str)]) -> (Vec<String>, Reuse) {
    let mut sources = Sources::default();
    let read = incremental.read(&mut sources, documents(texts), &SourceOptions::default());
    let checked = incremental.check(&read, &sources, &Overrides::default(), &Quiet);
    let found = rendered(
        &sources,
        checked.checked.into_iter().flat_map(|file| file.diagnostics).collect(),
    );
    assert_eq!(
        found,
        from_scratch(texts),
        "an incremental check differs from a check from scratch"
    );
    (found, incremental.last)
}

#[test]
fn an_edit_rechecks_only_the_entry_points_it_changes() {
    let mut incremental = Incremental::default();

    let first = files(HELPER, PIPELINES);
    let (found, reuse) = again(&mut incremental, &texts(&first));
    let unreset = |found: &[String]| {
        found
            .iter()
            .filter(|finding| finding.starts_with("SG102 handoff.cpp"))
            .count()
    };
    assert_eq!(unreset(&found), 1, "{found:?}");
    assert_eq!(reuse, Reuse { checked: 2, reused: 0 });

    // A comment above both entry points, as long as before on one line: every
    // offset after it moves, nothing is checked again, the finding moves with it.
    let longer = files(
        HELPER,
        &PIPELINES.replace("#include \"acl/acl.h\"\n", "#include \"acl/acl.h\" // ACL\n"),
    );
    let (_, reuse) = again(&mut incremental, &texts(&longer));
    assert_eq!(reuse, Reuse { checked: 0, reused: 2 });

    // The helper's comment: the finding in the helper moves.
    let helper = HELPER.replace("the caller resets", "every caller resets");
    let (_, reuse) = again(&mut incremental, &texts(&files(&helper, PIPELINES)));
    assert_eq!(reuse, Reuse { checked: 0, reused: 2 });

    // Fixing one entry point checks it alone again, and the finding goes.
    let fixed = PIPELINES.replacen(
        "        HandOff(ev, producer, consumer);\n        aclrtSynchronizeStream",
        "        HandOff(ev, producer, consumer);\n        aclrtResetEvent(ev, consumer);\n        aclrtSynchronizeStream",
        1,
    );
    let (found, reuse) = again(&mut incremental, &texts(&files(&helper, &fixed)));
    assert_eq!(unreset(&found), 0, "{found:?}");
    // The added line moves every line after it: the entry below is checked again too
    // (a finding's text may name a line).
    assert_eq!(reuse, Reuse { checked: 2, reused: 0 });

    // An edit the extracted programs do not see (a return value): nothing is checked.
    let returns_one = replace_last(&fixed, "return 0;", "return 1;");
    let (_, reuse) = again(&mut incremental, &texts(&files(&helper, &returns_one)));
    assert_eq!(reuse, Reuse { checked: 0, reused: 2 });

    // A call changed inside the second entry point leaves the first one's program as
    // it was.
    let second_changed = replace_last(
        &returns_one,
        "aclrtSynchronizeStream(consumer);",
        "aclrtSynchronizeStream(producer);",
    );
    let (_, reuse) = again(&mut incremental, &texts(&files(&helper, &second_changed)));
    assert_eq!(reuse, Reuse { checked: 1, reused: 1 });

    // The helper broken again, unsaved: both entry points inline it.
    let broken = helper.replace("    aclrtStreamWaitEvent(to, ev);\n", "");
    let (_, reuse) = again(&mut incremental, &texts(&files(&broken, &second_changed)));
    assert_eq!(reuse, Reuse { checked: 2, reused: 0 });
}

#[test]
fn other_settings_are_not_served_from_the_results_of_others() {
    let mut incremental = Incremental::default();
    let texts = [("handoff.cpp", HELPER), ("pipelines.cpp", PIPELINES)];
    let mut sources = Sources::default();
    let read = incremental.read(&mut sources, documents(&texts), &SourceOptions::default());
    incremental.check(&read, &sources, &Overrides::default(), &Quiet);
    let overrides = Overrides {
        target: Some(syncguard_model::model::Target::A2),
        ..Overrides::default()
    };
    let mut sources = Sources::default();
    let read = incremental.read(&mut sources, documents(&texts), &SourceOptions::default());
    incremental.check(&read, &sources, &overrides, &Quiet);
    assert_eq!(incremental.last, Reuse { checked: 2, reused: 0 });
}

fn files(helper: &str, pipelines: &str) -> Vec<(&'static str, String)> {
    vec![
        ("handoff.cpp", helper.to_string()),
        ("pipelines.cpp", pipelines.to_string()),
    ]
}

fn texts<'a>(files: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    files.iter().map(|(path, text)| (*path, text.as_str())).collect()
}

fn replace_last(text: &str, from: &str, to: &str) -> String {
    let at = text.rfind(from).expect("the text holds it");
    format!("{}{to}{}", &text[..at], &text[at + from.len()..])
}

/// The source files under `folders` (of this repository), as a project's documents.
fn fixture_texts(folders: &[&str]) -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (inputs, _) =
        syncguard_project::inputs::collect_inputs(&folders.iter().map(|folder| root.join(folder)).collect::<Vec<_>>());
    let mut texts: Vec<(String, String)> = inputs
        .into_iter()
        .filter(|input| input.kind == syncguard_project::inputs::InputKind::Source)
        .filter_map(|input| {
            Some((
                input.file.display().to_string(),
                std::fs::read_to_string(&input.file).ok()?,
            ))
        })
        .collect();
    texts.sort();
    texts
}

/// Edits as typing makes them, each somewhere else: a comment line added at the top, a
/// digit changed in a body, a space after a brace, a line removed.
fn edited(text: &str, edit: usize) -> String {
    match edit % 4 {
        0 => format!("// edit {edit}\n{text}"),
        1 => text.replacen("0;", "1;", 1),
        2 => text.replacen('{', "{ ", 1),
        _ => {
            let lines: Vec<&str> = text.lines().collect();
            let middle = lines.len() / 2;
            lines
                .iter()
                .enumerate()
                .filter(|(at, _)| *at != middle)
                .map(|(_, line)| format!("{line}\n"))
                .collect()
        }
    }
}

#[test]
fn edits_across_the_repositorys_own_sources_find_what_a_check_from_scratch_finds() {
    for folders in [
        &["cpp/tests/fixtures/hccl", "tests/realcode"][..],
        &["python/tests/fixtures"][..],
    ] {
        let mut texts = fixture_texts(folders);
        assert!(texts.len() > 5, "{folders:?}: {}", texts.len());
        let mut incremental = Incremental::default();
        let check = |incremental: &mut Incremental, texts: &[(String, String)]| {
            let borrowed: Vec<(&str, &str)> = texts
                .iter()
                .map(|(path, text)| (path.as_str(), text.as_str()))
                .collect();
            again(incremental, &borrowed)
        };
        let (_, first) = check(&mut incremental, &texts);
        assert_eq!(first.reused, 0);
        let mut reused = 0;
        for edit in 0..8 {
            let at = (edit * 7) % texts.len();
            texts[at].1 = edited(&texts[at].1, edit);
            let (_, reuse) = check(&mut incremental, &texts);
            reused += reuse.reused;
        }
        assert!(reused > 0, "{folders:?}: nothing was reused");
    }
}
