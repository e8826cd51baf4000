use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::rules::declare_rule;
use crate::timeline::Highlight;
use crate::window::{Focus, with_timeline};

declare_rule! {
    /// ## What it detects
    /// A cycle of waits: each op on the cycle can only run after the previous one, and
    /// the last waits for the first. The witness lists every op on the shortest such
    /// cycle, in order: stream FIFO order, a wait after the record it needs, a device op
    /// after the host calls that issued it.
    ///
    /// ## Why is this a bug
    /// No op on the cycle can ever start, so every stream, HCCL thread and rank on it
    /// stops, and so does everything queued behind them. On a cluster this shows up as
    /// "notify wait timeout" or "event wait timeout" minutes later, far from the cause.
    ///
    /// ## Example
    /// ```text
    /// aclrtStreamWaitEvent(s1, e2);   // s1 waits for s2's record ...
    /// aclrtRecordEvent(e1, s1);
    /// aclrtStreamWaitEvent(s2, e1);   // ... which comes after s2 waits for s1's
    /// aclrtRecordEvent(e2, s2);
    /// ```
    ///
    /// ## Fix
    /// Break the cycle: record before waiting on the other side (both ranks of a
    /// handshake record first, then wait), or move one of the waits after the record
    /// the other side needs.
    ///
    /// Method: strongly connected components of the happens-before graph, shortest
    /// cycle by breadth-first search.
    pub struct Deadlock;
    code = "SG501",
    name = "deadlock",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn is_wait(action: &Action) -> bool {
    matches!(
        action,
        Action::EventWait(_)
            | Action::NotifyWait(_)
            | Action::ChannelNotifyWait { .. }
            | Action::ThreadNotifyWait { .. }
    )
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    for cycle in &analysis.hb.cycles {
        let primary = cycle
            .iter()
            .copied()
            .find(|&n| is_wait(&exec.node(n).action))
            .unwrap_or(cycle[0]);
        let agents: Vec<String> = {
            let mut names: Vec<String> = cycle.iter().map(|&n| exec.agent_name(exec.node(n).agent)).collect();
            names.dedup();
            names.sort();
            names.dedup();
            names
        };
        let start = cycle.iter().position(|&n| n == primary).unwrap_or(0);
        let ordered: Vec<NodeId> = cycle[start..].iter().chain(&cycle[..start]).copied().collect();
        let awaited = ordered.last().map_or_else(String::new, |&n| analysis.describe(n));
        let mut diagnostic = Diagnostic::new(
            &Deadlock::INFO,
            analysis.span(primary),
            match agents.as_slice() {
                [agent] => format!("deadlock: {agent} waits forever for an op queued behind its own wait"),
                _ => format!("deadlock: {} wait for each other forever", agents.join(" and ")),
            },
        )
        .with_label(format!(
            "1. {} waits for {awaited}, which can only run after this wait",
            analysis.describe(primary)
        ))
        .with_help(if agents.len() == 1 {
            "issue the signal before the wait, or from another stream: nothing behind a wait on a stream runs before it"
        } else {
            "break the cycle: record the signal the other side needs before waiting for its signal"
        });
        for (step, &node) in ordered.iter().enumerate().skip(1) {
            diagnostic = diagnostic.with_related(
                analysis.span(node),
                format!("{}. then {}", step + 1, analysis.describe(node)),
            );
        }
        let chain: Vec<String> = ordered.iter().map(|&n| analysis.describe(n)).collect();
        diagnostic = diagnostic.with_note(format!("cycle: {} -> back to the first", chain.join(" -> ")));
        let focus = Focus {
            nodes: &ordered,
            highlight: Highlight::Cycle,
            race: false,
        };
        out.push(with_timeline(analysis, diagnostic, &focus));
    }
}
