//! SG5xx: waits that never return.

pub mod collectives_exceed_cores;
pub mod deadlock;
pub mod host_sync_hang;
pub mod wait_without_signal;
