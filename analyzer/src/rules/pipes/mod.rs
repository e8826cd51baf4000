//! SG80x: inside one AI core, between its pipes: data races, `SetFlag`/`WaitFlag`
//! pairing, event ids, queues and barriers. The runs and the facts are computed once in
//! `crate::kernel`; each rule turns one kind of fact into findings.

pub mod double_set;
pub mod enqueued_never_dequeued;
pub mod event_id_mixed;
pub mod event_id_not_released;
pub mod event_id_out_of_range;
pub mod flag_direction_mismatch;
pub mod flag_never_waited;
pub mod missing_dequeue;
pub mod pipe_barrier_scalar;
pub mod pipe_race;
pub mod tensor_to_another_queue;
pub mod wait_never_set;

use crate::kernel::walk::FlagKey;
use crate::model::Program;
use syncguard_model::kernel::{HardEvent, KOpKind, Kernel};

/// `AscendC::SetFlag<HardEvent::MTE2_V>(0)`, as a fix writes it.
pub(crate) fn flag_call(set: bool, event: HardEvent, id: i64) -> String {
    let which = if set { "SetFlag" } else { "WaitFlag" };
    format!("AscendC::{which}<HardEvent::{}>({id})", event.name())
}

/// "SetFlag<MTE2_V>(0)", "the fill of slot 1 of `inQueueX` (EnQue → DeQue)".
pub(crate) fn describe_flag(kernel: &Kernel, key: FlagKey) -> String {
    match key {
        FlagKey::Event { event, id } => format!("flag {} id {id}", event.name()),
        FlagKey::Queue { buffer, slot, freed } => {
            let name = &kernel.buffers[buffer].name;
            if freed {
                format!("the free of slot {slot} of `{name}` (FreeTensor → AllocTensor)")
            } else {
                format!("the fill of slot {slot} of `{name}` (EnQue → DeQue)")
            }
        }
    }
}

/// The smallest event id the kernel does not use with `event`: free for a new pair.
pub(crate) fn free_event_id(kernel: &Kernel, event: HardEvent) -> i64 {
    let used: Vec<i64> = crate::kernel::calls(kernel)
        .into_iter()
        .filter_map(|op| match &op.kind {
            KOpKind::SetFlag { event: e, id } | KOpKind::WaitFlag { event: e, id } if *e == event => id.as_const(),
            _ => None,
        })
        .collect();
    (0..syncguard_model::kernel::EVENT_IDS)
        .find(|id| !used.contains(id))
        .unwrap_or(0)
}

pub(crate) fn kernel_of(program: &Program, index: usize) -> &Kernel {
    &program.kernels[index]
}
