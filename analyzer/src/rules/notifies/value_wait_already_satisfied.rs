use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A memory-value wait (`aclrtValueWait`, `cuStreamWaitValue*`) that an earlier
    /// write of the word already satisfies when the wait runs, while another write of
    /// a satisfying value, the one the wait is evidently meant for, is not ordered
    /// before it. Typically a loop that writes the same flag value every iteration and
    /// never resets the word: from the second iteration on, every wait passes on the
    /// first iteration's value.
    ///
    /// ## Why is this a bug
    /// A value wait consumes nothing: once the word satisfies the condition, every wait
    /// on it passes until something changes the word. The waiting stream runs ahead of
    /// the write it was meant to wait for, so the work behind that write (a producer
    /// kernel, a copy) races with the work behind the wait, and the results are read
    /// before they are written.
    ///
    /// ## Example
    /// ```text
    /// for i in 0..4 {
    ///     kernel(produce, s_prod, writes: [data]);
    ///     aclrtValueWrite(flag, 1, 0, s_prod);
    ///     aclrtValueWait(flag, 1, ACL_VALUE_WAIT_EQ, s_cons);   // passes at once from i = 1
    ///     kernel(consume, s_cons, reads: [data]);
    /// }
    /// ```
    ///
    /// ## Fix
    /// Reset the word after each wait (`aclrtValueWrite(flag, 0, 0, s_cons)` on the
    /// waiting stream, before the next write can come), or write increasing values
    /// (`i + 1`) and wait for them with `ACL_VALUE_WAIT_GEQ`.
    pub struct ValueWaitAlreadySatisfied;
    code = "SG308",
    name = "value-wait-already-satisfied",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let (exec, hb) = (analysis.exec, analysis.hb);
    for matched in &hb.matching.values.waits {
        let Some(stale) = matched.already else {
            continue;
        };
        let wait = matched.wait;
        let Some(&meant) = matched
            .candidates
            .iter()
            .find(|&&write| write != stale && !hb.happens_before(write, wait))
        else {
            continue;
        };
        let Action::ValueWait {
            word, value, condition, ..
        } = &exec.node(wait).action
        else {
            continue;
        };
        let word_name = exec.word_name(word);
        let holds = condition.describe(&word_name, *value);
        let written = |write| match exec.node(write).action {
            Action::ValueWrite { value, .. } => value,
            _ => 0,
        };
        let mut diagnostic = Diagnostic::new(
            &ValueWaitAlreadySatisfied::INFO,
            analysis.span(wait),
            format!(
                "{} passes at once: {word_name} still holds {} from an earlier write, so {holds} is already true and the wait is not ordered after the write meant for it",
                exec.describe(wait),
                written(stale)
            ),
        )
        .with_label(format!("{holds} already holds here"));
        diagnostic = if analysis.span(stale) == analysis.span(meant) {
            diagnostic.with_related(
                analysis.span(stale),
                "an earlier iteration's write still satisfies the wait; this iteration's may run after it has passed",
            )
        } else {
            diagnostic
                .with_related(
                    analysis.span(stale),
                    format!(
                        "writes {}, ordered before the wait; nothing overwrites it in between",
                        written(stale)
                    ),
                )
                .with_related(
                    analysis.span(meant),
                    "the write the wait is meant for: it may run after the wait has passed",
                )
        };
        diagnostic.unorders = races_left_unordered(analysis, meant, wait);
        out.push(diagnostic.with_help(format!(
            "reset the word after each wait ({} of a value that fails the condition, on the waiting stream), or write increasing values and wait for them with a greater-or-equal condition",
            exec.node(stale).op.api
        )));
    }
}

/// The races between work before the write the wait is meant for and work after the
/// wait: the order the wait was meant to give them, by their primary location.
fn races_left_unordered(analysis: &Analysis, meant: NodeId, wait: NodeId) -> Vec<crate::source::Span> {
    let (exec, hb) = (analysis.exec, analysis.hb);
    let before_meant = |node: NodeId| {
        let same_queue = exec.node(node).agent == exec.node(meant).agent && node < meant;
        same_queue || hb.happens_before(node, meant)
    };
    let after_wait = |node: NodeId| hb.happens_before(wait, node);
    hb.races()
        .iter()
        .filter(|race| {
            before_meant(race.first) && after_wait(race.second) || before_meant(race.second) && after_wait(race.first)
        })
        .map(|race| analysis.span(race.second))
        .collect()
}
