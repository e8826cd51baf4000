//! Baselines for legacy code: `--write-baseline FILE` records the findings of today
//! by fingerprint (rule, file, text of the primary line, occurrence), `--baseline FILE`
//! reports only findings not in it, so new code is held to the rules while accepted
//! old findings are fixed file by file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use syncguard_analyzer::render::fingerprints;
use syncguard_analyzer::{Diagnostic, Sources};

/// What `check` does with a baseline.
#[derive(Clone, Debug, Default)]
pub struct BaselineArgs {
    /// Report only findings not in this baseline.
    pub compare: Option<PathBuf>,
    /// Record the findings of this run here.
    pub write: Option<PathBuf>,
}

const VERSION: u64 = 1;

/// Drop the findings `args.compare` holds (said on stderr, with entries no longer
/// found), then write `args.write`. Errors name the file.
pub fn apply(args: &BaselineArgs, diagnostics: &mut Vec<Diagnostic>, sources: &mut Sources) -> Result<(), String> {
    if args.compare.is_none() && args.write.is_none() {
        return Ok(());
    }
    // Fingerprints read the primary lines, also of streamed traces.
    sources.load_deferred();
    let prints = fingerprints(diagnostics, sources);
    if let Some(path) = &args.write {
        write(path, diagnostics, &prints, sources)?;
        eprintln!(
            "syncguard: wrote {} finding{} to the baseline {}",
            diagnostics.len(),
            if diagnostics.len() == 1 { "" } else { "s" },
            path.display()
        );
    }
    if let Some(path) = &args.compare {
        let known = read(path)?;
        let mut hidden = 0;
        let mut seen = HashSet::new();
        let mut keep = prints.iter().map(|print| {
            seen.insert(print.clone());
            !known.contains(print)
        });
        diagnostics.retain(|_| {
            let kept = keep.next().unwrap_or(true);
            hidden += usize::from(!kept);
            kept
        });
        let fixed = known.iter().filter(|print| !seen.contains(*print)).count();
        eprintln!(
            "syncguard: {hidden} finding{} in the baseline {} not shown{}",
            if hidden == 1 { "" } else { "s" },
            path.display(),
            if fixed > 0 {
                format!("; {fixed} of its entries are no longer found (`--write-baseline` refreshes it)")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

fn write(path: &Path, diagnostics: &[Diagnostic], prints: &[String], sources: &Sources) -> Result<(), String> {
    let findings: Vec<Value> = diagnostics
        .iter()
        .zip(prints)
        .map(|(diagnostic, print)| {
            let file = sources.get(diagnostic.primary.file);
            let (line, _) = file.line_col(diagnostic.primary.range.start);
            json!({
                "fingerprint": print,
                "code": diagnostic.code,
                "file": file.path,
                "line": line,
                "message": diagnostic.message,
            })
        })
        .collect();
    let document = json!({ "syncguard_baseline": VERSION, "findings": findings });
    let text = serde_json::to_string_pretty(&document).expect("JSON values always serialize");
    std::fs::write(path, text + "\n").map_err(|err| format!("{}: {err}", path.display()))
}

fn read(path: &Path) -> Result<HashSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let document: Value =
        serde_json::from_str(&text).map_err(|err| format!("{}: not a syncguard baseline: {err}", path.display()))?;
    if document["syncguard_baseline"].as_u64() != Some(VERSION) {
        return Err(format!(
            "{}: not a syncguard baseline of version {VERSION} (`--write-baseline` writes one)",
            path.display()
        ));
    }
    document["findings"]
        .as_array()
        .ok_or_else(|| format!("{}: no `findings` list", path.display()))?
        .iter()
        .map(|finding| {
            finding["fingerprint"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{}: a finding without a `fingerprint`", path.display()))
        })
        .collect()
}
