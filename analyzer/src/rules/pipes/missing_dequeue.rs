use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;

declare_rule! {
    /// ## What it detects
    /// A tensor of a `TQue` is used on the queue's consumer pipe (V for `VECIN`, MTE3 for
    /// `VECOUT`, M for `A2`/`B2`, ...) without going through `DeQue`, and so races with
    /// the producer pipe's access to the same slot (the race SG801 would report, worded
    /// as the queue misuse it is).
    ///
    /// ## Why is this a bug
    /// A queue orders its pipes only through its calls: `EnQue` sets a flag when the
    /// producer pipe is done with the slot and `DeQue` waits for it on the consumer pipe.
    /// Using the tensor `AllocTensor` returned directly skips the wait: the vector unit
    /// may read the tile before MTE2 has filled it.
    ///
    /// ## Example
    /// ```text
    /// let x = TQue::AllocTensor(inX);
    /// AscendC::DataCopy(x, src[0..1 KiB]);    // MTE2 fills the slot
    /// TQue::EnQue(inX, x);
    /// AscendC::Exp(y, x);                     // V reads x without DeQue
    /// ```
    ///
    /// ## Fix
    /// Take the tensor from the queue before using it: `let x = TQue::DeQue(inX);`
    /// (`LocalTensor<T> x = inQueueX.DeQue<T>();`).
    pub struct MissingDeQue;
    code = "SG802",
    name = "tensor-used-without-dequeue",
    severity = Error,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    for race in context.kernels().races.iter().filter(|r| r.without_dequeue.is_some()) {
        out.push(super::pipe_race::report(context, race, &MissingDeQue::INFO));
    }
}
