//! The language server at workspace scale, as an editor drives it: the `syncguard lsp`
//! binary started as a separate process, spoken to over stdio. Per workspace: the time
//! from `didOpen` to the first diagnostics, from each `didChange` to the diagnostics of
//! that version (p50, p95 over the edits), and the server's resident memory over many
//! edits (bursts of ten, as typing sends them).
//!
//! `cargo build --release && cargo bench -p syncguard-lsp --bench workspace_latency
//! [-- --edits N --memory-edits M --server PATH --workspace DIR --file FILE]`
//!
//! Workspaces: a generated Python project of 500 files (480 ordinary modules, 20 that
//! use torch_npu streams and events, and a `.git` folder), this repository with one of
//! its C++ examples open, and with `--workspace`/`--file` any folder and file. Each
//! edit rewrites a comment line at the top of the file, so every offset after it moves.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let option = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    let count = |name: &str, default: usize| option(name).and_then(|value| value.parse().ok()).unwrap_or(default);
    let edits = count("--edits", 100);
    let memory_edits = count("--memory-edits", 10_000);
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let server = option("--server").map_or_else(|| repository.join("target/release/syncguard"), PathBuf::from);
    assert!(
        server.exists(),
        "{} does not exist: build it first (cargo build --release)",
        server.display()
    );
    if let (Some(workspace), Some(file)) = (option("--workspace"), option("--file")) {
        measure(&server, Path::new(&workspace), Path::new(&file), edits, 0);
        return;
    }
    let python = tempfile::tempdir().expect("a temporary folder");
    let open = python_workspace(python.path(), 500);
    measure(&server, python.path(), &open, edits, memory_edits);
    let example = repository.join("examples/cpp/fail_tile_pipeline.cpp");
    measure(&server, &repository, &example, edits, 0);
}

/// Open `file` in `workspace`, edit it `edits` times, then `memory_edits` times more.
fn measure(server: &Path, workspace: &Path, file: &Path, edits: usize, memory_edits: usize) {
    let file = std::fs::canonicalize(file).expect("the file exists");
    let workspace = std::fs::canonicalize(workspace).expect("the workspace exists");
    let language = match file.extension().and_then(|ext| ext.to_str()) {
        Some("py") => "python",
        _ => "cpp",
    };
    let comment = if language == "python" { "#" } else { "//" };
    let text = format!(
        "{comment} edit 0\n{}",
        std::fs::read_to_string(&file).expect("the file reads")
    );
    let mut client = Client::start(server, &workspace);
    let uri = format!("file://{}", file.display());
    let started = Instant::now();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": language, "version": 0, "text": text}}),
    );
    let findings = client.published(&uri, 0);
    let first = started.elapsed();
    let edited = |edit: usize| text.replacen(&format!("{comment} edit 0"), &format!("{comment} edit {edit}"), 1);
    let mut times: Vec<Duration> = (1..=edits)
        .map(|edit| {
            let started = Instant::now();
            client.change(&uri, edit as i32, &edited(edit));
            client.published(&uri, edit as i32);
            started.elapsed()
        })
        .collect();
    times.sort();
    let percentile = |p: usize| ms(times[(times.len() * p / 100).min(times.len() - 1)]);
    println!(
        "{} ({} files), {} open: first diagnostics {:.0} ms ({findings} findings); {edits} edits: p50 {:.1} ms  p95 {:.1} ms  max {:.1} ms; {} files published",
        workspace.display(),
        count_files(&workspace),
        file.strip_prefix(&workspace).unwrap_or(&file).display(),
        ms(first),
        percentile(50),
        percentile(95),
        ms(*times.last().unwrap()),
        client.published_files.len(),
    );
    if memory_edits > 0 {
        println!("  server memory over {memory_edits} edits (bursts of ten):");
        let milestones = [1, memory_edits / 10, memory_edits / 2, memory_edits];
        let started = Instant::now();
        for edit in 1..=memory_edits {
            let version = (edits + edit) as i32;
            client.change(&uri, version, &edited(edits + edit));
            if edit % 10 == 0 || milestones.contains(&edit) {
                client.published(&uri, version);
            }
            if milestones.contains(&edit) {
                println!(
                    "    after {edit:>6} edits: {:>7.1} MiB resident ({:.1} s)",
                    client.resident_mib(),
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
    client.stop();
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn count_files(folder: &Path) -> usize {
    let mut count = 0;
    let mut stack = vec![folder.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != ".git" && name != "target" {
                    stack.push(path);
                }
            } else {
                count += 1;
            }
        }
    }
    count
}

/// `files` Python modules under `root` (and a `.git` folder): most of them ordinary
/// code, every 25th one handing tensors between torch_npu streams. Returns the file to
/// open: one of the latter, with an event recorded and never waited on.
fn python_workspace(root: &Path, files: usize) -> PathBuf {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let mut open = None;
    for at in 0..files {
        let package = root.join(format!("pkg{}", at / 50));
        std::fs::create_dir_all(&package).unwrap();
        let path = package.join(format!("module{at}.py"));
        let text = if at % 25 == 7 {
            open.get_or_insert(path.clone());
            streams_module(at)
        } else {
            ordinary_module(at)
        };
        std::fs::write(&path, text).unwrap();
    }
    open.expect("a module with streams")
}

fn ordinary_module(at: usize) -> String {
    let mut text = format!("import os\nimport json\n\nLIMIT_{at} = {at}\n\n\nclass Config{at}:\n");
    text.push_str("    def __init__(self, path):\n        self.path = path\n        self.values = {}\n\n");
    text.push_str("    def load(self):\n        with open(self.path) as handle:\n            self.values = json.load(handle)\n        return self.values\n\n");
    text.push_str("    def get(self, key, default=None):\n        return self.values.get(key, default)\n\n\n");
    for function in 0..6 {
        text.push_str(&format!(
            "def helper_{at}_{function}(items, scale=2):\n    total = 0\n    for item in items:\n        if item > LIMIT_{at}:\n            total += item * scale\n        else:\n            total -= item\n    return total\n\n\n"
        ));
    }
    text.push_str(&format!(
        "def main_{at}():\n    config = Config{at}(os.environ.get(\"CONFIG\", \"config.json\"))\n    config.load()\n    return helper_{at}_0([1, 2, 3])\n"
    ));
    text
}

fn streams_module(at: usize) -> String {
    format!(
        "import torch\nimport torch_npu\n\n\ndef copy_then_compute_{at}(x):\n    copy = torch.npu.Stream()\n    compute = torch.npu.Stream()\n    ready = torch.npu.Event()\n    with torch.npu.stream(copy):\n        y = x.to(\"npu\", non_blocking=True)\n        ready.record(copy)\n    with torch.npu.stream(compute):\n        z = y * 2\n    torch.npu.synchronize()\n    return z\n\n\ndef handed_over_{at}(x):\n    side = torch.npu.Stream()\n    side.wait_stream(torch.npu.current_stream())\n    with torch.npu.stream(side):\n        y = x * 3\n    torch.npu.current_stream().wait_stream(side)\n    return y\n"
    )
}

/// The server process and what it sends, read on a thread.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Message>,
    published_files: std::collections::BTreeSet<String>,
}

impl Client {
    fn start(server: &Path, root: &Path) -> Client {
        let mut child = Command::new(server)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Ok(Some(message)) = Message::read(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            messages,
            published_files: Default::default(),
        };
        let root = format!("file://{}", root.display());
        client.send(Message::Request(Request::new(
            RequestId::from(1),
            "initialize".to_string(),
            json!({"rootUri": root, "workspaceFolders": [{"uri": root, "name": "workspace"}], "capabilities": {}}),
        )));
        loop {
            if let Message::Response(_) = client.receive() {
                break;
            }
        }
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: Message) {
        message.write(&mut self.stdin).expect("the server reads");
        self.stdin.flush().unwrap();
    }

    fn receive(&self) -> Message {
        self.messages
            .recv_timeout(Duration::from_secs(300))
            .expect("the server answers")
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(Message::Notification(Notification::new(method.to_string(), params)));
    }

    fn change(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Wait for the diagnostics of `uri` at `version`; how many there are.
    fn published(&mut self, uri: &str, version: i32) -> usize {
        loop {
            if let Message::Notification(notification) = self.receive()
                && notification.method == "textDocument/publishDiagnostics"
            {
                let params = &notification.params;
                self.published_files
                    .insert(params["uri"].as_str().unwrap_or("").to_string());
                if params["uri"] == uri && params["version"] == version {
                    return params["diagnostics"].as_array().map_or(0, Vec::len);
                }
            }
        }
    }

    /// The server's resident set (Linux), in MiB.
    fn resident_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kib| kib / 1024.0)
    }

    fn stop(mut self) {
        self.send(Message::Request(Request::new(
            RequestId::from(2),
            "shutdown".to_string(),
            Value::Null,
        )));
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}
