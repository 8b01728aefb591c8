"""The leaderboard as Markdown: the table the README shows, made from the store.

One table per corpus (content digest), rows as the leaderboard orders them
(best recall first). Every recall carries its 95% Wilson interval, so a reader
can see which differences may be chance; a number the store does not have
(strict recall and MRR of runs stored before they were recorded) is "—",
never 0. Token cost is also shown relative to the reference strategy
(:data:`evals.strategies.REFERENCE_STRATEGY`), as on the site. A row's
strategy names every option its stored configuration sets away from the default
that :func:`evals.strategies.build_strategy` declares (a sqlite backend, a
MiniLM embedder, another seed), so two configurations of one strategy read apart.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from functools import cache
from itertools import groupby
from typing import Any

from evals.formatting import DASH, ESTIMATED, decimal, is_estimated, relative, tokens, with_interval
from evals.reference import reference_run, relative_tokens
from evals.store import RunSummary
from evals.strategies import REFERENCE_STRATEGY, build_strategy

__all__ = ["leaderboard_markdown"]

_HEADER = (
    f"| strategy | model | k | recall@k [95% CI] | strict recall [95% CI] | MRR | tokens / test point | vs {REFERENCE_STRATEGY} | config |",
    "|---|---|--:|---|---|--:|--:|--:|---|",
)


@cache
def _option_defaults() -> dict[str, Any]:
    """The options a run sets beyond its strategy (backend, embedder, seed), with their defaults, as build_strategy declares them."""
    parameters = inspect.signature(build_strategy).parameters.values()
    return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY and p.default is not None}


def _is_default(value: Any, default: Any) -> bool:
    # A strategy's configuration records what an option built, not the option's
    # name (--backend memory is stored as InMemoryBackend, --embedder hash as
    # HashEmbedder), so a named choice is the default when it names the default.
    if isinstance(value, str) and isinstance(default, str):
        return default.lower() in value.lower()
    return value == default


def _label(summary: RunSummary) -> str:
    """The strategy, with each option its configuration sets away from the default: ``mneme (backend=SQLiteBackend)``."""
    config, defaults = summary.strategy_config, _option_defaults()
    changed = [f"{key}={config[key]}" for key in sorted(defaults) if key in config and not _is_default(config[key], defaults[key])]
    return f"{summary.strategy} ({', '.join(changed)})" if changed else summary.strategy


def _row(summary: RunSummary, reference: RunSummary | None) -> str:
    cells = [
        _label(summary),
        DASH if summary.model == "none" else summary.model,
        str(summary.k),
        with_interval(summary.recall, summary.recall_low, summary.recall_high),
        with_interval(summary.strict_recall, summary.strict_low, summary.strict_high),
        decimal(summary.mrr),
        tokens(summary.tokens_per_test_point, summary.tokenizer),
        relative(relative_tokens(summary, reference)),
        f"`{summary.config_key}`",
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def leaderboard_markdown(summaries: Sequence[RunSummary]) -> str:
    """Markdown for the latest run of each configuration, one table per corpus, in the order given."""
    if not summaries:
        return "_No runs in the store yet._\n"
    blocks: list[str] = []
    for (name, digest), group in groupby(summaries, key=lambda s: (s.corpus_name, s.corpus_digest)):
        rows = list(group)
        reference = reference_run(rows)
        conversations = max(s.conversation_count for s in rows)
        lines = [
            f"**Corpus `{name}`** ({conversations} conversations, {rows[0].total} test points, digest `{digest[:12]}`)",
            "",
            *_HEADER,
            *(_row(s, reference) for s in rows),
        ]
        if any(is_estimated(s.tokenizer) for s in rows):
            lines += ["", f"{ESTIMATED} tokens estimated at ~4 characters per token (cl100k_base was not available)"]
        blocks.append("\n".join(lines))
    footer = (
        "recall@k: share of test points where a retrieved record held an expected keyword; strict: all of them. "
        "Brackets: 95% Wilson interval. MRR: mean of 1/rank of the first matching record. "
        f"vs {REFERENCE_STRATEGY}: tokens per test point as a share of the latest {REFERENCE_STRATEGY} run's on the corpus "
        "(— without one, or where the two counted tokens differently)."
    )
    return "\n\n".join(blocks) + "\n\n" + footer + "\n"
