//! Findings that rest on a call a source frontend could not follow. Such a call (an
//! argument with no value, a function the files neither catalogue nor define that
//! receives a handle) is left out of the program, so what it did to the objects it uses
//! is unknown: a record left out makes its wait look like a hang, a wait left out makes
//! the work after it look like a race. A finding that involves one of those objects is
//! therefore undecided, not an error: it is set aside with the call it rests on, and
//! shown only when the reader's limits are listed (`--explain`).

use std::collections::{HashMap, HashSet};

use crate::diagnostic::{Diagnostic, Severity};
use crate::frontend::CheckedFile;
use crate::model::{Block, ObjId, Program, for_each_op};
use crate::source::Span;
use syncguard_grammar::extracted::GE_OP_PREFIX;

/// A call a frontend left out: where it is, and the names of the objects it uses.
#[derive(Clone, Debug)]
pub struct Unfollowed {
    pub span: Span,
    pub touches: Vec<String>,
    /// A kernel call that only moves data (a vector function through raw pointers): it
    /// orders nothing, so of a kernel's findings only the races rest on it.
    pub data_only: bool,
}

/// Remove from `checked` the errors and warnings of the analysis that involve an object
/// an unfollowed call uses, and return them as information naming that call.
pub fn set_aside_dependent_findings(checked: &mut CheckedFile, unfollowed: &[Unfollowed]) -> Vec<Diagnostic> {
    let mut set_aside = set_aside_kernel_findings(checked, unfollowed);
    set_aside.extend(set_aside_host_findings(checked, unfollowed));
    set_aside
}

/// A kernel's findings rest on every instruction of its cores: a call left out of a
/// kernel (a sync, a copy, a queue operation) may order or touch anything, so any
/// finding inside a kernel whose entry point has one is undecided.
fn set_aside_kernel_findings(checked: &mut CheckedFile, unfollowed: &[Unfollowed]) -> Vec<Diagnostic> {
    if let Some(call) = unfollowed.iter().find(|call| !call.data_only) {
        return set_aside_kernel(
            checked,
            &call.span,
            "undecided: the kernel has a call that could not be followed, and what it orders or touches is unknown",
            "this call could not be followed",
            |_| true,
        );
    }
    let Some(call) = unfollowed.first() else {
        return Vec::new();
    };
    set_aside_kernel(
        checked,
        &call.span,
        "undecided: the kernel has a call that moves data the reader could not follow, and which bytes it touches \
         is unknown",
        "this call could not be followed",
        |code| RACE_RULES.contains(&code),
    )
}

/// The kernel rules whose findings rest on which bytes the instructions touch.
const RACE_RULES: [&str; 2] = ["SG801", "SG802"];

/// The same where the reader's walk of the entry point stopped before its end: the rest
/// of a loop body cut off there (its `FreeTensor`, its `WaitFlag`) is missing from every
/// iteration the analysis runs.
pub fn set_aside_kernel_findings_after_stop(checked: &mut CheckedFile, stop: &Span) -> Vec<Diagnostic> {
    set_aside_kernel(
        checked,
        stop,
        "undecided: the reading of the kernel stopped before its end, and what the code not read does to its \
         queues, flags and memory is unknown",
        "the reading of the kernel stopped here",
        |_| true,
    )
}

/// Set aside the kernel findings whose code `rests` says depend on the cause.
fn set_aside_kernel(
    checked: &mut CheckedFile,
    cause: &Span,
    why: &str,
    label: &str,
    rests: impl Fn(&str) -> bool,
) -> Vec<Diagnostic> {
    if checked.program.kernels.is_empty() {
        return Vec::new();
    }
    let (inside, kept): (Vec<Diagnostic>, Vec<Diagnostic>) = std::mem::take(&mut checked.diagnostics)
        .into_iter()
        .partition(|d| d.severity != Severity::Info && d.code.starts_with("SG8") && rests(d.code));
    checked.diagnostics = kept;
    inside
        .into_iter()
        .map(|mut diagnostic| {
            diagnostic.severity = Severity::Info;
            diagnostic.notes.insert(0, why.to_string());
            diagnostic.with_related(cause.clone(), label)
        })
        .collect()
}

fn set_aside_host_findings(checked: &mut CheckedFile, unfollowed: &[Unfollowed]) -> Vec<Diagnostic> {
    let tainted = tainted_objects(&checked.program, unfollowed);
    let tainted_tasks = tainted_tasks(&checked.program, unfollowed);
    if tainted.is_empty() && tainted_tasks.is_empty() {
        return Vec::new();
    }
    let objects_at = objects_by_span(&checked.program);
    let mut set_aside = Vec::new();
    let mut kept = Vec::new();
    for diagnostic in std::mem::take(&mut checked.diagnostics) {
        let in_task_list = (diagnostic.severity != Severity::Info)
            .then(|| involved_spans(&diagnostic).find_map(|span| tainted_tasks.get(span)))
            .flatten()
            .copied();
        if let Some((op, call)) = in_task_list {
            set_aside.push(undecided_task_list(diagnostic, op, call));
            continue;
        }
        let cause = is_analysis_finding(&diagnostic)
            .then(|| {
                involved_spans(&diagnostic).find_map(|span| cause_at(span, &objects_at, &tainted, &checked.program))
            })
            .flatten();
        match cause {
            Some((object, call)) => set_aside.push(undecided(diagnostic, checked.program.object(object).shown(), call)),
            None => kept.push(diagnostic),
        }
    }
    checked.diagnostics = kept;
    set_aside
}

/// The objects of the program that an unfollowed call uses, with the first such call.
fn tainted_objects<'u>(program: &Program, unfollowed: &'u [Unfollowed]) -> HashMap<ObjId, &'u Unfollowed> {
    let mut tainted = HashMap::new();
    for call in unfollowed {
        let names: HashSet<&str> = call.touches.iter().map(String::as_str).collect();
        for (index, object) in program.objects.iter().enumerate() {
            if names.contains(object.name.as_str()) {
                tainted.entry(ObjId(index as u32)).or_insert(call);
            }
        }
    }
    tainted
}

/// The tasks of GE ops whose task list rests on a call not followed (a stream id with no
/// value), by span, with the op's name and that call.
fn tainted_tasks<'p, 'u>(
    program: &'p Program,
    unfollowed: &'u [Unfollowed],
) -> HashMap<&'p Span, (&'p str, &'u Unfollowed)> {
    let mut tasks = HashMap::new();
    for call in unfollowed {
        let ops = call
            .touches
            .iter()
            .filter_map(|touched| touched.strip_prefix(GE_OP_PREFIX));
        for name in ops {
            for op in program.ge_ops.iter().filter(|op| op.name == name) {
                for task in &op.tasks {
                    tasks.entry(&task.span).or_insert((op.name.as_str(), call));
                }
            }
        }
    }
    tasks
}

/// Every object the calls at each span name.
fn objects_by_span(program: &Program) -> HashMap<&Span, Vec<ObjId>> {
    fn collect<'p>(block: &'p Block, at: &mut HashMap<&'p Span, Vec<ObjId>>) {
        for_each_op(block, &mut |op| {
            at.entry(&op.span).or_default().extend(op.kind.objects())
        });
    }
    let mut at = HashMap::new();
    for thread in &program.threads {
        collect(&thread.body, &mut at);
    }
    for subkernel in program
        .superkernels
        .iter()
        .flat_map(|superkernel| &superkernel.subkernels)
    {
        collect(&subkernel.body, &mut at);
    }
    at
}

/// Errors and warnings of the analysis rules that an unknown call could change; not the
/// reading rules (SG0xx), which say what the reader saw, nor the lints on the code as
/// written (SG7xx).
fn is_analysis_finding(diagnostic: &Diagnostic) -> bool {
    diagnostic.severity != Severity::Info
        && ("SG100".."SG700").contains(&diagnostic.code)
        && !DECIDED_BY_THE_CALLS_SEEN.contains(&diagnostic.code)
}

/// Rules whose findings the calls they name decide alone, whatever another call does
/// with the same object: a use after its destroy or before its create, a reset the
/// event's creator does not allow, an index or a length out of range, the structure of a
/// task list or a SuperKernel's paths.
const DECIDED_BY_THE_CALLS_SEEN: [&str; 15] = [
    "SG101", "SG106", "SG108", "SG110", "SG203", "SG204", "SG302", "SG306", "SG401", "SG402", "SG405", "SG406",
    "SG603", "SG605", "SG404",
];

fn involved_spans(diagnostic: &Diagnostic) -> impl Iterator<Item = &Span> {
    std::iter::once(&diagnostic.primary).chain(diagnostic.related.iter().map(|related| &related.span))
}

/// A tainted object that a call at `span` names (itself, or the array it is an element
/// of), with the unfollowed call that taints it.
fn cause_at<'u>(
    span: &Span,
    objects_at: &HashMap<&Span, Vec<ObjId>>,
    tainted: &HashMap<ObjId, &'u Unfollowed>,
    program: &Program,
) -> Option<(ObjId, &'u Unfollowed)> {
    objects_at.get(span)?.iter().find_map(|&object| {
        [object, program.base(object)]
            .into_iter()
            .find_map(|candidate| tainted.get(&candidate).map(|call| (candidate, *call)))
    })
}

fn undecided_task_list(mut diagnostic: Diagnostic, op: &str, call: &Unfollowed) -> Diagnostic {
    diagnostic.severity = Severity::Info;
    diagnostic.notes.insert(
        0,
        format!(
            "undecided: a stream id of op {op}'s tasks could not be followed and was taken as stream 0, so its task \
             list may not be as shown"
        ),
    );
    diagnostic.with_related(call.span.clone(), "this stream id could not be followed")
}

fn undecided(mut diagnostic: Diagnostic, object: &str, call: &Unfollowed) -> Diagnostic {
    diagnostic.severity = Severity::Info;
    diagnostic.notes.insert(
        0,
        format!(
            "undecided: `{object}` is also used by a call that could not be followed, so what it did to `{object}` \
             is unknown and this may not happen"
        ),
    );
    diagnostic.with_related(
        call.span.clone(),
        format!("this call could not be followed; it uses `{object}`"),
    )
}
