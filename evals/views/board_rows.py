"""What every board shows beside its ranked runs: failed runs as rows, repeated runs as a spread, declared facts.

* A **failed run** (:class:`evals.store.FailedRun`: a strategy raising, a call past ``--call-timeout``, a crash
  inside the play-through) is a row saying ``failed: <reason>``, never a number and never ranked. A board shows a
  configuration's failure when it is its latest attempt on that corpus (:meth:`evals.store.Store.latest_failures`).
* A configuration with several runs on one corpus at one k (the same ``config_key``, which names the k) keeps
  showing the run the board picked (its latest) and adds their **spread**: how many runs, and the lowest and
  highest headline among them (``3 runs: 0.612–0.627``).
* **Who ran it** (:mod:`evals.judge.origin`): a run imported from elsewhere is ``submitted`` (its system run by its
  submitter), or ``reproduced`` where the harness reran its board file's system with the same rankings; the
  harness's own runs carry no mark.
* **Declared facts**: the benchmarks whose data informed a system's settings (``tuned_on``) and whether its
  memory writes with an LLM (``writes_with_llm``), as its strategy's spec or its board file declares them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evals.judge.origin import mark
from evals.model import formatting
from evals.store import FailedRun, RunSummary
from evals.views.names import configuration_name

__all__ = [
    "Spread",
    "declared_marks",
    "failed_name",
    "failed_record",
    "origin_marks",
    "spreads",
]


@dataclass(frozen=True)
class Spread:
    """A configuration's repeated runs on one corpus at one k: how many, and their lowest and highest headline."""

    n: int
    low: float | None  # None: no run of them has a figure
    high: float | None

    def text(self, shown: Callable[[float], str] = formatting.decimal) -> str:
        """``3 runs: 0.612–0.627`` (``3 runs`` when none has a figure); ``shown`` writes each end (the site's
        percentages: ``3 runs: 61.2%–62.7%``)."""
        if self.low is None or self.high is None:
            return f"{self.n} runs"
        return f"{self.n} runs: {shown(self.low)}–{shown(self.high)}"

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "min": self.low, "max": self.high}


def spreads(every: Iterable[RunSummary], shown: Sequence[RunSummary]) -> dict[str, Spread]:
    """For each run of ``shown`` (a board's picks) whose configuration has more than one run on its corpus among
    ``every`` (every stored run): the spread of their headlines, by the shown run's id."""
    by_config: dict[tuple[str, str], list[RunSummary]] = {}
    for summary in every:
        by_config.setdefault((summary.corpus_digest, summary.config_key), []).append(summary)
    out = {}
    for summary in shown:
        runs = by_config.get((summary.corpus_digest, summary.config_key), [])
        if len(runs) < 2:
            continue
        values = [v for s in runs if (v := s.headline.recall) is not None]
        out[summary.run_id] = Spread(len(runs), min(values, default=None), max(values, default=None))
    return out


def failed_name(failed: FailedRun) -> str:
    """How a failed run is named on a board: as any run of its configuration (the library and its non-default options)."""
    return configuration_name(failed.strategy, failed.strategy_config)


def failed_record(failed: FailedRun) -> dict[str, Any]:
    """A failed run as a board's JSON row: its identity, ``failed`` saying why, and no figure (headline null,
    metrics empty, rank null), so no reader can take it for a score."""
    return {
        "name": failed_name(failed),
        **failed.as_dict(),
        "headline": None,
        "metrics": {},
        "rank": None,
        "spread": None,
    }


def declared_marks(tuned_on: Sequence[str] | None, writes_with_llm: bool | None) -> list[tuple[str, str]]:
    """A run's declared facts as (mark, explanation), in the order the boards show them; none declared, none shown."""
    marks = []
    if tuned_on:
        marks.append(
            (
                "tuned",
                f"tuned on {', '.join(tuned_on)}: data of {'that benchmark' if len(tuned_on) == 1 else 'those benchmarks'} "
                "informed its settings, so its figures there may flatter it",
            )
        )
    if writes_with_llm:
        marks.append(("LLM writes", "its memory writes with an LLM: what it stores is text the LLM wrote (costs tokens)"))
    return marks


def origin_marks(origin: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Who ran a run as (mark, explanation), as every board shows it before its declared facts: ``reproduced`` or
    ``submitted``; none for the harness's own run (:func:`evals.judge.origin.mark` decides)."""
    found = mark(origin)
    return [found] if found is not None else []
