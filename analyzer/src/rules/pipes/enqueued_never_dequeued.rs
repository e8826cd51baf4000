use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::kernel::walk::FlagKey;
use crate::rules::declare_rule;
use syncguard_model::kernel::KOpKind;

use super::kernel_of;

declare_rule! {
    /// ## What it detects
    /// A tensor put into a `TQue` with `EnQue` that no `DeQue` of the queue ever takes out
    /// on that core (counted per core run, loop iterations unrolled): the code goes on
    /// with the tensor it enqueued, or with nothing.
    ///
    /// ## Why is this a bug
    /// `EnQue` is the producer pipe's half of the queue's sync: it sets the queue's flag
    /// (MTE2 -> V for `VECIN`, V -> MTE3 for `VECOUT`) on an event id the queue takes from
    /// the pipe's pool, and `DeQue` waits for that flag and gives the id back. Without the
    /// `DeQue` the flag is still set when the kernel ends (the next operator's first wait
    /// on that id returns early, as with a `SetFlag` never waited), the id stays taken,
    /// and whatever uses the tile on the consumer pipe is not ordered after the producer
    /// by this queue (only, if at all, by another queue's sync that happens to follow).
    ///
    /// ## Example
    /// ```text
    /// let x = TQue::AllocTensor(inX);
    /// AscendC::DataCopy(x, src[0..1 KiB]);
    /// TQue::EnQue(inX, x);
    /// let y = TQue::DeQue(inY);   // another queue's DeQue, not inX's
    /// AscendC::Add(z, x, y);      // x used as enqueued
    /// ```
    ///
    /// ## Fix
    /// Take the tensor out before using it on the consumer pipe:
    /// `let x = TQue::DeQue(inX);` (`xLocal = inQueueX.DeQue<T>();`).
    pub struct EnqueuedNeverDequeued;
    code = "SG812",
    name = "enqueued-never-dequeued",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    let facts = context.kernels();
    for finding in &facts.pending_sets {
        let FlagKey::Queue {
            buffer, freed: false, ..
        } = finding.key
        else {
            continue;
        };
        let kernel = kernel_of(context.program, finding.context.kernel);
        let KOpKind::EnQue { tensor, .. } = finding.op.kind else {
            continue;
        };
        let tensor = &kernel.tensors[tensor].name;
        // The use that skips the DeQue races the producer: SG802 leads with that.
        let raced = facts
            .races
            .iter()
            .any(|race| race.context.kernel == finding.context.kernel && race.without_dequeue.as_ref() == Some(tensor));
        if raced {
            continue;
        }
        let queue = &kernel.buffers[buffer];
        out.push(
            Diagnostic::new(
                &EnqueuedNeverDequeued::INFO,
                finding.op.span.clone(),
                format!(
                    "`{tensor}` is enqueued in `{}` and never dequeued: the queue's {} -> {} flag is still set when \
                     kernel `{}` ends, and its event id stays taken",
                    queue.name,
                    queue.producer().name(),
                    queue.consumer().name(),
                    kernel.name
                ),
            )
            .with_label("enqueued here, never dequeued")
            .with_help(format!(
                "take it out of the queue before the consumer pipe uses it: `TQue::DeQue({0})` (`{0}.DeQue<T>()` \
                 in Ascend C), and use the tensor it returns",
                queue.name
            ))
            .with_note(format!("found on {}", finding.context.describe())),
        );
    }
}
