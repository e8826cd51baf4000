use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{CaptureMisuse, CaptureProblem};
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A stream capture whose work never runs as captured:
    /// - `cudaStreamBeginCapture(s)` with no `cudaStreamEndCapture(s)` after it: the calls
    ///   issued to `s` since are captured into a graph that is never made;
    /// - a synchronize during the capture that the capture forbids:
    ///   `cudaStreamSynchronize(s)` of the capturing stream itself, or
    ///   `cudaDeviceSynchronize()` while a capture not begun with
    ///   `cudaStreamCaptureModeRelaxed` is under way.
    ///
    /// ## Why is this a bug
    /// Work issued to a capturing stream does not run: it is recorded, and runs only when
    /// the graph `cudaStreamEndCapture` returns is instantiated and launched. A capture
    /// never ended never yields that graph, so the kernels and copies it took never run
    /// and their outputs are never written. A synchronize cannot wait for work that has
    /// not run: CUDA fails it with `cudaErrorStreamCaptureUnsupported` ("operation not
    /// permitted when stream is capturing") and invalidates the capture, so
    /// `cudaStreamEndCapture` returns an error and no graph.
    ///
    /// ## Example
    /// ```text
    /// cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    /// kernel(s, "step", writes: [d]);
    /// cudaStreamSynchronize(s);            // fails, and breaks the capture
    /// let g = cudaStreamEndCapture(s);
    /// ```
    ///
    /// ## Fix
    /// End every capture, then instantiate and launch its graph; synchronize before
    /// `cudaStreamBeginCapture` or after `cudaStreamEndCapture` (inside a capture, order
    /// work with events).
    ///
    /// Method: the capture state of each stream while each rank's host code is walked,
    /// per concrete execution.
    pub struct CaptureMisuseRule;
    code = "SG504",
    name = "stream-capture-misuse",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// Captured calls shown as related locations.
const MAX_SHOWN: usize = 8;

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    // One finding per capture and problem, with the ranks it happens on.
    // The capture's begin and the forbidden call, by file and offset.
    type Key = ((u32, usize), Option<(u32, usize)>);
    let place = |span: &Span| (span.file.0, span.range.start);
    let mut found: BTreeMap<Key, (&CaptureMisuse, Vec<u32>)> = BTreeMap::new();
    for misuse in &analysis.exec.capture_misuses {
        let at = match &misuse.problem {
            CaptureProblem::Forbidden(call) => Some(place(&call.span)),
            CaptureProblem::NeverEnded { .. } => None,
        };
        found
            .entry((place(&misuse.begin.span), at))
            .or_insert((misuse, Vec::new()))
            .1
            .push(misuse.rank);
    }
    for (misuse, mut ranks) in found.into_values() {
        ranks.dedup();
        out.push(diagnostic(analysis, misuse, &ranks));
    }
}

fn diagnostic(analysis: &Analysis, misuse: &CaptureMisuse, ranks: &[u32]) -> Diagnostic {
    let exec = analysis.exec;
    let stream = exec.agent_name(misuse.stream);
    let on_ranks = crate::rules::ranks_in_parentheses(ranks, exec.ranks);
    match &misuse.problem {
        CaptureProblem::NeverEnded { captured } => {
            let what = match captured.len() {
                0 => "nothing was issued to it since, but the capture blocks the stream's later use".to_string(),
                1 => "the call issued to it since is captured and never runs".to_string(),
                n => format!("the {n} calls issued to it since are captured and never run"),
            };
            let message = format!("the capture of {stream} is never ended{on_ranks}: {what}");
            let mut diagnostic = Diagnostic::new(&CaptureMisuseRule::INFO, misuse.begin.span.clone(), message)
                .with_label("the capture begins here and no cudaStreamEndCapture ends it");
            for call in captured.iter().take(MAX_SHOWN) {
                diagnostic = diagnostic.with_related(call.span.clone(), "captured, never run");
            }
            if captured.len() > MAX_SHOWN {
                diagnostic = diagnostic.with_note(format!("and {} more", captured.len() - MAX_SHOWN));
            }
            diagnostic.with_help(
                "end the capture with `cudaStreamEndCapture`, then instantiate and launch its graph; or issue the work outside the capture",
            )
        }
        CaptureProblem::Forbidden(call) => {
            let message = format!(
                "{} while {stream} is being captured fails (cudaErrorStreamCaptureUnsupported){on_ranks} and invalidates the capture: cudaStreamEndCapture returns no graph, so the captured work never runs",
                call.api
            );
            Diagnostic::new(&CaptureMisuseRule::INFO, call.span.clone(), message)
                .with_label("a synchronize the capture forbids")
                .with_related(misuse.begin.span.clone(), format!("the capture of {stream} begins here"))
                .with_help(
                    "synchronize before cudaStreamBeginCapture or after cudaStreamEndCapture; inside a capture, order work with events",
                )
        }
    }
}
