//! Checking a job's PyTorch NCCL Flight Recorder dumps post mortem: `syncguard check
//! DIR` end to end on a generated folder of one dump per rank, against Python loading
//! every dump of the folder (`pickle.load`, or `json.load` for `--format json`, in one
//! interpreter), in one paired run (alternating, so both see the same machine state).
//!
//! ```sh
//! cargo bench --bench flight_recorder_read                      # 4,096 ranks, 3 runs each
//! cargo bench --bench flight_recorder_read -- --format json --entries 200 --runs 5
//! cargo bench --bench flight_recorder_read -- --scaling-ranks 1024,2048,4096
//! cargo bench --bench flight_recorder_read -- --scaling-entries 250,500,1000,2000
//! cargo bench --bench flight_recorder_read -- --keep /tmp/fr-dumps   # keep the folder
//! ```
//!
//! The job is 4,096 ranks (`--ranks`): tensor parallel 8, pipeline parallel 2, data
//! parallel 256. Each rank's `pg_config` names the world group and its own tensor-,
//! pipeline- and data-parallel groups (2,577 groups in the job), and each training step
//! records 9 entries on every rank: four tensor-parallel `all_reduce`s, a send and a
//! receive with the pipeline peer, a data-parallel reduce-scatter and all-gather, and a
//! world `all_reduce` of the loss. Entries carry the fields PyTorch writes (dump version
//! 2.10), and in pickle a Python stack of 8 frames, written as `torch::jit::Pickler`
//! writes (protocol 2; every string, and every frame's dict, memoized on first use and
//! referenced after), with plain dict, list and tuple opcodes only, so Python's
//! `pickle.load` reads it without torch.
//!
//! Python keeps every dump, by file name, as `fr_trace`'s loader (`read_dir`) keeps
//! them, with the cyclic garbage collector off as `read_dir` turns it off; with it on
//! (`--python-gc`) loading takes several times longer.
//!
//! `--entries` is per rank (rounded up to whole steps): 1,000 by default, not the 2,000
//! `TORCH_NCCL_TRACE_BUFFER_SIZE` is often given, because Python holds a loaded entry
//! in about 2 KB: 4,096 ranks of 2,000 entries (8.2M) take it near 17 GB, too close to
//! what a 24 GB machine shared with other work has free; 1,000 take it to about 8 GB
//! and a paired run to a couple of minutes on 2 cores. The scaling runs time syncguard
//! alone (no Python), so they go to 2,000: `--scaling-ranks` at `--entries` per rank,
//! `--scaling-entries` at `--ranks`, to show its peak memory against the entries.
//!
//! The job hangs: one rank (`--culprit`, 1,234 by default) stopped on its CPU between
//! the last step's data-parallel all-gather and the world `all_reduce` every other rank
//! entered (and waits in). The bench asserts that syncguard reports exactly that, SG904
//! naming the culprit, and nothing else.
//!
//! The binary is `target/release/syncguard` (built by `cargo bench`);
//! `SYNCGUARD_BENCH_BIN=PATH` times another one; `PYTHON` names the interpreter
//! (default `python3`). CPU time and peak memory need GNU time (`/usr/bin/time`, Debian
//! package `time`); without it only wall times are shown.

#[path = "common/measured.rs"]
mod measured;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use measured::{Measured, format_bytes, median, on_path, peak_rss_measurable, run_measured};

const TENSOR_PARALLEL: u32 = 8;
const PIPELINE_PARALLEL: u32 = 2;
const ENTRIES_PER_STEP: usize = 9;
/// The world, each tensor-, pipeline- and data-parallel group's sizes follow from it.
const DEFAULT_RANKS: u32 = 4096;
/// Per rank: see the module's comment for why not 2,000.
const DEFAULT_ENTRIES: usize = 1000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum DumpFormat {
    Pickle,
    Json,
}

impl DumpFormat {
    fn name(self) -> &'static str {
        match self {
            DumpFormat::Pickle => "pickle",
            DumpFormat::Json => "JSON",
        }
    }
}

struct Job {
    ranks: u32,
    steps: usize,
    culprit: u32,
    format: DumpFormat,
}

fn main() {
    let mut ranks = DEFAULT_RANKS;
    let mut entries = DEFAULT_ENTRIES;
    let mut runs = 3usize;
    let mut format = DumpFormat::Pickle;
    let mut culprit = 1234u32;
    let mut keep: Option<PathBuf> = None;
    let mut python_gc = false;
    let mut scaling_ranks: Vec<usize> = Vec::new();
    let mut scaling_entries: Vec<usize> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        let list = |text: String| -> Vec<usize> {
            text.split(',')
                .map(|n| n.trim().parse().expect("a list N,N,..."))
                .collect()
        };
        match arg.as_str() {
            "--ranks" => ranks = value().parse().expect("--ranks N"),
            "--entries" => entries = value().parse().expect("--entries N"),
            "--runs" => runs = value().parse().expect("--runs N"),
            "--culprit" => culprit = value().parse().expect("--culprit RANK"),
            "--format" => {
                format = match value().as_str() {
                    "pickle" => DumpFormat::Pickle,
                    "json" => DumpFormat::Json,
                    other => panic!("--format pickle|json, not {other}"),
                }
            }
            "--python-gc" => python_gc = true,
            "--scaling-ranks" => scaling_ranks = list(value()),
            "--scaling-entries" => scaling_entries = list(value()),
            "--keep" => keep = Some(PathBuf::from(value())),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let group = TENSOR_PARALLEL * PIPELINE_PARALLEL;
    assert!(
        ranks >= group && ranks.is_multiple_of(group),
        "--ranks must be a multiple of {group} (tensor parallel x pipeline parallel)"
    );
    let binary = std::env::var_os("SYNCGUARD_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_syncguard")));
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let python = on_path(&python).unwrap_or_else(|| PathBuf::from(python));
    let scratch = tempfile::tempdir().expect("a temporary folder");
    if !peak_rss_measurable() {
        println!("GNU time (/usr/bin/time) is missing: CPU time and peak memory are not measured");
    }
    let steps = |entries: usize| entries.div_ceil(ENTRIES_PER_STEP).max(1);

    if !scaling_ranks.is_empty() || !scaling_entries.is_empty() {
        // Ranks at `--entries` each, then entries per rank at `--ranks`.
        let jobs = scaling_ranks
            .iter()
            .map(|&n| (n as u32, steps(entries)))
            .chain(scaling_entries.iter().map(|&n| (ranks, steps(n))));
        println!(
            "scaling: `syncguard check --format concise` alone, median of {runs}, {}",
            format.name()
        );
        println!("| ranks | entries per rank | entries | dumps | wall | CPU | peak memory | per entry |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (n, steps) in jobs {
            assert!(
                n >= group && n.is_multiple_of(group),
                "{n} ranks: not a multiple of {group}"
            );
            let job = Job {
                ranks: n,
                steps,
                culprit: culprit % n,
                format,
            };
            let dir = scratch.path().join(format!("scaling-{n}-{steps}"));
            let written = write_job(&dir, &job);
            let samples: Vec<Measured> = (0..runs).map(|_| check(&binary, &dir, &job, scratch.path())).collect();
            let wall = median(samples.iter().map(|m| m.wall).collect());
            let cpu: Vec<Duration> = samples.iter().filter_map(|m| m.cpu).collect();
            let peak = samples.iter().filter_map(|m| m.peak_rss).max();
            println!(
                "| {n} | {} | {} | {} | {:.2} s | {} | {} | {} |",
                steps * ENTRIES_PER_STEP,
                written.entries,
                format_bytes(Some(written.bytes)),
                wall.as_secs_f64(),
                seconds((!cpu.is_empty()).then(|| median(cpu))),
                format_bytes(peak),
                peak.map_or("?".to_string(), |p| format!("{} B", p / written.entries as u64)),
            );
            std::fs::remove_dir_all(&dir).expect("the scaling folder is removed");
        }
        return;
    }

    let job = Job {
        ranks,
        steps: steps(entries),
        culprit: culprit % ranks,
        format,
    };
    let dir = keep.unwrap_or_else(|| scratch.path().join("dumps"));
    let written = write_job(&dir, &job);
    println!(
        "{ranks} ranks, {} entries ({} per rank), {} of {}; {runs} paired runs; binary {}",
        written.entries,
        job.steps * ENTRIES_PER_STEP,
        format_bytes(Some(written.bytes)),
        format.name(),
        binary.display()
    );
    let loader = match format {
        DumpFormat::Pickle => "pickle",
        DumpFormat::Json => "json",
    };
    // Every dump kept, by file name, as `fr_trace`'s `read_dir` keeps them, and with the
    // cyclic garbage collector off while they load, as `read_dir` turns it off (it would
    // walk every dict loaded so far, again and again: several times the loading itself).
    let load_all = format!(
        "import gc, {loader}, os, sys\n\
         {}\n\
         folder = sys.argv[1]\n\
         dumps = {{}}\n\
         for name in sorted(os.listdir(folder)):\n    \
             with open(os.path.join(folder, name), 'rb') as f:\n        \
                 dumps[name] = {loader}.load(f)\n\
         assert len(dumps) == {ranks}\n",
        if python_gc { "pass" } else { "gc.disable()" }
    );
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..runs {
        ours.push(check(&binary, &dir, &job, scratch.path()));
        let measured = run_measured(
            &python,
            &[OsStr::new("-c"), OsStr::new(&load_all), dir.as_os_str()],
            scratch.path(),
        );
        assert!(
            measured.output.status.success(),
            "python failed to load the dumps: {}",
            String::from_utf8_lossy(&measured.output.stderr)
        );
        theirs.push(measured);
    }
    let summarize = |name: &str, samples: &[Measured]| -> (f64, Option<f64>) {
        let wall = median(samples.iter().map(|m| m.wall).collect()).as_secs_f64();
        let cpu: Vec<Duration> = samples.iter().filter_map(|m| m.cpu).collect();
        let cpu = (!cpu.is_empty()).then(|| median(cpu).as_secs_f64());
        let peak = samples.iter().filter_map(|m| m.peak_rss).max();
        println!(
            "| {name} | {wall:.3} s | {} | {} |",
            cpu.map_or("?".to_string(), |c| format!("{c:.3} s")),
            format_bytes(peak)
        );
        (wall, cpu)
    };
    println!("| | wall (median) | CPU, user + sys (median) | peak memory (largest) |");
    println!("|---|---:|---:|---:|");
    let (our_wall, our_cpu) = summarize("`syncguard check --format concise`", &ours);
    let (their_wall, their_cpu) = summarize(
        &format!(
            "`python3`: `{loader}.load` of every dump (garbage collector {})",
            if python_gc { "on" } else { "off" }
        ),
        &theirs,
    );
    print!("ratio: {:.2}x in wall time", our_wall / their_wall);
    if let (Some(ours), Some(theirs)) = (our_cpu, their_cpu) {
        print!(", {:.2}x in CPU time", ours / theirs);
    }
    println!(" (goal < 0.5x)");
}

fn seconds(duration: Option<Duration>) -> String {
    duration.map_or("?".to_string(), |d| format!("{:.2} s", d.as_secs_f64()))
}

/// `syncguard check --format concise DIR`, measured, with its findings asserted: the
/// culprit never entered the last world `all_reduce`, and nothing else is reported.
fn check(binary: &Path, dir: &Path, job: &Job, scratch: &Path) -> Measured {
    let measured = run_measured(
        binary,
        &[
            OsStr::new("check"),
            OsStr::new("--format"),
            OsStr::new("concise"),
            dir.as_os_str(),
        ],
        scratch,
    );
    let stdout = String::from_utf8_lossy(&measured.output.stdout);
    // `check` exits 1 on findings; anything else is a crash or an unreadable file.
    assert!(
        measured.output.status.code() == Some(1),
        "syncguard check: {}\n{stdout}\n{}",
        measured.output.status,
        String::from_utf8_lossy(&measured.output.stderr)
    );
    let findings: Vec<&str> = stdout.lines().filter(|line| line.contains(": SG9")).collect();
    let world_seq = job.steps;
    let culprit_file = format!("nccl_trace_rank_{}:", job.culprit);
    let expected = format!(
        "rank {} never entered collective #{world_seq} (nccl:all_reduce) of process group `0` (default_pg)",
        job.culprit
    );
    assert!(
        matches!(findings.as_slice(), [only] if only.contains(&culprit_file) && only.contains(": SG904 ") && only.contains(&expected)),
        "expected one finding, SG904 `{expected}` in the culprit's dump; syncguard reported:\n{stdout}"
    );
    measured
}

struct Written {
    entries: usize,
    bytes: u64,
}

/// Write one dump per rank of `job` into `dir` (created, emptied of older dumps).
fn write_job(dir: &Path, job: &Job) -> Written {
    std::fs::create_dir_all(dir).expect("the dump folder is created");
    let layout = Layout::new(job.ranks);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let totals: Vec<(usize, u64)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|worker| {
                let layout = &layout;
                scope.spawn(move || {
                    let mut entries = 0;
                    let mut bytes = 0;
                    for rank in (worker..job.ranks).step_by(threads as usize) {
                        let history = history(layout, job, rank);
                        let data = match job.format {
                            DumpFormat::Pickle => pickle_dump(layout, rank, &history),
                            DumpFormat::Json => json_dump(layout, rank, &history),
                        };
                        // PyTorch's name: `TORCH_NCCL_DEBUG_INFO_TEMP_FILE` + rank.
                        std::fs::write(dir.join(format!("nccl_trace_rank_{rank}")), &data)
                            .expect("the dump is written");
                        entries += history.len();
                        bytes += data.len() as u64;
                    }
                    (entries, bytes)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a writer")).collect()
    });
    Written {
        entries: totals.iter().map(|t| t.0).sum(),
        bytes: totals.iter().map(|t| t.1).sum(),
    }
}

/// Where each rank sits, and the names PyTorch gives its groups: the world is `0`, then
/// groups are numbered in the order every rank creates them (tensor-, pipeline-, then
/// data-parallel).
struct Layout {
    ranks: u32,
    data_parallel: u32,
    world_ranks: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    World,
    Tensor,
    Pipeline,
    Data,
}

impl Layout {
    fn new(ranks: u32) -> Self {
        let members: Vec<String> = (0..ranks).map(|r| r.to_string()).collect();
        Layout {
            ranks,
            data_parallel: ranks / (TENSOR_PARALLEL * PIPELINE_PARALLEL),
            world_ranks: format!("[{}]", members.join(", ")),
        }
    }

    /// `rank = dp * 16 + pp * 8 + tp`.
    fn coordinates(&self, rank: u32) -> (u32, u32, u32) {
        let tp = rank % TENSOR_PARALLEL;
        let pp = rank / TENSOR_PARALLEL % PIPELINE_PARALLEL;
        let dp = rank / (TENSOR_PARALLEL * PIPELINE_PARALLEL);
        (dp, pp, tp)
    }

    /// The group's name, description and global ranks, as `pg_config` holds them.
    fn config(&self, rank: u32, group: Group) -> (String, &'static str, String) {
        let (dp, pp, tp) = self.coordinates(rank);
        let list = |ranks: Vec<u32>| {
            let ranks: Vec<String> = ranks.iter().map(u32::to_string).collect();
            format!("[{}]", ranks.join(", "))
        };
        let stride = TENSOR_PARALLEL * PIPELINE_PARALLEL;
        let tensor_groups = self.ranks / TENSOR_PARALLEL;
        let pipeline_groups = self.ranks / PIPELINE_PARALLEL;
        match group {
            Group::World => ("0".to_string(), "default_pg", self.world_ranks.clone()),
            Group::Tensor => (
                (1 + dp * PIPELINE_PARALLEL + pp).to_string(),
                "tensor_parallel",
                list(
                    (0..TENSOR_PARALLEL)
                        .map(|t| dp * stride + pp * TENSOR_PARALLEL + t)
                        .collect(),
                ),
            ),
            Group::Pipeline => (
                (1 + tensor_groups + dp * TENSOR_PARALLEL + tp).to_string(),
                "pipeline_parallel",
                list(
                    (0..PIPELINE_PARALLEL)
                        .map(|p| dp * stride + p * TENSOR_PARALLEL + tp)
                        .collect(),
                ),
            ),
            Group::Data => (
                (1 + tensor_groups + pipeline_groups + pp * TENSOR_PARALLEL + tp).to_string(),
                "data_parallel",
                list(
                    (0..self.data_parallel)
                        .map(|d| d * stride + pp * TENSOR_PARALLEL + tp)
                        .collect(),
                ),
            ),
        }
    }
}

/// One recorded operation of a rank.
struct Record {
    group: Group,
    /// `all_reduce`, `send 0->1`.
    op: String,
    collective_seq_id: u64,
    p2p_seq_id: u64,
    op_id: u64,
    is_p2p: bool,
    input_sizes: Vec<i64>,
    output_sizes: Vec<i64>,
    dtype: &'static str,
    completed: bool,
    /// The Python function that called it.
    caller: (&'static str, &'static str, i64),
}

/// One rank's ring buffer: every step's operations, in the order the rank issues them.
/// In the last step every rank waits in the world `all_reduce` (started), except the
/// culprit, which never entered it.
fn history(layout: &Layout, job: &Job, rank: u32) -> Vec<Record> {
    let (_, stage, _) = layout.coordinates(rank);
    let hidden: Vec<i64> = vec![8, 2048, 4096];
    let flat = 8 * 2048 * 4096 / i64::from(TENSOR_PARALLEL);
    let shard = flat / i64::from(layout.data_parallel);
    // Per group: its collectives and its point-to-point operations so far.
    let mut counters = [(0u64, 0u64); 4];
    let mut records = Vec::with_capacity(job.steps * ENTRIES_PER_STEP);
    let mut record = |records: &mut Vec<Record>,
                      group: Group,
                      op: String,
                      input_sizes: Vec<i64>,
                      output_sizes: Vec<i64>,
                      dtype: &'static str,
                      caller: (&'static str, &'static str, i64)| {
        let is_p2p = op.starts_with("send") || op.starts_with("recv");
        let counter = &mut counters[group as usize];
        if is_p2p {
            counter.1 += 1;
        } else {
            counter.0 += 1;
        }
        let (collective, p2p) = *counter;
        records.push(Record {
            group,
            op,
            collective_seq_id: collective,
            p2p_seq_id: p2p,
            op_id: collective + p2p,
            is_p2p,
            input_sizes,
            output_sizes,
            dtype,
            completed: true,
            caller,
        });
    };
    let forward = ("forward", "/workspace/model/parallel_layers.py", 412);
    let backward = ("backward", "/workspace/model/parallel_layers.py", 468);
    let pipeline = ("_communicate", "/workspace/model/pipeline.py", 131);
    let optimizer = ("step", "/workspace/model/distributed_optimizer.py", 588);
    let loss = ("reduce_loss", "/workspace/train.py", 207);
    for step in 0..job.steps {
        let last = step + 1 == job.steps;
        let (peer_send, peer_recv) = if stage == 0 {
            ("send 0->1", "recv 0<-1")
        } else {
            ("send 1->0", "recv 1<-0")
        };
        // The activations' collectives and pipeline transfers, in the order a stage issues
        // them: the last stage receives before its forward pass and sends after its
        // backward pass; the first sends and receives between the two.
        let mut activations = Vec::with_capacity(7);
        if stage == 1 {
            activations.push((Group::Pipeline, peer_recv, pipeline));
        }
        activations.extend([(Group::Tensor, "all_reduce", forward); 2]);
        if stage == 0 {
            activations.extend([
                (Group::Pipeline, peer_send, pipeline),
                (Group::Pipeline, peer_recv, pipeline),
            ]);
        }
        activations.extend([(Group::Tensor, "all_reduce", backward); 2]);
        if stage == 1 {
            activations.push((Group::Pipeline, peer_send, pipeline));
        }
        for (group, op, caller) in activations {
            record(
                &mut records,
                group,
                op.into(),
                hidden.clone(),
                hidden.clone(),
                "BFloat16",
                caller,
            );
        }
        record(
            &mut records,
            Group::Data,
            "_reduce_scatter_base".into(),
            vec![flat],
            vec![shard],
            "Float",
            optimizer,
        );
        record(
            &mut records,
            Group::Data,
            "_allgather_base".into(),
            vec![shard],
            vec![flat],
            "BFloat16",
            optimizer,
        );
        if last && rank == job.culprit {
            break;
        }
        record(
            &mut records,
            Group::World,
            "all_reduce".into(),
            vec![1],
            vec![1],
            "Float",
            loss,
        );
        if last {
            records.last_mut().expect("just recorded").completed = false;
        }
    }
    records
}

/// The Python stack of an entry, innermost first: torch's frames, then the caller's.
fn frames(caller: (&'static str, &'static str, i64), op: &str) -> [(&'static str, &'static str, i64); 8] {
    let c10d = "/usr/local/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py";
    let logger = "/usr/local/lib/python3.11/site-packages/torch/distributed/c10d_logger.py";
    let module = "/usr/local/lib/python3.11/site-packages/torch/nn/modules/module.py";
    let api = match op.split(' ').next().unwrap_or(op) {
        "send" => ("isend", c10d, 2158),
        "recv" => ("irecv", c10d, 2203),
        "_reduce_scatter_base" => ("reduce_scatter_tensor", c10d, 4186),
        "_allgather_base" => ("all_gather_into_tensor", c10d, 3710),
        _ => ("all_reduce", c10d, 2501),
    };
    [
        api,
        ("wrapper", logger, 83),
        caller,
        ("_call_impl", module, 1562),
        ("_wrapped_call_impl", module, 1553),
        ("forward_backward_step", "/workspace/model/schedules.py", 276),
        ("train_step", "/workspace/train.py", 342),
        ("main", "/workspace/train.py", 611),
    ]
}

/// Protocol 2 as `torch::jit::Pickler` writes it: strings memoized on first use
/// (`BINPUT`, `LONG_BINPUT` past 255) and fetched again after (`BINGET`, `LONG_BINGET`),
/// dicts as `EMPTY_DICT MARK ... SETITEMS`, lists as `EMPTY_LIST MARK ... APPENDS`,
/// tuples as `MARK ... TUPLE`, the smallest integer opcode that fits. A frame's dict is
/// one object shared by every entry whose stack holds it (PyTorch builds one dict per
/// distinct frame), so it is memoized too.
struct Pickler {
    out: Vec<u8>,
    next_memo: u32,
    strings: HashMap<String, u32>,
    frames: HashMap<(&'static str, &'static str, i64), u32>,
}

impl Pickler {
    fn new() -> Self {
        Pickler {
            out: vec![0x80, 2],
            next_memo: 0,
            strings: HashMap::new(),
            frames: HashMap::new(),
        }
    }

    fn finish(mut self) -> Vec<u8> {
        self.out.push(b'.');
        self.out
    }

    fn memo_get(&mut self, id: u32) {
        match u8::try_from(id) {
            Ok(id) => self.out.extend([b'h', id]),
            Err(_) => {
                self.out.push(b'j');
                self.out.extend(id.to_le_bytes());
            }
        }
    }

    /// Memoize what was just written; its memo id.
    fn memo_put(&mut self) -> u32 {
        let id = self.next_memo;
        self.next_memo += 1;
        match u8::try_from(id) {
            Ok(id) => self.out.extend([b'q', id]),
            Err(_) => {
                self.out.push(b'r');
                self.out.extend(id.to_le_bytes());
            }
        }
        id
    }

    fn str(&mut self, text: &str) {
        if let Some(&id) = self.strings.get(text) {
            self.memo_get(id);
            return;
        }
        self.out.push(b'X');
        self.out.extend((text.len() as u32).to_le_bytes());
        self.out.extend(text.as_bytes());
        let id = self.memo_put();
        self.strings.insert(text.to_string(), id);
    }

    fn frame(&mut self, frame: (&'static str, &'static str, i64)) {
        if let Some(&id) = self.frames.get(&frame) {
            self.memo_get(id);
            return;
        }
        let (function, file, line) = frame;
        self.dict_start();
        self.key("name");
        self.str(function);
        self.key("filename");
        self.str(file);
        self.key("line");
        self.int(line);
        self.dict_end();
        let id = self.memo_put();
        self.frames.insert(frame, id);
    }

    fn int(&mut self, value: i64) {
        if let Ok(byte) = u8::try_from(value) {
            self.out.extend([b'K', byte]);
        } else if let Ok(short) = u16::try_from(value) {
            self.out.push(b'M');
            self.out.extend(short.to_le_bytes());
        } else if let Ok(int) = i32::try_from(value) {
            self.out.push(b'J');
            self.out.extend(int.to_le_bytes());
        } else {
            self.out.extend([0x8a, 8]);
            self.out.extend(value.to_le_bytes());
        }
    }

    fn float(&mut self, value: f64) {
        self.out.push(b'G');
        self.out.extend(value.to_be_bytes());
    }

    fn bool(&mut self, value: bool) {
        self.out.push(if value { 0x88 } else { 0x89 });
    }

    fn none(&mut self) {
        self.out.push(b'N');
    }

    fn dict_start(&mut self) {
        self.out.extend([b'}', b'(']);
    }

    fn dict_end(&mut self) {
        self.out.push(b'u');
    }

    fn list_start(&mut self) {
        self.out.extend([b']', b'(']);
    }

    fn list_end(&mut self) {
        self.out.push(b'e');
    }

    fn tuple_start(&mut self) {
        self.out.push(b'(');
    }

    fn tuple_end(&mut self) {
        self.out.push(b't');
    }

    fn key(&mut self, key: &str) {
        self.str(key);
    }

    fn sizes(&mut self, dims: &[i64]) {
        self.list_start();
        self.list_start();
        for &dim in dims {
            self.int(dim);
        }
        self.list_end();
        self.list_end();
    }

    fn strings(&mut self, items: &[&str]) {
        self.list_start();
        for item in items {
            self.str(item);
        }
        self.list_end();
    }
}

/// Nanoseconds since the epoch at which `record` was created (one per 25 ms).
fn created_ns(record: usize) -> i64 {
    1_767_225_600_000_000_000 + record as i64 * 25_000_000
}

fn rank_groups(layout: &Layout, rank: u32) -> Vec<(String, &'static str, String)> {
    [Group::World, Group::Tensor, Group::Pipeline, Group::Data]
        .into_iter()
        .map(|group| layout.config(rank, group))
        .collect()
}

/// Each group's last enqueued and last completed collective, as `pg_status` says them.
fn pg_status(groups: &[(String, &'static str, String)], history: &[Record]) -> Vec<(String, u64, u64)> {
    let mut status: Vec<(String, u64, u64)> = groups.iter().map(|(name, _, _)| (name.clone(), 0, 0)).collect();
    for r in history.iter().filter(|r| !r.is_p2p) {
        let slot = &mut status[r.group as usize];
        slot.1 = slot.1.max(r.collective_seq_id);
        if r.completed {
            slot.2 = slot.2.max(r.collective_seq_id);
        }
    }
    status
}

fn pickle_dump(layout: &Layout, rank: u32, history: &[Record]) -> Vec<u8> {
    let groups = rank_groups(layout, rank);
    let mut p = Pickler::new();
    p.dict_start();
    p.key("version");
    p.str("2.10");
    p.key("comm_lib_version");
    p.str("2.21.5");
    p.key("pg_config");
    p.dict_start();
    for (name, desc, ranks) in &groups {
        p.key(name);
        p.dict_start();
        p.key("name");
        p.str(name);
        p.key("desc");
        p.str(desc);
        p.key("ranks");
        p.str(ranks);
        p.dict_end();
    }
    p.dict_end();
    p.key("pg_status");
    p.dict_start();
    for (name, enqueued, completed) in pg_status(&groups, history) {
        p.key(&name);
        p.dict_start();
        p.key("last_enqueued_collective");
        p.str(&enqueued.to_string());
        p.key("last_started_collective");
        p.str(&enqueued.to_string());
        p.key("last_completed_collective");
        p.str(&completed.to_string());
        p.dict_end();
    }
    p.dict_end();
    p.key("entries");
    p.list_start();
    for (id, r) in history.iter().enumerate() {
        let (name, desc, _) = &groups[r.group as usize];
        p.dict_start();
        p.key("record_id");
        p.int(id as i64);
        p.key("pg_id");
        p.int(name.parse().expect("a group number"));
        p.key("process_group");
        p.tuple_start();
        p.str(name);
        p.str(desc);
        p.tuple_end();
        p.key("collective_seq_id");
        p.int(r.collective_seq_id as i64);
        p.key("p2p_seq_id");
        p.int(r.p2p_seq_id as i64);
        p.key("op_id");
        p.int(r.op_id as i64);
        p.key("profiling_name");
        p.str(&format!("nccl:{}", r.op));
        p.key("time_created_ns");
        p.int(created_ns(id));
        p.key("duration_ms");
        if r.completed {
            p.float(1.5 + (id % 7) as f64 * 0.25);
        } else {
            p.none();
        }
        p.key("input_sizes");
        p.sizes(&r.input_sizes);
        p.key("input_dtypes");
        p.strings(&[r.dtype]);
        p.key("output_sizes");
        p.sizes(&r.output_sizes);
        p.key("output_dtypes");
        p.strings(&[r.dtype]);
        p.key("state");
        p.str(if r.completed { "completed" } else { "started" });
        p.key("time_discovered_started_ns");
        p.int(created_ns(id) + 40_000);
        p.key("time_discovered_completed_ns");
        if r.completed {
            p.int(created_ns(id) + 1_800_000);
        } else {
            p.none();
        }
        p.key("retired");
        p.bool(r.completed);
        p.key("timeout_ms");
        p.int(600_000);
        p.key("is_p2p");
        p.bool(r.is_p2p);
        p.key("thread_id");
        p.str("140213297665856");
        p.key("thread_name");
        p.str("pt_main_thread");
        p.key("frames");
        p.list_start();
        for frame in frames(r.caller, &r.op) {
            p.frame(frame);
        }
        p.list_end();
        p.dict_end();
    }
    p.list_end();
    p.dict_end();
    p.finish()
}

/// The JSON dump (`_dump_nccl_trace_json`): compact, keys sorted, no frames.
fn json_dump(layout: &Layout, rank: u32, history: &[Record]) -> Vec<u8> {
    let groups = rank_groups(layout, rank);
    let mut text = String::with_capacity(history.len() * 560 + 64 * 1024);
    text.push_str("{\"comm_lib_version\":\"2.21.5\",\"entries\":[");
    for (id, r) in history.iter().enumerate() {
        let (name, desc, _) = &groups[r.group as usize];
        if id > 0 {
            text.push(',');
        }
        let dims = |dims: &[i64]| {
            let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
            format!("[[{}]]", dims.join(","))
        };
        let created = created_ns(id);
        let _ = write!(
            text,
            "{{\"collective_seq_id\":{},\"duration_ms\":{},\"input_dtypes\":[\"{dtype}\"],\"input_sizes\":{},\
             \"is_p2p\":{},\"op_id\":{},\"output_dtypes\":[\"{dtype}\"],\"output_sizes\":{},\"p2p_seq_id\":{},\
             \"pg_id\":{name},\"process_group\":[\"{name}\",\"{desc}\"],\"profiling_name\":\"nccl:{}\",\
             \"record_id\":{id},\"retired\":{},\"state\":\"{}\",\"thread_id\":\"140213297665856\",\
             \"thread_name\":\"pt_main_thread\",\"time_created_ns\":{created},\
             \"time_discovered_completed_ns\":{},\"time_discovered_started_ns\":{},\"timeout_ms\":600000}}",
            r.collective_seq_id,
            if r.completed {
                format!("{:?}", 1.5 + (id % 7) as f64 * 0.25)
            } else {
                "null".to_string()
            },
            dims(&r.input_sizes),
            r.is_p2p,
            r.op_id,
            dims(&r.output_sizes),
            r.p2p_seq_id,
            r.op,
            r.completed,
            if r.completed { "completed" } else { "started" },
            if r.completed { created + 1_800_000 } else { 0 },
            created + 40_000,
            dtype = r.dtype,
        );
    }
    text.push_str("],\"pg_config\":{");
    let mut sorted = groups.clone();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (name, desc, ranks)) in sorted.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        let _ = write!(
            text,
            "\"{name}\":{{\"desc\":\"{desc}\",\"name\":\"{name}\",\"ranks\":\"{ranks}\"}}"
        );
    }
    text.push_str("},\"pg_status\":{");
    let mut status = pg_status(&groups, history);
    status.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (name, enqueued, completed)) in status.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        let _ = write!(
            text,
            "\"{name}\":{{\"last_completed_collective\":\"{completed}\",\"last_enqueued_collective\":\"{enqueued}\",\
             \"last_started_collective\":\"{enqueued}\"}}"
        );
    }
    text.push_str("},\"version\":\"2.10\"}");
    text.into_bytes()
}
