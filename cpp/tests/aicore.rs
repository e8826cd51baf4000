//! Ascend C kernels read as the pipe program of every AI core: each fixture in
//! `tests/fixtures/kernels/aicore` becomes an `aicore` block that lowers without a
//! diagnostic into `Program.kernels`; the printed block and the notes on what was not
//! followed are snapshots.

use std::path::{Path, PathBuf};

use syncguard_cpp::{Options, SourceText, read_project};
use syncguard_model::source::FileId;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernels/aicore");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the fixture folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cpp"))
        .collect();
    files.sort();
    files
}

/// The printed programs of a file's entry points and the notes on what was not followed.
fn converted(path: &Path) -> (String, usize) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).expect("the fixture reads");
    let project = read_project(vec![SourceText { path: name, text }], Options::default());
    let mut out = String::new();
    let mut kernels = 0;
    for entry in project.entries() {
        let lowered = project.space().lower(&entry, &[FileId(0)]);
        assert!(
            lowered.diagnostics.is_empty(),
            "{}: {:?}",
            path.display(),
            lowered.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
        );
        kernels += lowered.program.kernels.len();
        out.push_str(&project.space().to_sync(&entry));
        for item in &entry.unresolved {
            out.push_str(&format!("// not followed: {}\n", item.message));
        }
    }
    (out, kernels)
}

#[test]
fn every_kernel_fixture_is_an_aicore_block() {
    let files = fixtures();
    assert!(files.len() >= 5, "only {} fixtures", files.len());
    for path in files {
        let (text, kernels) = converted(&path);
        assert_eq!(kernels, 1, "{}: {text}", path.display());
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        insta::assert_snapshot!(stem, text);
    }
}

/// `--cce-auto-sync=off` in the kernel's compile command: the compiler inserts no
/// scalar-pipe syncs, which the block says.
#[test]
fn a_compile_command_turning_auto_sync_off_is_read() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernels/aicore");
    let path = dir.join("low_level_flags.cpp");
    let path_text = path.to_string_lossy().into_owned();
    let database = serde_json::json!([{
        "directory": dir.to_string_lossy(),
        "file": path_text,
        "arguments": ["ccec", "--cce-auto-sync=off", "-c", path_text],
    }]);
    let db = syncguard_cpp::CompileDb::parse(&dir.join("compile_commands.json"), &database.to_string())
        .expect("the database reads");
    let options = Options {
        compile_db: Some(std::sync::Arc::new(db)),
        ..Options::default()
    };
    let text = std::fs::read_to_string(&path).expect("the fixture reads");
    let project = read_project(vec![SourceText { path: path_text, text }], options);
    let entries = project.entries();
    let printed: String = entries.iter().map(|entry| project.space().to_sync(entry)).collect();
    assert!(printed.contains("auto_sync: false"), "{printed}");
    let lowered = project.space().lower(&entries[0], &[FileId(0)]);
    assert!(lowered.program.kernels.iter().all(|kernel| !kernel.auto_sync));
}
