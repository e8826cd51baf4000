//! The language reference documents every API the catalogue accepts.

#[test]
fn sync_md_names_every_catalogued_api() {
    let reference = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/grammar/SYNC.md")).unwrap();
    let missing: Vec<&str> = syncguard_analyzer::api::APIS
        .iter()
        .map(|api| api.name)
        .filter(|name| {
            let short = name.rsplit("::").next().unwrap_or(name);
            !reference.contains(&format!("{name}(")) && !reference.contains(&format!("{short}("))
        })
        .collect();
    assert!(missing.is_empty(), "grammar/SYNC.md does not document: {missing:?}");
}
