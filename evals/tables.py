"""Runs as rows: the tables ``evals runs`` and ``evals leaderboard`` print, and their JSON and CSV.

The metric columns come from the declarations in :mod:`evals.metrics`: a
metric appears wherever some run in the table has a value for it (so answer
accuracy shows only beside runs with answers), in declaration order, as
"value [95% interval]" for proportions and for means that carry one. "—" is a metric the run does not
have (not measured, or stored before it was); "null", one it has without
data (no test point).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evals import formatting
from evals.breakdown import category_rows
from evals.metrics import MEAN, METRICS, PROPORTION, SECONDS, TOKENS, Metric, MetricValue
from evals.store import RunSummary, StoredRun
from evals.tokens import EXACT

__all__ = [
    "APPROX_NOTE",
    "Table",
    "category_table",
    "commit_text",
    "metric_text",
    "number_text",
    "summaries_csv",
    "summaries_json",
    "summary_table",
]

APPROX_NOTE = "~ tokens estimated at ~4 characters per token (cl100k_base was not available)"
MISSING = formatting.DASH  # the run has no such value (not measured, or stored before it was)
NULL = formatting.NULL  # measured, without data


def number_text(value: float | None, digits: int = 3) -> str:
    return formatting.decimal(value, digits, empty=NULL)


def commit_text(summary: RunSummary) -> str:
    return formatting.commit_text(summary.commit, summary.dirty)


def metric_text(declared: Metric, value: MetricValue | None, tokenizer: str) -> str:
    """One metric of one run as a table cell: "—" when the run lacks it, "null" when it has no data."""
    if value is None:
        return MISSING
    if declared.kind == TOKENS:
        return formatting.tokens(value.value, tokenizer, empty=NULL)
    if declared.kind == SECONDS:
        return formatting.milliseconds(value.value, empty=NULL)
    if declared.kind in (PROPORTION, MEAN):  # a mean shows its (bootstrap) interval where it has one
        return formatting.with_interval(value.value, value.low, value.high, empty=NULL)
    return formatting.decimal(value.value, empty=NULL)


def shown_metrics(summaries: Sequence[RunSummary], names: Iterable[str] | None = None) -> list[Metric]:
    """The declared metrics (or those of ``names``) to show for ``summaries``: every one that is
    not optional, and the optional ones (answers, evidence) that some run has."""
    wanted = [METRICS[n] for n in ([n for n, m in METRICS.items() if m.leaderboard] if names is None else names)]
    return [m for m in wanted if not m.optional or any(m.name in s.metrics for s in summaries)]


_IDENTITY: dict[str, Callable[[RunSummary], str]] = {
    "run": lambda s: s.run_id,
    "date": lambda s: s.date,
    "commit": commit_text,
    "strategy": lambda s: s.strategy,
    "config": lambda s: s.config_key,
    "model": lambda s: s.model,
    "k": lambda s: str(s.k),
    "corpus": lambda s: s.corpus_name,
    "hits": lambda s: f"{s.hits}/{s.total}",
    # Embeddings the run computed / took from the cache; "—" without a cache (or stored before it was counted).
    "emb new/cached": lambda s: MISSING if s.cache_misses is None else f"{s.cache_misses}/{s.cache_hits}",
}


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    notes: list[str]

    def text(self) -> str:
        """Left-aligned columns, as wide as their widest cell; control characters in a cell are
        written as escapes (a corpus named with a terminal escape is shown, not acted on)."""
        cells = [[formatting.printable(cell) for cell in line] for line in [self.header, *self.rows]]
        widths = [max(len(line[i]) for line in cells) for i in range(len(self.header))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in cells]
        return "\n".join([*lines, *self.notes]) + "\n"


def summary_table(
    summaries: Sequence[RunSummary],
    before: Sequence[str],
    after: Sequence[str] = (),
    metrics: Iterable[str] | None = None,
) -> Table:
    """Identity columns ``before``, then the metric columns, then identity columns ``after``."""
    shown = shown_metrics(summaries, metrics)
    header = [*before, *(m.label for m in shown), *after]
    rows = [
        [
            *(_IDENTITY[c](s) for c in before),
            *(metric_text(m, s.metric(m.name), s.tokenizer) for m in shown),
            *(_IDENTITY[c](s) for c in after),
        ]
        for s in summaries
    ]
    notes = [APPROX_NOTE] if any(s.tokenizer != EXACT for s in summaries) else []
    return Table(header, rows, notes)


def summaries_json(summaries: Sequence[RunSummary]) -> str:
    return json.dumps([s.as_dict() for s in summaries], indent=2, ensure_ascii=False)


def _metric_fields(declared: Metric) -> list[str]:
    fields = [declared.name, f"{declared.name}_n"]
    if declared.kind in (PROPORTION, MEAN):
        fields += [f"{declared.name}_low", f"{declared.name}_high"]
    return fields


def summaries_csv(summaries: Sequence[RunSummary]) -> str:
    """One row per run: every field of its summary, then each declared metric's value, n and interval."""
    base = [name for name in RunSummary.__dataclass_fields__ if name != "metrics"]
    declared = list(METRICS.values())
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[*base, *(f for m in declared for f in _metric_fields(m))], lineterminator="\n")
    writer.writeheader()
    for summary in summaries:
        row = {name: getattr(summary, name) for name in base}
        row["timestamp"] = summary.timestamp.isoformat()
        row["strategy_config"] = json.dumps(summary.strategy_config, ensure_ascii=False)
        if summary.llm_settings is not None:
            row["llm_settings"] = json.dumps(summary.llm_settings, ensure_ascii=False, sort_keys=True)
        for m in declared:
            value = summary.metric(m.name)
            if value is not None:
                row.update(zip(_metric_fields(m), (value.value, value.n, value.low, value.high), strict=False))
        writer.writerow({name: formatting.csv_cell(value) for name, value in row.items()})
    return buffer.getvalue()


def category_records(stored_runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    """``leaderboard --by-category``: one record per run and category, by the same rows the site shows."""
    records = []
    for stored in stored_runs:
        s = stored.summary
        for row in category_rows(stored.run, stored.scores) or []:
            evidence = row["evidence_recall_at_k"]
            interval = row["interval"]
            records.append(
                {
                    "strategy": s.strategy,
                    "config": s.config_key,
                    "model": s.model,
                    "k": s.k,
                    "corpus": s.corpus_name,
                    "category": row["category"],
                    "hits": row["hits"],
                    "total": row["total"],
                    "recall": row["recall"],
                    "recall_low": interval[0] if interval else None,
                    "recall_high": interval[1] if interval else None,
                    "evidence_total": evidence["any"]["total"] if evidence else 0,
                    "evidence_any": evidence["any"]["recall"] if evidence else None,
                    "evidence_all": evidence["all"]["recall"] if evidence else None,
                    "unanswerable": row["unanswerable"],
                    "run_id": s.run_id,
                }
            )
    return records


def category_table(records: list[dict[str, Any]]) -> Table:
    header = ["strategy", "config", "corpus", "category", "recall", "95% CI", "hits", "evidence any", "evidence all", "unanswerable"]
    rows = [
        [
            r["strategy"],
            r["config"],
            r["corpus"],
            "(none)" if r["category"] is None else r["category"],
            number_text(r["recall"]),
            formatting.interval(r["recall_low"], r["recall_high"], empty=NULL),
            f"{r['hits']}/{r['total']}",
            number_text(r["evidence_any"]),
            number_text(r["evidence_all"]),
            str(r["unanswerable"]),
        ]
        for r in records
    ]
    notes = [] if records else ["(no run in the store is on a corpus with categories)"]
    return Table(header, rows, notes)


def records_csv(records: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]) if records else ["category"], lineterminator="\n")
    writer.writeheader()
    writer.writerows({name: formatting.csv_cell(value) for name, value in record.items()} for record in records)
    return buffer.getvalue()
