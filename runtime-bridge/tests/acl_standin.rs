//! The ACL backend against stand-in CANN libraries (`tests/acl_standin/*.c`, built here
//! with `cc`): every program that verifies clean and that the ACL backend can express
//! runs to completion, and what the stand-in's streams and HCCL threads executed is
//! exactly the verified calls, compared as `executed_calls.rs` compares the simulator's.
//! The stand-in runs the work for real (a worker thread per queue, blocking waits), so a
//! backend that issued a wait on the wrong object would hang or fail here.
//!
//! Each call the driver makes is tagged with its node (`acl_standin_set_tag`), and every
//! task the stand-in queues keeps the tag of the call that issued it.

#![allow(unsafe_code)] // calling the stand-in's test hooks

mod common;

use std::ffi::{CStr, CString, OsString, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use libloading::Library;
use syncguard_analyzer::exec::{AgentId, Execution, InstId, NodeId, instantiate};
use syncguard_analyzer::{Severity, Sources, check_sync_bytes};
use syncguard_runtime_bridge::acl::{self, AclBackend};
use syncguard_runtime_bridge::backend::{GroupTasks, Host, HostCall, ObjectSpec, Work};
use syncguard_runtime_bridge::plan::Call;
use syncguard_runtime_bridge::{Backend, Fault, Plan, RunLog, cannot_run, run};

#[path = "../../tests/acl_standin/build.rs"]
mod standin_build;

/// The stand-in's test hooks (see `tests/acl_standin/standin.h`).
struct StandIn {
    root: PathBuf,
    set_tag: unsafe extern "C" fn(u64),
    set_fail: unsafe extern "C" fn(*const c_char, u32),
    executed: unsafe extern "C" fn(*mut u64, *mut u64, *mut *const c_char, usize) -> usize,
    report: unsafe extern "C" fn() -> *const c_char,
    _library: Library,
}

/// Tag of calls outside any plan call (the backend's final drain).
const FINISH: u64 = u64::MAX;

/// Runs that use the stand-in one at a time: its log and failure setting are global.
static STAND_IN_USER: Mutex<()> = Mutex::new(());

fn stand_in() -> &'static StandIn {
    static BUILT: OnceLock<StandIn> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("acl-standin-bridge");
        standin_build::build_stand_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests"), &root);
        // SAFETY: the stand-in built above; its initialisers only read the environment.
        let library = unsafe { Library::new(root.join("lib64").join("libascendcl.so")) }.expect("the stand-in loads");
        // SAFETY: each type is the hook's C prototype in standin.h / ascendcl.c.
        unsafe {
            StandIn {
                set_tag: *library.get(b"acl_standin_set_tag").unwrap(),
                set_fail: *library.get(b"acl_standin_set_fail").unwrap(),
                executed: *library.get(b"acl_standin_executed").unwrap(),
                report: *library.get(b"acl_standin_report").unwrap(),
                root,
                _library: library,
            }
        }
    })
}

impl StandIn {
    fn backend(&self) -> AclBackend {
        let env = |name: &str| (name == "ASCEND_HOME_PATH").then(|| OsString::from(&self.root));
        let acl = acl::load_with(&env).unwrap_or_else(|err| panic!("{err}"));
        AclBackend::new(acl).expect("aclInit")
    }

    fn tag(&self, tag: u64) {
        // SAFETY: plain integer argument; sets a thread-local.
        unsafe { (self.set_tag)(tag) }
    }

    /// Makes the `nth` call of `api` fail (`None`: no failures).
    fn fail(&self, api: Option<&str>, nth: u32) {
        let api = CString::new(api.unwrap_or("")).unwrap();
        // SAFETY: a NUL-terminated string the hook copies.
        unsafe { (self.set_fail)(api.as_ptr(), nth) }
    }

    /// Every task executed so far: (tag, queue, API).
    fn executed(&self) -> Vec<(u64, u64, String)> {
        // SAFETY: called with no room to learn the count, then with room for it; the
        // API names are static strings of the stand-in.
        unsafe {
            let n = (self.executed)(std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
            let (mut tags, mut queues) = (vec![0u64; n], vec![0u64; n]);
            let mut apis = vec![std::ptr::null::<c_char>(); n];
            let n = (self.executed)(tags.as_mut_ptr(), queues.as_mut_ptr(), apis.as_mut_ptr(), n).min(n);
            (0..n)
                .map(|i| {
                    (
                        tags[i],
                        queues[i],
                        CStr::from_ptr(apis[i]).to_string_lossy().into_owned(),
                    )
                })
                .collect()
        }
    }

    /// Anomalies (lost signals, hangs), then "alive: …".
    fn report(&self) -> String {
        // SAFETY: a NUL-terminated string valid until the next call (calls are serialized).
        unsafe { CStr::from_ptr((self.report)()) }
            .to_string_lossy()
            .into_owned()
    }
}

const NOTHING_ALIVE: &str = "alive: 0 streams, 0 events, 0 notifies, 0 communicators, 0 allocations, 0 devices set";

/// The ACL backend, with each call tagged with its node.
struct Tagged<'s> {
    inner: AclBackend,
    stand_in: &'s StandIn,
}

impl Tagged<'_> {
    fn at(&self, node: NodeId) {
        self.stand_in.tag(u64::from(node.0) + 1);
    }
}

impl Backend for Tagged<'_> {
    fn create(&self, host: Host, inst: InstId, object: &ObjectSpec) -> Result<(), Fault> {
        self.at(host.node);
        self.inner.create(host, inst, object)
    }
    fn destroy(&self, host: Host, inst: InstId) -> Result<(), Fault> {
        self.at(host.node);
        self.inner.destroy(host, inst)
    }
    fn enqueue(&self, host: Host, queue: InstId, work: &Work, node: NodeId) -> Result<(), Fault> {
        self.at(node);
        self.inner.enqueue(host, queue, work, node)
    }
    fn host_call(&self, host: Host, call: &HostCall) -> Result<(), Fault> {
        self.at(host.node);
        self.inner.host_call(host, call)
    }
    fn group_tasks(&self, tasks: GroupTasks<'_>) -> Result<(), Fault> {
        self.inner.group_tasks(tasks)
    }
    fn finish(&self) -> Result<(), Fault> {
        self.stand_in.tag(FINISH);
        self.inner.finish()
    }
}

/// Runs `plan` on the stand-in: the run's log, what each agent's queue executed, and the
/// first inconsistency in where tasks ran (a task of no plan call, an agent's tasks on
/// two queues, two agents on one queue).
fn run_tagged(exec: &Execution, plan: &Plan) -> (RunLog, Vec<Vec<NodeId>>, Result<(), String>) {
    let stand_in = stand_in();
    let before = stand_in.executed().len();
    let backend = Tagged {
        inner: stand_in.backend(),
        stand_in,
    };
    let log = run(plan, &backend);
    drop(backend);
    let mut agent_of = vec![AgentId(0); exec.nodes.len()];
    for (index, agent) in exec.agents.iter().enumerate() {
        for &node in &agent.nodes {
            agent_of[node.index()] = AgentId(index as u32);
        }
    }
    let mut executed = vec![Vec::new(); exec.agents.len()];
    let mut queue_of_agent: Vec<Option<u64>> = vec![None; exec.agents.len()];
    let mut agent_of_queue = std::collections::HashMap::new();
    let mut placement = Ok(());
    for (tag, queue, api) in stand_in.executed().into_iter().skip(before) {
        if tag == 0 || tag == FINISH {
            placement = placement.and(Err(format!("{api} ran on queue {queue} for no call of the plan")));
            continue;
        }
        let node = NodeId((tag - 1) as u32);
        let agent = agent_of[node.index()];
        let list: &mut Vec<NodeId> = &mut executed[agent.index()];
        if list.last() != Some(&node) {
            list.push(node); // a kernel's memsets are one call
        }
        let name = exec.agent_name(agent);
        if *queue_of_agent[agent.index()].get_or_insert(queue) != queue {
            placement = placement.and(Err(format!("{name}'s calls ran on two queues ({api})")));
        }
        let owner = *agent_of_queue.entry(queue).or_insert(agent);
        if owner != agent {
            placement = placement.and(Err(format!(
                "{name} and {} ran on one queue ({api})",
                exec.agent_name(owner)
            )));
        }
    }
    (log, executed, placement)
}

/// Whether a device node issues work the stand-in queues: the ACL backend runs a kernel as
/// a memset of each range it writes, so a kernel that writes nothing issues none.
fn issues_work(plan: &Plan) -> impl Fn(NodeId) -> bool {
    let mut silent = std::collections::HashSet::new();
    for script in plan.scripts.iter().flatten() {
        for step in &script.steps {
            if let Call::Enqueue {
                work: Work::Kernel { accesses, .. },
                ..
            } = &step.call
                && !accesses.iter().any(|access| access.write)
            {
                silent.insert(step.node);
            }
        }
    }
    move |node| !silent.contains(&node)
}

/// What a backend without GE task lists and SuperKernel launches cannot run.
fn acl_cannot_run(exec: &Execution, plan: &Plan) -> bool {
    let superkernel = plan.scripts.iter().flatten().flat_map(|s| &s.steps).any(|step| {
        matches!(
            step.call,
            Call::Enqueue {
                work: Work::SuperKernel { .. },
                ..
            }
        )
    });
    !exec.program.ge_ops.is_empty() || superkernel
}

/// `Ok(true)`: ran exactly as verified; `Ok(false)`: not run (does not verify, or needs
/// what the ACL backend refuses).
fn runs_as_verified(name: &str, text: &str) -> Result<bool, String> {
    let checked = check_sync_bytes(&mut Sources::default(), name, text.as_bytes());
    if checked.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        return Ok(false);
    }
    let smallest = checked.program.params.iter().map(|p| p.min).collect();
    let exec = instantiate(&checked.program, smallest);
    if cannot_run(&exec).is_some() {
        return Ok(false);
    }
    let plan = Plan::new(&exec);
    if acl_cannot_run(&exec, &plan) {
        return Ok(false);
    }
    let (log, executed, placement) = run_tagged(&exec, &plan);
    if !log.faults.is_empty() {
        let first: Vec<_> = log.faults.iter().take(3).collect();
        return Err(format!("{} faults, the first: {first:?}", log.faults.len()));
    }
    placement?;
    let report = stand_in().report();
    if report != NOTHING_ALIVE {
        return Err(format!("the stand-in reports:\n{report}"));
    }
    match common::executed_differs_from(&exec, &log, &executed, &issues_work(&plan)) {
        Some(difference) => Err(difference),
        None => Ok(true),
    }
}

#[test]
fn every_clean_program_runs_on_the_acl_standin_exactly_as_verified() {
    let _serial = STAND_IN_USER.lock().unwrap_or_else(|p| p.into_inner());
    let files = common::clean_program_corpus();
    let (mut ran, mut examples) = (0, 0);
    let mut differences = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable program");
        match runs_as_verified(&file.display().to_string(), &text) {
            Ok(true) => {
                ran += 1;
                examples += usize::from(file.starts_with(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")));
            }
            Ok(false) => {}
            Err(why) => differences.push(format!("{}: {why}", file.display())),
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    eprintln!("{ran} programs ran on the stand-in, {examples} of them examples");
    assert!(
        ran >= 40 && examples >= 12,
        "only {ran} programs ({examples} examples) ran: the programs that verify clean went missing"
    );
}

/// A call that fails stops its host thread with that call's fault; the backend still
/// releases everything the run created and resets every device it set.
#[test]
fn a_failed_call_stops_the_run_and_everything_is_released() {
    let _serial = STAND_IN_USER.lock().unwrap_or_else(|p| p.into_inner());
    let stand_in = stand_in();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/acl-event-sync/correct.sync");
    let text = std::fs::read_to_string(&path).unwrap();
    let checked = check_sync_bytes(&mut Sources::default(), "correct.sync", text.as_bytes());
    let exec = instantiate(&checked.program, Vec::new());
    let plan = Plan::new(&exec);
    for api in [
        "aclrtRecordEvent",
        "aclrtStreamWaitEvent",
        "aclrtMalloc",
        "aclrtSynchronizeStream",
    ] {
        stand_in.fail(Some(api), 1);
        let (log, _, _) = run_tagged(&exec, &plan);
        stand_in.fail(None, 1);
        let [(Some(node), Fault::Api { api: failed, code, .. })] = log.faults.as_slice() else {
            panic!("{api}: one failed call expected, got {:?}", log.faults);
        };
        assert_eq!(failed, api);
        assert_ne!(*code, 0);
        assert_eq!(exec.node(*node).op.api, api, "the fault names the call that failed");
        assert_eq!(stand_in.report(), NOTHING_ALIVE, "after a failed {api}");
    }
}
