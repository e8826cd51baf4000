//! Uses of an object that its destroy (`aclrtDestroyEvent`, `aclrtFree`, ...) does not
//! follow in every execution.
//!
//! The walk resolves a use on another host thread than the destroy's even when it
//! walked the destroy first (host threads are walked one after another, not in run
//! order), so the use keeps its node and its effect on every other rule. Whether it
//! comes before the destroy is decided here, by happens-before.

use rustc_hash::FxHashMap as HashMap;

use super::HappensBefore;
use crate::exec::{Action, AgentId, AgentKind, Execution, InstId, NodeId};

/// A use of a destroyed instance on another host thread than the destroy's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UseAroundDestroy {
    pub node: NodeId,
    pub instance: InstId,
    pub destroy: NodeId,
    /// `true`: the destroy happens before the use in every execution. `false`: nothing
    /// orders the use's issue before the destroy, so it can come after it.
    pub certainly_after: bool,
}

/// Device work that uses an instance, issued before a free or destroy that releases
/// the instance at once, and not ordered before that release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingAtRelease {
    pub node: NodeId,
    pub instance: InstId,
    pub release: NodeId,
}

impl HappensBefore<'_, '_> {
    /// Device work still pending when a free or destroy that does not wait for it
    /// ([`crate::api::Api::releases_at_once`]) releases what it uses, in node order. Work
    /// issued after the release is a use after it, which `uses_around_destroys` finds.
    pub fn pending_at_releases(&self) -> Vec<PendingAtRelease> {
        let exec = self.exec;
        let releases_at_once =
            |node: NodeId| crate::api::lookup(exec.node(node).op.api).is_some_and(|api| api.releases_at_once);
        // Per instance, its release if that does not wait (one catalogue look-up each).
        let release_at_once: Vec<Option<NodeId>> = exec
            .instances
            .iter()
            .map(|i| i.destroyed.filter(|&release| releases_at_once(release)))
            .collect();
        if release_at_once.iter().all(Option::is_none) {
            return Vec::new();
        }
        let mut reach = IssueReach::new(exec);
        let mut found = Vec::new();
        let mut used = Vec::new();
        for (index, node) in exec.nodes.iter().enumerate() {
            let id = NodeId(index as u32);
            if !exec.agent(node.agent).kind.is_device() || !self.executes(id) {
                continue;
            }
            instances_used(exec, id, &mut used);
            for &instance in &used {
                let Some(release) = release_at_once[instance.index()] else {
                    continue;
                };
                if self.executes(release)
                    && !self.happens_before(id, release)
                    && self.issued_before(id, release, &mut reach)
                {
                    found.push(PendingAtRelease {
                        node: id,
                        instance,
                        release,
                    });
                }
            }
        }
        found
    }

    /// Every use of a destroyed instance that is not issued before its destroy in
    /// every execution, in node order; searched on first use (two rules ask).
    pub fn uses_around_destroys(&self) -> &[UseAroundDestroy] {
        self.uses_around_destroys
            .get_or_init(|| self.find_uses_around_destroys())
    }

    fn find_uses_around_destroys(&self) -> Vec<UseAroundDestroy> {
        let exec = self.exec;
        if exec.instances.iter().all(|i| i.destroyed.is_none()) {
            return Vec::new();
        }
        let mut reach = IssueReach::new(exec);
        let mut found = Vec::new();
        let mut used = Vec::new();
        for (index, node) in exec.nodes.iter().enumerate() {
            let id = NodeId(index as u32);
            instances_used(exec, id, &mut used);
            for &instance in &used {
                let Some(destroy) = exec.instance(instance).destroyed else {
                    continue;
                };
                if destroy == id || exec.node(destroy).agent == node.host || !self.executes(id) {
                    continue;
                }
                let observed = observed_order(exec, id, destroy);
                if self.happens_before(destroy, id) || observed == Some(std::cmp::Ordering::Greater) {
                    found.push(UseAroundDestroy {
                        node: id,
                        instance,
                        destroy,
                        certainly_after: true,
                    });
                } else if observed.is_none() && !self.issued_before(id, destroy, &mut reach) {
                    found.push(UseAroundDestroy {
                        node: id,
                        instance,
                        destroy,
                        certainly_after: false,
                    });
                }
            }
        }
        found
    }

    /// `node` is issued before the host call `then` in every execution: it happens
    /// before `then`, or its host thread issued it before something that happens
    /// before `then` (or is `then`): a host call, or device work `then` waits for.
    fn issued_before(&self, node: NodeId, then: NodeId, reach: &mut IssueReach) -> bool {
        let n = self.exec.node(node);
        self.happens_before(node, then)
            || reach
                .latest_issue(self, n.host, then)
                .is_some_and(|latest| latest > n.issue)
    }
}

/// Which of a host thread's calls a node is ordered after. The nodes of an agent that
/// happen before a node are the first `k` of its queue, `k` being the node's vector
/// clock entry for that agent, so the latest issue number of every prefix, kept per
/// issuing host thread, answers in one look-up per agent instead of a walk. The prefixes
/// are made at the first question: most runs ask none (every use is ordered by
/// happens-before), and making them reads every node.
struct IssueReach<'e, 'p> {
    exec: &'e Execution<'p>,
    /// Per agent, per host thread issuing to it: `prefix[k]` is one more than the
    /// latest issue number among the agent's first `k` nodes issued by that thread,
    /// 0 when there is none.
    prefixes: Option<Vec<IssuePrefixes>>,
    /// Answers by (host thread, node): every use of an instance asks about its destroy.
    latest: HashMap<(AgentId, NodeId), Option<u32>>,
}

impl<'e, 'p> IssueReach<'e, 'p> {
    fn new(exec: &'e Execution<'p>) -> Self {
        IssueReach {
            exec,
            prefixes: None,
            latest: HashMap::default(),
        }
    }

    /// The latest issue number of a node `host` issued that is `then` or happens
    /// before it.
    fn latest_issue(&mut self, hb: &HappensBefore, host: AgentId, then: NodeId) -> Option<u32> {
        if let Some(&known) = self.latest.get(&(host, then)) {
            return known;
        }
        let exec = self.exec;
        let prefixes = self.prefixes.get_or_insert_with(|| {
            exec.agents
                .iter()
                .map(|agent| issue_prefixes(exec, &agent.nodes))
                .collect()
        });
        let mut latest = 0;
        for (agent, per_host) in prefixes.iter().enumerate() {
            let before = hb.clock(then, AgentId(agent as u32)) as usize;
            for (_, prefix) in per_host.iter().filter(|(h, _)| *h == host) {
                latest = latest.max(prefix[before]);
            }
        }
        let answer = latest.checked_sub(1);
        self.latest.insert((host, then), answer);
        answer
    }
}

/// Per host thread issuing to a queue: the latest issue number (plus one) among the
/// queue's first `k` nodes that thread issued, for every `k`.
type IssuePrefixes = Vec<(AgentId, Vec<u32>)>;

/// The [`IssuePrefixes`] of `queue`, for each host thread that issued some of it.
fn issue_prefixes(exec: &Execution, queue: &[NodeId]) -> IssuePrefixes {
    let mut hosts: Vec<AgentId> = queue.iter().map(|&node| exec.node(node).host).collect();
    hosts.sort();
    hosts.dedup();
    hosts
        .into_iter()
        .map(|host| {
            let mut prefix = Vec::with_capacity(queue.len() + 1);
            prefix.push(0);
            for &node in queue {
                let n = exec.node(node);
                let latest = *prefix.last().unwrap_or(&0);
                prefix.push(if n.host == host {
                    latest.max(n.issue + 1)
                } else {
                    latest
                });
            }
            (host, prefix)
        })
        .collect()
}

/// In a trace (one observed run), whether the use's line came before or after the
/// destroy's: the host threads were ordered that way by synchronization the trace does
/// not show. `None` for a program, which stands for every run.
fn observed_order(exec: &Execution, node: NodeId, destroy: NodeId) -> Option<std::cmp::Ordering> {
    if !exec.program.settings.observed_run {
        return None;
    }
    let (used, destroyed) = (&exec.node(node).op.span, &exec.node(destroy).op.span);
    Some(used.range.start.cmp(&destroyed.range.start))
}

/// The instances a node uses, into `used`: what its action names, and the queue it
/// runs on.
fn instances_used(exec: &Execution, node: NodeId, used: &mut Vec<InstId>) {
    let n = exec.node(node);
    used.clear();
    match &n.action {
        Action::Destroy(i)
        | Action::EventRecord(i)
        | Action::EventWait(i)
        | Action::EventReset(i)
        | Action::EventQuery(i)
        | Action::EventSync(i)
        | Action::WaitsSync { event: i, .. }
        | Action::NotifyRecord(i)
        | Action::NotifyWait(i)
        | Action::ChannelNotifyRecord { channel: i, .. }
        | Action::ChannelNotifyWait { channel: i, .. }
        | Action::ThreadNotifyRecord { target: i, .. }
        | Action::ThreadNotifyWait { thread: i, .. } => used.push(*i),
        Action::EventElapsedTime { start, end } => used.extend([*start, *end]),
        Action::Access(accesses) => used.extend(accesses.iter().map(|a| a.buffer)),
        Action::ValueWrite { word, .. } | Action::ValueWait { word, .. } => used.push(word.buffer),
        Action::AgentSync { agent, .. } => used.extend(queue_instance(exec, *agent)),
        Action::Create(_) | Action::DeviceSync { .. } | Action::Spawn(_) | Action::Other => {}
    }
    used.extend(queue_instance(exec, n.agent));
}

fn queue_instance(exec: &Execution, agent: crate::exec::AgentId) -> Option<InstId> {
    match exec.agent(agent).kind {
        AgentKind::Stream(inst) | AgentKind::HcclThread(inst) => Some(inst),
        AgentKind::Host(_) => None,
    }
}
