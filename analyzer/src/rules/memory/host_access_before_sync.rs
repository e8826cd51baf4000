use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, NodeId};
use crate::model::{OpKind, byte_range};
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// The host reads or writes memory (`host_read`, `host_write`, a synchronous
    /// `aclrtMemcpy`) that a device op also accesses, with no synchronize between them:
    /// the host does not wait for the stream, event or HCCL thread doing the device
    /// access.
    ///
    /// ## Why is this a bug
    /// Device calls are asynchronous: when the call returns, the kernel or copy has only
    /// been queued. Reading its output right away reads stale data; writing its input
    /// changes what the kernel computes on.
    ///
    /// ## Example
    /// ```text
    /// aclrtMemcpyAsync(h, 4 KiB, d, 4 KiB, ACL_MEMCPY_DEVICE_TO_HOST, s1);
    /// host_read(h);                    // the copy may not have run yet
    /// ```
    ///
    /// ## Fix
    /// Synchronize first: `aclrtSynchronizeStream(s1)` (or `aclrtSynchronizeEvent` on
    /// an event recorded after the device access) before the host touches the memory.
    pub struct HostAccessBeforeSync;
    code = "SG602",
    name = "host-access-before-sync",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    for race in analysis.hb.races() {
        if super::classify(analysis, race) != super::RaceClass::Host {
            continue;
        }
        let host_is_second = !analysis
            .exec
            .agent(analysis.exec.node(race.second).agent)
            .kind
            .is_device();
        let (host, device) = if host_is_second {
            (race.second, race.first)
        } else {
            (race.first, race.second)
        };
        let memory = analysis.memory_name(race.memory);
        let diagnostic = Diagnostic::new(
            &HostAccessBeforeSync::INFO,
            analysis.span(host),
            format!(
                "the host touches {memory} {} while {} may still be accessing them",
                byte_range(race.start, race.end),
                analysis.describe(device)
            ),
        )
        .with_label("no synchronize orders this after the device access")
        .with_related(analysis.span(device), "the device access, queued asynchronously")
        .with_help("synchronize the stream (or an event recorded after the device access) before this");
        let agent = analysis.exec.node(device).agent;
        let diagnostic = match crate::rules::synchronize_before(analysis.exec, agent, analysis.span(host)) {
            Some(fix) => diagnostic.with_fix(fix),
            None => diagnostic,
        };
        let diagnostic = with_batch_note(analysis, device, diagnostic);
        let diagnostic = super::with_cuda_notes(analysis, race, diagnostic);
        out.push(super::with_race_timeline(analysis, race, diagnostic));
    }
}

/// A device access a batch cached is submitted only when the batch ends: a synchronize
/// inside the batch does not wait for it.
fn with_batch_note(analysis: &Analysis, device: NodeId, diagnostic: Diagnostic) -> Diagnostic {
    let exec = analysis.exec;
    let Some(end) = exec.node(device).issued_after().filter(|&end| end > device) else {
        return diagnostic;
    };
    if !matches!(exec.node(end).op.kind, OpKind::BatchMode { start: false, .. }) {
        return diagnostic;
    }
    let agent = exec.node(device).agent;
    let inside = (device.index() + 1..end.index()).map(|n| NodeId(n as u32)).find(|&n| {
        matches!(&exec.node(n).action, Action::AgentSync { agent: a, .. } if *a == agent)
            || matches!(exec.node(n).action, Action::DeviceSync { .. })
    });
    let Some(sync) = inside else {
        return diagnostic;
    };
    diagnostic
        .with_related(analysis.span(sync), "synchronizes inside the batch: the cached access is not submitted yet")
        .with_related(analysis.span(end), "the batch is submitted only here")
        .with_note("a synchronize inside batch mode does not wait for the calls the batch caches: end the batch before synchronizing")
}
