//! A correct multi-rank call trace (docs/TRACE.md), shared by the
//! `gen_trace` example and the `trace` bench.
//!
//! Every rank runs the same step: a matmul on stream 1 hands its output to a pack
//! kernel on stream 2 (sync-kind event, reset by the waiting stream), which hands the
//! packed slice to a checksum kernel on stream 3 (a second event); the host synchronizes
//! the device, then the rank's HCCL thread sends the packed slice to the next rank of a
//! ring with the three-phase protocol (ACK idx 0, write, DATA_SIGNAL idx 1, copy out,
//! FIN_ACK idx 2) while receiving the previous rank's slice, and the host synchronizes
//! the thread. Slices rotate over 16 slots of 4 KiB. Ranks are interleaved line by line.

use std::io::{self, Write};

/// Slices per buffer, each `SLICE` bytes.
const SLOTS: u64 = 16;
const SLICE: u64 = 4096;
/// Size of each `aclrtMalloc` buffer.
const MALLOC_SIZE: u64 = SLOTS * SLICE;
/// Size of the HCCL buffer (the usual 200 MiB `HCCL_BUFFSIZE`): slices arrive at its
/// start and are packed for sending from `SEND_AT` on.
const HCCL_SIZE: u64 = 200 << 20;
const SEND_AT: u64 = 1 << 20;
/// Lines per rank outside the rounds: setup and teardown.
const FIXED_CALLS: usize = 12 + 9;
/// Lines per rank in one round.
const ROUND_CALLS: usize = 19;

/// One rank's handles: opaque pointer-like strings, distinct per rank.
struct Rank {
    rank: u64,
    /// The ranks next and previous on the ring.
    next: u64,
    prev: u64,
    comm: String,
    streams: [String; 3],
    events: [String; 2],
    thread: String,
    /// The channels to the next and to the previous rank.
    to_next: String,
    to_prev: String,
    /// Addresses: two device buffers, the local HCCL buffer and the next rank's HCCL
    /// buffer as this rank sees it through `to_next`.
    work: u64,
    recv: u64,
    hccl: u64,
    peer: u64,
}

impl Rank {
    fn new(rank: u64, ranks: u64) -> Self {
        let handle = |k: u64| format!("{:#x}", 0x5600_0000_0000 + (rank << 32) + k * 0x200);
        let memory = |base: u64| base + (rank << 32);
        Rank {
            rank,
            next: (rank + 1) % ranks,
            prev: (rank + ranks - 1) % ranks,
            comm: handle(1),
            streams: [handle(2), handle(3), handle(4)],
            events: [handle(5), handle(6)],
            thread: handle(7),
            to_next: handle(8),
            to_prev: handle(9),
            work: memory(0x13_4000_0000),
            recv: memory(0x13_4001_0000),
            hccl: memory(0x12_c000_0000),
            peer: memory(0x1a_d000_0000),
        }
    }

    fn setup(&self, ranks: u64) -> Vec<(&'static str, String)> {
        let Rank { comm, thread, .. } = self;
        let desc = |remote: u64| {
            format!(r#"{{"remoteRank": {remote}, "channelProtocol": "COMM_PROTOCOL_HCCS", "notifyNum": 3}}"#)
        };
        let mut calls: Vec<(&'static str, String)> = Vec::new();
        for stream in &self.streams {
            calls.push(("aclrtCreateStream", format!(r#""stream": "{stream}""#)));
        }
        for event in &self.events {
            let args = format!(r#""event": "{event}", "flag": "ACL_EVENT_SYNC""#);
            calls.push(("aclrtCreateEventWithFlag", args));
        }
        for buffer in [self.work, self.recv] {
            let args =
                format!(r#""devPtr": "{buffer:#x}", "size": {MALLOC_SIZE}, "policy": "ACL_MEM_MALLOC_HUGE_FIRST""#);
            calls.push(("aclrtMalloc", args));
        }
        calls.extend([
            (
                "HcclCommInitRootInfo",
                format!(r#""nRanks": {ranks}, "rootInfo": "0x7ffd3c10", "rank": {}, "comm": "{comm}""#, self.rank),
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
                    r#""comm": "{comm}", "engine": "COMM_ENGINE_AICPU_TS", "channelDescs": [{}, {}], "channelNum": 2, "channels": ["{}", "{}"]"#,
                    desc(self.next),
                    desc(self.prev),
                    self.to_next,
                    self.to_prev
                ),
            ),
            (
                "HcclGetHcclBuffer",
                format!(r#""comm": "{comm}", "buffer": "{:#x}", "size": {HCCL_SIZE}"#, self.hccl),
            ),
            (
                "HcclChannelGetHcclBuffer",
                format!(
                    r#""comm": "{comm}", "channel": "{}", "buffer": "{:#x}", "size": {HCCL_SIZE}"#,
                    self.to_next, self.peer
                ),
            ),
        ]);
        calls
    }

    /// One step. Host synchronizations keep it race-free: the device sync orders the
    /// packed slice and the event resets before the send, and the matmul before the copy
    /// into the `recv` slot it read; the thread sync ends the step as a step-synchronous
    /// training loop does.
    fn round(&self, round: usize) -> [(&'static str, String); ROUND_CALLS] {
        let off = (round as u64 % SLOTS) * SLICE;
        let [s1, s2, s3] = &self.streams;
        let [e1, e2] = &self.events;
        let Rank {
            thread,
            to_next,
            to_prev,
            ..
        } = self;
        let range = |buf: u64, off: u64| format!(r#"{{"buf": "{buf:#x}", "off": {off}, "len": {SLICE}}}"#);
        let kernel = |stream: &str, name: &str, reads: String, writes: String| {
            format!(r#""stream": "{stream}", "name": "{name}", "reads": [{reads}], "writes": [{writes}]"#)
        };
        let record = |event: &str, stream: &str| format!(r#""event": "{event}", "stream": "{stream}""#);
        let wait = |stream: &str, event: &str| format!(r#""stream": "{stream}", "event": "{event}""#);
        let notify = |channel: &str, idx: u8| {
            format!(r#""thread": "{thread}", "channel": "{channel}", "remoteNotifyIdx": {idx}"#)
        };
        let notify_wait = |channel: &str, idx: u8| {
            format!(r#""thread": "{thread}", "channel": "{channel}", "localNotifyIdx": {idx}, "timeOut": 1800"#)
        };
        let packed = range(self.hccl, SEND_AT + off);
        [
            (
                "kernel",
                kernel(s1, "matmul", range(self.recv, off), range(self.work, off)),
            ),
            ("aclrtRecordEvent", record(e1, s1)),
            ("aclrtStreamWaitEvent", wait(s2, e1)),
            ("aclrtResetEvent", record(e1, s2)),
            ("kernel", kernel(s2, "pack", range(self.work, off), packed.clone())),
            ("aclrtRecordEvent", record(e2, s2)),
            ("aclrtStreamWaitEvent", wait(s3, e2)),
            ("aclrtResetEvent", record(e2, s3)),
            ("kernel", kernel(s3, "checksum", packed, String::new())),
            ("aclrtSynchronizeDevice", String::new()),
            // ACK: the previous rank may write into our receive slot.
            ("HcommChannelNotifyRecordOnThread", notify(to_prev, 0)),
            ("HcommChannelNotifyWaitOnThread", notify_wait(to_next, 0)),
            (
                "HcommWriteOnThread",
                format!(
                    r#""thread": "{thread}", "channel": "{to_next}", "dst": "{:#x}", "src": "{:#x}", "len": {SLICE}"#,
                    self.peer + off,
                    self.hccl + SEND_AT + off
                ),
            ),
            // DATA_SIGNAL: our slice has landed in the next rank's buffer.
            ("HcommChannelNotifyRecordOnThread", notify(to_next, 1)),
            ("HcommChannelNotifyWaitOnThread", notify_wait(to_prev, 1)),
            (
                "HcommLocalCopyOnThread",
                format!(
                    r#""thread": "{thread}", "dst": {}, "src": {}, "len": {SLICE}"#,
                    range(self.recv, off),
                    range(self.hccl, off)
                ),
            ),
            // FIN_ACK: the received slice has been copied out.
            ("HcommChannelNotifyRecordOnThread", notify(to_prev, 2)),
            ("HcommChannelNotifyWaitOnThread", notify_wait(to_next, 2)),
            ("HcommThreadSynchronize", format!(r#""thread": "{thread}""#)),
        ]
    }

    fn teardown(&self) -> Vec<(&'static str, String)> {
        let mut calls = vec![("aclrtSynchronizeDevice", String::new())];
        for event in &self.events {
            calls.push(("aclrtDestroyEvent", format!(r#""event": "{event}""#)));
        }
        for stream in &self.streams {
            calls.push(("aclrtDestroyStream", format!(r#""stream": "{stream}""#)));
        }
        for buffer in [self.work, self.recv] {
            calls.push(("aclrtFree", format!(r#""devPtr": "{buffer:#x}""#)));
        }
        calls.push(("HcclCommDestroy", format!(r#""comm": "{}""#, self.comm)));
        calls
    }
}

/// Writes lines with increasing `ts`, counting them.
struct Lines<W> {
    out: W,
    written: usize,
}

impl<W: Write> Lines<W> {
    /// The same step of every rank, one line per rank in rank order.
    fn interleave<C: AsRef<[(&'static str, String)]>>(&mut self, per_rank: &[C]) -> io::Result<()> {
        let steps = per_rank.first().map_or(0, |calls| calls.as_ref().len());
        for step in 0..steps {
            for (rank, calls) in per_rank.iter().enumerate() {
                let (api, args) = &calls.as_ref()[step];
                let ts = 1_000_000 + self.written as u64 * 250;
                writeln!(
                    self.out,
                    r#"{{"rank": {rank}, "thread": 0, "api": "{api}", "args": {{{args}}}, "ret": 0, "ts": {ts}}}"#
                )?;
                self.written += 1;
            }
        }
        Ok(())
    }
}

/// Write a header and about `calls` call lines over `ranks` ranks (at least one round)
/// to `out`; returns the number of call lines.
/// Panics with fewer than 2 ranks: the ring needs a next and a previous rank.
pub fn write_trace(out: impl Write, calls: usize, ranks: usize) -> io::Result<usize> {
    assert!(ranks >= 2, "a ring needs at least 2 ranks");
    let rounds = (calls / ranks).saturating_sub(FIXED_CALLS).div_ceil(ROUND_CALLS).max(1);
    let all: Vec<Rank> = (0..ranks as u64).map(|r| Rank::new(r, ranks as u64)).collect();
    let mut lines = Lines { out, written: 0 };
    writeln!(
        lines.out,
        r#"{{"syncguard_trace": 1, "world_size": {ranks}, "target": "A3"}}"#
    )?;
    lines.interleave(&all.iter().map(|r| r.setup(ranks as u64)).collect::<Vec<_>>())?;
    for round in 0..rounds {
        lines.interleave(&all.iter().map(|r| r.round(round)).collect::<Vec<_>>())?;
    }
    lines.interleave(&all.iter().map(Rank::teardown).collect::<Vec<_>>())?;
    lines.out.flush()?;
    Ok(lines.written)
}
