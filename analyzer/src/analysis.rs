//! Running the rules on a Program: structural rules once, happens-before rules on every
//! concrete execution the parameter domains call for.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use crate::diagnostic::Diagnostic;
use crate::exec::{
    Cutoff, Execution, MAX_ISSUE_ORDERS, NodeId, WALK_STACK, instantiate, instantiate_with_outcomes, issue_orders,
    reorder,
};
use crate::hb::{ClockBudgetExceeded, HappensBefore};
use crate::model::{OpKind, Param, Program};
use crate::rules::{Check, RULES};
use crate::smt::{Proof, SmtOptions, Unproved};
use crate::source::Span;

/// What a structural (per-Program) rule sees.
pub struct ProgramContext<'p> {
    pub program: &'p Program,
    kernels: std::sync::OnceLock<crate::kernel::KernelFacts<'p>>,
}

impl<'p> ProgramContext<'p> {
    pub fn new(program: &'p Program) -> Self {
        ProgramContext {
            program,
            kernels: std::sync::OnceLock::new(),
        }
    }

    /// What the runs of the Program's kernels found, computed on first use.
    pub fn kernels(&self) -> &crate::kernel::KernelFacts<'p> {
        self.kernels
            .get_or_init(|| crate::kernel::KernelFacts::of(self.program))
    }
}

/// What a happens-before rule sees: one concrete execution and its graph.
pub struct Analysis<'a, 'p> {
    pub program: &'p Program,
    pub exec: &'a Execution<'p>,
    pub hb: &'a HappensBefore<'a, 'p>,
    pub smt: &'a SmtOptions,
}

impl Analysis<'_, '_> {
    /// The span of the call behind a node.
    pub fn span(&self, node: NodeId) -> Span {
        self.exec.node(node).op.span.clone()
    }

    /// "aclrtStreamWaitEvent on stream s2", "kernel `matmul` on stream s1" for messages.
    pub fn describe(&self, node: NodeId) -> String {
        self.exec.describe(node)
    }

    /// "buffer x", "the HCCL buffer of rank 1".
    pub fn memory_name(&self, memory: crate::exec::Memory) -> String {
        self.exec.memory_name(memory)
    }

    /// The first node of `agent` that never executes: where that agent is stuck.
    pub fn stuck_at(&self, agent: crate::exec::AgentId) -> Option<NodeId> {
        self.exec
            .agent(agent)
            .nodes
            .iter()
            .copied()
            .find(|&n| !self.hb.executes(n))
    }
}

/// Values each parameter takes in the concrete runs. Small domains are enumerated;
/// larger ones contribute their three smallest values (the parametric prover covers
/// the rest).
fn parameter_values(param: &Param) -> Vec<i64> {
    const ENUMERATED: i64 = 4;
    let upper = param.max.unwrap_or(i64::MAX);
    if upper.saturating_sub(param.min) < ENUMERATED {
        (param.min..=upper).collect()
    } else {
        (param.min..param.min.saturating_add(3)).collect()
    }
}

/// Most concrete runs per Program; beyond it the cartesian product is cut.
pub(crate) const MAX_ASSIGNMENTS: usize = 64;

/// Parameter assignments (values by `ParamId`) for the concrete runs: every combination
/// of the sampled values of the parameters `varies` selects; the others keep their
/// smallest value.
pub(crate) fn assignments(program: &Program, varies: impl Fn(usize) -> bool) -> Vec<Vec<i64>> {
    let mut all: Vec<Vec<i64>> = vec![program.params.iter().map(|p| p.min).collect()];
    for (index, param) in program.params.iter().enumerate() {
        if !varies(index) {
            continue;
        }
        let values = parameter_values(param);
        all = all
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |&v| {
                    let mut next = prefix.clone();
                    next[index] = v;
                    next
                })
            })
            .take(MAX_ASSIGNMENTS)
            .collect();
    }
    all
}

/// What the analysis of one Program found, and what it proved.
#[derive(Debug, Default)]
pub struct Analyzed {
    /// Every finding, deduplicated and sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// Properties z3 proved for every parameter value.
    pub proofs: Vec<Proof>,
    /// Properties the prover could not cover, each checked on the concrete runs instead.
    pub unproved: Vec<Unproved>,
}

/// Every finding of every non-frontend rule on `program`, deduplicated and sorted.
pub fn analyze(program: &Program) -> Vec<Diagnostic> {
    analyze_with(program, &SmtOptions::default()).diagnostics
}

/// [`analyze`], with the prover's options, returning what was proved as well.
pub fn analyze_with(program: &Program, options: &SmtOptions) -> Analyzed {
    let mut diagnostics = Vec::new();
    let sampled = assignments(program, |_| true);
    // The first run (the first sampled values, no query taken "done") is walked beside
    // the Program's rules and the prover, which it does not depend on.
    let (proved, mut first_run) = beside_first_run(program, &sampled[0], || {
        let context = ProgramContext::new(program);
        for rule in RULES {
            if let Check::Program(check) = rule.check {
                check(&context, &mut diagnostics);
            }
        }
        diagnostics.extend(unknown_footprints(program));
        diagnostics.extend(context.kernels().stop_notes());
        crate::smt::properties::prove(program, options)
    });
    let mut runs: Vec<(Vec<i64>, bool)> = sampled.into_iter().map(|params| (params, false)).collect();
    for counterexample in &proved.counterexamples {
        if !runs.iter().any(|(params, _)| *params == counterexample.params) {
            runs.push((counterexample.params.clone(), true));
        }
    }
    let mut seen: HashSet<(&'static str, Span)> = diagnostics.iter().map(|d| (d.code, d.primary.clone())).collect();
    let mut run_names = Vec::new();
    let mut not_run: Vec<Vec<i64>> = Vec::new();
    let mut refuted = ConcreteRefutations::default();
    // What each run found, deduplicated or not: a counterexample is confirmed only by the
    // run at its own values.
    let mut found_at: HashMap<Vec<i64>, Vec<FindingKey>> = HashMap::new();
    // Each run's own findings (rule, primary call), whichever run reports them first: a
    // counterexample joins only a finding the run at its values made itself.
    let mut reported_at: HashMap<Vec<i64>, HashSet<(&'static str, Span)>> = HashMap::new();
    // Each finding of the sampled runs (by its index) and the run that found it first.
    let mut found_first: Vec<(usize, Vec<i64>)> = Vec::new();
    for (params, for_counterexample) in runs {
        // Each combination of what the queries that branches look at report, as a tree:
        // a run takes "not done" at every query past its prefix, and each such query
        // is taken "done" in a run of its own.
        let mut prefixes: Vec<Vec<bool>> = vec![Vec::new()];
        let mut outcome_runs = 0;
        // The first query a branch looks at, where an unchecked combination is said.
        let mut first_query = None;
        while let Some(prefix) = prefixes.pop() {
            if outcome_runs == MAX_OUTCOME_RUNS {
                let warning = unchecked_outcomes(program, first_query);
                // Once, whatever the number of parameter assignments that have as many.
                if seen.insert((warning.code, warning.primary.clone())) {
                    diagnostics.push(warning);
                }
                break;
            }
            outcome_runs += 1;
            let exec = match first_run.take() {
                Some(exec) => exec,
                None => instantiate_with_outcomes(program, params.clone(), &prefix),
            };
            let taken: Vec<bool> = exec.query_outcomes.iter().map(|&(_, done)| done).collect();
            first_query = first_query.or_else(|| exec.query_outcomes.first().map(|(query, _)| query.span.clone()));
            for point in prefix.len()..taken.len() {
                let mut next = taken[..point].to_vec();
                next.push(true);
                prefixes.push(next);
            }
            if prefix.is_empty() {
                run_names.extend(exec.assignment());
            }
            if !exec.query_syncs.is_empty() && !realizable_outcomes(&exec) {
                continue;
            }
            let findings = match (!exec.truncated()).then(|| execution_findings(program, &exec, options)) {
                Some(Ok(findings)) => findings,
                // A counterexample too large to run is still reported, by the solver alone.
                _ if for_counterexample => {
                    not_run.push(params.clone());
                    break;
                }
                _ => {
                    diagnostics.push(too_large(program, &exec));
                    refuted.every_smaller_ran = false;
                    break;
                }
            };
            let smallest_yet =
                !for_counterexample && refuted.every_smaller_ran && every_smaller_sampled(program, &params);
            found_at
                .entry(params.clone())
                .or_default()
                .extend(findings.iter().flat_map(finding_keys));
            reported_at
                .entry(params.clone())
                .or_default()
                .extend(findings.iter().map(|d| (d.code, d.primary.clone())));
            for mut diagnostic in findings {
                // The same finding in several runs is reported once, for the first run.
                if seen.insert((diagnostic.code, diagnostic.primary.clone())) {
                    if !for_counterexample {
                        found_first.push((diagnostics.len(), params.clone()));
                    }
                    if let Some(assignment) = exec.assignment() {
                        diagnostic = diagnostic.with_note(format!("found with {assignment}"));
                        if smallest_yet {
                            refuted.first(diagnostic.code, diagnostics.len(), assignment);
                        }
                    }
                    diagnostics.push(with_query_outcomes(diagnostic, &exec));
                }
            }
            exec.free_in_parallel();
        }
    }
    for (index, params) in found_first {
        let decisive = decisive_params(&diagnostics[index], &params, &found_at);
        diagnostics[index].decisive_params = decisive;
    }
    let mut unproved = proved.unproved;
    let runs = ConcreteRuns {
        not_run,
        found_at,
        reported_at,
        refuted,
    };
    add_counterexamples(proved.counterexamples, &runs, &mut diagnostics, &mut unproved);
    diagnostics.extend(proved.unknown);
    Diagnostic::sort(&mut diagnostics);
    for entry in &mut unproved {
        entry.checked = run_names.clone();
    }
    Analyzed {
        diagnostics,
        proofs: proved.proofs,
        unproved,
    }
}

/// `work()` on this thread (the prover's z3 objects stay on it), and beside it the
/// execution of `params` with no query taken "done": the first run the analysis makes.
/// `None` for the run when no thread could be started (it is walked in turn then).
fn beside_first_run<'p, T>(
    program: &'p Program,
    params: &[i64],
    work: impl FnOnce() -> T,
) -> (T, Option<Execution<'p>>) {
    let walk = || instantiate_with_outcomes(program, params.to_vec(), &[]);
    // A pool thread has the walk's stack: the walk is a task of the pool. (`work`, the
    // first closure, stays on this thread, with its z3 objects.)
    if crate::pool::in_pool() {
        let mut run = None;
        let done = rayon::in_place_scope(|scope| {
            scope.spawn(|_| run = Some(walk()));
            work()
        });
        return (done, run);
    }
    crate::pool::started_outside_pool();
    std::thread::scope(|scope| {
        let walk = std::thread::Builder::new()
            .stack_size(WALK_STACK)
            .spawn_scoped(scope, walk);
        let done = work();
        let run = walk
            .ok()
            .map(|walk| walk.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        (done, run)
    })
}

/// What the concrete runs of one Program leave for the prover's counterexamples.
struct ConcreteRuns {
    /// Counterexample values too large to run.
    not_run: Vec<Vec<i64>>,
    /// Every run's findings, deduplicated across runs or not.
    found_at: HashMap<Vec<i64>, Vec<FindingKey>>,
    /// Every run's own findings by rule and primary call.
    reported_at: HashMap<Vec<i64>, HashSet<(&'static str, Span)>>,
    refuted: ConcreteRefutations,
}

/// Each z3 counterexample joins the concrete finding the run at its values made, or is
/// reported alone where that run is too large, or is a `not proved` line where nothing
/// confirms it; a property z3 gave no smallest counterexample for gets the one the
/// concrete runs know.
fn add_counterexamples(
    counterexamples: Vec<crate::smt::properties::Counterexample>,
    runs: &ConcreteRuns,
    diagnostics: &mut Vec<Diagnostic>,
    unproved: &mut Vec<Unproved>,
) {
    let mut smallest_by_z3: HashSet<&str> = HashSet::new();
    for counterexample in counterexamples {
        if !counterexample.smallest && runs.refuted.smallest.contains_key(counterexample.property) {
            // The concrete runs know the smallest values; z3's larger ones add nothing.
            continue;
        }
        let mut found = counterexample.diagnostic;
        let too_large = runs.not_run.contains(&counterexample.params);
        if too_large && counterexample.property == crate::smt::properties::VALUES_DEFINED {
            // An overflow only at values too large to run (`rank + 2` at N = i64::MAX)
            // blocks the proofs (already said in `unproved`) but is no finding.
            continue;
        }
        // Nothing confirms the finding: the property is merely not proved.
        let not_proved = |why: &str, found: &Diagnostic| {
            crate::smt::Unproved::new(
                counterexample.property,
                format!("{why}: {}", found.message),
                found.primary.clone(),
            )
        };
        if too_large && !counterexample.smallest {
            // Too large to run, and perhaps not the smallest values. The deadline decided
            // this verdict (with more time it is a finding), so say so as z3's other
            // timeouts are said.
            let why =
                "z3 found a violation at values too large to run, and its search for smaller ones ran out of time";
            diagnostics.push(crate::smt::solver_unknown(
                counterexample.property,
                found.primary.clone(),
                why,
                "the property is checked only on the concrete runs (the smallest parameter values)",
            ));
            unproved.push(not_proved(why, &found));
        } else if too_large {
            found = found.with_note(
                "no concrete run at these values: the execution is too large for the happens-before analysis, so z3 alone reports this",
            );
            diagnostics.push(found);
        } else if confirmed_by_its_run(&runs.found_at, &counterexample.params, &found)
            && merge_counterexample(diagnostics, &found, |d| {
                per_program(d.code)
                    || runs
                        .reported_at
                        .get(&counterexample.params)
                        .is_some_and(|own| own.contains(&(d.code, d.primary.clone())))
            })
        {
            if counterexample.smallest {
                smallest_by_z3.insert(counterexample.property);
            }
        } else {
            // A solver counterexample the run at its values does not show is an
            // encoding gap.
            unproved.push(not_proved(
                "z3's counterexample is not confirmed by the concrete run",
                &found,
            ));
        }
    }
    for (property, (index, assignment)) in &runs.refuted.smallest {
        if !smallest_by_z3.contains(property) {
            let note = format!(
                "smallest counterexample (concrete runs): {assignment} (the runs at every smaller value do not show it)"
            );
            diagnostics[*index].notes.push(note);
        }
    }
}

/// Properties the concrete runs refute at their smallest values.
struct ConcreteRefutations {
    /// Every sampled run so far was analyzed (none was too large).
    every_smaller_ran: bool,
    /// Per property: the index of its first finding and the run's assignment ("N = 2").
    smallest: HashMap<&'static str, (usize, String)>,
}

impl Default for ConcreteRefutations {
    fn default() -> Self {
        ConcreteRefutations {
            every_smaller_ran: true,
            smallest: HashMap::new(),
        }
    }
}

impl ConcreteRefutations {
    /// A finding of the first run to report `code`'s property, at `index`.
    fn first(&mut self, code: &str, index: usize, assignment: String) {
        if let Some(property) = crate::smt::properties::refuted_by(code) {
            self.smallest.entry(property).or_insert((index, assignment));
        }
    }
}

/// Whether every assignment smaller than `params` (parameters compared in declaration
/// order) is among the sampled runs, which come in that order: each parameter that is
/// above its minimum must be followed only by parameters whose whole range is sampled.
fn every_smaller_sampled(program: &Program, params: &[i64]) -> bool {
    let sampled: Vec<Vec<i64>> = program.params.iter().map(parameter_values).collect();
    let combinations = sampled.iter().try_fold(1usize, |n, values| n.checked_mul(values.len()));
    if combinations.is_none_or(|n| n > MAX_ASSIGNMENTS) {
        return false;
    }
    let whole = |index: usize| {
        let param = &program.params[index];
        param.max.is_some_and(|max| sampled[index].last() == Some(&max))
    };
    params
        .iter()
        .zip(&program.params)
        .enumerate()
        .all(|(index, (&value, param))| value == param.min || (index + 1..params.len()).all(whole))
}

/// What the happens-before rules find on one concrete execution, in every order in
/// which its host threads can issue their calls (see `exec::issue_orders`).
fn execution_findings(
    program: &Program,
    exec: &Execution,
    options: &SmtOptions,
) -> Result<Vec<Diagnostic>, ClockBudgetExceeded> {
    let mut found = unevaluable_calls(exec);
    found.extend(uncaptured_calls(exec));
    found.extend(unmatched_value_waits(exec));
    found.extend(ipc_opens_from_outside(exec));
    found.extend(ipc_exports_to_outside(exec));
    let (per_order, unchecked) = findings_by_issue_order(program, exec, options)?;
    if per_order.is_empty() {
        // One order only (or, should no permuted order be realizable, the walk's, with
        // the warning that orders went unchecked).
        found.extend(rule_findings(program, exec, &HappensBefore::build(exec)?, options));
    } else {
        found.extend(merge_orders(exec, per_order));
    }
    if unchecked {
        found.push(unchecked_orders(program, exec));
    }
    Ok(found)
}

/// One order in which the host threads of a run issue their calls, with what the
/// happens-before rules find in it.
pub struct OrderFindings {
    /// The calls whose order differs between orders (those on objects several host
    /// threads use), in this order: one a run can make.
    pub permuted: Vec<NodeId>,
    pub findings: Vec<Diagnostic>,
}

/// The findings of every order in which the host threads of `exec` can issue their
/// calls that some run makes (none when the threads share no object, so that the walk's
/// order is the only one), and whether more orders exist than were checked.
pub fn findings_by_issue_order(
    program: &Program,
    exec: &Execution,
    options: &SmtOptions,
) -> Result<(Vec<OrderFindings>, bool), ClockBudgetExceeded> {
    let orders = issue_orders(exec);
    let mut per_order = Vec::new();
    for order in &orders.orders {
        let reordered = reorder(exec, order);
        let hb = HappensBefore::build(&reordered)?;
        let permuted: Vec<bool> = order.iter().map(|n| orders.conflicts[n.index()]).collect();
        if let Some(realizable) = hb.realizable_issue_order(&permuted) {
            per_order.push(OrderFindings {
                // The reordered execution's node `i` is `order[i]`.
                permuted: realizable.iter().map(|n| order[n.index()]).collect(),
                findings: rule_findings(program, &reordered, &hb, options),
            });
        }
    }
    // No realizable order among several is a gap in the order search: said, like orders
    // past the limit.
    let none_realizable = per_order.is_empty() && !orders.orders.is_empty();
    Ok((per_order, orders.unchecked || none_realizable))
}

fn rule_findings(program: &Program, exec: &Execution, hb: &HappensBefore, options: &SmtOptions) -> Vec<Diagnostic> {
    let analysis = Analysis {
        program,
        exec,
        hb,
        smt: options,
    };
    // The searches several rules share come first, on every core: a rule that asked for
    // one while another rule's thread ran it would wait idle.
    rayon::join(|| hb.races(), || hb.uses_around_destroys());
    // The rules only read the analysis: they run side by side, their findings kept in
    // rule order.
    let per_rule: Vec<Vec<Diagnostic>> = RULES
        .par_iter()
        .filter_map(|rule| match rule.check {
            Check::Execution(check) => Some(check),
            _ => None,
        })
        .map(|check| {
            let mut found = Vec::new();
            check(&analysis, &mut found);
            found
        })
        .collect();
    let mut found: Vec<Diagnostic> = per_rule.into_iter().flatten().collect();
    crate::consequences::fold(&mut found);
    crate::window::attach_missing(&analysis, &mut found);
    found
}

/// The findings of every issue order, each once; one that only some orders show names
/// the first of them.
fn merge_orders(exec: &Execution, per_order: Vec<OrderFindings>) -> Vec<Diagnostic> {
    let mut count: HashMap<FindingKey, usize> = HashMap::new();
    for order in &per_order {
        let distinct: HashSet<FindingKey> = order.findings.iter().map(finding_key).collect();
        for key in distinct {
            *count.entry(key).or_default() += 1;
        }
    }
    let orders = per_order.len();
    let mut seen = HashSet::new();
    let mut merged = Vec::new();
    for order in per_order {
        for diagnostic in order.findings {
            let key = finding_key(&diagnostic);
            if !seen.insert(key.clone()) {
                continue;
            }
            if count[&key] < orders {
                merged.push(diagnostic.with_note(issue_order_note(exec, &order.permuted)));
            } else {
                merged.push(diagnostic);
            }
        }
    }
    merged
}

/// A finding's rule and every call it points at: one race seen from either side in two
/// orders is one finding.
type FindingKey = (&'static str, Vec<Span>);

/// The parameters `diagnostic` needs the value `params` gives them: a run that differs
/// from `params` in that parameter alone did not find it.
fn decisive_params(
    diagnostic: &Diagnostic,
    params: &[i64],
    found_at: &HashMap<Vec<i64>, Vec<FindingKey>>,
) -> Vec<usize> {
    let key = finding_key(diagnostic);
    let key = (diagnostic.code, key.1);
    (0..params.len())
        .filter(|&param| {
            found_at.iter().any(|(other, found)| {
                other[param] != params[param]
                    && other
                        .iter()
                        .zip(params)
                        .enumerate()
                        .all(|(i, (a, b))| i == param || a == b)
                    && !found.contains(&key)
            })
        })
        .collect()
}

/// [`finding_key`] for its own code and each consequence folded into it.
fn finding_keys(diagnostic: &Diagnostic) -> impl Iterator<Item = FindingKey> + '_ {
    let (_, spans) = finding_key(diagnostic);
    diagnostic.codes().map(move |code| (code, spans.clone()))
}

fn finding_key(diagnostic: &Diagnostic) -> FindingKey {
    let mut spans: Vec<Span> = std::iter::once(diagnostic.primary.clone())
        .chain(diagnostic.related.iter().map(|r| r.span.clone()))
        .collect();
    spans.sort_by_key(|span| (span.file, span.range.start, span.range.end));
    spans.dedup();
    (diagnostic.code, spans)
}

/// "only when the host threads issue in this order: ...", naming the calls whose
/// order varies.
fn issue_order_note(exec: &Execution, permuted: &[NodeId]) -> String {
    const SHOWN: usize = 6;
    let calls: Vec<String> = permuted
        .iter()
        .map(|&n| {
            let node = exec.node(n);
            if node.agent == node.host {
                exec.describe(n)
            } else {
                format!("{} (from {})", exec.describe(n), exec.agent_name(node.host))
            }
        })
        .collect();
    let mut note = format!(
        "only when the host threads issue these calls in this order: {}",
        calls.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", then ")
    );
    if calls.len() > SHOWN {
        note.push_str(&format!(", then {} more", calls.len() - SHOWN));
    }
    note
}

/// Most runs per parameter assignment over the outcomes of the queries that branches
/// look at (each such query doubles them).
pub const MAX_OUTCOME_RUNS: usize = 64;

/// A run in which a query saw work done that never finishes is no run: the query
/// would have said "not done".
/// A run too large to decide it is kept, to be reported as too large.
fn realizable_outcomes(exec: &Execution) -> bool {
    let Ok(hb) = HappensBefore::build(exec) else {
        return true;
    };
    exec.query_syncs.iter().all(|&sync| hb.executes(sync))
}

/// A finding of a run in which branches looked at queries: what each query reported.
fn with_query_outcomes(mut diagnostic: Diagnostic, exec: &Execution) -> Diagnostic {
    let mut said: Vec<(Span, bool)> = Vec::new();
    for &(query, done) in &exec.query_outcomes {
        if !said.contains(&(query.span.clone(), done)) {
            said.push((query.span.clone(), done));
        }
    }
    for (span, done) in said {
        let report = if done {
            "reports the work done"
        } else {
            "reports the work not done yet"
        };
        if diagnostic.primary == span {
            diagnostic = diagnostic.with_note(format!("in this run the query here {report}"));
        } else {
            diagnostic = diagnostic.with_related(span, format!("in this run this query {report}"));
        }
    }
    diagnostic
}

/// More combinations of query outcomes than were checked: said, since a finding that
/// only another combination shows would be missed.
fn unchecked_outcomes(program: &Program, first_query: Option<Span>) -> Diagnostic {
    Diagnostic::new(
        &crate::rules::SolverUnknown::INFO,
        first_query.unwrap_or_else(|| program.threads[Program::MAIN_THREAD.index()].span.clone()),
        format!(
            "this program branches on query results in more combinations than the {MAX_OUTCOME_RUNS} runs checked: findings that only other combinations show are missed"
        ),
    )
    .with_label("not every combination of what the queries report is checked")
    .with_help("branch on fewer query results, or synchronize instead of querying")
}

/// Real kernel launches that declare no `reads:` / `writes:`: said once, since races
/// through the memory they touch cannot be found.
fn unknown_footprints(program: &Program) -> Option<Diagnostic> {
    const MAX_LISTED: usize = 8;
    let mut launches = Vec::new();
    for thread in &program.threads {
        crate::model::for_each_op(&thread.body, &mut |op| {
            if let OpKind::Kernel { launch, .. } = &op.kind
                && op.api != "kernel"
                && crate::api::lookup(op.api).is_some_and(|api| api.effect == crate::api::Effect::Kernel)
                && launch.reads.is_empty()
                && launch.writes.is_empty()
            {
                launches.push(op);
            }
        });
    }
    let first = launches.first()?;
    let message = match launches.len() {
        1 => format!(
            "`{}` declares no memory footprint: races through the memory its kernel touches are not checked",
            first.api
        ),
        n => format!(
            "{n} kernel launches declare no memory footprint: races through the memory their kernels touch are not checked"
        ),
    };
    let mut diagnostic = Diagnostic::new(&crate::rules::SolverUnknown::INFO, first.span.clone(), message)
        .with_label("what this kernel reads and writes is unknown")
        .with_help("declare it on the call: `reads: [a[0..4 KiB]], writes: [b]` (a trace line carries the same `reads` / `writes` arguments)");
    for op in launches.iter().skip(1).take(MAX_LISTED) {
        diagnostic = diagnostic.with_related(op.span.clone(), "no footprint declared");
    }
    if launches.len() > MAX_LISTED + 1 {
        diagnostic = diagnostic.with_note(format!("and {} more", launches.len() - MAX_LISTED - 1));
    }
    Some(diagnostic)
}

/// Calls issued to a stream under capture that the model's graphs cannot hold: said,
/// since what they would order in each launch is not checked.
fn uncaptured_calls(exec: &Execution) -> Option<Diagnostic> {
    let first = exec.uncaptured.first()?;
    let mut diagnostic = Diagnostic::new(
        &crate::rules::SolverUnknown::INFO,
        first.span.clone(),
        format!(
            "`{}` is captured into a graph, where only kernels, copies, memsets, host functions and event records, waits and resets are modelled: it is left out of every launch of the graph",
            first.api
        ),
    )
    .with_label("left out of the graph")
    .with_help("issue notify calls outside the graph, or check the stream's code without the capture");
    const MAX_LISTED: usize = 8;
    for op in exec.uncaptured.iter().skip(1).take(MAX_LISTED) {
        diagnostic = diagnostic.with_related(op.span.clone(), "also left out of the graph");
    }
    if exec.uncaptured.len() > MAX_LISTED + 1 {
        diagnostic = diagnostic.with_note(format!("and {} more", exec.uncaptured.len() - MAX_LISTED - 1));
    }
    Some(diagnostic)
}

/// IPC opens of a handle or key that no process of the run exports: said once, since
/// such an object is taken as one from outside the run, with unknown earlier signals.
fn ipc_opens_from_outside(exec: &Execution) -> Option<Diagnostic> {
    let opens: Vec<(&crate::model::Object, NodeId)> = exec
        .ipc_unexported
        .iter()
        .filter_map(|&inst| {
            Some((
                exec.program.object(exec.instance(inst).obj),
                exec.instance(inst).created?,
            ))
        })
        .collect();
    let &(first, node) = opens.first()?;
    let key = first.ipc_key.as_deref().unwrap_or_default();
    let mut diagnostic = Diagnostic::new(
        &crate::rules::UnknownName::INFO,
        exec.node(node).op.span.clone(),
        format!(
            "`{}` opens `{key}`, which no process of this run exports: taken as {} shared with a process outside the run, whose signals and writes are unknown",
            exec.node(node).op.api,
            crate::diagnostic::with_article(first.kind.noun()),
        ),
    )
    .with_severity(crate::diagnostic::Severity::Info)
    .with_label("exported by a process this run does not show")
    .with_help("check the exporting process's code or trace together with this one");
    for &(object, node) in opens.iter().skip(1) {
        let key = object.ipc_key.as_deref().unwrap_or_default();
        diagnostic = diagnostic.with_related(
            exec.node(node).op.span.clone(),
            format!("`{key}` is not exported either"),
        );
    }
    Some(diagnostic)
}

/// IPC exports of a handle or key that no process of the run opens: said once, since
/// the process that opens it is outside the run, and what it records, waits on or
/// writes is not checked (a notify's waits here are taken to be satisfied there).
fn ipc_exports_to_outside(exec: &Execution) -> Option<Diagnostic> {
    let mut exports: Vec<(&crate::model::Op, &crate::model::Object, &str)> = exec
        .nodes
        .iter()
        .filter_map(|node| match &node.op.kind {
            OpKind::IpcExport { obj, key, .. } if exec.ipc_unopened.iter().any(|(_, unopened)| unopened == key) => {
                Some((node.op, exec.program.object(*obj), &**key))
            }
            _ => None,
        })
        .collect();
    // Once per call, whatever the ranks and iterations that made it.
    let mut seen = HashSet::new();
    exports.retain(|(op, _, _)| seen.insert(op.span.clone()));
    let &(first, object, key) = exports.first()?;
    let mut diagnostic = Diagnostic::new(
        &crate::rules::SolverUnknown::INFO,
        first.span.clone(),
        format!(
            "`{}` exports {} `{}` as `{key}`, which no process of this run opens: what the process that opens it records, waits on or writes is not checked",
            first.api,
            crate::diagnostic::with_article(object.kind.noun()),
            object.shown(),
        ),
    )
    .with_severity(crate::diagnostic::Severity::Info)
    .with_label("opened by a process this run does not show")
    .with_help("check the opening process's code or trace together with this one");
    for &(op, _, key) in exports.iter().skip(1) {
        diagnostic = diagnostic.with_related(op.span.clone(), format!("`{key}` is not opened either"));
    }
    Some(diagnostic)
}

/// Memory-value waits too many to match in a program this large: said, since they order
/// nothing then (extra races) and a wait no write satisfies is not found.
fn unmatched_value_waits(exec: &Execution) -> Option<Diagnostic> {
    if crate::hb::values::affordable(exec) {
        return None;
    }
    let first = exec
        .nodes
        .iter()
        .find(|node| matches!(node.action, crate::exec::Action::ValueWait { .. }))?;
    Some(
        Diagnostic::new(
            &crate::rules::SolverUnknown::INFO,
            first.op.span.clone(),
            format!(
                "this program has too many memory-value calls (`{}`, ...) for its size to match its waits with their writes: the waits order nothing, and a wait that never passes is not found",
                first.op.api
            ),
        )
            .with_label("memory-value waits not matched")
        .with_help("check a shorter trace, or the code's `.sync` model with fewer iterations"),
    )
}

/// Host threads that share objects in more orders than were checked: said, since a
/// finding in an unchecked order would be missed.
fn unchecked_orders(program: &Program, exec: &Execution) -> Diagnostic {
    let assignment = exec.assignment().map_or(String::new(), |a| format!(" (with {a})"));
    Diagnostic::new(
        &crate::rules::SolverUnknown::INFO,
        program.threads[Program::MAIN_THREAD.index()].span.clone(),
        format!(
            "the host threads of this program{assignment} share streams, events or notifies in more issue orders than the {MAX_ISSUE_ORDERS} checked: findings that only other orders show are missed"
        ),
    )
    .with_label("not every issue order checked")
    .with_help("give each host thread its own streams and events, or order the threads' calls with an event synchronize")
}

/// The happens-before findings for one parameter assignment (values by `ParamId`), for
/// values the sampled runs of [`analyze_with`] may not have covered.
pub fn analyze_assignment(program: &Program, params: Vec<i64>, options: &SmtOptions) -> Vec<Diagnostic> {
    let exec = instantiate(program, params);
    let found = (!exec.truncated()).then(|| execution_findings(program, &exec, options));
    let Some(Ok(mut found)) = found else {
        return vec![too_large(program, &exec)];
    };
    if let Some(assignment) = exec.assignment() {
        found = found
            .into_iter()
            .map(|d| d.with_note(format!("found with {assignment}")))
            .collect();
    }
    Diagnostic::sort(&mut found);
    found.dedup();
    found
}

/// The first of `diagnostics` that `reports` accepts about `found`'s primary call, or
/// else about any call of it.
fn finding_about(
    diagnostics: &[Diagnostic],
    found: &Diagnostic,
    reports: impl Fn(&Diagnostic) -> bool,
) -> Option<usize> {
    let spans = |d: &Diagnostic| -> Vec<Span> {
        std::iter::once(d.primary.clone())
            .chain(d.related.iter().map(|r| r.span.clone()))
            .collect()
    };
    let theirs = spans(found);
    diagnostics
        .iter()
        .position(|d| reports(d) && d.primary == found.primary)
        .or_else(|| {
            diagnostics
                .iter()
                .position(|d| reports(d) && spans(d).iter().any(|s| theirs.contains(s)))
        })
}

/// Whether the run at a counterexample's values reports its finding (same rule, a call
/// in common). A rule checked once per Program (SuperKernel code paths) walks every
/// value itself and has no run of its own: its finding confirms it wherever it is.
fn confirmed_by_its_run(found_at: &HashMap<Vec<i64>, Vec<FindingKey>>, params: &[i64], found: &Diagnostic) -> bool {
    let (_, theirs) = finding_key(found);
    per_program(found.code)
        || found_at.get(params).is_some_and(|keys| {
            keys.iter()
                .any(|(code, spans)| *code == found.code && spans.iter().any(|span| theirs.contains(span)))
        })
}

/// Whether `code`'s rule is checked once per Program (SuperKernel code paths): it walks
/// every value itself and has no run of its own.
fn per_program(code: &str) -> bool {
    crate::rules::find(code).is_some_and(|rule| matches!(rule.check, Check::Program(_)))
}

/// A solver counterexample adds its note (the smallest values, the rank, the index) to
/// the concrete finding of the same rule about the same calls that the run at its values
/// made (`of_its_run`); without one, it is not reported: false then.
fn merge_counterexample(
    diagnostics: &mut [Diagnostic],
    found: &Diagnostic,
    of_its_run: impl Fn(&Diagnostic) -> bool,
) -> bool {
    // A finding of the counterexample's own rule before one that only folds it in as a
    // consequence: an SG302 at N = 4 that leaves a notify unbalanced must not take the
    // SG301 counterexample at N = 2 from the SG301 that run reports. A finding another
    // run made never takes it: an SG502 found at N = 4 must not carry the SG301 that the
    // run at N = 2 folds into its SG302 (that one takes it).
    let same = finding_about(diagnostics, found, |d| of_its_run(d) && d.code == found.code).or_else(|| {
        finding_about(diagnostics, found, |d| {
            of_its_run(d) && d.codes().any(|code| code == found.code)
        })
    });
    match same {
        Some(index) => {
            // Two calls of one finding (a record and its wait) can share a counterexample.
            for note in &found.notes {
                if !diagnostics[index].notes.contains(note) {
                    diagnostics[index].notes.push(note.clone());
                }
            }
            true
        }
        None => false,
    }
}

/// A run beyond the analysis budgets (calls, or the memory of its happens-before
/// clocks): said loudly, since it is not verified.
fn too_large(program: &Program, exec: &Execution) -> Diagnostic {
    let span = exec
        .cutoff
        .as_ref()
        .and_then(Cutoff::span)
        .unwrap_or(&program.threads[Program::MAIN_THREAD.index()].span)
        .clone();
    let size = if let Some(cutoff) = &exec.cutoff {
        cutoff.describe()
    } else {
        format!(
            "runs {} calls on {} streams, threads and ranks whose happens-before order needs more than {} MiB",
            exec.nodes.len(),
            exec.agents.len(),
            crate::hb::MAX_CLOCK_BYTES >> 20
        )
    };
    let assignment = exec.assignment().map_or(String::new(), |a| format!(" (with {a})"));
    Diagnostic::new(
        &crate::rules::TooLargeToAnalyze::INFO,
        span,
        format!("this program{assignment} {size}: too large to analyze, so it is not verified"),
    )
    .with_label("not analyzed")
    .with_help("check a smaller configuration (fewer ranks, shorter loops), or a shorter trace")
}

/// Calls whose arguments have no value on some rank: reported, since the analysis had
/// to leave them out and what follows from that (a wait with no record) would otherwise
/// be reported without its cause.
fn unevaluable_calls(exec: &Execution) -> Vec<Diagnostic> {
    exec.eval_errors
        .iter()
        .map(|failure| {
            let on_rank = if exec.ranks > 1 {
                format!(" on rank {}", failure.rank)
            } else {
                String::new()
            };
            Diagnostic::new(
                &crate::rules::UndefinedValue::INFO,
                failure.span.clone(),
                format!("{} has no value{on_rank}: it {}", failure.what, failure.error.reason()),
            )
            .with_label(failure.left_out)
            .with_help("guard the expression so that it is defined for every rank and parameter value")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(min: i64, max: Option<i64>) -> Param {
        Param {
            name: "N".into(),
            min,
            max,
            span: Span::new(crate::source::FileId(0), 0..0),
        }
    }

    #[test]
    fn only_selected_parameters_vary() {
        let mut program = Program::new(Span::new(crate::source::FileId(0), 0..0));
        program.params = vec![param(0, Some(1)), param(5, Some(6))];
        assert_eq!(
            assignments(&program, |_| true),
            vec![vec![0, 5], vec![0, 6], vec![1, 5], vec![1, 6]]
        );
        assert_eq!(assignments(&program, |i| i == 1), vec![vec![0, 5], vec![0, 6]]);
    }

    #[test]
    fn small_domains_are_enumerated_large_ones_sampled() {
        assert_eq!(parameter_values(&param(0, Some(1))), vec![0, 1]);
        assert_eq!(parameter_values(&param(2, Some(1024))), vec![2, 3, 4]);
        assert_eq!(parameter_values(&param(2, None)), vec![2, 3, 4]);
    }

    #[test]
    fn a_run_is_the_smallest_failing_one_only_when_every_smaller_assignment_ran() {
        let mut program = Program::new(Span::new(crate::source::FileId(0), 0..0));
        program.params = vec![param(2, None)];
        assert!(every_smaller_sampled(&program, &[4]));
        // N whole (2..=3), K sampled (1, 2, 3 of 1..): (3, 1) comes after (2, 3), not (2, 4).
        program.params = vec![param(2, Some(3)), param(1, None)];
        assert!(every_smaller_sampled(&program, &[2, 3]));
        assert!(!every_smaller_sampled(&program, &[3, 1]));
        // K whole: every smaller assignment of (3, 1) ran.
        program.params = vec![param(2, None), param(1, Some(2))];
        assert!(every_smaller_sampled(&program, &[3, 1]));
    }

    /// Thread w1 waits on `n` before a synchronize; w2 records `n` on a stream the main
    /// thread also uses (so its calls are ordered against the main thread's). An
    /// order that puts w1's wait on `m` before w2's record of `n` is the same execution
    /// as one with the record first (the two touch nothing in common), and only that
    /// one can be run: w1's synchronize returns only after the record.
    #[test]
    fn each_order_is_given_as_a_run_can_issue_it() {
        let text = "let s0 = aclrtCreateStream();
let s1 = aclrtCreateStream();
let n = aclrtCreateNotify();
let m = aclrtCreateNotify();
thread w1 {
    aclrtWaitAndResetNotify(n, s0, 0);
    aclrtSynchronizeStream(s0);
    aclrtWaitAndResetNotify(m, s0, 0);
}
thread w2 {
    kernel(s1, \"k\");
    aclrtRecordNotify(n, s1);
}
aclrtRecordNotify(m, s0);
kernel(s1, \"k0\");
aclrtSynchronizeStream(s0);
";
        let checked = crate::check_sync_bytes(&mut crate::Sources::default(), "t.sync", text.as_bytes());
        let exec = instantiate(&checked.program, Vec::new());
        let (orders, unchecked) =
            findings_by_issue_order(&checked.program, &exec, &SmtOptions::default()).expect("a small execution");
        assert!(!unchecked && orders.len() > 1);
        let position = |order: &[NodeId], line: &str| {
            order.iter().position(|&n| {
                let span = &exec.node(n).op.span;
                text[span.range.clone()].starts_with(line)
            })
        };
        let mut deadlocking = 0;
        for order in &orders {
            let record_n = position(&order.permuted, "aclrtRecordNotify(n").expect("permuted");
            let wait_m = position(&order.permuted, "aclrtWaitAndResetNotify(m").expect("permuted");
            let record_m = position(&order.permuted, "aclrtRecordNotify(m").expect("permuted");
            assert!(record_n < wait_m, "w1 waits on m only after its synchronize returns");
            if wait_m < record_m {
                deadlocking += 1;
                assert!(order.findings.iter().any(|d| d.code == "SG501"));
            }
        }
        assert!(deadlocking > 0, "the order with the wait on m first is checked");
    }
}
