"""A run's provenance as its page lists it: every field the store recorded, labelled in words."""

from __future__ import annotations

import json

from evals.model.formatting import DASH, decimal, is_estimated, number, percent
from evals.store import RunSummary

__all__ = ["cache_note", "provenance_rows"]

_PROVENANCE_LABELS = {
    "run_id": "run id",
    "config_key": "configuration key",
    "strategy_config": "strategy configuration",
    "corpus_digest": "corpus digest",
    "package_version": "mneme-evals version",
    "mneme_version": "Mneme (smolAmem) version",
    "python_version": "Python version",
    "duration_s": "duration",
    "tokens_per_test_point": "tokens per test point",
    "context_tokens": "context tokens (sum)",
    "cache_hits": "embeddings from the cache",
    "cache_misses": "embeddings computed",
    "conversation_count": "conversations",
    "reuse_key": "reuse key",
}


# Not listed: the metrics have a table of their own; the corpus folder is a path of the machine that ran it
# (the corpus is named by its name and digest, which the rows give).
_UNSHOWN = frozenset({"metrics", "corpus_dir"})


def cache_note(summary: RunSummary) -> str:
    """What the embedding cache did for a run, in words; "" when the run used no cache or cached nothing."""
    if summary.cache_hits is None or summary.cache_misses is None or not (summary.cache_hits or summary.cache_misses):
        return ""
    return f"{number(summary.cache_misses)} embeddings computed, {number(summary.cache_hits)} from the cache"


def provenance_rows(summary: RunSummary) -> list[tuple[str, str]]:
    """Every field of the run's summary, labelled, in the store's field order, but its metrics (a table of their own) and
    its corpus folder (a path of the machine that ran it: the corpus is shown by its name and digest)."""
    rows = []
    for name in summary.__dataclass_fields__:
        if name in _UNSHOWN:
            continue
        value = getattr(summary, name)
        label = _PROVENANCE_LABELS.get(name, name.replace("_", " "))
        if value is None:
            text = DASH
        elif name == "strategy_config":
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        elif name == "timestamp":
            text = value.isoformat()
        elif name == "duration_s":
            text = f"{decimal(value, 3)} s"
        elif name == "recall":
            text = f"{percent(value, 2)} ({decimal(value, 6)})"
        elif name == "tokens_per_test_point":
            text = number(value, 2)
        elif name == "tokenizer":
            text = value + (" (estimated: ~4 characters per token, not counted)" if is_estimated(value) else "")
        elif name == "reuse_key" and not value:
            text = f"{DASH} (not reusable: dirty tree or outside git)"
        elif isinstance(value, bool):
            text = "yes" if value else "no"
        else:
            text = str(value)
        rows.append((label, text))
    return rows
