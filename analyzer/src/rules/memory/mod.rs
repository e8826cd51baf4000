//! SG6xx: memory accesses that synchronization does not order.

pub mod data_race;
pub mod handle_index_out_of_range;
pub mod host_access_before_sync;
pub mod release_while_pending;
pub mod use_after_free;

use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Action, AgentId, LegacyOrder, NodeId};
use crate::hb::Race;
use crate::model::{DefaultStream, OpKind, Program};

/// Which rule reports a race.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RaceClass {
    /// Two device ops, or two host threads: SG601.
    Device,
    /// One host thread against a device op: SG602.
    Host,
    /// A one-sided HCCL transfer against the peer's accesses: SG304/SG305 say which
    /// side of the handshake is missing, so SG601/SG602 stay out.
    RemoteTransfer,
}

fn classify(analysis: &Analysis, race: &Race) -> RaceClass {
    let node = |id| analysis.exec.node(id);
    let remote = |id| matches!(node(id).op.kind, OpKind::RemoteWrite { .. } | OpKind::RemoteRead { .. });
    let host = |id| !analysis.exec.agent(node(id).agent).kind.is_device();
    if remote(race.first) || remote(race.second) {
        RaceClass::RemoteTransfer
    } else if host(race.first) != host(race.second) {
        RaceClass::Host
    } else {
        RaceClass::Device
    }
}

/// Which of CUDA's implicit orderings a race escapes: the default stream's, or that of a
/// synchronous copy that returns before its write is done.
/// The race's window: its two accesses, rather than every op of their lines (a source
/// line can issue several calls).
fn with_race_timeline(analysis: &Analysis, race: &Race, diagnostic: Diagnostic) -> Diagnostic {
    let focus = crate::window::Focus {
        nodes: &[race.first, race.second],
        highlight: crate::timeline::Highlight::Involved,
        race: true,
    };
    crate::window::with_timeline(analysis, diagnostic, &focus)
}

fn with_cuda_notes(analysis: &Analysis, race: &Race, diagnostic: Diagnostic) -> Diagnostic {
    let diagnostic = with_default_stream_note(analysis, race, diagnostic);
    [race.first, race.second]
        .into_iter()
        .fold(diagnostic, |diagnostic, node| {
            with_launch_label(analysis, node, with_early_return_note(analysis, node, diagnostic))
        })
}

/// Captured work runs at a `cudaGraphLaunch` (`aclmdlRIExecuteAsync`), which the race's
/// labels on the captured calls do not show: point at the launch too.
fn with_launch_label(analysis: &Analysis, node: NodeId, diagnostic: Diagnostic) -> Diagnostic {
    let Some(launch) = analysis.exec.launch_of(node) else {
        return diagnostic;
    };
    let launch_noun = if launch.api.starts_with("aclmdlRI") {
        "the execution of the captured model"
    } else {
        "the graph launch"
    };
    diagnostic.with_related(
        launch.span.clone(),
        format!("{launch_noun} that runs {}", analysis.describe(node)),
    )
}

/// A `cudaMemcpy` that returned before its write of device memory was done
/// (`exec::cuda_copy`): the surprise behind a race with it.
fn with_early_return_note(analysis: &Analysis, node: NodeId, diagnostic: Diagnostic) -> Diagnostic {
    let exec = analysis.exec;
    let n = exec.node(node);
    let (OpKind::Memcpy { stream: None, .. }, Action::Access(accesses)) = (&n.op.kind, &n.action) else {
        return diagnostic;
    };
    if !exec.agent(n.agent).kind.is_device() {
        return diagnostic;
    }
    let why = match accesses.len() {
        // The host read the staged source already (`CopyTiming::StagedSource`).
        1 => {
            "from pageable host memory it returns once the source is staged, before the copy reaches the device (a page-locked source, from cudaMallocHost or cudaHostRegister, makes it wait)"
        }
        _ => "between device buffers it returns without waiting for the copy",
    };
    diagnostic.with_note(format!(
        "{} is work of the default stream that may still run after it returns: {why}",
        n.op.api
    ))
}

/// Why CUDA's default stream did not order a race it takes part in: the other stream is
/// non-blocking, or `0` is a per-thread default stream.
fn with_default_stream_note(analysis: &Analysis, race: &Race, diagnostic: Diagnostic) -> Diagnostic {
    let exec = analysis.exec;
    if !exec.legacy_default_stream {
        return diagnostic;
    }
    let stream_of = |node: NodeId| -> Option<AgentId> {
        let agent = exec.node(node).agent;
        if exec.agent(agent).kind.is_device() {
            Some(agent)
        } else {
            exec.synchronous_work_of(node)
        }
    };
    let (Some(a), Some(b)) = (stream_of(race.first), stream_of(race.second)) else {
        return diagnostic;
    };
    let per_thread = |agent: AgentId| match exec.agent(agent).kind {
        crate::exec::AgentKind::Stream(inst) => exec.instance(inst).obj == Program::PER_THREAD_STREAM,
        _ => false,
    };
    for (default, other) in [(a, b), (b, a)] {
        let other_order = exec.legacy_order(other);
        if exec.legacy_order(default) == LegacyOrder::Legacy && other_order == LegacyOrder::Independent {
            let name = exec.agent_name(other);
            return diagnostic.with_note(format!(
                "the legacy default stream does not synchronize with {name}: it was created with cudaStreamNonBlocking"
            ));
        }
        if per_thread(default) && other_order != LegacyOrder::Legacy {
            let why = match exec.program.settings.default_stream {
                DefaultStream::PerThread => "the program is built with `--default-stream per-thread`, so `0` is",
                DefaultStream::Legacy => "`cudaStreamPerThread` is",
            };
            return diagnostic.with_note(format!(
                "{why} {}, an ordinary stream: unlike the legacy default stream it does not wait for other streams",
                exec.agent_name(default)
            ));
        }
    }
    diagnostic
}
