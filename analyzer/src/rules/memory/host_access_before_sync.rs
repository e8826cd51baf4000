use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
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
    for race in &analysis.hb.races {
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
                "the host touches {memory} bytes {}..{} while {} may still be accessing them",
                race.start,
                race.end,
                analysis.describe(device)
            ),
        )
        .with_label("no synchronize orders this after the device access")
        .with_related(analysis.span(device), "the device access, queued asynchronously")
        .with_help("synchronize the stream (or an event recorded after the device access) before this");
        out.push(super::with_default_stream_note(analysis, race, diagnostic));
    }
}
