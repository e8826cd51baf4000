//! Throughput of `syncguard check` on a tree of Python sources (pyACL samples, torch_npu
//! pipelines, vLLM-style model runners and plain utilities), against `ruff check` (or,
//! without ruff, `python3 -m compileall`) on the same tree.
//!
//! ```sh
//! cargo bench --bench python_lint_throughput                        # 5,000+ files, seed 20261126
//! cargo bench --bench python_lint_throughput -- --files 500 --seed 7 --runs 1
//! cargo bench --bench python_lint_throughput -- --generate-only DIR   # write the tree and stop
//! ```
//!
//! The tree (the same for the same seed) is laid out as an inference repository: per
//! model a pyACL sample (`samples/NAME/acl_NAME.py`: a class that creates a stream and
//! `ACL_EVENT_SYNC` events, uploads, hands buffers to the model stream with
//! record/wait/reset, runs `acl.mdl.execute_async`, copies back and reads the result),
//! a torch_npu pipeline (`models/NAME/pipeline.py`: side-stream uploads, `wait_stream`,
//! an `nn.Module`-style block, `.cpu()` and `non_blocking` copies), a vLLM-style runner
//! (`worker/NAME_runner.py`: an update stream chained to the main stream by two events
//! across steps) and plain utilities (`utils/*.py`: config parsing, tokenizer helpers,
//! metrics). Every file is 100 to 600 lines. About one sync program in six carries a
//! synchronization bug (a missing reset, wait or synchronize); the bench checks that
//! exactly those files have findings and that nothing is SG001, SG003 or SG004.
//!
//! The binary is `target/release/syncguard`, built by `cargo bench` itself;
//! `SYNCGUARD_BENCH_BIN=PATH` runs another one. The peer is `ruff check --no-cache`
//! (`pip install ruff`) when it is on the PATH, else `python3 -m compileall -q -f`
//! (parsing and compiling every file); with neither, the comparison is skipped.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{Rng, median, syncguard_json, time_command};

const DEFAULT_FILES: usize = 5_000;
const DEFAULT_SEED: u64 = 20_261_126;
const TREE_RUNS: usize = 3;
const SINGLE_RUNS: usize = 20;

const MODELS: &[&str] = &[
    "resnet50", "yolov5", "bert", "llama", "qwen", "mistral", "vit", "unet", "whisper", "gpt2", "t5", "clip",
    "deepseek", "mixtral", "bloom", "opt", "falcon", "phi", "gemma", "baichuan", "chatglm", "internlm",
];

const WORDS: &[&str] = &[
    "batch", "token", "layer", "shard", "cache", "block", "score", "label", "prompt", "chunk", "stage", "window",
    "offset", "weight", "metric", "config", "record", "sample", "vocab", "index",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// pyACL: no reset after the wait (SG102 and the race it lets through).
    MissingReset,
    /// pyACL: the result is read on the host without synchronizing (SG602).
    MissingSync,
    /// torch / vLLM: a stream does not wait for the producer (SG601).
    MissingWait,
}

fn pick_bug(rng: &mut Rng, kinds: &[Bug]) -> Bug {
    if rng.chance(17) {
        kinds[rng.below(kinds.len())]
    } else {
        Bug::None
    }
}

/// A plain helper (no synchronization), `tag`-unique, 8 to 30 lines.
fn filler(rng: &mut Rng, tag: &str, n: usize) -> String {
    let word = rng.pick(WORDS);
    let other = rng.pick(WORDS);
    let mut out = String::new();
    match rng.below(6) {
        0 => {
            let _ = writeln!(out, "def {word}_{tag}_{n}_summary(values, scale=1.0):");
            let _ = writeln!(
                out,
                "    \"\"\"Mean, minimum and maximum of {word} values, scaled.\"\"\""
            );
            let _ = writeln!(out, "    if not values:");
            let _ = writeln!(out, "        return {{\"mean\": 0.0, \"min\": 0.0, \"max\": 0.0}}");
            let _ = writeln!(out, "    total = 0.0");
            let _ = writeln!(out, "    low = values[0]");
            let _ = writeln!(out, "    high = values[0]");
            let _ = writeln!(out, "    for value in values:");
            let _ = writeln!(out, "        total += value * scale");
            let _ = writeln!(out, "        low = min(low, value)");
            let _ = writeln!(out, "        high = max(high, value)");
            let _ = writeln!(
                out,
                "    return {{\"mean\": total / len(values), \"min\": low, \"max\": high}}"
            );
        }
        1 => {
            let _ = writeln!(out, "def parse_{word}_{tag}_{n}(text):");
            let _ = writeln!(out, "    result = {{}}");
            let _ = writeln!(out, "    for line in text.splitlines():");
            let _ = writeln!(out, "        line = line.strip()");
            let _ = writeln!(out, "        if not line or line.startswith(\"#\"):");
            let _ = writeln!(out, "            continue");
            let _ = writeln!(out, "        key, _, value = line.partition(\"=\")");
            let _ = writeln!(out, "        if value.isdigit():");
            let _ = writeln!(out, "            result[key.strip()] = int(value)");
            let _ = writeln!(out, "        else:");
            let _ = writeln!(out, "            result[key.strip()] = value.strip()");
            let _ = writeln!(out, "    return result");
        }
        2 => {
            let _ = writeln!(out, "class {}{}Stats{tag}{n}:", capital(word), capital(other));
            let _ = writeln!(out, "    def __init__(self, window={}):", rng.range(4, 64));
            let _ = writeln!(out, "        self.window = window");
            let _ = writeln!(out, "        self.items = []");
            let _ = writeln!(out);
            let _ = writeln!(out, "    def push_{tag}_{n}(self, item):");
            let _ = writeln!(out, "        self.items.append(item)");
            let _ = writeln!(out, "        if len(self.items) > self.window:");
            let _ = writeln!(out, "            self.items = self.items[1:]");
            let _ = writeln!(out);
            let _ = writeln!(out, "    def average_{tag}_{n}(self):");
            let _ = writeln!(out, "        return sum(self.items) / max(len(self.items), 1)");
        }
        3 => {
            let _ = writeln!(out, "def pad_{word}_{tag}_{n}(ids, length, pad_id=0):");
            let _ = writeln!(out, "    if len(ids) >= length:");
            let _ = writeln!(out, "        return ids[:length]");
            let _ = writeln!(out, "    return ids + [pad_id] * (length - len(ids))");
            let _ = writeln!(out);
            let _ = writeln!(out);
            let _ = writeln!(out, "def batch_{other}_{tag}_{n}(items, size={}):", rng.range(2, 32));
            let _ = writeln!(out, "    out = []");
            let _ = writeln!(out, "    for start in range(0, len(items), size):");
            let _ = writeln!(out, "        out.append(items[start:start + size])");
            let _ = writeln!(out, "    return out");
        }
        4 => {
            let _ = writeln!(out, "def format_{word}_{tag}_{n}(name, values, precision=3):");
            let _ = writeln!(out, "    parts = []");
            let _ = writeln!(out, "    for i, value in enumerate(values):");
            let _ = writeln!(
                out,
                "        parts.append(\"%s[%d]=%.*f\" % (name, i, precision, value))"
            );
            let _ = writeln!(out, "    header = \"{word}/{other}\"");
            let _ = writeln!(out, "    return header + \": \" + \", \".join(parts)");
        }
        _ => {
            let _ = writeln!(
                out,
                "def schedule_{word}_{tag}_{n}(step, warmup={}, base_lr=1e-4):",
                rng.range(10, 2000)
            );
            let _ = writeln!(out, "    if step < warmup:");
            let _ = writeln!(out, "        return base_lr * (step + 1) / warmup");
            let _ = writeln!(out, "    decay = 0.5 ** ((step - warmup) // {})", rng.range(100, 5000));
            let _ = writeln!(out, "    return base_lr * decay");
        }
    }
    out.push('\n');
    out.push('\n');
    out
}

fn capital(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn fill_to(out: &mut String, rng: &mut Rng, tag: &str, lines: usize) {
    let mut n = 0;
    while out.lines().count() < lines {
        out.push_str(&filler(rng, tag, n));
        n += 1;
    }
}

fn header(out: &mut String, rng: &mut Rng, what: &str) {
    let _ = writeln!(
        out,
        "# Copyright (c) 20{} Example Inc. All rights reserved.",
        rng.range(20, 26)
    );
    let _ = writeln!(out, "# Licensed under the Apache License, Version 2.0.");
    let _ = writeln!(out, "\"\"\"{what}\"\"\"");
    out.push('\n');
}

fn pyacl_sample(rng: &mut Rng, model: &str, tag: &str, bug: Bug, lines: usize) -> String {
    let mut out = String::new();
    header(&mut out, rng, &format!("pyACL inference sample for {model}."));
    let images = rng.range(2, 6);
    let bytes = rng.range(1, 64) * 4096;
    let _ = writeln!(out, "import acl\nimport numpy as np\n");
    let _ = writeln!(
        out,
        "ACL_MEM_MALLOC_HUGE_FIRST = 0\nACL_MEMCPY_HOST_TO_DEVICE = 1\nACL_MEMCPY_DEVICE_TO_HOST = 2"
    );
    let _ = writeln!(
        out,
        "ACL_EVENT_SYNC = 0x1\nIMAGE_BYTES = {bytes}\nNUM_IMAGES = {images}\n\n"
    );
    let _ = writeln!(
        out,
        "def check_ret_{tag}(message, ret):\n    if ret != 0:\n        raise Exception(\"{{}} failed ret={{}}\".format(message, ret))\n\n"
    );
    let class = format!("{}Sample{tag}", capital(model));
    let _ = writeln!(out, "class {class}:");
    let _ = writeln!(
        out,
        "    def __init__(self, device_id=0, model_id={}):",
        rng.range(1, 9)
    );
    let _ = writeln!(
        out,
        "        self.device_id = device_id\n        self.model_id = model_id"
    );
    let _ = writeln!(
        out,
        "        ret = acl.rt.set_device(device_id)\n        check_ret_{tag}(\"set_device\", ret)"
    );
    let _ = writeln!(
        out,
        "        self.stream, ret = acl.rt.create_stream()\n        check_ret_{tag}(\"create_stream\", ret)"
    );
    let _ = writeln!(
        out,
        "        self.ready, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)\n        check_ret_{tag}(\"create_event\", ret)"
    );
    let _ = writeln!(
        out,
        "        self.host, ret = acl.rt.malloc_host(IMAGE_BYTES)\n        check_ret_{tag}(\"malloc_host\", ret)"
    );
    let _ = writeln!(
        out,
        "        self.input, ret = acl.rt.malloc(IMAGE_BYTES, ACL_MEM_MALLOC_HUGE_FIRST)\n        check_ret_{tag}(\"malloc\", ret)"
    );
    let _ = writeln!(
        out,
        "        self.output, ret = acl.rt.malloc(IMAGE_BYTES, ACL_MEM_MALLOC_HUGE_FIRST)\n        check_ret_{tag}(\"malloc\", ret)"
    );
    let _ = writeln!(
        out,
        "        self.input_dataset = self._dataset_{tag}(self.input)\n        self.output_dataset = self._dataset_{tag}(self.output)\n"
    );
    let _ = writeln!(out, "    def _dataset_{tag}(self, ptr):");
    let _ = writeln!(
        out,
        "        dataset = acl.mdl.create_dataset()\n        buffer = acl.create_data_buffer(ptr, IMAGE_BYTES)"
    );
    let _ = writeln!(
        out,
        "        _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)\n        check_ret_{tag}(\"add_dataset_buffer\", ret)\n        return dataset\n"
    );
    let _ = writeln!(out, "    def infer_{tag}(self):");
    let _ = writeln!(
        out,
        "        ret = acl.rt.memcpy_async(self.input, IMAGE_BYTES, self.host, IMAGE_BYTES, ACL_MEMCPY_HOST_TO_DEVICE, 0)\n        check_ret_{tag}(\"memcpy_async\", ret)"
    );
    let _ = writeln!(
        out,
        "        ret = acl.rt.record_event(self.ready, 0)\n        check_ret_{tag}(\"record_event\", ret)"
    );
    let _ = writeln!(
        out,
        "        ret = acl.rt.stream_wait_event(self.stream, self.ready)\n        check_ret_{tag}(\"stream_wait_event\", ret)"
    );
    if bug != Bug::MissingReset {
        let _ = writeln!(
            out,
            "        ret = acl.rt.reset_event(self.ready, self.stream)\n        check_ret_{tag}(\"reset_event\", ret)"
        );
    }
    let _ = writeln!(
        out,
        "        ret = acl.mdl.execute_async(self.model_id, self.input_dataset, self.output_dataset, self.stream)\n        check_ret_{tag}(\"execute_async\", ret)"
    );
    let _ = writeln!(
        out,
        "        ret = acl.rt.memcpy_async(self.host, IMAGE_BYTES, self.output, IMAGE_BYTES, ACL_MEMCPY_DEVICE_TO_HOST, self.stream)\n        check_ret_{tag}(\"memcpy_async\", ret)"
    );
    if bug != Bug::MissingSync {
        let _ = writeln!(
            out,
            "        ret = acl.rt.synchronize_stream(self.stream)\n        check_ret_{tag}(\"synchronize_stream\", ret)"
        );
    }
    let _ = writeln!(
        out,
        "        result = acl.util.ptr_to_numpy(self.host, (IMAGE_BYTES // 4,), 11)\n        return np.argmax(result)\n"
    );
    let _ = writeln!(out, "    def release_{tag}(self):");
    let _ = writeln!(
        out,
        "        check_ret_{tag}(\"destroy_event\", acl.rt.destroy_event(self.ready))"
    );
    let _ = writeln!(
        out,
        "        check_ret_{tag}(\"free\", acl.rt.free(self.input))\n        check_ret_{tag}(\"free\", acl.rt.free(self.output))"
    );
    let _ = writeln!(
        out,
        "        check_ret_{tag}(\"free_host\", acl.rt.free_host(self.host))\n        check_ret_{tag}(\"destroy_stream\", acl.rt.destroy_stream(self.stream))\n\n"
    );
    let _ = writeln!(
        out,
        "def main():\n    sample = {class}()\n    labels = []\n    for _ in range(NUM_IMAGES):\n        labels.append(sample.infer_{tag}())\n    sample.release_{tag}()\n    return labels\n\n"
    );
    fill_to(&mut out, rng, tag, lines.saturating_sub(8));
    let _ = writeln!(out, "if __name__ == \"__main__\":\n    main()");
    out
}

fn torch_pipeline(rng: &mut Rng, model: &str, tag: &str, bug: Bug, lines: usize) -> String {
    let mut out = String::new();
    header(
        &mut out,
        rng,
        &format!("Prefetching inference pipeline for {model} on Ascend NPUs."),
    );
    let steps = rng.range(2, 4);
    let _ = writeln!(
        out,
        "import torch\nimport torch_npu  # noqa: F401\n\nHIDDEN = {}\n\n",
        rng.range(2, 64) * 128
    );
    let class = format!("{}Block{tag}", capital(model));
    let _ = writeln!(out, "class {class}(torch.nn.Module):");
    let _ = writeln!(out, "    def __init__(self, device):\n        super().__init__()");
    let _ = writeln!(
        out,
        "        self.w1 = torch.randn(HIDDEN, HIDDEN, device=device)\n        self.w2 = torch.randn(HIDDEN, HIDDEN, device=device)\n"
    );
    let act = rng.pick(&["gelu", "silu", "relu"]);
    let _ = writeln!(
        out,
        "    def forward(self, x):\n        h = torch.nn.functional.{act}(torch.matmul(x, self.w1))\n        return torch.matmul(h, self.w2)\n\n"
    );
    let runner = format!("{}Pipeline{tag}", capital(model));
    let _ = writeln!(out, "class {runner}:");
    let _ = writeln!(out, "    def __init__(self, device=\"npu:0\"):");
    let _ = writeln!(
        out,
        "        self.device = torch.device(device)\n        self.copy_stream = torch.npu.Stream()\n        self.compute_stream = torch.npu.Stream()"
    );
    let _ = writeln!(
        out,
        "        self.block = {class}(self.device)\n        self.compute_stream.wait_stream(torch.npu.current_stream())\n"
    );
    let _ = writeln!(
        out,
        "    def upload_{tag}(self, batch):\n        with torch.npu.stream(self.copy_stream):\n            return batch.to(self.device, non_blocking=True)\n"
    );
    let _ = writeln!(out, "    def run_{tag}(self, x):");
    if bug != Bug::MissingWait {
        let _ = writeln!(out, "        self.compute_stream.wait_stream(self.copy_stream)");
    }
    let _ = writeln!(
        out,
        "        with torch.npu.stream(self.compute_stream):\n            y = self.block(x)"
    );
    let _ = writeln!(
        out,
        "        torch.npu.current_stream().wait_stream(self.compute_stream)\n        return y.cpu()\n\n"
    );
    let _ = writeln!(
        out,
        "def serve_{tag}(steps={steps}):\n    pipe = {runner}()\n    results = []"
    );
    let _ = writeln!(
        out,
        "    for step in range(steps):\n        batch = torch.randn(8, HIDDEN).pin_memory()\n        x = pipe.upload_{tag}(batch)"
    );
    let _ = writeln!(
        out,
        "        results.append(pipe.run_{tag}(x).sum().item())\n    return results\n\n"
    );
    fill_to(&mut out, rng, tag, lines);
    out
}

fn vllm_runner(rng: &mut Rng, model: &str, tag: &str, bug: Bug, lines: usize) -> String {
    let mut out = String::new();
    header(
        &mut out,
        rng,
        &format!("Model runner for {model}: attention parameters updated on a side stream."),
    );
    let steps = rng.range(2, 4);
    let _ = writeln!(
        out,
        "import torch\nimport torch_npu  # noqa: F401\n\nMAX_NUM_REQS = {}\n\n",
        rng.range(1, 8) * 64
    );
    let class = format!("{}ModelRunner{tag}", capital(model));
    let _ = writeln!(out, "class {class}:");
    let _ = writeln!(out, "    def __init__(self, model, device=\"npu\"):");
    let _ = writeln!(
        out,
        "        self.device = torch.device(device)\n        self.model = model\n        self.update_stream = torch.npu.Stream()"
    );
    let _ = writeln!(
        out,
        "        self.params_ready = torch.npu.Event()\n        self.params_consumed = torch.npu.Event()"
    );
    let _ = writeln!(
        out,
        "        self.seq_lens_cpu = torch.zeros(MAX_NUM_REQS, dtype=torch.int32, pin_memory=True)"
    );
    let _ = writeln!(
        out,
        "        self.seq_lens = torch.empty(MAX_NUM_REQS, dtype=torch.int32, device=self.device)"
    );
    let _ = writeln!(
        out,
        "        self.input_ids = torch.zeros(MAX_NUM_REQS, dtype=torch.int64, device=self.device)\n"
    );
    let _ = writeln!(out, "    def _update_params_{tag}(self, seq_lens):");
    let _ = writeln!(
        out,
        "        num_reqs = len(seq_lens)\n        self.seq_lens_cpu[:num_reqs] = torch.tensor(seq_lens, dtype=torch.int32)"
    );
    let _ = writeln!(
        out,
        "        self.update_stream.wait_event(self.params_consumed)\n        with torch.npu.stream(self.update_stream):"
    );
    let _ = writeln!(
        out,
        "            self.seq_lens[:num_reqs].copy_(self.seq_lens_cpu[:num_reqs], non_blocking=True)\n            self.params_ready.record()\n"
    );
    let _ = writeln!(
        out,
        "    def execute_model_{tag}(self, seq_lens):\n        self._update_params_{tag}(seq_lens)"
    );
    if bug != Bug::MissingWait {
        let _ = writeln!(out, "        torch.npu.current_stream().wait_event(self.params_ready)");
    }
    let _ = writeln!(
        out,
        "        hidden_states = self.model(self.input_ids, self.seq_lens)\n        self.params_consumed.record()"
    );
    let _ = writeln!(
        out,
        "        logits = self.model.compute_logits(hidden_states)\n        return logits.argmax(dim=-1).cpu().tolist()\n\n"
    );
    let _ = writeln!(
        out,
        "def run_engine_{tag}(model, steps={steps}):\n    runner = {class}(model)\n    outputs = []"
    );
    let _ = writeln!(
        out,
        "    for step in range(steps):\n        outputs.append(runner.execute_model_{tag}([step + 1, {}, {}]))\n    return outputs\n\n",
        rng.range(1, 99),
        rng.range(1, 99)
    );
    fill_to(&mut out, rng, tag, lines);
    out
}

fn utility(rng: &mut Rng, tag: &str, lines: usize) -> String {
    let mut out = String::new();
    header(&mut out, rng, "Shared helpers: configuration, batching, formatting.");
    let _ = writeln!(out, "import json\nimport os\n\n");
    fill_to(&mut out, rng, tag, lines);
    out
}

struct Tree {
    files: usize,
    bytes: u64,
    sync_files: Vec<PathBuf>,
    buggy: BTreeSet<PathBuf>,
}

fn write_file(root: &Path, rel: &Path, text: &str, tree: &mut Tree) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
    std::fs::write(&path, text).expect("write");
    tree.files += 1;
    tree.bytes += text.len() as u64;
}

fn generate(root: &Path, files: usize, seed: u64) -> Tree {
    let mut rng = Rng(seed);
    let mut tree = Tree {
        files: 0,
        bytes: 0,
        sync_files: Vec::new(),
        buggy: BTreeSet::new(),
    };
    let mut n = 0;
    while tree.files < files {
        let model = format!("{}_{n}", rng.pick(MODELS));
        let tag = format!("m{n}");
        let kind = rng.below(10);
        let lines = rng.range(100, 600);
        let (rel, text, bug) = match kind {
            0..=2 => {
                let bug = pick_bug(&mut rng, &[Bug::MissingReset, Bug::MissingSync]);
                let rel = PathBuf::from(format!("samples/{model}/acl_{model}.py"));
                (rel, pyacl_sample(&mut rng, &model, &tag, bug, lines), Some(bug))
            }
            3..=4 => {
                let bug = pick_bug(&mut rng, &[Bug::MissingWait]);
                let rel = PathBuf::from(format!("models/{model}/pipeline.py"));
                (rel, torch_pipeline(&mut rng, &model, &tag, bug, lines), Some(bug))
            }
            5..=6 => {
                let bug = pick_bug(&mut rng, &[Bug::MissingWait]);
                let rel = PathBuf::from(format!("worker/{model}_runner.py"));
                (rel, vllm_runner(&mut rng, &model, &tag, bug, lines), Some(bug))
            }
            _ => {
                let rel = PathBuf::from(format!("utils/{}_{n}.py", rng.pick(WORDS)));
                (rel, utility(&mut rng, &tag, lines), None)
            }
        };
        write_file(root, &rel, &text, &mut tree);
        if let Some(bug) = bug {
            tree.sync_files.push(rel.clone());
            if bug != Bug::None {
                tree.buggy.insert(rel);
            }
        }
        n += 1;
    }
    tree
}

/// The peer: its name and the command on a folder.
fn peer() -> Option<(&'static str, Vec<String>)> {
    let works = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    if works("ruff", &["--version"]) {
        let version = Command::new("ruff")
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        println!("peer: {version} (`ruff check --no-cache --exit-zero --quiet DIR`)");
        return Some((
            "ruff",
            vec![
                "ruff".into(),
                "check".into(),
                "--no-cache".into(),
                "--exit-zero".into(),
                "--quiet".into(),
            ],
        ));
    }
    if works("python3", &["--version"]) {
        println!("peer: python3 -m compileall (ruff not found)");
        return Some((
            "compileall",
            vec![
                "python3".into(),
                "-m".into(),
                "compileall".into(),
                "-q".into(),
                "-f".into(),
            ],
        ));
    }
    None
}

struct Args {
    files: usize,
    seed: u64,
    generate_only: Option<PathBuf>,
    tree_runs: usize,
    single_runs: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        files: DEFAULT_FILES,
        seed: DEFAULT_SEED,
        generate_only: None,
        tree_runs: TREE_RUNS,
        single_runs: SINGLE_RUNS,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--files" => args.files = it.next().and_then(|v| v.parse().ok()).expect("--files N"),
            "--seed" => args.seed = it.next().and_then(|v| v.parse().ok()).expect("--seed S"),
            "--runs" => args.tree_runs = it.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--single-runs" => args.single_runs = it.next().and_then(|v| v.parse().ok()).expect("--single-runs N"),
            "--generate-only" => args.generate_only = Some(PathBuf::from(it.next().expect("--generate-only DIR"))),
            _ => {}
        }
    }
    args
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let args = parse_args();
    if let Some(dir) = &args.generate_only {
        let tree = generate(dir, args.files, args.seed);
        println!(
            "wrote {} files ({:.1} MB) to {}: {} sync programs, {} with a bug",
            tree.files,
            tree.bytes as f64 / 1e6,
            dir.display(),
            tree.sync_files.len(),
            tree.buggy.len()
        );
        return;
    }
    let binary = std::env::var_os("SYNCGUARD_BENCH_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_syncguard")), PathBuf::from);
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().join("inference");
    let start = Instant::now();
    let tree = generate(&root, args.files, args.seed);
    let mb = tree.bytes as f64 / 1e6;
    let lines: usize = walk_lines(&root);
    println!(
        "python_lint_throughput: seed {}, {} files ({:.1} MB, {:.2} M lines; {} sync programs, {} with a bug) generated in {:.1} s",
        args.seed,
        tree.files,
        mb,
        lines as f64 / 1e6,
        tree.sync_files.len(),
        tree.buggy.len(),
        start.elapsed().as_secs_f64()
    );
    println!("syncguard: {}", binary.display());

    // Checkability and the seeded bugs (one run, untimed).
    let (_, explained) = syncguard_json(&binary, &["--explain"], &root);
    let diagnostics = explained["diagnostics"].as_array().expect("diagnostics");
    let unreadable: Vec<&serde_json::Value> = diagnostics
        .iter()
        .filter(|d| matches!(d["code"].as_str(), Some("SG001" | "SG003" | "SG004")))
        .collect();
    for d in unreadable.iter().take(10) {
        eprintln!(
            "  {} {}:{}: {}",
            d["code"].as_str().unwrap_or("?"),
            d["file"].as_str().unwrap_or("?"),
            d["line"],
            d["message"].as_str().unwrap_or("?")
        );
    }
    assert!(
        unreadable.is_empty(),
        "{} SG001/SG003/SG004 diagnostics in the generated tree",
        unreadable.len()
    );
    let flagged: BTreeSet<PathBuf> = diagnostics
        .iter()
        .filter(|d| matches!(d["severity"].as_str(), Some("error" | "warning")))
        .filter_map(|d| d["file"].as_str())
        .map(|file| {
            Path::new(file)
                .strip_prefix(&root)
                .map(Path::to_path_buf)
                .unwrap_or_default()
        })
        .collect();
    let missed: Vec<&PathBuf> = tree.buggy.difference(&flagged).collect();
    let extra: Vec<&PathBuf> = flagged.difference(&tree.buggy).collect();
    assert!(missed.is_empty(), "seeded bugs not found: {missed:?}");
    assert!(extra.is_empty(), "findings in files without a seeded bug: {extra:?}");
    println!("all {} seeded bugs found, no other file flagged", tree.buggy.len());

    // The tree, end to end: syncguard and the peer alternately.
    let peer = peer();
    let mut samples = Vec::new();
    let mut peer_samples = Vec::new();
    for _ in 0..args.tree_runs {
        let (elapsed, _) = syncguard_json(&binary, &[], &root);
        samples.push(elapsed);
        if let Some((_, command)) = &peer {
            let (elapsed, output) = time_command(Command::new(&command[0]).args(&command[1..]).arg(&root));
            assert!(
                output.status.success(),
                "{} failed: {}",
                command.join(" "),
                String::from_utf8_lossy(&output.stderr)
            );
            peer_samples.push(elapsed);
        }
    }
    let sg = median(samples.clone());
    // One typical sync file alone.
    let mut sync_files = tree.sync_files.clone();
    sync_files.sort_by_key(|rel| std::fs::metadata(root.join(rel)).map(|m| m.len()).unwrap_or(0));
    let typical = root.join(&sync_files[sync_files.len() / 2]);
    let single: Vec<Duration> = (0..args.single_runs)
        .map(|_| syncguard_json(&binary, &[], &typical).0)
        .collect();
    println!();
    println!(
        "| tool | files | MB | s (median of {}) | files/s | MB/s | single file |",
        args.tree_runs
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "| syncguard | {} | {:.1} | {:.2} | {:.1} | {:.2} | {:.1} ms |",
        tree.files,
        mb,
        secs(sg),
        tree.files as f64 / secs(sg),
        mb / secs(sg),
        secs(median(single)) * 1e3
    );
    if let Some((name, _)) = &peer {
        let p = median(peer_samples.clone());
        println!(
            "| {name} | {} | {:.1} | {:.2} | {:.1} | {:.2} | |",
            tree.files,
            mb,
            secs(p),
            tree.files as f64 / secs(p),
            mb / secs(p)
        );
        println!();
        println!("ratio, syncguard / {name}: {:.2}x the throughput", secs(p) / secs(sg));
    }
    let runs = |v: &[Duration]| {
        v.iter()
            .map(|d| format!("{:.2}", secs(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("runs (s): syncguard {}; peer {}", runs(&samples), runs(&peer_samples));
}

fn walk_lines(root: &Path) -> usize {
    let mut total = 0;
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                total += text.lines().count();
            }
        }
    }
    total
}
