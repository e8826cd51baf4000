//! A finding's timeline as inline SVG, laid out here so that the page needs no script to
//! show it: one lane per host thread, stream or HCCL thread, ops as boxes in their
//! happens-before step, arrows for matches and host synchronizes, the cycle in red.

use std::fmt::Write;

use super::escape;
use super::source_lines::SourceIndex;
use crate::timeline::{EdgeKind, Highlight, LaneKind, Role, Timeline, TimelineEdge, TimelineOp};

mod marks;

/// Left of the first column: room for the count of earlier ops left out, and for the
/// back arrows that enter the first column.
const GUTTER: f64 = 76.0;
/// The lane names stand in a column of their own, which stays put while the lanes scroll.
const NAMES_WIDTH: f64 = 200.0;
const BOX_HEIGHT: f64 = 50.0;
const LANE_HEIGHT: f64 = 70.0;
/// Room above and below the lanes for the arrows that go back in steps (the ones that
/// close a cycle): they run around the lanes, upwards above them, downwards below.
const TOP: f64 = 34.0;
const BOTTOM: f64 = 34.0;
/// Between two back arrows in one corridor or gap.
const TRACK: f64 = 6.0;
/// Characters of a label line before it is shortened, and their width (12px bold).
const LABEL_CHARS: usize = 34;
/// Labels longer than this are set on two lines, split between words of the API name.
const ONE_LINE_CHARS: usize = 20;
const CHAR_WIDTH: f64 = 7.0;

/// "HcommChannelNotifyRecordOnThread" as "HcommChannelNotify" and "RecordOnThread":
/// split at the word (a space, or a capital after a lower-case letter) nearest the middle.
fn label_lines(label: &str) -> (String, Option<String>) {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= ONE_LINE_CHARS {
        return (label.to_string(), None);
    }
    let middle = chars.len() / 2;
    let split = (1..chars.len())
        .filter(|&i| chars[i] == ' ' || (chars[i].is_uppercase() && chars[i - 1].is_lowercase()))
        .min_by_key(|&i| i.abs_diff(middle));
    match split {
        Some(at) => {
            let first: String = chars[..at].iter().collect();
            let second: String = chars[at..].iter().collect();
            (first, Some(second.trim_start().to_string()))
        }
        None => (label.to_string(), None),
    }
}

/// The box width and the column pitch: the longest label fits, within bounds.
#[derive(Clone, Copy)]
struct Geometry {
    box_width: f64,
    column: f64,
}

impl Geometry {
    fn of(timeline: &Timeline) -> Self {
        let longest = timeline
            .ops
            .iter()
            .map(|op| {
                let (first, second) = label_lines(&op.label);
                let second = second.map_or(0, |s| s.chars().count());
                first.chars().count().max(second).min(LABEL_CHARS)
            })
            .max()
            .unwrap_or(0);
        let box_width = (longest as f64 * CHAR_WIDTH + 18.0).clamp(128.0, 250.0);
        Geometry {
            box_width,
            column: box_width + 26.0,
        }
    }

    fn box_x(self, step: u32) -> f64 {
        GUTTER + self.column * f64::from(step) + (self.column - self.box_width) / 2.0
    }
}

/// One timeline: the lane names, then the lanes (which scroll sideways when long) as an
/// `<svg>`; `id` prefixes element ids so that several fit one page.
pub fn timeline_svg(timeline: &Timeline, index: &SourceIndex, id: &str) -> String {
    let geometry = Geometry::of(timeline);
    let width = GUTTER + geometry.column * f64::from(timeline.steps().max(1)) + 24.0;
    let height = TOP + LANE_HEIGHT * timeline.lanes.len() as f64 + BOTTOM;
    let mut svg = String::from(r#"<div class="timeline-grid">"#);
    svg.push_str(&lane_names(timeline, height));
    let _ = write!(
        svg,
        r#"<div class="scroll"><svg class="timeline" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="timeline of the execution">"#
    );
    svg.push_str(&lanes(timeline, width));
    let mut tracks = Tracks::default();
    // An edge a ghost or a hang stands for is drawn as that, in its own style.
    let plain = |e: &&TimelineEdge| !e.on_cycle && !marks::drawn_as_mark(timeline, e);
    for edge in timeline.edges.iter().filter(plain) {
        svg.push_str(&arrow(timeline, edge, geometry, &mut tracks));
    }
    let marks = marks::marks(timeline, index, geometry);
    svg.push_str(&marks.under);
    let runs = runs_of_lines(timeline);
    for (number, op) in timeline.ops.iter().enumerate() {
        let id = format!("{id}-op{number}");
        svg.push_str(&op_box(timeline, op, runs[number], index, &id, geometry));
    }
    svg.push_str(&marks.over);
    // Cycle steps last, so that they are drawn over the boxes they join.
    for edge in timeline.edges.iter().filter(|e| e.on_cycle) {
        svg.push_str(&arrow(timeline, edge, geometry, &mut tracks));
    }
    if let Some(race) = timeline.race {
        svg.push_str(&race_mark(timeline, race, geometry));
    }
    svg.push_str("</svg></div></div>");
    svg
}

/// A race: a jagged line between the two accesses nothing orders, with a mark at its
/// middle; its title names the race (read by screen readers too).
fn race_mark(timeline: &Timeline, [first, second]: [usize; 2], geometry: Geometry) -> String {
    let (Some(a), Some(b)) = (timeline.ops.get(first), timeline.ops.get(second)) else {
        return String::new();
    };
    // From edge to edge, not over the boxes' labels.
    let (ax, ay) = (geometry.box_x(a.step), box_y(a.lane));
    let (bx, by) = (geometry.box_x(b.step), box_y(b.lane));
    let half = geometry.box_width / 2.0;
    let ((x1, y1), (x2, y2)) = if a.lane == b.lane {
        let (left, right) = if ax <= bx {
            ((ax, a), (bx, b))
        } else {
            ((bx, b), (ax, a))
        };
        let mid = box_y(left.1.lane) + BOX_HEIGHT / 2.0;
        ((left.0 + geometry.box_width, mid), (right.0, mid))
    } else if ay < by {
        ((ax + half, ay + BOX_HEIGHT), (bx + half, by))
    } else {
        ((ax + half, ay), (bx + half, by + BOX_HEIGHT))
    };
    let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
    let lane_name = |op: &TimelineOp| timeline.lanes.get(op.lane).map_or("", |lane| lane.name.as_str());
    let title = format!(
        "data race: {} on {} and {} on {} touch the same bytes, and nothing orders them",
        a.label,
        lane_name(a),
        b.label,
        lane_name(b)
    );
    format!(
        r#"<g class="race" role="img" aria-label="{title}"><title>{title}</title><line class="race-line" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/><circle class="race-dot" cx="{mx}" cy="{my}" r="11"/><text class="race-text" x="{mx}" y="{ty}" text-anchor="middle">≠</text></g>"#,
        title = escape(&title),
        ty = my + 5.0,
    )
}

/// The column of lane names: each lane's kind and name, on its band. With several
/// ranks, each rank's lanes share a tint and a stripe, and the rank stands on the kind
/// line, where no name can cut it; the name's full text is the lane's tooltip.
fn lane_names(timeline: &Timeline, height: f64) -> String {
    let mut out = format!(
        r#"<svg class="lane-names" width="{NAMES_WIDTH}" height="{height}" viewBox="0 0 {NAMES_WIDTH} {height}">"#
    );
    let ranked = timeline.lanes.iter().any(|lane| lane.rank != timeline.lanes[0].rank);
    for (index, lane) in timeline.lanes.iter().enumerate() {
        let y = lane_y(index);
        // The kind line says what the name's prefix would ("stream s1").
        let prefix = format!("{} ", lane.kind.as_str());
        let name = lane.name.strip_prefix(&prefix).unwrap_or(&lane.name);
        let (kind_name, name) = if ranked {
            let suffix = format!(" (rank {})", lane.rank);
            (
                format!("{} · rank {}", lane.kind.as_str(), lane.rank),
                name.strip_suffix(&suffix).unwrap_or(name),
            )
        } else {
            (lane.kind.as_str().to_string(), name)
        };
        let _ = write!(
            out,
            r#"<g class="lane {kind}"><title>{full}</title><rect class="band {shade}" x="0" y="{y}" width="{NAMES_WIDTH}" height="{LANE_HEIGHT}"/>"#,
            kind = lane_class(lane.kind),
            full = escape(&lane.name),
            shade = rank_shade(lane.rank),
        );
        if ranked {
            let _ = write!(
                out,
                r#"<rect class="rank-stripe {shade}" x="0" y="{y}" width="5" height="{LANE_HEIGHT}"/>"#,
                shade = rank_shade(lane.rank),
            );
        }
        let _ = write!(
            out,
            r#"<text class="lane-kind" x="12" y="{kind_y}">{kind_name}</text><text class="lane-name" x="12" y="{name_y}">{name}</text></g>"#,
            kind_y = y + 29.0,
            name_y = y + 47.0,
            kind_name = escape(&kind_name),
            name = escape(&shorten(name, 26)),
        );
    }
    out.push_str("</svg>");
    out
}

/// Ranks cycle through six tints: neighbouring ranks never share one.
fn rank_shade(rank: u32) -> String {
    format!("rank-{}", rank % 6)
}

fn lane_class(kind: LaneKind) -> &'static str {
    match kind {
        LaneKind::HostThread => "lane-host",
        LaneKind::Stream => "lane-stream",
        LaneKind::HcclThread => "lane-hccl",
    }
}

fn lane_y(lane: usize) -> f64 {
    TOP + LANE_HEIGHT * lane as f64
}

fn box_y(lane: usize) -> f64 {
    lane_y(lane) + (LANE_HEIGHT - BOX_HEIGHT) / 2.0
}

/// Lane bands (each rank its tint), names and the count of ops left out.
fn lanes(timeline: &Timeline, width: f64) -> String {
    let mut out = String::new();
    for (index, lane) in timeline.lanes.iter().enumerate() {
        let y = lane_y(index);
        let shade = rank_shade(lane.rank);
        let kind = lane_class(lane.kind);
        let _ = write!(
            out,
            r#"<g class="lane {kind}"><rect class="band {shade}" x="0" y="{y}" width="{width}" height="{LANE_HEIGHT}"/><line class="lane-axis" x1="{GUTTER}" y1="{mid}" x2="{width}" y2="{mid}"/>"#,
            mid = y + LANE_HEIGHT / 2.0,
        );
        if lane.omitted_before > 0 {
            let _ = write!(
                out,
                r#"<text class="omitted" x="{}" y="{}">… {} before</text>"#,
                GUTTER - 6.0,
                y + LANE_HEIGHT - 6.0,
                lane.omitted_before
            );
        }
        if lane.omitted_after > 0 {
            let _ = write!(
                out,
                r#"<text class="omitted omitted-after" x="{}" y="{}">{} after …</text>"#,
                width - 8.0,
                y + LANE_HEIGHT - 6.0,
                lane.omitted_after
            );
        }
        out.push_str("</g>");
    }
    out
}

/// One op: a box linked to its source line, the line's text as its tooltip.
/// For each op whose line runs more than once in the window (a loop's iterations, a
/// helper called twice), which run of the line it is: boxes that read the same line
/// are told apart. Ops are in step order.
fn runs_of_lines(timeline: &Timeline) -> Vec<Option<(usize, usize)>> {
    let mut totals: std::collections::HashMap<(&crate::source::Span, usize), usize> = Default::default();
    for op in &timeline.ops {
        *totals.entry((&op.span, op.lane)).or_default() += 1;
    }
    let mut seen: std::collections::HashMap<(&crate::source::Span, usize), usize> = Default::default();
    timeline
        .ops
        .iter()
        .map(|op| {
            let key = (&op.span, op.lane);
            let run = seen.entry(key).or_default();
            *run += 1;
            let total = totals[&key];
            (total > 1).then_some((*run, total))
        })
        .collect()
}

fn op_box(
    timeline: &Timeline,
    op: &TimelineOp,
    run: Option<(usize, usize)>,
    index: &SourceIndex,
    id: &str,
    geometry: Geometry,
) -> String {
    let (x, y) = (geometry.box_x(op.step), box_y(op.lane));
    let box_width = geometry.box_width;
    let mut classes = vec!["op"];
    classes.push(match op.role {
        Role::Cycle => "op-cycle",
        Role::Involved => "op-involved",
        Role::Context => "op-context",
    });
    // A synchronize that never returns was called: it is stuck in the call, not before it.
    let hung = marks::is_hung(timeline, op);
    if !op.executed {
        classes.push(if hung { "op-stuck op-hung" } else { "op-stuck" });
    }
    let location = index.location(&op.span);
    let mut tooltip = format!("{}\n{}", op.label, location.describe());
    if let Some(object) = &op.object {
        tooltip = format!("{} ({object})\n{}", op.label, location.describe());
    }
    if let Some(source) = &op.source {
        tooltip.push_str(&format!("\nin the source: {source}"));
    }
    if let Some((run, total)) = run {
        tooltip.push_str(&format!("\nrun {run} of {total} of this line here"));
    }
    if hung {
        tooltip.push_str("\nnever returns: the work it waits for is stuck");
    } else if !op.executed {
        tooltip.push_str("\nnever runs");
    }
    let mut out = format!(
        r##"<a class="{classes}" id="{id}" href="#{anchor}" data-role="{role}" data-executed="{executed}"><title>{tooltip}</title><rect x="{x}" y="{y}" width="{box_width}" height="{BOX_HEIGHT}" rx="5"/>"##,
        classes = classes.join(" "),
        anchor = location.anchor(),
        role = match op.role {
            Role::Cycle => "cycle",
            Role::Involved => "involved",
            Role::Context => "context",
        },
        executed = op.executed,
        tooltip = escape(&tooltip),
    );
    let (first, second) = label_lines(&op.label);
    let _ = write!(
        out,
        r#"<text class="op-label" x="{}" y="{}">{}</text>"#,
        x + 8.0,
        y + if second.is_some() { 16.0 } else { 20.0 },
        escape(&shorten(&first, LABEL_CHARS))
    );
    if let Some(second) = second {
        let _ = write!(
            out,
            r#"<text class="op-label" x="{}" y="{}">{}</text>"#,
            x + 8.0,
            y + 29.0,
            escape(&shorten(&second, LABEL_CHARS))
        );
    }
    // The second line is smaller: about 5.8 px a character.
    let room = ((box_width - 60.0) / 5.8) as usize;
    // A trace's call is where its `loc` says, not on the trace's line.
    let mut place = match &op.source {
        Some(source) => source.rsplit('/').next().unwrap_or(source).to_string(),
        None => format!("line {}", location.line),
    };
    if let Some((run, _)) = run {
        place.push_str(&format!(" #{run}"));
    }
    let detail = match &op.object {
        Some(object) => format!("{} · {place}", shorten(object, room.max(6))),
        None => place,
    };
    let _ = write!(
        out,
        r#"<text class="op-detail" x="{}" y="{}">{}</text>"#,
        x + 8.0,
        y + if op.label.chars().count() > ONE_LINE_CHARS {
            43.0
        } else {
            38.0
        },
        escape(&detail)
    );
    if let Some(number) = op.number {
        let class = if timeline.highlight == Highlight::Cycle {
            "step step-cycle"
        } else {
            "step step-witness"
        };
        let _ = write!(
            out,
            r#"<circle class="{class}" cx="{cx}" cy="{cy}" r="10"/><text class="step-number" x="{cx}" y="{ny}">{number}</text>"#,
            cx = x + box_width - 2.0,
            cy = y + 2.0,
            ny = y + 6.0,
        );
    }
    out.push_str("</a>");
    out
}

/// How many back arrows already run above and below the lanes.
#[derive(Default)]
struct Tracks {
    above: usize,
    below: usize,
}

/// An arrow between two boxes: forward, a curve from the right edge of one to the left
/// edge of the other; back in steps (closing a cycle), around the lanes through the gaps
/// between columns, so that it crosses no box.
fn arrow(timeline: &Timeline, edge: &TimelineEdge, geometry: Geometry, tracks: &mut Tracks) -> String {
    let (from, to) = (&timeline.ops[edge.from], &timeline.ops[edge.to]);
    let class = match (edge.on_cycle, edge.kind) {
        (true, _) => "edge edge-cycle",
        (false, EdgeKind::Match) => "edge edge-match",
        (false, EdgeKind::HostSync) => "edge edge-sync",
        (false, _) => "edge edge-other",
    };
    let marker = if edge.on_cycle { "arrow-cycle" } else { "arrow" };
    let (x1, y1) = (
        geometry.box_x(from.step) + geometry.box_width,
        box_y(from.lane) + BOX_HEIGHT / 2.0,
    );
    let (x2, y2) = (geometry.box_x(to.step), box_y(to.lane) + BOX_HEIGHT / 2.0);
    let path = if to.step > from.step {
        curve((x1, y1), (x2, y2))
    } else {
        let gap = geometry.column - geometry.box_width;
        let corridor = if to.lane < from.lane {
            tracks.above += 1;
            (TOP - 10.0 - TRACK * (tracks.above - 1) as f64).max(3.0)
        } else {
            tracks.below += 1;
            lane_y(timeline.lanes.len()) + (10.0 + TRACK * (tracks.below - 1) as f64).min(BOTTOM - 3.0)
        };
        // Each back arrow has its own verticals in the gaps, whichever corridor it takes.
        let offset = (TRACK * (tracks.above + tracks.below - 1) as f64).min(gap / 2.0 - 3.0);
        let out_x = x1 + gap / 2.0 + offset - TRACK / 2.0;
        let in_x = x2 - gap / 2.0 - offset + TRACK / 2.0;
        rounded_path(&[
            (x1, y1),
            (out_x, y1),
            (out_x, corridor),
            (in_x, corridor),
            (in_x, y2),
            (x2, y2),
        ])
    };
    format!(
        r#"<path class="{class}" data-kind="{kind}" d="{path}" marker-end="url(#{marker})"/>"#,
        kind = edge.kind.as_str()
    )
}

/// A forward arrow's path: from the right edge of one box to the left edge of a later one.
fn curve((x1, y1): (f64, f64), (x2, y2): (f64, f64)) -> String {
    let bend = ((x2 - x1) / 2.0).max(18.0);
    format!("M{x1},{y1} C{},{y1} {},{y2} {x2},{y2}", x1 + bend, x2 - bend)
}

/// A polyline through `points` with its corners rounded.
fn rounded_path(points: &[(f64, f64)]) -> String {
    const RADIUS: f64 = 6.0;
    let mut path = format!("M{},{}", points[0].0, points[0].1);
    for window in points.windows(3) {
        let [(ax, ay), (bx, by), (cx, cy)] = [window[0], window[1], window[2]];
        let toward = |(fx, fy): (f64, f64), length: f64| {
            let distance = ((fx - bx).powi(2) + (fy - by).powi(2)).sqrt().max(f64::EPSILON);
            let r = RADIUS.min(length / 2.0);
            (bx + (fx - bx) * r / distance, by + (fy - by) * r / distance)
        };
        let before = toward((ax, ay), ((ax - bx).abs() + (ay - by).abs()).max(0.0));
        let after = toward((cx, cy), ((cx - bx).abs() + (cy - by).abs()).max(0.0));
        path.push_str(&format!(
            " L{},{} Q{bx},{by} {},{}",
            before.0, before.1, after.0, after.1
        ));
    }
    let last = points[points.len() - 1];
    path.push_str(&format!(" L{},{}", last.0, last.1));
    path
}

/// The arrowheads every timeline of the page refers to.
pub fn markers() -> &'static str {
    r#"<svg class="defs" width="0" height="0" aria-hidden="true"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker><marker id="arrow-cycle" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead-cycle"/></marker><marker id="arrow-ghost" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M1,1 L9,5 L1,9 z" class="arrowhead-ghost"/></marker><marker id="arrow-hang" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead-hang"/></marker></defs></svg>"#
}

/// `text` cut to `max` characters, with an ellipsis.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max - 1).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_api_names_split_between_words_near_the_middle() {
        assert_eq!(
            label_lines("HcommChannelNotifyRecordOnThread"),
            ("HcommChannelNotify".to_string(), Some("RecordOnThread".to_string()))
        );
        assert_eq!(label_lines("aclrtRecordEvent"), ("aclrtRecordEvent".to_string(), None));
        assert_eq!(
            label_lines("kernel attention_backward_long"),
            ("kernel".to_string(), Some("attention_backward_long".to_string()))
        );
    }

    #[test]
    fn rounded_paths_pass_through_every_point() {
        let path = rounded_path(&[(0.0, 0.0), (10.0, 0.0), (10.0, 20.0)]);
        // The radius is at most half a segment: 5 on the first, 6 on the second.
        assert!(path.starts_with("M0,0 L5,0 Q10,0 10,6"), "{path}");
        assert!(path.ends_with(" L10,20"), "{path}");
    }
}
