//! One run's rank files as one multi-rank trace.
//!
//! `syncguard trace` makes every process write its own file (`<host>-<pid>.jsonl`,
//! docs/TRACE.md "Capturing a trace"): a header naming the run and, when known then, the
//! process's rank; call lines without `rank`; and, when the process exits, a closing line
//! (`syncguard_capture_end`) with the rank learned meanwhile (from
//! `HcclCommInitRootInfo`). Merging gives each file's lines its rank and orders all lines
//! by `ts` (each host thread keeps its own order), under one header: the multi-rank trace
//! format every other trace uses. What cannot be known is reported, never guessed: a
//! rank with no file, two files of one rank, a file with no rank, a process that never
//! closed its file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The fields of a capture's header and closing lines.
#[derive(Debug, Default, Deserialize)]
struct CaptureLine {
    syncguard_trace: Option<serde_json::Value>,
    capture: Option<String>,
    run: Option<String>,
    host: Option<String>,
    pid: Option<u64>,
    forked_from: Option<u64>,
    parent_rank: Option<u32>,
    rank: Option<u32>,
    world_size: Option<u32>,
    syncguard_capture_end: Option<serde_json::Value>,
    dropped: Option<u64>,
}

/// The header of a file `syncguard trace` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureHeader {
    pub run: String,
    pub host: String,
    pub pid: u64,
    /// A process forked from another of the run (not exec'd): the parent's pid and rank.
    pub forked_from: Option<(u64, Option<u32>)>,
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
}

impl CaptureHeader {
    /// The header of a capture's first line; `None` for any other line (a hand-written
    /// or simulator trace, which is checked on its own).
    pub fn parse(line: &[u8]) -> Option<CaptureHeader> {
        let line: CaptureLine = serde_json::from_slice(line).ok()?;
        line.syncguard_trace.as_ref()?;
        line.capture.as_ref()?;
        Some(CaptureHeader {
            run: line.run?,
            host: line.host.unwrap_or_default(),
            pid: line.pid.unwrap_or(0),
            forked_from: line.forked_from.map(|pid| (pid, line.parent_rank)),
            rank: line.rank,
            world_size: line.world_size,
        })
    }

    /// The header of the file at `path`, if it is a capture (only its first line, up to
    /// 64 KiB, is read).
    pub fn read(path: &Path) -> Option<CaptureHeader> {
        use std::io::{BufRead, Read};
        let file = std::fs::File::open(path).ok()?;
        let mut first = Vec::new();
        std::io::BufReader::new(file)
            .take(64 << 10)
            .read_until(b'\n', &mut first)
            .ok()?;
        CaptureHeader::parse(&first)
    }
}

/// The capture files of run `run` in `dir`, sorted.
pub fn run_files(dir: &Path, run: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .filter(|path| CaptureHeader::read(path).is_some_and(|header| header.run == run))
        .collect();
    files.sort();
    files
}

/// How serious a merge problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemSeverity {
    /// The run is not checked: its findings would be about a program that did not run.
    Error,
    /// The run is checked; some calls may be missing.
    Warning,
}

/// Something merging found about the files of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeProblem {
    pub severity: ProblemSeverity,
    pub message: String,
}

/// One run's files as one trace.
#[derive(Debug)]
pub struct MergedRun {
    pub run: String,
    /// How to name the merged trace in messages.
    pub display: String,
    /// The merged trace: a header, then every call line with its rank.
    pub text: Vec<u8>,
    /// Each rank's file, by rank.
    pub ranks: BTreeMap<u32, String>,
    pub problems: Vec<MergeProblem>,
}

impl MergedRun {
    /// Whether the run can be checked: no rank is missing or claimed twice.
    pub fn checkable(&self) -> bool {
        !self.problems.iter().any(|p| p.severity == ProblemSeverity::Error)
    }
}

/// One rank file, read.
struct RankFile {
    display: String,
    header: CaptureHeader,
    /// The closing line's rank and world size, when the process closed the file.
    closed: Option<CaptureLine>,
    /// The call lines (and anything malformed), without header and closing line.
    lines: Vec<Vec<u8>>,
}

impl RankFile {
    fn read(display: &str, path: &Path) -> std::io::Result<RankFile> {
        let bytes = std::fs::read(path)?;
        let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        if lines.last().is_some_and(Vec::is_empty) {
            lines.pop();
        }
        let first = if lines.is_empty() { Vec::new() } else { lines.remove(0) };
        let header = CaptureHeader::parse(&first)
            .ok_or_else(|| std::io::Error::other("its first line is not the header `syncguard trace` writes"))?;
        let closed = lines
            .last()
            .and_then(|line| serde_json::from_slice::<CaptureLine>(line).ok())
            .filter(|line| line.syncguard_capture_end.is_some());
        if closed.is_some() {
            lines.pop();
        }
        Ok(RankFile {
            display: display.to_string(),
            header,
            closed,
            lines,
        })
    }

    fn rank(&self) -> Option<u32> {
        self.closed.as_ref().and_then(|c| c.rank).or(self.header.rank)
    }

    fn world_size(&self) -> Option<u32> {
        self.closed
            .as_ref()
            .and_then(|c| c.world_size)
            .or(self.header.world_size)
    }
}

/// Merge the files of one run (`(display, path)` each, all with the same run in their
/// header). A file that cannot be read is an error of the run.
pub fn merge_run(run: &str, files: &[(String, PathBuf)]) -> MergedRun {
    let mut problems = Vec::new();
    let mut read = Vec::new();
    for (display, path) in files {
        match RankFile::read(display, path) {
            Ok(file) => read.push(file),
            Err(err) => problems.push(error(format!("{display}: cannot be read: {err}"))),
        }
    }
    let ranks = assign_ranks(&read, &mut problems);
    let world_size = world_size(&read, &ranks, &mut problems);
    for file in &read {
        closing_problems(file, &mut problems);
    }
    let display = merged_display(run, files);
    let mut text = header_line(run, world_size, &ranks, &read);
    for (rank, line) in ordered_lines(&read, &ranks) {
        with_rank(&mut text, rank, line);
    }
    MergedRun {
        run: run.to_string(),
        display,
        text,
        ranks: ranks
            .iter()
            .map(|(&rank, &index)| (rank, read[index].display.clone()))
            .collect(),
        problems,
    }
}

fn error(message: String) -> MergeProblem {
    MergeProblem {
        severity: ProblemSeverity::Error,
        message,
    }
}

fn warning(message: String) -> MergeProblem {
    MergeProblem {
        severity: ProblemSeverity::Warning,
        message,
    }
}

/// Each file's rank: a lone file without one is rank 0; otherwise a file without a rank
/// or a second file of a rank is reported and left out. A child forked from a rank's
/// process that never told a rank of its own is left out with a warning: it is not its
/// parent (its calls run in a process of their own), and it is no other rank.
fn assign_ranks(files: &[RankFile], problems: &mut Vec<MergeProblem>) -> BTreeMap<u32, usize> {
    let mut ranks = BTreeMap::new();
    for (index, file) in files.iter().enumerate() {
        let rank = match (file.rank(), file.header.forked_from) {
            (Some(rank), _) => rank,
            (None, Some((parent, parent_rank))) => {
                let of_rank = parent_rank.map_or(String::new(), |rank| format!(" (rank {rank})"));
                problems.push(warning(format!(
                    "{}: {} call{} of a process forked from pid {parent}{of_rank} that never told a rank of \
                     its own are left out of the check",
                    file.display,
                    file.lines.len(),
                    if file.lines.len() == 1 { "" } else { "s" }
                )));
                continue;
            }
            (None, None) if files.len() == 1 => 0,
            (None, None) => {
                problems.push(error(format!(
                    "{}: the process (pid {} on {}) never told its rank (no `HcclCommInitRootInfo` or \
                     `HcclGetRankId`, no RANK_ID or RANK variable): its calls cannot be placed",
                    file.display, file.header.pid, file.header.host
                )));
                continue;
            }
        };
        if let Some(&first) = ranks.get(&rank) {
            let first: &RankFile = &files[first];
            problems.push(error(format!(
                "{} and {} are both rank {rank}: two processes of one run claim the same rank",
                first.display, file.display
            )));
            continue;
        }
        ranks.insert(rank, index);
    }
    ranks
}

/// The world size the files agree on (else the ranks seen); every rank below it must
/// have a file.
fn world_size(files: &[RankFile], ranks: &BTreeMap<u32, usize>, problems: &mut Vec<MergeProblem>) -> u32 {
    let mut told: Vec<u32> = files.iter().filter_map(RankFile::world_size).collect();
    told.sort_unstable();
    told.dedup();
    if told.len() > 1 {
        problems.push(error(format!(
            "the files do not agree on the world size ({}): they are not one run",
            told.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )));
    }
    let seen = ranks.keys().next_back().map_or(1, |&rank| rank + 1);
    let world = told.last().copied().unwrap_or(seen).max(seen);
    let missing: Vec<String> = (0..world)
        .filter(|rank| !ranks.contains_key(rank))
        .map(|rank| rank.to_string())
        .collect();
    if !missing.is_empty() {
        problems.push(error(format!(
            "rank{} {} of {world} ha{} no trace file: the run is not checked, as every wait on a missing rank would \
             look like a deadlock (copy the missing ranks' files next to the others)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "s" } else { "ve" },
        )));
    }
    world
}

fn closing_problems(file: &RankFile, problems: &mut Vec<MergeProblem>) {
    match &file.closed {
        None => problems.push(warning(format!(
            "{}: the process (pid {}) did not close its trace: it was killed (SIGKILL, a crash) or is still running, \
             so its last calls may be missing",
            file.display, file.header.pid
        ))),
        Some(closing) if closing.dropped.unwrap_or(0) > 0 => problems.push(warning(format!(
            "{}: {} line{} could not be written (a failed write or an oversized line): calls are missing",
            file.display,
            closing.dropped.unwrap_or(0),
            if closing.dropped == Some(1) { "" } else { "s" }
        ))),
        Some(_) => {}
    }
}

/// `DIR/run RUN`: the folder of the files (or the first file's) and the run.
fn merged_display(run: &str, files: &[(String, PathBuf)]) -> String {
    let dir = files
        .first()
        .and_then(|(display, _)| Path::new(display).parent())
        .map(|dir| dir.display().to_string())
        .filter(|dir| !dir.is_empty())
        .unwrap_or_else(|| ".".to_string());
    format!("{dir}/run-{run}.jsonl")
}

fn header_line(run: &str, world_size: u32, ranks: &BTreeMap<u32, usize>, files: &[RankFile]) -> Vec<u8> {
    let files: serde_json::Map<String, serde_json::Value> = ranks
        .iter()
        .map(|(rank, &index)| (rank.to_string(), files[index].display.clone().into()))
        .collect();
    let header = serde_json::json!({
        "syncguard_trace": 1,
        "world_size": world_size,
        "run": run,
        "merged": files,
    });
    let mut line = header.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Every call line of the ranked files, ordered by `ts`. A line's key never goes below
/// the previous one of its host thread, so each thread keeps its file order even if the
/// clock stepped back; lines without `ts` follow the line before them.
fn ordered_lines<'f>(files: &'f [RankFile], ranks: &BTreeMap<u32, usize>) -> Vec<(u32, &'f [u8])> {
    let mut keyed: Vec<(u64, usize, usize, u32, &[u8])> = Vec::new();
    for (&rank, &index) in ranks {
        let mut last_of_thread: BTreeMap<&[u8], u64> = BTreeMap::new();
        let mut last = 0u64;
        for (position, line) in files[index].lines.iter().enumerate() {
            let thread = field(line, b"\"thread\":").unwrap_or(b"");
            let floor = last_of_thread.get(thread).copied().unwrap_or(0);
            let key = field(line, b"\"ts\":")
                .and_then(|ts| std::str::from_utf8(ts).ok()?.parse::<u64>().ok())
                .unwrap_or(last)
                .max(floor);
            last_of_thread.insert(thread, key);
            last = key;
            keyed.push((key, index, position, rank, line));
        }
    }
    keyed.sort_by_key(|&(key, index, position, ..)| (key, index, position));
    keyed.into_iter().map(|(.., rank, line)| (rank, line)).collect()
}

/// The raw value after `name` in a line the capture wrote (a number, up to the next
/// `,` or `}`); `None` when absent.
fn field<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let at = memchr::memmem::find(line, name)? + name.len();
    let rest = &line[at..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}').unwrap_or(rest.len());
    Some(rest[..end].trim_ascii())
}

/// `{"rank": R, ...the line's fields}`; a line that is not an object is copied as it is,
/// so that reading it reports what is wrong.
fn with_rank(text: &mut Vec<u8>, rank: u32, line: &[u8]) {
    let trimmed = line.trim_ascii_start();
    match trimmed.strip_prefix(b"{") {
        Some(rest) => {
            text.extend_from_slice(format!("{{\"rank\": {rank}").as_bytes());
            if !rest.trim_ascii_start().starts_with(b"}") {
                text.extend_from_slice(b", ");
            }
            text.extend_from_slice(rest);
        }
        None => text.extend_from_slice(line),
    }
    text.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> (String, PathBuf) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        (name.to_string(), path)
    }

    const HEADER: &str = r#"{"syncguard_trace": 1, "capture": "syncguard trace", "run": "r1", "host": "h", "pid": 7"#;

    #[test]
    fn lines_take_their_file_rank_and_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.jsonl",
            &format!(
                "{HEADER}, \"rank\": 1}}\n{{\"api\": \"x\", \"thread\": 5, \"ts\": 30, \"args\": {{}}}}\n{{\"syncguard_capture_end\": 1, \"rank\": 1, \"world_size\": 2}}\n"
            ),
        );
        let b = write(
            dir.path(),
            "b.jsonl",
            &format!(
                "{HEADER}}}\n{{\"api\": \"y\", \"thread\": 9, \"ts\": 20, \"args\": {{}}}}\n{{\"api\": \"z\", \"thread\": 9, \"ts\": 10, \"args\": {{}}}}\n{{\"syncguard_capture_end\": 1, \"rank\": 0, \"world_size\": 2}}\n"
            ),
        );
        let merged = merge_run("r1", &[a, b]);
        assert!(merged.problems.is_empty(), "{:?}", merged.problems);
        let text = String::from_utf8(merged.text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("\"world_size\":2"), "{}", lines[0]);
        // z's clock went back: it stays after y, its thread's earlier call.
        assert!(lines[1].starts_with("{\"rank\": 0, \"api\": \"y\""), "{}", lines[1]);
        assert!(lines[2].starts_with("{\"rank\": 0, \"api\": \"z\""), "{}", lines[2]);
        assert!(lines[3].starts_with("{\"rank\": 1, \"api\": \"x\""), "{}", lines[3]);
        assert_eq!(merged.ranks.len(), 2);
    }

    #[test]
    fn missing_and_duplicate_ranks_and_unclosed_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a.jsonl",
            &format!("{HEADER}, \"rank\": 0, \"world_size\": 3}}\n"),
        );
        let b = write(
            dir.path(),
            "b.jsonl",
            &format!("{HEADER}, \"rank\": 0}}\n{{\"api\": \"x\"\n"),
        );
        let merged = merge_run("r1", &[a, b]);
        let messages: Vec<&str> = merged.problems.iter().map(|p| p.message.as_str()).collect();
        assert!(messages.iter().any(|m| m.contains("both rank 0")), "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.contains("ranks 1, 2 of 3 have no trace file")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("did not close its trace")),
            "{messages:?}"
        );
        assert!(!merged.checkable());
    }

    #[test]
    fn a_truncated_line_is_kept_for_the_reader_to_report() {
        let mut text = Vec::new();
        with_rank(&mut text, 3, br#"{"api": "aclrtRecordEv"#);
        with_rank(&mut text, 3, b"{}");
        with_rank(&mut text, 3, b"[1]");
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "{\"rank\": 3, \"api\": \"aclrtRecordEv\n{\"rank\": 3}\n[1]\n"
        );
    }

    #[test]
    fn only_capture_headers_are_captures() {
        assert!(CaptureHeader::parse(format!("{HEADER}}}").as_bytes()).is_some());
        assert!(CaptureHeader::parse(br#"{"syncguard_trace": 1, "world_size": 2}"#).is_none());
        assert!(CaptureHeader::parse(b"not json").is_none());
    }
}
