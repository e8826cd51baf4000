use super::declare_reading_rule;
use crate::api::{Api, Effect};
use crate::diagnostic::Diagnostic;
use crate::source::Span;

declare_reading_rule! {
    /// ## What it detects
    /// In C/C++ source, a call of a synchronization API whose return code is thrown
    /// away: the call is a statement of its own, not wrapped in a checking macro
    /// (`ACL_CHECK(...)`, `CHK_RET(...)`), compared, or assigned. In Python (pyACL,
    /// which returns the code last: `ret = acl.rt.record_event(...)`, `stream, ret =
    /// acl.rt.create_stream()`), a call whose code is not used: a bare call, a code
    /// bound to `_`, or bound to a name that is assigned again, or never read, before
    /// the function returns. The APIs are those whose failure silently breaks an
    /// order: recording, waiting on and resetting events and notifies, synchronizing,
    /// fences and memory-value writes and waits. A discarded create or allocation is
    /// SG703 (opt-in): its failure shows at the first checked use of the handle. A call
    /// cast to `(void)` is a deliberate discard and is not reported; frees and destroys
    /// are not either.
    ///
    /// ## Why is this a bug
    /// A record that failed (an invalid handle, a stream of another device, a full task
    /// queue) never signals: the wait on the other stream then hangs until the notify
    /// wait timeout, often far from the call that failed, and the error code that
    /// named the cause is gone. A failed create leaves the handle uninitialised, and
    /// every later call on it fails the same silent way.
    ///
    /// ## Example
    /// ```text
    /// aclrtRecordEvent(ready, copyStream);            // returns aclError, ignored
    /// aclrtStreamWaitEvent(computeStream, ready);
    /// ```
    ///
    /// ## Fix
    /// Check it as the rest of the code does: `ACL_CHECK(aclrtRecordEvent(ready,
    /// copyStream));`, or `if (aclrtRecordEvent(...) != ACL_SUCCESS) { ... }`; write
    /// `(void)` before the call where ignoring the failure is intended.
    pub struct UncheckedReturn;
    code = "SG701",
    name = "unchecked-return",
    severity = Warning,
}

/// Whether a failure of `api` changes what is synchronized (SG701 applies).
pub fn failure_changes_synchronization(api: &Api) -> bool {
    matches!(
        api.effect,
        Effect::Create
            | Effect::EventRecord
            | Effect::EventWait
            | Effect::EventReset
            | Effect::EventSynchronize
            | Effect::StreamSynchronize
            | Effect::DeviceSynchronize
            | Effect::NotifyRecord
            | Effect::NotifyWait
            | Effect::ChannelNotifyRecord
            | Effect::ChannelNotifyWait
            | Effect::ThreadNotifyRecord
            | Effect::ThreadNotifyWait
            | Effect::NotifyRecordOnThread
            | Effect::NotifyWaitOnThread
            | Effect::Fence { .. }
            | Effect::ThreadSynchronize
            | Effect::ValueWrite { .. }
            | Effect::ValueWait { .. }
    ) && !matches!(api.creates, crate::api::Creates::Existing(_))
}

/// SG701 at a call whose return code `api` returns is discarded (SG703 for a create).
pub fn unchecked_return(span: Span, api: &Api) -> Diagnostic {
    let rule = match api.effect {
        Effect::Create => &super::UncheckedCreate::INFO,
        _ => &UncheckedReturn::INFO,
    };
    let consequence = match api.effect {
        Effect::Create => "if it fails, the handle stays uninitialised and every later call on it fails too",
        Effect::EventRecord
        | Effect::NotifyRecord
        | Effect::ChannelNotifyRecord
        | Effect::ThreadNotifyRecord
        | Effect::NotifyRecordOnThread
        | Effect::ValueWrite { .. } => {
            "if it fails, nothing is signalled and the waits on it hang until the wait timeout, far from the cause"
        }
        _ => "if it fails, the order it should establish does not exist and nothing says so",
    };
    Diagnostic::new(
        rule,
        span,
        format!("the return code of {} is discarded: {consequence}", api.name),
    )
    .with_label("return code ignored")
    .with_help(format!(
        "check it (`ACL_CHECK({}(...))`, or compare it with ACL_SUCCESS / cudaSuccess), or write `(void)` before the call if ignoring a failure is intended",
        api.name
    ))
}
