use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::Action;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A memory-value wait (`aclrtValueWait`, `cuStreamWaitValue*`) on a word that
    /// nothing writes before the wait can run: no value write, memset, copy or kernel
    /// of the word is ordered before it. The word holds whatever the memory held: a
    /// fresh allocation's leftovers, or the flag an earlier run of the same code left
    /// in memory the allocator hands out again. Memory from before a partial trace is
    /// exempt: its content was set before the trace began.
    ///
    /// ## Why is this a bug
    /// When the leftover value satisfies the condition, the wait passes at once and the
    /// work behind it runs before the write it waits for: an intermittent race that
    /// depends on what the memory held. With `ACL_VALUE_WAIT_GEQ` (a cyclic comparison)
    /// half of all leftover values pass.
    ///
    /// ## Example
    /// ```text
    /// let flag = aclrtMalloc(8, ACL_MEM_MALLOC_HUGE_FIRST);
    /// aclrtValueWait(flag, 1, ACL_VALUE_WAIT_EQ, s_cons);   // flag holds leftovers
    /// aclrtValueWrite(flag, 1, 0, s_prod);
    /// ```
    ///
    /// ## Fix
    /// Set the word to a value that fails the condition before the wait can run:
    /// `aclrtMemset(flag, 8, 0, 8)` after the allocation, or `aclrtValueWrite(flag, 0,
    /// 0, s_cons)` on the waiting stream before the wait.
    pub struct ValueWaitOnUnsetMemory;
    code = "SG309",
    name = "value-wait-on-unset-memory",
    severity = Warning,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    for matched in &analysis.hb.matching.values.waits {
        let Some(&meant) = matched.candidates.first() else {
            continue;
        };
        let wait = matched.wait;
        let Action::ValueWait {
            word, value, condition, ..
        } = &exec.node(wait).action
        else {
            continue;
        };
        if !matched.unset || exec.existed_before(word.buffer) {
            continue;
        }
        let word_name = exec.word_name(word);
        let holds = condition.describe(&word_name, *value);
        out.push(
            Diagnostic::new(
                &ValueWaitOnUnsetMemory::INFO,
                analysis.span(wait),
                format!(
                    "{} may pass at once: nothing sets {word_name} before it, so the word holds whatever the memory held, and {holds} may already be true",
                    exec.describe(wait)
                ),
            )
            .with_label(format!("{holds} may hold before any write"))
            .with_related(analysis.span(meant), "the write the wait is meant for")
            .with_help(format!(
                "set {word_name} to a value that fails the condition before the wait can run (a memset after the allocation, or a value write on the waiting stream before the wait)"
            )),
        );
    }
}
