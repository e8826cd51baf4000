//! Reading a project again after an edit: entry points whose walk read only unchanged
//! files are not walked again, and the programs are those a fresh read extracts.

use syncguard_python::{ExtractCache, Options, SourceText, read_project, read_project_cached};

const RUNNER: &str = "import torch\nimport helpers\nimport settings\n\n# one entry point\ndef run(x):\n    s = torch.npu.Stream()\n    for _ in range(settings.rounds()):\n        with torch.npu.stream(s):\n            y = x * 2\n    helpers.finish(s)\n    return y\n";
const HELPERS: &str = "import torch\n\ndef finish(s):\n    s.synchronize()\n";
const OTHER: &str = "import torch\n\ndef alone():\n    e = torch.npu.Event()\n    e.record()\n    e.synchronize()\n";
/// A function whose value is used, and no span of it is in the program.
const SETTINGS: &str = "def rounds():\n    return 2\n";

fn sources(runner: &str, helpers: &str, other: &str, settings: &str) -> Vec<SourceText> {
    [
        ("runner.py", runner),
        ("helpers.py", helpers),
        ("other.py", other),
        ("settings.py", settings),
    ]
    .into_iter()
    .map(|(path, text)| SourceText {
        path: path.into(),
        text: text.into(),
    })
    .collect()
}

/// Each entry point's name, place and program as `.sync`.
fn programs(project: &syncguard_python::Project, entries: &[syncguard_python::EntryProgram]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| {
            format!(
                "{} {} {:?}\n{}",
                entry.entry,
                entry.source,
                entry.range,
                project.space().to_sync(entry)
            )
        })
        .collect()
}

/// Read with `parses` and `cache`; assert the programs are those of a fresh read, and
/// return (walked, reused).
fn read(
    texts: (&str, &str, &str, &str),
    parses: &mut syncguard_python::ParseCache,
    cache: &mut ExtractCache,
) -> (usize, usize) {
    let (runner, helpers, other, settings) = texts;
    let project = read_project_cached(sources(runner, helpers, other, settings), Options::default(), parses);
    let cached = programs(&project, &project.entries_cached(cache));
    let fresh_project = read_project(sources(runner, helpers, other, settings), Options::default());
    let fresh = programs(&fresh_project, &fresh_project.entries());
    assert_eq!(cached, fresh);
    cache.last_read()
}

#[test]
fn only_entry_points_that_read_a_changed_file_are_walked_again() {
    let (mut parses, mut cache) = (Default::default(), ExtractCache::default());
    assert_eq!(
        read((RUNNER, HELPERS, OTHER, SETTINGS), &mut parses, &mut cache),
        (2, 0)
    );
    // A comment in the other file: `run` read only runner.py and helpers.py.
    let other = OTHER.replace("import torch\n", "import torch  # events\n");
    assert_eq!(
        read((RUNNER, HELPERS, &other, SETTINGS), &mut parses, &mut cache),
        (1, 1)
    );
    // The helper changed: `run` calls it, `alone` does not.
    let helpers = HELPERS.replace("s.synchronize()", "torch.npu.synchronize()");
    assert_eq!(
        read((RUNNER, &helpers, &other, SETTINGS), &mut parses, &mut cache),
        (1, 1)
    );
    // The runner's comment, moving every offset in it after the edit.
    let runner = RUNNER.replace("# one entry point", "# the one entry point");
    assert_eq!(
        read((&runner, &helpers, &other, SETTINGS), &mut parses, &mut cache),
        (1, 1)
    );
    // What a helper returns: `run` reads it (no span of it is in the program).
    let settings = SETTINGS.replace("2", "3");
    assert_eq!(
        read((&runner, &helpers, &other, &settings), &mut parses, &mut cache),
        (1, 1)
    );
    // A name defined anew can change what any walk calls: every entry point is walked.
    let other = format!("{other}\ndef finish(s):\n    pass\n");
    assert_eq!(
        read((&runner, &helpers, &other, SETTINGS), &mut parses, &mut cache),
        (2, 0)
    );
}
