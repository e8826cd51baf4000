use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Execution, NodeId};
use crate::hb::HappensBefore;
use crate::model::{CoreClaim, OpKind};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// Collective kernels launched with batch scheduling (`schemMode` 1: a kernel
    /// starts only once all its cores are free at the same time) that may be ready to
    /// start together on one device while their vector cores add up to more than the
    /// device has (`target`: A2 and A3 have 48 AIV cores per die). "May be ready
    /// together" is decided on the happens-before graph: no chain of stream order,
    /// event, notify or value waits orders one of them after another, so there is an
    /// order of the device's work in which all of them are ready at once (a set of
    /// pairwise unordered operations can always be ready together). Also a single
    /// batch-scheduled kernel that needs more cores than the device has.
    ///
    /// ## Why is this a bug
    /// A collective's kernel waits inside for the other ranks and holds its cores while
    /// it waits. When the scheduler starts one of the ready collectives on this rank and
    /// a different one on a peer, each waits for the other rank's matching kernel, and
    /// that kernel cannot get its cores: both ranks hang, and the job dies with a
    /// timeout far from the cause. Whether it happens depends on which kernel each
    /// rank's scheduler picks first, so it comes and goes between runs.
    ///
    /// ## Example
    /// ```text
    /// target A3;                     // 48 AIV cores
    /// kernel(s1, "aiv_all_gather", vectorCores: 48, schemMode: 1, collective: 1);
    /// kernel(s2, "MoeDistributeDispatch", vectorCores: 16, schemMode: 1, collective: 1);
    /// ```
    ///
    /// ## Fix
    /// Order the collectives (an event record after one and a wait before the other),
    /// or launch them with fewer blocks so that together they fit the device's cores.
    pub struct CollectivesExceedCores;
    code = "SG505",
    name = "collectives-exceed-cores",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// Most steps the search for the heaviest set of kernels ready together may take on
/// one rank, and the most kernels a set it builds may hold (its recursion depth); past
/// either, the rule reports the heaviest set found and says the search stopped.
const MAX_SEARCH_STEPS: usize = 1 << 20;
const MAX_SET_SIZE: usize = 256;

/// A batch-scheduled collective and the vector cores it needs.
#[derive(Clone, Copy)]
struct Claimant {
    node: NodeId,
    cores: u32,
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    let Some(physical) = exec.program.settings.target.cores() else {
        return;
    };
    for (rank, mut claimants) in claimants_by_rank(analysis) {
        // Each kernel is reported once: the heaviest set first, then the heaviest of
        // the kernels left.
        loop {
            let search = heaviest_ready_together(analysis.hb, &claimants);
            let total: u32 = search.set.iter().map(|claimant| claimant.cores).sum();
            if total <= physical.aiv {
                break;
            }
            out.push(report(analysis, rank, &search, total, physical.aiv));
            claimants.retain(|claimant| search.set.iter().all(|taken| taken.node != claimant.node));
        }
    }
}

/// The batch-scheduled collectives that run, by rank.
fn claimants_by_rank(analysis: &Analysis) -> BTreeMap<u32, Vec<Claimant>> {
    let exec = analysis.exec;
    let mut by_rank: BTreeMap<u32, Vec<Claimant>> = BTreeMap::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        let Some(claim) = claim_of(exec, id) else {
            continue;
        };
        // A kernel stuck behind a hang never asks for cores (the hang is reported).
        if claim.all_at_once && claim.collective && claim.vector_cores > 0 && analysis.hb.executes(id) {
            by_rank.entry(node.rank(exec)).or_default().push(Claimant {
                node: id,
                cores: claim.vector_cores,
            });
        }
    }
    by_rank
}

fn claim_of(exec: &Execution, node: NodeId) -> Option<CoreClaim> {
    match &exec.node(node).op.kind {
        OpKind::Kernel { launch, .. } => launch.cores,
        _ => None,
    }
}

/// The heaviest set of kernels that may be ready together, and whether the search
/// finished.
struct Search {
    set: Vec<Claimant>,
    complete: bool,
}

/// A maximum-weight set of pairwise unordered kernels (an antichain of happens-before),
/// by branch and bound: kernels heaviest first, a branch cut when even every kernel
/// left that is unordered with the set would not beat the best set found.
fn heaviest_ready_together(hb: &HappensBefore<'_, '_>, claimants: &[Claimant]) -> Search {
    let mut sorted = claimants.to_vec();
    sorted.sort_by(|a, b| b.cores.cmp(&a.cores).then(a.node.cmp(&b.node)));
    let unordered = |a: NodeId, b: NodeId| !hb.happens_before(a, b) && !hb.happens_before(b, a);
    let mut search = Searcher {
        claimants: &sorted,
        unordered: &unordered,
        best: Vec::new(),
        best_cores: 0,
        steps: 0,
        cut_short: false,
    };
    let all: Vec<usize> = (0..sorted.len()).collect();
    search.extend(&mut Vec::new(), 0, &all);
    Search {
        set: search.best.iter().map(|&index| sorted[index]).collect(),
        complete: !search.cut_short,
    }
}

struct Searcher<'a> {
    claimants: &'a [Claimant],
    unordered: &'a dyn Fn(NodeId, NodeId) -> bool,
    best: Vec<usize>,
    best_cores: u32,
    steps: usize,
    /// A bound stopped the search before it was exhaustive.
    cut_short: bool,
}

impl Searcher<'_> {
    /// Try adding each of `candidates` (each unordered with every member of `set`) to
    /// `set`: one level of recursion per member, at most [`MAX_SET_SIZE`].
    fn extend(&mut self, set: &mut Vec<usize>, cores: u32, candidates: &[usize]) {
        if cores > self.best_cores {
            self.best_cores = cores;
            self.best = set.clone();
        }
        if set.len() >= MAX_SET_SIZE && !candidates.is_empty() {
            self.cut_short = true;
            return;
        }
        for (at, &next) in candidates.iter().enumerate() {
            self.steps += 1;
            if self.steps > MAX_SEARCH_STEPS {
                self.cut_short = true;
                return;
            }
            let bound: u32 = candidates[at..].iter().map(|&index| self.claimants[index].cores).sum();
            if cores + bound <= self.best_cores {
                return;
            }
            let node = self.claimants[next].node;
            let compatible: Vec<usize> = candidates[at + 1..]
                .iter()
                .copied()
                .filter(|&other| (self.unordered)(node, self.claimants[other].node))
                .collect();
            set.push(next);
            self.extend(set, cores + self.claimants[next].cores, &compatible);
            set.pop();
        }
    }
}

fn report(analysis: &Analysis, rank: u32, search: &Search, total: u32, physical: u32) -> Diagnostic {
    let exec = analysis.exec;
    let target = exec.program.settings.target.name();
    let first = search.set[0];
    let shown = |claimant: &Claimant| format!("{} ({} AIV cores)", exec.describe(claimant.node), claimant.cores);
    let mut diagnostic = if search.set.len() == 1 {
        Diagnostic::new(
            &CollectivesExceedCores::INFO,
            analysis.span(first.node),
            format!(
                "{} never starts: it is batch-scheduled on {} AIV cores, and {target} has {physical}",
                exec.describe(first.node),
                first.cores
            ),
        )
        .with_label("waits for cores that do not exist")
        .with_help(format!("launch it on at most {physical} vector cores"))
    } else {
        let mut kernels: Vec<String> = search.set.iter().map(shown).collect();
        let last = kernels.pop().unwrap_or_default();
        Diagnostic::new(
            &CollectivesExceedCores::INFO,
            analysis.span(first.node),
            format!(
                "{} and {last} may be ready together and are batch-scheduled on {total} AIV cores, more than the {physical} of {target}: the one the scheduler starts first holds its cores while it waits for the other ranks, the rest cannot start, and the ranks hang",
                kernels.join(", "),
            ),
        )
        .with_label(format!("needs {} of {physical} AIV cores at once", first.cores))
        .with_help(
            "order the collectives (record an event after one, wait on it before the other), or launch them with fewer blocks so that together they fit",
        )
    };
    for claimant in &search.set[1..] {
        diagnostic = diagnostic.with_related(
            analysis.span(claimant.node),
            format!(
                "needs {} AIV cores at once; nothing orders it with the others",
                claimant.cores
            ),
        );
    }
    if exec.ranks > 1 {
        diagnostic = diagnostic.with_note(format!("on rank {rank}"));
    }
    if !search.complete {
        diagnostic = diagnostic.with_note(format!(
            "the search for the heaviest set stopped at its bound ({MAX_SEARCH_STEPS} steps, sets of {MAX_SET_SIZE} kernels): a heavier set may exist"
        ));
    }
    diagnostic
}

#[cfg(test)]
mod tests {
    use crate::{Sources, check_sync_bytes};

    /// `streams` unordered one-core collectives, each on its own stream.
    fn unordered_collectives(streams: usize) -> String {
        let mut text = String::from("target A3;\n");
        for stream in 0..streams {
            text.push_str(&format!("let s{stream} = aclrtCreateStream();\n"));
            text.push_str(&format!(
                "kernel(s{stream}, \"aiv_all_reduce\", vectorCores: 1, schemMode: 1, collective: 1);\n"
            ));
        }
        text.push_str("aclrtSynchronizeDevice();\n");
        text
    }

    #[test]
    fn a_set_past_the_depth_bound_is_reported_as_found_so_far() {
        let mut sources = Sources::default();
        let checked = check_sync_bytes(&mut sources, "wide.sync", unordered_collectives(300).as_bytes());
        let found: Vec<_> = checked.diagnostics.iter().filter(|d| d.code == "SG505").collect();
        assert!(!found.is_empty());
        assert!(
            found[0].notes.iter().any(|note| note.contains("stopped at its bound")),
            "{:?}",
            found[0].notes
        );
        // Small enough for the whole search: no such note.
        let checked = check_sync_bytes(&mut sources, "narrow.sync", unordered_collectives(60).as_bytes());
        let found: Vec<_> = checked.diagnostics.iter().filter(|d| d.code == "SG505").collect();
        assert!(found.iter().all(|d| d.notes.is_empty()), "{:?}", found[0].notes);
    }
}
