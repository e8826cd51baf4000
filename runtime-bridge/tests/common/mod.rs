//! What ran, compared with what was verified.

use syncguard_analyzer::exec::{Action, AgentId, Execution, NodeId};
use syncguard_analyzer::model::OpKind;
use syncguard_runtime_bridge::RunLog;
use syncguard_runtime_bridge::sim::Sim;

/// Whether node `id` is a call of its own: every node but the notify record that
/// `HcommWriteWithNotifyOnThread` adds after its write, which the write's call issues.
fn is_own_call(exec: &Execution, id: NodeId) -> bool {
    let node = exec.node(id);
    let write_notify =
        matches!(node.op.kind, OpKind::RemoteWrite { .. }) && matches!(node.action, Action::ChannelNotifyRecord { .. });
    !write_notify
}

/// The first difference between the calls the run made and the verified Execution's:
/// each host thread's calls in issue order, and each stream's or HCCL thread's calls
/// from each host thread in the order its queue executed them (host threads sharing a
/// queue interleave differently from run to run; the verifier checks every order).
/// `None` when they are the same.
#[allow(dead_code)] // not every test crate that includes this module runs the simulator
pub fn executed_differs(exec: &Execution, log: &RunLog, sim: &Sim) -> Option<String> {
    executed_differs_from(exec, log, &sim.executed_by_agent(), &|_| true)
}

/// [`executed_differs`] for any backend: `executed` holds, for each agent, the nodes its
/// queue executed in order; `issues_work` says whether a device node issues work that a
/// queue executes (a backend may express some calls, such as a kernel that writes
/// nothing, without any).
pub fn executed_differs_from(
    exec: &Execution,
    log: &RunLog,
    executed: &[Vec<NodeId>],
    issues_work: &dyn Fn(NodeId) -> bool,
) -> Option<String> {
    for (index, agent) in exec.agents.iter().enumerate() {
        let id = AgentId(index as u32);
        let differs = if agent.kind.is_device() {
            let verified: Vec<NodeId> = agent
                .nodes
                .iter()
                .copied()
                .filter(|&n| is_own_call(exec, n) && issues_work(n))
                .collect();
            let hosts = verified
                .iter()
                .map(|&n| exec.node(n).host)
                .chain(executed[index].iter().map(|&n| exec.node(n).host));
            let mut hosts: Vec<AgentId> = hosts.collect();
            hosts.sort();
            hosts.dedup();
            hosts.into_iter().find_map(|host| {
                let from = |nodes: &[NodeId]| nodes.iter().copied().filter(|&n| exec.node(n).host == host).collect();
                compare(exec, id, from(&verified), from(&executed[index]))
            })
        } else {
            let issued_by = |n: &NodeId| exec.node(*n).host == id;
            let verified = (0..exec.nodes.len() as u32).map(NodeId).filter(issued_by);
            let ran = log.calls.iter().map(|call| call.node).filter(issued_by);
            compare(
                exec,
                id,
                verified.filter(|&n| is_own_call(exec, n)).collect(),
                ran.collect(),
            )
        };
        if differs.is_some() {
            return differs;
        }
    }
    None
}

fn compare(exec: &Execution, agent: AgentId, verified: Vec<NodeId>, ran: Vec<NodeId>) -> Option<String> {
    (verified != ran).then(|| {
        let calls = |nodes: &[NodeId]| nodes.iter().map(|&n| describe(exec, n)).collect::<Vec<_>>();
        format!(
            "{}: verified {:?}, ran {:?}",
            exec.agent_name(agent),
            calls(&verified),
            calls(&ran)
        )
    })
}

/// `aclrtRecordEvent#12` (the API and the node).
fn describe(exec: &Execution, id: NodeId) -> String {
    format!("{}#{}", exec.node(id).op.api, id.0)
}

/// The `.sync` programs the backends are run on, sorted: the examples, the analyzer's
/// fixtures and the bridge's own programs (each test keeps those that verify clean).
#[allow(dead_code)] // not every test binary that shares this module runs the corpus
pub fn clean_program_corpus() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "../examples",
        "../analyzer/tests/fixtures",
        "tests/programs",
        "tests/differential",
    ] {
        sync_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
}

fn sync_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            sync_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "sync") {
            out.push(path);
        }
    }
}
