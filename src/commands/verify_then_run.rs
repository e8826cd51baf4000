//! `syncguard verify-then-run`: check one program; run it only if nothing failed.

use std::path::{Path, PathBuf};

use serde_json::json;
use syncguard_analyzer::exec::{Execution, instantiate};
use syncguard_analyzer::trace::write::write_trace;
use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Program, Sources, analyze_assignment};
use syncguard_runtime_bridge::sim::{Sim, SimOptions};
use syncguard_runtime_bridge::{Fault, Plan, RunLog, cannot_run, report, run as run_plan};

use super::check::{Findings, Report, check_input, print_diagnostics};
use super::output;
use crate::{BackendChoice, Format, Outcome};
use syncguard_project::inputs::{collect_inputs, report as report_io};

pub struct Request {
    pub path: PathBuf,
    pub backend: BackendChoice,
    pub seed: u64,
    pub trace_out: Option<PathBuf>,
    pub params: Vec<(String, i64)>,
    /// Bytes the simulator may hold for buffer contents.
    pub sim_memory_limit: u64,
    pub overrides: Overrides,
    pub report: Report,
}

pub fn run(request: &Request) -> Outcome {
    if let Some(trace) = &request.trace_out
        && is_same_file(&request.path, trace)
    {
        eprintln!(
            "syncguard: --trace-out {} is the program {} itself: it would be overwritten, so nothing was run",
            trace.display(),
            request.path.display()
        );
        return Outcome::Failure;
    }
    let (inputs, failures) = collect_inputs(std::slice::from_ref(&request.path));
    let [input] = inputs.as_slice() else {
        if failures == 0 {
            eprintln!("syncguard: verify-then-run takes one file, not a directory");
        }
        return Outcome::Failure;
    };
    let mut sources = Sources::default();
    let checked = match check_input(&mut sources, input, &request.overrides) {
        Ok(checked) => checked,
        Err(err) => {
            report_io(&input.file, &err);
            return Outcome::Failure;
        }
    };
    let CheckedFile {
        program,
        diagnostics,
        proofs,
        unproved,
    } = checked;
    let mut findings = Findings {
        diagnostics,
        proofs,
        unproved,
        files: 1,
        run_timeline: None,
    };
    let text = request.report.format == Format::Text;
    // Text shows the verification at once; JSON is one document, written at the end.
    if text {
        findings.print(&mut sources, &request.report, None);
    }
    let refuse = |findings: &mut Findings, sources: &mut Sources, run: serde_json::Value, outcome| {
        if !text {
            findings.print(sources, &request.report, Some(("run", run)));
        }
        outcome
    };
    if request.report.fails(&findings.diagnostics) {
        eprintln!("syncguard: {} did not verify: nothing was executed", input.display);
        return refuse(&mut findings, &mut sources, json!(null), Outcome::Findings);
    }
    if !program.kernels.is_empty() {
        // A kernel's pipe program is checked, not run: the device runs it when host code
        // launches it, and a `.sync` kernel has no host code that does.
        let message = format!(
            "{} holds Ascend C kernels (`aicore`): their pipe programs are verified, but a kernel runs only when \
             its host code launches it: nothing was executed",
            input.display
        );
        eprintln!("syncguard: {message}");
        return refuse(&mut findings, &mut sources, json!({"error": message}), Outcome::Failure);
    }
    let params = match parameter_values(&program, &request.params) {
        Ok(params) => params,
        Err(message) => {
            eprintln!("syncguard: {message}");
            return refuse(&mut findings, &mut sources, json!({"error": message}), Outcome::Failure);
        }
    };
    // The sampled runs may not include the values chosen for this one: check it too.
    if !program.params.is_empty() {
        let instance = analyze_assignment(&program, params.clone(), &request.overrides.smt);
        if request.report.fails(&instance) {
            if text {
                print_diagnostics(&instance, &mut sources, &request.report);
            }
            findings.diagnostics.extend(instance);
            eprintln!(
                "syncguard: {} did not verify with these values: nothing was executed",
                input.display
            );
            return refuse(&mut findings, &mut sources, json!(null), Outcome::Findings);
        }
    }
    let exec = instantiate(&program, params);
    if let Some(why) = cannot_run(&exec) {
        let message = format!("{} {why}: nothing was executed", input.display);
        eprintln!("syncguard: {message}");
        return refuse(&mut findings, &mut sources, json!({"error": message}), Outcome::Failure);
    }
    let plan = Plan::new(&exec);
    let calls = plan.call_count();
    let (log, run_findings) = match execute(request, &exec, &plan) {
        Ok(ran) => ran,
        Err(message) => {
            eprintln!("syncguard: {message}");
            return refuse(&mut findings, &mut sources, json!({"error": message}), Outcome::Failure);
        }
    };
    let faults: Vec<String> = log
        .faults
        .iter()
        .map(|(node, fault)| report::fault_line(&exec, &sources, *node, fault))
        .collect();
    let summary = RunSummary {
        request,
        exec: &exec,
        log: &log,
        calls,
        findings: run_findings.len(),
    };
    let failed = request.report.fails(&run_findings);
    if text {
        print_diagnostics(&run_findings, &mut sources, &request.report);
        for fault in &faults {
            eprintln!("syncguard: {fault}");
        }
        output::println(&summary.line());
    } else {
        if request.report.format == Format::Html {
            let called: Vec<_> = log.calls.iter().map(|call| call.node).collect();
            let failed: Vec<_> = log.faults.iter().filter_map(|(node, _)| *node).collect();
            findings.run_timeline = syncguard_analyzer::run_timeline(&exec, &called, &failed);
        }
        findings.diagnostics.extend(run_findings);
        findings.print(&mut sources, &request.report, Some(("run", summary.json(&faults))));
    }
    if let Some(path) = &request.trace_out
        && let Err(err) = save_trace(path, &exec, &log, &sources)
    {
        eprintln!("syncguard: cannot write {}: {err}", path.display());
        return Outcome::Failure;
    }
    // A wait that timed out is the program's fault (exit 1); any other failed call is
    // the runtime's or the environment's (exit 2).
    let timed_out = |(_, fault): &(_, Fault)| matches!(fault, Fault::Timeout { .. });
    if !log.faults.iter().all(timed_out) {
        Outcome::Failure
    } else if failed || !log.faults.is_empty() {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// Whether `a` and `b` name one existing file, whatever the spelling: `./p.sync` and
/// `p.sync`, a symbolic link, a hard link.
fn is_same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) if a == b => true,
        (Ok(_), Ok(_)) => same_inode(a, b),
        _ => false,
    }
}

#[cfg(unix)]
fn same_inode(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_inode(_a: &Path, _b: &Path) -> bool {
    false
}

/// Each parameter's value: as given, else its smallest.
fn parameter_values(program: &Program, given: &[(String, i64)]) -> Result<Vec<i64>, String> {
    for (name, _) in given {
        if !program.params.iter().any(|p| &p.name == name) {
            let known: Vec<&str> = program.params.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "the program has no parameter `{name}` (it has: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
    }
    program
        .params
        .iter()
        .map(|param| {
            let value = given
                .iter()
                .rev()
                .find(|(name, _)| *name == param.name)
                .map_or(param.min, |(_, v)| *v);
            let max = param.max.unwrap_or(i64::MAX);
            if value < param.min || value > max {
                return Err(format!(
                    "{} = {value} is outside its declared range {}..={max}",
                    param.name, param.min
                ));
            }
            Ok(value)
        })
        .collect()
}

/// Runs the plan on the chosen backend; returns what ran and what the run observed.
fn execute(request: &Request, exec: &Execution, plan: &Plan) -> Result<(RunLog, Vec<Diagnostic>), String> {
    match request.backend {
        BackendChoice::Sim => {
            let sim = Sim::new(
                exec,
                SimOptions {
                    seed: request.seed,
                    memory_limit: request.sim_memory_limit,
                    ..SimOptions::default()
                },
            );
            let log = run_plan(plan, &sim);
            let note = format!(
                "seed {}; the verifier accepted this program, so the verifier and the simulator disagree: please report it with the program",
                request.seed
            );
            let findings = report::sim_findings(exec, &sim)
                .into_iter()
                .map(|finding| finding.with_note(note.clone()))
                .collect();
            Ok((log, findings))
        }
        BackendChoice::Acl => {
            let acl = syncguard_runtime_bridge::acl::load().map_err(|err| err.to_string())?;
            let backend = syncguard_runtime_bridge::acl::AclBackend::new(acl)
                .map_err(|fault| format!("cannot start the ACL runtime: {fault}"))?;
            Ok((run_plan(plan, &backend), Vec::new()))
        }
        BackendChoice::Cuda => run_cuda(plan),
    }
}

#[cfg(feature = "cuda")]
fn run_cuda(plan: &Plan) -> Result<(RunLog, Vec<Diagnostic>), String> {
    let cuda = syncguard_runtime_bridge::cuda::load().map_err(|err| err.to_string())?;
    let backend = syncguard_runtime_bridge::cuda::CudaBackend::new(cuda)
        .map_err(|fault| format!("cannot start the CUDA driver: {fault}"))?;
    Ok((run_plan(plan, &backend), Vec::new()))
}

#[cfg(not(feature = "cuda"))]
fn run_cuda(_plan: &Plan) -> Result<(RunLog, Vec<Diagnostic>), String> {
    Err("this syncguard was built without the CUDA backend: rebuild with `cargo build --release --features cuda` (the CUDA driver, libcuda.so, is loaded at run time)".into())
}

fn save_trace(path: &PathBuf, exec: &Execution, log: &RunLog, sources: &Sources) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    write_trace(exec, &log.calls, Some(sources), &mut out)?;
    std::io::Write::flush(&mut out)
}

struct RunSummary<'a, 'p> {
    request: &'a Request,
    exec: &'a Execution<'p>,
    log: &'a RunLog,
    calls: usize,
    findings: usize,
}

impl RunSummary<'_, '_> {
    fn backend(&self) -> String {
        match self.request.backend {
            BackendChoice::Sim => format!("sim (seed {})", self.request.seed),
            BackendChoice::Acl => "acl".into(),
            BackendChoice::Cuda => "cuda".into(),
        }
    }

    /// `ran on sim (seed 0, N = 2): 48 calls in 3.1 ms, no hang, no race`.
    fn line(&self) -> String {
        let mut context = self.backend();
        if let Some(assignment) = self.exec.assignment() {
            context = format!("{context}, {assignment}");
        }
        let outcome = match (self.findings, self.log.faults.len()) {
            (0, 0) => "completed: no hang, no race, no lost signal".to_string(),
            (0, faults) => format!("stopped by {faults} failed call{}", if faults == 1 { "" } else { "s" }),
            (n, _) => format!("{n} run-time finding{}", if n == 1 { "" } else { "s" }),
        };
        format!(
            "ran on {context}: {} calls in {:.1} ms, {outcome}",
            self.calls,
            self.log.elapsed.as_secs_f64() * 1e3
        )
    }

    fn json(&self, faults: &[String]) -> serde_json::Value {
        json!({
            "backend": self.backend(),
            "params": self.exec.assignment(),
            "calls": self.calls,
            "elapsed_ms": self.log.elapsed.as_secs_f64() * 1e3,
            "findings": self.findings,
            "faults": faults,
        })
    }
}
