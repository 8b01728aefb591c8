"""Pieces of a run's summary that several page kinds show the same way."""

from __future__ import annotations

import json
from typing import Any

from evals.model.formatting import is_estimated, short_commit
from evals.site._pages import ConfigInfo, RunHeader
from evals.site._qa import qa_caveats
from evals.store import RunSummary
from evals.views.names import row_name
from evals.views.site_paths import Paths, config_id
from evals.views.tables import caveats

__all__ = ["config_info", "config_order", "run_header", "settings_text", "store_note"]


def settings_text(config: dict[str, Any]) -> str:
    """A strategy's configuration without its name, ``key=value`` in key order."""
    parts = []
    for key in sorted(config):
        if key == "name":
            continue
        value = config[key]
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
        parts.append(f"{key}={text}")
    return ", ".join(parts)


def config_order(s: RunSummary) -> tuple:
    """The order configurations are listed in on the history and compare pages."""
    return (s.corpus_name, s.corpus_digest, s.strategy, s.config_key)


def config_info(summary: RunSummary, paths: Paths) -> ConfigInfo:
    return ConfigInfo(
        strategy=row_name(summary),
        settings=settings_text(summary.strategy_config),
        config_key=summary.config_key,
        model=summary.model,
        k=summary.k,
        corpus_name=summary.corpus_name,
        corpus_digest_short=summary.corpus_digest[:10],
        history_href=paths.history(*config_id(summary)),
        caveats=caveats(summary) + qa_caveats(summary),
    )


def run_header(summary: RunSummary, paths: Paths) -> RunHeader:
    return RunHeader(
        run_id=summary.run_id,
        href=paths.run(summary.run_id),
        strategy=row_name(summary),
        settings=settings_text(summary.strategy_config),
        model=summary.model,
        k=summary.k,
        commit_short=short_commit(summary.commit),
        dirty=summary.dirty,
        date=summary.date,
        corpus_name=summary.corpus_name,
        approx_tokens=is_estimated(summary.tokenizer),
        caveats=caveats(summary) + qa_caveats(summary),
    )


def store_note(summaries: list[RunSummary]) -> str:
    """The footer's line: how many runs the site was built from, and when the newest was made."""
    if not summaries:
        return "Built from an empty results store."
    newest = max(s.timestamp for s in summaries)
    return (
        f"Built from {len(summaries)} run{'s' if len(summaries) != 1 else ''}; "
        f"newest run {newest.strftime('%Y-%m-%d %H:%M UTC')}."
    )


def recall_low(summary: RunSummary) -> float | None:
    """The low end of the run's headline interval (evals.judge.headline; None without test points)."""
    return summary.headline.low


def recall_high(summary: RunSummary) -> float | None:
    return summary.headline.high
