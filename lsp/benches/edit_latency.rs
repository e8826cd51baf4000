//! Time from `didChange` to `publishDiagnostics`, as an editor sees it, on a
//! 5,000-line `.sync` program and a 2,000-line C++ file (p50 and p95 over 100 edits),
//! and the server's memory over 10,000 edits.
//!
//! `cargo bench -p syncguard-lsp --bench edit_latency [-- --edits N --memory-edits M]`
//! The server runs in this process over an in-memory connection; the edit is a
//! changed comment line at the top of the file, so every edit moves every offset.

use std::path::Path;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request};
use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let option = |name: &str, default: usize| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let edits = option("--edits", 100);
    let memory_edits = option("--memory-edits", 10_000);
    let work = tempfile::tempdir().expect("a temporary folder");
    let sync = work.path().join("pipeline.sync");
    let cpp = work.path().join("stages.cpp");
    std::fs::write(&sync, sync_program(5_000)).unwrap();
    std::fs::write(&cpp, cpp_source(2_000)).unwrap();
    let mut server = Server::start(work.path());
    for (path, language) in [(&sync, "sync"), (&cpp, "cpp")] {
        let text = std::fs::read_to_string(path).unwrap();
        let lines = text.lines().count();
        let mut times = server.edit_times(path, language, &text, edits);
        times.sort();
        let percentile = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
        println!(
            "{language:>4} {lines:>5} lines, {edits} edits: p50 {:>6.1} ms  p95 {:>6.1} ms  max {:>6.1} ms",
            ms(percentile(50)),
            ms(percentile(95)),
            ms(*times.last().unwrap())
        );
    }
    let text = std::fs::read_to_string(&sync).unwrap();
    println!("memory over {memory_edits} edits of the .sync program (resident set of this process):");
    server.memory_over_edits(&sync, &text, memory_edits);
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// A pipeline: each step a producer kernel, a hand-off by event (reset after the wait),
/// a consumer kernel and a synchronize.
fn sync_program(lines: usize) -> String {
    let mut text = String::from(
        "// edit 0\ntarget A3;\nlet s1 = aclrtCreateStream();\nlet s2 = aclrtCreateStream();\n\
         let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);\nlet buf = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);\n",
    );
    let mut step = 0;
    while text.lines().count() + 6 < lines {
        text.push_str(&format!(
            "kernel(s1, \"produce{step}\", writes: [buf]);\naclrtRecordEvent(ev, s1);\naclrtStreamWaitEvent(s2, ev);\n\
             aclrtResetEvent(ev, s2);\nkernel(s2, \"consume{step}\", reads: [buf]);\naclrtSynchronizeStream(s2);\n"
        ));
        step += 1;
    }
    text.push_str("aclrtDestroyEvent(ev);\naclrtFree(buf);\naclrtDestroyStream(s1);\naclrtDestroyStream(s2);\n");
    text
}

/// Operator host code: functions of 20 lines, each creating streams and an event and
/// handing work over in a loop.
fn cpp_source(lines: usize) -> String {
    let mut text = String::from(
        "// edit 0\n#include \"acl/acl.h\"\n#define CHECK(call) do { if ((call) != ACL_SUCCESS) { return 1; } } while (0)\n",
    );
    let mut stage = 0;
    while text.lines().count() + 20 < lines {
        text.push_str(&format!(
            "int Stage{stage}(void *buf, size_t bytes)\n{{\n    aclrtStream copy;\n    aclrtStream compute;\n\
             \x20   aclrtEvent ready;\n    CHECK(aclrtCreateStream(&copy));\n    CHECK(aclrtCreateStream(&compute));\n\
             \x20   CHECK(aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC));\n    for (int i = 0; i < 2; ++i) {{\n\
             \x20       CHECK(aclrtRecordEvent(ready, copy));\n        CHECK(aclrtStreamWaitEvent(compute, ready));\n\
             \x20       CHECK(aclrtResetEvent(ready, compute));\n        CHECK(aclrtSynchronizeStream(compute));\n    }}\n\
             \x20   CHECK(aclrtDestroyEvent(ready));\n    CHECK(aclrtDestroyStream(copy));\n\
             \x20   CHECK(aclrtDestroyStream(compute));\n    return 0;\n}}\n\n"
        ));
        stage += 1;
    }
    text
}

struct Server {
    connection: Connection,
    version: i32,
}

impl Server {
    fn start(root: &Path) -> Server {
        let (server, connection) = Connection::memory();
        std::thread::spawn(move || syncguard_lsp::serve(server));
        let root = format!("file://{}", root.display());
        let request = Request::new(
            syncguard_lsp::request_id(1),
            "initialize".to_string(),
            json!({"rootUri": root, "capabilities": {}}),
        );
        connection.sender.send(Message::Request(request)).unwrap();
        loop {
            if let Message::Response(_) = connection.receiver.recv().unwrap() {
                break;
            }
        }
        let server = Server { connection, version: 0 };
        server.notify("initialized", json!({}));
        server
    }

    fn notify(&self, method: &str, params: Value) {
        let message = Message::Notification(Notification::new(method.to_string(), params));
        self.connection.sender.send(message).unwrap();
    }

    /// Wait for the diagnostics of `uri` at `version`.
    fn published(&self, uri: &str, version: i32) {
        loop {
            let message = self
                .connection
                .receiver
                .recv_timeout(Duration::from_secs(120))
                .expect("diagnostics");
            if let Message::Notification(notification) = message
                && notification.method == "textDocument/publishDiagnostics"
                && notification.params["uri"] == uri
                && notification.params["version"] == version
            {
                return;
            }
        }
    }

    fn change(&mut self, uri: &str, text: &str, edit: usize) -> i32 {
        self.version += 1;
        let edited = text.replacen("// edit 0", &format!("// edit {edit}"), 1);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [{"text": edited}]}),
        );
        self.version
    }

    fn edit_times(&mut self, path: &Path, language: &str, text: &str, edits: usize) -> Vec<Duration> {
        let uri = format!("file://{}", path.display());
        self.version += 1;
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": self.version, "text": text}}),
        );
        self.published(&uri, self.version);
        (1..=edits)
            .map(|edit| {
                let started = Instant::now();
                let version = self.change(&uri, text, edit);
                self.published(&uri, version);
                started.elapsed()
            })
            .collect()
    }

    /// Edits in bursts of ten (as typing sends them), each burst checked once.
    fn memory_over_edits(&mut self, path: &Path, text: &str, edits: usize) {
        let uri = format!("file://{}", path.display());
        let started = Instant::now();
        for edit in 1..=edits {
            let version = self.change(&uri, text, edit);
            let milestone = [1, edits / 10, edits / 2, edits].contains(&edit);
            if edit % 10 == 0 || milestone {
                self.published(&uri, version);
            }
            if milestone {
                println!(
                    "  after {edit:>6} edits: {:>7.1} MiB resident ({:.1} s)",
                    resident_mib(),
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
}

/// This process's resident set (Linux), in MiB.
fn resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}
