"""The gate's report as GitHub-flavoured Markdown: a verdict, one row per configuration, then the
test points each regression lost.

Corpus text (questions, expected facts, conversation ids) is escaped so that a
``|``, ``*`` or ``<`` in it is shown as written and cannot break the table;
numbers are written by :mod:`evals.model.formatting`, as everywhere else.
"""

from __future__ import annotations

import re

from evals.analysis.gate import LATENCY_METRIC, LATENCY_MIN_CALLS, REGRESSION, GateResult, GateRow, Side
from evals.judge.metrics import METRICS, MetricValue
from evals.judge.stats import wilson_interval
from evals.model import formatting
from evals.store import RunSummary
from evals.views.names import row_names

__all__ = ["MAX_FLIPS_SHOWN", "gate_markdown", "text"]

MAX_FLIPS_SHOWN = 50  # per regression; --format json lists every one

# Characters that start inline Markdown (emphasis, code, links, HTML, entities, strikethrough) or end
# a table cell; "_" only where it could emphasise, so snake_case stays readable in the plain text.
_INLINE = re.compile(r"([\\`*\[\]<>|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def text(value: str) -> str:
    """Corpus text as one line of literal Markdown, safe inside a table cell."""
    return _INLINE.sub(r"\\\1", " ".join(value.split()))


def _code(value: str) -> str:
    """An identifier (run id, configuration key, conversation id) in a code span, safe in a table cell."""
    value = " ".join(value.split()).replace("|", "\\|")
    fence = "``" if "`" in value else "`"
    return f"{fence} {value} {fence}" if fence == "``" else f"`{value}`"


def _proportion(value: MetricValue | None) -> str:
    if value is None:
        return formatting.DASH
    shown = formatting.with_interval(value.value, value.low, value.high)
    return f"{shown} ({value.successes}/{value.n})" if value.value is not None else shown


def _seconds(value: float) -> str:
    """Three significant figures (µs below 0.1 ms), so the two times explain the ratio beside them."""
    return formatting.milliseconds(value) if value < 1 else f"{value:.2f} s"


def _latency(row: GateRow) -> str:
    if row.latency_ratio is None:
        if row.latency_base is not None and row.latency_head is not None:
            return f"{_seconds(row.latency_base)} → {_seconds(row.latency_head)}"
        return "not recorded"
    ratio = f"×{row.latency_ratio:.2f}"
    shown = f"{'**' + ratio + '**' if row.slower else ratio} ({_seconds(row.latency_base)} → {_seconds(row.latency_head)})"
    return shown if row.latency_metric == LATENCY_METRIC else f"{shown}, wall clock: not judged"


def _verdict(row: GateRow, factor: float) -> str:
    parts = [row.paired]  # regression, improvement, within noise or no change
    if row.slower:
        parts.append(f"slower (latency past ×{factor:g})")
    if row.types_regressed:
        parts.append(f"answers regressed on {', '.join(text(t.label) for t in row.types_regressed)}")
    verdict = ", ".join(parts)
    if row.failed:
        return f"**{verdict}**"
    if row.allowed_by is not None:
        return f"{verdict}, allowed ({_code('--allow ' + row.allowed_by)})"
    return verdict


def _configuration(row: GateRow, label: str) -> str:
    if row.same_configuration:
        return f"{text(label)} {_code(row.head.config_key)}"
    base, head = row_names([row.base, row.head])  # what tells the two apart
    return f"base {text(base)} {_code(row.base.config_key)} → head {text(head)} {_code(row.head.config_key)}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _labels(result: GateResult) -> dict[str, str]:
    """Each head run's strategy, with the settings that tell it apart from the same strategy's other rows."""
    heads = [row.head for row in result.rows]
    return dict(zip((s.run_id for s in heads), row_names(heads), strict=True))


def _table(result: GateResult, labels: dict[str, str]) -> list[str]:
    lines = [
        _row(
            [
                "configuration",
                "corpus",
                "metric",
                "base [95% CI]",
                "head [95% CI]",
                "hit→miss",
                "miss→hit",
                "p",
                "p (Holm)",
                "retrieve p95 latency",
                "verdict",
            ]
        ),
        "|---|---|---|---|---|--:|--:|--:|--:|---|---|",
    ]
    for row in result.rows:
        lines.append(
            _row(
                [
                    _configuration(row, labels[row.head.run_id]),
                    _code(row.base.corpus_name),
                    text(METRICS[row.metric].label),
                    _proportion(row.base_value),
                    _proportion(row.head_value),
                    str(len(row.lost)),
                    str(row.gained),
                    formatting.p_value_text(row.p),
                    formatting.p_value_text(row.p_holm),
                    _latency(row),
                    _verdict(row, result.latency_factor),
                ]
            )
        )
    return lines


def _accuracy(correct: int, shared: int) -> str:
    """``0.750 [0.409, 0.929] (6/8)``: a type's share judged correct, its 95% Wilson interval, the counts."""
    low, high = wilson_interval(correct, shared) or (None, None)
    return f"{formatting.with_interval(correct / shared if shared else None, low, high)} ({correct}/{shared})"


def _types_table(result: GateResult, labels: dict[str, str]) -> list[str]:
    """Per configuration with judged answers on both sides, per question type: the verdicts' paired test."""
    rows = [row for row in result.rows if row.types]
    if not rows:
        return []
    count = sum(len(row.types) for row in rows)
    lines = [
        "### Answer accuracy per question type",
        "",
        _row(
            [
                "configuration",
                "corpus",
                "type",
                "base [95% CI]",
                "head [95% CI]",
                "correct→wrong",
                "wrong→correct",
                "p",
                "p (Holm)",
                "verdict",
            ]
        ),
        "|---|---|---|---|---|--:|--:|--:|--:|---|",
    ]
    for row in rows:
        for t in row.types:
            verdict = f"**{t.paired}**" if t.paired == REGRESSION and row.failed else t.paired
            lines.append(
                _row(
                    [
                        _configuration(row, labels[row.head.run_id]),
                        _code(row.base.corpus_name),
                        text(t.label),
                        _accuracy(t.base_correct, t.shared),
                        _accuracy(t.head_correct, t.shared),
                        str(t.lost),
                        str(t.gained),
                        formatting.p_value_text(t.p),
                        formatting.p_value_text(t.p_holm),
                        verdict,
                    ]
                )
            )
    lines += [
        "",
        "Each row pairs the judge's verdicts on the test points of one type both runs had judged (an unparsed verdict "
        f"counts as wrong) in McNemar's exact test, two-sided; p (Holm) is adjusted across the {count} question "
        f"type{'s' if count != 1 else ''} tested. A type regresses when p (Holm) < {result.alpha:g} and it lost more "
        "verdicts than it gained; that fails its configuration.",
    ]
    return lines


def _resolved(side: Side) -> str:
    """How a ref was read, with code spans: run `1a2b…` (commit `…`), `main` → commit `1a2b3c4`."""
    if side.kind == "run":
        return f"run {_code(side.ref)} (commit {_code(formatting.commit_text(side.commit, side.runs[0].dirty))})"
    commit = f"commit {_code(formatting.short_commit(side.commit))}"
    if side.kind == "commit":
        return commit
    described = f"{_code(side.ref)} → {commit}"
    if side.back:
        named = _code(formatting.short_commit(side.named or ""))
        described += (
            f" ({side.back} commit{'s' if side.back > 1 else ''} before {named}, which has no runs: the nearest with stored runs)"
        )
    return described


def _side(name: str, result: GateResult) -> str:
    side = result.base if name == "base" else result.head
    if side.is_run:
        return f"{name.capitalize()}: {_resolved(side)}."
    runs = len(side.runs)
    dirty = " (some made from a tree with uncommitted changes)" if any(r.dirty for r in side.runs) else ""
    return f"{name.capitalize()}: {_resolved(side)}, latest run of {runs} configuration{'s' if runs != 1 else ''}{dirty}."


def _flips(row: GateRow, label: str) -> list[str]:
    lost = row.lost
    lines = [
        f"### {'Regression' if row.allowed_by is None else 'Allowed regression'}: "
        f"{_configuration(row, label)} on {_code(row.base.corpus_name)}",
        "",
        f"{len(lost)} test point{'s' if len(lost) != 1 else ''} went from hit to miss ({text(METRICS[row.metric].label)}; "
        f"base run {_code(row.base.run_id)}, head run {_code(row.head.run_id)}).",
    ]
    if not lost:
        return lines
    links = lost[0].href is not None
    lines += [
        "",
        _row(["conversation", "turn", "question", "expected fact", *(["base drill-down"] if links else [])]),
        "|---|--:|---|---|" + ("---|" if links else ""),
    ]
    for point in lost[:MAX_FLIPS_SHOWN]:
        cells = [_code(point.conversation_id), str(point.turn_index), text(point.question), text(point.expected_fact)]
        if links:
            cells.append(f"[hit in base]({point.href})")
        lines.append(_row(cells))
    if len(lost) > MAX_FLIPS_SHOWN:
        lines += ["", f"… and {len(lost) - MAX_FLIPS_SHOWN} more (`--format json` lists every one)."]
    return lines


def _configs(summaries: tuple[RunSummary, ...]) -> str:
    return ", ".join(f"{_code(s.config_key)} on {_code(s.corpus_name)}" for s in summaries)


def gate_markdown(result: GateResult) -> str:
    """The report: Markdown that renders on GitHub (a step summary, a comment) and reads as plain text."""
    failed = [row for row in result.rows if row.failed]
    allowed = [row for row in result.rows if row.regressed and not row.failed]
    count = len(result.rows)
    if failed:
        headline = f"{len(failed)} of {count} configuration{'s' if count != 1 else ''} regressed."
    else:
        headline = f"No regression in {count} configuration{'s' if count != 1 else ''} compared."
    if allowed:
        headline += f" {len(allowed)} regression{'s' if len(allowed) != 1 else ''} allowed with `--allow`."
    lines = [
        f"## evals gate: {'failed' if failed else 'passed'}",
        "",
        headline,
        "",
        f"- {_side('base', result)}",
        f"- {_side('head', result)}",
    ]
    if result.allow:
        lines.append(f"- Allowed to regress (`--allow`): {', '.join(_code(entry) for entry in result.allow)}.")
    if result.direct and not result.rows[0].same_configuration:
        lines.append("- The two runs are of different configurations; they are compared as asked, test point by test point.")
    if result.only_base or result.only_head:
        parts = []
        if result.only_base:
            parts.append(f"base only: {_configs(result.only_base)}")
        if result.only_head:
            parts.append(f"head only: {_configs(result.only_head)}")
        lines.append(f"- Not compared (on one side only): {'; '.join(parts)}.")
    labels = _labels(result)
    lines += ["", *_table(result, labels), ""]
    lines.append(
        "Each row pairs the test points both runs have (keyword hit@k, or evidence recall where the corpus labels "
        "evidence turns) in McNemar's exact test, two-sided; p (Holm) is adjusted for the "
        f"{count} configuration{'s' if count != 1 else ''} compared. A configuration fails the gate when p (Holm) "
        f"< {result.alpha:g} and it lost more test points than it gained, or when its retrieve p95 latency "
        f"(`{LATENCY_METRIC}`: each call's time less its wait for a processor, so another job's load is not counted; "
        f"where a run lacks it, the wall-clock p95 is shown and not judged) grew past ×{result.latency_factor:g} "
        f"to {result.latency_floor_s * 1000:g} ms or more, measured over at least {LATENCY_MIN_CALLS} calls on each side. "
        "An improvement never fails the gate. Brackets: 95% Wilson interval."
        + (
            " With judged answers on both sides, a question type whose answers regressed fails its configuration too (below)."
            if any(row.types for row in result.rows)
            else ""
        )
    )
    for row in result.rows:
        unparsed = row.unparsed
        if unparsed is not None and unparsed.successes:
            over = f", above --max-unparsed {row.max_unparsed:g}: this fails the gate" if row.too_unparsed else ""
            lines += [
                "",
                f"- {_code(row.head.strategy)} on {row.head.corpus_name} (head): {unparsed.successes} of {unparsed.n} "
                f"verdicts unparsed (the judge's replies could not be read){over}.",
            ]
    types = _types_table(result, labels)
    if types:
        lines += ["", *types]
    for row in result.rows:
        if row.paired == REGRESSION:
            lines += ["", *_flips(row, labels[row.head.run_id])]
    return "\n".join(lines) + "\n"
