//! Random one- and two-rank programs with several host threads per rank.
//!
//! Each rank has a main thread and one or two `thread` blocks spawned at random points
//! of it. Steps hand data from one host thread (or stream) to another through ACL
//! notifies, sync-kind events (with their reset) and capture-kind events, or let a host
//! thread synchronize (stream, device, event) and then touch memory (host accesses,
//! `aclrtMemcpy`); others issue kernels and `aclrtMemcpyAsync`. Two ranks also hand off
//! through channel notifies. Every step is correct as generated and then randomly
//! broken: a record, wait, reset or synchronize dropped, a synchronize on the
//! producer's stream instead of waiting for its signal (it covers only work issued
//! before it), a sync-kind event recorded again before the waiter's reset has run.
//!
//! With `private`, each host thread issues only to a stream of its own and records and
//! waits capture-kind events only on itself, on one rank, with no device synchronize:
//! programs whose threads meet only through notifies and sync-kind events.
//!
//! Workers end by recording a `done` notify that the main thread waits for before it
//! synchronizes every stream and destroys and frees everything; some step objects are
//! destroyed early, by the thread that used them last. A join may be dropped, so that a
//! destroy or free can come before another thread's use.

use std::fmt::Write as _;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

const BUFFER_SIZE: u32 = 256;
const BUFFERS: [&str; 3] = ["a", "b", "h"];

pub struct ThreadedGenerator {
    rng: StdRng,
    /// Each host thread issues only to a stream of its own (`s<thread>`) and records and
    /// waits capture-kind events only on itself; one rank, no device synchronize.
    private: bool,
    ranks: usize,
    streams: usize,
    workers: usize,
    /// Per rank, per host thread (0: main), the lines it issues.
    lines: Vec<Vec<Vec<String>>>,
    /// Objects the steps create, declared on every rank before the rank bodies.
    declarations: Vec<String>,
    /// Destroys of step objects not destroyed early.
    cleanup: Vec<String>,
    objects: usize,
    kernels: usize,
}

impl ThreadedGenerator {
    pub fn new(case: u64, private: bool) -> Self {
        // Apart from the two-rank generator's seeds, so that case numbers differ.
        let mut rng = StdRng::seed_from_u64(case ^ 0x7468_7265_6164_7321);
        let ranks = if private { 1 } else { rng.random_range(1..=2) };
        let workers = rng.random_range(1..=2);
        let streams = if private { workers + 1 } else { rng.random_range(2..=3) };
        ThreadedGenerator {
            private,
            ranks,
            streams,
            workers,
            lines: vec![vec![Vec::new(); workers + 1]; ranks],
            declarations: Vec::new(),
            cleanup: Vec::new(),
            objects: 0,
            kernels: 0,
            rng,
        }
    }

    pub fn program(mut self) -> String {
        let steps = self.rng.random_range(2..=5);
        for _ in 0..steps {
            self.step();
        }
        let mut text = self.prologue();
        text.push_str(&self.declarations.join(""));
        text.push('\n');
        text.push_str(&self.rank_bodies());
        text.push_str(&self.epilogue());
        text
    }

    fn step(&mut self) {
        let rank = self.rng.random_range(0..self.ranks);
        match self.rng.random_range(0..12) {
            0..=2 => self.notify_handoff(rank),
            3..=5 => self.event_handoff(rank),
            6 => self.rerecord(rank),
            7..=8 => self.host_sync_and_access(rank),
            9 => self.device_work(rank),
            _ if self.ranks == 2 => self.channel_handoff(),
            _ => self.device_work(rank),
        }
    }

    fn prologue(&self) -> String {
        let mut text = format!("target A3;\nranks {};\n\n", self.ranks);
        if self.ranks == 2 {
            text.push_str("let comm = HcclCommInitRootInfo(2, \"root\", rank);\n");
        }
        for s in 0..self.streams {
            let _ = writeln!(text, "let s{s} = aclrtCreateStream();");
        }
        text.push_str("let sj = aclrtCreateStream();\n");
        if self.ranks == 2 {
            text.push_str("let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_AICPU_TS, s0, 0);\n");
            text.push_str(
                "let ch = HcclChannelAcquire(comm, COMM_ENGINE_AICPU_TS, { remoteRank: 1 - rank, channelProtocol: COMM_PROTOCOL_HCCS, notifyNum: 2 }, 1);\n",
            );
        }
        let _ = writeln!(text, "let a = aclrtMalloc({BUFFER_SIZE}, ACL_MEM_MALLOC_HUGE_FIRST);");
        let _ = writeln!(text, "let b = aclrtMalloc({BUFFER_SIZE}, ACL_MEM_MALLOC_HUGE_FIRST);");
        let _ = writeln!(text, "let h = aclrtMallocHost({BUFFER_SIZE});");
        for w in 1..=self.workers {
            let _ = writeln!(text, "let done{w} = aclrtCreateNotify();");
        }
        text
    }

    fn rank_bodies(&mut self) -> String {
        let bodies: Vec<String> = (0..self.ranks).map(|rank| self.rank_body(rank)).collect();
        match bodies.as_slice() {
            [one] => one.clone(),
            [zero, one] => format!("if rank == 0 {{\n{}}} else {{\n{}}}\n", indent(zero), indent(one)),
            _ => unreachable!("one or two ranks"),
        }
    }

    /// The main thread's lines with each worker's block spawned at a random point, then
    /// the joins: the main thread waits for every worker's `done` notify.
    fn rank_body(&mut self, rank: usize) -> String {
        let main = std::mem::take(&mut self.lines[rank][0]);
        let mut spawns: Vec<(usize, usize)> = (1..=self.workers)
            .map(|w| (self.rng.random_range(0..=main.len()), w))
            .collect();
        spawns.sort();
        let mut body = String::new();
        let mut next_spawn = spawns.iter().peekable();
        for at in 0..=main.len() {
            while let Some(&(_, w)) = next_spawn.next_if(|(spawn_at, _)| *spawn_at == at) {
                body.push_str(&self.worker_block(rank, w));
            }
            if let Some(line) = main.get(at) {
                body.push_str(line);
                body.push('\n');
            }
        }
        body.push_str(&self.joins());
        body
    }

    fn worker_block(&mut self, rank: usize, worker: usize) -> String {
        let mut lines = std::mem::take(&mut self.lines[rank][worker]);
        let joined = !self.chance(4);
        if joined {
            let home = self.stream_of(worker);
            lines.push(format!("aclrtRecordNotify(done{worker}, {home});"));
        }
        let body: String = lines.iter().map(|line| format!("{line}\n")).collect();
        format!("thread w{worker} {{\n{}}}\n", indent(&body))
    }

    fn joins(&mut self) -> String {
        let mut text = String::new();
        for w in 1..=self.workers {
            // Waiting on a stream the workers also use can queue the wait before the
            // worker's record: a hang the verifier must see.
            let stream = if !self.private && self.chance(5) {
                self.stream()
            } else {
                "sj".into()
            };
            let _ = writeln!(text, "aclrtWaitAndResetNotify(done{w}, {stream}, 0);");
        }
        text.push_str("aclrtSynchronizeStream(sj);\n");
        text
    }

    fn epilogue(&self) -> String {
        let mut text = String::from("\n");
        for s in 0..self.streams {
            let _ = writeln!(text, "aclrtSynchronizeStream(s{s});");
        }
        text.push_str(&self.cleanup.join(""));
        for w in 1..=self.workers {
            let _ = writeln!(text, "aclrtDestroyNotify(done{w});");
        }
        text.push_str("aclrtFree(a);\naclrtFree(b);\naclrtFreeHost(h);\n");
        if self.ranks == 2 {
            text.push_str("HcclCommDestroy(comm);\n");
        }
        for s in 0..self.streams {
            let _ = writeln!(text, "aclrtDestroyStream(s{s});");
        }
        text.push_str("aclrtDestroyStream(sj);\n");
        text
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    fn stream(&mut self) -> String {
        format!("s{}", self.rng.random_range(0..self.streams))
    }

    /// A stream `thread` may issue to.
    fn stream_of(&mut self, thread: usize) -> String {
        if self.private {
            format!("s{thread}")
        } else {
            self.stream()
        }
    }

    fn thread(&mut self) -> usize {
        self.rng.random_range(0..=self.workers)
    }

    fn emit(&mut self, rank: usize, thread: usize, line: String) {
        self.lines[rank][thread].push(line);
    }

    /// Declares a step object on every rank; returns its name.
    fn declare(&mut self, prefix: &str, create: &str) -> String {
        self.objects += 1;
        let name = format!("{prefix}{}", self.objects);
        self.declarations.push(format!("let {name} = {create};\n"));
        name
    }

    /// The destroy of a step object: on `thread` once it has synchronized `stream`
    /// (after the step's last use of the object there), or with the final cleanup.
    fn destroy(&mut self, rank: usize, thread: usize, stream: &str, destroy: String) {
        if self.chance(25) {
            self.emit(rank, thread, format!("aclrtSynchronizeStream({stream});"));
            self.emit(rank, thread, destroy);
        } else {
            self.cleanup.push(format!("{destroy}\n"));
        }
    }

    /// A random, often overlapping, slice of a buffer.
    fn range(&mut self) -> String {
        let buffer = BUFFERS[self.rng.random_range(0..BUFFERS.len())];
        let start = self.rng.random_range(0..4) * 64;
        let end = self.rng.random_range(start / 64 + 1..=4) * 64;
        format!("{buffer}[{start}..{end}]")
    }

    fn kernel(&mut self, rank: usize, thread: usize, stream: &str) {
        let (reads, writes) = (self.range(), self.range());
        self.kernels += 1;
        let line = format!(
            "kernel({stream}, \"k{}\", reads: [{reads}], writes: [{writes}]);",
            self.kernels
        );
        self.emit(rank, thread, line);
    }

    /// A kernel or an asynchronous copy of 64 bytes.
    fn device_op(&mut self, rank: usize, thread: usize, stream: &str) {
        if self.chance(70) {
            return self.kernel(rank, thread, stream);
        }
        let (dst, src) = (self.slice64(), self.slice64());
        let line = format!(
            "aclrtMemcpyAsync({dst}, 64, {src}, 64, {}, {stream});",
            copy_kind(&dst, &src)
        );
        self.emit(rank, thread, line);
    }

    fn device_work(&mut self, rank: usize) {
        let thread = self.thread();
        let stream = self.stream_of(thread);
        self.device_op(rank, thread, &stream);
    }

    fn slice64(&mut self) -> String {
        let buffer = BUFFERS[self.rng.random_range(0..BUFFERS.len())];
        let start = self.rng.random_range(0..4) * 64;
        format!("{buffer}[{start}..{}]", start + 64)
    }

    /// A host access after the host learned that `stream`'s work is done (or not).
    fn host_access(&mut self, rank: usize, thread: usize) {
        let line = match self.rng.random_range(0..4) {
            0 => format!("host_read({});", self.slice64()),
            1 => format!("host_write({});", self.slice64()),
            _ => {
                let (dst, src) = (self.slice64(), self.slice64());
                format!("aclrtMemcpy({dst}, 64, {src}, 64, {});", copy_kind(&dst, &src))
            }
        };
        self.emit(rank, thread, line);
    }

    /// After a wait queued on `stream`: a kernel there, or the host synchronizes the
    /// stream and touches memory.
    fn consume(&mut self, rank: usize, thread: usize, stream: &str) {
        if self.chance(50) {
            return self.device_op(rank, thread, stream);
        }
        if !self.chance(6) {
            self.emit(rank, thread, format!("aclrtSynchronizeStream({stream});"));
        }
        self.host_access(rank, thread);
    }

    /// Producer thread: work on its stream, record a notify. Consumer thread: wait for
    /// it on its stream, then consume.
    fn notify_handoff(&mut self, rank: usize) {
        let (producer, consumer) = (self.thread(), self.thread());
        let (from, to) = (self.stream_of(producer), self.stream_of(consumer));
        let notify = self.declare("n", "aclrtCreateNotify()");
        self.device_op(rank, producer, &from);
        if !self.chance(5) {
            self.emit(rank, producer, format!("aclrtRecordNotify({notify}, {from});"));
        }
        if self.chance(6) {
            // The broken hand-off: synchronize the producer's stream instead of
            // waiting for its signal. On another thread it may not be issued yet.
            let synced = if self.private { &to } else { &from };
            self.emit(rank, consumer, format!("aclrtSynchronizeStream({synced});"));
            self.host_access(rank, consumer);
            self.cleanup.push(format!("aclrtDestroyNotify({notify});\n"));
            return;
        }
        if !self.chance(5) {
            self.emit(rank, consumer, format!("aclrtWaitAndResetNotify({notify}, {to}, 0);"));
        }
        self.consume(rank, consumer, &to);
        self.destroy(rank, consumer, &to, format!("aclrtDestroyNotify({notify});"));
    }

    /// Producer: work, record. Consumer: a stream wait (and, for the sync kind, a reset
    /// on the waiting stream) then consume, or `aclrtSynchronizeEvent` then a host access.
    fn event_handoff(&mut self, rank: usize) {
        let (producer, consumer) = (self.thread(), self.thread());
        let (from, to) = (self.stream_of(producer), self.stream_of(consumer));
        let sync_kind = self.chance(60) || (self.private && producer != consumer);
        let event = if sync_kind {
            self.declare("e", "aclrtCreateEventWithFlag(ACL_EVENT_SYNC)")
        } else {
            self.declare("c", "aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)")
        };
        self.device_op(rank, producer, &from);
        if !self.chance(5) {
            self.emit(rank, producer, format!("aclrtRecordEvent({event}, {from});"));
        }
        if self.chance(30) {
            if !self.chance(5) {
                self.emit(rank, consumer, format!("aclrtSynchronizeEvent({event});"));
            }
            self.host_access(rank, consumer);
            self.cleanup.push(format!("aclrtDestroyEvent({event});\n"));
            return;
        }
        if !self.chance(5) {
            self.emit(rank, consumer, format!("aclrtStreamWaitEvent({to}, {event});"));
        }
        if sync_kind && !self.chance(6) {
            self.emit(rank, consumer, format!("aclrtResetEvent({event}, {to});"));
        }
        self.consume(rank, consumer, &to);
        self.destroy(rank, consumer, &to, format!("aclrtDestroyEvent({event});"));
    }

    /// A sync-kind event used for two cycles: the second record must not run before the
    /// first cycle's reset, or the reset clears it and `aclrtSynchronizeEvent` waits
    /// forever. The host synchronizes the resetting stream first (unless broken).
    fn rerecord(&mut self, rank: usize) {
        let (first, second) = (self.thread(), self.thread());
        let (recorder, waiter) = (self.stream_of(first), self.stream_of(first));
        let again = self.stream_of(second);
        let event = self.declare("e", "aclrtCreateEventWithFlag(ACL_EVENT_SYNC)");
        self.device_op(rank, first, &recorder);
        self.emit(rank, first, format!("aclrtRecordEvent({event}, {recorder});"));
        self.emit(rank, first, format!("aclrtStreamWaitEvent({waiter}, {event});"));
        self.emit(rank, first, format!("aclrtResetEvent({event}, {waiter});"));
        if !self.chance(40) {
            self.emit(rank, first, format!("aclrtSynchronizeStream({waiter});"));
        }
        self.device_op(rank, second, &again);
        self.emit(rank, second, format!("aclrtRecordEvent({event}, {again});"));
        self.emit(rank, second, format!("aclrtSynchronizeEvent({event});"));
        self.host_access(rank, second);
        self.emit(rank, second, format!("aclrtResetEvent({event}, {again});"));
        self.destroy(rank, second, &again, format!("aclrtDestroyEvent({event});"));
    }

    /// A host thread synchronizes (a stream, the device) and touches memory.
    fn host_sync_and_access(&mut self, rank: usize) {
        let thread = self.thread();
        let synchronize_stream = |this: &mut Self| {
            let stream = this.stream_of(thread);
            this.emit(rank, thread, format!("aclrtSynchronizeStream({stream});"));
        };
        match self.rng.random_range(0..12) {
            0..=7 => synchronize_stream(self),
            8..=9 if self.private => synchronize_stream(self),
            8..=9 => self.emit(rank, thread, "aclrtSynchronizeDevice();".into()),
            _ => {}
        }
        self.host_access(rank, thread);
    }

    /// Rank `from` works and records a channel notify on the HCCL thread; the peer
    /// waits for it and works after it.
    fn channel_handoff(&mut self) {
        let from = self.rng.random_range(0..2);
        let (producer, consumer) = (self.thread(), self.thread());
        let index = self.rng.random_range(0..2);
        self.device_op(from, producer, "s0");
        if !self.chance(8) {
            let line = format!("HcommChannelNotifyRecordOnThread(t, ch, {index});");
            self.emit(from, producer, line);
        }
        let wait_index = if self.chance(8) { 1 - index } else { index };
        if !self.chance(8) {
            let line = format!("HcommChannelNotifyWaitOnThread(t, ch, {wait_index}, 0);");
            self.emit(1 - from, consumer, line);
        }
        self.consume(1 - from, consumer, "s0");
    }
}

/// `aclrtMemcpy` kind for copying `src` into `dst` (`h` is host memory).
fn copy_kind(dst: &str, src: &str) -> &'static str {
    match (dst.starts_with('h'), src.starts_with('h')) {
        (true, true) => "ACL_MEMCPY_HOST_TO_HOST",
        (true, false) => "ACL_MEMCPY_DEVICE_TO_HOST",
        (false, true) => "ACL_MEMCPY_HOST_TO_DEVICE",
        (false, false) => "ACL_MEMCPY_DEVICE_TO_DEVICE",
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("    {line}\n")).collect()
}
