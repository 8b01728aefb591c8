"""Memory strategies: one contract (``base.py``), one file per strategy, one registry.

Strategies are found through the registry (:mod:`evals.strategies.registry`):
built-ins and plug-ins alike are entry points of the group
``mneme_evals.strategies``. ``docs/strategies.md`` says how to write one.
"""

from __future__ import annotations

from evals.strategies.base import (
    CountsAhead,
    Flushes,
    Footprint,
    MemoryStrategy,
    Message,
    Prefetching,
    Record,
    record_text,
    record_turn,
)
from evals.strategies.embedders import EMBEDDERS
from evals.strategies.full_history import FullHistory
from evals.strategies.no_memory import NoMemory
from evals.strategies.random_k import RandomK
from evals.strategies.recency import Recency
from evals.strategies.registry import (
    ENTRY_POINT_GROUP,
    NO_MODEL,
    BuildContext,
    Planned,
    Registry,
    StrategyError,
    StrategySpec,
    spec_from_factory,
)
from evals.strategies.summary_buffer import SummaryBuffer, concatenate_summary

__all__ = [
    "BACKENDS",
    "EMBEDDERS",
    "ENTRY_POINT_GROUP",
    "NO_MODEL",
    "REFERENCE_STRATEGY",
    "BuildContext",
    "CountsAhead",
    "Flushes",
    "Footprint",
    "FullHistory",
    "MemoryStrategy",
    "Message",
    "NoMemory",
    "Planned",
    "Prefetching",
    "RandomK",
    "Recency",
    "Record",
    "Registry",
    "StrategyError",
    "StrategySpec",
    "SummaryBuffer",
    "concatenate_summary",
    "record_text",
    "record_turn",
    "spec_from_factory",
]

# Mneme's backends (here, like EMBEDDERS, so the CLI can offer them without importing Mneme).
BACKENDS = ("memory", "sqlite")

# The oracle the leaderboard measures cost against: every earlier turn, so the
# most context any strategy could spend. The site and the Markdown table show
# each run's tokens per test point as a share of this strategy's.
REFERENCE_STRATEGY = "full_history"
