use super::calls_in;
use crate::analysis::ProgramContext;
use crate::diagnostic::{Diagnostic, Fix, FixEdit};
use crate::model::{OpKind, Pipe};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `AscendC::SetNextTaskStart<AIV_PIPE, AIC_PIPE>` with a template pipe outside the
    /// documented range: `AIV_PIPE` (1st) must be `PIPE_MTE2`, `PIPE_MTE3`, `PIPE_S` or
    /// `PIPE_V`; `AIC_PIPE` (2nd) must be `PIPE_MTE1`, `PIPE_MTE2`, `PIPE_MTE3`,
    /// `PIPE_FIX` or `PIPE_M`. Swapped arguments (`<PIPE_FIX, PIPE_MTE3>`) are the usual
    /// slip. Structural: every call site in kernel code, reachable or not.
    ///
    /// ## Why is this a bug
    /// The pipe names which of the core's instruction pipes may overlap the next
    /// sub-kernel after the call. A vector core (AIV) has no FIX, MTE1 or M pipe and a
    /// cube core (AIC) no V or S pipe in this sense: the early start is set up for a
    /// pipe the core does not use, outside the documented range, with undefined effect
    /// on the overlap of the instructions that follow.
    ///
    /// ## Example
    /// ```text
    /// AscendC::SetNextTaskStart<PIPE_FIX, PIPE_MTE3>();   // AIV_PIPE = PIPE_FIX
    /// ```
    ///
    /// ## Fix
    /// Pass a vector pipe first and a cube pipe second:
    /// `AscendC::SetNextTaskStart<PIPE_MTE3, PIPE_FIX>()` (the defaults).
    pub struct NextTaskStartInvalidPipe;
    code = "SG405",
    name = "next-task-start-invalid-pipe",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

const AIV_PIPES: [Pipe; 4] = [Pipe::Mte2, Pipe::Mte3, Pipe::S, Pipe::V];
const AIC_PIPES: [Pipe; 5] = [Pipe::Mte1, Pipe::Mte2, Pipe::Mte3, Pipe::Fix, Pipe::M];

fn names(pipes: &[Pipe]) -> String {
    let names: Vec<&str> = pipes.iter().map(|p| p.name()).collect();
    let (last, rest) = names.split_last().expect("non-empty");
    format!("{} or {last}", rest.join(", "))
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for superkernel in &context.program.superkernels {
        for sub in &superkernel.subkernels {
            let mut calls = Vec::new();
            calls_in(&sub.body, &mut calls);
            for op in calls {
                let OpKind::SetNextTaskStart { aiv_pipe, aic_pipe, .. } = op.kind else {
                    continue;
                };
                let aiv_ok = AIV_PIPES.contains(&aiv_pipe);
                let aic_ok = AIC_PIPES.contains(&aic_pipe);
                if aiv_ok && aic_ok {
                    continue;
                }
                let mut problems = Vec::new();
                if !aiv_ok {
                    problems.push(format!(
                        "AIV_PIPE (1st) is {}, not a vector-core pipe ({})",
                        aiv_pipe.name(),
                        names(&AIV_PIPES)
                    ));
                }
                if !aic_ok {
                    problems.push(format!(
                        "AIC_PIPE (2nd) is {}, not a cube-core pipe ({})",
                        aic_pipe.name(),
                        names(&AIC_PIPES)
                    ));
                }
                let cores = match (aiv_ok, aic_ok) {
                    (false, false) => "both the AIV and the AIC cores",
                    (false, true) => "the AIV cores",
                    _ => "the AIC cores",
                };
                let swapped = AIV_PIPES.contains(&aic_pipe) && AIC_PIPES.contains(&aiv_pipe);
                let help = if swapped {
                    format!(
                        "the template arguments look swapped: write AscendC::SetNextTaskStart<{}, {}>()",
                        aic_pipe.name(),
                        aiv_pipe.name()
                    )
                } else {
                    let aiv = if aiv_ok { aiv_pipe } else { Pipe::Mte3 };
                    let aic = if aic_ok { aic_pipe } else { Pipe::Fix };
                    format!(
                        "pass a vector pipe first and a cube pipe second, e.g. AscendC::SetNextTaskStart<{}, {}>() (PIPE_MTE3 and PIPE_FIX are the defaults)",
                        aiv.name(),
                        aic.name()
                    )
                };
                let fix = swapped.then(|| Fix {
                    title: format!("Swap {} and {}", aiv_pipe.name(), aic_pipe.name()),
                    edits: vec![FixEdit::SwapArguments {
                        span: op.span.clone(),
                        first: aiv_pipe.name().to_string(),
                        second: aic_pipe.name().to_string(),
                    }],
                });
                let diagnostic = Diagnostic::new(
                        &NextTaskStartInvalidPipe::INFO,
                        op.span.clone(),
                        format!(
                            "SetNextTaskStart<{}, {}>: {}; {cores} of sub-kernel {} get their early start on a pipe outside the documented range, with undefined overlap of the instructions after the call",
                            aiv_pipe.name(),
                            aic_pipe.name(),
                            problems.join("; "),
                            sub.name
                        ),
                    )
                    .with_label(if swapped { "template pipes swapped" } else { "pipe outside the documented range" })
                    .with_help(help);
                out.push(match fix {
                    Some(fix) => diagnostic.with_fix(fix),
                    None => diagnostic,
                });
            }
        }
    }
}
