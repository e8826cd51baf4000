//! Structure-aware inputs: random `.sync` programs from the language's statements, and
//! random traces from the trace format, mostly well formed so that they reach lowering
//! and analysis, with hostile values (huge, negative, overflowing, deep) mixed in.

use crate::rng::Rng;

/// Words of the `.sync` language, inserted by the byte mutator.
/// Tokens the C/C++ mutations splice in: syntax the frontend follows, and API names.
/// Python fragments spliced into mutated Python sources.
pub const PYTHON_TOKENS: &[&str] = &[
    ":",
    "(",
    ")",
    "[",
    "]",
    ",",
    ".",
    "\n",
    "\n    ",
    "\n        ",
    "self.",
    "for i in range(4):\n    ",
    "for i in range(100000):\n    ",
    "for x in items:\n    ",
    "while True:\n    ",
    "while ret == 0:\n    ",
    "if ret != 0:\n    raise RuntimeError(ret)\n",
    "if flag:\n    ",
    "else:\n    ",
    "elif x:\n    ",
    "try:\n    ",
    "finally:\n    ",
    "with torch.npu.stream(s):\n    ",
    "return\n",
    "return ret\n",
    "break\n",
    "continue\n",
    "def f(x):\n    ",
    "class C:\n    def __init__(self):\n        ",
    "lambda: 0",
    "[e for e in range(8)]",
    "torch.npu.Stream()",
    "torch.npu.Event()",
    "torch.npu.current_stream()",
    "torch.zeros(8, device=\"npu\")",
    "torch.empty(8, pin_memory=True)",
    ".to(\"npu\", non_blocking=True)",
    ".cpu()",
    ".item()",
    ".wait_stream(",
    ".record()",
    ".wait_event(",
    ".synchronize()",
    ".copy_(",
    "acl.rt.create_stream()",
    "acl.rt.create_event()",
    "acl.rt.record_event(",
    "acl.rt.stream_wait_event(",
    "acl.rt.reset_event(",
    "acl.rt.destroy_event(",
    "acl.rt.malloc(64, 0)",
    "acl.rt.memcpy_async(",
    "acl.rt.synchronize_stream(",
    "ret",
    "s",
    "ev",
    "0",
    "-1",
    "1 << 62",
    "10 ** 30",
    "main()",
];

pub const CPP_TOKENS: &[&str] = &[
    "// syncguard: ignore[SG701]",
    "{",
    "}",
    "(",
    ")",
    ";",
    "<<<",
    ">>>",
    "<<<1, nullptr, s>>>",
    "&",
    "*",
    "->",
    "::",
    "[0]",
    "[i]",
    "for (int i = 0; i < 4; ++i)",
    "while (true)",
    "do {",
    "} while (0);",
    "if (ret != ACL_SUCCESS) { return ret; }",
    "switch (x) { case 1: break; default: return; }",
    "return;",
    "break;",
    "continue;",
    "#define N 8\n",
    "#if 0\n",
    "#endif\n",
    "#ifdef X\n",
    "static_cast<aclrtStream>",
    "this->",
    "std::vector<aclrtEvent> v(2);",
    "v.push_back(ev);",
    "aclrtCreateEvent(&ev)",
    "aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC)",
    "aclrtRecordEvent(ev, s)",
    "aclrtStreamWaitEvent(s, ev)",
    "aclrtResetEvent(ev, s)",
    "aclrtCreateStream(&s)",
    "aclrtMalloc((void **)&p, 1024, ACL_MEM_MALLOC_HUGE_FIRST)",
    "aclrtMemcpyAsync(p, 1024, h, 1024, ACL_MEMCPY_HOST_TO_DEVICE, s)",
    "aclrtSynchronizeStream(s)",
    "cudaStreamCreate(&s)",
    "cudaEventRecord(e, s)",
    "h[0] = 1;",
    "__global__ ",
    "__aicore__ ",
    "Helper(s, ev);",
    "void Helper(aclrtStream s, aclrtEvent ev) { aclrtRecordEvent(ev, s); }\n",
    "0x7fffffffffffffff",
    "-1",
];

pub const SYNC_TOKENS: &[&str] = &[
    "// syncguard: ignore[SG107]",
    "// syncguard: ignore-file[SG601, SG1",
    "let",
    "if",
    "else",
    "for",
    "in",
    "thread",
    "return",
    "ranks",
    "param",
    "target",
    "cann",
    "superkernel",
    "subkernel",
    "op",
    "attrs",
    "rank",
    "N",
    "0..",
    "..=",
    "{",
    "}",
    "(",
    ")",
    ";",
    "KiB",
    "GiB",
    "%",
    "/",
    "*",
    "-",
    "^",
    "<<",
    ">>",
    " ? ",
    " : ",
    "thread: ",
    "existing_event()",
    "existing_channel(c, rank ^ 1)",
    "kernel(s, \"k\", writes: [b]);",
    "aclrtRecordEvent(e, s);",
    "aclrtStreamWaitEvent(s, e);",
    "aclrtResetEvent(e, s);",
    "aclrtSynchronizeStream(s);",
    "aclrtFree(b);",
    "aclrtDestroyEvent(e);",
    "HcommChannelNotifyRecordOnThread(t, ch, 0);",
    "HcommChannelNotifyWaitOnThread(t, ch, 0, 0);",
];

/// Fragments of trace lines, inserted by the byte mutator.
pub const TRACE_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"rank\": ",
    "\"thread\": ",
    "\"api\": ",
    "\"args\": {",
    "\"ts\": ",
    "\"ret\": ",
    "\"loc\": {\"file\": \"a.cpp\", \"line\": 1}",
    "\"syncguard_trace\": 1",
    "\"world_size\": ",
    "null",
    "\"aclrtRecordEvent\"",
    "\"aclrtStreamWaitEvent\"",
    "\"aclrtResetEvent\"",
    "\"kernel\"",
    "\"HcommWriteOnThread\"",
    "\"ge.op\"",
    "\n",
];

/// Integers as a program writes them, hostile ones included.
fn number(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => "9223372036854775807".into(),
        1 => "-1".into(),
        2 => format!("{}", rng.next_u64() % 100_000_000_000_000),
        3 => "N".into(),
        4 => "rank".into(),
        5 => format!("rank + {}", rng.below(3)),
        6 => "(rank + 1) % N".into(),
        7 => "N - rank - 1".into(),
        8 => format!("{} / (N - {})", rng.below(8), rng.below(4)),
        _ => format!("{}", rng.below(4)),
    }
}

fn size(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => "4 GiB".into(),
        1 => "0".into(),
        2 => "-64".into(),
        _ => format!("{} KiB", 1 + rng.below(8)),
    }
}

/// The names a generated program has declared, by kind.
#[derive(Default)]
struct Scope {
    streams: Vec<String>,
    events: Vec<String>,
    buffers: Vec<String>,
    notifies: Vec<String>,
    threads: Vec<String>,
    channels: Vec<String>,
    fresh: usize,
}

impl Scope {
    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }
}

/// A random `.sync` program.
pub fn program(rng: &mut Rng) -> String {
    let mut out = String::new();
    if rng.chance(1, 3) {
        out.push_str(&format!("target {};\n", rng.pick(&["A2", "A3", "950", "310P"])));
    }
    let multi = rng.chance(1, 2);
    if multi {
        if rng.chance(1, 2) {
            out.push_str(&format!("ranks N in 2..={};\n", 2 + rng.below(6)));
        } else {
            out.push_str(&format!("ranks {};\n", 1 + rng.below(4)));
        }
    }
    let mut scope = Scope::default();
    out.push_str("let s = aclrtCreateStream();\nlet e = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);\n");
    out.push_str(&format!("let b = aclrtMalloc({});\n", size(rng)));
    scope.streams.push("s".into());
    scope.events.push("e".into());
    scope.buffers.push("b".into());
    if multi {
        let rank_count = if out.contains("ranks N") { "N" } else { "2" };
        out.push_str(&format!(
            "let comm = HcclCommInitRootInfo({rank_count}, \"r\", rank);\nlet t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, {});\nlet ch = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, {{ remoteRank: {}, notifyNum: {} }}, 1);\nlet rb = HcclChannelGetHcclBuffer(comm, ch);\n",
            rng.below(4),
            number(rng),
            number(rng)
        ));
        scope.threads.push("t".into());
        scope.channels.push("ch".into());
    }
    let statements = 1 + rng.below(14);
    for _ in 0..statements {
        statement(rng, &mut scope, &mut out, 0);
    }
    if rng.chance(1, 2) {
        out.push_str("aclrtSynchronizeDevice();\n");
    }
    out
}

fn statement(rng: &mut Rng, scope: &mut Scope, out: &mut String, depth: usize) {
    let nested = depth < 3;
    match rng.below(if nested { 24 } else { 20 }) {
        0 => {
            let name = scope.name("s");
            out.push_str(&format!("let {name} = aclrtCreateStream();\n"));
            scope.streams.push(name);
        }
        1 => {
            let name = scope.name("e");
            let create = rng.pick(&[
                "aclrtCreateEventWithFlag(ACL_EVENT_SYNC)",
                "aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)",
                "aclrtCreateEvent()",
            ]);
            out.push_str(&format!("let {name} = {create};\n"));
            scope.events.push(name);
        }
        2 => {
            let name = scope.name("b");
            out.push_str(&format!("let {name} = aclrtMalloc({});\n", size(rng)));
            scope.buffers.push(name);
        }
        3 => {
            let name = scope.name("n");
            out.push_str(&format!("let {name} = aclrtCreateNotify();\n"));
            scope.notifies.push(name);
        }
        4 | 5 => out.push_str(&format!(
            "aclrtRecordEvent({}, {});\n",
            rng.pick(&scope.events),
            rng.pick(&scope.streams)
        )),
        6 | 7 => out.push_str(&format!(
            "aclrtStreamWaitEvent({}, {});\n",
            rng.pick(&scope.streams),
            rng.pick(&scope.events)
        )),
        8 => out.push_str(&format!(
            "aclrtResetEvent({}, {});\n",
            rng.pick(&scope.events),
            rng.pick(&scope.streams)
        )),
        9 => out.push_str(&format!("aclrtSynchronizeStream({});\n", rng.pick(&scope.streams))),
        10 => out.push_str(&format!("aclrtSynchronizeEvent({});\n", rng.pick(&scope.events))),
        11 | 12 => {
            let buffer = rng.pick(&scope.buffers).clone();
            let access = if rng.chance(1, 2) { "writes" } else { "reads" };
            let range = if rng.chance(1, 3) {
                format!("{buffer}[{}..{}]", number(rng), number(rng))
            } else {
                buffer
            };
            out.push_str(&format!(
                "kernel({}, \"k\", {access}: [{range}]);\n",
                rng.pick(&scope.streams)
            ));
        }
        13 => {
            let (a, b) = (rng.pick(&scope.buffers).clone(), rng.pick(&scope.buffers).clone());
            out.push_str(&format!(
                "aclrtMemcpyAsync({a}, 64, {b}, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, {});\n",
                rng.pick(&scope.streams)
            ));
        }
        14 => out.push_str(&format!(
            "{}({}[0..64]);\n",
            rng.pick(&["host_read", "host_write"]),
            rng.pick(&scope.buffers)
        )),
        15 => match rng.below(3) {
            0 => out.push_str(&format!("aclrtFree({});\n", rng.pick(&scope.buffers))),
            1 => out.push_str(&format!("aclrtDestroyEvent({});\n", rng.pick(&scope.events))),
            _ => out.push_str(&format!("aclrtDestroyStream({});\n", rng.pick(&scope.streams))),
        },
        16 if !scope.notifies.is_empty() => {
            let notify = rng.pick(&scope.notifies).clone();
            let stream = rng.pick(&scope.streams).clone();
            if rng.chance(1, 2) {
                out.push_str(&format!("aclrtRecordNotify({notify}, {stream});\n"));
            } else {
                out.push_str(&format!("aclrtWaitAndResetNotify({notify}, {stream}, 0);\n"));
            }
        }
        17 | 18 if !scope.channels.is_empty() => {
            let call = if rng.chance(1, 2) {
                format!("HcommChannelNotifyRecordOnThread(t, ch, {});\n", number(rng))
            } else {
                format!("HcommChannelNotifyWaitOnThread(t, ch, {}, 0);\n", number(rng))
            };
            out.push_str(&call);
        }
        19 if !scope.channels.is_empty() => out.push_str(&format!(
            "HcommWriteOnThread(t, ch, rb[0..{}], b[0..64], {});\n",
            size(rng),
            number(rng)
        )),
        20 => {
            out.push_str(&format!("for i in {}..{} {{\n", number(rng), number(rng)));
            block(rng, scope, out, depth);
        }
        21 => {
            out.push_str(&format!(
                "if {} {} {} {{\n",
                number(rng),
                rng.pick(&["==", "<", "!=", ">"]),
                number(rng)
            ));
            block(rng, scope, out, depth);
            if rng.chance(1, 2) {
                out.push_str("else {\n");
                block(rng, scope, out, depth);
            }
        }
        22 => {
            let name = scope.name("w");
            out.push_str(&format!("thread {name} {{\n"));
            block(rng, scope, out, depth);
        }
        23 => out.push_str("return;\n"),
        _ => out.push_str(&format!("aclrtSynchronizeStream({});\n", rng.pick(&scope.streams))),
    }
}

/// A nested block's statements and its closing brace. Names declared inside stay out
/// of the enclosing scope.
fn block(rng: &mut Rng, scope: &mut Scope, out: &mut String, depth: usize) {
    let saved = (
        scope.streams.len(),
        scope.events.len(),
        scope.buffers.len(),
        scope.notifies.len(),
    );
    for _ in 0..1 + rng.below(4) {
        statement(rng, scope, out, depth + 1);
    }
    scope.streams.truncate(saved.0);
    scope.events.truncate(saved.1);
    scope.buffers.truncate(saved.2);
    scope.notifies.truncate(saved.3);
    out.push_str("}\n");
}

/// A random JSONL call trace.
pub fn trace(rng: &mut Rng) -> String {
    let mut out = String::new();
    let ranks = 1 + rng.below(3);
    if rng.chance(2, 3) {
        out.push_str(&format!(
            "{{\"syncguard_trace\": 1, \"world_size\": {ranks}, \"target\": \"{}\"}}\n",
            rng.pick(&["A2", "A3", "950", "310P", "x"])
        ));
    }
    let lines = 1 + rng.below(30);
    for ts in 0..lines {
        let rank = rng.below(ranks);
        let thread = rng.below(2);
        let (api, args) = trace_call(rng, rank);
        let mut line = format!("{{\"rank\": {rank}, \"thread\": {thread}, \"api\": \"{api}\", \"args\": {args}");
        if rng.chance(1, 3) {
            line.push_str(&format!(", \"ts\": {}", ts * 10 + rng.below(15)));
        }
        if rng.chance(1, 8) {
            line.push_str(&format!(", \"ret\": {}", rng.below(3)));
        }
        if rng.chance(1, 4) {
            line.push_str(&format!(
                ", \"loc\": {{\"file\": \"op.cpp\", \"line\": {}}}",
                rng.below(500)
            ));
        }
        line.push_str("}\n");
        out.push_str(&line);
    }
    out
}

fn handle(rng: &mut Rng, prefix: &str, rank: usize) -> String {
    if rng.chance(1, 6) {
        format!("{}", rng.below(3))
    } else {
        format!("\"{prefix}{rank}_{}\"", rng.below(3))
    }
}

fn trace_int(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => "18446744073709551615".into(),
        1 => "-5".into(),
        2 => "1.5".into(),
        3 => "\"0x10\"".into(),
        _ => format!("{}", rng.below(4096)),
    }
}

fn trace_call(rng: &mut Rng, rank: usize) -> (&'static str, String) {
    let stream = handle(rng, "s", rank);
    let event = handle(rng, "e", rank);
    let buffer = handle(rng, "b", rank);
    match rng.below(14) {
        0 => ("aclrtCreateStream", format!("{{\"stream\": {stream}}}")),
        1 => (
            "aclrtCreateEventWithFlag",
            format!("{{\"event\": {event}, \"flag\": \"ACL_EVENT_SYNC\"}}"),
        ),
        2 => (
            "aclrtRecordEvent",
            format!("{{\"event\": {event}, \"stream\": {stream}}}"),
        ),
        3 => (
            "aclrtStreamWaitEvent",
            format!("{{\"stream\": {stream}, \"event\": {event}}}"),
        ),
        4 => (
            "aclrtResetEvent",
            format!("{{\"event\": {event}, \"stream\": {stream}}}"),
        ),
        5 => ("aclrtSynchronizeStream", format!("{{\"stream\": {stream}}}")),
        6 => ("aclrtDestroyEvent", format!("{{\"event\": {event}}}")),
        7 => (
            "aclrtMalloc",
            format!(
                "{{\"devPtr\": {buffer}, \"size\": {}, \"policy\": \"ACL_MEM_MALLOC_HUGE_FIRST\"}}",
                trace_int(rng)
            ),
        ),
        8 => (
            "kernel",
            format!(
                "{{\"stream\": {stream}, \"name\": \"k\", \"writes\": [{{\"buf\": {buffer}, \"off\": {}, \"len\": {}}}]}}",
                trace_int(rng),
                trace_int(rng)
            ),
        ),
        9 => (
            "aclrtMemsetAsync",
            format!(
                "{{\"devPtr\": {buffer}, \"maxCount\": 64, \"value\": 0, \"count\": {}, \"stream\": {stream}}}",
                trace_int(rng)
            ),
        ),
        10 => ("aclrtFree", format!("{{\"devPtr\": {buffer}}}")),
        11 => (
            "host_read",
            format!(
                "{{\"buf\": {buffer}, \"off\": {}, \"len\": {}}}",
                trace_int(rng),
                trace_int(rng)
            ),
        ),
        12 => ("aclrtSynchronizeEvent", format!("{{\"event\": {event}}}")),
        _ => ("aclrtSynchronizeDevice", "{}".to_string()),
    }
}
