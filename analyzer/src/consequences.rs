//! One mistake reads as one problem: a finding that only follows from another finding
//! of the same run is folded into it, as a note and a related location, the way rustc
//! attaches notes to the error that causes them. The folded codes stay on the cause
//! (`Diagnostic::consequences`), so nothing found is lost.

use crate::diagnostic::{Diagnostic, Related, Severity};
use crate::rules::deadlocks::host_sync_hang::STUCK_HERE;

/// Waits that block forever: what a host synchronize behind them hangs on.
const STUCK_WAITS: [&str; 3] = ["SG502", "SG104", "SG501"];

/// Fold consequences into their causes, in place.
pub(crate) fn fold(found: &mut Vec<Diagnostic>) {
    let mut index = 0;
    while index < found.len() {
        match cause_of(found, index) {
            Some(cause) => {
                let consequence = found.remove(index);
                let cause = if cause > index { cause - 1 } else { cause };
                attach(&mut found[cause], consequence);
            }
            None => index += 1,
        }
    }
}

/// The finding that `found[index]` follows from, if any:
/// - a host synchronize that blocks forever (SG503) on work stuck at a wait that waits
///   forever (SG502, SG104, SG501): the hang only shows where the wait blocks;
/// - the unbalanced count (SG301) of a wait that waits forever (SG502): the same
///   missing record, counted;
/// - a wait that waits forever (SG502) on a signal another finding keeps from being
///   sent (`Diagnostic::starves`: a batch never submitted, a record the runtime rejects
///   for its notify index, a record naming a handle past the end of its array);
/// - a data race (SG601, SG602) that another finding leaves unordered
///   (`Diagnostic::unorders`: a memory-value wait that passes at once).
fn cause_of(found: &[Diagnostic], index: usize) -> Option<usize> {
    let finding = &found[index];
    let (at, causes): (&Related, &[&str]) = match finding.code {
        "SG503" => {
            let stuck = finding.related.first().filter(|r| r.message.ends_with(STUCK_HERE))?;
            (stuck, &STUCK_WAITS)
        }
        "SG502" => {
            return found
                .iter()
                .position(|d| d.severity == Severity::Error && d.starves.contains(&finding.primary));
        }
        "SG601" | "SG602" => {
            return found
                .iter()
                .position(|d| d.severity == Severity::Error && d.unorders.contains(&finding.primary));
        }
        "SG301" => {
            // The wait's own SG502, or the finding it was folded into.
            return found.iter().position(|d| {
                d.code == "SG502" && d.primary == finding.primary || d.starves.contains(&finding.primary)
            });
        }
        _ => return None,
    };
    // The stuck wait's own finding, or the one it was folded into.
    found.iter().position(|d| {
        d.severity == Severity::Error
            && (causes.contains(&d.code) && d.primary == at.span || d.starves.contains(&at.span))
    })
}

fn attach(cause: &mut Diagnostic, consequence: Diagnostic) {
    let Diagnostic {
        code,
        name,
        message,
        primary,
        label,
        notes,
        consequences,
        ..
    } = consequence;
    // The consequence's own consequences (a hang's unbalanced count) follow it.
    let nested = notes.into_iter().filter(|note| note.starts_with(CONSEQUENCE));
    // The same hang on several ranks reads the same: said once.
    for note in std::iter::once(format!("{CONSEQUENCE}{code} {name}): {message}")).chain(nested) {
        if !cause.notes.contains(&note) {
            cause.notes.push(note);
        }
    }
    // One label per location: two consequences at the same call say the same thing.
    if primary != cause.primary && !label.is_empty() && !cause.related.iter().any(|r| r.span == primary) {
        cause.related.push(Related {
            span: primary,
            message: label,
        });
    }
    cause.consequences.push(code);
    cause.consequences.extend(consequences);
}

/// How a folded finding's note begins.
const CONSEQUENCE: &str = "consequence (";
