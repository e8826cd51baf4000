use std::collections::HashSet;

use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::{CoreSyncs, Launch, RunContext};
use crate::rules::declare_rule;
use crate::source::Span;
use syncguard_model::kernel::{CoreType, KOpKind};

use super::{launch_note, times};

declare_rule! {
    /// ## What it detects
    /// A cross-core flag whose sets and waits do not balance between the cores that
    /// share it, for some core index, core type, TilingKey and tiling value (the runs
    /// walked, and z3 over every value where the counts can be encoded):
    /// - mode 2 (`CrossCoreSetFlag<2, pipe>`): the AIC of a block sets it a different
    ///   number of times than each of its AIVs waits for it, or an AIV sets it a
    ///   different number of times than its AIC waits;
    /// - mode 0 (all cores of one type): cores of the type set or wait for it different
    ///   numbers of times, or a core sets it more or fewer times than it waits;
    /// - mode 1 (the AIVs of one block): an AIV sets it a different number of times than
    ///   it waits.
    ///
    /// ## Why is this a bug
    /// Each flag id is a counter: a completed set increments it and a wait decrements
    /// it, blocking while it is zero. One wait more than the sets blocks that core for
    /// good (the kernel hangs until the AI Core timeout); one set more leaves the counter
    /// up for the next kernel, whose first wait on that id then returns at once (the
    /// "cube pushes ≠ vector pops" deadlock of mixed kernels whose loop bounds differ
    /// between the cube and vector halves).
    ///
    /// ## Example
    /// ```text
    /// if ASCEND_IS_AIC { for i in 0..n { AscendC::CrossCoreSetFlag<2, PIPE_FIX>(3); } }
    /// if ASCEND_IS_AIV { for i in 0..n - 1 { AscendC::CrossCoreWaitFlag(3); } }
    /// ```
    ///
    /// ## Fix
    /// Make both sides count the same: derive their loop bounds from one value, and
    /// pair every set with one wait on each core that takes part.
    pub struct CrossCoreCountMismatch;
    code = "SG851",
    name = "cross-core-count-mismatch",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

struct Side<'a, 'p> {
    run: &'a RunContext,
    syncs: &'a CoreSyncs<'p>,
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let mut reported = HashSet::new();
    for launch in &context.kernels().launches {
        let kernel = &context.program.kernels[launch.kernel];
        let cores: Vec<Side> = launch
            .cores
            .iter()
            .filter(|(_, _, complete)| *complete)
            .map(|(run, syncs, _)| Side { run, syncs })
            .collect();
        let flags: std::collections::BTreeSet<i64> = cores.iter().flat_map(|c| c.syncs.flags.keys().copied()).collect();
        for flag in flags {
            if reported.contains(&(launch.kernel, flag)) {
                continue;
            }
            // The set's mode decides who takes part; a launch may reach no set at all.
            let mode = crate::kernel::calls(kernel)
                .iter()
                .find_map(|op| match &op.kind {
                    KOpKind::CrossCoreSetFlag { mode, flag: f, .. } if f.as_const() == Some(flag) => Some(*mode),
                    _ => None,
                })
                .unwrap_or(0);
            let aiv_per_block = kernel.kind.per_block(CoreType::Aiv);
            if let Some(diagnostic) = mismatch((&kernel.name, &kernel.span), launch, &cores, flag, mode, aiv_per_block)
            {
                reported.insert((launch.kernel, flag));
                out.push(diagnostic);
            }
        }
    }
}

fn mismatch(
    name: (&str, &Span),
    launch: &Launch,
    cores: &[Side],
    flag: i64,
    mode: u8,
    aiv_per_block: i64,
) -> Option<Diagnostic> {
    let get = |side: &Side| side.syncs.flags.get(&flag).map_or((0, 0), |f| (f.sets, f.waits));
    match mode {
        2 => {
            for aic in cores.iter().filter(|c| c.run.core == CoreType::Aic) {
                let (aic_sets, aic_waits) = get(aic);
                let block = aic.run.block;
                for aiv in cores
                    .iter()
                    .filter(|c| c.run.core == CoreType::Aiv && c.run.block / aiv_per_block == block)
                {
                    let (aiv_sets, aiv_waits) = get(aiv);
                    if aic_sets != aiv_waits {
                        return Some(report(
                            name,
                            launch,
                            flag,
                            (aic, aic_sets, "sets"),
                            (aiv, aiv_waits, "waits for"),
                        ));
                    }
                    if aiv_sets != aic_waits {
                        return Some(report(
                            name,
                            launch,
                            flag,
                            (aiv, aiv_sets, "sets"),
                            (aic, aic_waits, "waits for"),
                        ));
                    }
                }
            }
            None
        }
        _ => {
            for side in cores {
                let (sets, waits) = get(side);
                if sets != waits && (sets > 0 || waits > 0) {
                    return Some(report(
                        name,
                        launch,
                        flag,
                        (side, sets, "sets"),
                        (side, waits, "waits for"),
                    ));
                }
            }
            if mode == 0 {
                for core in [CoreType::Aic, CoreType::Aiv] {
                    let of_type: Vec<&Side> = cores.iter().filter(|c| c.run.core == core).collect();
                    let Some(first) = of_type.first() else { continue };
                    let expected = get(first).0;
                    if let Some(other) = of_type.iter().find(|c| get(c).0 != expected) {
                        return Some(report(
                            name,
                            launch,
                            flag,
                            (first, expected, "sets"),
                            (other, get(other).0, "sets"),
                        ));
                    }
                }
            }
            None
        }
    }
}

fn report<'p>(
    (name, span): (&str, &Span),
    launch: &Launch,
    flag: i64,
    a: (&Side<'_, 'p>, u32, &str),
    b: (&Side<'_, 'p>, u32, &str),
) -> Diagnostic {
    let call = |side: &Side<'_, 'p>, verb: &str| -> Option<&'p syncguard_model::kernel::KOp> {
        let count = side.syncs.flags.get(&flag);
        if verb == "sets" {
            count.and_then(|c| c.set_call)
        } else {
            count.and_then(|c| c.wait_call)
        }
    };
    let consequence = if b.2 == "waits for" && b.1 > a.1 {
        format!("kernel `{name}` hangs")
    } else if b.2 == "waits for" {
        format!("kernel `{name}` leaves cross-core flag {flag} set for the next kernel")
    } else {
        format!("kernel `{name}` hangs or leaves cross-core flag {flag} set")
    };
    let message = if std::ptr::eq(a.0, b.0) {
        format!(
            "{consequence}: {} sets cross-core flag {flag} {} but waits for it {}",
            a.0.run.describe(),
            times(a.1),
            times(b.1)
        )
    } else {
        format!(
            "{consequence}: {} {} cross-core flag {flag} {}, {} {} it {}",
            a.0.run.describe(),
            a.2,
            times(a.1),
            b.0.run.describe(),
            b.2,
            times(b.1)
        )
    };
    let side_label = |side: &(&Side, u32, &str)| format!("{} {} on {}", side.2, times(side.1), side.0.run.describe());
    // Point at the side that has calls: the one short of the other usually has none.
    let (primary, label, other) = match (call(b.0, b.2), call(a.0, a.2)) {
        (Some(p), r) => (p, side_label(&b), r.map(|r| (r, side_label(&a)))),
        (None, Some(p)) => (p, side_label(&a), None),
        (None, None) => return Diagnostic::new(&CrossCoreCountMismatch::INFO, span.clone(), message),
    };
    let mut diagnostic = Diagnostic::new(&CrossCoreCountMismatch::INFO, primary.span.clone(), message)
        .with_label(label)
        .with_help("make both sides count the same: derive their loop bounds and branches from one value, one wait per set on every core that takes part");
    if let Some((related, label)) = other.filter(|(r, _)| r.span != primary.span) {
        diagnostic = diagnostic.with_related(related.span.clone(), label);
    }
    if let Some(note) = launch_note(launch) {
        diagnostic = diagnostic.with_note(format!("found {note}"));
    }
    diagnostic
}
