//! The two passes find exactly what the one-machine check finds: random captured runs
//! (launch runs without memory between events, kernels with memory, synchronizations,
//! stream destroys, captures, a missing synchronization now and then) are checked both
//! ways and their JSON reports compared byte for byte; and a damaged skeleton or reserve
//! is refused, never a crash.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use syncguard_analyzer::render::render_json;
use syncguard_analyzer::{CheckedFile, Diagnostic, Overrides, Sources, check_merged_run, check_trace_file};
use syncguard_skeleton::{Skeleton, check_skeletons, skeleton_of_trace, skeletons_of_run};
use syncguard_trace::merge::merge_run;

/// `check`'s report of the rank files (`run`) or ordinary traces in `dir`.
fn one_pass(files: &[(String, PathBuf)], capture: bool) -> String {
    let mut sources = Sources::default();
    let mut checked: Vec<CheckedFile> = Vec::new();
    if capture {
        let mut merged = merge_run("r", files);
        merged.find_on_disk(&[]);
        checked.push(check_merged_run(&mut sources, &merged, &Overrides::default()));
    } else {
        for (display, path) in files {
            let file = check_trace_file(&mut sources, Path::new(path), &Overrides::default()).unwrap();
            // `check_trace_file` names the file by its path; `check` by its display.
            assert_eq!(display, &path.display().to_string());
            checked.push(file);
        }
    }
    report(&mut sources, checked)
}

fn report(sources: &mut Sources, checked: Vec<CheckedFile>) -> String {
    let files = checked.len();
    let mut diagnostics: Vec<Diagnostic> = checked.into_iter().flat_map(|c| c.diagnostics).collect();
    Diagnostic::sort(&mut diagnostics);
    serde_json::to_string_pretty(&render_json(&diagnostics, &[], &[], sources, files)).unwrap()
}

/// The two passes: skeletons written and read back as bytes, reserves too.
fn two_passes(files: &[(String, PathBuf)], capture: bool) -> (String, usize, usize) {
    let skeletons: Vec<Skeleton> = if capture {
        skeletons_of_run("r", files, &[], 0).0
    } else {
        files
            .iter()
            .enumerate()
            .map(|(order, (display, path))| skeleton_of_trace(display, path, order).unwrap())
            .collect()
    };
    let dropped = skeletons.iter().map(|s| s.dropped).sum();
    let reserves = reserves_of(&skeletons);
    let read: Vec<Skeleton> = skeletons
        .iter()
        .map(|s| {
            let decoded = Skeleton::decode(&s.encode()).unwrap();
            assert_eq!(decoded.body, s.body);
            decoded
        })
        .collect();
    let mut sources = Sources::default();
    let mut reserve_of = |s: &Skeleton| s.decode_reserve(&reserves[s.display()]).map_err(|e| e.to_string());
    let checked = check_skeletons(&mut sources, read, &Overrides::default(), &mut reserve_of).unwrap();
    let whole = checked.iter().filter(|c| c.whole).count();
    let report = report(&mut sources, checked.into_iter().map(|c| c.file).collect());
    (report, dropped, whole)
}

/// One rank's calls, as op codes.
#[derive(Clone, Debug)]
enum Op {
    /// `n` launches without memory on stream `s` from thread `t`.
    Launches {
        n: usize,
        s: usize,
        t: usize,
    },
    /// A kernel with memory: reads slot `a`, writes slot `b`, on stream `s`.
    Kernel {
        s: usize,
        a: usize,
        b: usize,
    },
    /// Record event `e` on stream `s`; stream `w` waits on it.
    Handoff {
        e: usize,
        s: usize,
        w: usize,
    },
    DeviceSync,
    StreamSync(usize),
    HostWrite(usize),
    /// A launch with an odd shape (a string argument for an integer).
    OddLaunch(usize),
    DestroyForce(usize),
    Capture(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1usize..30, 0usize..3, 0usize..2).prop_map(|(n, s, t)| Op::Launches { n, s, t }),
        3 => (0usize..3, 0usize..3, 0usize..3).prop_map(|(s, a, b)| Op::Kernel { s, a, b }),
        3 => (0usize..2, 0usize..3, 0usize..3).prop_map(|(e, s, w)| Op::Handoff { e, s, w }),
        2 => Just(Op::DeviceSync),
        1 => (0usize..3).prop_map(Op::StreamSync),
        1 => (0usize..3).prop_map(Op::HostWrite),
        1 => (0usize..3).prop_map(Op::OddLaunch),
        1 => (0usize..3).prop_map(Op::DestroyForce),
        1 => (0usize..3).prop_map(Op::Capture),
    ]
}

/// The call lines of one rank for `ops` (without `rank` and `ts`). `safe`: each op is
/// made correct and followed by a device synchronization, so that most runs are clean.
fn lines(ops: &[Op], rank: usize, ranks: usize, safe: bool) -> Vec<String> {
    let stream = |s: usize| format!("\"0x{rank}5{s}\"");
    let event = |e: usize| format!("\"0x{rank}e{e}\"");
    let buf = format!("0x{rank}b000");
    let slot = |a: usize| format!(r#"{{"buf": "{buf}", "off": {}, "len": 64}}"#, a * 64);
    let mut out = Vec::new();
    let mut line = |thread: usize, api: &str, args: String| {
        out.push(format!(
            r#""thread": {thread}, "api": "{api}", "args": {{{args}}}, "ret": 0"#
        ));
    };
    for s in 0..3 {
        line(0, "aclrtCreateStream", format!(r#""stream": {}"#, stream(s)));
    }
    for e in 0..2 {
        line(
            0,
            "aclrtCreateEventWithFlag",
            format!(r#""event": {}, "flag": "ACL_EVENT_SYNC""#, event(e)),
        );
    }
    line(
        0,
        "aclrtMalloc",
        format!(r#""devPtr": "{buf}", "size": 4096, "policy": "ACL_MEM_MALLOC_HUGE_FIRST""#),
    );
    if ranks > 1 {
        line(
            0,
            "HcclCommInitRootInfo",
            format!(r#""nRanks": {ranks}, "rootInfo": "0x1", "rank": {rank}, "comm": "0x{rank}c""#),
        );
    }
    let mut launch_id = 0;
    for op in ops {
        let op = match (safe, op) {
            (true, Op::DestroyForce(_) | Op::Capture(_)) => &Op::DeviceSync,
            (true, Op::Handoff { e, s, w }) if s == w => &Op::Handoff {
                e: *e,
                s: *s,
                w: (*w + 1) % 3,
            },
            _ => op,
        };
        if safe {
            line(0, "aclrtSynchronizeDevice", String::new());
        }
        match op {
            Op::Launches { n, s, t } => {
                for _ in 0..*n {
                    launch_id += 1;
                    line(
                        *t,
                        "aclrtLaunchKernel",
                        format!(
                            r#""funcHandle": "0xf{launch_id}", "numBlocks": 8, "argsData": "0xa{launch_id}", "argsSize": 16, "stream": {}"#,
                            stream(*s)
                        ),
                    );
                }
            }
            Op::Kernel { s, a, b } => line(
                0,
                "kernel",
                format!(
                    r#""stream": {}, "name": "k", "reads": [{}], "writes": [{}]"#,
                    stream(*s),
                    slot(*a),
                    slot(*b)
                ),
            ),
            Op::Handoff { e, s, w } => {
                line(
                    0,
                    "aclrtRecordEvent",
                    format!(r#""event": {}, "stream": {}"#, event(*e), stream(*s)),
                );
                line(
                    0,
                    "aclrtStreamWaitEvent",
                    format!(r#""stream": {}, "event": {}"#, stream(*w), event(*e)),
                );
                line(
                    0,
                    "aclrtResetEvent",
                    format!(r#""event": {}, "stream": {}"#, event(*e), stream(*w)),
                );
            }
            Op::DeviceSync => line(0, "aclrtSynchronizeDevice", String::new()),
            Op::StreamSync(s) => line(0, "aclrtSynchronizeStream", format!(r#""stream": {}"#, stream(*s))),
            Op::HostWrite(a) => line(
                0,
                "host_write",
                format!(r#""buf": "{buf}", "off": {}, "len": 64"#, a * 64),
            ),
            Op::OddLaunch(s) => line(
                0,
                "aclrtLaunchKernel",
                format!(
                    r#""funcHandle": "0xf", "numBlocks": "8", "argsData": null, "argsSize": 16, "stream": {}"#,
                    stream(*s)
                ),
            ),
            Op::DestroyForce(s) => line(0, "aclrtDestroyStreamForce", format!(r#""stream": {}"#, stream(*s))),
            Op::Capture(s) => {
                line(
                    0,
                    "cudaStreamBeginCapture",
                    format!(r#""stream": {}, "mode": 0"#, stream(*s)),
                );
                line(
                    0,
                    "cudaStreamEndCapture",
                    format!(r#""stream": {}, "pGraph": "0x{rank}g""#, stream(*s)),
                );
            }
        }
    }
    line(0, "aclrtSynchronizeDevice", String::new());
    for e in 0..2 {
        line(0, "aclrtDestroyEvent", format!(r#""event": {}"#, event(e)));
    }
    line(0, "aclrtFree", format!(r#""devPtr": "{buf}""#));
    for s in 0..3 {
        line(0, "aclrtDestroyStream", format!(r#""stream": {}"#, stream(s)));
    }
    out
}

/// Write the ranks' lines as rank files of run `r` (capture) or as one ordinary trace.
fn write(dir: &Path, per_rank: &[Vec<String>], capture: bool, close: bool) -> Vec<(String, PathBuf)> {
    let ranks = per_rank.len();
    if capture {
        per_rank
            .iter()
            .enumerate()
            .map(|(rank, lines)| {
                let path = dir.join(format!("h-{}.jsonl", 100 + rank));
                let mut text = format!(
                    r#"{{"syncguard_trace": 1, "capture": "syncguard trace", "run": "r", "host": "h", "pid": {}, "rank": {rank}, "world_size": {ranks}}}"#,
                    100 + rank
                ) + "\n";
                for (i, line) in lines.iter().enumerate() {
                    text += &format!("{{{line}, \"ts\": {}}}\n", 1000 + (i * ranks + rank) * 10);
                }
                if close {
                    text += &format!(
                        r#"{{"syncguard_capture_end": 1, "rank": {rank}, "world_size": {ranks}, "calls": {}, "dropped": 0}}"#,
                        lines.len()
                    );
                    text += "\n";
                }
                std::fs::write(&path, text).unwrap();
                (path.display().to_string(), path)
            })
            .collect()
    } else {
        let path = dir.join("trace.jsonl");
        let mut text = format!(r#"{{"syncguard_trace": 1, "world_size": {ranks}}}"#) + "\n";
        let longest = per_rank.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for (rank, lines) in per_rank.iter().enumerate() {
                if let Some(line) = lines.get(i) {
                    text += &format!(
                        "{{\"rank\": {rank}, {line}, \"ts\": {}}}\n",
                        1000 + (i * ranks + rank) * 10
                    );
                }
            }
        }
        std::fs::write(&path, text).unwrap();
        vec![(path.display().to_string(), path)]
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), ..ProptestConfig::default() })]

    #[test]
    fn two_passes_report_what_check_reports(
        per_rank in proptest::collection::vec(proptest::collection::vec(op(), 1..12), 1..3),
        capture in any::<bool>(),
        close in any::<bool>(),
        safe in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let ranks = per_rank.len();
        let lines: Vec<Vec<String>> =
            per_rank.iter().enumerate().map(|(rank, ops)| lines(ops, rank, ranks, safe)).collect();
        let files = write(dir.path(), &lines, capture, close);
        let one = one_pass(&files, capture);
        let (two, dropped, whole) = two_passes(&files, capture);
        if std::env::var_os("SKELETON_STATS").is_some() {
            // How often the skeleton alone sufficed: `cargo test ... -- --nocapture`.
            eprintln!("STAT safe={safe} capture={capture} dropped={dropped} whole={whole}");
        }
        prop_assert_eq!(one, two);
    }
}

#[test]
fn generated_runs_clean_and_racy() {
    for (race_every, clean) in [(0, true), (2, false)] {
        let dir = tempfile::tempdir().unwrap();
        let job = syncguard_skeleton::generate::Job {
            ranks: 4,
            steps: 3,
            launches: 30,
            race_every,
        };
        syncguard_skeleton::generate::write_run(dir.path(), job).unwrap();
        let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.display().to_string(), p))
            .collect();
        files.sort();
        let mut merged = merge_run("gen", &files);
        merged.find_on_disk(&[]);
        let mut sources = Sources::default();
        let checked = check_merged_run(&mut sources, &merged, &Overrides::default());
        let one = report(&mut sources, vec![checked]);
        let skeletons = skeletons_of_run("gen", &files, &[], 0).0;
        let dropped: usize = skeletons.iter().map(|s| s.dropped).sum();
        assert!(dropped > 200, "{dropped} calls left out");
        let reserves = reserves_of(&skeletons);
        let read: Vec<Skeleton> = skeletons
            .iter()
            .map(|s| Skeleton::decode(&s.encode()).unwrap())
            .collect();
        let mut sources = Sources::default();
        let mut reserve_of = |s: &Skeleton| s.decode_reserve(&reserves[s.display()]).map_err(|e| e.to_string());
        let checked = check_skeletons(&mut sources, read, &Overrides::default(), &mut reserve_of).unwrap();
        assert_eq!(
            checked.iter().all(|c| !c.whole),
            clean,
            "a clean run is checked from its skeletons alone"
        );
        let two = report(&mut sources, checked.into_iter().map(|c| c.file).collect());
        assert_eq!(one, two);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// A skeleton or reserve cut short or changed anywhere is read or refused, never a
    /// panic; what is read is checked without a panic.
    #[test]
    fn damaged_skeletons_are_refused(cut in any::<prop::sample::Index>(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4), raw in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let ops = vec![Op::Launches { n: 25, s: 0, t: 0 }, Op::Kernel { s: 1, a: 0, b: 1 }, Op::Launches { n: 14, s: 1, t: 1 }];
        let files = write(dir.path(), &[lines(&ops, 0, 2, false), lines(&ops, 1, 2, false)], true, true);
        let skeletons = skeletons_of_run("r", &files, &[], 0).0;
        let skeleton = &skeletons[0];
        let mut bytes = if raw { skeleton.encode_reserve() } else { skeleton.encode() };
        let len = cut.index(bytes.len() + 1);
        bytes.truncate(len.max(1));
        for (at, byte) in &flips {
            let at = at.index(bytes.len());
            bytes[at] ^= byte;
        }
        if raw {
            let _ = skeleton.decode_reserve(&bytes);
        } else if let Ok(read) = Skeleton::decode(&bytes) {
            let mut sources = Sources::default();
            let mut none = |_: &Skeleton| Err("no reserve".to_string());
            let _ = check_skeletons(&mut sources, vec![read], &Overrides::default(), &mut none);
        }
    }

    /// The records themselves (below the compression) changed anywhere.
    #[test]
    fn damaged_records_are_refused(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), cut in any::<prop::sample::Index>()) {
        let dir = tempfile::tempdir().unwrap();
        let ops = vec![Op::Launches { n: 25, s: 0, t: 0 }, Op::Handoff { e: 0, s: 0, w: 1 }];
        let files = write(dir.path(), &[lines(&ops, 0, 1, false)], false, true);
        let skeleton = skeleton_of_trace(&files[0].0, &files[0].1, 0).unwrap();
        let mut raw = syncguard_skeleton::format::raw_body(&skeleton.encode()).unwrap();
        for (at, byte) in &flips {
            let at = at.index(raw.len());
            raw[at] ^= byte;
        }
        raw.truncate(cut.index(raw.len() + 1).max(1));
        if let Ok(read) = Skeleton::decode(&syncguard_skeleton::format::with_raw_body(&raw)) {
            let mut sources = Sources::default();
            let mut none = |_: &Skeleton| Err("no reserve".to_string());
            let _ = check_skeletons(&mut sources, vec![read], &Overrides::default(), &mut none);
        }
    }
}

/// `PROPTEST_CASES` when set (a longer run by hand), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

/// Each skeleton's reserve, encoded, by the skeleton's name.
fn reserves_of(skeletons: &[Skeleton]) -> std::collections::HashMap<String, Vec<u8>> {
    skeletons
        .iter()
        .map(|s| (s.display().to_string(), s.encode_reserve()))
        .collect()
}
