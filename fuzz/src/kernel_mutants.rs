//! Kernel mutants: one synchronization call of a correct kernel deleted or altered, in
//! the bug classes the kernel rules (SG8xx) are for. Each operator works on the text, a
//! line at a time, in Ascend C (`SetFlag<HardEvent::MTE2_V>(EVENT_ID0)`, `set_flag(PIPE_MTE2,
//! PIPE_V, EVENT_ID0)`, `inQueueX.DeQue<T>()`) and in the `.sync` `aicore` form
//! (`AscendC::SetFlag<MTE2_V>(0)`, `TQue::DeQue(q)`). The driver is the
//! `syncguard-kernel-mutants` binary.

mod flow;
mod order;

use std::fmt;
use syncguard_model::kernel::KernelCall;

/// What a mutant does to the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    DeleteWaitFlag,
    DeleteSetFlag,
    DeleteSetWaitPair,
    SwapFlagDirection,
    ChangeWaitId,
    DuplicateSetFlag,
    DeleteBarrierAll,
    DeleteDeQue,
    DeleteEnQue,
    DeleteFreeTensor,
    DeleteCrossCoreSet,
    DeleteCrossCoreWait,
    CrossCoreFlagOfSyncAll,
    SyncAllOnOneCore,
    SyncAllWithCubeCores,
}

impl Class {
    pub const ALL: [Class; 15] = [
        Class::DeleteWaitFlag,
        Class::DeleteSetFlag,
        Class::DeleteSetWaitPair,
        Class::SwapFlagDirection,
        Class::ChangeWaitId,
        Class::DuplicateSetFlag,
        Class::DeleteBarrierAll,
        Class::DeleteDeQue,
        Class::DeleteEnQue,
        Class::DeleteFreeTensor,
        Class::DeleteCrossCoreSet,
        Class::DeleteCrossCoreWait,
        Class::CrossCoreFlagOfSyncAll,
        Class::SyncAllOnOneCore,
        Class::SyncAllWithCubeCores,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::DeleteWaitFlag => "delete WaitFlag",
            Class::DeleteSetFlag => "delete SetFlag",
            Class::DeleteSetWaitPair => "delete a SetFlag/WaitFlag pair",
            Class::SwapFlagDirection => "reverse a WaitFlag's HardEvent",
            Class::ChangeWaitId => "change a WaitFlag's event id",
            Class::DuplicateSetFlag => "set a flag twice",
            Class::DeleteBarrierAll => "delete PipeBarrier<PIPE_ALL>",
            Class::DeleteDeQue => "use a tensor without DeQue",
            Class::DeleteEnQue => "delete EnQue",
            Class::DeleteFreeTensor => "delete FreeTensor",
            Class::DeleteCrossCoreSet => "delete CrossCoreSetFlag",
            Class::DeleteCrossCoreWait => "delete CrossCoreWaitFlag",
            Class::CrossCoreFlagOfSyncAll => "cross-core flag 12 beside SyncAll",
            Class::SyncAllOnOneCore => "SyncAll on core 0 only",
            Class::SyncAllWithCubeCores => "SyncAll<false> in a vector kernel",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One mutant: its class, the line (from 1) it changes, and the whole mutated text.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub class: Class,
    pub line: usize,
    pub text: String,
    /// Per line of `text` (from 0), the original line (from 1) it comes from: a
    /// finding of the mutant is compared with the original's at that line.
    pub origin: Vec<usize>,
    /// Why the mutant means the same as the original, when that is certain: it is then
    /// reported apart and never counted as found.
    pub equivalent: Option<&'static str>,
}

impl Mutant {
    /// The original line (from 1) of the mutant's line `line` (from 1).
    pub fn original_line(&self, line: usize) -> usize {
        line.checked_sub(1)
            .and_then(|index| self.origin.get(index).copied())
            .unwrap_or(line)
    }
}

/// The mutants of `source`; `sync` for the `.sync` form, C/C++ otherwise.
pub fn mutants(source: &str, sync: bool) -> Vec<Mutant> {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let code: Vec<bool> = code_lines(&lines);
    let mut out = Vec::new();
    let mut add = |class: Class, line: usize, edit: Vec<(usize, Option<String>)>| {
        let mut text = String::with_capacity(source.len() + 64);
        let mut origin = Vec::with_capacity(lines.len() + 1);
        for (index, original) in lines.iter().enumerate() {
            let replaced = match edit.iter().find(|(at, _)| *at == index) {
                Some((_, Some(replacement))) => replacement.as_str(),
                Some((_, None)) => "",
                None => original,
            };
            if !text.is_empty() && !text.ends_with('\n') && !replaced.is_empty() {
                text.push('\n');
            }
            text.push_str(replaced);
            origin.extend(std::iter::repeat_n(index + 1, replaced.split_inclusive('\n').count()));
        }
        if text == source {
            return;
        }
        let equivalent = equivalence(class, &lines, &code, line, &edit, sync);
        out.push(Mutant {
            class,
            line: line + 1,
            text,
            origin,
            equivalent,
        });
    };
    let vector_only = !source.contains("__mix__") && !source.contains("MIX_") && !source.contains("ASCEND_IS_AIC");
    let hard_sync_all = lines.iter().any(|l| is_hard_sync_all(l));
    for (i, line) in lines.iter().enumerate() {
        if !code[i] {
            continue;
        }
        let set = flag_call(line, "SetFlag", "set_flag");
        let wait = flag_call(line, "WaitFlag", "wait_flag");
        if wait.is_some() {
            add(Class::DeleteWaitFlag, i, vec![(i, None)]);
            if let Some(swapped) = swap_direction(line) {
                add(Class::SwapFlagDirection, i, vec![(i, Some(swapped))]);
            }
            if let Some(changed) = change_last_id(line) {
                add(Class::ChangeWaitId, i, vec![(i, Some(changed))]);
            }
        }
        if let Some(set) = &set {
            add(Class::DeleteSetFlag, i, vec![(i, None)]);
            let once = if line.ends_with('\n') {
                line.to_string()
            } else {
                format!("{line}\n")
            };
            add(Class::DuplicateSetFlag, i, vec![(i, Some(format!("{once}{line}")))]);
            if let Some(next) = next_code_line(&lines, &code, i)
                && flag_call(lines[next], "WaitFlag", "wait_flag").as_deref() == Some(set.as_str())
            {
                add(Class::DeleteSetWaitPair, i, vec![(i, None), (next, None)]);
            }
        }
        if is_barrier_all(line) {
            add(Class::DeleteBarrierAll, i, vec![(i, None)]);
        }
        if line.contains("EnQue(") {
            add(Class::DeleteEnQue, i, vec![(i, None)]);
        }
        if line.contains("FreeTensor(") {
            add(Class::DeleteFreeTensor, i, vec![(i, None)]);
        }
        if line.contains("DeQue")
            && let Some(edit) = without_dequeue(&lines, &code, i, sync)
        {
            add(Class::DeleteDeQue, i, edit);
        }
        if line.contains("CrossCoreSetFlag") {
            add(Class::DeleteCrossCoreSet, i, vec![(i, None)]);
            if hard_sync_all && let Some(changed) = cross_flag_to(line, 12) {
                add(Class::CrossCoreFlagOfSyncAll, i, vec![(i, Some(changed))]);
            }
        }
        if line.contains("CrossCoreWaitFlag") {
            add(Class::DeleteCrossCoreWait, i, vec![(i, None)]);
        }
        if is_hard_sync_all(line) || line.contains("SyncAll(") {
            let indent = &line[..line.len() - line.trim_start().len()];
            let body = line.trim();
            let wrapped = if sync {
                format!("{indent}if GetBlockIdx() == 0 {{ {body} }}\n")
            } else {
                format!("{indent}if (AscendC::GetBlockIdx() == 0) {{ {body} }}\n")
            };
            add(Class::SyncAllOnOneCore, i, vec![(i, Some(wrapped))]);
        }
        if vector_only && is_hard_sync_all(line) && !line.contains("SyncAll<false>") {
            let changed =
                line.replacen("SyncAll<true>()", "SyncAll<false>()", 1)
                    .replacen("SyncAll()", "SyncAll<false>()", 1);
            if changed != *line {
                add(Class::SyncAllWithCubeCores, i, vec![(i, Some(changed))]);
            }
        }
    }
    out
}

/// Which lines hold code: not blank, not only a comment, not inside `/* */` or `#if 0`.
fn code_lines(lines: &[&str]) -> Vec<bool> {
    let mut in_block = false;
    let mut disabled = 0usize;
    lines
        .iter()
        .map(|line| {
            let t = line.trim();
            if disabled > 0 {
                if t.starts_with("#if") {
                    disabled += 1;
                } else if t.starts_with("#endif") {
                    disabled -= 1;
                }
                return false;
            }
            if t.starts_with("#if 0") {
                disabled = 1;
                return false;
            }
            if in_block {
                if t.contains("*/") {
                    in_block = false;
                }
                return false;
            }
            if t.starts_with("/*") {
                in_block = !t.contains("*/");
                return false;
            }
            !(t.is_empty() || t.starts_with("//") || t.starts_with('#'))
        })
        .collect()
}

fn next_code_line(lines: &[&str], code: &[bool], after: usize) -> Option<usize> {
    (after + 1..lines.len()).find(|&j| code[j])
}

fn previous_code_line(code: &[bool], before: usize) -> Option<usize> {
    (0..before).rev().find(|&j| code[j])
}

fn is_barrier_all(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or(line);
    code.contains("PipeBarrier<PIPE_ALL>") || code.contains("pipe_barrier(PIPE_ALL)")
}

/// Why a mutant is certainly equivalent to the original, in the cases that are sure on
/// the text alone: a set/wait pair deleted next to a `PIPE_ALL` barrier (the barrier
/// waits for every pipe, which orders what the pair ordered); a `PIPE_ALL` barrier
/// deleted next to another one; and, in the `.sync` form, where the `aicore` block
/// shows the rest of the kernel: a `PIPE_ALL` barrier that is the kernel's last
/// statement, a `FreeTensor` at the kernel's top level with no `AllocTensor` of its
/// queue after it, and `SyncAll` confined to block 0 of a one-block launch whose cores
/// all have block index 0. Anything else is not equivalent.
fn equivalence(
    class: Class,
    lines: &[&str],
    code: &[bool],
    at: usize,
    edit: &[(usize, Option<String>)],
    sync: bool,
) -> Option<&'static str> {
    let deleted: Vec<usize> = edit.iter().filter(|(_, r)| r.is_none()).map(|(at, _)| *at).collect();
    let first = deleted.iter().min().copied().unwrap_or(at);
    let last = deleted.iter().max().copied().unwrap_or(at);
    let beside_barrier = || {
        previous_code_line(code, first).is_some_and(|j| is_barrier_all(lines[j]))
            || next_code_line(lines, code, last).is_some_and(|j| is_barrier_all(lines[j]))
    };
    let block = if sync { aicore_block(lines, at) } else { None };
    match class {
        Class::DeleteSetWaitPair if beside_barrier() => {
            Some("a PipeBarrier<PIPE_ALL> beside the pair orders every pipe")
        }
        Class::DeleteBarrierAll if beside_barrier() => Some("another PipeBarrier<PIPE_ALL> beside it"),
        Class::DeleteBarrierAll
            if block.is_some_and(|(_, end)| (at + 1..end).all(|j| !code[j] || lines[j].trim() == "}")) =>
        {
            Some("the kernel ends right after the barrier")
        }
        Class::DeleteFreeTensor => {
            let (start, end) = block?;
            let queue = lines[at].split("FreeTensor(").nth(1)?.split(',').next()?.trim();
            let top_level = depth_before(lines, start, at) == 1;
            let allocated_later = (at + 1..end).any(|j| code[j] && lines[j].contains(&format!("AllocTensor({queue})")));
            (top_level && !allocated_later).then_some("nothing allocates from the queue after it")
        }
        Class::SyncAllOnOneCore => {
            let (start, _) = block?;
            let header = lines[start];
            let one_block = header.contains("blocks: 1,") || header.contains("blocks: 1)");
            (one_block && !header.contains("_1_2")).then_some("one block: every core has block index 0")
        }
        _ => None,
    }
}

/// Whether `file:line` became at least one statement holding `call` in the pipe program
/// `converted` (each statement ending in `// file:line`), and `holds` of every one (the
/// program's lines, the statement's index). `false` when the line became none.
fn every_statement(
    converted: &str,
    (file, line): (&str, usize),
    call: &str,
    mut holds: impl FnMut(&[&str], usize) -> bool,
) -> bool {
    let lines: Vec<&str> = converted.lines().collect();
    let mut occurrences = statements_from(&lines, file, line, call).peekable();
    occurrences.peek().is_some() && occurrences.all(|at| holds(&lines, at))
}

/// Whether deleting the C/C++ `FreeTensor` at `file:line` certainly changes nothing,
/// judged on the pipe program `syncguard convert` read from the original kernel
/// (`converted`, each statement ending in `// file:line`): for every statement that
/// line became, either no `AllocTensor` of its queue can run after it (along the
/// block's `if`s, loops and `return`s, the arms another value of a parameter takes
/// left out: `flow`), or the queue is never allocated past its depth, or it is a `TBuf`. `false` when the line became no statement.
pub fn free_is_final(converted: &str, file: &str, line: usize) -> bool {
    every_statement(converted, (file, line), "FreeTensor(", |lines, at| {
        let Some((start, end)) = aicore_block(lines, at) else {
            return false;
        };
        let queue = lines[at]
            .split("FreeTensor(")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .map(str::trim);
        let Some(queue) = queue else { return false };
        flow::never_followed_by(converted, lines, at, &format!("AllocTensor({queue})"))
            || never_reused(lines, start, end, queue)
            || is_buffer(&lines[start..end], queue)
    })
}

/// Whether the queue's slots are each allocated at most once in the block: its
/// `AllocTensor`s, each counted as often as the constant-bounded loops around it run,
/// are no more than its depth (`TQue<POS>(depth, ...)`). Then no `AllocTensor` ever waits
/// for a free, and no `FreeTensor` of the queue is needed.
fn never_reused(lines: &[&str], start: usize, end: usize, queue: &str) -> bool {
    let Some(depth) = queue_depth(&lines[start..end], queue) else {
        return false;
    };
    let mut allocations = 0i64;
    for at in start + 1..end {
        if !lines[at].contains(&format!("AllocTensor({queue})")) {
            continue;
        }
        let Some(runs) = constant_trips(lines, start, at) else {
            return false;
        };
        allocations = allocations.saturating_add(runs);
    }
    allocations <= depth
}

/// `let name = TBuf<POS>(...)`: a buffer, whose `AllocTensor` is its one piece of memory
/// and whose `FreeTensor` gives nothing back.
fn is_buffer(block: &[&str], name: &str) -> bool {
    block
        .iter()
        .any(|line| line.trim_start().starts_with(&format!("let {name} = TBuf<")))
}

/// `let queue = TQue<POS>(depth, ...)`, the depth on its line or the next.
fn queue_depth(block: &[&str], queue: &str) -> Option<i64> {
    let at = block
        .iter()
        .position(|line| line.trim_start().starts_with(&format!("let {queue} = TQue")))?;
    let after_paren = block[at].split_once('(').map_or("", |(_, rest)| rest).trim();
    let first = if after_paren.is_empty() {
        block.get(at + 1)?.trim()
    } else {
        after_paren
    };
    first.split([',', ')']).next()?.trim().parse().ok()
}

/// How many times line `at` runs per pass over the block: the product of the trip
/// counts of the `for i in A..B` loops around it, `None` when one is not two integers.
fn constant_trips(lines: &[&str], start: usize, at: usize) -> Option<i64> {
    let mut open: Vec<Option<Option<i64>>> = Vec::new();
    for line in &lines[start + 1..at] {
        let code = line.split("//").next().unwrap_or(line).trim();
        for _ in 0..code.matches('}').count() {
            open.pop();
        }
        let header = code.starts_with("for ").then(|| trip_count(code));
        for _ in 0..code.matches('{').count() {
            open.push(header);
        }
    }
    open.into_iter()
        .flatten()
        .try_fold(1i64, |runs, trips| Some(runs.saturating_mul(trips?)))
}

/// `for i in 2..6 {`: 4.
fn trip_count(header: &str) -> Option<i64> {
    let range = header.split(" in ").nth(1)?.trim_end_matches('{').trim();
    let (low, high) = range.split_once("..")?;
    let (low, high): (i64, i64) = (low.trim().parse().ok()?, high.trim().parse().ok()?);
    Some((high - low).max(0))
}

/// Whether no statement of the pipe program `convert` read comes from `file:line`: the
/// line is in no kernel the build makes (an `if constexpr` arm of a template argument
/// the launch does not pass, a function no kernel calls), so an edit of that line alone
/// changes nothing that runs. The reader's own limits are not this: a kernel whose
/// reading left a call out is not mutated at all.
pub fn in_no_statement(converted: &str, file: &str, line: usize) -> bool {
    let lines: Vec<&str> = converted.lines().collect();
    // Only where the program names the file's lines at all: a file the comments name
    // otherwise would make every line look absent.
    let names_the_file = lines.iter().any(|text| {
        comment_origin(text)
            .and_then(|origin| origin.rsplit_once(':'))
            .is_some_and(|(path, _)| path == file || path.ends_with(&format!("/{file}")))
    });
    names_the_file && statements_from(&lines, file, line, "").next().is_none()
}

impl Class {
    /// Whether the mutant edits its own line and nothing else.
    pub fn edits_one_line(self) -> bool {
        !matches!(
            self,
            Class::DeleteSetWaitPair | Class::DeleteDeQue | Class::SyncAllOnOneCore | Class::SyncAllWithCubeCores
        )
    }
}

/// Whether the C/C++ `PipeBarrier<PIPE_ALL>` at `file:line` is the last thing its kernel
/// does, judged on the pipe program `convert` read: every statement the line became is
/// followed in its `aicore` block by closing braces only. The kernel's end waits for
/// every pipe anyway. `false` when the line became no statement.
pub fn barrier_is_last(converted: &str, file: &str, line: usize) -> bool {
    every_statement(converted, (file, line), "PipeBarrier<PIPE_ALL>", |lines, at| {
        aicore_block(lines, at).is_some_and(|(_, end)| {
            (at + 1..end).all(|j| {
                lines[j]
                    .split("//")
                    .next()
                    .unwrap_or("")
                    .trim()
                    .chars()
                    .all(|c| c == '}')
            })
        })
    })
}

/// Whether deleting the C/C++ `PipeBarrier<PIPE_ALL>` at `file:line` removes no order
/// the kernel's instructions need, judged on the pipe program `convert` read, with every
/// statement the line became deleted at once (`order`). `false` when the line became no
/// statement, or that is not sure.
pub fn barrier_orders_nothing(converted: &str, file: &str, line: usize) -> bool {
    let lines: Vec<&str> = converted.lines().collect();
    let deleted: Vec<usize> = statements_from(&lines, file, line, "PipeBarrier<PIPE_ALL>").collect();
    removes_no_order(converted, &lines, &deleted)
}

/// Whether deleting the statements at the lines `deleted` of the pipe program removes no
/// order, judged in each `aicore` block they are in; `false` for none.
fn removes_no_order(converted: &str, lines: &[&str], deleted: &[usize]) -> bool {
    let mut blocks: Vec<(usize, Vec<usize>)> = Vec::new();
    for &at in deleted {
        let Some((start, _)) = aicore_block(lines, at) else {
            return false;
        };
        match blocks.iter_mut().find(|(block, _)| *block == start) {
            Some((_, lines)) => lines.push(at),
            None => blocks.push((start, vec![at])),
        }
    }
    !blocks.is_empty()
        && blocks
            .iter()
            .all(|(_, in_block)| order::removes_no_order(converted, lines, in_block))
}

/// The pipe of the instruction that starts at line `j`: `Some(Some(pipe))`, `Some(None)`
/// for a line that issues no work (a flag, a queue operation, a `let`, a brace, a
/// continuation), `None` where the reading is not plain (a copy whose memories are not
/// a GM parameter or a tensor, a cube or cross-core instruction, another barrier).
fn statement_pipe(lines: &[&str], j: usize, gm: &[String]) -> Option<Option<&'static str>> {
    let code = lines[j].split("//").next().unwrap_or("").trim();
    let Some(call) = code.strip_prefix("AscendC::") else {
        let plain = code.starts_with("let ") || code.starts_with("TQue::") || code.starts_with("TPipe::");
        return (plain || !code.contains('(') || code.starts_with(')')).then_some(None);
    };
    let name = call.split(['(', '<']).next().unwrap_or("");
    match name {
        "SetFlag" | "WaitFlag" => Some(None),
        "GetValue" | "SetValue" => Some(Some("S")),
        "DataCopy" | "DataCopyPad" => {
            let args = statement_text(lines, j);
            let args = args.split_once('(').map_or("", |(_, rest)| rest);
            let mut bases = args
                .split(',')
                .map(|arg| arg.trim().split(['[', ')']).next().unwrap_or("").trim());
            let (dst, src) = (bases.next()?, bases.next()?);
            match (gm.iter().any(|g| g == dst), gm.iter().any(|g| g == src)) {
                (false, true) => Some(Some("MTE2")),
                (true, false) => Some(Some("MTE3")),
                (false, false) => Some(Some("V")),
                (true, true) => None,
            }
        }
        _ if KernelCall::lookup(name) == Some(KernelCall::Vector) => Some(Some("V")),
        _ => None,
    }
}

/// A statement's text from line `j` to the line that closes it.
fn statement_text(lines: &[&str], j: usize) -> String {
    let mut text = String::new();
    for line in &lines[j..] {
        let code = line.split("//").next().unwrap_or("");
        text.push_str(code.trim());
        text.push(' ');
        if code.trim_end().ends_with(';') {
            break;
        }
    }
    text
}

/// Whether deleting the C/C++ `SetFlag`/`WaitFlag` pair whose `SetFlag` is at
/// `file:line` removes no order the kernel's instructions need, judged on the pipe
/// program `convert` read: every `SetFlag` statement the line became and the first
/// `WaitFlag` of the same event and id after each, deleted at once (`order`). `false`
/// when the line became no statement, a set has no such wait, or that is not sure.
pub fn pair_orders_nothing(converted: &str, file: &str, line: usize) -> bool {
    let lines: Vec<&str> = converted.lines().collect();
    let mut deleted = Vec::new();
    for set in statements_from(&lines, file, line, "SetFlag<") {
        let code = lines[set].split("//").next().unwrap_or("");
        let Some(call) = code.split("SetFlag").nth(1).and_then(|rest| rest.split(';').next()) else {
            return false;
        };
        let wait = format!("WaitFlag{call};");
        let Some(wait) = (set + 1..lines.len()).find(|&j| lines[j].contains(&wait)) else {
            return false;
        };
        deleted.extend([set, wait]);
    }
    removes_no_order(converted, &lines, &deleted)
}

/// The lines of the converted program that came from `file:line` and hold `call`.
fn statements_from<'a>(lines: &'a [&str], file: &str, line: usize, call: &'a str) -> impl Iterator<Item = usize> + 'a {
    let origin = format!("{file}:{line}");
    lines.iter().enumerate().filter_map(move |(at, text)| {
        let from = comment_origin(text).is_some_and(|o| o == origin || o.ends_with(&format!("/{origin}")));
        (from && text.contains(call)).then_some(at)
    })
}

/// The `file:line` a converted statement names in its trailing comment.
fn comment_origin(line: &str) -> Option<&str> {
    Some(line.rsplit_once("// ")?.1.trim())
}

/// The `.sync` `aicore` block holding line `at`: its header line and the line of its
/// closing brace.
fn aicore_block(lines: &[&str], at: usize) -> Option<(usize, usize)> {
    let start = (0..=at).rev().find(|&j| lines[j].trim_start().starts_with("aicore "))?;
    // The header may run over several lines (`aicore k(\n x,\n) {`): the block ends
    // where the braces it opened close.
    let mut depth = 0i64;
    let mut opened = false;
    for (j, line) in lines.iter().enumerate().skip(start) {
        depth += brace_change(line);
        opened |= depth > 0;
        if opened && depth <= 0 {
            return (j >= at).then_some((start, j));
        }
    }
    None
}

/// The brace depth at the start of line `at`, counted from line `start`.
fn depth_before(lines: &[&str], start: usize, at: usize) -> i64 {
    lines[start..at].iter().map(|l| brace_change(l)).sum()
}

fn brace_change(line: &str) -> i64 {
    let code = line.split("//").next().unwrap_or(line);
    code.matches('{').count() as i64 - code.matches('}').count() as i64
}

/// A flag call's event and id, normalized (`MTE2_V 0`), when `line` holds one: a
/// `SetFlag<...>(id)` (not `CrossCoreSetFlag`) or `set_flag(PIPE_A, PIPE_B, id)`.
fn flag_call(line: &str, templated: &str, low_level: &str) -> Option<String> {
    let code = line.split("//").next().unwrap_or(line);
    if let Some(at) = code.find(&format!("{templated}<"))
        && !code[..at].ends_with("CrossCore")
    {
        let rest = &code[at + templated.len() + 1..];
        let (event, rest) = rest.split_once('>')?;
        let event = event.trim().rsplit("::").next()?.to_string();
        let id = rest.trim_start().strip_prefix('(')?.split(')').next()?.trim();
        return Some(format!("{event} {}", normalize_id(id)));
    }
    let at = code.find(&format!("{low_level}("))?;
    let args: Vec<&str> = code[at + low_level.len() + 1..]
        .split(')')
        .next()?
        .split(',')
        .map(str::trim)
        .collect();
    match args.as_slice() {
        [src, dst, id] => Some(format!(
            "{}_{} {}",
            src.trim_start_matches("PIPE_"),
            dst.trim_start_matches("PIPE_"),
            normalize_id(id)
        )),
        _ => None,
    }
}

fn normalize_id(id: &str) -> String {
    let id = id.rsplit("::").next().unwrap_or(id);
    id.strip_prefix("EVENT_ID").unwrap_or(id).to_string()
}

/// `WaitFlag<HardEvent::MTE2_V>` → `WaitFlag<HardEvent::V_MTE2>`; `wait_flag(PIPE_MTE2,
/// PIPE_V, id)` → `wait_flag(PIPE_V, PIPE_MTE2, id)`.
fn swap_direction(line: &str) -> Option<String> {
    if let Some(at) = line.find("WaitFlag<") {
        let start = at + "WaitFlag<".len();
        let end = start + line[start..].find('>')?;
        let event = &line[start..end];
        let (prefix, name) = match event.rfind("::") {
            Some(p) => (&event[..p + 2], &event[p + 2..]),
            None => ("", event),
        };
        let (src, dst) = name.split_once('_')?;
        return Some(format!("{}{prefix}{dst}_{src}{}", &line[..start], &line[end..]));
    }
    let at = line.find("wait_flag(")?;
    let start = at + "wait_flag(".len();
    let end = start + line[start..].find(')')?;
    let args: Vec<&str> = line[start..end].split(',').map(str::trim).collect();
    let [src, dst, id] = args.as_slice() else { return None };
    Some(format!("{}{dst}, {src}, {id}{}", &line[..start], &line[end..]))
}

/// The last argument, an event id (`EVENT_ID3` or a digit), moved to the next id.
fn change_last_id(line: &str) -> Option<String> {
    let close = line.rfind(')')?;
    let open = line[..close].rfind(['(', ','])?;
    let id = line[open + 1..close].trim();
    let (prefix, digits) = match id.find(|c: char| c.is_ascii_digit()) {
        Some(p) if id[p..].chars().all(|c| c.is_ascii_digit()) && (p == 0 || id[..p].ends_with("EVENT_ID")) => {
            (&id[..p], &id[p..])
        }
        _ => return None,
    };
    let next = (digits.parse::<u32>().ok()? + 1) % 8;
    let spacing = &line[open + 1..open + 1 + (line[open + 1..close].len() - line[open + 1..close].trim_start().len())];
    Some(format!(
        "{}{spacing}{prefix}{next}{}",
        &line[..open + 1],
        &line[close..]
    ))
}

/// `CrossCoreSetFlag<mode, pipe>(id)` with the id replaced by `flag`.
fn cross_flag_to(line: &str, flag: u32) -> Option<String> {
    let at = line.find("CrossCoreSetFlag")?;
    let open = at + line[at..].find('(')?;
    let close = open + line[open..].find(')')?;
    Some(format!("{}{flag}{}", &line[..open + 1], &line[close..]))
}

fn is_hard_sync_all(line: &str) -> bool {
    line.contains("SyncAll()") || line.contains("SyncAll<true>()") || line.contains("SyncAll<false>()")
}

/// The `DeQue` at line `i` left out, its tensor taken from the `EnQue` before it:
/// `x = q.DeQue<T>();` is deleted (x still names the enqueued tensor), `LocalTensor<T>
/// y = q.DeQue<T>();` becomes `LocalTensor<T> y = x;`, `let y = TQue::DeQue(q);` has
/// `y` replaced by `x` after it. None unless the queue's `EnQue` of a named tensor is
/// in the 40 lines above.
fn without_dequeue(lines: &[&str], code: &[bool], i: usize, sync: bool) -> Option<Vec<(usize, Option<String>)>> {
    let line = lines[i];
    let (queue, bound) = dequeue_parts(line, sync)?;
    let (at, enqueued) = (i.saturating_sub(40)..i)
        .rev()
        .filter(|&j| code[j])
        .find_map(|j| enqueued_tensor(lines[j], &queue, sync).map(|tensor| (j, tensor)))?;
    // The enqueued tensor must be in scope: not in another function (an Ascend C
    // `CopyIn` that enqueues and the `Compute` that dequeues), nor another `aicore`.
    if lines[at + 1..i]
        .iter()
        .any(|l| l.contains("__aicore__") || l.trim_start().starts_with("aicore "))
    {
        return None;
    }
    if sync {
        let mut edit = vec![(i, None)];
        for (j, later) in lines.iter().enumerate().skip(i + 1) {
            if later.trim_start().starts_with("aicore ") {
                break;
            }
            let replaced = replace_word(later, &bound, &enqueued);
            if replaced != *later {
                edit.push((j, Some(replaced)));
            }
        }
        return Some(edit);
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    let lhs = line.split('=').next()?.trim();
    if bound == enqueued {
        // `xLocal = q.DeQue<T>();` of the tensor named `xLocal` already: the line goes;
        // a declaration of the same name would shadow it, so it becomes nothing too.
        return (lhs == bound).then(|| vec![(i, None)]);
    }
    Some(vec![(i, Some(format!("{indent}{lhs} = {enqueued};\n")))])
}

/// The queue and the name a `DeQue` line binds.
fn dequeue_parts(line: &str, sync: bool) -> Option<(String, String)> {
    let (lhs, rhs) = line.split_once('=')?;
    let bound = lhs.split_whitespace().last()?.to_string();
    if sync {
        let queue = rhs.split("TQue::DeQue(").nth(1)?.split(')').next()?.trim().to_string();
        return Some((queue, bound));
    }
    let queue = rhs.split(".DeQue").next()?.trim().to_string();
    (!queue.is_empty()
        && queue
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '>' || c == '-'))
    .then_some((queue, bound))
}

fn enqueued_tensor(line: &str, queue: &str, sync: bool) -> Option<String> {
    let args = if sync {
        line.split("TQue::EnQue(").nth(1)?.split(')').next()?.to_string()
    } else {
        let call = format!("{queue}.EnQue");
        let rest = line.split(&call).nth(1)?;
        rest.split_once('(')?.1.split(')').next()?.to_string()
    };
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    match (sync, parts.as_slice()) {
        (true, [q, tensor]) if *q == queue => Some(tensor.to_string()),
        (false, [tensor]) => Some(tensor.to_string()),
        _ => None,
    }
}

fn replace_word(text: &str, word: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(word)
            && (i == 0 || !is_name(bytes[i - 1]))
            && bytes.get(i + word.len()).is_none_or(|b| !is_name(*b))
        {
            out.push_str(with);
            i += word.len();
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(source: &str, sync: bool) -> Vec<(Class, usize)> {
        mutants(source, sync).into_iter().map(|m| (m.class, m.line)).collect()
    }

    #[test]
    fn flag_calls_are_deleted_swapped_renumbered_and_doubled() {
        let source = "SetFlag<HardEvent::MTE2_V>(EVENT_ID0);\nWaitFlag<HardEvent::MTE2_V>(EVENT_ID0);\n";
        let found = mutants(source, false);
        let text = |class| found.iter().find(|m| m.class == class).unwrap().text.clone();
        assert_eq!(text(Class::DeleteWaitFlag), "SetFlag<HardEvent::MTE2_V>(EVENT_ID0);\n");
        assert_eq!(text(Class::DeleteSetWaitPair), "");
        assert!(text(Class::SwapFlagDirection).contains("WaitFlag<HardEvent::V_MTE2>(EVENT_ID0)"));
        assert!(text(Class::ChangeWaitId).contains("WaitFlag<HardEvent::MTE2_V>(EVENT_ID1)"));
        assert_eq!(text(Class::DuplicateSetFlag).matches("SetFlag").count(), 2);
    }

    #[test]
    fn low_level_and_sync_forms_are_mutated_too() {
        let low = "set_flag(PIPE_MTE2, PIPE_V, EVENT_ID2);\nwait_flag(PIPE_MTE2, PIPE_V, EVENT_ID2);\n";
        let found = mutants(low, false);
        assert!(found.iter().any(|m| m.class == Class::DeleteSetWaitPair));
        let swapped = found.iter().find(|m| m.class == Class::SwapFlagDirection).unwrap();
        assert!(
            swapped.text.contains("wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID2)"),
            "{}",
            swapped.text
        );
        let sync = "    AscendC::SetFlag<MTE3_MTE2>(0);\n    AscendC::WaitFlag<MTE3_MTE2>(0);\n";
        let found = mutants(sync, true);
        let changed = found.iter().find(|m| m.class == Class::ChangeWaitId).unwrap();
        assert!(changed.text.contains("WaitFlag<MTE3_MTE2>(1)"), "{}", changed.text);
    }

    #[test]
    fn comments_and_disabled_code_are_not_mutated() {
        let source = "// SetFlag<HardEvent::MTE2_V>(0);\n#if 0\nWaitFlag<HardEvent::MTE2_V>(0);\n#endif\n/* PipeBarrier<PIPE_ALL>();\n*/\n";
        assert!(classes(source, false).is_empty());
    }

    #[test]
    fn a_dequeue_is_replaced_by_the_enqueued_tensor() {
        let cpp = "inQueueX.EnQue(xLocal);\nLocalTensor<half> xv = inQueueX.DeQue<half>();\nAdd(z, xv, xv);\n";
        let found = mutants(cpp, false);
        let mutant = found.iter().find(|m| m.class == Class::DeleteDeQue).unwrap();
        assert!(
            mutant.text.contains("LocalTensor<half> xv = xLocal;"),
            "{}",
            mutant.text
        );
        let sync = "    TQue::EnQue(inX, xl);\n    let xv = TQue::DeQue(inX);\n    AscendC::Exp(y, xv);\n";
        let found = mutants(sync, true);
        let mutant = found.iter().find(|m| m.class == Class::DeleteDeQue).unwrap();
        assert_eq!(mutant.text, "    TQue::EnQue(inX, xl);\n    AscendC::Exp(y, xl);\n");
    }

    #[test]
    fn sync_all_is_confined_to_one_core_and_given_the_cube_cores() {
        let source = "    AscendC::SyncAll();\n    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(3);\n";
        let found = mutants(source, false);
        let one = found.iter().find(|m| m.class == Class::SyncAllOnOneCore).unwrap();
        assert!(
            one.text
                .contains("if (AscendC::GetBlockIdx() == 0) { AscendC::SyncAll(); }")
        );
        let flag = found.iter().find(|m| m.class == Class::CrossCoreFlagOfSyncAll).unwrap();
        assert!(flag.text.contains("CrossCoreSetFlag<2, PIPE_FIX>(12)"));
        assert!(found.iter().any(|m| m.class == Class::SyncAllWithCubeCores));
    }

    #[test]
    fn mutant_lines_map_back_to_the_original() {
        let source = "a;\nSetFlag<HardEvent::MTE2_V>(EVENT_ID0);\nWaitFlag<HardEvent::MTE2_V>(EVENT_ID0);\nb;\n";
        let found = mutants(source, false);
        let pair = found.iter().find(|m| m.class == Class::DeleteSetWaitPair).unwrap();
        assert_eq!(pair.text, "a;\nb;\n");
        assert_eq!((pair.original_line(1), pair.original_line(2)), (1, 4));
        let twice = found.iter().find(|m| m.class == Class::DuplicateSetFlag).unwrap();
        assert_eq!(twice.origin, vec![1, 2, 2, 3, 4]);
        assert_eq!(twice.original_line(4), 3);
    }

    #[test]
    fn a_last_line_without_newline_is_doubled_on_two_lines() {
        let found = mutants("SetFlag<HardEvent::V_MTE3>(0);", false);
        let twice = found.iter().find(|m| m.class == Class::DuplicateSetFlag).unwrap();
        assert_eq!(
            twice.text,
            "SetFlag<HardEvent::V_MTE3>(0);\nSetFlag<HardEvent::V_MTE3>(0);"
        );
        assert_eq!(twice.origin, vec![1, 1]);
    }

    #[test]
    fn only_sure_equivalents_are_marked() {
        let source = "    AscendC::PipeBarrier<PIPE_ALL>();\n    AscendC::SetFlag<MTE2_V>(0);\n    AscendC::WaitFlag<MTE2_V>(0);\n    AscendC::PipeBarrier<PIPE_ALL>();\n";
        let found = mutants(source, true);
        let pair = found.iter().find(|m| m.class == Class::DeleteSetWaitPair).unwrap();
        assert!(pair.equivalent.is_some());
        // Deleting one side of the pair is a bug, barrier or not.
        for m in found
            .iter()
            .filter(|m| matches!(m.class, Class::DeleteWaitFlag | Class::DeleteSetFlag))
        {
            assert!(m.equivalent.is_none(), "{:?}", m.class);
        }
        // Each barrier has a pair between it and the other: deleting it is not sure.
        assert!(
            found
                .iter()
                .filter(|m| m.class == Class::DeleteBarrierAll)
                .all(|m| m.equivalent.is_none())
        );
        let doubled = mutants("PipeBarrier<PIPE_ALL>();\n// why\npipe_barrier(PIPE_ALL);\n", false);
        let barriers: Vec<_> = doubled.iter().filter(|m| m.class == Class::DeleteBarrierAll).collect();
        assert_eq!(barriers.len(), 2);
        assert!(barriers.iter().all(|m| m.equivalent.is_some()));
        let alone = mutants(
            "SetFlag<HardEvent::MTE2_V>(0);\nWaitFlag<HardEvent::MTE2_V>(0);\nAdd(z, x, y);\n",
            false,
        );
        assert!(alone.iter().all(|m| m.equivalent.is_none()));
    }

    #[test]
    fn a_dequeue_in_another_function_than_its_enqueue_is_left_alone() {
        let cpp = "    __aicore__ inline void CopyIn() {\n        inQueueX.EnQue(xLocal);\n    }\n    __aicore__ inline void Compute() {\n        LocalTensor<half> xLocal = inQueueX.DeQue<half>();\n    }\n";
        let found = mutants(cpp, false);
        assert!(found.iter().all(|m| m.class != Class::DeleteDeQue));
        assert!(found.iter().any(|m| m.class == Class::DeleteEnQue));
    }

    #[test]
    fn a_dequeued_name_is_replaced_only_in_its_own_aicore() {
        let sync = "aicore a(x) {\n    TQue::EnQue(q, t);\n    let v = TQue::DeQue(q);\n    AscendC::Exp(v, v);\n}\naicore b(x) {\n    AscendC::Exp(v, v);\n}\n";
        let found = mutants(sync, true);
        let mutant = found.iter().find(|m| m.class == Class::DeleteDeQue).unwrap();
        assert_eq!(
            mutant.text,
            "aicore a(x) {\n    TQue::EnQue(q, t);\n    AscendC::Exp(t, t);\n}\naicore b(x) {\n    AscendC::Exp(v, v);\n}\n"
        );
    }

    #[test]
    fn low_level_flags_and_cross_core_calls_are_deleted() {
        let source = "set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);\nwait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);\nCrossCoreSetFlag<0x2, PIPE_MTE3>(5);\nCrossCoreWaitFlag(5);\nFreeTensor(q, t);\n";
        let found = classes(source, false);
        for (class, line) in [
            (Class::DeleteSetFlag, 1),
            (Class::DeleteWaitFlag, 2),
            (Class::ChangeWaitId, 2),
            (Class::DeleteCrossCoreSet, 3),
            (Class::DeleteCrossCoreWait, 4),
            (Class::DeleteFreeTensor, 5),
        ] {
            assert!(found.contains(&(class, line)), "{class:?} at {line}: {found:?}");
        }
        // No SyncAll in the kernel: the flag-12 class does not apply.
        assert!(found.iter().all(|(class, _)| *class != Class::CrossCoreFlagOfSyncAll));
    }

    #[test]
    fn a_mix_kernel_keeps_its_sync_all() {
        let source = "aicore k(x, type: MIX_AIC_1_2) {\n    AscendC::SyncAll();\n}\n";
        let found = classes(source, true);
        assert!(found.contains(&(Class::SyncAllOnOneCore, 2)));
        assert!(found.iter().all(|(class, _)| *class != Class::SyncAllWithCubeCores));
        let vector = mutants("aicore k(x) {\n    AscendC::SyncAll();\n}\n", true);
        let one = vector.iter().find(|m| m.class == Class::SyncAllOnOneCore).unwrap();
        assert!(one.text.contains("    if GetBlockIdx() == 0 { AscendC::SyncAll(); }\n"));
        let cube = vector.iter().find(|m| m.class == Class::SyncAllWithCubeCores).unwrap();
        assert!(cube.text.contains("AscendC::SyncAll<false>();"));
    }

    #[test]
    fn a_free_read_as_final_in_the_pipe_program_is_equivalent() {
        let converted = "\
aicore k(x, type: AIV_ONLY) { // k.cpp:20
    if TILING_KEY_IS(1) { // k.cpp:22
        let a = TQue::AllocTensor(inQ); // op.h:10
        TQue::FreeTensor(inQ, a); // op.h:12
        let b = TQue::AllocTensor(outQ); // op.h:14
        for i in 0..n { // op.h:15
            let c = TQue::AllocTensor(tmpQ); // op.h:16
            TQue::FreeTensor(tmpQ, c); // op.h:17
        }
        TQue::FreeTensor(outQ, b); // op.h:18
        let d = TQue::AllocTensor(outQ); // op.h:19
        TQue::FreeTensor(outQ, d); // op.h:20
    }
}
";
        assert!(free_is_final(converted, "op.h", 12));
        // In a loop: the next iteration allocates again.
        assert!(!free_is_final(converted, "op.h", 17));
        // The queue allocates again after it.
        assert!(!free_is_final(converted, "op.h", 18));
        assert!(free_is_final(converted, "op.h", 20));
        // A line that became no statement says nothing.
        assert!(!free_is_final(converted, "op.h", 99));
    }

    #[test]
    fn a_line_no_statement_comes_from_is_in_no_kernel() {
        let converted = "aicore k(x, type: AIV_ONLY) { // k.cpp:20\n    TQue::FreeTensor(q, t); // op.h:7\n}\n";
        assert!(!in_no_statement(converted, "op.h", 7));
        assert!(in_no_statement(converted, "op.h", 9));
        // A file the program never names says nothing about its lines.
        assert!(!in_no_statement(converted, "other.h", 9));
    }

    #[test]
    fn a_free_before_a_return_is_final() {
        let program = |end_of_arm: &str| {
            format!(
                "\
aicore k(x, y, type: AIV_ONLY) {{ // k.cpp:1
    let q = TQue<VECOUT>(1, 512); // k.cpp:2
    if blocks == 1 {{ // k.cpp:3
        let t = TQue::AllocTensor(q); // k.cpp:4
        AscendC::Duplicate(t[0..64]); // k.cpp:5
        TQue::EnQue(q, t); // k.cpp:6
        let r = TQue::DeQue(q); // k.cpp:7
        AscendC::DataCopyPad(y[_.._], r[0..64]); // k.cpp:8
        TQue::FreeTensor(q, r); // k.cpp:9
        {end_of_arm}
    }}
    let u = TQue::AllocTensor(q); // k.cpp:12
    TQue::FreeTensor(q, u); // k.cpp:13
}}
"
            )
        };
        // The arm returns: the `AllocTensor` after the `if` never follows the free.
        assert!(free_is_final(&program("return; // k.cpp:10"), "k.cpp", 9));
        // Without the `return`, it does, and waits for the slot forever.
        assert!(!free_is_final(&program(""), "k.cpp", 9));
    }

    #[test]
    fn a_kernel_header_over_several_lines_holds_its_block() {
        let converted = "\
aicore k(
    x,
    type: AIV_ONLY,
) { // k.cpp:20
    let q = TQue<VECIN>(1, 512); // op.h:5
    let t = TQue::AllocTensor(q); // op.h:6
    TQue::FreeTensor(q, t); // op.h:7
}
";
        assert!(free_is_final(converted, "op.h", 7));
    }

    #[test]
    fn a_pair_is_judged_on_its_source_pipe_before_and_everything_after() {
        let program = |header: &str, before: &str, event: &str| {
            format!(
                "\
aicore k(x, y, {header}) {{ // k.cpp:1
    let b = TBuf<VECCALC>(1 KiB); // k.cpp:2
    let t = TBuf::Get(b); // k.cpp:3
    let c = TBuf<VECCALC>(1 KiB); // k.cpp:4
    let u = TBuf::Get(c); // k.cpp:5
    {before} // k.cpp:6
    AscendC::SetFlag<{event}>(0); // k.cpp:7
    AscendC::WaitFlag<{event}>(0); // k.cpp:8
    AscendC::DataCopy(y[0..64], t[0..64]); // k.cpp:9
}}
"
            )
        };
        let scalar_write = "AscendC::SetValue(t[0..4]);";
        let vector_write = "AscendC::Abs(t[0..64], t[0..64]);";
        // The scalar unit writes `t`, MTE3 reads it: the automatic sync orders them.
        assert!(pair_orders_nothing(
            &program("type: AIV_ONLY", scalar_write, "S_MTE3"),
            "k.cpp",
            7
        ));
        // Not sure to run on a vector core, or no automatic sync.
        assert!(!pair_orders_nothing(
            &program("type: MIX_AIC_1_2", scalar_write, "S_MTE3"),
            "k.cpp",
            7
        ));
        let no_auto_sync = program("type: AIV_ONLY, auto_sync: false", scalar_write, "S_MTE3");
        assert!(!pair_orders_nothing(&no_auto_sync, "k.cpp", 7));
        // The vector unit writes `t`: the pair is what orders the copy out after it.
        assert!(!pair_orders_nothing(
            &program("type: AIV_ONLY", vector_write, "V_MTE3"),
            "k.cpp",
            7
        ));
        // The copy in writes `u`, another buffer than the copy out reads.
        let copy_in = "AscendC::DataCopy(u[0..64], x[0..64]);";
        assert!(pair_orders_nothing(
            &program("type: AIV_ONLY", copy_in, "MTE2_MTE3"),
            "k.cpp",
            7
        ));
        // Only the source pipe's work before the set is ordered by the pair.
        assert!(pair_orders_nothing(
            &program("type: AIV_ONLY", vector_write, "MTE2_MTE3"),
            "k.cpp",
            7
        ));
        // A line that became no `SetFlag`.
        assert!(!pair_orders_nothing(
            &program("type: AIV_ONLY", scalar_write, "S_MTE3"),
            "k.cpp",
            9
        ));
    }

    #[test]
    fn a_pair_waited_on_the_scalar_pipe_holds_back_every_pipe() {
        let program = |after_wait: &str| {
            format!(
                "\
aicore k(x, y, type: AIV_ONLY) {{ // k.cpp:1
    let b = TBuf<VECCALC>(1 KiB); // k.cpp:2
    let t = TBuf::Get(b); // k.cpp:3
    AscendC::DataCopy(t[0..64], x[0..64]); // k.cpp:4
    AscendC::SetFlag<MTE2_S>(0); // k.cpp:5
    AscendC::WaitFlag<MTE2_S>(0); // k.cpp:6
    {after_wait} // k.cpp:7
}}
"
            )
        };
        // Only the scalar unit reads what MTE2 wrote: the automatic sync orders them.
        assert!(pair_orders_nothing(&program("AscendC::GetValue(t[0..4]);"), "k.cpp", 5));
        // The vector unit reads it too: the wait on the scalar pipe is what orders them.
        assert!(!pair_orders_nothing(
            &program("AscendC::Abs(t[0..64], t[0..64]);"),
            "k.cpp",
            5
        ));
    }

    /// A kernel copying `x` in (MTE2) to a slot of a `VECIN` queue, then `{between}`,
    /// and the vector unit reading the slot: the pair at k.cpp:6 orders them.
    fn copy_in_then(depth: u32, ahead: &str, between: &str) -> String {
        format!(
            "\
aicore k(x, y, type: AIV_ONLY) {{ // k.cpp:1
    let q = TQue<VECIN>({depth}, 1 KiB); // k.cpp:2
    {ahead} // k.cpp:3
    let t = TQue::AllocTensor(q); // k.cpp:4
    AscendC::DataCopy(t[0..64], x[0..64]); // k.cpp:5
    AscendC::SetFlag<MTE2_V>(0); // k.cpp:6
    AscendC::WaitFlag<MTE2_V>(0); // k.cpp:7
    {between} // k.cpp:8
    AscendC::Abs(t[0..64], t[0..64]); // k.cpp:9
}}
"
        )
    }

    #[test]
    fn a_pair_whose_order_a_queue_also_gives_is_equivalent() {
        let through_queue = "TQue::EnQue(q, t);\n    let u = TQue::DeQue(q);";
        // `EnQue` after the copy in, `DeQue` before the vector unit reads: the queue
        // orders them as the pair does.
        assert!(pair_orders_nothing(&copy_in_then(1, "", through_queue), "k.cpp", 6));
        // An entry put in before the copy: the `DeQue` takes that one, which orders
        // nothing after the copy.
        let ahead = "let s = TQue::AllocTensor(q);\n    TQue::EnQue(q, s);";
        assert!(!pair_orders_nothing(&copy_in_then(2, ahead, through_queue), "k.cpp", 6));
        // An `EnQue` that no `DeQue` takes before the read.
        assert!(!pair_orders_nothing(
            &copy_in_then(1, "", "TQue::EnQue(q, t);"),
            "k.cpp",
            6
        ));
    }

    #[test]
    fn a_barrier_whose_order_flags_or_sync_all_also_give_is_equivalent() {
        let flags_after = copy_in_then(
            1,
            "",
            "AscendC::PipeBarrier<PIPE_ALL>(); // op.h:1\n    AscendC::SetFlag<MTE2_V>(1);\n    AscendC::WaitFlag<MTE2_V>(1);",
        );
        // Without the barrier, the flag pair at k.cpp:6 still orders the copy and `Abs`.
        assert!(barrier_orders_nothing(&flags_after, "op.h", 1));
        // Without the barrier and the pair, the pair with id 1 after them still does.
        let converted = flags_after.replace("SetFlag<MTE2_V>(0)", "SetFlag<MTE2_MTE3>(0)");
        let converted = converted.replace("WaitFlag<MTE2_V>(0)", "WaitFlag<MTE2_MTE3>(0)");
        assert!(pair_orders_nothing(&converted, "k.cpp", 6));
        // A wait of another id than the set after the copy: nothing but the barrier.
        let other_id = converted.replace("WaitFlag<MTE2_V>(1)", "WaitFlag<MTE2_V>(2)");
        assert!(!barrier_orders_nothing(&other_id, "op.h", 1));
        // `SyncAll` waits for every pipe of the core, as the barrier does.
        let sync_all = other_id.replace("WaitFlag<MTE2_V>(2);", "WaitFlag<MTE2_V>(2);\n    AscendC::SyncAll();");
        assert!(barrier_orders_nothing(&sync_all, "op.h", 1));
    }

    #[test]
    fn a_pair_that_orders_through_another_pipe_is_needed() {
        // The vector unit writes `t`, a pair orders MTE2 after it, and the pair at k.cpp:7
        // orders MTE3 (which reads `t`) after MTE2: deleting it leaves V and MTE3
        // unordered, though its own source pipe touches nothing of `t`.
        let converted = "\
aicore k(x, y, type: AIV_ONLY) { // k.cpp:1
    let t = TBuf::Get(b); // k.cpp:2
    AscendC::Abs(t[0..64], t[0..64]); // k.cpp:3
    AscendC::SetFlag<V_MTE2>(0); // k.cpp:4
    AscendC::WaitFlag<V_MTE2>(0); // k.cpp:5
    AscendC::DataCopy(u[0..64], x[0..64]); // k.cpp:6
    AscendC::SetFlag<MTE2_MTE3>(0); // k.cpp:7
    AscendC::WaitFlag<MTE2_MTE3>(0); // k.cpp:8
    AscendC::DataCopy(y[0..64], t[0..64]); // k.cpp:9
}
";
        assert!(!pair_orders_nothing(converted, "k.cpp", 7));
    }

    #[test]
    fn the_next_tile_of_a_double_buffered_queue_is_in_the_other_buffer() {
        let program = |read: &str, event: &str| {
            format!(
                "\
aicore k(x, y, type: AIV_ONLY) {{ // k.cpp:1
    let q = TQue<VECIN>(2, 256); // k.cpp:2
    let b = TBuf<VECCALC>(256); // k.cpp:3
    let w = TBuf::Get(b); // k.cpp:4
    for i in 0..4 {{ // k.cpp:5
        let t = TQue::AllocTensor(q); // k.cpp:6
        AscendC::DataCopy(t[0..256], x[i * 256..i * 256 + 256]); // k.cpp:7
        TQue::EnQue(q, t); // k.cpp:8
        let u = TQue::DeQue(q); // k.cpp:9
        {read} // k.cpp:10
        AscendC::SetFlag<{event}>(0); // k.cpp:11
        AscendC::WaitFlag<{event}>(0); // k.cpp:12
        TQue::FreeTensor(q, u); // k.cpp:13
    }}
}}
"
            )
        };
        // The vector read of `u` and the next tile's copy into the queue: in the other
        // buffer of the two; the copy two tiles on waits for `u`'s free, after the read.
        let vector_read = program("AscendC::Abs(w[0..256], u[0..256]);", "V_S");
        assert!(pair_orders_nothing(&vector_read, "k.cpp", 11));
        // A one-buffer queue: the next copy is into the same buffer, after its free.
        let one_buffer = vector_read.replace("TQue<VECIN>(2, 256)", "TQue<VECIN>(1, 256)");
        assert!(pair_orders_nothing(&one_buffer, "k.cpp", 11));
        // An MTE3 read of `u`: the free, on the vector pipe, does not wait for it, so the
        // copy two tiles on, into `u`'s buffer, may overwrite what it reads.
        let copy_out = program("AscendC::DataCopy(y[0..256], u[0..256]);", "MTE3_S");
        assert!(!pair_orders_nothing(&copy_out, "k.cpp", 11));
    }

    #[test]
    fn a_scalar_read_the_automatic_sync_orders_orders_what_follows() {
        let program = |read: &str| {
            format!(
                "\
aicore k(x, y, type: AIV_ONLY) {{ // k.cpp:1
    let b = TBuf<VECCALC>(1 KiB); // k.cpp:2
    let c = TBuf<VECCALC>(1 KiB); // k.cpp:3
    let r = TBuf::Get(b); // k.cpp:4
    let s = TBuf::Get(b); // k.cpp:5
    let u = TBuf::Get(c); // k.cpp:6
    AscendC::ReduceSum(r[0.._], u[0.._]); // k.cpp:7
    AscendC::SetFlag<V_S>(0); // k.cpp:8
    AscendC::WaitFlag<V_S>(0); // k.cpp:9
    AscendC::GetValue({read}); // k.cpp:10
    AscendC::DataCopy(y[0..64], s[0..64]); // k.cpp:11
}}
"
            )
        };
        // The scalar read of the sum's first bytes waits for `ReduceSum` (V) without the
        // pair; the copy out (MTE3) of the same buffer is issued after it.
        assert!(pair_orders_nothing(&program("r[0..4]"), "k.cpp", 8));
        // `s` starts where `r` does: the same bytes.
        assert!(pair_orders_nothing(&program("s[0..4]"), "k.cpp", 8));
        // Bytes further on: not sure to be the sum's, so not sure to wait for it.
        assert!(!pair_orders_nothing(&program("r[32..36]"), "k.cpp", 8));
        // Another buffer: the scalar read waits for nothing.
        assert!(!pair_orders_nothing(&program("u[0..4]"), "k.cpp", 8));
    }

    #[test]
    fn arms_of_other_parameter_values_are_no_path() {
        let converted = "\
param type_DTYPE in 0..=2; // k.cpp:1
param mode in 0..; // k.cpp:2
aicore k(x, y, type: AIV_ONLY) { // k.cpp:3
    let q = TQue<VECOUT>(1, 1 KiB); // k.cpp:4
    let b = TBuf<VECCALC>(1 KiB); // k.cpp:5
    let t = TBuf::Get(b); // k.cpp:6
    if type_DTYPE == 0 { // k.cpp:7
        let o = TQue::AllocTensor(q); // k.cpp:8
        TQue::FreeTensor(q, o); // k.cpp:9
    } else {}
    if type_DTYPE == 1 { // k.cpp:11
        let u = TQue::AllocTensor(q); // k.cpp:12
        TQue::FreeTensor(q, u); // k.cpp:13
    } else {}
    if mode == 0 { // k.cpp:15
        AscendC::DataCopy(t[0..64], x[0..64]); // k.cpp:16
        AscendC::PipeBarrier<PIPE_ALL>(); // k.cpp:17
    } else {}
    if mode != 0 { // k.cpp:19
        AscendC::Abs(t[0..64], t[0..64]); // k.cpp:20
    } else {}
    if !mode { // k.cpp:22
        AscendC::PipeBarrier<PIPE_ALL>(); // k.cpp:23
        AscendC::Abs(t[0..64], t[0..64]); // k.cpp:24
    } else {}
}
";
        // The allocation after the free is in another build type's arm.
        assert!(free_is_final(converted, "k.cpp", 9));
        // The copy in (MTE2) of mode 0 and `Abs` (V) of the other modes never run in one
        // launch; mode 0's own `Abs` has a barrier of its own before it.
        assert!(barrier_orders_nothing(converted, "k.cpp", 17));
        // Without that second barrier, the barrier at k.cpp:17 is what orders them.
        let without = converted.replace("        AscendC::PipeBarrier<PIPE_ALL>(); // k.cpp:23\n", "");
        assert!(!barrier_orders_nothing(&without, "k.cpp", 17));
    }

    #[test]
    fn a_pair_at_the_kernels_end_orders_nothing_whatever_one_pipes_barriers_do() {
        let converted = "\
aicore k(x, y, type: AIV_ONLY) { // k.cpp:1
    let b = TBuf<VECCALC>(1 KiB); // k.cpp:2
    let t = TBuf::Get(b); // k.cpp:3
    AscendC::DataCopy(t[0..64], x[0..64]); // k.cpp:4
    AscendC::Abs(t[0..64], t[0..64]); // k.cpp:5
    AscendC::PipeBarrier<PIPE_V>(); // k.cpp:6
    AscendC::DataCopy(y[0..64], t[0..64]); // k.cpp:7
    AscendC::SetFlag<MTE3_MTE2>(0); // k.cpp:8
    AscendC::WaitFlag<MTE3_MTE2>(0); // k.cpp:9
}
";
        // Nothing runs after the wait. The `PIPE_V` barrier orders the vector unit with
        // itself only: it neither orders nor hides anything here.
        assert!(pair_orders_nothing(converted, "k.cpp", 8));
    }

    #[test]
    fn a_barrier_read_as_the_kernels_last_statement_is_equivalent() {
        let converted = "\
aicore k(x, type: AIV_ONLY) { // k.cpp:20
    if TILING_KEY_IS(1) { // k.cpp:22
        AscendC::PipeBarrier<PIPE_ALL>(); // op.h:10
        AscendC::DataCopy(y[0..32], t[0..32]); // op.h:11
        AscendC::PipeBarrier<PIPE_ALL>(); // op.h:12
    }
}
";
        assert!(!barrier_is_last(converted, "op.h", 10));
        assert!(barrier_is_last(converted, "op.h", 12));
    }

    #[test]
    fn a_barrier_between_instructions_of_one_pipe_is_equivalent() {
        let converted = "\
aicore k(x, y, type: AIV_ONLY) { // k.cpp:20
    let t = TBuf::Get(b); // k.cpp:21
    AscendC::DataCopy(t[0..64], x[0..64]); // op.h:9
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:10
    AscendC::Duplicate(u[0..64]); // op.h:11
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:12
    AscendC::Abs(
        u[0..64],
        u[0..64],
    ); // op.h:13
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:14
    AscendC::DataCopy(y[0..64], u[0..64]); // op.h:15
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:16
}
";
        // The copy in (MTE2) before it, the vector unit after it: it orders two pipes.
        assert!(!barrier_orders_nothing(converted, "op.h", 10));
        // Only `Duplicate` and `Abs` (PIPE_V) between the barriers at 10 and 14.
        assert!(barrier_orders_nothing(converted, "op.h", 12));
        // `Abs` (V) before, the copy out (MTE3) after.
        assert!(!barrier_orders_nothing(converted, "op.h", 14));
        // The kernel's end after it, which waits for every pipe.
        assert!(barrier_orders_nothing(converted, "op.h", 16));
    }

    #[test]
    fn a_barrier_is_judged_along_every_arm_and_iteration() {
        let converted = "\
aicore k(
    x,
    y,
    type: AIV_ONLY,
) { // k.cpp:20
    let t = TBuf::Get(b); // k.cpp:21
    AscendC::DataCopy(t[0..64], x[0..64]); // op.h:9
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:10
    if mode == 0 { // op.h:11
        AscendC::PipeBarrier<PIPE_ALL>(); // op.h:12
        AscendC::Abs(u[0..64], t[0..64]); // op.h:13
    } else {
        AscendC::PipeBarrier<PIPE_ALL>(); // op.h:15
    }
    for i in 0..n { // op.h:17
        AscendC::PipeBarrier<PIPE_ALL>(); // op.h:18
        if mode == 1 { // op.h:19
            AscendC::DataCopyPad(t[0..32], x[_.._]); // op.h:20
            AscendC::PipeBarrier<PIPE_ALL>(); // op.h:21
            AscendC::DataCopyPad(t[32..64], x[_.._]); // op.h:22
        } else {
            AscendC::PipeBarrier<PIPE_ALL>(); // op.h:24
            AscendC::DataCopy(t[0..64], x[_.._]); // op.h:25
        }
        AscendC::PipeBarrier<PIPE_ALL>(); // op.h:27
        AscendC::Broadcast(w[_.._], t[0..64]); // op.h:28
    }
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:30
    AscendC::DataCopy(y[0..64], w[0..64]); // op.h:31
}
";
        // Both arms start with a barrier: nothing runs between it and the next one.
        assert!(barrier_orders_nothing(converted, "op.h", 10));
        // `Abs` (V) after it, and only barriers before it.
        assert!(barrier_orders_nothing(converted, "op.h", 12));
        // A copy in (MTE2) on each side, within one arm.
        assert!(barrier_orders_nothing(converted, "op.h", 21));
        // The last iteration's `Broadcast` (V) reads `t` before it, the first arm's copy
        // in (MTE2) writes `t` after it: it orders two pipes across the loop's back edge.
        assert!(!barrier_orders_nothing(converted, "op.h", 18));
        // The copies in (MTE2) of either arm before it, `Broadcast` (V) after it.
        assert!(!barrier_orders_nothing(converted, "op.h", 27));
        // After the loop: `Abs` (V) or `Broadcast` (V) before it (the loop may run no
        // iteration), the copy out (MTE3) after it.
        assert!(!barrier_orders_nothing(converted, "op.h", 30));
    }

    #[test]
    fn a_barrier_between_pipes_on_different_buffers_is_equivalent() {
        let program = |kind: &str| {
            format!(
                "\
aicore k(x, y, type: {kind}) {{ // k.cpp:20
    let inBuf = TBuf<VECCALC>(1 KiB); // k.cpp:21
    let outQ = TQue<VECOUT>(1, 1 KiB); // k.cpp:22
    let a = TBuf::Get(inBuf); // k.cpp:23
    let b = a[0..64]; // k.cpp:24
    AscendC::DataCopyPad(a[0..64], x[_.._]); // op.h:9
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:10
    let o = TQue::AllocTensor(outQ); // op.h:11
    AscendC::GetValue(b[0..4]); // op.h:12
    AscendC::SetValue(o[0..4]); // op.h:13
    TQue::EnQue(outQ, o); // op.h:14
    let r = TQue::DeQue(outQ); // op.h:15
    AscendC::DataCopyPad(y[_.._], r[0..4]); // op.h:16
    AscendC::PipeBarrier<PIPE_ALL>(); // op.h:17
    AscendC::Abs(o[0..64], b[0..64]); // op.h:18
}}
"
            )
        };
        // The copy in (MTE2) writes `inBuf`; after it the scalar unit reads `inBuf`
        // through the alias `b` (the compiler syncs S with MTE2 in a vector kernel) and
        // MTE3 reads `outQ`, another buffer.
        assert!(barrier_orders_nothing(&program("AIV_ONLY"), "op.h", 10));
        // Without the automatic sync, the scalar read of `inBuf` needs it.
        assert!(!barrier_orders_nothing(
            &program("AIV_ONLY, auto_sync: false"),
            "op.h",
            10
        ));
        // MTE3 reads `outQ` before it, `Abs` (V) writes `outQ` after it.
        assert!(!barrier_orders_nothing(&program("AIV_ONLY"), "op.h", 17));
    }

    #[test]
    fn a_queue_never_allocated_past_its_depth_needs_no_free() {
        let converted = "\
aicore k(x, type: AIC_ONLY) { // k.cpp:20
    let b2 = TQue<B2>(2, 512); // op.h:5
    let co1 = TQue<CO1>(
        2,
        n * 4,
    ); // op.h:6
    for i in 0..2 { // op.h:15
        let b = TQue::AllocTensor(b2); // op.h:16
        TQue::FreeTensor(b2, b); // op.h:17
        for j in 0..2 { // op.h:18
            let c = TQue::AllocTensor(co1); // op.h:19
            TQue::FreeTensor(co1, c); // op.h:20
        }
    }
}
";
        // Two allocations of a two-slot queue: each slot once.
        assert!(free_is_final(converted, "op.h", 17));
        // Four allocations of a two-slot queue: the third waits for the first free.
        assert!(!free_is_final(converted, "op.h", 20));
        let with_buffer = converted
            .replace("TQue<B2>(2, 512)", "TBuf<VECCALC>(512)")
            .replace("0..2 {", "0..8 {");
        // A buffer's FreeTensor gives nothing back, however often it is taken.
        assert!(free_is_final(&with_buffer, "op.h", 17));
    }

    #[test]
    fn sync_kernels_show_equivalents_at_their_end() {
        let source = "aicore k(x, blocks: 1, type: MIX_AIC_1_1) {\n    let q = TQue<VECIN>(1, 1 KiB);\n    for i in 0..2 {\n        let t = TQue::AllocTensor(q);\n        TQue::FreeTensor(q, t);\n    }\n    let u = TQue::AllocTensor(q);\n    TQue::FreeTensor(q, u);\n    AscendC::SyncAll();\n    AscendC::PipeBarrier<PIPE_ALL>();\n}\n";
        let found = mutants(source, true);
        let at = |class, line| found.iter().find(|m| m.class == class && m.line == line).unwrap();
        // In the loop, the next iteration allocates again: not equivalent.
        assert!(at(Class::DeleteFreeTensor, 5).equivalent.is_none());
        assert!(at(Class::DeleteFreeTensor, 8).equivalent.is_some());
        assert!(at(Class::DeleteBarrierAll, 10).equivalent.is_some());
        assert!(at(Class::SyncAllOnOneCore, 9).equivalent.is_some());
        let eight = mutants(&source.replace("blocks: 1,", "blocks: 8,"), true);
        let one_core = eight.iter().find(|m| m.class == Class::SyncAllOnOneCore).unwrap();
        assert!(one_core.equivalent.is_none());
        // C/C++: the rest of the kernel is not seen, nothing is equivalent there.
        let cpp = "    q.FreeTensor(t);\n    AscendC::PipeBarrier<PIPE_ALL>();\n}\n";
        assert!(mutants(cpp, false).iter().all(|m| m.equivalent.is_none()));
    }
}
