//! SG6xx: memory accesses that synchronization does not order.

pub mod data_race;
pub mod host_access_before_sync;
pub mod use_after_free;

use crate::analysis::Analysis;
use crate::hb::Race;
use crate::model::OpKind;

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
