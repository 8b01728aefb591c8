"""The field's retrieval metrics on the site: tables over cutoffs, recall against cutoff, latency against size.

Published figures (a corpus's ``references.json``) sit greyed in the same
tables and charts: a row or a hollow point of their own, never ranked and
never joined to a run's line.
"""

from __future__ import annotations

from dataclasses import dataclass

from evals.benchmarks import metric_description
from evals.judge.metrics import (
    PROPORTION,
    RETRIEVAL,
    SLOPE_SIZES,
    LatencyBucket,
    MetricValue,
    latency_sizes,
    latency_slope,
    parse_retrieval_key,
)
from evals.judge.retrieval import LEVELS
from evals.model.corpus import Reference
from evals.model.formatting import decimal, milliseconds, percent
from evals.site._charts import Chart, Line, ReferencePoint, line_chart
from evals.store import RunSummary
from evals.views.tables import CEILING, Caveat, caveats

__all__ = [
    "CutoffRow",
    "CutoffTable",
    "cutoff_chart",
    "cutoff_tables",
    "latency_chart",
    "reference_rows",
    "retrieval_absence",
    "retrieval_series",
]


def retrieval_absence(summary: RunSummary, labelled: bool) -> str:
    """Why a run has no retrieval values at cutoffs, from what the store recorded: ``labelled`` says
    whether some test point of its corpus names evidence turns or sessions."""
    if not summary.cutoffs:
        return (
            "Not recorded: this run was made before retrieval was measured at every cutoff, or by the original CLI "
            "(python -m evals), which measures at k only; a new evals run on the same corpus records them."
        )
    if not labelled:
        return (
            "Not measured: no test point of this corpus names its evidence turns (evidence_turns or evidence_sessions in "
            "test_at), and these metrics count retrieved evidence, so keyword hit@k above is this run's only recall."
        )
    return (
        f"Not stored: the run was measured at cutoffs {', '.join(map(str, summary.cutoffs))} on a corpus with evidence, "
        "but the store holds no retrieval value for it."
    )


@dataclass(frozen=True)
class CutoffRow:
    """One row of a cutoff table: a run (or a published figure) and its value at each cutoff."""

    label: str
    href: str  # the run's page; "" for a published figure
    cells: list[MetricValue | None]  # one per cutoff of the table
    reference: bool = False  # a published figure: shown greyed, never ranked
    note: str = ""
    ceiling: Caveat | None = (
        None  # a ceiling run (evals.views.tables.caveats): set apart below the memories, never ranked with them
    )


@dataclass(frozen=True)
class CutoffTable:
    """One (level, metric) over every cutoff some row was measured at."""

    level: str
    metric: str
    description: str
    cutoffs: list[int]
    rows: list[CutoffRow]
    kind: str = PROPORTION  # how its values are shown: a proportion in percent, a mean score as a fraction

    @property
    def anchor(self) -> str:
        return f"{self.level}-{self.metric}"


def retrieval_series(summary: RunSummary) -> dict[tuple[str, str], dict[int, MetricValue]]:
    """(level, metric) -> cutoff -> value, for every retrieval metric the run has."""
    out: dict[tuple[str, str], dict[int, MetricValue]] = {}
    for key, value in summary.metrics.items():
        parsed = parse_retrieval_key(key)
        if parsed is None or parsed[2] is None:
            continue
        name, level, cutoff = parsed
        out.setdefault((level, name), {})[cutoff] = value
    return out


def reference_rows(references: list[Reference], level: str, metric: str) -> dict[str, dict[int, float]]:
    """label -> cutoff -> value of the published figures for one (level, metric)."""
    out: dict[str, dict[int, float]] = {}
    for ref in references:
        if ref.level == level and ref.metric == metric:
            out.setdefault(ref.label, {})[ref.k] = ref.value
    return out


def cutoff_tables(rows: list[tuple[str, str, RunSummary]], references: list[Reference]) -> list[CutoffTable]:
    """For each (level, metric) some run has, a table of (label, href, run) rows over the cutoffs, the
    published figures for it below them. Empty when no run was measured at cutoffs."""
    series = [(label, href, retrieval_series(s)) for label, href, s in rows]
    tables = []
    for level in LEVELS:
        for metric, family in RETRIEVAL.items():
            found = [(label, href, values.get((level, metric), {})) for label, href, values in series]
            if not any(values for _, _, values in found):
                continue
            published = reference_rows(references, level, metric)
            cutoffs = sorted({c for _, _, values in found for c in values} | {c for v in published.values() for c in v})
            body = [
                CutoffRow(label, href, [values.get(c) for c in cutoffs], ceiling=_ceiling(s))
                for (label, href, values), (_, _, s) in zip(found, rows, strict=True)
            ]
            body += [
                CutoffRow(
                    label,
                    "",
                    [MetricValue(values[c], 0) if c in values else None for c in cutoffs],
                    reference=True,
                    note=_reference_note(references, label),
                )
                for label, values in published.items()
            ]
            description = metric_description(metric, family.description)
            tables.append(CutoffTable(level, metric, description, cutoffs, body, family.kind))
    return tables


def _reference_note(references: list[Reference], label: str) -> str:
    ref = next(r for r in references if r.label == label)
    return f"{ref.citation}" + (f"; {ref.note}" if ref.note else "")


def cutoff_chart(summary: RunSummary, references: list[Reference], href: str) -> Chart | None:
    """The run's retrieval metrics against cutoff (log scale): one colour per metric, one stroke per level
    (turn solid, session dashed), each named in the legend; the corpus's published figures as hollow
    diamonds in their metric's colour, named in the legend by source, metric, level and cutoffs."""
    series = retrieval_series(summary)
    metrics = list(RETRIEVAL)
    lines = [
        Line(
            label=f"{metric} ({level})",
            points=[(c, v.value) for c, v in sorted(values.items()) if v.value is not None],
            titles=[
                f"{metric}@{c} ({level}): {_shown(metric, v.value)} (n={v.n})"
                for c, v in sorted(values.items())
                if v.value is not None
            ],
            href=href,
            colour=metrics.index(metric),
            style=LEVEL_STYLES[level],
        )
        for (level, metric), values in sorted(
            series.items(), key=lambda item: (LEVELS.index(item[0][0]), metrics.index(item[0][1]))
        )
    ]
    points = [
        ReferencePoint(
            r.k,
            r.value,
            f"{r.label}: {r.metric}@{r.k} ({r.level}) {_shown(r.metric, r.value)}; {r.citation}",
            f"{_short_label(r.label)}: {r.metric} ({r.level})",
            metrics.index(r.metric),
        )
        for r in references
        if (r.level, r.metric) in series
    ]
    if not any(line.points for line in lines):
        return None
    caveat = _ceiling(summary)
    return line_chart(
        lines,
        title=f"Retrieval against cutoff: run {summary.run_id}",
        x_label="cutoff k (log scale)",
        y_label="value at k (share or mean score, 0–1)",
        x_log=True,
        y_log=False,
        y_max=1.0,
        references=points,
        reference_href="about.html#references",
        notes=[f"{summary.strategy} is a ceiling, not a memory: {caveat.explanation}"] if caveat else [],
    )


def _ceiling(summary: RunSummary) -> Caveat | None:
    return next((c for c in caveats(summary) if c.kind == CEILING), None)


LEVEL_STYLES = {"turn": "solid", "session": "dashed"}  # the stroke of each level's lines on the cutoff chart


def _shown(metric: str, value: float) -> str:
    """A retrieval value as the tables show it: a proportion in percent, a mean score as a decimal fraction."""
    return percent(value) if RETRIEVAL[metric].kind == PROPORTION else decimal(value)


def _short_label(label: str) -> str:
    """A published figure's label short enough to sit beside its point: up to the first comma or parenthesis."""
    short = label.split("(")[0].split(",")[0].strip()
    return short if len(short) <= 28 else short[:27] + "…"


def latency_chart(runs: list[tuple[str, str, list[LatencyBucket]]], title: str) -> Chart | None:
    """Median retrieve latency against records held, log-log, one line per (label, href, buckets); on
    these axes an O(n) search is a line of slope 1, an index a flat one. The legend gives a line's
    slope where its run retrieved at :data:`~evals.judge.metrics.SLOPE_SIZES` memory sizes or more, and says
    why not where it did not."""
    lines = []
    short: list[str] = []  # labels of the lines with too few sizes for a slope
    for label, href, buckets in runs:
        shown = [b for b in buckets if b.held_low > 0 and b.p50_s > 0]
        if not shown:
            continue
        slope = latency_slope(buckets)
        sizes = latency_sizes(buckets)
        if slope is None:
            short.append(label)
        middle = [((b.held_low * b.held_high) ** 0.5, b.p50_s * 1000) for b in shown]
        lines.append(
            Line(
                label=label
                + (
                    f" (slope {slope:.2f})"
                    if slope is not None
                    else f" (no slope: {sizes} memory size{'s' if sizes != 1 else ''})"
                ),
                points=middle,
                titles=[
                    f"{label}: {b.n} retrieve calls holding {b.held_low:,}-{b.held_high:,} records: "
                    f"p50 {milliseconds(b.p50_s)}, p95 {milliseconds(b.p95_s)}"
                    for b in shown
                ],
                href=href,
            )
        )
    if not lines:
        return None
    notes = []
    if short:
        notes.append(
            f"No slope for {', '.join(short)}: {'its' if len(short) == 1 else 'their'} retrieve calls "
            f"came at fewer than {SLOPE_SIZES} memory sizes "
            "(records held, in buckets of powers of two), and a line through one or two sizes says nothing about how "
            "latency grows. A corpus that asks every question after the whole history has one "
            "memory size per conversation."
        )
    return line_chart(
        lines,
        title=title,
        x_label="records held when retrieving (log scale)",
        y_label="median retrieve latency, ms (log scale)",
        x_log=True,
        y_log=True,
        notes=notes,
    )
