use crate::analysis::ProgramContext;
use crate::diagnostic::Diagnostic;
use crate::rules::declare_rule;
use syncguard_model::kernel::{KOpKind, Kernel};

declare_rule! {
    /// ## What it detects
    /// A tensor handed back to a queue it did not come from: `EnQue` or `FreeTensor`
    /// called on one `TQue` with a tensor another `TQue`'s `AllocTensor` or `DeQue`
    /// returned (`inQueueX.FreeTensor(yLocal)` where `yLocal` is `inQueueY`'s).
    ///
    /// ## Why is this a bug
    /// A queue keeps its own slots: the framework's debug builds (the CPU twin, debug
    /// kernels) assert that a freed tensor lies in the queue's range and stop there.
    /// Release builds mark the slot free but count it against the wrong queue (its
    /// `HasIdleBuffer()` answers wrongly), set the free event of the wrong queue type
    /// (where the two queues sit at different positions, the slot's next `AllocTensor`
    /// waits on an event nobody set: a hang), and an `EnQue` puts the slot in another
    /// queue's line, so its `DeQue` returns memory the code does not expect. The
    /// tensor's own queue is left with a slot it never gets back through its own calls.
    ///
    /// ## Example
    /// ```text
    /// let x = TQue::DeQue(inX);
    /// let y = TQue::DeQue(inY);
    /// AscendC::Add(z, x, y);
    /// TQue::FreeTensor(inX, x);
    /// TQue::FreeTensor(inX, y);   // y is inY's
    /// ```
    ///
    /// ## Fix
    /// Hand the tensor back to its own queue: `TQue::FreeTensor(inY, y)`
    /// (`inQueueY.FreeTensor(yLocal)`).
    pub struct TensorToAnotherQueue;
    code = "SG811",
    name = "tensor-to-another-queue",
    severity = Warning,
    check = crate::rules::Check::Program(check),
}

fn check(context: &ProgramContext, out: &mut Vec<Diagnostic>) {
    // A call the reader copied (a helper called twice, a loop's last tile) is one finding.
    let mut seen = std::collections::HashSet::new();
    for kernel in &context.program.kernels {
        for op in crate::kernel::calls(kernel) {
            let (buffer, tensor, verb) = match &op.kind {
                KOpKind::EnQue { buffer, tensor } => (*buffer, *tensor, "enqueued in"),
                KOpKind::FreeTensor { buffer, tensor } => (*buffer, *tensor, "freed through"),
                _ => continue,
            };
            let own = kernel.tensors[tensor].buffer;
            if own == buffer
                || !kernel.buffers[own].queue
                || !kernel.buffers[buffer].queue
                || !seen.insert(op.span.clone())
            {
                continue;
            }
            out.push(report(kernel, op, own, buffer, tensor, verb));
        }
    }
}

fn report(
    kernel: &Kernel,
    op: &syncguard_model::kernel::KOp,
    own: usize,
    called: usize,
    tensor: usize,
    verb: &str,
) -> Diagnostic {
    let tensor = &kernel.tensors[tensor];
    let (own, called) = (&kernel.buffers[own].name, &kernel.buffers[called].name);
    let call = if verb == "freed through" { "FreeTensor" } else { "EnQue" };
    Diagnostic::new(
        &TensorToAnotherQueue::INFO,
        op.span.clone(),
        format!(
            "kernel `{}`: tensor `{}` of queue `{own}` is {verb} queue `{called}`: a debug build asserts here, and \
             `{own}` never gets the slot back through its own calls",
            kernel.name, tensor.name
        ),
    )
    .with_label(format!("`{}` is `{own}`'s", tensor.name))
    .with_related(
        tensor.span.clone(),
        format!("`{}` comes from `{own}` here", tensor.name),
    )
    .with_help(format!("call `{own}.{call}({})` instead", tensor.name))
}
