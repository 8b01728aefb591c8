"""History: a page per configuration (one strategy, settings, k and model on one corpus) across runs, and their index.

A run is flagged as a drop when its recall falls below the previous run's 95%
interval, or when it hits fewer of the same test points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evals.judge.headline import at_k
from evals.model.formatting import is_estimated, milliseconds, number, percent, percent_interval, short_commit
from evals.site._charts import Chart, SeriesPoint, series_chart
from evals.site._output import Output
from evals.site._pages import ConfigInfo, Page
from evals.site._publisher import Publisher, Site
from evals.site._views import config_info, config_order, recall_high, recall_low
from evals.store import RunSummary

__all__ = ["HistoryIndexPage", "HistoryPage", "HistoryPublisher", "HistoryRow", "drop_reason"]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class HistoryRow:
    run_id: str
    run_href: str
    commit: str
    commit_short: str
    dirty: bool
    date: str
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    hits: int
    total: int
    tokens: float | None
    approx_tokens: bool
    drop: str  # why this run is flagged as a drop from the previous one; "" when it is not


@dataclass(frozen=True)
class HistoryPage(Page):
    template: ClassVar[str] = "history.html"

    config: ConfigInfo
    headline_label: str  # the headline's name (evals.judge.headline): the figure every row shows
    recall_chart: Chart
    tokens_chart: Chart
    approx_tokens: bool
    rows: list[HistoryRow]  # newest first
    drops: int
    latency_chart: Chart | None = None  # retrieve p95 across runs, where runs recorded it


@dataclass(frozen=True)
class HistoryIndexPage(Page):
    template: ClassVar[str] = "history_index.html"

    configs: list[tuple[ConfigInfo, int, int]]  # (configuration, number of runs, number of drops)


class HistoryPublisher(Publisher):
    """A page per configuration with its runs across commits, and an index of them."""

    name = "history"
    pages = (HistoryPage, HistoryIndexPage)
    nav_label = "History"
    nav_href = "history/index.html"
    nav_order = 20

    def publish(self, site: Site, output: Output) -> None:
        _history_pages(site, output)


def drop_reason(previous: RunSummary, current: RunSummary) -> str:
    """Why ``current`` counts as a drop from ``previous``; empty when it does not."""
    now, before = current.headline, previous.headline
    label = now.rule.label
    if now.recall is not None and before.low is not None and now.recall < before.low:
        return (
            f"{label} {percent(now.recall)} is below the previous run's 95% interval {percent_interval(before.low, before.high)}"
        )
    if now.total == before.total and now.hits < before.hits:
        return f"{label} hits fell from {before.hits} to {now.hits} of {now.total}"
    return ""


def _history_pages(site: Site, output: Output) -> None:
    by_config, env, paths = site.by_config, site.env, site.paths
    index_rows = []
    for cid in sorted(by_config, key=lambda c: config_order(by_config[c][0])):
        runs = list(reversed(by_config[cid]))  # oldest first
        info = config_info(runs[-1], paths)
        reasons = [""] + [drop_reason(prev, cur) for prev, cur in zip(runs, runs[1:], strict=False)]
        approx = any(is_estimated(r.tokenizer) for r in runs)
        rows = [
            HistoryRow(
                run_id=r.run_id,
                run_href=paths.run(r.run_id),
                commit=r.commit,
                commit_short=short_commit(r.commit),
                dirty=r.dirty,
                date=r.date,
                recall=r.headline.recall,
                recall_low=recall_low(r),
                recall_high=recall_high(r),
                hits=r.headline.hits,
                total=r.headline.total,
                tokens=r.tokens_per_test_point,
                approx_tokens=is_estimated(r.tokenizer),
                drop=reason,
            )
            for r, reason in zip(runs, reasons, strict=True)
        ]
        series = [
            SeriesPoint(
                value=r.headline.recall,
                low=recall_low(r),
                high=recall_high(r),
                label=short_commit(r.commit)[:7] + ("*" if r.dirty else ""),
                title=f"{r.date} {short_commit(r.commit)}{' (dirty)' if r.dirty else ''}: "
                f"{r.headline.rule.label} {percent(r.headline.recall)} "
                f"{percent_interval(recall_low(r), recall_high(r))}, {r.headline.hits}/{r.headline.total}"
                + (f"; drop: {reason}" if reason else ""),
                href=paths.run(r.run_id),
                flagged=bool(reason),
            )
            for r, reason in zip(runs, reasons, strict=True)
        ]
        token_series = [
            SeriesPoint(
                value=r.tokens_per_test_point,
                low=None,
                high=None,
                label=p.label,
                title=f"{r.date} {short_commit(r.commit)}: {number(r.tokens_per_test_point)} tokens per test point"
                + (" (estimated)" if is_estimated(r.tokenizer) else ""),
                href=p.href,
                flagged=False,
            )
            for r, p in zip(runs, series, strict=True)
        ]
        latency_series = [
            SeriesPoint(
                value=None if value is None or value.value is None else value.value * 1000,
                low=None,
                high=None,
                label=p.label,
                title=f"{r.date} {short_commit(r.commit)}: retrieve p95 "
                + ("not recorded" if value is None else f"{milliseconds(value.value)} over {value.n} calls"),
                href=p.href,
                flagged=False,
            )
            for r, p in zip(runs, series, strict=True)
            for value in [r.metric("retrieve_latency_p95_s")]
        ]
        href = info.history_href
        drops = sum(bool(reason) for reason in reasons)
        output.page(
            env,
            href,
            HistoryPage(
                **site.frame(
                    f"History: {info.strategy} k={info.k} on {info.corpus_name}", HistoryPublisher.name, href=href
                ),
                config=info,
                headline_label=runs[-1].headline.rule.label,
                recall_chart=series_chart(
                    series,
                    title=f"{at_k(runs[-1].headline.rule.label, info.k)} across runs",
                    y_label=runs[-1].headline.rule.label,
                    recall=True,
                ),
                tokens_chart=series_chart(
                    token_series,
                    title="tokens per test point across runs",
                    y_label="tokens per test point" + (" (some estimated)" if approx else ""),
                    recall=False,
                ),
                approx_tokens=approx,
                rows=list(reversed(rows)),
                drops=drops,
                latency_chart=series_chart(
                    latency_series, title="retrieve p95 latency across runs", y_label="retrieve p95, ms", recall=False
                )
                if any(p.value is not None for p in latency_series)
                else None,
            ),
        )
        index_rows.append((info, len(runs), drops))
    output.page(
        env,
        "history/index.html",
        HistoryIndexPage(
            **site.frame("History", HistoryPublisher.name, href="history/index.html"),
            configs=index_rows,
        ),
    )
