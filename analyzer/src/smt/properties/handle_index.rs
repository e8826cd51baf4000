//! `handle-index-in-range`: for every parameter value, rank and loop iteration that
//! reaches a call naming `array[index]`, the index is in `0..len` of the array.

use super::notify_index::{RangeMiss, add_reasons, in_range};
use super::{Outcome, SMALLEST, Space, unsupported};
use crate::diagnostic::Diagnostic;
use crate::model::{BufferInfo, MemorySpace, ObjId, ObjectKind, OpKind, Program};
use crate::smt::paths::{CountError, PathOp};
use crate::smt::{Answer, SmtOptions, Unproved};
use crate::source::Span;

pub(super) const PROPERTY: &str = "handle-index-in-range";

pub(super) fn prove(space: &Space, ops: &[PathOp], options: &SmtOptions, outcome: &mut Outcome) {
    let program = space.program;
    let mut because: Vec<(Span, String)> = Vec::new();
    let mut checked = 0;
    for path in ops {
        for element in named_elements(program, &path.op.kind) {
            let (ObjectKind::Element { array, index }, Some(shape)) = (
                &program.object(element).kind,
                program.object(program.base(element)).array.as_ref(),
            ) else {
                continue;
            };
            checked += 1;
            // A negative count creates no array: the concrete run reports it (SG001).
            match in_range(space, path, index, &shape.len, Some(0), options) {
                Ok(Answer::Holds(core)) => {
                    let array = program.object(*array);
                    let what = format!("the number of handles in {}", array.name);
                    add_reasons(space, path, &core, (&array.span, &what), &mut because);
                }
                Ok(Answer::Fails(miss)) => {
                    let diagnostic = out_of_range(program, path, element, &miss);
                    outcome.counterexamples.push(miss.counterexample(PROPERTY, diagnostic));
                    return;
                }
                Ok(Answer::Unknown(reason)) => {
                    space.unknown(outcome, PROPERTY, path.op.span.clone(), &reason);
                    return;
                }
                Err(error) => {
                    let unsupported = unsupported(program, path, CountError::Unbound(error));
                    outcome
                        .unproved
                        .push(Unproved::new(PROPERTY, unsupported.reason, unsupported.span));
                    return;
                }
            }
        }
    }
    if checked > 0 {
        because.sort_by_key(|(span, why)| (span.file.0, span.range.start, why.clone()));
        space.proved(outcome, PROPERTY, because);
    }
}

/// The elements `array[i]` a call names, directly or through the channel of a peer's
/// HCCL buffer.
pub(super) fn named_elements(program: &Program, kind: &OpKind) -> Vec<ObjId> {
    let mut handles = kind.hccl_handles();
    if let OpKind::Create(obj) = kind
        && let ObjectKind::Buffer(BufferInfo {
            space: MemorySpace::HcclPeer(channel),
            ..
        }) = &program.object(*obj).kind
    {
        handles.push(*channel);
    }
    handles.retain(|&obj| matches!(program.object(obj).kind, ObjectKind::Element { .. }));
    handles.dedup();
    handles
}

fn out_of_range(program: &Program, path: &PathOp, element: ObjId, miss: &RangeMiss) -> Diagnostic {
    let RangeMiss { index, limit, .. } = miss;
    crate::rules::handle_index_out_of_range::finding(program, path.op, element, *index, *limit, "")
        .with_label(format!("index {index} with {}", miss.assignment))
        .with_note(format!(
            "{SMALLEST}: {}: index {index} of {limit} handle{}",
            miss.place(),
            if *limit == 1 { "" } else { "s" }
        ))
}
