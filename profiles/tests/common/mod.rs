//! What the profile reader tests share: the fixture folders under `tests/fixtures/profiles`.

use std::path::{Path, PathBuf};

use syncguard_profiles::TimelineInput;

pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/profiles")
        .join(relative)
}

/// The `trace_view.json` timelines of the Ascend cluster fixture `case`, one per rank
/// folder, in path order.
#[allow(dead_code)] // not every test binary reads the Ascend clusters
pub fn ascend_cluster(case: &str) -> Vec<TimelineInput> {
    let root = fixture(&format!("ascend/{case}"));
    let mut inputs: Vec<TimelineInput> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("ASCEND_PROFILER_OUTPUT/trace_view.json"))
        .map(|path| TimelineInput {
            display: path.display().to_string(),
            path,
            unsaved: None,
        })
        .collect();
    inputs.sort_by(|a, b| a.path.cmp(&b.path));
    inputs
}
