//! Malformed `.sync` inputs: each gives clear, located SG001/SG003 diagnostics and no
//! panic. The rendered text is snapshotted.

use syncguard_analyzer::render::{TextOptions, render_text};
use syncguard_analyzer::{Sources, check_sync_bytes};

#[test]
fn malformed_inputs_render_located_messages() {
    insta::glob!("malformed/*.sync", |path| {
        let bytes = std::fs::read(path).unwrap();
        let name = format!("malformed/{}", path.file_name().unwrap().to_string_lossy());
        let mut sources = Sources::default();
        let checked = check_sync_bytes(&mut sources, name, &bytes);
        assert!(
            !checked.diagnostics.is_empty(),
            "{} must produce at least one diagnostic",
            path.display()
        );
        assert!(
            checked
                .diagnostics
                .iter()
                .all(|d| d.code == "SG001" || d.code == "SG003"),
            "malformed input should only give syntax or name errors"
        );
        insta::assert_snapshot!(render_text(&checked.diagnostics, &sources, TextOptions::default()));
    });
}
