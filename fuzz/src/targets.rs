//! The fuzz targets and the invariants each one checks:
//! - every target: no panic; every diagnostic position (primary and related) lies
//!   inside its file and on a character boundary; the text and JSON renderings succeed
//!   and the JSON reads back;
//! - `fmt`: a file that parses formats to a file that parses, formatting is idempotent,
//!   and the formatted file gets the same findings;
//! - `convert`: the converted program reads without syntax or name errors and, for a
//!   trace the reader took whole, reports the same rules as the trace;
//! - `plan`: a program that verifies can be planned for `verify-then-run`;
//! - `cpp`, `python`: each entry point's extracted program, printed as `convert` prints
//!   it, reads back without syntax errors and, where it lowered cleanly, gets the same
//!   findings;
//! - `skeleton`: the check in two passes (`syncguard skeleton`, `check-skeletons`)
//!   reports byte for byte what checking the trace reports, on the input with runs of
//!   launches without memory added after each line naming a stream;
//!   the input read as a skeleton file, or as a skeleton's records, is refused or
//!   checked, never a panic.
//!
//! Time and memory are bounded by the caller (`fuzz`, and the supervisor in `main.rs`).

use std::collections::BTreeSet;

use syncguard_analyzer::exec::instantiate;
use syncguard_analyzer::render::{
    SarifTool, TextOptions, render_concise, render_github, render_json, render_sarif, render_text,
};
use syncguard_analyzer::{
    CheckedFile, Diagnostic, Overrides, Severity, Sources, apply_suppressions, check_sync_bytes, check_trace_reader,
    convert_trace, decode_utf8_lossless_offsets,
};
use syncguard_runtime_bridge::Plan;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// `.sync` parser, lowering and the whole analysis.
    Sync,
    /// `syncguard fmt`.
    Fmt,
    /// The trace reader and the analysis.
    Trace,
    /// `syncguard convert`, then checking its output.
    Convert,
    /// `verify-then-run` up to the plan of host calls.
    Plan,
    /// The C/C++ frontend, the analysis of every entry point, and `convert`.
    Cpp,
    /// The Python frontend, the analysis of every entry point, and `convert`.
    Python,
    /// The check in two passes against the check in one, and the skeleton reader.
    Skeleton,
}

impl Target {
    pub const ALL: [Target; 8] = [
        Target::Sync,
        Target::Fmt,
        Target::Trace,
        Target::Convert,
        Target::Plan,
        Target::Cpp,
        Target::Python,
        Target::Skeleton,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Sync => "sync",
            Target::Fmt => "fmt",
            Target::Trace => "trace",
            Target::Convert => "convert",
            Target::Plan => "plan",
            Target::Cpp => "cpp",
            Target::Python => "python",
            Target::Skeleton => "skeleton",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    pub fn reads_traces(self) -> bool {
        matches!(self, Target::Trace | Target::Convert | Target::Skeleton)
    }
}

/// Run one input; `Err` says which invariant broke.
pub fn run(target: Target, input: &[u8]) -> Result<(), String> {
    match target {
        Target::Sync => {
            let mut sources = Sources::default();
            let mut checked = check_sync_bytes(&mut sources, "fuzz.sync", input);
            apply_suppressions(&mut checked.diagnostics, &sources);
            renders(&checked, &sources)
        }
        Target::Fmt => format_keeps_meaning(input),
        Target::Trace => {
            let mut sources = Sources::default();
            let checked = check_trace(&mut sources, input);
            renders(&checked, &sources)
        }
        Target::Convert => convert_keeps_findings(input),
        Target::Plan => plans(input),
        Target::Cpp => sources_keep_meaning(input),
        Target::Python => python_keeps_meaning(input),
        Target::Skeleton => skeletons_keep_findings(input),
    }
}

/// The two passes report what the check in one pass reports, on the input and with
/// runs of launches added; the input as a skeleton is read or refused.
fn skeletons_keep_findings(input: &[u8]) -> Result<(), String> {
    use syncguard_skeleton::{Skeleton, check_skeletons, skeleton_of_trace};
    let report = |sources: &Sources, files: Vec<CheckedFile>| {
        let count = files.len();
        let mut diagnostics: Vec<Diagnostic> = files.into_iter().flat_map(|f| f.diagnostics).collect();
        Diagnostic::sort(&mut diagnostics);
        render_json(&diagnostics, &[], &[], sources, count).to_string()
    };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("fuzz.jsonl");
    // The input as it is goes through the same code with nothing to leave out; runs of
    // launches added give the reduction work.
    {
        let text = with_launch_runs(input);
        std::fs::write(&path, &text).map_err(|e| e.to_string())?;
        let mut sources = Sources::default();
        let one = syncguard_analyzer::check_trace_file(&mut sources, &path, &Overrides::default())
            .map_err(|e| e.to_string())?;
        let one = report(&sources, vec![one]);
        let skeleton = skeleton_of_trace(&path.display().to_string(), &path, 0).map_err(|e| e.to_string())?;
        let reserve = skeleton.encode_reserve();
        let read = Skeleton::decode(&skeleton.encode()).map_err(|e| format!("a skeleton does not read back: {e}"))?;
        let mut sources = Sources::default();
        let mut reserve_of = |s: &Skeleton| s.decode_reserve(&reserve).map_err(|e| e.to_string());
        let checked = check_skeletons(&mut sources, vec![read], &Overrides::default(), &mut reserve_of)?;
        let two = report(&sources, checked.into_iter().map(|c| c.file).collect());
        if std::env::var_os("SYNCGUARD_FUZZ_SKELETON_STATS").is_some() {
            eprintln!("STAT dropped={}", skeleton.dropped);
        }
        if one != two {
            return Err(format!(
                "the two passes report differently from the check ({} lines left out):\n{one}\n--- two passes ---\n{two}",
                skeleton.dropped
            ));
        }
    }
    for bytes in [input.to_vec(), syncguard_skeleton::format::with_raw_body(input)] {
        if let Ok(read) = Skeleton::decode(&bytes) {
            let mut sources = Sources::default();
            let mut none = |_: &Skeleton| Err("no reserve".to_string());
            let _ = check_skeletons(&mut sources, vec![read], &Overrides::default(), &mut none);
        }
    }
    Ok(())
}

/// The input with twelve launches without memory after each line that names a stream
/// (as `"stream": "HANDLE"`), on that stream, with the line's rank, thread and time.
fn with_launch_runs(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() * 2);
    for line in input.split_inclusive(|&b| b == b'\n') {
        out.extend_from_slice(line);
        let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let Some(stream) = fields.get("args").and_then(|args| args.get("stream")) else {
            continue;
        };
        if !line.ends_with(b"\n") {
            out.push(b'\n');
        }
        let mut launch = serde_json::Map::new();
        for key in ["rank", "thread"] {
            if let Some(value) = fields.get(key) {
                launch.insert(key.into(), value.clone());
            }
        }
        launch.insert("api".into(), "aclrtLaunchKernel".into());
        launch.insert(
            "args".into(),
            serde_json::json!({"funcHandle": "0xf", "numBlocks": 8, "argsData": "0xa", "argsSize": 16, "stream": stream}),
        );
        launch.insert("ret".into(), 0.into());
        launch.insert("ts".into(), fields.get("ts").cloned().unwrap_or_else(|| 0.into()));
        let launch = serde_json::Value::Object(launch).to_string();
        for _ in 0..12 {
            out.extend_from_slice(launch.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// Every entry point of a Python input: as for C/C++.
fn python_keeps_meaning(input: &[u8]) -> Result<(), String> {
    let (text, _) = decode_utf8_lossless_offsets(input);
    let mut sources = Sources::default();
    let file = sources.add(syncguard_analyzer::SourceFile::new("fuzz.py", text.clone()));
    let project = syncguard_python::read_project(
        vec![syncguard_python::SourceText {
            path: "fuzz.py".into(),
            text,
        }],
        syncguard_python::Options::default(),
    );
    let entries = project.entries();
    entries_keep_meaning(project.space(), &entries, file, &sources)
}

/// Every entry point of a C/C++ input: checked and rendered, and its printed program
/// reads back with the same findings.
fn sources_keep_meaning(input: &[u8]) -> Result<(), String> {
    let (text, _) = decode_utf8_lossless_offsets(input);
    let mut sources = Sources::default();
    let file = sources.add(syncguard_analyzer::SourceFile::new("fuzz.cpp", text.clone()));
    let project = syncguard_cpp::read_project(
        vec![syncguard_cpp::SourceText {
            path: "fuzz.cpp".into(),
            text,
        }],
        syncguard_cpp::Options::default(),
    );
    let entries = project.entries();
    entries_keep_meaning(project.space(), &entries, file, &sources)
}

/// The extracted programs of a frontend's entry points: checked and rendered, and
/// each printed program reads back with the same findings.
fn entries_keep_meaning(
    space: &syncguard_grammar::extracted::SourceSpace,
    entries: &[syncguard_grammar::extracted::EntryProgram],
    file: syncguard_analyzer::source::FileId,
    sources: &Sources,
) -> Result<(), String> {
    // An entry point whose calls were all left out has an empty program: checked (its
    // notes are listed), but there is no program to print.
    for entry in entries
        .iter()
        .filter(|entry| entry.api_calls > 0 && !entry.syntax.stmts.is_empty())
    {
        let lowered = space.lower(entry, &[file]);
        let read_cleanly = lowered.diagnostics.is_empty();
        let checked = syncguard_analyzer::check_lowered(lowered, Vec::new(), &Overrides::default());
        renders(&checked, sources)?;
        let printed = space.to_sync(entry);
        let parsed = syncguard_grammar::parse(&printed);
        if let Some(error) = parsed.errors.first() {
            return Err(format!(
                "the program of `{}` does not parse: {}\n{printed}",
                entry.entry, error.message
            ));
        }
        if !read_cleanly {
            continue;
        }
        let again = check_sync_bytes(&mut Sources::default(), "converted.sync", printed.as_bytes());
        let timed_out = |checked: &CheckedFile| codes(&checked.diagnostics).contains(&"SG004");
        // One call unrolled from a loop is one place in the source and many in the
        // printed program, where findings are reported per place: compare which rules
        // fire, not how often.
        let rules =
            |checked: &CheckedFile| -> BTreeSet<&'static str> { codes(&checked.diagnostics).into_iter().collect() };
        if !timed_out(&checked) && !timed_out(&again) && rules(&checked) != rules(&again) {
            return Err(format!(
                "the printed program of `{}` gets {:?}, the source {:?}\n{printed}",
                entry.entry,
                rules(&again),
                rules(&checked)
            ));
        }
    }
    Ok(())
}

fn check_trace(sources: &mut Sources, input: &[u8]) -> CheckedFile {
    let checked = check_trace_reader(sources, "fuzz.jsonl", input, None, &Overrides::default());
    sources.load_deferred();
    checked
}

/// Positions are inside their files, and both renderings succeed.
fn renders(checked: &CheckedFile, sources: &Sources) -> Result<(), String> {
    for diagnostic in &checked.diagnostics {
        positions_inside(diagnostic, sources)?;
    }
    render_text(&checked.diagnostics, sources, TextOptions::default());
    let json = render_json(&checked.diagnostics, &checked.proofs, &checked.unproved, sources, 1).to_string();
    serde_json::from_str::<serde_json::Value>(&json).map_err(|e| format!("JSON output does not read back: {e}"))?;
    render_concise(&checked.diagnostics, sources);
    let github = render_github(&checked.diagnostics, sources);
    if github.lines().count() != checked.diagnostics.len() {
        return Err(format!("GitHub output is not one line per finding:\n{github}"));
    }
    let tool = SarifTool {
        version: "0",
        information_uri: None,
    };
    render_sarif(&checked.diagnostics, sources, std::path::Path::new("/"), &tool);
    Ok(())
}

fn positions_inside(diagnostic: &Diagnostic, sources: &Sources) -> Result<(), String> {
    let spans = std::iter::once(&diagnostic.primary).chain(diagnostic.related.iter().map(|r| &r.span));
    for span in spans {
        let file = sources.get(span.file);
        let text = &file.text;
        let inside = span.range.start <= span.range.end && span.range.end <= file.len();
        let on_chars = text.len() != file.len()
            || (text.is_char_boundary(span.range.start) && text.is_char_boundary(span.range.end));
        if !inside || !on_chars {
            return Err(format!(
                "{} position {:?} is not inside {} ({} bytes) on character boundaries",
                diagnostic.code,
                span.range,
                file.path,
                file.len()
            ));
        }
    }
    Ok(())
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = diagnostics.iter().flat_map(|d| d.codes()).collect();
    codes.sort_unstable();
    codes
}

fn format_keeps_meaning(input: &[u8]) -> Result<(), String> {
    let mut sources = Sources::default();
    let original = check_sync_bytes(&mut sources, "fuzz.sync", input);
    renders(&original, &sources)?;
    let (text, invalid_utf8) = decode_utf8_lossless_offsets(input);
    let parsed = syncguard_grammar::parse(&text);
    if !parsed.errors.is_empty() || !invalid_utf8.is_empty() {
        return Ok(()); // `fmt` leaves such files alone
    }
    let formatted = syncguard_grammar::format(&text, &parsed);
    let reparsed = syncguard_grammar::parse(&formatted);
    if !reparsed.errors.is_empty() {
        return Err(format!("formatted text does not parse: {:?}", reparsed.errors[0]));
    }
    if syncguard_grammar::format(&formatted, &reparsed) != formatted {
        return Err("formatting is not idempotent".into());
    }
    let again = check_sync_bytes(&mut Sources::default(), "fuzz.sync", formatted.as_bytes());
    // SG004 says a z3 query ran out of time, which depends on the machine's load, not
    // on the text: a query near its deadline may finish in one check (and find a
    // counterexample, with the findings it leads to) and not in the next.
    let timed_out = |checked: &CheckedFile| codes(&checked.diagnostics).contains(&"SG004");
    if timed_out(&original) || timed_out(&again) {
        return Ok(());
    }
    let decided = |checked: &CheckedFile| codes(&checked.diagnostics);
    if decided(&original) != decided(&again) {
        return Err(format!(
            "formatting changed the findings: {:?} became {:?}",
            decided(&original),
            decided(&again)
        ));
    }
    Ok(())
}

fn convert_keeps_findings(input: &[u8]) -> Result<(), String> {
    let mut sources = Sources::default();
    let from_trace = check_trace(&mut sources, input);
    renders(&from_trace, &sources)?;
    let converted = convert_trace(&mut Sources::default(), "fuzz.jsonl", input, None);
    let program = check_sync_bytes(&mut Sources::default(), "converted.sync", converted.text.as_bytes());
    if converted.inexpressible {
        return Ok(()); // said on stderr by `syncguard convert`
    }
    if let Some(bad) = program
        .diagnostics
        .iter()
        // An SG003 note (an IPC open nothing exports) is a finding the trace has too.
        .find(|d| (d.code == "SG001" || d.code == "SG003") && d.severity != Severity::Info)
    {
        return Err(format!(
            "the converted program does not read: {} {}",
            bad.code, bad.message
        ));
    }
    // Lines the reader left out are left out of the conversion too (see the trace
    // reader's tests); such traces are only checked for crashes. The note on handles
    // from before the trace leaves nothing out.
    let left_out = |d: &Diagnostic| ["SG002", "SG003", "SG101"].contains(&d.code) && d.severity != Severity::Info;
    if from_trace.diagnostics.iter().any(left_out) {
        return Ok(());
    }
    // A trace that shows one process waiting on a shared (IPC) event before the other
    // recorded it: the program leaves the processes' timing open and takes the
    // documented hand-over, so the two differ by design (SYNC.md, IPC).
    let opens_ipc_event = String::from_utf8_lossy(input).contains("aclrtIpcOpenEventHandle");
    if opens_ipc_event && from_trace.diagnostics.iter().any(|d| d.code == "SG104") {
        return Ok(());
    }
    let trace_codes: BTreeSet<&str> = codes(&from_trace.diagnostics)
        .into_iter()
        .filter(|&code| code != "SG003")
        .collect();
    // A trace is one observed run: the program also reports destroys that can race
    // another thread's use, which the trace saw ordered one way (before the destroy: no
    // finding; after it: a use after the destroy). Such a finding may stand for the
    // trace's own, or be the program's alone.
    let may_race = |d: &&Diagnostic| ["SG106", "SG603"].contains(&d.code) && d.message.contains("can run before");
    let mut program_codes: BTreeSet<&str> = program
        .diagnostics
        .iter()
        .filter(|d| !may_race(d))
        .flat_map(|d| d.codes())
        .collect();
    for racing in program.diagnostics.iter().filter(may_race) {
        if trace_codes.contains(racing.code) {
            program_codes.insert(racing.code);
        }
    }
    if trace_codes != program_codes {
        return Err(format!(
            "convert changed the findings: the trace reports {trace_codes:?}, the converted program {program_codes:?}"
        ));
    }
    Ok(())
}

fn plans(input: &[u8]) -> Result<(), String> {
    let mut sources = Sources::default();
    let checked = check_sync_bytes(&mut sources, "fuzz.sync", input);
    renders(&checked, &sources)?;
    if checked.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        return Ok(()); // verify-then-run refuses it
    }
    let params = checked.program.params.iter().map(|p| p.min).collect();
    let exec = instantiate(&checked.program, params);
    let plan = Plan::new(&exec);
    let _ = plan.call_count();
    Ok(())
}
