//! SG85x: between the cores of a kernel: cross-core flags (`CrossCoreSetFlag` /
//! `CrossCoreWaitFlag`) and `SyncAll`, counted on every core walked for every launch
//! (`crate::kernel::Launch`), and checked against the kernel type and the target's
//! physical cores.

pub mod cross_core_count_mismatch;
pub mod cross_core_counter_overflow;
pub mod cross_core_flag_invalid;
pub mod cross_core_without_scheduler;
pub mod sync_all_not_on_all_cores;
pub mod sync_all_too_many_blocks;
pub mod sync_all_vector_only;
pub mod sync_all_workspace_too_small;

use crate::kernel::Launch;
use syncguard_model::kernel::{CoreType, KOpKind, Kernel};

/// "the launch with tileNum = 2", or nothing for a kernel without parameters.
pub(crate) fn launch_note(launch: &Launch) -> Option<String> {
    (!launch.launch.is_empty()).then(|| format!("for the launch with {} ({} blocks)", launch.launch, launch.blocks))
}

/// Whether the kernel calls the hard `SyncAll` (which takes cross-core flags 11–14).
pub(crate) fn uses_hard_sync_all(kernel: &Kernel) -> bool {
    crate::kernel::calls(kernel)
        .iter()
        .any(|op| matches!(op.kind, KOpKind::SyncAll { workspace: None, .. }))
}

/// Cores of `core` type one launch runs.
pub(crate) fn cores_of(kernel: &Kernel, blocks: i64, core: CoreType) -> i64 {
    blocks.saturating_mul(kernel.kind.per_block(core))
}

/// "once", "twice", "3 times".
pub(crate) fn times(count: u32) -> String {
    match count {
        0 => "0 times".into(),
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}
