"""A report's timeline as one inline SVG picture, for the HTML report.

One lane per unit (host and unit when the log holds several hosts; the input file when an
entry names no host), a marker per timeline entry on a real time axis, and the causal
chain as arrows: each step of a chain finding to the next, in the chain's order, and a
finding's root line to each symptom folded under it. Quiet stretches much longer than the
events around them are cut out of the axis and labelled with their length, so that bursts
a few seconds long stay readable; entries without a time sit in a strip of their own at the
right, in line order. Every marker and arrow carries data attributes (`data-finding`,
`data-from`, `data-to`) naming what it shows; every text taken from the log is escaped.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from itertools import pairwise
from pathlib import PurePath

from analyzer.choices import FindingKind, Severity
from analyzer.clock import to_seconds
from analyzer.models import Finding, Report, TimelineEntry
from analyzer.prose import clip

SEVERITY_COLOURS = {Severity.critical: "#b3261e", Severity.high: "#d9480f", Severity.medium: "#c77c02",
                    Severity.low: "#1971c2", Severity.info: "#6c757d"}
LIFECYCLE = {  # timeline kind → (shape, colour, legend text)
    "start": ("triangle", "#2b8a3e", "start"),
    "ready": ("circle", "#37b24d", "ready"),
    "restart": ("diamond", "#1864ab", "restart"),
    "exit": ("square", "#495057", "exit"),
    "upgrade": ("hexagon", "#7048e8", "package upgrade"),
}
OTHER = ("circle", "#adb5bd", "other")
FINDING_ROLES = {  # how a finding's line is drawn, and what the legend says of it
    "root": "finding n (of a chain: its root cause)",
    "member": "another step of chain n",
    "symptom": "a symptom finding n explains",
}

WIDTH = 800  # viewBox units; the picture is scaled to the page's width
LABEL_W = 150  # the lane names, right-aligned
PLOT_X0, PLOT_X1 = LABEL_W + 8, WIDTH - 12
TOP = 6
ROW_H = 24  # one row of markers; markers too close in one lane are stacked in rows
LANE_PAD = 4
MAX_ROWS = 4
MAX_LANES = 10  # more units than this share a last lane
MIN_DX = 17  # markers closer than this (px) in one lane go to another row
BREAK_W = 40  # a cut-out quiet stretch
SEG_PAD = 12  # markers keep this far from a segment's ends
MIN_SEG_W = 64
TICK_GAP = 64  # px between tick labels
BREAK_MIN_S = 120.0  # a gap is cut out when longer than this and than BREAK_SHARE of the span
BREAK_SHARE = 0.12
MAX_SEGMENTS = 6
NICE_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
              172800, 604800)
HEAD_R = 10  # arrowheads stop this far before the centre of the marker they point at
LABEL_CHARS = 24


@dataclass
class Point:
    """One timeline entry placed in the picture."""

    index: int  # into report.timeline: the marker's id is m{index}
    entry: TimelineEntry
    lane: int
    seconds: float | None
    role: str  # a lifecycle kind, root, member, symptom or other
    rank: int | None = None  # the finding the line belongs to
    severity: Severity | None = None
    x: float = 0.0
    y: float = 0.0
    row: int = 0

    @property
    def id(self) -> str:
        return f"m{self.index}"


@dataclass
class Segment:
    """A stretch of the x axis: timed (t0..t1 in seconds) or the untimed strip."""

    x0: float
    x1: float
    t0: float = 0.0
    t1: float = 0.0
    timed: bool = True
    count: int = 0

    def x(self, t: float) -> float:
        lo, hi = self.x0 + SEG_PAD, self.x1 - SEG_PAD
        if self.t1 <= self.t0:
            return (self.x0 + self.x1) / 2
        return lo + (t - self.t0) / (self.t1 - self.t0) * (hi - lo)


@dataclass(frozen=True)
class Arrow:
    kind: str  # chain or symptom
    rank: int
    start: Point
    end: Point


def timeline_svg(report: Report, single_input: bool = True) -> str:
    """The picture as an <svg> element, or "" when the report has no timeline."""
    if not report.timeline:
        return ""
    labels, lane_of = lanes(report.timeline)
    points = _points(report, lane_of)
    segments = _place_x(points, [i.path for i in report.inputs])
    heights = _place_y(points, len(labels))
    arrows = arrows_of(report.findings, points)
    axis_y = TOP + sum(heights) + 2
    out: list[str] = []
    out += _lanes_drawn(labels, heights)
    out += _breaks(segments, axis_y)
    out += _axis(segments, axis_y)
    out += [_arrow(a) for a in arrows]
    out += [_marker(p, labels, single_input) for p in points]
    legend, height = _legend(points, arrows, axis_y + 44)
    out += legend
    days = sorted({e.time[:10] for e in report.timeline if e.time})
    summary = (f"Timeline of {len(points)} events in {len(labels)} lanes"
               + (f", {days[0]}" + (f" to {days[-1]}" if len(days) > 1 else "") if days else ", no times"))
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {WIDTH} {height:.0f}" '
            f'width="100%" role="img" aria-labelledby="tl-title" font-family="system-ui, sans-serif" '
            f'font-size="11" data-lanes="{len(labels)}" data-events="{len(points)}">'
            f'<title id="tl-title">{escape(summary)}</title>'
            + _defs())
    return head + "".join(out) + "</svg>"


# ---------------------------------------------------------------- lanes and points

def lanes(entries: Sequence[TimelineEntry]) -> tuple[list[str], list[int]]:
    """The lane names, in order of first appearance (a host's lanes together), and each
    entry's lane. A lane is a unit; with several hosts, a host and a unit; an entry without a
    host in a report of several inputs is told apart by its file's name. Past MAX_LANES, the
    rest share one lane."""
    hosts = {e.host for e in entries if e.host}
    paths = {e.path for e in entries}

    def name(e: TimelineEntry) -> str:
        node = e.host if len(hosts) > 1 and e.host else None
        if node is None and len(paths) > 1 and not e.host:
            node = PurePath(e.path).name
        unit = e.unit or ("" if node else PurePath(e.path).name)
        return " · ".join(x for x in (node, unit) if x)

    names = [name(e) for e in entries]
    node_of = {n: e.host or e.path for n, e in zip(names, entries, strict=True)}
    nodes = list(dict.fromkeys(node_of[n] for n in names))
    order = sorted(dict.fromkeys(names), key=lambda n: nodes.index(node_of[n]))  # a node's lanes together
    if len(order) > MAX_LANES:
        kept = order[:MAX_LANES - 1]
        order = [*kept, f"{len(order) - len(kept)} more units"]
        names = [n if n in kept else order[-1] for n in names]
    index = {n: i for i, n in enumerate(order)}
    return order, [index[n] for n in names]


def holders(findings: Iterable[Finding]) -> dict[str, tuple[Finding, str]]:
    """Each pattern id on the timeline → the finding it belongs to and its role there."""
    held: dict[str, tuple[Finding, str]] = {}
    for f in findings:
        root = f.members[0] if f.kind is FindingKind.chain and f.members else f.id
        held.setdefault(root, (f, "root"))
        for pid in f.members[1:]:
            held.setdefault(pid, (f, "member"))
        for s in f.symptoms:
            held.setdefault(s.id, (f, "symptom"))
    return held


def _points(report: Report, lane_of: Sequence[int]) -> list[Point]:
    held = holders(report.findings)
    points = []
    for i, e in enumerate(report.timeline):
        if e.kind in LIFECYCLE:
            p = Point(i, e, lane_of[i], to_seconds(e.time), e.kind)
        elif e.kind in held:
            f, role = held[e.kind]
            p = Point(i, e, lane_of[i], to_seconds(e.time), role, f.rank, f.severity)
        else:
            p = Point(i, e, lane_of[i], to_seconds(e.time), "other")
        points.append(p)
    return points


def _place_x(points: Sequence[Point], inputs: Sequence[str]) -> list[Segment]:
    """Cut the axis into segments at the long quiet gaps; place each point on its segment."""
    timed = sorted({p.seconds for p in points if p.seconds is not None})
    untimed = [p for p in points if p.seconds is None]
    groups: list[list[float]] = []
    if timed:
        span = timed[-1] - timed[0]
        gaps = sorted(((b - a, i) for i, (a, b) in enumerate(pairwise(timed))
                       if b - a > max(BREAK_MIN_S, BREAK_SHARE * span)), reverse=True)
        cuts = sorted(i for _gap, i in gaps[:MAX_SEGMENTS - 1 - (1 if untimed else 0)])
        start = 0
        for cut in [*cuts, len(timed) - 1]:
            groups.append(timed[start:cut + 1])
            start = cut + 1
    counts = [sum(1 for p in points if p.seconds is not None and g[0] <= p.seconds <= g[-1]) for g in groups]
    durations = [g[-1] - g[0] for g in groups]
    if untimed:
        counts.append(len(untimed))
        durations.append(0.0)
    n = len(counts)
    free = PLOT_X1 - PLOT_X0 - BREAK_W * (n - 1) - MIN_SEG_W * n
    total_d, total_c = sum(durations), sum(counts)
    shares = [(d / total_d if total_d else 0.0) + c / total_c for d, c in zip(durations, counts, strict=True)]
    x = float(PLOT_X0)
    segments = []
    for k in range(n):
        width = MIN_SEG_W + max(free, 0) * shares[k] / sum(shares)
        if k < len(groups):
            segments.append(Segment(x, x + width, groups[k][0], groups[k][-1], count=counts[k]))
        else:
            segments.append(Segment(x, x + width, timed=False, count=counts[k]))
        x += width + BREAK_W
    for p in points:
        if p.seconds is not None:
            seg = next(s for s in segments if s.timed and s.t0 <= p.seconds <= s.t1)
            p.x = seg.x(p.seconds)
    if untimed:
        seg = segments[-1]
        order = {path: i for i, path in enumerate(inputs)}
        ranked = sorted(untimed, key=lambda p: (order.get(p.entry.path, len(order)), p.entry.line))
        lo, hi = seg.x0 + SEG_PAD, seg.x1 - SEG_PAD
        for i, p in enumerate(ranked):
            p.x = (lo + hi) / 2 if len(ranked) == 1 else lo + i * (hi - lo) / (len(ranked) - 1)
    return segments


def _place_y(points: Sequence[Point], lane_count: int) -> list[float]:
    """Stack markers that would overlap in their lane into rows; the height of each lane."""
    rows: list[list[float]] = [[] for _ in range(lane_count)]  # per lane, the last x of each row
    for p in sorted(points, key=lambda p: (p.x, p.entry.line)):
        ends = rows[p.lane]
        free = next((r for r, end in enumerate(ends) if end <= p.x - MIN_DX), None)
        if free is None and len(ends) < MAX_ROWS:
            ends.append(-math.inf)
            free = len(ends) - 1
        p.row = free if free is not None else min(range(len(ends)), key=lambda r: ends[r])
        ends[p.row] = p.x
    heights = [2.0 * LANE_PAD + ROW_H * max(1, len(r)) for r in rows]
    tops = [TOP + sum(heights[:i]) for i in range(lane_count)]
    for p in points:
        p.y = tops[p.lane] + LANE_PAD + ROW_H * (p.row + 0.5)
    return heights


def arrows_of(findings: Sequence[Finding], points: Sequence[Point]) -> list[Arrow]:
    """A chain's steps, each to the next in the chain's order (its evidence lines); then each
    finding's root line to every symptom folded under it that is not already a step."""
    at: dict[tuple[str, int], Point] = {}
    for p in points:
        at.setdefault((p.entry.path, p.entry.line), p)
    first: dict[str, Point] = {}
    for p in points:
        first.setdefault(p.entry.kind, p)
    out: list[Arrow] = []
    for f in findings:
        steps: list[Point] = []
        if f.kind is FindingKind.chain:
            for e in f.evidence:
                step = at.get((e.path, e.line))
                if step is not None and (not steps or steps[-1] is not step):
                    steps.append(step)
            out += [Arrow("chain", f.rank, a, b) for a, b in pairwise(steps)]
        root_id = f.members[0] if f.kind is FindingKind.chain and f.members else f.id
        root = next((p for p in steps if p.entry.kind == root_id), first.get(root_id))
        if root is None:
            continue
        done = {id(p) for p in steps} | {id(root)}
        for s in f.symptoms:
            target = first.get(s.id)
            if target is not None and id(target) not in done:
                done.add(id(target))
                out.append(Arrow("symptom", f.rank, root, target))
    return out


# ---------------------------------------------------------------- drawing

def _defs() -> str:
    heads = "".join(
        f'<marker id="tl-head-{kind}" viewBox="0 0 10 10" refX="{10 + HEAD_R / 0.9:.2f}" refY="5" '
        f'markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto">'
        f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        for kind, colour in (("chain", "#212529"), ("symptom", "#868e96")))
    return f"<defs>{heads}</defs>"


def _lanes_drawn(labels: Sequence[str], heights: Sequence[float]) -> list[str]:
    out = []
    y = float(TOP)
    for i, (label, h) in enumerate(zip(labels, heights, strict=True)):
        fill = "#f1f3f5" if i % 2 == 0 else "#ffffff"
        shown = label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"
        out.append(f'<g class="lane" data-lane="{i}"><title>{escape(label)}</title>'
                   f'<rect x="{PLOT_X0 - 4}" y="{y:.1f}" width="{PLOT_X1 - PLOT_X0 + 8}" height="{h:.1f}" '
                   f'fill="{fill}"/>'
                   f'<text x="{LABEL_W}" y="{y + h / 2:.1f}" text-anchor="end" dominant-baseline="central" '
                   f'fill="#343a40">{escape(shown)}</text></g>')
        y += h
    return out


def _breaks(segments: Sequence[Segment], axis_y: float) -> list[str]:
    out = []
    for a, b in pairwise(segments):
        mid = (a.x1 + b.x0) / 2
        text = "no time" if not b.timed else gap_text(b.t0 - a.t1)
        out.append(f'<g class="break"><rect x="{a.x1 + 3:.1f}" y="{TOP}" width="{BREAK_W - 6}" '
                   f'height="{axis_y - TOP:.1f}" fill="#ffffff"/>'
                   f'<path d="M{a.x1 + 3:.1f},{TOP} V{axis_y:.1f} M{b.x0 - 3:.1f},{TOP} V{axis_y:.1f}" '
                   f'stroke="#adb5bd" stroke-dasharray="3 3" fill="none"/>'
                   f'<text x="{mid:.1f}" y="{axis_y - 6:.1f}" text-anchor="middle" font-size="9.5" '
                   f'font-style="italic" fill="#495057">{escape(text)}</text></g>')
    return out


def gap_text(seconds: float) -> str:
    """The length of a cut-out stretch, roughly: 90 s, 21 min, 5 h, 3 d."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"


def _axis(segments: Sequence[Segment], axis_y: float) -> list[str]:
    out = [f'<text x="{PLOT_X0 - 30}" y="{axis_y + 16:.1f}" text-anchor="end" fill="#495057" font-size="10">'
           'UTC</text>']
    last_day = ""
    for seg in segments:
        out.append(f'<path class="axis" d="M{seg.x0:.1f},{axis_y:.1f} H{seg.x1:.1f}" stroke="#495057"/>')
        if not seg.timed:
            out.append(f'<text x="{(seg.x0 + seg.x1) / 2:.1f}" y="{axis_y + 16:.1f}" text-anchor="middle" '
                       f'font-size="10" fill="#495057">untimed:<tspan x="{(seg.x0 + seg.x1) / 2:.1f}" '
                       f'dy="12">line order</tspan></text>')
            continue
        for t in ticks(seg):
            x = seg.x(t)
            when = dt.datetime.fromtimestamp(t, dt.UTC)
            day = when.strftime("%Y-%m-%d")
            date = f'<tspan x="{x:.1f}" dy="12">{day}</tspan>' if day != last_day else ""
            last_day = day
            out.append(f'<g class="tick" data-time="{when.strftime("%Y-%m-%dT%H:%M:%SZ")}">'
                       f'<path d="M{x:.1f},{axis_y:.1f} v4" stroke="#495057"/>'
                       f'<text x="{x:.1f}" y="{axis_y + 16:.1f}" text-anchor="middle" font-size="10" '
                       f'fill="#212529">{when.strftime("%H:%M:%S")}{date}</text></g>')
    return out


def ticks(seg: Segment) -> list[float]:
    """Times to label on a segment: its start, round times at least TICK_GAP px apart, and its
    end when there is room."""
    if seg.t1 <= seg.t0:
        return [seg.t0]
    per_s = (seg.x1 - seg.x0 - 2 * SEG_PAD) / (seg.t1 - seg.t0)
    step = next((s for s in NICE_STEPS if s * per_s >= TICK_GAP), NICE_STEPS[-1])
    candidates = [seg.t0, *[k * step for k in range(math.floor(seg.t0 / step) + 1, math.ceil(seg.t1 / step))],
                  seg.t1]
    kept = [seg.t0]
    for t in candidates[1:]:
        if (t - kept[-1]) * per_s >= TICK_GAP:
            kept.append(t)
    return kept


def _arrow(a: Arrow) -> str:
    (x1, y1), (x2, y2) = (a.start.x, a.start.y), (a.end.x, a.end.y)
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length, dx / length  # a normal; the curve bows upwards (or to the right)
    if ny > 0 or (ny == 0 and nx < 0):
        nx, ny = -nx, -ny
    bend = min(36.0, 0.2 * length) if a.kind == "chain" else min(24.0, 0.12 * length)
    cx, cy = (x1 + x2) / 2 + nx * bend, (y1 + y2) / 2 + ny * bend
    style = ('stroke="#212529" stroke-width="1.6"' if a.kind == "chain"
             else 'stroke="#868e96" stroke-width="1.1" stroke-dasharray="4 3"')
    what = "leads to" if a.kind == "chain" else "explains"
    title = f"finding #{a.rank}: line {a.start.entry.line} {what} line {a.end.entry.line}"
    return (f'<path class="arrow {a.kind}" data-kind="{a.kind}" data-finding="{a.rank}" '
            f'data-from="{a.start.id}" data-to="{a.end.id}" '
            f'd="M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}" fill="none" {style} '
            f'marker-end="url(#tl-head-{a.kind})"><title>{escape(title)}</title></path>')


def _shape(shape: str, colour: str, r: float = 6.5) -> str:
    if shape == "triangle":
        return f'<path d="M{-r:.1f},{-r:.1f} L{r:.1f},0 L{-r:.1f},{r:.1f} z" fill="{colour}"/>'
    if shape == "diamond":
        return f'<path d="M0,{-r - 1:.1f} L{r + 1:.1f},0 L0,{r + 1:.1f} L{-r - 1:.1f},0 z" fill="{colour}"/>'
    if shape == "square":
        return f'<rect x="{-r + 0.5:.1f}" y="{-r + 0.5:.1f}" width="{2 * r - 1:.1f}" height="{2 * r - 1:.1f}" ' \
               f'fill="{colour}"/>'
    if shape == "hexagon":
        pts = " ".join(f"{r * math.cos(math.pi / 3 * k):.1f},{r * math.sin(math.pi / 3 * k):.1f}" for k in range(6))
        return f'<polygon points="{pts}" fill="{colour}"/>'
    return f'<circle r="{r:.1f}" fill="{colour}"/>'


def _finding_shape(role: str, colour: str, rank: int | None, label: str = "") -> str:
    number = label if rank is None else str(rank)
    size = "9" if len(number) < 2 else "7.5"
    if role == "symptom":
        return (f'<circle r="7.5" fill="#ffffff" stroke="{colour}" stroke-width="2"/>'
                f'<text text-anchor="middle" dominant-baseline="central" font-size="{size}" font-weight="700" '
                f'fill="{colour}">{number}</text>')
    ring = ' stroke="#212529" stroke-width="2"' if role == "root" else ""
    return (f'<circle r="8.5" fill="{colour}"{ring}/>'
            f'<text text-anchor="middle" dominant-baseline="central" font-size="{size}" font-weight="700" '
            f'fill="#ffffff">{number}</text>')


def _marker(p: Point, labels: Sequence[str], single_input: bool) -> str:
    e = p.entry
    if p.role in FINDING_ROLES:
        colour = SEVERITY_COLOURS[p.severity or Severity.info]
        body = _finding_shape(p.role, colour, p.rank)
        what = f"finding #{p.rank} ({e.kind})"
    else:
        shape, colour, _text = LIFECYCLE.get(p.role, OTHER)
        body = _shape(shape, colour)
        what = e.kind
    where = f"line {e.line}" if single_input else f"{e.path}:{e.line}"
    place = labels[p.lane] if not e.host or e.host in labels[p.lane] else f"{e.host} · {labels[p.lane]}"
    title = f"{e.time or 'no time'} · {where} · {place} · {what}: {clip(e.text, 300)}"
    rank = f' data-finding="{p.rank}"' if p.rank is not None else ""
    return (f'<g class="mark" id="{p.id}" data-role="{p.role}" data-kind="{escape(e.kind)}"{rank} '
            f'data-line="{e.line}" data-lane="{p.lane}" data-time="{escape(e.time or "")}" '
            f'transform="translate({p.x:.1f} {p.y:.1f})"><title>{escape(title)}</title>{body}</g>')


def _legend(points: Sequence[Point], arrows: Sequence[Arrow], y: float) -> tuple[list[str], float]:
    """The symbols the picture uses, and the picture's height below them."""
    roles = {p.role for p in points}
    items: list[tuple[str, str]] = [(_shape(*LIFECYCLE[k][:2]), LIFECYCLE[k][2]) for k in LIFECYCLE if k in roles]
    if "other" in roles:
        items.append((_shape(*OTHER[:2]), OTHER[2]))
    severities = [s for s in reversed(list(Severity)) if any(p.severity is s for p in points)]
    sample = SEVERITY_COLOURS[severities[0]] if severities else SEVERITY_COLOURS[Severity.high]
    items += [(_finding_shape(role, sample, None, "n"), text) for role, text in FINDING_ROLES.items() if role in roles]
    if {"chain"} & {a.kind for a in arrows}:
        items.append(('<path d="M-12,0 H12" stroke="#212529" stroke-width="1.6" marker-end="url(#tl-head-chain)"/>',
                      "chain: one step leads to the next"))
    if {"symptom"} & {a.kind for a in arrows}:
        items.append(('<path d="M-12,0 H12" stroke="#868e96" stroke-width="1.1" stroke-dasharray="4 3" '
                      'marker-end="url(#tl-head-symptom)"/>', "the finding explains the symptom"))
    items += [(f'<circle r="6" fill="{SEVERITY_COLOURS[s]}"/>', ("colour: " if i == 0 else "") + s.value)
              for i, s in enumerate(severities)]
    out = ['<g class="legend">']
    x, row_y = float(LABEL_W - 110), y
    for symbol, text in items:
        width = 28 + 5.8 * len(text) + 14
        if x + width > WIDTH and x > LABEL_W - 110:
            x, row_y = float(LABEL_W - 110), row_y + 20
        icon_x = x + 10 + (10 if "marker-end" in symbol else 0)
        out.append(f'<g transform="translate({icon_x:.1f} {row_y:.1f})">{symbol}</g>'
                   f'<text x="{x + 24 + (14 if "marker-end" in symbol else 0):.1f}" y="{row_y:.1f}" '
                   f'dominant-baseline="central" fill="#343a40">{escape(text)}</text>')
        x += width + (14 if "marker-end" in symbol else 0)
    out.append("</g>")
    return out, row_y + 16
