"""What a reader must know before trusting a run's figure: whether it is a ceiling, whether it was made
with the hash embedder. Decided here once, from what the store recorded about the run; the site's
pages (leaderboard, run page, drill-down, history, compare, charts) and the CLI's tables read it.

* A **ceiling** bounds what a memory can do rather than being one: a strategy that ignores k (its
  whole list counts at every cutoff, so recall_any@1 can be 100%), or ``summary_buffer``, whose first
  record nests every evicted turn. It is shown apart from the memories and never ranked with them.
* The **hash embedder** (``mneme`` with ``embedder=HashEmbedder``, model ``hash-16``) draws each text's
  vector from a hash of the whole text, with no notion of meaning: its recall is about chance and says
  nothing about Mneme with a real embedder, and a reader who misses that concludes Mneme is broken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from evals.results import WHOLE_LIST
from evals.strategies import REFERENCE_STRATEGY

__all__ = ["CEILING", "HASH_EMBEDDER", "Caveat", "caveats", "ceiling", "hash_embedder"]

CEILING = "ceiling"
HASH_EMBEDDER = "hash_embedder"

# Built-in strategies that are ceilings by design, and why (a plug-in of the same name is not one).
_BUILT_IN_CEILINGS = {
    REFERENCE_STRATEGY: "Returns every earlier turn, ignoring k: the oracle a memory's recall is measured against, "
    "at unbounded cost; at every cutoff its whole list counts, so its recall at k = 1 is its recall at any k.",
    "summary_buffer": "Keeps the last turns verbatim and nests every evicted turn into one summary record, so its "
    "first record holds the whole history: keyword recall at the cost of the full transcript, and no turn to score "
    "evidence by.",
}
_IGNORES_K = (
    "Ignores k: it returns its whole list at every cutoff (the run's cutoff rule is whole_list), so its recall at "
    "any k is the recall of everything it returned: a bound, not a memory to choose."
)
_HASH = (
    "Mneme was run here with HashEmbedder (model hash-16): each text becomes 16 numbers drawn from a hash of the "
    "whole text, so two texts are no closer for sharing words or meaning and retrieval is about as good as chance "
    "(Mneme's own documentation: for testing plumbing, never retrieval quality). It is the offline, deterministic "
    "default, not a measure of Mneme: see mneme with embedder=MiniLMEmbedder (--embedder minilm) for a real "
    "embedding model."
)


class _Run(Protocol):
    """What the decision reads of a run (a RunSummary has it all)."""

    strategy: str
    strategy_config: Mapping[str, Any]
    strategy_source: str | None
    cutoff_rule: str | None
    model: str


@dataclass(frozen=True)
class Caveat:
    """One caveat of a run: ``kind`` (CEILING or HASH_EMBEDDER), a short label for a badge or a
    terminal column, and the explanation a reader can open."""

    kind: str
    label: str
    explanation: str


def _built_in(run: _Run) -> bool:
    return run.strategy_source in (None, "built-in")  # None: stored before the source was recorded


def ceiling(run: _Run) -> Caveat | None:
    """The run's ceiling caveat: a built-in ceiling (full_history, summary_buffer) or any strategy that
    ignores k (cutoff rule ``whole_list``); None for a memory."""
    reason = _BUILT_IN_CEILINGS.get(run.strategy) if _built_in(run) else None
    if reason is None and run.cutoff_rule == WHOLE_LIST:
        reason = _IGNORES_K
    return Caveat(CEILING, "ceiling", reason) if reason else None


def hash_embedder(run: _Run) -> Caveat | None:
    """The hash-embedder caveat for a built-in mneme run with HashEmbedder (or any run whose model is
    ``hash-N``); None otherwise."""
    embedder = run.strategy_config.get("embedder")
    hashed = (run.strategy == "mneme" and _built_in(run) and embedder == "HashEmbedder") or str(run.model).startswith("hash-")
    return Caveat(HASH_EMBEDDER, "hash embedder: no semantics", _HASH) if hashed else None


def caveats(run: _Run) -> list[Caveat]:
    """Every caveat of the run, ceiling first; [] for most runs."""
    return [c for c in (ceiling(run), hash_embedder(run)) if c is not None]
