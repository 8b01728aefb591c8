"""Memory strategies: one protocol, one file per strategy, one factory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.strategies.base import MemoryStrategy, Message
from evals.strategies.full_history import FullHistory
from evals.strategies.mneme_embedders import EMBEDDERS
from evals.strategies.no_memory import NoMemory
from evals.strategies.random_k import RandomK
from evals.strategies.recency import Recency
from evals.strategies.summary_buffer import SummaryBuffer, concatenate_summary

if TYPE_CHECKING:
    from evals.cache import Cache

__all__ = [
    "BACKENDS",
    "EMBEDDERS",
    "STRATEGY_NAMES",
    "FullHistory",
    "MemoryStrategy",
    "Message",
    "NoMemory",
    "REFERENCE_STRATEGY",
    "RandomK",
    "Recency",
    "SummaryBuffer",
    "build_strategy",
    "concatenate_summary",
]

# The original harness's four first; then the baselines that calibrate the table.
STRATEGY_NAMES = ("mneme", "no_memory", "summary_buffer", "full_history", "random_k", "recency", "bm25")

# Mneme's backends (here, like EMBEDDERS, so the CLI can offer them without importing Mneme).
BACKENDS = ("memory", "sqlite")

# Recorded as a run's model when the strategy uses no model at all.
NO_MODEL = "none"

# The oracle the leaderboard measures cost against: every earlier turn, so the
# most context any strategy could spend. The site and the Markdown table show
# each run's tokens per test point as a share of this strategy's.
REFERENCE_STRATEGY = "full_history"


def build_strategy(
    name: str,
    *,
    backend: str = "memory",
    embedder: str = "hash",
    seed: int = 42,
    cache: Cache | None = None,
    summarize_fn: Any = None,
) -> MemoryStrategy:
    """Build the strategy named ``name``; ``backend``, ``embedder`` and ``cache`` (for
    embeddings) apply to mneme only, ``seed`` to random_k only, ``summarize_fn`` (None:
    the default concatenation) to summary_buffer only."""
    if name == "mneme":
        # Imported here so the baselines work (and load fast) without touching Mneme.
        from evals.strategies.mneme import Mneme

        return Mneme(backend=backend, embedder=embedder, cache=cache)
    if name == "no_memory":
        return NoMemory()
    if name == "full_history":
        return FullHistory()
    if name == "summary_buffer":
        return SummaryBuffer() if summarize_fn is None else SummaryBuffer(summarize_fn=summarize_fn)
    if name == "random_k":
        return RandomK(seed=seed)
    if name == "recency":
        return Recency()
    if name == "bm25":
        from evals.strategies.bm25 import BM25

        return BM25()
    raise EvalsError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)}")


def model_of(strategy: MemoryStrategy) -> str:
    """The model a strategy's results depend on (an embedding model for mneme)."""
    return getattr(strategy, "model", NO_MODEL)
