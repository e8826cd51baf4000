//! Literal event ids beside the ids TPipe hands out (SG808), on one core's run: a
//! `SetFlag<e>(0)` in the same run as an `AllocEventID<e>` / `FetchEventID<e>`, or as a
//! queue whose `EnQue`/`DeQue` and `FreeTensor`/`AllocTensor` take ids of `e` from TPipe
//! when they run (asc-devkit `kernel_tpipe_impl*.h`: `EnQue` allocates its id). Per run,
//! so that the two arms of an `if constexpr` on the element type, two kernels the build
//! makes apart, are not taken for one.

use std::collections::HashMap;

use syncguard_model::kernel::{HardEvent, KOp, KOpKind, Kernel};

use super::walk::{FlagKey, Instr, Step};

/// A literal id and where the same run takes an id of its `HardEvent` from TPipe.
#[derive(Clone, Debug)]
pub struct MixedId<'p> {
    pub literal_op: &'p KOp,
    pub event: HardEvent,
    pub literal: i64,
    pub from_tpipe: &'p KOp,
    pub why: &'static str,
}

pub fn mixed_ids<'p>(kernel: &Kernel, instrs: &[Instr<'p>]) -> Vec<MixedId<'p>> {
    let mut handed: HashMap<HardEvent, (&'p KOp, &'static str)> = HashMap::new();
    for instr in instrs {
        match &instr.step {
            Step::AllocEventId { event, .. } => {
                handed
                    .entry(*event)
                    .or_insert((instr.op, "TPipe hands out ids of the same HardEvent here"));
            }
            Step::Set {
                key: FlagKey::Queue { buffer, .. },
                ..
            } => {
                let Some(queue) = kernel.buffers.get(*buffer) else {
                    continue;
                };
                let (producer, consumer) = (queue.producer(), queue.consumer());
                if producer == consumer {
                    continue;
                }
                for (src, dst) in [(producer, consumer), (consumer, producer)] {
                    handed.entry(HardEvent { src, dst }).or_insert((
                        instr.op,
                        "this queue operation takes an id of it from TPipe when it runs",
                    ));
                }
            }
            _ => {}
        }
    }
    let mut mixed = Vec::new();
    for instr in instrs {
        let (KOpKind::SetFlag { event, id } | KOpKind::WaitFlag { event, id }) = &instr.op.kind else {
            continue;
        };
        if let (Some(literal), Some(&(from_tpipe, why))) = (id.as_const(), handed.get(event)) {
            mixed.push(MixedId {
                literal_op: instr.op,
                event: *event,
                literal,
                from_tpipe,
                why,
            });
        }
    }
    mixed
}
