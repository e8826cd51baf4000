use super::spelled;
use crate::analysis::Analysis;
use crate::diagnostic::{Diagnostic, Severity};
use crate::exec::Action;
use crate::model::{EventCreator, ObjectKind};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// `aclrtStreamWaitEvent(s, ev)` (`acl.rt.stream_wait_event`) where the record the
    /// wait binds to was issued before it on the same stream `s`: the stream waits on
    /// its own record. CUDA events are not reported (there the wait is a harmless
    /// no-op).
    ///
    /// ## Why is this a bug
    /// For events from `aclrtCreateEvent` and `aclrtCreateEventWithFlag` the NPU raises
    /// an exception for a wait on an event last recorded on the waiting stream
    /// ("Waiting an event on the same stream, NPU will throw an exception", DeepSpeed PR
    /// #4675): an error. For `aclrtCreateEventExWithFlag` events (torch_npu's) the
    /// runtime skips such a wait and returns success (`Event::WaitSendCheck` in
    /// hicann/runtime): a warning, since a wait that does nothing is most often a wait
    /// put on the wrong stream (inside `with torch.npu.stream(s)`, `current_stream()`
    /// is `s` itself), and the stream meant to wait does not. Either way the wait is
    /// useless: a stream runs its tasks in order, so everything issued after the record
    /// already runs after it.
    ///
    /// ## Example
    /// ```text
    /// kernel(s1, "matmul", writes: [c]);
    /// aclrtRecordEvent(ev, s1);
    /// aclrtStreamWaitEvent(s1, ev);     // s1 waits on its own record: raises on NPU
    /// kernel(s1, "softmax", reads: [c]);
    /// ```
    ///
    /// ## Fix
    /// Remove the wait (and the record and reset, if nothing else uses them); if another
    /// stream was meant to wait, call `aclrtStreamWaitEvent` on that stream.
    ///
    /// Method: the record each wait binds to, from the signal matching of the concrete
    /// execution.
    pub struct WaitOnRecordingStream;
    code = "SG109",
    name = "event-wait-on-recording-stream",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    for &(record, wait) in &analysis.hb.matching.edges {
        let Action::EventWait(event) = exec.node(wait).action else {
            continue;
        };
        if record > wait || exec.node(record).agent != exec.node(wait).agent {
            continue;
        }
        let obj = exec.instance(event).obj;
        let creator = match &exec.program.object(obj).kind {
            ObjectKind::Event(info) => info.creator,
            _ => EventCreator::Existing,
        };
        if creator == EventCreator::Cuda {
            continue;
        }
        // The runtime raises for the events of the older creators, and skips the wait
        // for `ExWithFlag` ones.
        let raises = matches!(creator, EventCreator::AclCreateEvent | EventCreator::AclWithFlag);
        let stream = exec.agent_name(exec.node(wait).agent);
        let name = exec.instance_name(event);
        let wait_api = spelled(exec.program, obj, "aclrtStreamWaitEvent");
        let (consequence, severity) = if raises {
            (
                "the NPU raises an exception for a wait on the recording stream",
                Severity::Error,
            )
        } else {
            (
                "the runtime skips the wait, so if another stream was meant to wait, nothing makes it",
                Severity::Warning,
            )
        };
        out.push(
            Diagnostic::new(
                &WaitOnRecordingStream::INFO,
                analysis.span(wait),
                format!("{stream} waits on event {name}, which it recorded itself: {consequence}"),
            )
            .with_severity(severity)
            .with_label(format!("{stream} waits on its own record"))
            .with_related(analysis.span(record), format!("{name} was last recorded on {stream} here"))
            .with_help(format!(
                "remove the wait: {stream} runs its tasks in order, so what follows the record already waits for it; if another stream must wait, call {wait_api} on that stream"
            )),
        );
    }
}
