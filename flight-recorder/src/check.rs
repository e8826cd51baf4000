//! The dumps of one job compared per process group: collectives matched by
//! `collective_seq_id` across the group's ranks, point-to-point operations by
//! `p2p_seq_id` in groups of two, and what one dump alone can show.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use syncguard_model::source::{SourceFile, Sources, Span, decode_utf8_lossless_offsets};
use syncguard_model::{Diagnostic, FileId, Severity};

use crate::dump::{self, Dump, Entry, Format, State, Text};
use crate::rules::{
    CollectiveDesync, CollectiveDtypeMismatch, CollectiveNotEntered, CollectiveSizeMismatch, CollectiveStuck,
    FlightRecorderUnreadable, RankDumpMissing,
};

/// One file of a run: how to show it and its bytes.
pub struct DumpInput {
    pub display: String,
    pub bytes: Vec<u8>,
}

/// At most this many other ranks are pointed at in one finding; the rest are counted.
const MAX_RELATED: usize = 8;

struct RankDump {
    rank: u32,
    file: FileId,
    dump: Dump,
    /// The oldest record still in the ring buffer, when it is not the first one.
    wrapped_at: Option<u64>,
    /// The indices of the entries of each process group, in record order.
    by_group: FxHashMap<String, Vec<u32>>,
}

impl RankDump {
    /// The entries of process group `name`, in record order.
    fn entries_of<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Entry> {
        self.by_group
            .get(name)
            .into_iter()
            .flatten()
            .map(|&i| &self.dump.entries[i as usize])
    }
}

/// A dump's entries by process group: each rank is compared in each of its groups,
/// so its entries are sorted out once.
fn entries_by_group(dump: &Dump) -> FxHashMap<String, Vec<u32>> {
    let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
    let mut position: FxHashMap<&str, usize> = FxHashMap::default();
    // Entries come in runs of one group: a group is looked up where a run starts.
    let mut current = usize::MAX;
    for (i, entry) in dump.entries.iter().enumerate() {
        let name = entry.pg_name.as_str();
        if groups.get(current).is_none_or(|(group, _)| *group != name) {
            current = *position.entry(name).or_insert_with(|| {
                groups.push((name, Vec::new()));
                groups.len() - 1
            });
        }
        groups[current].1.push(i as u32);
    }
    groups
        .into_iter()
        .map(|(name, indices)| (name.to_string(), indices))
        .collect()
}

/// Check the dumps of one job together (one file alone: only what one rank shows).
/// Every file is registered in `sources`: a JSON dump with its text, a pickle empty
/// (its spans are its start).
pub fn check_run(sources: &mut Sources, inputs: Vec<DumpInput>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut ranks: Vec<RankDump> = Vec::new();
    let alone = inputs.len() == 1;
    // Ranks whose dump exists but cannot be read: said once (SG900), not as missing.
    let mut unreadable = BTreeSet::new();
    // The first dump of each rank, which a second one is left out for.
    let mut first_dump_of: FxHashMap<u32, FileId> = FxHashMap::default();
    // Dumps are independent until they are compared: read on every core, each file's
    // bytes freed once read; registered below in the order given.
    let read: Vec<ReadInput> = inputs.into_par_iter().map(read_input).collect();
    for ReadInput { source, name, dump } in read {
        let file = sources.add(source);
        let start = Span::new(file, 0..0);
        let (dump, by_group) = match dump {
            Ok(read) => read,
            Err(why) => {
                unreadable.extend(dump::rank_from_file_name(&name));
                diagnostics.push(
                    Diagnostic::new(
                        &FlightRecorderUnreadable::INFO,
                        start,
                        format!("cannot read this Flight Recorder dump: {why}"),
                    )
                    .with_label("this rank's history is left out")
                    .with_help("dump again, and give the watchdog time to finish writing the file"),
                );
                continue;
            }
        };
        let Some(rank) = dump.rank.or_else(|| dump::rank_from_file_name(&name)) else {
            diagnostics.push(
                Diagnostic::new(
                    &FlightRecorderUnreadable::INFO,
                    start,
                    "cannot tell which rank wrote this Flight Recorder dump",
                )
                .with_label("no `rank` field, and the file name does not end in a number")
                .with_help("keep the rank suffix PyTorch gives the file (`TORCH_NCCL_DEBUG_INFO_TEMP_FILE` + rank)"),
            );
            continue;
        };
        if let Some(&first) = first_dump_of.get(&rank) {
            diagnostics.push(
                Diagnostic::new(
                    &FlightRecorderUnreadable::INFO,
                    start,
                    format!("a second Flight Recorder dump of rank {rank}: this one is left out"),
                )
                .with_severity(Severity::Warning)
                .with_label(format!("also rank {rank}"))
                .with_related(Span::new(first, 0..0), format!("rank {rank}'s dump"))
                .with_help("check the dumps of one job at a time: one folder per job"),
            );
            continue;
        }
        first_dump_of.insert(rank, file);
        let wrapped_at = dump
            .entries
            .iter()
            .map(|e| e.record_id)
            .min()
            .filter(|&first| first > 0);
        ranks.push(RankDump {
            rank,
            file,
            dump,
            wrapped_at,
            by_group,
        });
    }
    ranks.sort_by_key(|r| r.rank);
    if alone && let [only] = ranks.as_slice() {
        check_alone(only, &mut diagnostics);
        return diagnostics;
    }
    let groups = groups(&ranks);
    if !alone {
        missing_dumps(&ranks, &unreadable, &groups, &mut diagnostics);
    }
    // Groups are compared independently (on every core), their findings kept in the
    // groups' order.
    let found: Vec<Vec<Diagnostic>> = groups
        .par_iter()
        .map(|(name, members)| {
            // Both sorted by rank: the members with a dump, in rank order.
            let present: Vec<&RankDump> = members
                .iter()
                .filter_map(|member| ranks.binary_search_by_key(member, |r| r.rank).ok())
                .map(|i| &ranks[i])
                .collect();
            let mut found = Vec::new();
            let mut run = Group {
                name,
                members,
                present: &present,
                diagnostics: &mut found,
            };
            run.check(Kind::Collective);
            if members.len() == 2 {
                run.check(Kind::P2p);
            }
            found
        })
        .collect();
    diagnostics.extend(found.into_iter().flatten());
    // Thousands of dumps freed on every core rather than one after another.
    ranks.into_par_iter().for_each(drop);
    diagnostics
}

/// One input as read on a pool thread: its file, to register, and its dump.
struct ReadInput {
    source: SourceFile,
    /// The file name, without its folder.
    name: String,
    dump: Result<(Dump, FxHashMap<String, Vec<u32>>), String>,
}

/// A JSON dump's file keeps its text (spans point into it), a pickle's is empty.
fn read_input(input: DumpInput) -> ReadInput {
    let name = input
        .display
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(&input.display)
        .to_string();
    let (text, dump) = match dump::sniff(&input.bytes) {
        Some(Format::Pickle) => (String::new(), dump::read(&input.bytes)),
        // Valid UTF-8 becomes the text as it is (no copy): the bytes read are the same.
        Some(Format::Json) | None => match String::from_utf8(input.bytes) {
            Ok(text) => {
                let dump = dump::read(text.as_bytes());
                (text, dump)
            }
            Err(invalid) => {
                let bytes = invalid.into_bytes();
                (decode_utf8_lossless_offsets(&bytes).0, dump::read(&bytes))
            }
        },
    };
    ReadInput {
        source: SourceFile::new(input.display, text),
        name,
        dump: dump.map(|dump| {
            let by_group = entries_by_group(&dump);
            (dump, by_group)
        }),
    }
}

/// Each group's name and members: `pg_config` ranks where a dump says them, else the
/// ranks whose dumps name the group.
fn groups(ranks: &[RankDump]) -> BTreeMap<String, Vec<u32>> {
    let mut groups: BTreeMap<String, Option<Vec<u32>>> = BTreeMap::new();
    for rank in ranks {
        for config in &rank.dump.groups {
            match groups.get_mut(&config.name) {
                Some(slot) if slot.is_none() => slot.clone_from(&config.ranks),
                Some(_) => {}
                None => {
                    groups.insert(config.name.clone(), config.ranks.clone());
                }
            }
        }
        for name in rank.by_group.keys() {
            if !groups.contains_key(name) {
                groups.insert(name.clone(), None);
            }
        }
    }
    groups
        .into_iter()
        .map(|(name, members)| {
            let mut members = members.unwrap_or_else(|| {
                ranks
                    .iter()
                    .filter(|r| r.dump.groups.iter().any(|g| g.name == name) || r.by_group.contains_key(&name))
                    .map(|r| r.rank)
                    .collect()
            });
            members.sort_unstable();
            members.dedup();
            (name, members)
        })
        .collect()
}

fn missing_dumps(
    ranks: &[RankDump],
    unreadable: &BTreeSet<u32>,
    groups: &BTreeMap<String, Vec<u32>>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut present: BTreeSet<u32> = ranks.iter().map(|r| r.rank).collect();
    present.extend(unreadable);
    let mut missing: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for (name, members) in groups {
        for &member in members.iter().filter(|m| !present.contains(m)) {
            missing.entry(member).or_default().push(name);
        }
    }
    let Some(first) = ranks.first() else { return };
    for (rank, in_groups) in missing {
        let names: Vec<String> = in_groups.iter().map(|g| format!("`{g}`")).collect();
        diagnostics.push(
            Diagnostic::new(
                &RankDumpMissing::INFO,
                Span::new(first.file, 0..0),
                format!(
                    "no Flight Recorder dump of rank {rank}, a member of process group {}",
                    names.join(", ")
                ),
            )
            .with_label(format!("rank {}'s `pg_config` lists rank {rank}", first.rank))
            .with_note(format!(
                "what rank {rank} did is unknown: findings of {} are judged from the other ranks alone",
                if in_groups.len() == 1 {
                    "that group"
                } else {
                    "those groups"
                }
            ))
            .with_help(format!(
                "collect rank {rank}'s file, or read its own log for why it wrote none (often it is the rank \
                 that crashed)"
            )),
        );
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Collective,
    P2p,
}

impl Kind {
    fn seq(self, entry: &Entry) -> u64 {
        match self {
            Kind::Collective => entry.collective_seq_id,
            Kind::P2p => entry.p2p_seq_id,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Collective => "collective",
            Kind::P2p => "point-to-point operation",
        }
    }
}

struct Group<'a> {
    name: &'a str,
    members: &'a [u32],
    present: &'a [&'a RankDump],
    diagnostics: &'a mut Vec<Diagnostic>,
}

/// A rank's entries of one group and kind, by sequence number (in record order within
/// one), with their sequence numbers alongside.
struct BySeq<'e> {
    seqs: Vec<u64>,
    entries: Vec<&'e Entry>,
}

impl<'e> BySeq<'e> {
    fn new(entries: impl Iterator<Item = &'e Entry>, kind: Kind) -> Self {
        let mut pairs: Vec<(u64, &Entry)> = entries
            .filter(|e| e.is_p2p == (kind == Kind::P2p))
            .map(|e| (kind.seq(e), e))
            .collect();
        // Stable: entries sharing a sequence number (coalesced) keep their record order.
        if !pairs.is_sorted_by_key(|&(seq, _)| seq) {
            pairs.sort_by_key(|&(seq, _)| seq);
        }
        let (seqs, entries) = pairs.into_iter().unzip();
        BySeq { seqs, entries }
    }
}

/// What one rank recorded at one sequence number.
struct At<'a> {
    rank: &'a RankDump,
    entries: &'a [&'a Entry],
}

impl<'a> At<'a> {
    fn first(&self) -> &'a Entry {
        self.entries[0]
    }

    fn ops(&self) -> String {
        let names: Vec<&str> = self.entries.iter().map(|e| e.profiling_name.as_str()).collect();
        names.join(" + ")
    }

    fn span(&self) -> Span {
        Span::new(self.rank.file, self.first().span.clone())
    }
}

/// A rank's operations at one sequence number, equal where [`At::ops`] is, without
/// building it.
struct Ops<'a, 'e>(&'a At<'e>);

impl PartialEq for Ops<'_, '_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.0.entries, other.0.entries) {
            ([a], [b]) => a.profiling_name == b.profiling_name,
            (a, b) => joined_names(a).eq(joined_names(b)),
        }
    }
}

/// The bytes of [`At::ops`].
fn joined_names<'e>(entries: &'e [&'e Entry]) -> impl Iterator<Item = &'e u8> {
    entries.iter().enumerate().flat_map(|(i, e)| {
        let separator: &[u8] = if i == 0 { b"" } else { b" + " };
        separator.iter().chain(e.profiling_name.as_bytes())
    })
}

/// What SG902 compares of one rank's entries at one sequence number: per entry
/// `in {input} out {output}` (a side not compared is empty) or, point-to-point, what
/// travels: a send's input, a receive's output. Equal texts are equal shapes, so the
/// shapes are compared without the text.
enum Shapes<'e> {
    Collective {
        entries: &'e [&'e Entry],
        skip_in: bool,
        skip_out: bool,
    },
    P2p(&'e [Vec<i64>]),
}

impl<'e> Shapes<'e> {
    fn of(kind: Kind, at: &At<'e>) -> Self {
        let e = at.first();
        let op = e.op();
        match kind {
            Kind::Collective => Shapes::Collective {
                entries: at.entries,
                skip_in: is_v(op) || matches!(op, "all_to_all" | "scatter" | "coalesced"),
                skip_out: is_v(op) || matches!(op, "all_to_all" | "gather" | "coalesced"),
            },
            Kind::P2p if op == "send" => Shapes::P2p(&e.input_sizes),
            Kind::P2p => Shapes::P2p(&e.output_sizes),
        }
    }
}

impl PartialEq for Shapes<'_> {
    fn eq(&self, other: &Self) -> bool {
        fn side(skip: bool, sizes: &[Vec<i64>]) -> Option<&[Vec<i64>]> {
            (!skip).then_some(sizes)
        }
        match (self, other) {
            (
                Shapes::Collective {
                    entries: a,
                    skip_in: a_in,
                    skip_out: a_out,
                },
                Shapes::Collective {
                    entries: b,
                    skip_in: b_in,
                    skip_out: b_out,
                },
            ) => {
                a.len() == b.len()
                    && a.iter().zip(b.iter()).all(|(x, y)| {
                        side(*a_in, &x.input_sizes) == side(*b_in, &y.input_sizes)
                            && side(*a_out, &x.output_sizes) == side(*b_out, &y.output_sizes)
                    })
            }
            (Shapes::P2p(a), Shapes::P2p(b)) => a == b,
            _ => false,
        }
    }
}

/// The dtypes SG903 compares, as `{input:?}/{output:?}` of the distinct dtypes of the
/// first entry (a side not compared is empty); equal texts are equal lists.
fn compared_dtypes(e: &Entry) -> (Cow<'_, [Text]>, Cow<'_, [Text]>) {
    let op = e.op();
    let input = if matches!(op, "broadcast" | "scatter") || e.input_sizes.first().is_none_or(|s| s.is_empty()) {
        Cow::Borrowed(&[][..])
    } else {
        distinct(&e.input_dtypes)
    };
    let output = if op == "gather" || e.output_sizes.first().is_none_or(|s| s.is_empty()) {
        Cow::Borrowed(&[][..])
    } else {
        distinct(&e.output_dtypes)
    };
    (input, output)
}

impl<'a> Group<'a> {
    fn check(&mut self, kind: Kind) {
        // Per rank: its entries of this group and kind by sequence number, and the
        // first sequence number its dump still knows (a wrapped buffer lost the rest).
        let mut by_rank: Vec<(&RankDump, BySeq, u64)> = Vec::new();
        for &rank in self.present {
            let seqs = BySeq::new(rank.entries_of(self.name), kind);
            let known_from = match rank.wrapped_at {
                None => 0,
                Some(_) => match seqs.seqs.first() {
                    Some(&first) => first,
                    // Wrapped, and nothing of this group left: nothing known of it.
                    None => continue,
                },
            };
            by_rank.push((rank, seqs, known_from));
        }
        let mut all: Vec<u64> = by_rank
            .iter()
            .flat_map(|(_, seqs, _)| seqs.seqs.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        // Per rank, where its entries at or past the sequence number at hand start:
        // sequence numbers are taken in order, so each rank's only moves forward.
        let mut cursors = vec![0usize; by_rank.len()];
        let mut size_reported = false;
        let mut dtype_reported = false;
        let mut first_unfinished = None;
        for &seq in &all {
            let mut have: Vec<At> = Vec::new();
            let mut lack: Vec<(&RankDump, Option<&Entry>)> = Vec::new();
            for ((rank, seqs, known_from), cursor) in by_rank.iter().zip(&mut cursors) {
                if seq < *known_from {
                    continue;
                }
                while seqs.seqs.get(*cursor).is_some_and(|&s| s < seq) {
                    *cursor += 1;
                }
                let start = *cursor;
                while seqs.seqs.get(*cursor) == Some(&seq) {
                    *cursor += 1;
                }
                if start < *cursor {
                    have.push(At {
                        rank,
                        entries: &seqs.entries[start..*cursor],
                    });
                } else {
                    // Its last entry before `seq`, the last recorded of the highest
                    // sequence number below it.
                    lack.push((rank, start.checked_sub(1).map(|last| seqs.entries[last])));
                }
            }
            if have.is_empty() {
                continue;
            }
            if self.desync(kind, seq, &have) {
                return;
            }
            if !size_reported {
                size_reported = self.size_mismatch(kind, seq, &have);
            }
            if !dtype_reported && kind == Kind::Collective {
                dtype_reported = self.dtype_mismatch(seq, &have);
            }
            if !lack.is_empty() {
                self.not_entered(kind, seq, &have, &lack);
                return;
            }
            if first_unfinished.is_none()
                && have
                    .iter()
                    .any(|at| at.entries.iter().any(|e| e.state != State::Completed))
            {
                first_unfinished = Some(seq);
                self.stuck(kind, seq, &have);
            }
        }
    }

    fn group_name(&self) -> String {
        let desc = self
            .present
            .iter()
            .flat_map(|r| r.dump.groups.iter())
            .find(|g| g.name == self.name)
            .map(|g| g.desc.as_str())
            .filter(|d| !d.is_empty() && *d != "undefined");
        match desc {
            Some(desc) => format!("process group `{}` ({desc})", self.name),
            None => format!("process group `{}`", self.name),
        }
    }

    /// SG901: ranks that ran another operation at `seq` than the most common one.
    fn desync(&mut self, kind: Kind, seq: u64, have: &[At]) -> bool {
        let (reference, culprits): (Vec<&At>, Vec<&At>) = match kind {
            Kind::Collective => {
                let ops: Vec<Ops> = have.iter().map(Ops).collect();
                let reference = &ops[majority(&ops)];
                have.iter().partition(|at| Ops(at) == *reference)
            }
            Kind::P2p => {
                // A send meets a receive: both sending, or both receiving, disagree.
                let [a, b] = have else { return false };
                let kinds = (a.first().op(), b.first().op());
                if matches!(kinds, ("send", "recv") | ("recv", "send")) {
                    return false;
                }
                (vec![a], vec![b])
            }
        };
        if culprits.is_empty() {
            return false;
        }
        let theirs: Vec<String> = by_ops(&culprits)
            .into_iter()
            .map(|(ops, ranks)| format!("{} ran {ops}", rank_list(&ranks)))
            .collect();
        let ours = match kind {
            Kind::Collective => {
                let ranks: Vec<u32> = reference.iter().map(|at| at.rank.rank).collect();
                format!(" where {} ran {}", rank_list(&ranks), reference[0].ops())
            }
            Kind::P2p => format!(" and rank {} ran {}", reference[0].rank.rank, reference[0].ops()),
        };
        let primary = culprits[0];
        let mut diagnostic = Diagnostic::new(
            &CollectiveDesync::INFO,
            primary.span(),
            format!(
                "{} #{seq} of {} desyncs: {}{ours}; the ranks wait in different operations, so the job hangs until the watchdog's timeout (or pairs the wrong buffers)",
                kind.noun(),
                self.group_name(),
                theirs.join(", "),
            ),
        )
        .with_label(label(primary, "ran", kind, seq));
        diagnostic = self.relate(
            diagnostic,
            culprits.iter().skip(1).chain(reference.iter()).copied(),
            kind,
            seq,
        );
        diagnostic = with_frames(diagnostic, culprits.iter().chain(reference.iter().take(1)).copied());
        diagnostic = self.with_wrap_notes(diagnostic, have.iter());
        self.diagnostics.push(
            diagnostic.with_help(match kind {
                Kind::Collective => {
                    "every rank of a group must issue the same collectives in the same order: look for a \
                                 rank-dependent branch or early exit around the culprit's call"
                        .to_string()
                }
                Kind::P2p => "pair each send with a receive on the peer, in the same order on both ranks".to_string(),
            }),
        );
        true
    }

    /// SG902: shapes that differ at `seq` (the operation is the same on every rank).
    fn size_mismatch(&mut self, kind: Kind, seq: u64, have: &[At]) -> bool {
        let shapes: Vec<Shapes> = have.iter().map(|at| Shapes::of(kind, at)).collect();
        let agreeing = majority(&shapes);
        let culprits: Vec<&At> = have
            .iter()
            .zip(&shapes)
            .filter(|(_, s)| **s != shapes[agreeing])
            .map(|(at, _)| at)
            .collect();
        let agreeing = &have[agreeing];
        let Some(primary) = culprits.first() else {
            return false;
        };
        let describe = |at: &At| -> String {
            let e = at.first();
            match kind {
                Kind::P2p if e.op() == "send" => format!("sent {}", sizes(&e.input_sizes)),
                Kind::P2p => format!("received {}", sizes(&e.output_sizes)),
                Kind::Collective => format!("input {} output {}", sizes(&e.input_sizes), sizes(&e.output_sizes)),
            }
        };
        let culprit_ranks: Vec<u32> = culprits.iter().map(|at| at.rank.rank).collect();
        let mut diagnostic = Diagnostic::new(
            &CollectiveSizeMismatch::INFO,
            primary.span(),
            format!(
                "{} #{seq} ({}) of {} has other shapes on {}: {} where rank {} has {}; the transfer reads or writes past the smaller buffers (corrupt data) or hangs",
                kind.noun(),
                primary.first().profiling_name,
                self.group_name(),
                rank_list(&culprit_ranks),
                describe(primary),
                agreeing.rank.rank,
                describe(agreeing),
            ),
        )
        .with_label(format!("rank {}: {}", primary.rank.rank, describe(primary)));
        diagnostic = relate_other_ranks(diagnostic, have, primary, describe);
        diagnostic = with_frames(diagnostic, [*primary, agreeing]);
        self.diagnostics.push(
            diagnostic.with_help("give every rank tensors of the same shape for this collective (pad, or agree on it)"),
        );
        true
    }

    /// SG903: dtypes that differ at `seq`.
    fn dtype_mismatch(&mut self, seq: u64, have: &[At]) -> bool {
        let dtypes: Vec<_> = have.iter().map(|at| compared_dtypes(at.first())).collect();
        let reference = &have[majority(&dtypes)];
        // Compared only where both sides are known: an empty side matches anything.
        let differs = |at: &At| {
            let (a, b) = (at.first(), reference.first());
            let side = |x: &[Text], y: &[Text], skip: bool| {
                !skip && !x.is_empty() && !y.is_empty() && distinct(x) != distinct(y)
            };
            let op = a.op();
            side(&a.input_dtypes, &b.input_dtypes, matches!(op, "broadcast" | "scatter"))
                || side(&a.output_dtypes, &b.output_dtypes, op == "gather")
        };
        let culprits: Vec<&At> = have.iter().filter(|at| differs(at)).collect();
        let Some(primary) = culprits.first() else {
            return false;
        };
        let describe = |at: &At| {
            let e = at.first();
            format!(
                "{} → {}",
                dedup(&e.input_dtypes).join(", "),
                dedup(&e.output_dtypes).join(", ")
            )
        };
        let culprit_ranks: Vec<u32> = culprits.iter().map(|at| at.rank.rank).collect();
        let mut diagnostic = Diagnostic::new(
            &CollectiveDtypeMismatch::INFO,
            primary.span(),
            format!(
                "collective #{seq} ({}) of {} has other dtypes on {}: {} where rank {} has {}; the ranks reduce or copy bytes as different types (corrupt results)",
                primary.first().profiling_name,
                self.group_name(),
                rank_list(&culprit_ranks),
                describe(primary),
                reference.rank.rank,
                describe(reference),
            ),
        )
        .with_label(format!("rank {}: {}", primary.rank.rank, describe(primary)));
        diagnostic = relate_other_ranks(diagnostic, have, primary, describe);
        diagnostic = with_frames(diagnostic, [*primary, reference]);
        self.diagnostics
            .push(diagnostic.with_help("cast to one dtype on every rank before the collective"));
        true
    }

    /// SG904: ranks whose dump never reached `seq`, which the others entered.
    fn not_entered(&mut self, kind: Kind, seq: u64, have: &[At], lack: &[(&RankDump, Option<&Entry>)]) {
        let missing: Vec<u32> = lack.iter().map(|(r, _)| r.rank).collect();
        let entered: Vec<u32> = have.iter().map(|at| at.rank.rank).collect();
        let (culprit, last) = lack[0];
        let (span, label) = match last {
            Some(entry) => (
                Span::new(culprit.file, entry.span.clone()),
                format!(
                    "rank {}'s last {} of this group: {} #{} (record {}, {})",
                    culprit.rank,
                    kind.noun(),
                    entry.profiling_name,
                    kind.seq(entry),
                    entry.record_id,
                    entry.state.as_str()
                ),
            ),
            None => (
                Span::new(culprit.file, 0..0),
                format!("rank {} recorded no {} of this group", culprit.rank, kind.noun()),
            ),
        };
        let mut diagnostic = Diagnostic::new(
            &CollectiveNotEntered::INFO,
            span,
            format!(
                "{} never entered {} #{seq} ({}) of {}, which {} entered: the others wait for {}",
                rank_list(&missing),
                kind.noun(),
                have[0].ops(),
                self.group_name(),
                rank_list(&entered),
                if missing.len() == 1 { "it" } else { "them" },
            ),
        )
        .with_label(label);
        let others = lack
            .iter()
            .skip(1)
            .filter_map(|(rank, last)| {
                last.map(|e| {
                    (
                        Span::new(rank.file, e.span.clone()),
                        format!("rank {}'s last: {} #{}", rank.rank, e.profiling_name, kind.seq(e)),
                    )
                })
            })
            .chain(have.iter().map(|at| {
                (
                    at.span(),
                    format!("rank {} entered it ({})", at.rank.rank, at.first().state.as_str()),
                )
            }));
        diagnostic = relate_all(diagnostic, others);
        if let Some(last) = last {
            diagnostic = with_entry_frames(diagnostic, culprit.rank, last, "its last");
        }
        diagnostic = with_frames(diagnostic, have.iter().take(1));
        diagnostic = self.with_wrap_notes(diagnostic, have.iter());
        self.diagnostics.push(diagnostic.with_help(format!(
            "find why {} stopped before this {} (its log, an exception, a CPU-side hang, a rank-dependent branch)",
            rank_list(&missing),
            kind.noun()
        )));
    }

    /// SG905: ranks that did not complete `seq` (the oldest unfinished one).
    fn stuck(&mut self, kind: Kind, seq: u64, have: &[At]) {
        let done = |at: &At| at.entries.iter().all(|e| e.state == State::Completed);
        let (finished, stuck): (Vec<&At>, Vec<&At>) = have.iter().partition(|at| done(at));
        let Some(primary) = stuck.first() else { return };
        let stuck_ranks: Vec<u32> = stuck.iter().map(|at| at.rank.rank).collect();
        let state = unfinished_state(primary);
        let everyone = finished.is_empty() && self.present.len() == self.members.len();
        let message = if finished.is_empty() {
            format!(
                "{} #{seq} ({}) of {} never completed on {}: {}",
                kind.noun(),
                primary.ops(),
                self.group_name(),
                if everyone {
                    "any rank".to_string()
                } else {
                    rank_list(&stuck_ranks)
                },
                "every rank with a dump is in it, so the cause is not in this group's order"
            )
        } else {
            let finished_ranks: Vec<u32> = finished.iter().map(|at| at.rank.rank).collect();
            format!(
                "{} is stuck in {} #{seq} ({}) of {}, which {} completed",
                rank_list(&stuck_ranks),
                kind.noun(),
                primary.ops(),
                self.group_name(),
                rank_list(&finished_ranks),
            )
        };
        let mut diagnostic = Diagnostic::new(&CollectiveStuck::INFO, primary.span(), message)
            .with_label(format!("rank {}: {state}", primary.rank.rank));
        if finished.is_empty() {
            diagnostic = diagnostic.with_severity(Severity::Warning).with_note(
                "a collective every rank is in waits on something outside it: a desync or missing rank in another \
                 group, a rank without a dump, or a device that stopped",
            );
        }
        diagnostic = relate_other_ranks(diagnostic, have, primary, unfinished_state);
        diagnostic = with_frames(diagnostic, stuck.iter().take(1).copied());
        diagnostic = self.with_wrap_notes(diagnostic, have.iter());
        self.diagnostics.push(diagnostic.with_help(
            "look at the stuck rank: the kernels queued before this collective on its stream, its NCCL log \
             (NCCL_DEBUG=INFO), its device",
        ));
    }

    fn relate<'b>(
        &self,
        diagnostic: Diagnostic,
        ats: impl Iterator<Item = &'b At<'b>>,
        kind: Kind,
        seq: u64,
    ) -> Diagnostic {
        relate_all(diagnostic, ats.map(|at| (at.span(), label(at, "ran", kind, seq))))
    }

    /// One note for the ranks whose ring buffers wrapped (at 4,096 ranks, a note each
    /// would bury the finding).
    fn with_wrap_notes<'b>(&self, diagnostic: Diagnostic, ats: impl Iterator<Item = &'b At<'b>>) -> Diagnostic {
        let wrapped: Vec<(u32, u64)> = ats
            .filter_map(|at| at.rank.wrapped_at.map(|first| (at.rank.rank, first)))
            .collect();
        let unknown = "and is not compared (TORCH_NCCL_TRACE_BUFFER_SIZE keeps more)";
        match wrapped.as_slice() {
            [] => diagnostic,
            [(rank, first)] => diagnostic.with_note(format!(
                "rank {rank}'s ring buffer wrapped (its dump starts at record {first}): what it ran before is unknown, \
                 {unknown}"
            )),
            _ => {
                let ranks: Vec<u32> = wrapped.iter().map(|(rank, _)| *rank).collect();
                let lowest = wrapped.iter().map(|(_, first)| *first).min().unwrap_or_default();
                let highest = wrapped.iter().map(|(_, first)| *first).max().unwrap_or_default();
                let records = match lowest == highest {
                    true => format!("record {lowest}"),
                    false => format!("records {lowest} to {highest}"),
                };
                diagnostic.with_note(format!(
                    "the ring buffers of {} wrapped (their dumps start at {records}): what they ran before is \
                     unknown, {unknown}",
                    rank_list(&ranks)
                ))
            }
        }
    }
}

fn unfinished_state(at: &At) -> String {
    let Some(e) = at.entries.iter().find(|e| e.state != State::Completed) else {
        return "completed".to_string();
    };
    let timed_out = if e.retired {
        ", timed out (retired by the watchdog)"
    } else {
        ""
    };
    format!("{} (record {}){timed_out}", e.state.as_str(), e.record_id)
}

fn is_v(op: &str) -> bool {
    op.ends_with("_v") || op.ends_with("_v_single") || op.starts_with("all_to_all")
}

fn dedup(items: &[Text]) -> Vec<Text> {
    let set: BTreeSet<&Text> = items.iter().collect();
    set.into_iter().cloned().collect()
}

/// [`dedup`], borrowed where the items are already sorted and distinct (nearly always:
/// one dtype per side).
fn distinct(items: &[Text]) -> Cow<'_, [Text]> {
    if items.windows(2).all(|pair| pair[0] < pair[1]) {
        Cow::Borrowed(items)
    } else {
        Cow::Owned(dedup(items))
    }
}

fn sizes(sizes: &[Vec<i64>]) -> String {
    let parts: Vec<String> = sizes
        .iter()
        .map(|dims| format!("[{}]", dims.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")))
        .collect();
    parts.join(" ")
}

/// The index of the first of the most common of `keys`, one per rank in rank order; a
/// tie goes to the lowest rank's. `keys` is not empty.
fn majority<K: PartialEq>(keys: &[K]) -> usize {
    // Each kind's first index and count, in order of first appearance.
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        match counts.iter_mut().find(|(first, _)| keys[*first] == *key) {
            Some((_, n)) => *n += 1,
            None => counts.push((i, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    counts
        .into_iter()
        .find(|(_, n)| *n == best)
        .map_or(0, |(first, _)| first)
}

/// The ranks of each distinct operation list, in rank order of first appearance.
fn by_ops(ats: &[&At]) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for at in ats {
        let ops = at.ops();
        match out.iter_mut().find(|(o, _)| *o == ops) {
            Some((_, ranks)) => ranks.push(at.rank.rank),
            None => out.push((ops, vec![at.rank.rank])),
        }
    }
    out
}

fn label(at: &At, verb: &str, kind: Kind, seq: u64) -> String {
    format!(
        "rank {} {verb} {} as {} #{seq} (record {}, {})",
        at.rank.rank,
        at.ops(),
        kind.noun(),
        at.first().record_id,
        at.first().state.as_str()
    )
}

/// Each rank's entry but `primary`'s as related, saying what that rank did there.
fn relate_other_ranks(
    diagnostic: Diagnostic,
    have: &[At],
    primary: &At,
    describe: impl Fn(&At) -> String,
) -> Diagnostic {
    let others = have
        .iter()
        .filter(|at| at.rank.rank != primary.rank.rank)
        .map(|at| (at.span(), format!("rank {}: {}", at.rank.rank, describe(at))));
    relate_all(diagnostic, others)
}

fn relate_all(mut diagnostic: Diagnostic, related: impl Iterator<Item = (Span, String)>) -> Diagnostic {
    let mut more = 0;
    for (i, (span, message)) in related.enumerate() {
        if i < MAX_RELATED {
            diagnostic = diagnostic.with_related(span, message);
        } else {
            more += 1;
        }
    }
    if more > 0 {
        diagnostic = diagnostic.with_note(format!("and {more} more ranks, not shown"));
    }
    diagnostic
}

/// `rank 3`, `ranks 0, 1, 2`, `ranks 0-5, 7` (runs of four or more folded).
pub(crate) fn rank_list(ranks: &[u32]) -> String {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if let [only] = sorted.as_slice() {
        return format!("rank {only}");
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        if j - i >= 3 {
            parts.push(format!("{}-{}", sorted[i], sorted[j]));
        } else {
            parts.extend(sorted[i..=j].iter().map(u32::to_string));
        }
        i = j + 1;
    }
    format!("ranks {}", parts.join(", "))
}

/// The Python frames of each `at`'s first entry, as notes `file:line in function`.
fn with_frames<'b>(mut diagnostic: Diagnostic, ats: impl IntoIterator<Item = &'b At<'b>>) -> Diagnostic {
    for at in ats {
        diagnostic = with_entry_frames(diagnostic, at.rank.rank, at.first(), "it");
    }
    diagnostic
}

/// The caller's frames: those outside torch itself, innermost first (two at most).
fn with_entry_frames(diagnostic: Diagnostic, rank: u32, entry: &Entry, what: &str) -> Diagnostic {
    let outside: Vec<&dump::Frame> = entry
        .frames
        .iter()
        .filter(|f| !f.filename.contains("/torch/") && !f.filename.starts_with("torch/"))
        .collect();
    let frames: Vec<&dump::Frame> = if outside.is_empty() {
        entry.frames.iter().take(1).collect()
    } else {
        outside.into_iter().take(2).collect()
    };
    let Some((first, rest)) = frames.split_first() else {
        return diagnostic;
    };
    let mut note = format!(
        "rank {rank} called {what} ({}) at {}:{} in {}",
        entry.profiling_name, first.filename, first.line, first.name
    );
    for frame in rest {
        note.push_str(&format!(", from {}:{} in {}", frame.filename, frame.line, frame.name));
    }
    diagnostic.with_note(note)
}

/// One dump alone: the oldest entry of each group that is not completed.
fn check_alone(rank: &RankDump, diagnostics: &mut Vec<Diagnostic>) {
    let mut seen: BTreeSet<(&str, bool)> = BTreeSet::new();
    for entry in &rank.dump.entries {
        if entry.state == State::Completed || !seen.insert((entry.pg_name.as_str(), entry.is_p2p)) {
            continue;
        }
        let kind = if entry.is_p2p { Kind::P2p } else { Kind::Collective };
        let at = At {
            rank,
            entries: std::slice::from_ref(&entry),
        };
        let mut diagnostic = Diagnostic::new(
            &CollectiveStuck::INFO,
            at.span(),
            format!(
                "rank {} was still in {} #{} ({}) of process group `{}` when it dumped: {}",
                rank.rank,
                kind.noun(),
                kind.seq(entry),
                entry.profiling_name,
                entry.pg_name,
                unfinished_state(&at),
            ),
        )
        .with_severity(Severity::Warning)
        .with_label(format!("rank {}: {}", rank.rank, unfinished_state(&at)))
        .with_note(
            "one rank's dump cannot tell which peer it waits for: check the dumps of every rank together (their \
             folder)",
        );
        diagnostic = with_entry_frames(diagnostic, rank.rank, entry, "it");
        if let Some(first) = rank.wrapped_at {
            diagnostic = diagnostic.with_note(format!(
                "rank {}'s ring buffer wrapped (its dump starts at record {first}): what it ran before is unknown",
                rank.rank
            ));
        }
        diagnostics.push(diagnostic);
    }
}
