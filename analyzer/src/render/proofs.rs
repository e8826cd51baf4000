//! What z3 proved for every parameter value, and what it left to the concrete runs:
//! one line each in text output, the `proved` and `unproved` lists in JSON.

use serde_json::{Value, json};

use crate::smt::{Proof, Unproved};
use crate::source::{Sources, Span};

/// "proved notify-balance for N in 2..=1024 (ring.sync:10:1)", one line per property;
/// with `explain`, the facts each proof rests on, indented below it.
pub fn render_proofs(proofs: &[Proof], unproved: &[Unproved], sources: &Sources, explain: bool) -> String {
    let mut out = String::new();
    for proof in proofs {
        out.push_str(&format!(
            "proved {} for {} ({})\n",
            proof.property,
            proof.scope,
            location(&proof.span, sources)
        ));
        if explain {
            for (span, why) in &proof.because {
                out.push_str(&format!("    because {}: {why}\n", location(span, sources)));
            }
        }
    }
    for entry in unproved {
        let checked = checked_only_with(&entry.checked);
        out.push_str(&format!(
            "not proved {} ({}): {}{checked}\n",
            entry.property,
            location(&entry.span, sources),
            entry.reason
        ));
    }
    out
}

pub(super) fn proofs_json(proofs: &[Proof], sources: &Sources) -> Value {
    proofs
        .iter()
        .map(|proof| {
            let because: Vec<Value> = proof
                .because
                .iter()
                .map(|(span, why)| json!({"location": location(span, sources), "message": why}))
                .collect();
            json!({
                "property": proof.property,
                "for": proof.scope,
                "location": location(&proof.span, sources),
                "because": because,
            })
        })
        .collect()
}

pub(super) fn unproved_json(unproved: &[Unproved], sources: &Sources) -> Value {
    unproved
        .iter()
        .map(|entry| {
            json!({
                "property": entry.property,
                "reason": entry.reason,
                "location": location(&entry.span, sources),
                "checked": entry.checked,
            })
        })
        .collect()
}

/// "path:line:column".
/// "; checked only with N = 2; N = 3", or the count and the first and last of many
/// (empty when the concrete runs checked none).
pub(crate) fn checked_only_with(values: &[String]) -> String {
    match values {
        [] => String::new(),
        few @ [_] | few @ [_, _] | few @ [_, _, _] => format!("; checked only with {}", few.join("; ")),
        [first, .., last] => format!(
            "; checked only with {} parameter assignments ({first} to {last})",
            values.len()
        ),
    }
}

fn location(span: &Span, sources: &Sources) -> String {
    let (file, line, column) = super::json::position(span, sources, false);
    format!("{file}:{line}:{column}")
}
