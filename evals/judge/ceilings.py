"""Which runs are ceilings, not memories: the rule every table, board and page asks, decided once.

A *ceiling* bounds what a memory can do rather than being one: a built-in oracle below, or any
strategy whose run ignored k (cutoff rule whole_list: its whole list counts at every cutoff, so its
recall_any@1 can be 100%) or was told the evidence labels (reads_labels in its configuration: it has the
answer key). It is set apart and never ranked with the memories (evals.views.tables orders the boards by it).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from evals.model.results import WHOLE_LIST
from evals.strategies.base import READS_LABELS

__all__ = ["CEILINGS", "IGNORES_K", "READS_LABELS_EXPLANATION", "StrategyRun", "ceiling"]

CEILINGS = {
    "full_history": "Returns every earlier turn, ignoring k: the oracle a memory's recall is measured against, at "
    "unbounded cost; its whole list counts at every cutoff, so its recall at k = 1 is its recall at any k.",
    "oracle": "Reads the corpus's evidence labels and returns exactly the evidence turns, in conversation order, cut "
    "to k: what perfect retrieval scores, and with answers the reader's ceiling (what the answer model makes of exactly "
    "the evidence); it has the answer key, so it is no memory.",
    "summary_buffer": "Keeps the last turns verbatim and nests every evicted turn into one summary record, so its first record "
    "holds the whole history: keyword hits at the cost of the full transcript, and no turn to score evidence by.",
}
READS_LABELS_EXPLANATION = (
    "Read the corpus's evidence labels before each retrieval (its configuration says reads_labels): it was given the "
    "answer key, so its figures are a ceiling, not a memory's."
)
IGNORES_K = (
    "Ignores k: it returns its whole list at every cutoff (the run's cutoff rule is whole_list), so its recall at any k "
    "is the recall of everything it returned: a ceiling, not a memory."
)


class StrategyRun(typing.Protocol):
    """What the rule reads of a run (a stored run's summary has it): its strategy, where that came from, its
    configuration and its cutoff rule."""

    strategy: str
    strategy_source: str | None
    strategy_config: Mapping[str, Any]
    cutoff_rule: str | None


def ceiling(run: StrategyRun) -> str:
    """Why this run is a ceiling and not a memory ("" for a memory): a built-in oracle (a plug-in of the
    same name is not one), a run told the evidence labels (its configuration says reads_labels), or a run that ignored k."""
    if run.strategy_source in (None, "built-in") and run.strategy in CEILINGS:
        return CEILINGS[run.strategy]
    if run.strategy_config.get(READS_LABELS) is True:  # a plug-in told the labels (docs/strategies.md)
        return READS_LABELS_EXPLANATION
    if run.cutoff_rule == WHOLE_LIST:
        return IGNORES_K
    return ""
