use std::collections::{BTreeMap, HashSet};

use super::{CorePath, GmCopy, Region, Step, core_name, core_paths, for_target, launches};
use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::exec::CoreEnv;
use crate::model::{Op, Program, SubKernel};
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A `DataCopy` that a core runs after its `AscendC::SetNextTaskStart` and whose
    /// global-memory bytes overlap bytes the next sub-kernel of the same SuperKernel
    /// reads or writes (at least one side writing). Copies after the call that touch
    /// only memory the next sub-kernel leaves alone are fine: that overlap is what the
    /// API is for.
    ///
    /// Path-based: every core's path is walked for every TilingKey and every value of
    /// the parameters kernel code reads, with each copy's byte range evaluated for that
    /// core; the next sub-kernel's footprint is every copy of any of its cores and
    /// TilingKeys. Every copy after the call counts, whatever its pipe, as the
    /// documentation asks for the call after the operator's last data move.
    ///
    /// ## Why is this a bug
    /// SuperKernel sub-kernels are separated by a barrier; `SetNextTaskStart` lifts it
    /// early, so "the instructions after this call run in parallel with the next
    /// sub-kernel". The documentation leaves it to the developer to make sure they do
    /// not interfere with it. A copy-out after the call races the next sub-kernel's
    /// reads of the same bytes, which can then see stale data: a silent precision bug
    /// with no error and no hang (on Atlas A3 and Ascend 950; A2 and 310P ignore the call, where
    /// this is reported as a warning).
    ///
    /// ## Example
    /// ```text
    /// subkernel add_custom {
    ///     AscendC::DataCopy(y[tile..tile + 512], UB);
    ///     AscendC::SetNextTaskStart();
    ///     AscendC::DataCopy(y[tile + 512..tile + 1 KiB], UB);   // relu_custom reads y
    /// }
    /// subkernel relu_custom {
    ///     AscendC::WaitPreTaskEnd();
    ///     AscendC::DataCopy(UB, y[tile..tile + 1 KiB]);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Call `SetNextTaskStart` after the last data move that touches memory the next
    /// sub-kernel uses.
    pub struct NextTaskStartBeforeLastTransfer;
    code = "SG403",
    name = "next-task-start-before-last-transfer",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let program = context.program;
    let mut reported: HashSet<Span> = HashSet::new();
    for superkernel in &program.superkernels {
        let launches = launches(program, superkernel);
        for pair in superkernel.subkernels.windows(2) {
            let (sub, next) = (&pair[0], &pair[1]);
            for launch in &launches {
                let (Some(paths), Some(next_paths)) =
                    (core_paths(program, sub, launch), core_paths(program, next, launch))
                else {
                    continue;
                };
                if paths.iter().all(|p| p.first_start().is_none()) {
                    continue;
                }
                let footprint = Footprint::new(&next_paths);
                for path in &paths {
                    let Some((at, start)) = path.first_start() else {
                        continue;
                    };
                    for step in &path.steps[at + 1..] {
                        let Step::Copy(copy) = step else { continue };
                        if reported.contains(&copy.op.span) {
                            continue;
                        }
                        if let Some((theirs, their_core)) = footprint.conflict(copy) {
                            reported.insert(copy.op.span.clone());
                            let conflict = Conflict {
                                sub,
                                next,
                                start,
                                core: &path.core,
                                ours: copy,
                                theirs,
                                their_core,
                            };
                            out.push(for_target(program, launch.note(conflict.diagnostic(program))));
                        }
                    }
                }
            }
        }
    }
}

/// A copy and the core that runs it.
type Located<'p> = (GmCopy<'p>, CoreEnv);

/// The next sub-kernel's copies, per region sorted by start, for overlap queries.
struct Footprint<'p> {
    /// All copies (`.0`) and the writes only (`.1`).
    regions: BTreeMap<Region, (Intervals<'p>, Intervals<'p>)>,
}

impl<'p> Footprint<'p> {
    fn new(paths: &[CorePath<'p>]) -> Self {
        let mut all: BTreeMap<Region, (Vec<Located<'p>>, Vec<Located<'p>>)> = BTreeMap::new();
        for path in paths {
            for step in &path.steps {
                if let Step::Copy(copy) = step {
                    let entry = all.entry(copy.region).or_default();
                    entry.0.push((*copy, path.core));
                    if copy.write {
                        entry.1.push((*copy, path.core));
                    }
                }
            }
        }
        let regions = all
            .into_iter()
            .map(|(region, (any, writes))| (region, (Intervals::new(any), Intervals::new(writes))))
            .collect();
        Footprint { regions }
    }

    /// A copy of the next sub-kernel that conflicts with `copy`: overlapping bytes, one
    /// of the two writing.
    fn conflict(&self, copy: &GmCopy) -> Option<(&GmCopy<'p>, &CoreEnv)> {
        let (any, writes) = self.regions.get(&copy.region)?;
        let candidates = if copy.write { any } else { writes };
        candidates.overlapping(copy.start, copy.end)
    }
}

/// Intervals sorted by start, with the running maximum of their ends.
struct Intervals<'p> {
    entries: Vec<Located<'p>>,
    /// `widest[i]`: the entry among `0..=i` with the largest end (the first on ties).
    widest: Vec<usize>,
}

impl<'p> Intervals<'p> {
    fn new(mut entries: Vec<Located<'p>>) -> Self {
        entries.sort_by_key(|(c, _)| c.start);
        let mut widest: Vec<usize> = Vec::with_capacity(entries.len());
        for (i, (copy, _)) in entries.iter().enumerate() {
            match widest.last() {
                Some(&best) if entries[best].0.end >= copy.end => widest.push(best),
                _ => widest.push(i),
            }
        }
        Intervals { entries, widest }
    }

    /// An entry overlapping `start..end`, if any.
    fn overlapping(&self, start: i64, end: i64) -> Option<(&GmCopy<'p>, &CoreEnv)> {
        let before_end = self.entries.partition_point(|(c, _)| c.start < end);
        let best = *self.widest.get(before_end.checked_sub(1)?)?;
        let (copy, core) = &self.entries[best];
        (copy.end > start).then_some((copy, core))
    }
}

/// A copy after the early start and the next sub-kernel's copy it overlaps.
struct Conflict<'a, 'p> {
    sub: &'p SubKernel,
    next: &'p SubKernel,
    start: &'p Op,
    core: &'a CoreEnv,
    ours: &'a GmCopy<'p>,
    theirs: &'a GmCopy<'p>,
    their_core: &'a CoreEnv,
}

impl Conflict<'_, '_> {
    fn diagnostic(&self, program: &Program) -> Diagnostic {
        let (sub, next) = (&self.sub.name, &self.next.name);
        let ours = self.ours.bytes(program);
        let theirs = self.theirs.bytes(program);
        let consequence = match (self.ours.write, self.theirs.write) {
            (true, false) => format!("{next} can read those bytes before this copy writes them (stale data)"),
            (true, true) => "the two writes race, and which one lands last depends on timing".to_string(),
            _ => format!("this copy can read bytes {next} has already overwritten"),
        };
        Diagnostic::new(
            &NextTaskStartBeforeLastTransfer::INFO,
            self.ours.op.span.clone(),
            format!(
                "data race with the next sub-kernel: {sub} {} {ours} after SetNextTaskStart let {next} start, and {next} {} {theirs}: {consequence}",
                self.ours.verb(),
                self.theirs.verb(),
            ),
        )
        .with_label(format!("{} {ours} on {}, after the early start", self.ours.verb(), core_name(self.core)))
        .with_related(
            self.start.span.clone(),
            format!("early start: what {} does after this overlaps {next}", core_name(self.core)),
        )
        .with_related(
            self.theirs.op.span.clone(),
            format!("{next} {} {theirs} here, on {}", self.theirs.verb(), core_name(self.their_core)),
        )
        .with_help(format!(
            "move SetNextTaskStart after this DataCopy: after the last data move that touches memory {next} uses"
        ))
    }
}
