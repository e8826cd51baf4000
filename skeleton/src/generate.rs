//! Generated captured runs, for the tests and the benchmark (`benches/scale.rs`): the
//! rank files `syncguard trace` writes for an SPMD job, one per rank.
//!
//! Every rank runs the step of the trace bench's generator
//! (`analyzer/benches/trace_gen`): a matmul on stream 1 hands its output to a pack
//! kernel on stream 2 (a sync-kind event, reset by the waiting stream), which hands the
//! packed slice to a checksum kernel on stream 3; the host synchronizes the device, then
//! the rank's HCCL thread sends the packed slice to the next rank of a ring with the
//! three-phase protocol while receiving the previous rank's, and the host synchronizes
//! the thread. Before the matmul, the step launches `launches` kernels on stream 1 with
//! `aclrtLaunchKernel`, as a capture records them: without `reads` / `writes` (the
//! layers of a model between two collectives). `race_every`: every that many steps,
//! rank 0 leaves out the device synchronization, so the pack kernel races the next
//! step's HCCL copy (findings to compare).

use std::io::{self, Write};
use std::path::Path;

const SLOTS: u64 = 16;
const SLICE: u64 = 4096;
const HCCL_SIZE: u64 = 200 << 20;
const SEND_AT: u64 = 1 << 20;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    pub ranks: usize,
    pub steps: usize,
    /// Kernel launches without memory per step, before the matmul.
    pub launches: usize,
    /// Every this many steps rank 0 skips a device synchronization (0: never).
    pub race_every: usize,
}

/// Write one rank file per rank into `dir` (`node<N>-<pid>.jsonl`, eight ranks a node),
/// as `syncguard trace` would; returns the number of call lines written.
pub fn write_run(dir: &Path, job: Job) -> io::Result<usize> {
    assert!(job.ranks >= 2, "a ring needs at least 2 ranks");
    let mut written = 0;
    for rank in 0..job.ranks {
        let path = dir.join(format!("node{}-{}.jsonl", rank / 8, 10_000 + rank));
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        written += write_rank(&mut out, rank as u64, job)?;
        out.flush()?;
    }
    Ok(written)
}

fn write_rank(out: &mut impl Write, rank: u64, job: Job) -> io::Result<usize> {
    let ranks = job.ranks as u64;
    let pid = 10_000 + rank;
    writeln!(
        out,
        r#"{{"syncguard_trace": 1, "capture": "syncguard trace", "run": "gen", "host": "node{}", "pid": {pid}, "rank": {rank}, "world_size": {ranks}}}"#,
        rank / 8
    )?;
    let handle = |k: u64| format!("{:#x}", 0x5600_0000_0000 + (rank << 32) + k * 0x200);
    let memory = |base: u64| base + (rank << 32);
    let (next, prev) = ((rank + 1) % ranks, (rank + ranks - 1) % ranks);
    let comm = handle(1);
    let [s1, s2, s3] = [handle(2), handle(3), handle(4)];
    let [e1, e2] = [handle(5), handle(6)];
    let thread = handle(7);
    let (to_next, to_prev) = (handle(8), handle(9));
    let (work, recv, hccl, peer) = (
        memory(0x13_4000_0000),
        memory(0x13_4001_0000),
        memory(0x12_c000_0000),
        memory(0x1a_d000_0000),
    );
    let mut calls: Vec<(&str, String)> = Vec::new();
    for stream in [&s1, &s2, &s3] {
        calls.push(("aclrtCreateStream", format!(r#""stream": "{stream}""#)));
    }
    for event in [&e1, &e2] {
        calls.push((
            "aclrtCreateEventWithFlag",
            format!(r#""event": "{event}", "flag": "ACL_EVENT_SYNC""#),
        ));
    }
    for buffer in [work, recv] {
        calls.push((
            "aclrtMalloc",
            format!(
                r#""devPtr": "{buffer:#x}", "size": {}, "policy": "ACL_MEM_MALLOC_HUGE_FIRST""#,
                SLOTS * SLICE
            ),
        ));
    }
    let desc =
        |remote: u64| format!(r#"{{"remoteRank": {remote}, "channelProtocol": "COMM_PROTOCOL_HCCS", "notifyNum": 3}}"#);
    calls.extend([
        (
            "HcclCommInitRootInfo",
            format!(r#""nRanks": {ranks}, "rootInfo": "0x7ffd3c10", "rank": {rank}, "comm": "{comm}""#),
        ),
        (
            "HcclThreadAcquire",
            format!(
                r#""comm": "{comm}", "engine": "COMM_ENGINE_AICPU_TS", "threadNum": 1, "notifyNumPerThread": 2, "threads": ["{thread}"]"#
            ),
        ),
        (
            "HcclChannelAcquire",
            format!(
                r#""comm": "{comm}", "engine": "COMM_ENGINE_AICPU_TS", "channelDescs": [{}, {}], "channelNum": 2, "channels": ["{to_next}", "{to_prev}"]"#,
                desc(next),
                desc(prev)
            ),
        ),
        (
            "HcclGetHcclBuffer",
            format!(r#""comm": "{comm}", "buffer": "{hccl:#x}", "size": {HCCL_SIZE}"#),
        ),
        (
            "HcclChannelGetHcclBuffer",
            format!(r#""comm": "{comm}", "channel": "{to_next}", "buffer": "{peer:#x}", "size": {HCCL_SIZE}"#),
        ),
    ]);
    let range = |buf: u64, off: u64| format!(r#"{{"buf": "{buf:#x}", "off": {off}, "len": {SLICE}}}"#);
    let kernel = |stream: &str, name: &str, reads: String, writes: String| {
        format!(r#""stream": "{stream}", "name": "{name}", "reads": [{reads}], "writes": [{writes}]"#)
    };
    let notify =
        |channel: &str, idx: u8| format!(r#""thread": "{thread}", "channel": "{channel}", "remoteNotifyIdx": {idx}"#);
    let notify_wait = |channel: &str, idx: u8| {
        format!(r#""thread": "{thread}", "channel": "{channel}", "localNotifyIdx": {idx}, "timeOut": 1800"#)
    };
    let mut lines = calls;
    for step in 0..job.steps {
        let off = (step as u64 % SLOTS) * SLICE;
        for layer in 0..job.launches {
            lines.push((
                "aclrtLaunchKernel",
                format!(
                    r#""funcHandle": "{:#x}", "numBlocks": 24, "argsData": "{:#x}", "argsSize": 128, "stream": "{s1}""#,
                    0x7f00_0000 + layer as u64 * 0x40,
                    0x7e00_0000 + (step * job.launches + layer) as u64 * 0x80
                ),
            ));
        }
        let packed = range(hccl, SEND_AT + off);
        lines.extend([
            ("kernel", kernel(&s1, "matmul", range(recv, off), range(work, off))),
            ("aclrtRecordEvent", format!(r#""event": "{e1}", "stream": "{s1}""#)),
            ("aclrtStreamWaitEvent", format!(r#""stream": "{s2}", "event": "{e1}""#)),
            ("aclrtResetEvent", format!(r#""event": "{e1}", "stream": "{s2}""#)),
            ("kernel", kernel(&s2, "pack", range(work, off), packed.clone())),
            ("aclrtRecordEvent", format!(r#""event": "{e2}", "stream": "{s2}""#)),
            ("aclrtStreamWaitEvent", format!(r#""stream": "{s3}", "event": "{e2}""#)),
            ("aclrtResetEvent", format!(r#""event": "{e2}", "stream": "{s3}""#)),
            ("kernel", kernel(&s3, "checksum", packed, String::new())),
        ]);
        let skip_sync = rank == 0 && job.race_every > 0 && step % job.race_every == job.race_every - 1;
        if !skip_sync {
            lines.push(("aclrtSynchronizeDevice", String::new()));
        }
        lines.extend([
            ("HcommChannelNotifyRecordOnThread", notify(&to_prev, 0)),
            ("HcommChannelNotifyWaitOnThread", notify_wait(&to_next, 0)),
            (
                "HcommWriteOnThread",
                format!(
                    r#""thread": "{thread}", "channel": "{to_next}", "dst": "{:#x}", "src": "{:#x}", "len": {SLICE}"#,
                    peer + off,
                    hccl + SEND_AT + off
                ),
            ),
            ("HcommChannelNotifyRecordOnThread", notify(&to_next, 1)),
            ("HcommChannelNotifyWaitOnThread", notify_wait(&to_prev, 1)),
            (
                "HcommLocalCopyOnThread",
                format!(
                    r#""thread": "{thread}", "dst": {}, "src": {}, "len": {SLICE}"#,
                    range(recv, off),
                    range(hccl, off)
                ),
            ),
            ("HcommChannelNotifyRecordOnThread", notify(&to_prev, 2)),
            ("HcommChannelNotifyWaitOnThread", notify_wait(&to_next, 2)),
            ("HcommThreadSynchronize", format!(r#""thread": "{thread}""#)),
        ]);
    }
    lines.push(("aclrtSynchronizeDevice", String::new()));
    for event in [&e1, &e2] {
        lines.push(("aclrtDestroyEvent", format!(r#""event": "{event}""#)));
    }
    for stream in [&s1, &s2, &s3] {
        lines.push(("aclrtDestroyStream", format!(r#""stream": "{stream}""#)));
    }
    for buffer in [work, recv] {
        lines.push(("aclrtFree", format!(r#""devPtr": "{buffer:#x}""#)));
    }
    lines.push(("HcclCommDestroy", format!(r#""comm": "{comm}""#)));
    let tid = 20_000 + rank;
    for (index, (api, args)) in lines.iter().enumerate() {
        // Ranks interleave: line `index` of every rank, in rank order, then the next.
        let ts = 1_000_000 + (index as u64 * ranks + rank) * 250;
        writeln!(
            out,
            r#"{{"thread": {tid}, "api": "{api}", "args": {{{args}}}, "ret": 0, "ts": {ts}}}"#
        )?;
    }
    writeln!(
        out,
        r#"{{"syncguard_capture_end": 1, "rank": {rank}, "world_size": {ranks}, "calls": {}, "dropped": 0}}"#,
        lines.len()
    )?;
    Ok(lines.len())
}
