"""Chart geometry, computed at build time and drawn as inline SVG by ``_partials.html``.

Python decides where everything goes; the template only writes the shapes,
so every label passes through Jinja's autoescaping like any other text. All
coordinates are rounded to one decimal so the same data always gives the
same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Chart",
    "CostPoint",
    "Line",
    "Mark",
    "ReferencePoint",
    "SeriesPoint",
    "Tick",
    "cost_chart",
    "line_chart",
    "pareto_front",
    "series_chart",
]

WIDTH = 640
HEIGHT = 360
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 16, 48  # margins: room for tick labels and point labels


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str


@dataclass(frozen=True)
class Mark:
    """One data point: a dot, an optional interval whisker, a label and a link."""

    cx: float
    cy: float
    whisker_top: float | None
    whisker_bottom: float | None
    label: str  # drawn beside the dot; may be empty
    label_x: float
    label_y: float
    label_anchor: str  # SVG text-anchor: "start", "middle" or "end"
    title: str  # tooltip
    href: str  # site-root-relative; empty for no link
    kind: str  # css modifiers: "", "frontier", "drop", "ceiling", a line's colour and style ("s2 dashed")
    shape: str = "circle"  # "circle"; "square" (a ceiling); "diamond" (a published figure)


@dataclass(frozen=True)
class Chart:
    """Everything ``chart()`` in ``_partials.html`` needs to draw one SVG."""

    title: str
    width: int
    height: int
    left: float
    top: float
    right: float
    bottom: float
    x_label: str
    y_label: str
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    marks: list[Mark]
    paths: list[tuple[str, str]] = field(default_factory=list)  # (css class, SVG path data)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (css class, text)
    notes: list[str] = field(default_factory=list)  # sentences under the legend: what the chart does not show, and why


@dataclass(frozen=True)
class CostPoint:
    """A configuration on the accuracy-versus-cost chart."""

    tokens: float
    recall: float
    low: float | None
    high: float | None
    label: str
    title: str
    href: str
    ceiling: bool = False  # a ceiling (evals.views.tables.caveats), not a memory: drawn as a square, labelled so


@dataclass(frozen=True)
class SeriesPoint:
    """One run on a history chart."""

    value: float | None
    low: float | None
    high: float | None
    label: str  # x tick label, e.g. the short commit
    title: str
    href: str
    flagged: bool


def _r(value: float) -> float:
    return round(value, 1)


def pareto_front(points: list[tuple[float, float]]) -> list[bool]:
    """For (cost, value) pairs: whether each is on the frontier (no other is cheaper-or-equal and
    at-least-as-good, one strictly)."""
    flags = []
    for i, (cost, value) in enumerate(points):
        dominated = any((c <= cost and v >= value) and (c < cost or v > value) for j, (c, v) in enumerate(points) if j != i)
        flags.append(not dominated)
    return flags


def _log_tokens(tokens: float) -> float:
    # log10(1 + t) keeps 0 tokens (no_memory) on the axis instead of at minus infinity.
    return math.log10(1.0 + max(tokens, 0.0))


def _token_label(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1_000:
        return f"{value / 1_000:g}k"
    return f"{value:g}"


def _recall_ticks(top: float, bottom: float) -> list[Tick]:
    return [Tick(_r(bottom - (bottom - top) * v), f"{round(v * 100)}%") for v in (0.0, 0.25, 0.5, 0.75, 1.0)]


def _label_width(label: str) -> float:
    return 6.4 * len(label) + 2  # ~11.5px system font; only needs to be roughly right


def _place_labels(
    centres: list[tuple[float, float]],
    labels: list[str],
    bounds: tuple[float, float, float, float],
    obstacles: list[tuple[float, float, float, float]] | None = None,
) -> list[tuple[float, float, str]]:
    """Put each label right, left, above or below its dot, wherever it overlaps nothing placed so far
    (other labels, other dots, and ``obstacles`` such as interval whiskers).

    Returns (x, y, text-anchor) per label. Greedy, in a fixed order, so the
    same points always get the same places.
    """
    x_min, y_min, x_max, y_max = bounds
    dots = [(cx - 5, cy - 5, cx + 5, cy + 5) for cx, cy in centres]
    boxes: list[tuple[float, float, float, float]] = list(obstacles or [])

    def free(box: tuple[float, float, float, float], own: int) -> bool:
        x0, y0, x1, y1 = box
        if x0 < x_min or x1 > x_max or y0 < y_min or y1 > y_max:
            return False
        others = boxes + [d for i, d in enumerate(dots) if i != own]
        return all(x1 <= a0 or x0 >= a1 or y1 <= b0 or y0 >= b1 for a0, b0, a1, b1 in others)

    out: list[tuple[float, float, str]] = [(0.0, 0.0, "start")] * len(centres)
    order = sorted(range(len(centres)), key=lambda i: (centres[i][0], centres[i][1], labels[i]))
    for i in order:
        cx, cy = centres[i]
        w = _label_width(labels[i])
        candidates = [
            ((cx + 8, cy - 7, cx + 8 + w, cy + 6), (cx + 8, cy + 4, "start")),
            ((cx - 8 - w, cy - 7, cx - 8, cy + 6), (cx - 8, cy + 4, "end")),
            ((cx - w / 2, cy - 22, cx + w / 2, cy - 9), (cx, cy - 11, "middle")),
            ((cx - w / 2, cy + 9, cx + w / 2, cy + 22), (cx, cy + 19, "middle")),
        ]
        for shift in (0, 13, -13, 26, -26, 39, -39):
            chosen = next(
                ((box, spot) for box, spot in candidates if free((box[0], box[1] + shift, box[2], box[3] + shift), i)),
                None,
            )
            if chosen is not None:
                box, (x, y, anchor) = chosen
                boxes.append((box[0], box[1] + shift, box[2], box[3] + shift))
                out[i] = (x, y + shift, anchor)
                break
        else:
            box, (x, y, anchor) = candidates[0]
            boxes.append(box)
            out[i] = (x, y, anchor)
    return out


def cost_chart(
    points: list[CostPoint], *, title: str, tokens_label: str, y_label: str = "keyword hit@k", notes: list[str] | None = None
) -> Chart:
    """The headline (``y_label``) against tokens per test point (log scale), one mark per configuration, the frontier stepped."""
    x0, x1 = LEFT, WIDTH - RIGHT
    y0, y1 = TOP, HEIGHT - BOTTOM
    top_decade = max(1, math.ceil(max((_log_tokens(p.tokens) for p in points), default=1.0)))

    def x_of(tokens: float) -> float:
        return x0 + (x1 - x0) * _log_tokens(tokens) / top_decade

    def y_of(recall: float) -> float:
        return y1 - (y1 - y0) * recall

    x_ticks = [Tick(_r(x_of(0.0)), "0")] + [Tick(_r(x_of(10.0**d)), _token_label(10.0**d)) for d in range(1, top_decade + 1)]
    # The frontier is the memories' own: a ceiling (the oracle: few tokens, every answer) is drawn for scale,
    # and would otherwise dominate every memory.
    memories = [p for p in points if not p.ceiling]
    front = iter(pareto_front([(p.tokens, p.recall) for p in memories]))
    frontier = [False if p.ceiling else next(front) for p in points]
    centres = [(x_of(p.tokens), y_of(p.recall)) for p in points]
    whiskers = [
        (cx - 2, y_of(p.high), cx + 2, y_of(p.low))
        for p, (cx, _) in zip(points, centres, strict=True)
        if p.high is not None and p.low is not None
    ]
    # Inside the axes (so no label covers a tick label), clear of every whisker.
    labels = [p.label + (" (ceiling)" if p.ceiling else "") for p in points]
    spots = _place_labels(centres, labels, (x0 + 2, 0, WIDTH, y1), whiskers)
    marks = [
        Mark(
            cx=_r(cx),
            cy=_r(cy),
            whisker_top=_r(y_of(p.high)) if p.high is not None else None,
            whisker_bottom=_r(y_of(p.low)) if p.low is not None else None,
            label=label,
            label_x=_r(lx),
            label_y=_r(ly),
            label_anchor=anchor,
            title=p.title + (" (on the frontier)" if on else "") + (" (a ceiling, not a memory)" if p.ceiling else ""),
            href=p.href,
            kind=" ".join(k for k, flag in (("frontier", on), ("ceiling", p.ceiling)) if flag),
            shape="square" if p.ceiling else "circle",
        )
        for p, label, (cx, cy), (lx, ly, anchor), on in zip(points, labels, centres, spots, frontier, strict=True)
    ]
    steps = sorted((p.tokens, -p.recall) for p, on in zip(points, frontier, strict=True) if on)
    paths = []
    if steps:
        d = f"M{_r(x_of(steps[0][0]))} {_r(y_of(-steps[0][1]))}"
        for tokens, neg_recall in steps[1:]:
            d += f" H{_r(x_of(tokens))} V{_r(y_of(-neg_recall))}"
        paths.append(("frontier", d))
    return _chart(
        title,
        (x0, y0, x1, y1),
        x_label=tokens_label,
        y_label=y_label,
        x_ticks=x_ticks,
        y_ticks=_recall_ticks(y0, y1),
        marks=marks,
        paths=paths,
        legend=[
            ("frontier", "frontier: no other memory is both cheaper and better (ceilings left out)"),
            ("", "bars: 95% interval"),
        ]
        + (
            [("ceiling", "square: a ceiling (reads the evidence labels, ignores k or holds the whole history), not a memory")]
            if any(p.ceiling for p in points)
            else []
        ),
        notes=list(notes or []),
    )


def _chart(title: str, plot: tuple[float, float, float, float], **drawn: Any) -> Chart:
    """A chart of the site's one size, its axes around ``plot`` (left, top, right, bottom)."""
    left, top, right, bottom = plot
    return Chart(title=title, width=WIDTH, height=HEIGHT, left=left, top=top, right=right, bottom=bottom, **drawn)


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def series_chart(points: list[SeriesPoint], *, title: str, y_label: str, recall: bool) -> Chart:
    """Values across runs in time order; recall on a 0–100% axis with interval bars, tokens on a linear axis."""
    x0, x1 = LEFT, WIDTH - 24
    y0, y1 = TOP, HEIGHT - BOTTOM
    if recall:
        top_value = 1.0
        y_ticks = _recall_ticks(y0, y1)
    else:
        top_value = _nice_max(max((p.value for p in points if p.value is not None), default=0.0))
        y_ticks = [Tick(_r(y1 - (y1 - y0) * f), _token_label(top_value * f)) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]

    def y_of(value: float) -> float:
        return y1 - (y1 - y0) * value / top_value

    n = len(points)
    step = (x1 - x0) / n if n else 0.0

    def x_of(i: int) -> float:
        return x0 + step * (i + 0.5)

    # Every label as wide as the widest, with a gap: label every run only if that fits, else every 2nd, 3rd...
    slot = max((_label_width(p.label) for p in points), default=0.0) + 8
    every = max(1, math.ceil(n * slot / (x1 - x0)))
    labelled = set(range(n - 1, -1, -every))  # counted back from the newest run, which is always labelled
    x_ticks = [Tick(_r(x_of(i)), p.label) for i, p in enumerate(points) if i in labelled]
    marks = []
    d = ""
    for i, p in enumerate(points):
        if p.value is None:
            continue
        cx, cy = _r(x_of(i)), _r(y_of(p.value))
        d += f"{'L' if d else 'M'}{cx} {cy} "
        marks.append(
            Mark(
                cx=cx,
                cy=cy,
                whisker_top=_r(y_of(p.high)) if p.high is not None else None,
                whisker_bottom=_r(y_of(p.low)) if p.low is not None else None,
                label="",
                label_x=cx,
                label_y=cy,
                label_anchor="start",
                title=p.title,
                href=p.href,
                kind="drop" if p.flagged else "",
            )
        )
    legend = [("drop", "flagged drop")] if any(p.flagged for p in points) else []
    if recall:
        legend.append(("", "bars: 95% interval"))
    return _chart(
        title,
        (x0, y0, x1, y1),
        x_label="run (oldest to newest; commit)",
        y_label=y_label,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        marks=marks,
        paths=[("series", d.strip())] if d else [],
        legend=legend,
    )


@dataclass(frozen=True)
class Line:
    """One series of a line chart: (x, y) points in x order, with a tooltip and a link per point.

    ``colour`` picks one of the chart colours (css ``s0``..``s7``) and ``style`` the stroke ("solid",
    "dashed", "dotted"); left as None, each line takes the next colour, then the next style once the
    colours run out, so no two lines look alike."""

    label: str
    points: list[tuple[float, float]]
    titles: list[str]
    href: str
    colour: int | None = None
    style: str | None = None


@dataclass(frozen=True)
class ReferencePoint:
    """A published figure drawn as a hollow diamond beside the lines: never joined to them, never ranked.

    ``label`` names the figure's source, metric and level ("LoCoMo paper: recall_frac (turn)"): the legend
    gives it once per source and metric with its cutoffs, so no text is drawn among the lines. ``colour``
    is the colour of the line of the same metric, if any."""

    x: float
    y: float
    title: str
    label: str = ""
    colour: int | None = None


SERIES_CLASSES = 8  # css classes s0..s7 colour the lines
STYLES = ("solid", "dashed", "dotted")


def line_chart(
    lines: list[Line],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_log: bool,
    y_log: bool,
    y_max: float | None = None,
    references: list[ReferencePoint] | None = None,
    reference_href: str = "",
    notes: list[str] | None = None,
) -> Chart | None:
    """Several series on shared axes (logarithmic where asked), each in its own colour and stroke with a legend entry.

    On log-log axes a quantity that grows in proportion to x is a line of slope 1 (latency against
    records held); with ``y_max`` the y axis is a share from 0 (recall against cutoff). Every label is in
    the legend, none among the lines. None without points."""
    references = references or []
    xs = [x for line in lines for x, _ in line.points] + [r.x for r in references]
    ys = [y for line in lines for _, y in line.points] + [r.y for r in references]
    if not xs:
        return None
    x0, x1 = LEFT, WIDTH - 24  # the legend is under the chart, so no right margin for labels
    y0, y1 = TOP, HEIGHT - BOTTOM

    def scale(values: list[float], log: bool, upper: float | None) -> tuple[float, float, Callable[[float], float]]:
        if log:
            positive = [v for v in values if v > 0] or [1.0]
            low, high = 10 ** math.floor(math.log10(min(positive))), 10 ** math.ceil(math.log10(max(positive)))
            high = high if high > low else low * 10
            return low, high, lambda v: (math.log10(max(v, low)) - math.log10(low)) / (math.log10(high) - math.log10(low))
        high = upper if upper is not None else _nice_max(max(values))
        return 0.0, high, lambda v: v / high if high else 0.0

    x_low, x_high, fx = scale(xs, x_log, None)
    y_low, y_high, fy = scale(ys, y_log, y_max)

    def x_of(v: float) -> float:
        return _r(x0 + (x1 - x0) * fx(v))

    def y_of(v: float) -> float:
        return _r(y1 - (y1 - y0) * fy(v))

    def ticks(low: float, high: float, log: bool, at: Callable[[float], float], share: bool) -> list[Tick]:
        if log:
            steps = range(round(math.log10(low)), round(math.log10(high)) + 1)
            return [Tick(at(10.0**e), _token_label(10.0**e) if 10.0**e >= 1 else f"{10.0**e:g}") for e in steps]
        return [Tick(at(high * f), f"{f * high:g}" if share else _token_label(high * f)) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]

    marks: list[Mark] = []
    paths: list[tuple[str, str]] = []
    legend: list[tuple[str, str]] = []
    drawn: dict[tuple[tuple[float, float], ...], str] = {}  # the points of each line drawn so far -> its label
    for index, line in enumerate(lines):
        colour = index % SERIES_CLASSES if line.colour is None else line.colour % SERIES_CLASSES
        style = line.style or STYLES[(index // SERIES_CLASSES) % len(STYLES)]
        css = f"s{colour} {style}"
        where = tuple((x_of(x), y_of(y)) for x, y in line.points)
        same_as = drawn.get(where) if where else None
        if same_as is not None:
            # Exactly on an earlier line, which would hide it: drawn thin and dotted over it with smaller
            # dots, and the legend says so.
            css += " same"
        else:
            drawn[where] = line.label
        d = " ".join(f"{'L' if i else 'M'}{px} {py}" for i, (px, py) in enumerate(where))
        if d:
            paths.append((css, d))
        legend.append((f"line {css}", line.label + (f" (same values as {same_as})" if same_as is not None else "")))
        for (px, py), tip in zip(where, line.titles, strict=True):
            marks.append(Mark(px, py, None, None, "", px, py, "start", tip, line.href, css))
    # One legend entry per published series (source, metric, level), naming its cutoffs.
    published: dict[tuple[str, int | None], list[float]] = {}
    for ref in references:
        css = "reference" + ("" if ref.colour is None else f" s{ref.colour % SERIES_CLASSES}")
        marks.append(Mark(x_of(ref.x), y_of(ref.y), None, None, "", 0.0, 0.0, "start", ref.title, reference_href, css, "diamond"))
        published.setdefault((ref.label, ref.colour), []).append(ref.x)
    for (label, colour), at in published.items():
        cutoffs = ", ".join(f"{x:g}" for x in sorted(set(at)))
        css = "reference" + ("" if colour is None else f" s{colour % SERIES_CLASSES}")
        legend.append((css, f"{label or 'published figure'} at k = {cutoffs} (published, not re-run here)"))
    return _chart(
        title,
        (x0, y0, x1, y1),
        x_label=x_label,
        y_label=y_label,
        x_ticks=ticks(x_low, x_high, x_log, x_of, False),
        y_ticks=ticks(y_low, y_high, y_log, y_of, y_max == 1.0 and not y_log),
        marks=marks,
        paths=paths,
        legend=legend,
        notes=list(notes or []),
    )
