//! What the analysis adds to a timeline beyond its orderings. Ghosts: the match a wait
//! lacks or reads stale, dashed and faded, into the wait from where its signal was
//! expected (a lane's margin when nothing records it). Hangs: a host synchronize that
//! never returns, tagged, after the stuck queue it waits for, with a bracket from where
//! that queue is stuck. Each carries its sentence as a `<title>` for screen readers.

use std::fmt::Write;

use super::{BOX_HEIGHT, GUTTER, Geometry, LANE_HEIGHT, box_y, curve, escape, lane_y, rounded_path};
use crate::render::html::source_lines::SourceIndex;
use crate::timeline::{Elsewhere, Ghost, GhostFrom, GhostKind, Hang, Timeline, TimelineEdge, TimelineOp};

/// Where a ghost runs across columns: this far from the border between two lanes, in
/// the free band between their boxes. Of that band's 20 px, the lower lane's top half
/// holds the words over its boxes, the upper lane's bottom the bracket of a stuck queue.
const BAND: f64 = 3.0;

/// Whether `edge` is drawn by a mark instead: a stale match (as its ghost), or the edge
/// into a synchronize that never returns (as the hang).
pub(super) fn drawn_as_mark(timeline: &Timeline, edge: &TimelineEdge) -> bool {
    let stale = timeline
        .ghosts
        .iter()
        .any(|g| g.kind == GhostKind::Stale && g.from == GhostFrom::Op(edge.from) && g.wait == edge.to);
    let hang = timeline
        .hangs
        .iter()
        .any(|h| h.waits_for == edge.from && h.sync == edge.to);
    stale || hang
}

/// Whether op `index` is a synchronize that never returns.
fn never_returns(timeline: &Timeline, index: usize) -> bool {
    timeline.hangs.iter().any(|hang| hang.sync == index)
}

/// [`never_returns`] for an op of `timeline.ops`, by reference.
pub(super) fn is_hung(timeline: &Timeline, op: &TimelineOp) -> bool {
    timeline
        .hangs
        .iter()
        .any(|hang| std::ptr::eq(&timeline.ops[hang.sync], op))
}

/// The marks, in two layers: their lines go under the boxes (which they must not hide),
/// their words over them (which must not hide them).
#[derive(Default)]
pub(super) struct Layers {
    pub under: String,
    pub over: String,
}

/// Every hang and ghost of the timeline.
pub(super) fn marks(timeline: &Timeline, index: &SourceIndex, geometry: Geometry) -> Layers {
    let mut layers = Layers::default();
    for hang in &timeline.hangs {
        layers.under.push_str(&hang_mark(timeline, hang, index, geometry));
    }
    for (number, op) in timeline.ops.iter().enumerate() {
        if never_returns(timeline, number) {
            layers.over.push_str(&never_returns_tag(op, geometry));
        }
    }
    for ghost in &timeline.ghosts {
        let [under, over] = ghost_mark(timeline, ghost, geometry);
        layers.under.push_str(&under);
        layers.over.push_str(&over);
    }
    layers
}

/// A bracket under the stuck part of the queue (from its stuck op to the last op the
/// synchronize waits for) and an arrow from there to the synchronize.
fn hang_mark(timeline: &Timeline, hang: &Hang, index: &SourceIndex, geometry: Geometry) -> String {
    let (sync, last, stuck) = (
        &timeline.ops[hang.sync],
        &timeline.ops[hang.waits_for],
        &timeline.ops[hang.stuck],
    );
    let lane = timeline
        .lanes
        .get(stuck.lane)
        .map_or("its queue", |lane| lane.name.as_str());
    let title = format!(
        "{} never returns: it waits for {lane}, which is stuck at {} (line {}) and never gets past it",
        sync.label,
        stuck.label,
        index.location(&stuck.span).line
    );
    let left = geometry.box_x(stuck.step);
    let right = geometry.box_x(last.step) + geometry.box_width;
    let (top, bottom) = (
        box_y(stuck.lane) + BOX_HEIGHT + 1.0,
        box_y(stuck.lane) + BOX_HEIGHT + 4.0,
    );
    let bracket = format!("M{left},{top} L{left},{bottom} L{right},{bottom} L{right},{top}");
    let from = (right, box_y(last.lane) + BOX_HEIGHT / 2.0);
    let to = (geometry.box_x(sync.step), box_y(sync.lane) + BOX_HEIGHT / 2.0);
    format!(
        r#"<g class="hang" role="img" aria-label="{title}"><title>{title}</title><path class="hang-bracket" d="{bracket}"/><path class="edge edge-hang" data-kind="host-sync" d="{arrow}" marker-end="url(#arrow-hang)"/></g>"#,
        title = escape(&title),
        arrow = curve(from, to),
    )
}

/// A red tag on the synchronize's top edge: the call is made and never returns.
fn never_returns_tag(op: &TimelineOp, geometry: Geometry) -> String {
    const WIDTH: f64 = 82.0;
    // Above the label's first line, over the box's top edge.
    let (x, y) = (geometry.box_x(op.step) + 8.0, box_y(op.lane) - 10.0);
    format!(
        r#"<g class="hang-tag" aria-hidden="true"><rect x="{x}" y="{y}" width="{WIDTH}" height="13" rx="6.5"/><text x="{tx}" y="{ty}" text-anchor="middle">never returns</text></g>"#,
        tx = x + WIDTH / 2.0,
        ty = y + 9.8,
    )
}

/// One ghost: its arrow into the wait (under the boxes), and over them its words over
/// the wait and where a misdirected record went instead.
fn ghost_mark(timeline: &Timeline, ghost: &Ghost, geometry: Geometry) -> [String; 2] {
    let wait = &timeline.ops[ghost.wait];
    let (path, origin) = match ghost.from {
        GhostFrom::Op(from) => (from_op(&timeline.ops[from], wait, geometry), String::new()),
        GhostFrom::Lane(lane) => from_margin(timeline, lane, wait, geometry),
    };
    let elsewhere = match (ghost.from, &ghost.elsewhere) {
        (GhostFrom::Op(from), Some(elsewhere)) => went_elsewhere(&timeline.ops[from], elsewhere, geometry),
        _ => String::new(),
    };
    let kind = ghost.kind.as_str();
    let under = format!(
        r#"<g class="ghost ghost-{kind}" data-kind="{kind}" role="img" aria-label="{title}"><title>{title}</title>{origin}<path class="ghost-line" d="{path}" marker-end="url(#arrow-ghost)"/></g>"#,
        title = escape(&ghost.title),
    );
    // The words repeat the title's gist: hidden from screen readers, which read that.
    let over = format!(
        r#"<g class="ghost-words ghost-{kind}" aria-hidden="true"><text class="ghost-label" x="{x}" y="{y}">{label}</text>{elsewhere}</g>"#,
        x = geometry.box_x(wait.step) + 2.0,
        y = box_y(wait.lane) - 4.0,
        label = escape(&ghost.label),
    );
    [under, over]
}

/// From a record's right edge into the wait's left edge: a curve when the wait is in a
/// later column; otherwise out through the gap after the record, across the columns in
/// the free band next to the wait's lane, and in through the gap before the wait.
fn from_op(from: &TimelineOp, to: &TimelineOp, geometry: Geometry) -> String {
    let (x1, y1) = (
        geometry.box_x(from.step) + geometry.box_width,
        box_y(from.lane) + BOX_HEIGHT / 2.0,
    );
    let (x2, y2) = (geometry.box_x(to.step), box_y(to.lane) + BOX_HEIGHT / 2.0);
    if to.step > from.step {
        return curve((x1, y1), (x2, y2));
    }
    let gap = geometry.column - geometry.box_width;
    let band = if from.lane < to.lane {
        lane_y(to.lane) - BAND
    } else {
        lane_y(to.lane + 1) - BAND
    };
    let out_x = x1 + gap * 0.35;
    let in_x = x2 - gap / 2.0;
    rounded_path(&[(x1, y1), (out_x, y1), (out_x, band), (in_x, band), (in_x, y2), (x2, y2)])
}

/// From the left margin of `lane` (a hollow dot: nothing records the signal) into the
/// wait: straight along the lane when nothing stands before the wait on it, else down
/// the margin and across in the band above the wait's lane.
fn from_margin(timeline: &Timeline, lane: usize, to: &TimelineOp, geometry: Geometry) -> (String, String) {
    let (xs, ys) = (10.0, lane_y(lane) + LANE_HEIGHT / 2.0);
    let (x2, y2) = (geometry.box_x(to.step), box_y(to.lane) + BOX_HEIGHT / 2.0);
    let clear = lane == to.lane && !timeline.ops.iter().any(|op| op.lane == lane && op.step < to.step);
    let path = if clear {
        format!("M{},{ys} L{x2},{y2}", xs + 4.0)
    } else {
        let gap = geometry.column - geometry.box_width;
        let (down_x, in_x, band) = (GUTTER - 16.0, x2 - gap / 2.0, lane_y(to.lane) - BAND);
        rounded_path(&[
            (xs + 4.0, ys),
            (down_x, ys),
            (down_x, band),
            (in_x, band),
            (in_x, y2),
            (x2, y2),
        ])
    };
    let origin = format!(r#"<circle class="ghost-origin" cx="{xs}" cy="{ys}" r="4"/>"#);
    (path, origin)
}

/// Where a misdirected record went: its words over the record, and a short arrow
/// leaving it toward the lane of the rank it went to, where the window has one. (Drawn
/// all the way, it would share the gap after the record with the ghost, and seem to
/// end at whatever box of that lane stands there.)
fn went_elsewhere(from: &TimelineOp, elsewhere: &Elsewhere, geometry: Geometry) -> String {
    const STUB: f64 = 14.0;
    let gap = geometry.column - geometry.box_width;
    let (x1, y1) = (
        geometry.box_x(from.step) + geometry.box_width,
        box_y(from.lane) + BOX_HEIGHT / 2.0,
    );
    let mut out = String::from(r#"<g class="elsewhere">"#);
    if let Some(lane) = elsewhere.lane.filter(|&lane| lane != from.lane) {
        let toward = if lane > from.lane { 1.0 } else { -1.0 };
        let (sx, sy) = (x1, y1 + toward * (BOX_HEIGHT / 2.0 - 6.0));
        let _ = write!(
            out,
            r#"<path class="elsewhere-line" d="M{sx},{sy} L{},{}" marker-end="url(#arrow)"/>"#,
            sx + gap * 0.55,
            sy + toward * STUB
        );
    }
    let _ = write!(
        out,
        r#"<text class="elsewhere-label" x="{}" y="{}">sent {}</text></g>"#,
        geometry.box_x(from.step) + 2.0,
        box_y(from.lane) - 4.0,
        escape(&elsewhere.label)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::super::timeline_svg;
    use super::*;
    use crate::source::{SourceFile, Sources, Span};
    use crate::timeline::{EdgeKind, Highlight, Lane, LaneKind, Role};

    const SOURCE: &str =
        "aclrtRecordEvent(ev, s1);\naclrtStreamWaitEvent(s2, ev);\nkernel(s2, \"k\");\naclrtSynchronizeStream(s2);\n";

    fn sources() -> Sources {
        let mut sources = Sources::default();
        sources.add(SourceFile::new("t.sync", SOURCE));
        sources
    }

    fn lane(name: &str, kind: LaneKind, rank: u32) -> Lane {
        Lane {
            name: name.into(),
            kind,
            rank,
            omitted_before: 0,
            omitted_after: 0,
        }
    }

    /// An op of `SOURCE`'s line `line` (1-based).
    fn op(label: &str, lane: usize, step: u32, line: usize, executed: bool) -> TimelineOp {
        let start: usize = SOURCE.lines().take(line - 1).map(|l| l.len() + 1).sum();
        TimelineOp {
            lane,
            step,
            label: label.into(),
            object: None,
            span: Span::new(crate::source::FileId(0), start..start + 4),
            executed,
            role: Role::Involved,
            number: None,
            time_ns: None,
            source: None,
        }
    }

    fn timeline(ops: Vec<TimelineOp>, edges: Vec<TimelineEdge>) -> Timeline {
        Timeline {
            assignment: None,
            lanes: vec![
                lane("host thread main", LaneKind::HostThread, 0),
                lane("stream s1", LaneKind::Stream, 0),
                lane("stream s2", LaneKind::Stream, 0),
                lane("stream s (rank 2)", LaneKind::Stream, 2),
            ],
            ops,
            edges,
            omitted: 0,
            highlight: Highlight::Involved,
            race: None,
            ghosts: Vec::new(),
            hangs: Vec::new(),
        }
    }

    fn edge(from: usize, to: usize, kind: EdgeKind) -> TimelineEdge {
        TimelineEdge {
            from,
            to,
            kind,
            on_cycle: false,
        }
    }

    /// A wait nothing records, the kernel behind it, and the host's synchronize of that
    /// stream, which never returns.
    fn hung() -> Timeline {
        let mut timeline = timeline(
            vec![
                op("aclrtStreamWaitEvent", 2, 1, 2, false),
                op("kernel k", 2, 2, 3, false),
                op("aclrtSynchronizeStream", 0, 3, 4, false),
            ],
            vec![edge(1, 2, EdgeKind::HostSync)],
        );
        timeline.ghosts.push(Ghost {
            wait: 0,
            from: GhostFrom::Lane(2),
            kind: GhostKind::Missing,
            label: "no record".into(),
            title: "missing signal: nothing records event ev".into(),
            elsewhere: None,
        });
        timeline.hangs.push(Hang {
            sync: 2,
            waits_for: 1,
            stuck: 0,
        });
        timeline
    }

    fn svg(timeline: &Timeline) -> String {
        let sources = sources();
        timeline_svg(timeline, &SourceIndex::new(&sources), "f0")
    }

    /// The element of `svg` that starts with `start`, to its first `end`.
    fn element<'s>(svg: &'s str, start: &str, end: &str) -> &'s str {
        let from = svg.find(start).unwrap_or_else(|| panic!("{start} in {svg}"));
        let rest = &svg[from..];
        &rest[..rest.find(end).unwrap_or(rest.len()) + end.len()]
    }

    #[test]
    fn a_wait_nothing_records_gets_a_ghost_from_the_lane_margin_with_its_words() {
        let svg = svg(&hung());
        let ghost = element(&svg, r#"<g class="ghost ghost-missing""#, "</g>");
        // Said to screen readers, and shown on hover.
        assert!(
            ghost.contains(r#"role="img" aria-label="missing signal: nothing records event ev"><title>missing signal: nothing records event ev</title>"#),
            "{ghost}"
        );
        assert!(
            ghost.contains(r#"<circle class="ghost-origin" cx="10""#),
            "starts at the margin: {ghost}"
        );
        assert!(ghost.contains(r#"marker-end="url(#arrow-ghost)""#), "{ghost}");
        let words = element(
            &svg,
            r#"<g class="ghost-words ghost-missing" aria-hidden="true">"#,
            "</g>",
        );
        assert!(words.contains(">no record</text>"), "{words}");
    }

    #[test]
    fn a_hung_synchronize_is_tagged_and_joined_to_the_stuck_queue_it_waits_for() {
        let timeline = hung();
        let svg = svg(&timeline);
        let hang = element(&svg, r#"<g class="hang""#, "</g>");
        assert!(
            hang.contains(
                "<title>aclrtSynchronizeStream never returns: it waits for stream s2, which is stuck at aclrtStreamWaitEvent (line 2) and never gets past it</title>"
            ),
            "{hang}"
        );
        assert!(hang.contains(r#"class="hang-bracket""#) && hang.contains(r#"class="edge edge-hang""#));
        // The host-synchronize edge it stands for is not drawn a second time.
        assert!(!svg.contains(r#"class="edge edge-sync""#), "{svg}");
        let sync = element(
            &svg,
            r#"<a class="op op-involved op-stuck op-hung" id="f0-op2""#,
            "</title>",
        );
        assert!(sync.contains("never returns"), "{sync}");
        assert!(svg.contains(">never returns</text>"), "the tag");
    }

    #[test]
    fn a_stale_match_is_drawn_as_its_ghost_not_as_a_match() {
        let mut timeline = timeline(
            vec![
                op("aclrtRecordEvent", 1, 0, 1, true),
                op("aclrtStreamWaitEvent", 2, 1, 2, true),
            ],
            vec![edge(0, 1, EdgeKind::Match)],
        );
        let plain = svg(&timeline);
        assert!(plain.contains(r#"class="edge edge-match""#), "{plain}");
        timeline.ghosts.push(Ghost {
            wait: 1,
            from: GhostFrom::Op(0),
            kind: GhostKind::Stale,
            label: "stale: still set".into(),
            title: "stale signal".into(),
            elsewhere: None,
        });
        let svg = svg(&timeline);
        assert!(!svg.contains(r#"class="edge edge-match""#), "{svg}");
        assert!(
            svg.contains(r#"<g class="ghost ghost-stale" data-kind="stale""#),
            "{svg}"
        );
    }

    #[test]
    fn a_record_sent_to_another_rank_says_where_and_points_there() {
        let mut timeline = timeline(
            vec![
                op("aclrtStreamWaitEvent", 2, 1, 2, false),
                op("aclrtRecordEvent", 1, 1, 1, true),
            ],
            Vec::new(),
        );
        timeline.ghosts.push(Ghost {
            wait: 0,
            from: GhostFrom::Op(1),
            kind: GhostKind::WrongPeer,
            label: "expects rank 1 · notify 0".into(),
            title: "missing signal".into(),
            elsewhere: Some(Elsewhere {
                lane: Some(3),
                label: "to rank 2 · notify 0".into(),
            }),
        });
        let svg = svg(&timeline);
        let words = element(&svg, r#"<g class="ghost-words ghost-wrong-peer""#, "</g></g>");
        assert!(words.contains(">expects rank 1 · notify 0</text>"), "{words}");
        assert!(words.contains(">sent to rank 2 · notify 0</text>"), "{words}");
        assert!(
            words.contains(r#"class="elsewhere-line""#),
            "toward rank 2's lane: {words}"
        );
        // Same column: the ghost goes around through the gaps, not across the boxes.
        let ghost = element(&svg, r#"<g class="ghost ghost-wrong-peer""#, "</g>");
        assert!(ghost.contains(" Q"), "a routed path: {ghost}");
    }

    #[test]
    fn marks_of_a_hung_wait_nothing_records() {
        let timeline = hung();
        let sources = sources();
        let geometry = Geometry::of(&timeline);
        let layers = marks(&timeline, &SourceIndex::new(&sources), geometry);
        insta::assert_snapshot!(format!("under:\n{}\nover:\n{}", layers.under, layers.over).replace("><", ">\n<"));
    }
}
