use std::collections::HashSet;

use super::{byte_range, bytes};
use crate::analysis::Analysis;
use crate::diagnostic::Diagnostic;
use crate::exec::{Access, Action, Env, Memory, NodeId};
use crate::model::{MemRange, OpKind, SuperKernelId, length_unknown};
use crate::rules::declare_rule;
use crate::source::Span;

declare_rule! {
    /// ## What it detects
    /// A transfer, copy or memory footprint whose byte range does not fit in its buffer
    /// (`offset + len` past the buffer's size, or `len` larger than the buffer; a length
    /// the source code does not state is not judged):
    /// - HCCL transfers: `HcommWriteOnThread`, `HcommWriteWithNotifyOnThread`,
    ///   `HcommReadOnThread` (source and destination; an HCCL buffer has the program's
    ///   `hccl_buffer_size`, 400 MiB by default) and `HcommLocalCopyOnThread`;
    /// - copies: `aclrtMemcpy`, `aclrtMemcpyAsync`, their pyACL and CUDA forms, and
    ///   also `count > destMax` for the ACL copies;
    /// - footprints: the reads and writes of a `kernel(...)`, `host_read`/`host_write`,
    ///   and a SuperKernel's `DataCopy` ranges.
    ///
    /// Sizes and ranges are evaluated per concrete execution (every rank, loop
    /// iteration and checked parameter value). A `destMax` that depends on a loop
    /// variable is not checked.
    ///
    /// ## Why is this a bug
    /// The runtime rejects a copy whose `count` exceeds `destMax`, so nothing is
    /// copied. Otherwise the access runs past the end of the allocation: a transfer
    /// into a peer's HCCL buffer overwrites whatever lies after it on the peer, a
    /// kernel faults (AI Core exception) or corrupts a neighbouring buffer.
    ///
    /// ## Example
    /// ```text
    /// let x = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
    /// HcommLocalCopyOnThread(t, local, x, 8 KiB);      // x has only 4 KiB
    /// ```
    ///
    /// ## Fix
    /// Make the length fit what is left of the buffer after the offset, or allocate a
    /// larger buffer (for HCCL buffers, raise `HCCL_BUFFSIZE`, i.e. `hccl_buffer_size`),
    /// and pass the destination's real capacity as `destMax`.
    ///
    /// Method: evaluated byte ranges against the sizes of the buffer instances they
    /// name, per concrete execution.
    pub struct WriteExceedsBuffer;
    code = "SG306",
    name = "write-exceeds-buffer",
    severity = Error,
    check = crate::rules::Check::Execution(check),
}

/// One out-of-bounds access of a node.
struct Overflow<'a> {
    access: &'a Access,
    size: u64,
    /// The operand that produced it, when the op has one per access.
    operand: Option<&'a MemRange>,
}

fn check(analysis: &Analysis, out: &mut Vec<Diagnostic>) {
    let exec = analysis.exec;
    // One finding per call, for its first offending node.
    let mut seen: HashSet<Span> = HashSet::new();
    for (index, node) in exec.nodes.iter().enumerate() {
        let id = NodeId(index as u32);
        let Action::Access(accesses) = &node.action else {
            continue;
        };
        // An access whose length the code does not state cannot be said to pass the end.
        let past_end = |access: &Access| {
            !length_unknown(access.start, access.end)
                && memory_size(analysis, access.memory).is_some_and(|size| access.end > size)
        };
        let dest_max = dest_max_violation(analysis, id, accesses);
        if !accesses.iter().any(past_end) && dest_max.is_none() {
            continue;
        }
        if !seen.insert(node.op.span.clone()) {
            continue;
        }
        let operands = operands(&node.op.kind);
        let overflows: Vec<Overflow> = accesses
            .iter()
            .enumerate()
            .filter_map(|(i, access)| {
                let size = memory_size(analysis, access.memory)?;
                past_end(access).then(|| Overflow {
                    access,
                    size,
                    operand: operands.as_ref().and_then(|ops| ops.get(i).copied()),
                })
            })
            .collect();
        out.extend(diagnostic(analysis, id, &overflows, dest_max));
    }
    for op in &exec.invalid_ranges {
        if seen.insert(op.span.clone()) {
            let what = match &op.kind {
                OpKind::Kernel { launch, .. } => format!("kernel `{}`", launch.name),
                _ => op.api.to_string(),
            };
            out.push(
                Diagnostic::new(
                    &WriteExceedsBuffer::INFO,
                    op.span.clone(),
                    format!("{what} is given a byte range with a negative offset or length: it starts before its buffer or has no size"),
                )
                .with_label("negative (or uncomputable) offset or length")
                .with_help("compute offsets and lengths that stay within 0..size of the buffer"),
            );
        }
    }
}

/// The operand behind each access, in the order the executor builds them, when the op
/// has one operand per access (not for SuperKernels, whose footprint is merged).
fn operands(kind: &OpKind) -> Option<Vec<&MemRange>> {
    match kind {
        OpKind::RemoteWrite { src, dst, .. }
        | OpKind::RemoteRead { src, dst, .. }
        | OpKind::LocalCopy { src, dst, .. } => Some(vec![src, dst]),
        OpKind::Memcpy { copy, .. } => Some(vec![&copy.src, &copy.dst]),
        OpKind::Kernel { launch, .. } => Some(launch.reads.iter().chain(&launch.writes).collect()),
        OpKind::HostAccess { range, .. } => Some(vec![range]),
        _ => None,
    }
}

fn memory_size(analysis: &Analysis, memory: Memory) -> Option<u64> {
    match memory {
        Memory::Buffer(inst) => analysis.exec.instance(inst).size,
        Memory::HcclBuffer { .. } => Some(analysis.program.settings.hccl_buffer_size),
    }
}

/// `(count, destMax)` of an ACL copy whose count exceeds its destMax.
fn dest_max_violation(analysis: &Analysis, node: NodeId, accesses: &[Access]) -> Option<(u64, u64)> {
    let exec = analysis.exec;
    let n = exec.node(node);
    let OpKind::Memcpy { copy, .. } = &n.op.kind else {
        return None;
    };
    let dest_max = copy.dest_max.as_ref()?;
    let env = Env {
        params: exec.params.clone(),
        rank: n.rank(exec) as i64,
        vars: vec![None; analysis.program.vars.len()],
        core: None,
    };
    let dest_max = u64::try_from(env.eval(dest_max).ok()?).ok()?;
    // The destination is the second access; its length is `count`.
    let dst = accesses.get(1)?;
    let count = dst.end - dst.start;
    (count > dest_max).then_some((count, dest_max))
}

fn diagnostic(
    analysis: &Analysis,
    node: NodeId,
    overflows: &[Overflow],
    dest_max: Option<(u64, u64)>,
) -> Option<Diagnostic> {
    let exec = analysis.exec;
    let n = exec.node(node);
    let api = &n.op.api;
    let describe = match n.op.kind {
        OpKind::LaunchSuperKernel(id) => format!(
            "SuperKernel {} on {} (its cores together)",
            analysis.program.superkernels[id.index()].name,
            exec.agent_name(n.agent)
        ),
        _ => analysis.describe(node),
    };
    let mut diagnostic = match (overflows.first(), dest_max) {
        (Some(first), _) => {
            let access = first.access;
            let memory = analysis.memory_name(access.memory);
            let verb = if access.write { "writes" } else { "reads" };
            let over = access.end - first.size.max(access.start);
            let beyond = if access.start >= first.size {
                "the whole range lies past its end".to_string()
            } else {
                format!("the last {} lie past its end", bytes(over))
            };
            let message = format!(
                "{describe} {verb} {} of {memory}, which has only {}: {beyond}, so the call fails or corrupts the memory after the buffer",
                byte_range(access.start, access.end),
                bytes(first.size),
            );
            let fit = if access.start >= first.size {
                format!("the offset {} is already past the end", bytes(access.start))
            } else {
                format!(
                    "at most {} fit after offset {}",
                    bytes(first.size - access.start),
                    if access.start == 0 {
                        "0".to_string()
                    } else {
                        bytes(access.start)
                    }
                )
            };
            Diagnostic::new(&WriteExceedsBuffer::INFO, analysis.span(node), message)
                .with_label(format!("{} past the end of {memory}", bytes(over)))
                .with_help(format!(
                    "shorten the range or use a larger buffer: {memory} has {}{}, and {fit}",
                    bytes(first.size),
                    if matches!(access.memory, Memory::HcclBuffer { .. }) {
                        " (hccl_buffer_size, 2 x HCCL_BUFFSIZE)"
                    } else {
                        ""
                    }
                ))
        }
        (None, Some((count, max))) => Diagnostic::new(
            &WriteExceedsBuffer::INFO,
            analysis.span(node),
            format!(
                "{describe} copies {} into a destination declared with destMax {}: the runtime rejects a count larger than destMax, so nothing is copied",
                bytes(count),
                bytes(max)
            ),
        )
        .with_label(format!("count {} > destMax {}", bytes(count), bytes(max)))
        .with_help("pass the destination's real capacity as destMax, and copy no more than it"),
        (None, None) => return None,
    };
    let mut seen: HashSet<Span> = HashSet::from([analysis.span(node)]);
    for overflow in overflows {
        let memory = analysis.memory_name(overflow.access.memory);
        let text = format!(
            "{} of {memory} (size {})",
            byte_range(overflow.access.start, overflow.access.end),
            bytes(overflow.size)
        );
        if let Some(operand) = overflow.operand
            && seen.insert(operand.span.clone())
        {
            diagnostic = diagnostic.with_related(operand.span.clone(), format!("this range is {text}"));
        }
        if let Memory::Buffer(inst) = overflow.access.memory
            && let Some(created) = exec.instance(inst).created
            && seen.insert(analysis.span(created))
        {
            diagnostic = diagnostic.with_related(
                analysis.span(created),
                format!(
                    "{} is allocated here with {}",
                    exec.instance_name(inst),
                    bytes(overflow.size)
                ),
            );
        }
        if let OpKind::LaunchSuperKernel(id) = n.op.kind {
            for span in data_copies(analysis, id, overflow.access.memory) {
                if seen.insert(span.clone()) {
                    diagnostic = diagnostic.with_related(span, format!("the cores' DataCopy calls here cover {text}"));
                }
            }
        }
    }
    if !overflows.is_empty()
        && let Some((count, max)) = dest_max
    {
        diagnostic = diagnostic.with_note(format!(
            "{api} also copies {} with destMax {}: the runtime rejects a count larger than destMax",
            bytes(count),
            bytes(max)
        ));
    }
    Some(diagnostic)
}

/// The `DataCopy` calls of a SuperKernel that name the buffer behind `memory`.
fn data_copies(analysis: &Analysis, id: SuperKernelId, memory: Memory) -> Vec<Span> {
    let Memory::Buffer(inst) = memory else {
        return Vec::new();
    };
    let obj = analysis.exec.instance(inst).obj;
    let mut spans = Vec::new();
    for sub in &analysis.program.superkernels[id.index()].subkernels {
        crate::model::for_each_op(&sub.body, &mut |op| {
            if let OpKind::DataCopy { range, .. } = &op.kind
                && range.buffer == obj
            {
                spans.push(op.span.clone());
            }
        });
    }
    spans
}
